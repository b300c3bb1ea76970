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
from typing import Any

import numpy as np

from .. import types as t
from ..array.base import Array, array_class_for
from ..batch import RecordBatch, Table
from ..buffers import empty_buffer
from ..errors import ArrowTypeError
from ..layout import layout_of
from . import capsule as c
from .import_array import (
    ArrayStreamReader,
    _array_capsules,
    _build,
    _concat,
    _import_array_field,
    _move_array,
    memory_view,
    stream_capsule,
)
from .schema import _field_from_capsule, _schema_of, schema_digest
from .stream import export_stream

# --------------------------------------------------------------------------------------
# record batches


def _batch_from_struct(field: t.Field, array: Array) -> Any:
    return RecordBatch._from_struct_array(_schema_of(field), array)


def new_record_batch(schema: t.Schema, columns: list[Array], num_rows: int) -> Any:
    """A quiver RecordBatch of ``columns`` (checked against ``schema``)."""
    return RecordBatch(schema, columns, num_rows)


class BatchImporter:
    """Imports batch after batch from one producer (a writer's pyarrow batches): the
    schema is parsed once and reused while the producer's C schema has the same digest
    (:func:`~quiver.cdata.schema.schema_digest`: every node's format, name, metadata and
    flags, read again for each batch, so a changed schema is always seen), otherwise
    parsed again.  Each batch is zero-copy, as :func:`import_batch`.
    """

    __slots__ = ("_field", "_key", "_leaves", "_schema", "_target")

    def __init__(self, target: t.Schema | None = None) -> None:
        self._target = target  # a writer's schema: batches equal to it get this object
        self._key: tuple[Any, ...] | None = None
        self._field: t.Field | None = None
        self._schema: t.Schema | None = None
        self._leaves: list[tuple[Any, ...]] | None = None

    def __call__(self, obj: Any) -> Any:
        """A quiver RecordBatch viewing ``obj`` (any struct ``__arrow_c_array__``)."""
        schema_capsule, capsule = _array_capsules(obj, None)
        key = schema_digest(c.capsule_address(schema_capsule, c.SCHEMA_CAPSULE))
        field, schema = self._field, self._schema
        if field is None or key is None or key != self._key:
            field = _field_from_capsule(schema_capsule)
            schema = _schema_of(field)
            if self._target is not None and schema.equals(self._target):
                schema = self._target
            self._field, self._schema, self._key = field, schema, key
            self._leaves = _leaf_plan(schema)
        if self._leaves is not None:
            # the views keep the capsule alive, whose destructor releases the array
            address = c.capsule_address(capsule, c.ARRAY_CAPSULE)
            fast = _import_leaves(capsule, address, self._leaves, schema)  # type: ignore[arg-type]
            if fast is not None:
                return fast
        owner = _move_array(capsule)
        array = _build(owner.struct, field.type, owner, "", 0)
        return RecordBatch._from_struct_array(schema, array)  # type: ignore[arg-type]


# -- the flat fast path: a batch whose columns are all plain leaves ---------------------
# (fixed width, boolean, binary and string with 32/64-bit offsets: what Spark hands over).
# Each struct, buffer table and last offset is one unpack_from through
# c.ADDRESS_SPACE, and every buffer is a slice of one view spanning the batch's buffers
# (a view per buffer cost ~1 us, the largest part of an import); that view is never read
# outside the slices.  Anything out of the ordinary returns None and the general walk
# (_build) imports the batch instead, errors included.

_WINDOW_MAX = 1 << 30  # the widest span one view covers
_WINDOW_GAP = 1 << 20  # buffers further apart than this get views of their own
_LEAF_KINDS = {("validity", "values"), ("validity", "bits"), ("validity", "offsets", "data")}
_MEMORY = c.ADDRESS_SPACE
_read_array = c.ARRAY_STRUCT.unpack_from
_OFFSET_AT = {4: struct.Struct("<i").unpack_from, 8: struct.Struct("<q").unpack_from}
_object_new = object.__new__


