"""Import record batches, tables and batch streams through the C data and C stream
interfaces (the batch layer, over the array import of :mod:`quiver.cdata.import_array`).

Implements the consumer side of CDataInterface.rst for struct arrays that are record
batches, CStreamInterface.rst and the PyCapsule protocol (PyCapsuleInterface.rst):
anything with ``__arrow_c_array__`` or ``__arrow_c_stream__`` (pyarrow, polars, duckdb,
nanoarrow, ...), or the raw capsules.  Zero-copy as the array import; record batches of
plain leaf columns (the flat fast path below) are not moved: their buffers reference the
PyCapsule itself, whose destructor releases the array (the PyCapsule protocol's rule),
which spares the struct copy and a release through ctypes per batch.

>>> import pyarrow as pa
>>> import_batch(pa.record_batch({"a": [1, 2]})).num_rows
2
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .. import types as t
from ..array.base import Array, array_class_for, unchecked_new_source
from ..batch import RecordBatch, Table
from ..buffers import empty_buffer
from ..errors import ArrowTypeError
from ..hooks import register
from ..layout import layout_of
from ..layout_rules import CountRule, SizeRule, on_clear, rules_of
from . import capsule as c
from .import_array import (
    ArrayStreamReader,
    array_capsules,
    build_array,
    concat,
    import_array_field,
    memory_view,
    move_array,
    stream_capsule,
)
from .schema import field_from_capsule, schema_check, schema_digest, schema_of
from .stream import export_stream

# --------------------------------------------------------------------------------------
# record batches


def batch_from_struct(field: t.Field, array: Array) -> Any:
    return RecordBatch._from_struct_array(schema_of(field), array)


def reader_from_stream(data: Any) -> tuple[t.Schema, Iterator[Any]]:
    """The schema and the lazily imported RecordBatches of any ``__arrow_c_stream__``
    source of record batches (``RecordBatchReader.from_stream``)."""
    stream = ArrayStreamReader(stream_capsule(data))
    field = stream.field
    if not isinstance(field.type, t.StructType):
        raise ArrowTypeError(
            f"expected a stream of record batches, found a stream of {field.type}"
        )
    schema = schema_of(field)
    return schema, (RecordBatch._from_struct_array(schema, a) for a in stream)


def new_record_batch(schema: t.Schema, columns: list[Array], num_rows: int) -> Any:
    """A quiver RecordBatch of ``columns`` (checked against ``schema``)."""
    return RecordBatch(schema, columns, num_rows)


class BatchImporter:
    """Imports batch after batch from one producer (a writer's pyarrow batches): the
    schema is parsed once and reused while the producer's C schema matches it (every
    node's format, name, metadata and flags, read again for each batch by code generated
    for it, :func:`~quiver.cdata.schema.schema_check`, so a changed schema is always
    seen); a few schemas are kept, by their digest.  Each batch is zero-copy, as
    :func:`import_batch`.
    """

    __slots__ = ("_field", "_known", "_leaves", "_same", "_schema", "_target", "_wide")

    _KNOWN = 8  # schemas kept by digest (a producer alternating a few schemas)

    def __init__(self, target: t.Schema | None = None) -> None:
        self._target = target  # a writer's schema: batches equal to it get this object
        self._known: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        self._same: Callable[[int], bool] | None = None
        self._field: t.Field | None = None
        self._schema: t.Schema | None = None
        self._leaves: Callable[[int, Any], Any] | None = None
        # a schema too wide to digest: the producer's own schema object it came with,
        # reused while that compares equal (its ``==``), as before digests
        self._wide: Any = None

    def _adopt(self, address: int, schema_capsule: Any) -> None:
        """Take the schema at ``address`` as the current one (parsed, or known)."""
        key = schema_digest(address)
        entry = self._known.get(key) if key is not None else None
        if entry is None:
            field = field_from_capsule(schema_capsule)
            schema = schema_of(field)
            if self._target is not None and schema.equals(self._target):
                schema = self._target
            entry = (schema_check(key) if key is not None else None, field, schema,
                     _leaf_plan(schema))
            if key is not None:
                if len(self._known) >= self._KNOWN:
                    self._known.clear()
                self._known[key] = entry
        self._same, self._field, self._schema, self._leaves = entry

    def __call__(self, obj: Any) -> Any:
        """A quiver RecordBatch viewing ``obj`` (any struct ``__arrow_c_array__``)."""
        schema_capsule, capsule = array_capsules(obj, None)
        address = c.capsule_address(schema_capsule, c.SCHEMA_CAPSULE)
        same = self._same
        if same is not None:
            if not same(address):
                self._adopt(address, schema_capsule)
        elif self._field is None or not _same(getattr(obj, "schema", None), self._wide):
            self._adopt(address, schema_capsule)
            self._wide = getattr(obj, "schema", None) if self._same is None else None
        leaves = self._leaves
        if leaves is not None:
            # the views keep the capsule alive, whose destructor releases the array
            fast = leaves(c.capsule_address(capsule, c.ARRAY_CAPSULE), capsule)
            if fast is not None:
                return fast
        owner = move_array(capsule)
        array = build_array(owner.struct, self._field.type, owner, "", 0)  # type: ignore[union-attr]
        return RecordBatch._from_struct_array(self._schema, array)  # type: ignore[arg-type]


# -- the flat fast path: a batch whose columns are all plain leaves ---------------------
# (fixed width, boolean, binary and string with 32/64-bit offsets: what Spark hands over).
# Each struct, pointer table, buffer table and last offset is one unpack_from through
# c.ADDRESS_SPACE.  When a run of columns' buffers lie together every buffer is a slice
# (~0.1 us) of one view spanning them (~0.8 us), a view never read outside the slices;
# otherwise each is a view (~0.4 us) of one read-only memoryview from the lowest address
# (sorting them into windows cost more).  The columns are read and built by straight-line
# code generated per run of up to _CHUNK columns (see _chunk_source): a loop over the
# columns spent more on its own bookkeeping than on the reads.  Anything out of the
# ordinary returns None and the general walk (build_array) imports the batch instead, errors
# included.

_WINDOW_MAX = 1 << 30  # the widest span one view covers
_WINDOW_GAP = 1 << 20  # the most unused bytes that span may hold
_LEAF_KINDS = {("validity", "values"), ("validity", "bits"), ("validity", "offsets", "data")}
_CHUNK = 32  # columns per generated function (compiling costs ~0.5 ms a column)
# a column of the flat fast path: (kind, offsets width, validity size rule, size rule of
# its values, bits or offsets, count rule)
_Column = tuple[int, int, SizeRule, SizeRule, CountRule]
_CODE: dict[tuple[_Column, ...], Any] = {}  # compiled text per run of columns
_CODE_SIZE = 256


def _space(lo: int, owner: Any) -> memoryview:
    """Read-only bytes from ``lo`` on, holding ``owner``: what the buffers of columns
    whose buffers lie apart are cut from (each ``asarray`` of a slice of it)."""
    space = c.AddressSpace.from_address(lo)
    space.owner = owner
    return memoryview(space).toreadonly().cast("B")


def _chunk_source(shape: tuple[_Column, ...]) -> str:
    """The text of ``part(pointers, e, whole, offset, owner)`` for a run of columns of
    ``shape``: per column (kind, width, validity rule, rule, count rule), kind 0
    fixed-width values, 1 bits, 2 offsets (of ``width`` bytes) and data; the bytes each
    buffer is viewed with are its size rule's
    (:meth:`quiver.layout_rules.SizeRule.need_source`), its counts are checked by its
    count rule.

    ``part`` reads the children ArrowArrays at ``pointers`` (their structs, buffer
    tables and, kind 2, last offsets) into named locals, checks them (live plain
    children with ``e`` = offset + length slots at least, no dictionary, the buffers
    their size rules need present; otherwise None), then builds each column as the
    batch's slice of its child, its buffers views whose bases hold ``owner``.  The text
    holds only local names and ints; classes (``C0``...), types (``D0``...) and readers
    are names bound by :func:`_leaf_plan`.
    """
    n = len(shape)
    size = c.ARRAY_STRUCT.size
    fields = [f"n{k}, z{k}, o{k}, m{k}, h{k}, t{k}, _, d{k}, r{k}, _" for k in range(n)]
    side_by_side = " and ".join(f"p{k} == p0 + {k * size}" for k in range(1, n))
    lines = [
        # the readers are bound as defaults: locals, not a globals lookup at each use
        "def part(pointers, e, whole, offset, owner, _read=_read, _M=_M, _tab2=_tab2, "
        "_tab3=_tab3, _children=_children, _asarray=_asarray, _object_new=_object_new, "
        "EMPTY=EMPTY):",
        f"  ({', '.join(f'p{k}' for k in range(n))},) = pointers",
        f"  if not ({' and '.join(f'p{k}' for k in range(n))}):",
        "    return None",
        # the children's structs: one read when they lie side by side (as pyarrow's do)
        f"  if {side_by_side or 'True'}:",
        f"    ({', '.join(fields)},) = _children(_M, p0)",
        "  else:",
        *(f"    ({fields[k]},) = _read(_M, p{k})" for k in range(n)),
    ]
    starts, stops, sizes, build = [], [], [], []  # per buffer, and the columns' text
    for k, (kind, width, validity, rule, counts) in enumerate(shape):
        nbuf = 3 if kind == 2 else 2
        bufs = f"v{k}, a{k}" + (f", b{k}" if kind == 2 else "")
        lines += [
            f"  if not r{k} or m{k} != {nbuf} or h{k} or d{k} or n{k} < e or o{k} < 0 "
            f"or not t{k} or {counts.source(f'n{k}', f'z{k}', signed=False)}:",
            "    return None",
            f"  ({bufs},) = _tab{nbuf}(_M, t{k})",
            f"  x{k} = o{k} + n{k}",  # the end of the child's slots
            # validity bytes (a NULL bitmap is fine only without nulls or slots)
            f"  w{k} = {validity.need_source(f'x{k}')} if v{k} else 0",
            f"  if not v{k} and z{k} and n{k}:",
            "    return None",
        ]
        # a NULL buffer is fine only when empty or without slots; its size becomes 0, so
        # that below a buffer is present exactly when its size is not 0
        if kind == 2:
            lines += [
                f"  if not a{k}:",
                "    return None",
                f"  (g{k},) = _off{width}(_M, a{k} + x{k} * {width})",
                f"  if g{k} < 0 or (not b{k} and g{k} and n{k}):",
                "    return None",
                f"  s{k} = {rule.need_source(f'x{k}')}",
                f"  if not b{k}:",
                f"    g{k} = 0",
            ]
        else:
            lines += [
                f"  s{k} = {rule.need_source(f'x{k}')}",
                f"  if not a{k}:",
                f"    if s{k} and n{k}:",
                "      return None",
                f"    s{k} = 0",
            ]
        parts = [(f"v{k}", f"w{k}"), (f"a{k}", f"s{k}")] + ([(f"b{k}", f"g{k}")]
                                                             if kind == 2 else [])
        starts += [a for a, _ in parts]
        stops += [f"{a} + {size}" for a, size in parts]
        sizes += [size for _, size in parts]
        views = [f"_asarray(q[{a} - lo : {a} - lo + {size}]) if {size} else "
                 + ("None" if a.startswith("v") else "EMPTY") for a, size in parts]
        null_count = f"z{k} if z{k} == 0 or (whole and n{k} == e) else -1"
        build += unchecked_new_source(
            f"c{k}", f"C{k}", f"D{k}", "e - offset", f"({', '.join(views)},)", null_count
        ).splitlines()
        build.append(f"c{k}._offset = o{k} + offset")
    lines += [
        # the columns' buffers lying together (all the gaps together are small: one body
        # or one arena) are slices of one view of their span; otherwise of _space
        # (a present empty buffer widens the span, so a far one takes the second way)
        f"  lo = min(filter(None, ({', '.join(starts)},)), default=0)",
        "  q = None",
        "  if lo:",
        f"    hi = max({', '.join(stops)})",
        f"    if hi - lo <= MAX and hi - lo - ({' + '.join(sizes)}) <= GAP:",
        "      q = _view(lo, hi - lo, owner)",
        "    else:",
        "      q = _space(lo, owner)",
        *(f"  {line}" for line in build),
        f"  return ({', '.join(f'c{k}' for k in range(n))},)",
    ]
    return "\n".join(lines) + "\n"


def _chunk(shape: tuple[_Column, ...], names: dict[str, Any]) -> Any:
    """The generated ``part`` for ``shape`` (compiled once per shape), bound to the
    classes and types in ``names``."""
    code = _CODE.get(shape)
    if code is None:
        code = compile(_chunk_source(shape), "<quiver.cdata.import_batch part>", "exec")
        if len(_CODE) >= _CODE_SIZE:
            _CODE.clear()
        _CODE[shape] = code
    names.update({
        "_read": c.ARRAY_STRUCT.unpack_from,
        "_M": c.ADDRESS_SPACE,
        "_children": c.structs_reader(c.ARRAY_STRUCT, len(shape)),
        "_tab2": c.pointers_reader(2),
        "_tab3": c.pointers_reader(3),
        "_off4": struct.Struct("<i").unpack_from,
        "_off8": struct.Struct("<q").unpack_from,
        "_view": memory_view,
        "_space": _space,
        "_asarray": np.asarray,
        "_object_new": object.__new__,
        "EMPTY": empty_buffer(),
        "MAX": _WINDOW_MAX,
        "GAP": _WINDOW_GAP,
    })
    exec(code, names)
    return names["part"]


_read_array = c.ARRAY_STRUCT.unpack_from


def _leaf_plan(schema: t.Schema) -> Callable[[int, Any], Any] | None:
    """``take(address, owner)``: the batch at ``address`` (an ArrowArray struct, left
    unreleased and unmoved) as a RecordBatch of ``schema`` whose buffer views keep
    ``owner`` (the capsule holding it) alive, or None when it is not a batch of plain
    leaf columns; the columns are read by generated ``part`` functions
    (:func:`_chunk_source`).  None when a column of ``schema`` is not a plain leaf (or
    there are none)."""
    shape: list[_Column] = []
    for f in schema.fields:
        lay = layout_of(f.type)
        rules = rules_of(lay)
        sizes = rules.sizes
        kinds = tuple(b.kind for b in lay.buffers)
        physical = t.storage_of(f.type)
        if kinds not in _LEAF_KINDS or lay.variadic or physical.fields or isinstance(
            physical, t.DictionaryType
        ):
            return None
        width = lay.buffers[1].byte_width
        kind = {"values": 0, "bits": 1, "offsets": 2}[kinds[1]]
        if kind == 2 and width not in (4, 8):
            return None
        shape.append((kind, width, sizes[0], sizes[1], rules.counts))
    n = len(shape)
    if not n:
        return None
    parts = []
    for start in range(0, n, _CHUNK):
        run = schema.fields[start : start + _CHUNK]
        bound = {f"C{k}": array_class_for(f.type) for k, f in enumerate(run)}
        bound.update({f"D{k}": f.type for k, f in enumerate(run)})
        parts.append((start, start + len(run), _chunk(tuple(shape[start : start + _CHUNK]),
                                                      bound)))
    read_pointers = c.pointers_reader(n)
    batch = RecordBatch._trusted
    memory = c.ADDRESS_SPACE
    single = parts[0][2] if len(parts) == 1 else None

    def take(address: int, owner: Any) -> Any:
        (length, null_count, offset, _, n_children, _, children, dictionary, release,
         _) = _read_array(memory, address)
        if ((null_count != 0 and null_count != -1) or length < 0 or offset < 0
                or dictionary or not release or n_children != n or not children):
            return None
        pointers = read_pointers(memory, children)
        e = offset + length
        if single is not None:
            columns = single(pointers, e, not offset, offset, owner)
            return None if columns is None else batch(schema, columns, length)
        out: list[Any] = []
        for start, stop, part in parts:
            columns = part(pointers[start:stop], e, not offset, offset, owner)
            if columns is None:
                return None
            out += columns
        return batch(schema, out, length)

    return take


def _same(a: Any, b: Any) -> bool:
    """Whether a producer's schema objects compare equal (False when either is missing
    or they cannot be compared)."""
    if a is None or b is None:
        return False
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:  # a producer whose schemas do not compare: parse every time
        return False


def import_batch(obj: Any, requested_schema: Any = None, *, validate: str = "none") -> Any:
    """A zero-copy quiver RecordBatch from a struct-typed ``__arrow_c_array__``.

    A source with only ``__arrow_c_stream__`` (a table) becomes one batch: zero-copy when
    it has one chunk, concatenated otherwise.

    >>> import pyarrow as pa
    >>> import_batch(pa.record_batch({"a": [1, 2]})).num_rows
    2
    """
    if not hasattr(obj, "__arrow_c_array__") and hasattr(obj, "__arrow_c_stream__"):
        # a table-like source (a polars DataFrame, a pyarrow Table): one batch of it all
        with import_stream(obj, requested_schema, arrays=True, validate=validate) as reader:
            field = reader.field
            array = concat(list(reader), field.type)
        return batch_from_struct(field, array)
    capsules = array_capsules(obj, requested_schema)
    if validate == "none":
        # batches of plain leaf columns take the flat fast path (as BatchImporter)
        field = field_from_capsule(capsules[0])
        plan = _leaf_plan_of(field)
        if plan is not None:
            capsule = capsules[1]
            fast = plan(c.capsule_address(capsule, c.ARRAY_CAPSULE), capsule)
            if fast is not None:
                return fast
        owner = move_array(capsules[1])
        return batch_from_struct(field, build_array(owner.struct, field.type, owner, "", 0))
    field, array = import_array_field(capsules, validate)
    return batch_from_struct(field, array)


# the generated leaf import of each imported record batch field (the field objects come
# from the digest cache, so a producer's batches share one entry; keyed by id with the
# field kept in the entry so that the id is not reused while cached)
_LEAF_PLANS: dict[int, tuple[t.Field, Any]] = {}
on_clear(_LEAF_PLANS.clear)  # their code holds the layouts' rules


def _leaf_plan_of(field: t.Field) -> Callable[[int, Any], Any] | None:
    entry = _LEAF_PLANS.get(id(field))
    if entry is None or entry[0] is not field:
        plan = _leaf_plan(schema_of(field)) if isinstance(field.type, t.StructType) else None
        if len(_LEAF_PLANS) > 256:
            _LEAF_PLANS.clear()
        entry = _LEAF_PLANS[id(field)] = (field, plan)
    return entry[1]  # type: ignore[no-any-return]


# --------------------------------------------------------------------------------------
# streams


class ArrowStreamReader(ArrayStreamReader):
    """Record batches (or arrays) pulled lazily from an imported ``ArrowArrayStream``.

    Iterate it (each ``get_next`` happens on demand), or :meth:`read_all`. The producer's
    stream is released at the end of the stream, on :meth:`close`, or when this object dies.
    It speaks ``__arrow_c_stream__`` itself, so it can be passed on without reading it.
    """

    def __init__(self, capsule: Any, *, arrays: bool = False, validate: str = "none") -> None:
        super().__init__(capsule, validate=validate)
        try:
            is_struct = isinstance(self._field.type, t.StructType)
            # a stream of a non-struct type (a polars Series, a chunked array) or one
            # opened with arrays=True yields Arrays; otherwise record batches
            self._arrays = arrays or not is_struct
            self.schema: t.Schema | None = schema_of(self._field) if is_struct else None
        except BaseException:
            self.close()
            raise

    def read_next_batch(self) -> Any:
        """The next batch; ``StopIteration`` at the end of the stream."""
        array = self.read_next_array()
        return array if self._arrays else batch_from_struct(self._field, array)

    def __next__(self) -> Any:
        return self.read_next_batch()

    def read_all(self) -> Any:
        """Every remaining batch, as a quiver Table.

        A stream of arrays gives one Array (chunks concatenated).
        """
        batches = list(self)
        if self._arrays:
            return concat(batches, self._field.type)
        return Table.from_batches(batches, schema=self.schema)

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return export_stream(
            self, requested_schema, schema=self._field.type if self._arrays else self.schema
        )


def import_stream(
    obj: Any, requested_schema: Any = None, *, arrays: bool = False, validate: str = "none"
) -> ArrowStreamReader:
    """A lazy :class:`ArrowStreamReader` over ``__arrow_c_stream__`` (or a stream capsule).

    With ``arrays=True`` it yields Arrays (struct arrays for record batch streams);
    ``validate`` checks each one as in :func:`import_array`.

    >>> import pyarrow as pa
    >>> t_ = pa.table({"a": [1, 2, 3]})
    >>> [b.num_rows for b in import_stream(t_)]
    [3]
    """
    capsule = stream_capsule(obj, requested_schema)
    return ArrowStreamReader(capsule, arrays=arrays, validate=validate)


def import_table(obj: Any, requested_schema: Any = None, *, validate: str = "none") -> Any:
    """A quiver Table from ``__arrow_c_stream__`` (or a struct ``__arrow_c_array__``).

    Batches stay zero-copy views of the producer's memory.

    >>> import pyarrow as pa
    >>> import_table(pa.table({"a": [1, 2], "b": ["x", "y"]})).num_rows
    2
    """
    if not hasattr(obj, "__arrow_c_stream__") and hasattr(obj, "__arrow_c_array__"):
        batch = import_batch(obj, requested_schema, validate=validate)
        return Table.from_batches([batch], schema=batch.schema)
    with import_stream(obj, requested_schema, validate=validate) as reader:
        if reader.schema is None:
            raise ArrowTypeError(
                f"expected a stream of record batches (a struct type), found {reader.field.type}"
            )
        return reader.read_all()


# the hooks this module answers for the layers below (quiver.hooks)
register("cdata.reader_from_stream", reader_from_stream)
