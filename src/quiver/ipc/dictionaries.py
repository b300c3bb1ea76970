"""Dictionary ids, deltas and replacement (Columnar spec, "Dictionary Messages").

Reading: :class:`DictionaryMemo` maps each id declared in the schema to the field path it
serves and its value type, loads DictionaryBatch bodies, appends deltas and applies
replacements (stream format) or rejects them (file format: at most one non-delta batch per
id).  Writing: :class:`DictionaryWriter` assigns ids in schema pre-order and decides, per
batch, whether a field's dictionary is new, unchanged, extended (a delta) or replaced.

Paths are tuples of child indices through the flatbuffer ``Field.children``; a dictionary
field's children are its value type's children, so dictionaries nested inside dictionary
values have paths that pass through their parent dictionary field.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from .. import errors as E
from .. import types as t
from ..array import Array, make_array
from ..array.build import array as build_array
from ..array.concat import concat_arrays
from ..array.equal import array_equals
from ..array.keys import value_key
from ..buffers import pack_bits, unpack_bits
from ..layout import storage_numpy_dtype
from . import metadata as md
from .body import LoadContext, PlanNode, load_single

Path = tuple[int, ...]


def _children_of(dtype: t.DataType) -> tuple[t.Field, ...]:
    st = t.storage_of(dtype)
    if isinstance(st, t.DictionaryType):
        return t.storage_of(st.value_type).fields
    return st.fields


def walk_dictionary_fields(schema: t.Schema) -> Iterator[tuple[Path, str, t.DictionaryType]]:
    """Every dictionary-encoded field in pre-order: (path, dotted name, its type)."""

    def visit(f: t.Field, path: Path, name: str) -> Iterator[tuple[Path, str, t.DictionaryType]]:
        st = t.storage_of(f.type)
        if isinstance(st, t.DictionaryType):
            yield path, name, st
        for i, child in enumerate(_children_of(f.type)):
            yield from visit(child, (*path, i), f"{name}.{child.name}")

    for i, f in enumerate(schema.fields):
        yield from visit(f, (i,), f.name)


class DictionaryMemo:
    """The dictionaries read so far, by id (reader side)."""

    def __init__(
        self,
        schema: t.Schema,
        dictionary_ids: dict[Path, int],
        *,
        file_format: bool = False,
        max_size: int | None = None,
    ) -> None:
        self.dictionary_ids = dictionary_ids
        self.file_format = file_format
        # IpcLimits.max_dictionary_size: the body bytes one id's dictionary is built from
        # (a delta adds to it, a replacement starts again)
        self.max_size = max_size
        self._sizes: dict[int, int] = {}
        self._types: dict[int, t.DataType] = {}
        self._paths: dict[int, tuple[Path, str]] = {}
        # no ids: no field is dictionary-encoded (the schema decoder gives every such
        # field an id), so there is nothing to walk
        for path, name, dtype in walk_dictionary_fields(schema) if dictionary_ids else ():
            did = dictionary_ids.get(path)
            if did is None:
                continue
            # one id may serve several fields; they must agree on the value type
            prev = self._types.get(did)
            if prev is not None and prev != dtype.value_type:
                raise E.DictionaryError(
                    f"expected fields sharing dictionary id {did} to have one value type, "
                    f"found {prev} and {dtype.value_type}",
                    field_path=name,
                )
            self._types[did] = dtype.value_type
            self._paths.setdefault(did, (path, name))
        self._values: dict[int, Array] = {}
        self._seen_non_delta: set[int] = set()
        self._plans: dict[int, PlanNode] = {}

    def get(self, dictionary_id: int) -> Array | None:
        """The current dictionary for ``dictionary_id``, or None if none was read."""
        return self._values.get(dictionary_id)

    @property
    def ids(self) -> list[int]:
        """The ids the schema declares."""
        return sorted(self._types)

    def apply(
        self,
        batch: md.DictionaryBatch,
        body: memoryview,
        body_offset: int,
        ctx: LoadContext,
    ) -> tuple[int, bool]:
        """Load one DictionaryBatch; returns (id, is_delta)."""
        did = batch.id
        value_type = self._types.get(did)
        if value_type is None:
            raise E.DictionaryError(
                f"expected a dictionary id declared in the schema ({self.ids}), found {did}",
                message_index=ctx.message_index,
                offset=body_offset,
            )
        path, name = self._paths[did]

        def fail(cls: type[E.ArrowError], message: str, **where: Any) -> E.ArrowError:
            """An error about this batch: its message index and field, and ``where``."""
            return cls(message, message_index=ctx.message_index, field_path=name, **where)
        if self.max_size is not None:
            size = len(body) + (self._sizes.get(did, 0) if batch.is_delta else 0)
            if size > self.max_size:
                raise fail(
                    E.LimitExceeded,
                    f"expected dictionary {did} of at most {self.max_size} body bytes "
                    f"(IpcLimits.max_dictionary_size), found {size}",
                    offset=body_offset,
                )
            self._sizes[did] = size
        plan = self._plans.get(did)
        if plan is None:
            plan = self._plans[did] = PlanNode(value_type, path, name, self.dictionary_ids)
        values = load_single(plan, batch.data, body, body_offset, ctx)
        if len(values) != batch.data.length:
            raise fail(
                E.BodyError,
                f"expected a dictionary of length {batch.data.length}, found {len(values)}",
            )
        if batch.is_delta:
            old = self._values.get(did)
            if old is None:
                raise fail(
                    E.DictionaryError,
                    f"expected a dictionary for id {did} before its delta, found none",
                )
            self._values[did] = concat_arrays([old, values])
        else:
            if self.file_format and did in self._seen_non_delta:
                raise fail(
                    E.DictionaryError,
                    f"expected at most one non-delta dictionary batch for id {did} in an IPC "
                    "file (replacement is only allowed in streams), found another",
                )
            self._seen_non_delta.add(did)
            self._values[did] = values
        return did, batch.is_delta


# --------------------------------------------------------------------------------------
# writer side


def assign_dictionary_ids(schema: t.Schema) -> dict[Path, int]:
    """Ids 0, 1, 2, ... for the dictionary fields of ``schema`` in pre-order."""
    return {path: i for i, (path, _, _) in enumerate(walk_dictionary_fields(schema))}


def _same_values(a: Array, b: Array) -> bool:
    """Whether dictionary ``b`` may be left unwritten after ``a``: the same values bit
    for bit (a NaN equals the same NaN; -0.0 and 0.0 differ, and a reader of ``a``'s
    -0.0 for ``b``'s 0.0 would read a value that was not written)."""
    if a is b:
        return True
    if len(a) != len(b) or a.type != b.type:
        return False
    return array_equals(a, b, floats_by_bits=True)


def _find_dictionaries(arr: Array, path: Path, out: list[tuple[Path, Array]]) -> None:
    """Post-order: dictionaries nested inside dictionary values come first."""
    st = t.storage_of(arr.type)
    if isinstance(st, t.DictionaryType):
        values = arr.dictionary
        if values is None:
            raise E.ArrowInvalidArgument(
                f"expected a dictionary on the dictionary array at path {path}, found None"
            )
        for i, child in enumerate(values.children):
            _find_dictionaries(child, (*path, i), out)
        out.append((path, values))
        return
    for i, child in enumerate(arr.children):
        _find_dictionaries(child, (*path, i), out)


class DictionaryWriter:
    """Decides which DictionaryBatch messages a record batch needs (writer side)."""

    def __init__(
        self,
        schema: t.Schema,
        *,
        file_format: bool,
        emit_deltas: bool,
        unify: bool = False,
    ) -> None:
        self.ids = assign_dictionary_ids(schema)
        self.file_format = file_format
        self.emit_deltas = emit_deltas
        self.unify = unify
        self._last: dict[int, Array] = {}

    def batches_for(
        self, columns: Sequence[Array]
    ) -> tuple[list[tuple[int, Array, bool]], dict[int, Array]]:
        """The dictionary batches to write before ``columns`` as (id, values, is_delta),
        and the columns that unification re-encoded (by position)."""
        if not self.ids:
            return [], {}
        found: list[tuple[Path, Array]] = []
        for i, col in enumerate(columns):
            _find_dictionaries(col, (i,), found)
        out: list[tuple[int, Array, bool]] = []
        recoded: dict[int, Array] = {}
        for path, values in found:
            did = self.ids[path]
            last = self._last.get(did)
            if last is None:
                out.append((did, values, False))
            elif _same_values(last, values):
                continue
            elif (
                self.emit_deltas
                and len(values) > len(last)
                and _same_values(last, values.slice(0, len(last)))
            ):
                out.append((did, values.slice(len(last)), True))
            elif self.file_format and self.unify:
                # an earlier dictionary of the same column may have re-encoded it already
                current = recoded.get(path[0], columns[path[0]])
                unified, column = _unify(last, current, path)
                if len(unified) > len(last):
                    out.append((did, unified.slice(len(last)), True))
                recoded[path[0]] = column
                values = unified
            elif self.file_format:
                raise E.DictionaryError(
                    f"expected dictionary id {did} (path {path}) to keep its values or grow "
                    "by a delta, found different values: the IPC file format forbids "
                    "dictionary replacement; write a stream, give every batch the same "
                    "dictionary (or one that extends it, with emit_dictionary_deltas=True), "
                    "or pass unify_dictionaries=True"
                )
            else:
                out.append((did, values, False))
            self._last[did] = values
        return out, recoded


def _unify(last: Array, column: Array, path: Path) -> tuple[Array, Array]:
    """The dictionary ``last`` extended by the new values of the dictionary array at
    ``path`` (top-level, or nested in lists, structs, maps, unions...), and ``column``
    with that array re-encoded against it (the file format's alternative to
    replacement)."""
    # the arrays from the column down to the dictionary array
    chain = [column]
    for step in path[1:]:
        here = chain[-1]
        if isinstance(t.storage_of(here.type), t.DictionaryType):
            raise E.NotSupported(
                f"unify_dictionaries re-encodes dictionary arrays in columns and in nested "
                f"types, not inside another dictionary's values (path {path}): write a "
                "stream instead, or one dictionary for all batches"
            )
        chain.append(here.children[step])
    unified, recoded = _recode(last, chain[-1], path)
    # rebuild the parents around the re-encoded child, deepest first
    for parent, step in zip(reversed(chain[:-1]), reversed(path[1:])):
        children = list(parent.children)
        children[step] = recoded
        recoded = make_array(
            parent.type,
            len(parent),
            parent.buffers,
            children,
            parent.null_count,
            parent.offset,
            parent.dictionary,
        )
    return unified, recoded


def _recode(last: Array, arr: Array, path: Path) -> tuple[Array, Array]:
    """``last`` extended by the values of dictionary array ``arr`` it lacks, and ``arr``
    re-encoded against it (same length and logical values, offset 0)."""
    dtype = arr.type
    st: Any = t.storage_of(dtype)  # a DictionaryType: _find_dictionaries found it as one
    old_values = last.to_pylist()
    new_values = arr.dictionary.to_pylist()  # type: ignore[union-attr]
    position = {}
    for i, v in enumerate(old_values):
        position.setdefault(value_key(v), i)
    additions = []
    mapping = np.empty(len(new_values), dtype=np.int64)
    for i, v in enumerate(new_values):  # per dictionary entry, not per row
        k = value_key(v)
        if k not in position:
            position[k] = len(old_values) + len(additions)
            additions.append(v)
        mapping[i] = position[k]
    unified = last
    if additions:
        unified = concat_arrays([last, build_array(additions, st.value_type)])
    index_dtype = storage_numpy_dtype(st.index_type)
    n, off = len(arr), arr.offset
    idx = arr.buffers[1].view(index_dtype)[off : off + n].astype(np.int64)
    valid = np.ones(n, dtype=bool) if not arr.null_count else None
    if valid is None:
        valid = unpack_bits(arr.buffers[0], off, n)
    safe = np.where(valid, idx, 0)
    if len(mapping) == 0:
        remapped = np.zeros(n, dtype=index_dtype)
    else:
        if safe.size and (safe.min() < 0 or safe.max() >= len(mapping)):
            raise E.ArrowInvalid(
                f"expected dictionary indices below {len(mapping)}, found one out of range",
                field_path=str(path),
            )
        remapped = mapping[safe].astype(index_dtype)
    if len(unified) - 1 > np.iinfo(index_dtype).max:
        raise E.DictionaryError(
            f"expected the unified dictionary to fit index type {st.index_type}, found "
            f"{len(unified)} values"
        )
    validity = None
    if arr.null_count:
        validity = pack_bits(valid)
    recoded = make_array(
        dtype, n, [validity, remapped.view(np.uint8)], (), arr.null_count, 0, unified
    )
    return unified, recoded


def dictionary_field_type(schema: t.Schema, path: Path) -> Any:
    """The type at ``path`` (used by tools and tests)."""
    f = schema.fields[path[0]]
    for i in path[1:]:
        f = _children_of(f.type)[i]
    return f.type