def _windows(spans: list[tuple[int, int]], owner: Any) -> dict[int, tuple[int, np.ndarray]]:
    """For each buffer start, (window start, window view): buffers lying near each other
    (gaps below _WINDOW_GAP, a window at most _WINDOW_MAX) share one view."""
    out: dict[int, tuple[int, np.ndarray]] = {}
    group: list[int] = []
    lo = hi = 0
    for start, stop in sorted(spans):
        if group and (start - hi > _WINDOW_GAP or stop - lo > _WINDOW_MAX):
            entry = (lo, memory_view(lo, hi - lo, owner))
            for address in group:
                out[address] = entry
            group = []
        if not group:
            lo = hi = start
        group.append(start)
        if stop > hi:
            hi = stop
    if group:
        entry = (lo, memory_view(lo, hi - lo, owner))
        for address in group:
            out[address] = entry
    return out


def _leaf_plan(schema: t.Schema) -> list[tuple[Any, ...]] | None:
    """Per column (type, kind, width, buffer count, buffer table reader, last offset
    reader, Array class), or None when a column is not a plain leaf.  kind: 0 fixed
    width values, 1 bits, 2 offsets and data (width is the value or offset width)."""
    plan = []
    for f in schema.fields:
        lay = layout_of(f.type)
        kinds = tuple(b.kind for b in lay.buffers)
        physical = t.storage_of(f.type)
        if kinds not in _LEAF_KINDS or lay.variadic or physical.fields or isinstance(
            physical, t.DictionaryType
        ):
            return None
        kind = {"values": 0, "bits": 1, "offsets": 2}[kinds[1]]
        width = lay.buffers[1].byte_width
        plan.append((f.type, kind, width, len(kinds), c.pointers_reader(len(kinds)),
                     _OFFSET_AT.get(width), array_class_for(f.type)))
    return plan


