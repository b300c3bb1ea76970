"""Record batches and dictionaries from decoded messages, for a schema and read options.

:class:`BatchLoader` is what the stream decoder, the file decoder and the command line
share: it resolves the projection (``columns=``), checks the schema's types, compiles the
read plan (:mod:`quiver.ipc.plan`), keeps the dictionaries
(:class:`~quiver.ipc.dictionaries.DictionaryMemo`), loads bodies
(:mod:`quiver.ipc.body`) and sets up the steady-state fast path (:mod:`quiver.ipc.steady`).

What a schema message and the options fix for every batch (the projection, the projected
schema, the compiled plan, the type checks) is a :class:`SchemaPlan`; a caller that opens
the same decoded schema again (the file decoder, whose footers are cached by their bytes)
gets it from :func:`schema_plan` without compiling it again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .. import errors as E
from .. import types as t
from ..array import Array
from ..array.validate import validate_array
from ..batch import RecordBatch
from ..layout_rules import on_clear
from ..types.checks import type_problems
from . import metadata as md
from . import steady
from .body import (  # noqa: F401  (DeferredBody: for the file decoder, which loads this lazily)
    DeferredBody,
    LoadContext,
    compile_plan,
    load_record_batch,
)
from .decoder import RawMessage
from .dictionaries import DictionaryMemo
from .options import IpcReadOptions
from .plan import PlanNode
from .steady import SteadyBatches


def resolve_columns(schema: t.Schema, columns: Sequence[int | str] | None) -> list[int] | None:
    """Indices for a projection given by names or indices, in the order asked (None: all
    columns); a duplicate or unknown column is an error that lists the schema's names.

    >>> import quiver as qv
    >>> resolve_columns(qv.schema([("a", qv.int8()), ("s", qv.string())]), ["s", "a"])
    [1, 0]
    """
    if columns is None:
        return None
    if isinstance(columns, (str, int, bytes)):
        raise E.ArrowTypeError(f"expected a list of column names or indices, found {columns!r}")
    out: list[int] = []
    for c in columns:
        if isinstance(c, str):
            hits = schema.get_all_field_indices(c)
            if len(hits) != 1:
                found = "none" if not hits else f"{len(hits)} columns with that name"
                raise E.ArrowKeyError(
                    f"expected one column named {c!r} in the schema {schema.names}, "
                    f"found {found}"
                )
            idx = hits[0]
        elif isinstance(c, int) and not isinstance(c, bool):
            idx = c + len(schema) if c < 0 else c
            if not 0 <= idx < len(schema):
                raise E.ArrowIndexError(
                    f"expected a column index below {len(schema)} in the schema "
                    f"{schema.names}, found {c}"
                )
        else:
            raise E.ArrowTypeError(f"expected a column name or index, found {c!r}")
        if idx in out:
            raise E.ArrowInvalidArgument(
                f"expected each column once in columns={list(columns)!r}, found "
                f"{schema.names[idx]!r} twice (schema {schema.names})"
            )
        out.append(idx)
    return out


def check_schema_types(schema: t.Schema, *, full: bool) -> None:
    """Refuse a schema whose types break the format's rules that need no data (see
    :mod:`quiver.types.checks`: canonical extension storage at every level, time zones at
    the full one); the error names the field."""
    for f in schema.fields:
        problems = type_problems(f.type, f.name, full=full)
        if problems:
            path, message = problems[0]
            raise E.ArrowInvalid(message, field_path=path)


class SteadySlot:
    """The steady fast path last set up for a :class:`SchemaPlan`, and how many loaders
    the plan has served: a reader of the same schema and options starts with it (its
    ``take`` accepts only messages of the shape it was built from, and refuses, rather
    than raises, anything the general path would refuse)."""

    __slots__ = ("loaders", "path")

    def __init__(self) -> None:
        self.path: SteadyBatches | None = None
        self.loaders = 0


@dataclass(frozen=True, slots=True)
class SchemaPlan:
    """What one schema message and the read options fix for every batch: the columns
    read (indices, in the order asked; None: all), the order that puts the body loader's
    file-order columns in that order (None: already), the projected schema and the
    compiled plan of the whole schema.  Shared between readers: nothing in it changes
    but ``steady`` (see :class:`SteadySlot`)."""

    columns: list[int] | None
    order: list[int] | None
    schema: t.Schema
    plan: list[PlanNode]
    steady: SteadySlot


def make_schema_plan(schema_msg: md.SchemaMessage, options: IpcReadOptions, *,
                     check_types: bool = True) -> SchemaPlan:
    """The :class:`SchemaPlan` of ``schema_msg`` read with ``options`` (types checked
    unless ``check_types`` is false; an unknown column or a bad type raises)."""
    full = schema_msg.schema
    if check_types:  # (``quiver validate`` reports these itself, as findings)
        check_schema_types(full, full=options.validate == "full")
    columns = resolve_columns(full, options.columns)
    # the body loader yields projected columns in file order; ``order`` puts them in the
    # order asked (None when that is file order already)
    order = None
    if columns is not None and columns != sorted(columns):
        rank = {c: k for k, c in enumerate(sorted(columns))}
        order = [rank[c] for c in columns]
    schema = full if columns is None else t.Schema(
        tuple(full.fields[i] for i in columns), full.metadata)
    return SchemaPlan(columns, order, schema, compile_plan(full, schema_msg.dictionary_ids),
                      SteadySlot())


_PLANS: OrderedDict[tuple, tuple[md.SchemaMessage, SchemaPlan]] = OrderedDict()
_PLANS_LOCK = threading.Lock()
_PLANS_KEPT = 32  # schemas whose plans are kept (most recently used first out last)
# the same plans by the schema's content (see schema_plan)
_PLANS_BY_SCHEMA: OrderedDict[tuple, SchemaPlan] = OrderedDict()


@on_clear
def forget_plans() -> None:
    """Drop the kept schema plans (and their steady fast paths); called by
    :func:`quiver.layout_rules.clear_rule_cache`, so that a change to the structural
    rules reaches a file read again."""
    with _PLANS_LOCK:
        _PLANS.clear()
        _PLANS_BY_SCHEMA.clear()


def schema_plan(schema_msg: md.SchemaMessage, options: IpcReadOptions, *,
                check_types: bool = True) -> SchemaPlan:
    """:func:`make_schema_plan`, kept for the same schema message object (a cached
    footer's) and the options it depends on: reopening a file compiles nothing again;
    nor does opening another file of an equal schema (the files of one dataset)."""
    columns = options.columns
    try:
        wanted = None if columns is None else tuple(columns)
        # every option but use_threads: the steady path kept depends on them all
        key = (id(schema_msg), wanted, options.validate, options.ensure_native_endian,
               options.limits, check_types)
        hash(key)
    except TypeError:  # (columns that are not a sequence of names: resolve_columns says)
        return make_schema_plan(schema_msg, options, check_types=check_types)
    with _PLANS_LOCK:
        hit = _PLANS.get(key)
        if hit is not None and hit[0] is schema_msg:
            _PLANS.move_to_end(key)
            return hit[1]
    # another file of the same schema (the footer differs: its blocks do): its plan, by
    # the schema's content (== is exact: names, types, nullability and metadata)
    try:
        same = (schema_msg.schema, tuple(sorted(schema_msg.dictionary_ids.items())),
                schema_msg.endianness, *key[1:])
        hash(same)
    except TypeError:
        same = None
    with _PLANS_LOCK:
        found = _PLANS_BY_SCHEMA.get(same) if same is not None else None
        if found is not None:
            _PLANS_BY_SCHEMA.move_to_end(same)
    if found is None:
        found = make_schema_plan(schema_msg, options, check_types=check_types)
    with _PLANS_LOCK:
        _PLANS[key] = (schema_msg, found)  # the message kept alive: its id stays its own
        while len(_PLANS) > _PLANS_KEPT:
            _PLANS.popitem(last=False)
        if same is not None:
            _PLANS_BY_SCHEMA[same] = found
            while len(_PLANS_BY_SCHEMA) > _PLANS_KEPT:
                _PLANS_BY_SCHEMA.popitem(last=False)
    return found


class BatchLoader:
    """Schema-aware message handling shared by the stream decoder, the file decoder and
    the command line (see the module docstring)."""

    def __init__(self, schema_msg: md.SchemaMessage, options: IpcReadOptions, *, file_format: bool,
                 check_types: bool = True, plan: SchemaPlan | None = None):
        self.schema_msg = schema_msg
        self.full_schema = schema_msg.schema
        self.options = options
        if plan is None:
            plan = make_schema_plan(schema_msg, options, check_types=check_types)
        self.columns = plan.columns
        self._order = plan.order
        self.schema = plan.schema
        self.plan = plan.plan
        self.memo = DictionaryMemo(
            self.full_schema,
            schema_msg.dictionary_ids,
            file_format=file_format,
            max_size=options.limits.max_dictionary_size,
        )
        self._ctx: LoadContext | None = None
        self.swap = schema_msg.endianness == "big" and options.ensure_native_endian
        # data kept in big-endian order cannot be checked with native arithmetic: such
        # batches are for passing through (e.g. rewriting), not for value conversion
        self.kept_foreign = schema_msg.endianness == "big" and not options.ensure_native_endian
        # the steady-state fast path (quiver.ipc.steady): the first few record batches
        # read here may set it up; the readers then offer later messages to it first
        self._slot = plan.steady
        self.steady_tries = steady.STEADY_TRIES
        # (none when the fast path is off: no tries)
        self.steady_path: SteadyBatches | None = plan.steady.path if self.steady_tries else None
        plan.steady.loaders += 1

    @property
    def plan_reused(self) -> bool:
        """Whether another loader was made from this one's (cached) schema plan before."""
        return self._slot.loaders > 1

    def context(self, raw: RawMessage) -> LoadContext:
        """The load context of one message (one object, reused while the version holds)."""
        ctx = self._ctx
        if ctx is not None and ctx.version == raw.message.version:
            ctx.message_index = raw.index
            return ctx
        ctx = self._ctx = LoadContext(
            version=raw.message.version,
            dictionaries=self.memo,
            dictionary_ids=self.schema_msg.dictionary_ids,
            max_decompressed_size=self.options.limits.max_decompressed_size,
            max_unbacked_rows=self.options.limits.max_unbacked_rows,
            big_endian=self.swap or self.kept_foreign,
            swap=self.swap,  # big-endian buffers become native as the loader slices them
            message_index=raw.index,
            threads=self.options.use_threads,
        )
        return ctx

    def dictionary(self, raw: RawMessage) -> None:
        """Apply one DictionaryBatch message."""
        self.memo.apply(raw.message.header, raw.body, raw.body_offset, self.context(raw))

    def _steady_for(self, raw: RawMessage) -> SteadyBatches | None:
        """The fast path for later messages shaped like ``raw`` (a RecordBatch message
        just loaded), or None when this reader's options or the message rule it out."""
        msg = raw.message
        if (
            self.options.validate == "full"
            or self.columns is not None
            or self.swap
            or self.kept_foreign
            or msg.custom_metadata is not None
            or msg.header.compression is not None
        ):
            return None
        limits = self.options.limits
        return SteadyBatches.build(
            raw.metadata,
            self.plan,
            self.schema,
            max_body_size=limits.max_body_size,
            max_unbacked_rows=limits.max_unbacked_rows,
        )

    def record_batch(self, raw: RawMessage) -> Any:
        """Build one RecordBatch from its message."""
        header = raw.message.header
        cols = load_record_batch(
            self.plan,
            header,
            raw.body,
            raw.body_offset,
            self.context(raw),
            columns=self.columns,
        )
        if self._order is not None:
            cols = [cols[k] for k in self._order]
        self._validate(cols, raw)
        if self.steady_tries:
            self.steady_tries -= 1
            self.steady_path = self._steady_for(raw) or self.steady_path
            self._slot.path = self.steady_path  # (for the next reader of this plan)
        return RecordBatch._trusted(self.schema, cols, header.length)

    def _validate(self, cols: list[Array], raw: RawMessage) -> None:
        # the structural level runs inside the body loader (O(1) checks per array)
        if self.options.validate != "full" or self.kept_foreign:
            return
        for f, c in zip(self.schema.fields, cols):
            try:
                validate_array(c, full=True, path=f.name)
            except E.ArrowError as exc:
                exc.locate(message_index=raw.index, offset=raw.offset)
                raise


__all__ = [
    "BatchLoader",
    "SchemaPlan",
    "check_schema_types",
    "make_schema_plan",
    "resolve_columns",
    "schema_plan",
]