def _import_leaves(owner: Any, address: int, plan: list[tuple[Any, ...]],
                   schema: t.Schema) -> Any:
    """The batch at ``address`` (an ArrowArray struct, left unreleased and unmoved) as a
    RecordBatch whose buffer views keep ``owner`` (the capsule holding it, or an
    :class:`_Owner`) alive, or None when it is not a batch of plain leaf columns."""
    # the per-batch cost of a writer fed pyarrow batches: one unpack_from per struct,
    # pointer table, buffer table and last offset, plain locals, one numpy view per
    # window of buffers and one slice of it per buffer, the arrays built without a call
    memory, read = _MEMORY, _read_array
    (length, null_count, offset, _n_buffers, n_children, _buffers, children_address,
     dictionary, release, _) = read(memory, address)
    if (null_count not in (0, -1) or length < 0 or offset < 0 or dictionary or not release
            or n_children != len(plan) or not plan or not children_address):
        return None
    pieces: list[tuple[Any, ...]] = []
    spans: list[tuple[int, int]] = []
    end_of_batch = offset + length
    whole = not offset
    for child, (dtype, kind, width, n_table, table, offset_at, cls) in zip(
        c.pointers_reader(n_children)(memory, children_address), plan
    ):
        if not child:
            return None
        (n, nulls, off, n_buf, n_kids, buffers_address, _, dict_address, release,
         _) = read(memory, child)
        if (not release or n_buf != n_table or n_kids or dict_address
                or n < end_of_batch or off < 0 or not buffers_address):
            return None
        addresses = table(memory, buffers_address)
        end = off + n
        validity = addresses[0]
        if validity:
            vbytes = (end + 7) >> 3
            spans.append((validity, validity + vbytes))
        elif nulls == 0 or not n:
            vbytes = 0
        else:
            return None
        if kind == 0:
            sizes: tuple[int, ...] = (vbytes, end * width)
        elif kind == 1:
            sizes = (vbytes, (end + 7) >> 3)
        else:
            if not addresses[1]:
                return None
            (last,) = offset_at(memory, addresses[1] + end * width)
            if last < 0:
                return None
            sizes = (vbytes, (end + 1) * width, last)
        for buf_address, nbytes in zip(addresses[1:], sizes[1:]):
            if buf_address and nbytes:
                spans.append((buf_address, buf_address + nbytes))
            elif nbytes and n:
                return None
        # the column as the batch's slice of the child (Array.slice's null count rule)
        pieces.append((cls, dtype, nulls if nulls == 0 or (whole and n == length) else -1,
                       off + offset, addresses, sizes))
    # buffers lying near each other (gaps below _WINDOW_GAP, a window at most
    # _WINDOW_MAX) share one view.  When all the gaps together are below _WINDOW_GAP (a
    # batch whose buffers sit in one body or one arena) that is a single view, found
    # without sorting; otherwise _windows groups them
    windows = None
    if spans:
        lo = min([start for start, _ in spans])
        hi = max([stop for _, stop in spans])
        if hi - lo <= _WINDOW_MAX and hi - lo - sum([b - a for a, b in spans]) <= _WINDOW_GAP:
            window = memory_view(lo, hi - lo, owner)
        else:
            windows = _windows(spans, owner)
    empty = empty_buffer()
    columns = []
    for cls, dtype, null_count, col_offset, addresses, sizes in pieces:
        bufs: list[np.ndarray | None] = []
        for buf_address, nbytes in zip(addresses, sizes):
            if not (buf_address and nbytes):
                bufs.append(empty)
                continue
            if windows is not None:
                lo, window = windows[buf_address]
            bufs.append(window[buf_address - lo : buf_address - lo + nbytes])
        if not sizes[0]:
            bufs[0] = None
        # Array(dtype, length, bufs, (), null_count, col_offset, None) without the call
        col = _object_new(cls)
        col._type = dtype
        col._length = length
        col._buffers = tuple(bufs)
        col._children = ()
        col._null_count = null_count
        col._offset = col_offset
        col._dictionary = None
        columns.append(col)
    # the columns were built with the schema's own types and checked to the batch length
    return RecordBatch._trusted(schema, columns, length)


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
            array = _concat(list(reader), field.type)
        return _batch_from_struct(field, array)
    capsules = _array_capsules(obj, requested_schema)
    if validate == "none":
        # batches of plain leaf columns take the flat fast path (as BatchImporter)
        field = _field_from_capsule(capsules[0])
        schema, plan = _leaf_plan_of(field)
        if plan is not None:
            capsule = capsules[1]
            address = c.capsule_address(capsule, c.ARRAY_CAPSULE)
            fast = _import_leaves(capsule, address, plan, schema)
            if fast is not None:
                return fast
        owner = _move_array(capsules[1])
        return _batch_from_struct(field, _build(owner.struct, field.type, owner, "", 0))
    field, array = _import_array_field(capsules, validate)
    return _batch_from_struct(field, array)


# the schema and leaf plan of each imported record batch field (the field objects come
# from the digest cache, so a producer's batches share one entry; keyed by id with the
# field kept in the entry so that the id is not reused while cached)
_LEAF_PLANS: dict[int, tuple[t.Field, t.Schema, Any]] = {}


def _leaf_plan_of(field: t.Field) -> tuple[t.Schema, list[tuple[Any, ...]] | None]:
    entry = _LEAF_PLANS.get(id(field))
    if entry is None or entry[0] is not field:
        schema = _schema_of(field) if isinstance(field.type, t.StructType) else None
        plan = _leaf_plan(schema) if schema is not None else None
        if len(_LEAF_PLANS) > 256:
            _LEAF_PLANS.clear()
        entry = _LEAF_PLANS[id(field)] = (field, schema, plan)  # type: ignore[assignment]
    return entry[1], entry[2]


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
            self.schema: t.Schema | None = _schema_of(self._field) if is_struct else None
        except BaseException:
            self.close()
            raise

    def read_next_batch(self) -> Any:
        """The next batch; ``StopIteration`` at the end of the stream."""
        array = self.read_next_array()
        return array if self._arrays else _batch_from_struct(self._field, array)

    def __next__(self) -> Any:
        return self.read_next_batch()

    def read_all(self) -> Any:
        """Every remaining batch, as a quiver Table.

        A stream of arrays gives one Array (chunks concatenated).
        """
        batches = list(self)
        if self._arrays:
            return _concat(batches, self._field.type)
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
