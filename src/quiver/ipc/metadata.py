"""IPC metadata: flatbuffer tables <-> plain frozen dataclasses (Schema.fbs, Message.fbs,
File.fbs, Tensor.fbs, SparseTensor.fbs; Columnar spec "Serialization and Interprocess
Communication").

This is the only module that knows flatbuffer field numbers.  Everything else in quiver sees
:class:`Message`, :class:`SchemaMessage`, :class:`RecordBatch`, :class:`DictionaryBatch`,
:class:`Footer`, :class:`Block`, :class:`Tensor` and :class:`SparseTensor`, with quiver's own
types (:mod:`quiver.types`).

Decoding checks every offset against the bytes present (see :mod:`quiver.ipc.flatbuf`), rejects
metadata versions other than V4 and V5 with :class:`~quiver.errors.NotSupported`, and never
builds one Python object per FieldNode or Buffer: ``RecordBatch.nodes`` and
``RecordBatch.buffers`` are zero-copy ``(n, 2)`` int64 views of the input.  Body offsets and
lengths are checked against the body by the body decoder, not here; negative values are
rejected here.

Dictionary-encoded fields come back as :class:`~quiver.types.DictionaryType` with their ids in
``SchemaMessage.dictionary_ids`` keyed by the path of child indices through the flatbuffer
``Field.children``.  Extension types travel as their storage type plus the
``ARROW:extension:name`` / ``ARROW:extension:metadata`` field metadata.

>>> from quiver import types as t
>>> sm = SchemaMessage(t.schema([t.field("a", t.int32())]), {})
>>> msg = decode_message(encode_message(Message(4, sm, 0)))
>>> msg.version, str(msg.header.schema)
(4, 'a: int32')
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from .. import types as t
from ..errors import (
    ArrowError,
    ArrowInvalidArgument,
    CompressionError,
    LimitExceeded,
    MetadataError,
    NotSupported,
)
from ..types import DataType, Field, KeyValueMetadata, Schema
from .flatbuf import BOOL, I16, I32, I64, U8, Builder, Reader, Table, as_readable

# --------------------------------------------------------------------------------------
# enums (the numbers of the .fbs files)

V4 = 3
V5 = 4
_SUPPORTED_VERSIONS = (V4, V5)

# MessageHeader union
_H_SCHEMA, _H_DICTIONARY_BATCH, _H_RECORD_BATCH, _H_TENSOR, _H_SPARSE_TENSOR = 1, 2, 3, 4, 5

# Type union
_NULL, _INT, _FLOAT, _BINARY, _UTF8, _BOOL, _DECIMAL, _DATE, _TIME, _TIMESTAMP = range(1, 11)
_INTERVAL, _LIST, _STRUCT, _UNION, _FIXED_BINARY, _FIXED_LIST, _MAP, _DURATION = range(11, 19)
_LARGE_BINARY, _LARGE_UTF8, _LARGE_LIST, _RUN_END_ENCODED = range(19, 23)
_BINARY_VIEW, _UTF8_VIEW, _LIST_VIEW, _LARGE_LIST_VIEW = range(23, 27)

_TYPE_NAMES = (
    "NONE",
    "Null",
    "Int",
    "FloatingPoint",
    "Binary",
    "Utf8",
    "Bool",
    "Decimal",
    "Date",
    "Time",
    "Timestamp",
    "Interval",
    "List",
    "Struct_",
    "Union",
    "FixedSizeBinary",
    "FixedSizeList",
    "Map",
    "Duration",
    "LargeBinary",
    "LargeUtf8",
    "LargeList",
    "RunEndEncoded",
    "BinaryView",
    "Utf8View",
    "ListView",
    "LargeListView",
)

_TIME_UNITS = ("s", "ms", "us", "ns")
_INTERVAL_UNITS = ("year_month", "day_time", "month_day_nano")
_FLOAT_WIDTHS = (16, 32, 64)
_CODECS = ("lz4_frame", "zstd")

EXTENSION_NAME_KEY = b"ARROW:extension:name"
EXTENSION_METADATA_KEY = b"ARROW:extension:metadata"


def version_name(version: int) -> str:
    """The MetadataVersion enum name of ``version`` (``3`` -> ``'V4'``)."""
    return f"V{version + 1}"


# --------------------------------------------------------------------------------------
# the plain objects


@dataclass(frozen=True)
class MetadataLimits:
    """Safety limits for decoding metadata; raise them for trusted sources.

    ``max_depth`` bounds field nesting, ``max_fields`` the number of fields in a schema,
    ``max_nodes`` / ``max_buffers`` the FieldNodes and Buffers of one record batch,
    ``max_metadata_items`` the key/value pairs of one custom metadata list, ``max_blocks`` the
    Blocks of a footer and ``max_count`` every vector element turned into a Python object.
    """

    max_depth: int = 64
    max_fields: int = 100_000
    max_nodes: int = 10_000_000
    max_buffers: int = 10_000_000
    max_metadata_items: int = 1_000_000
    max_blocks: int = 10_000_000
    max_count: int = 1_000_000


_DEFAULT_LIMITS = MetadataLimits()


@dataclass(frozen=True, slots=True)
class BodyCompression:
    """How the body buffers of a batch are compressed (one codec, buffer by buffer)."""

    codec: str  # "lz4_frame" or "zstd"
    method: str = "buffer"


_COMPRESSIONS = {name: BodyCompression(name) for name in _CODECS}


def _pairs(value: Any) -> np.ndarray:
    arr = np.asarray(value, dtype="<i8")
    if arr.size == 0:
        return np.zeros((0, 2), dtype="<i8")
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ArrowInvalidArgument(f"expected (n, 2) integer pairs, found shape {arr.shape}")
    return arr


@dataclass(frozen=True, slots=True, eq=False)
class RecordBatch:
    """The RecordBatch table: row count, FieldNodes, Buffers (metadata only, no body).

    ``nodes`` is an (n, 2) int64 array of ``[length, null_count]`` and ``buffers`` an (m, 2)
    int64 array of ``[offset, length]``, in depth-first pre-order of the schema.
    """

    length: int
    nodes: np.ndarray
    buffers: np.ndarray
    compression: BodyCompression | None = None
    variadic_buffer_counts: tuple[int, ...] = ()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RecordBatch):
            return NotImplemented
        return (
            self.length == other.length
            and np.array_equal(_pairs(self.nodes), _pairs(other.nodes))
            and np.array_equal(_pairs(self.buffers), _pairs(other.buffers))
            and self.compression == other.compression
            and tuple(self.variadic_buffer_counts) == tuple(other.variadic_buffer_counts)
        )

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class DictionaryBatch:
    """A dictionary's values for dictionary ``id``; ``is_delta`` appends to the existing one."""

    id: int
    data: RecordBatch
    is_delta: bool = False


@dataclass(frozen=True, slots=True)
class SchemaMessage:
    """A Schema table: quiver schema, dictionary ids by field path, endianness, features."""

    schema: Schema
    dictionary_ids: dict[tuple[int, ...], int]
    endianness: str = "little"
    features: tuple[int, ...] = ()


class Buffer(NamedTuple):
    """The ``Buffer`` struct: a region of a message body."""

    offset: int
    length: int


@dataclass(frozen=True, slots=True)
class Tensor:
    """A dense tensor's metadata (Tensor.fbs); the data is ``data_length`` body bytes."""

    type: DataType
    shape: tuple[int, ...]
    dim_names: tuple[str | None, ...]
    strides: tuple[int, ...]
    data_offset: int
    data_length: int


@dataclass(frozen=True, slots=True)
class SparseTensorIndexCOO:
    """Coordinate-format index: an (N, ndim) matrix of ``indices_type`` coordinates."""

    indices_type: DataType
    indices_buffer: Buffer
    indices_strides: tuple[int, ...] = ()
    is_canonical: bool = False


@dataclass(frozen=True, slots=True)
class SparseMatrixIndexCSX:
    """Compressed sparse row (``compressed_axis='row'``) or column matrix index."""

    compressed_axis: str  # "row" or "column"
    indptr_type: DataType
    indptr_buffer: Buffer
    indices_type: DataType
    indices_buffer: Buffer


@dataclass(frozen=True, slots=True)
class SparseTensorIndexCSF:
    """Compressed sparse fiber index: one indptr / indices buffer per level."""

    indptr_type: DataType
    indptr_buffers: tuple[Buffer, ...]
    indices_type: DataType
    indices_buffers: tuple[Buffer, ...]
    axis_order: tuple[int, ...]


SparseIndex = SparseTensorIndexCOO | SparseMatrixIndexCSX | SparseTensorIndexCSF


@dataclass(frozen=True, slots=True)
class SparseTensor:
    """A sparse tensor's metadata (SparseTensor.fbs)."""

    type: DataType
    shape: tuple[int, ...]
    dim_names: tuple[str | None, ...]
    non_zero_length: int
    sparse_index: SparseIndex
    data: Buffer


Header = SchemaMessage | RecordBatch | DictionaryBatch | Tensor | SparseTensor | None


@dataclass(frozen=True, slots=True)
class Message:
    """An encapsulated message's metadata: version, header, body length, custom metadata."""

    version: int  # MetadataVersion enum value: V4 = 3, V5 = 4
    header: Header
    body_length: int
    custom_metadata: KeyValueMetadata | None = None


@dataclass(frozen=True, slots=True)
class Block:
    """Where one message sits in an IPC file."""

    offset: int
    meta_data_length: int
    body_length: int


@dataclass(frozen=True, slots=True)
class Footer:
    """The IPC file footer: schema and the Blocks of dictionaries and record batches."""

    version: int
    schema: SchemaMessage
    dictionaries: tuple[Block, ...]
    record_batches: tuple[Block, ...]
    custom_metadata: KeyValueMetadata | None = None


# --------------------------------------------------------------------------------------
# decoding


def _reader(buf: Any, base_offset: int, limits: MetadataLimits) -> Reader:
    # the schema sits a few tables below the root (Message/Footer -> Schema -> Field)
    return Reader(
        buf,
        base_offset=base_offset,
        max_depth=limits.max_depth + 8,
        max_count=limits.max_count,
    )


def _key_values(tbl: Table, i: int, limits: MetadataLimits) -> KeyValueMetadata | None:
    if not tbl.has(i):
        return None
    n = tbl.vector_len(i)
    if n > limits.max_metadata_items:
        raise LimitExceeded(
            f"expected at most {limits.max_metadata_items} custom metadata entries, found {n}",
            offset=tbl.reader.base_offset + tbl.pos,
        )
    items = []
    for kv in tbl.tables(i):
        key = kv.bytes(0)
        value = kv.bytes(1)
        items.append((key if key is not None else b"", value if value is not None else b""))
    if not items:
        return None
    return KeyValueMetadata(items)


def _time_unit(tbl: Table, i: int, default: int, what: str) -> str:
    u = tbl.get(i, I16, default)
    if not 0 <= u < 4:
        raise tbl.reader.error(f"expected a {what} TimeUnit 0..3, found {u}", tbl.pos)
    return _TIME_UNITS[u]


def _int_type(tbl: Table, what: str) -> DataType:
    width = tbl.get(0, I32, 0)
    if width not in (8, 16, 32, 64):
        raise tbl.reader.error(f"expected {what} bitWidth 8/16/32/64, found {width}", tbl.pos)
    return _INTEGER_TYPES[width, bool(tbl.get(1, BOOL, False))]


_INTEGER_TYPES = {(w, s): t.IntegerType(w, s) for w in (8, 16, 32, 64) for s in (False, True)}


def _need_children(children: tuple[Field, ...], n: int, name: str, tbl: Table) -> None:
    if len(children) != n:
        raise tbl.reader.error(
            f"expected {n} child field{'s' if n != 1 else ''} for {name}, found {len(children)}",
            tbl.pos,
        )


def _decode_type(
    code: int, tt: Table | None, children: tuple[Field, ...], where: Table
) -> DataType:
    """The quiver type of a Type union member (``code``, table ``tt``) with its children."""
    if code == 0 or code >= len(_TYPE_NAMES):
        if code == 0:
            raise where.reader.error("expected a field type, found NONE", where.pos)
        raise NotSupported(
            f"Type union member {code} is not supported: expected a type of Schema.fbs "
            f"(1..{len(_TYPE_NAMES) - 1}); the data was written by a newer Arrow, upgrade quiver",
            offset=where.reader.base_offset + where.pos,
        )
    if tt is None:
        raise where.reader.error(
            f"expected a {_TYPE_NAMES[code]} type table, found none", where.pos
        )
    if code in _LEAF_TYPES:
        if children:
            _need_children(children, 0, _TYPE_NAMES[code], tt)
        return _LEAF_TYPES[code]
    if code == _INT:
        return _int_type(tt, "Int")
    if code == _FLOAT:
        p = tt.get(0, I16, 0)
        if not 0 <= p < 3:
            raise tt.reader.error(f"expected a FloatingPoint precision 0..2, found {p}", tt.pos)
        return t.FloatingPointType(_FLOAT_WIDTHS[p])
    if code == _DECIMAL:
        width = tt.get(2, I32, 128)
        precision = tt.get(0, I32, 0)
        scale = tt.get(1, I32, 0)
        try:
            return t.DecimalType(width, precision, scale)
        except ArrowError as exc:
            raise tt.reader.error(f"expected a valid Decimal: {exc.reason}", tt.pos) from None
    if code == _DATE:
        u = tt.get(0, I16, 1)
        if u not in (0, 1):
            raise tt.reader.error(f"expected a DateUnit 0 or 1, found {u}", tt.pos)
        return t.DateType("day" if u == 0 else "ms")
    if code == _TIME:
        unit = _time_unit(tt, 0, 1, "Time")
        width = tt.get(1, I32, 32)
        try:
            return t.TimeType(width, unit)
        except ArrowError as exc:
            raise tt.reader.error(f"expected a valid Time: {exc.reason}", tt.pos) from None
    if code == _TIMESTAMP:
        return t.TimestampType(_time_unit(tt, 0, 0, "Timestamp"), tt.string(1))
    if code == _INTERVAL:
        u = tt.get(0, I16, 0)
        if not 0 <= u < 3:
            raise tt.reader.error(f"expected an IntervalUnit 0..2, found {u}", tt.pos)
        return t.IntervalType(_INTERVAL_UNITS[u])
    if code == _DURATION:
        return t.DurationType(_time_unit(tt, 0, 1, "Duration"))
    if code == _FIXED_BINARY:
        width = tt.get(0, I32, 0)
        if width < 0:
            raise tt.reader.error(
                f"expected a non-negative FixedSizeBinary byteWidth, found {width}", tt.pos
            )
        return t.FixedSizeBinaryType(width)
    if code in _LIST_TYPES:
        _need_children(children, 1, _TYPE_NAMES[code], tt)
        return _LIST_TYPES[code](children[0])
    if code == _FIXED_LIST:
        _need_children(children, 1, "FixedSizeList", tt)
        size = tt.get(0, I32, 0)
        if size < 0:
            raise tt.reader.error(
                f"expected a non-negative FixedSizeList listSize, found {size}", tt.pos
            )
        return t.FixedSizeListType(children[0], size)
    if code == _STRUCT:
        return t.StructType(children)
    if code == _MAP:
        _need_children(children, 1, "Map", tt)
        entries = children[0]
        et = entries.type
        if not isinstance(et, t.StructType) or len(et.children) != 2:
            raise tt.reader.error(
                f"expected a Map entries field of struct<key, value>, found {et}", tt.pos
            )
        return t.MapType(entries, tt.get(0, BOOL, False))
    if code == _UNION:
        mode = tt.get(0, I16, 0)
        if mode not in (0, 1):
            raise tt.reader.error(f"expected a UnionMode 0 or 1, found {mode}", tt.pos)
        ids = tt.scalars(1, "i")
        codes = tuple(range(len(children))) if ids is None else ids
        try:
            return t.UnionType("sparse" if mode == 0 else "dense", children, codes)
        except ArrowError as exc:
            raise tt.reader.error(f"expected a valid Union: {exc.reason}", tt.pos) from None
    if code == _RUN_END_ENCODED:
        _need_children(children, 2, "RunEndEncoded", tt)
        try:
            return t.RunEndEncodedType(children[0], children[1])
        except ArrowError as exc:
            raise tt.reader.error(f"expected a valid RunEndEncoded: {exc.reason}", tt.pos) from None
    raise AssertionError(f"unhandled Type code {code}")  # pragma: no cover - table is complete


_LEAF_TYPES: dict[int, DataType] = {
    _NULL: t.NullType(),
    _BINARY: t.BinaryType(False),
    _UTF8: t.StringType(False),
    _BOOL: t.BoolType(),
    _LARGE_BINARY: t.BinaryType(True),
    _LARGE_UTF8: t.StringType(True),
    _BINARY_VIEW: t.BinaryViewType(),
    _UTF8_VIEW: t.StringViewType(),
}

_LIST_TYPES: dict[int, Any] = {
    _LIST: t.ListType,
    _LARGE_LIST: t.LargeListType,
    _LIST_VIEW: t.ListViewType,
    _LARGE_LIST_VIEW: t.LargeListViewType,
}


def _extension(
    typ: DataType, metadata: KeyValueMetadata, ft: Table
) -> tuple[DataType, KeyValueMetadata | None]:
    """Wrap ``typ`` in the ExtensionType that the field metadata names; drop those keys."""
    ext_name = metadata.get(EXTENSION_NAME_KEY) or b""
    serialized = metadata.get(EXTENSION_METADATA_KEY) or b""
    try:
        ext_str = ext_name.decode("utf-8")
    except UnicodeDecodeError:
        raise ft.reader.error(
            "expected a UTF-8 extension name, found invalid bytes", ft.pos
        ) from None
    rest = metadata.without(EXTENSION_NAME_KEY, EXTENSION_METADATA_KEY)
    return t.ExtensionType(ext_str, typ, serialized), (rest if len(rest) else None)


_FIELD_SLOTS = tuple(getattr(Field, n).__set__ for n in ("name", "type", "nullable", "metadata"))


def _new_field(
    name: str, typ: DataType, nullable: bool, metadata: KeyValueMetadata | None
) -> Field:
    # the decoder's values already have the types Field.__post_init__ checks for; setting
    # the slots directly skips the generic frozen __init__ (a schema of many fields)
    s0, s1, s2, s3 = _FIELD_SLOTS
    f = object.__new__(Field)
    s0(f, name)
    s1(f, typ)
    s2(f, bool(nullable))
    s3(f, metadata)
    return f


def _target(buf: Any, size: int, pos: int) -> int | None:
    """Where the reference at ``pos`` points, when that is inside the buffer."""
    target = pos + _u32(buf, pos)[0]
    return target if target + 4 <= size else None


def _plain_string(buf: Any, size: int, pos: int) -> str | None:
    """The UTF-8 string referenced at ``pos``, or None when out of bounds or invalid."""
    s = _target(buf, size, pos)
    if s is None:
        return None
    n = _u32(buf, s)[0]
    if n > size - s - 4:
        return None
    try:
        return str(buf[s + 4 : s + 4 + n], "utf-8")
    except UnicodeDecodeError:
        return None


def _plain_field(buf: Any, size: int, pos: int) -> Field | None:
    """The Field table at ``pos`` when it is plain: no children, no dictionary, no custom
    metadata, and a parameterless, Int, FloatingPoint, Date or Timestamp type, every
    reference and scalar in bounds and valid.  None otherwise: the general decoder
    (``_SchemaDecoder.field``) then decodes it or explains what is wrong."""
    fields = _fast_vtable(buf, size, pos, 7)
    if fields is None:
        return None
    o_name, o_null, o_code, o_type, o_dict, o_children, o_meta, tsize = fields
    if (
        o_dict
        or o_meta
        or not o_code
        or not o_type
        or o_name + 4 > tsize
        or o_null + 1 > tsize
        or o_code + 1 > tsize
        or o_type + 4 > tsize
        or o_children + 4 > tsize
    ):
        return None
    if o_children:
        vec = _target(buf, size, pos + o_children)
        if vec is None or _u32(buf, vec)[0]:
            return None
    name = _plain_string(buf, size, pos + o_name) if o_name else ""
    tt = _target(buf, size, pos + o_type)
    if name is None or tt is None:
        return None
    code = buf[pos + o_code]
    typ = _LEAF_TYPES.get(code)
    if typ is None:
        typ = _plain_type(buf, size, code, tt)
        if typ is None:
            return None
    return _new_field(name, typ, bool(o_null and buf[pos + o_null]), None)


def _plain_type(buf: Any, size: int, code: int, tt: int) -> DataType | None:
    """The Int, FloatingPoint, Date or Timestamp type of the table at ``tt`` (as
    ``_decode_type`` reads it), or None."""
    if code not in (_INT, _FLOAT, _DATE, _TIMESTAMP):
        return None
    fields = _fast_vtable(buf, size, tt, 2)
    if fields is None:
        return None
    o0, o1, tsize = fields
    if code == _INT:
        if o0 + 4 > tsize or o1 + 1 > tsize:
            return None
        width = _i32(buf, tt + o0)[0] if o0 else 0
        if width not in (8, 16, 32, 64):
            return None
        return _INTEGER_TYPES[width, bool(o1 and buf[tt + o1])]
    if o0 + 2 > tsize:
        return None
    if code == _FLOAT:
        p = _h16(buf, tt + o0)[0] if o0 else 0
        return t.FloatingPointType(_FLOAT_WIDTHS[p]) if 0 <= p < 3 else None
    if code == _DATE:
        u = _h16(buf, tt + o0)[0] if o0 else 1
        return t.DateType("day" if u == 0 else "ms") if u in (0, 1) else None
    u = _h16(buf, tt + o0)[0] if o0 else 0  # Timestamp
    if not 0 <= u < 4 or o1 + 4 > tsize:
        return None
    tz = _plain_string(buf, size, tt + o1) if o1 else None
    if o1 and tz is None:
        return None
    try:
        return t.TimestampType(_TIME_UNITS[u], tz)
    except ArrowError:
        return None


class _SchemaDecoder:
    __slots__ = ("dictionary_ids", "limits", "nfields")

    def __init__(self, limits: MetadataLimits) -> None:
        self.limits = limits
        self.nfields = 0
        self.dictionary_ids: dict[tuple[int, ...], int] = {}

    def fields(self, tbl: Table, i: int, path: tuple[int, ...], names: str) -> tuple[Field, ...]:
        n = tbl.vector_len(i)
        self.nfields += n
        if self.nfields > self.limits.max_fields:
            raise LimitExceeded(
                f"expected at most {self.limits.max_fields} fields in a schema, found more "
                f"(raise MetadataLimits.max_fields if the source is trusted)",
                offset=tbl.reader.base_offset + tbl.pos,
                field_path=names or None,
            )
        if n and len(path) >= self.limits.max_depth:
            raise LimitExceeded(
                f"expected fields nested at most {self.limits.max_depth} deep, found deeper",
                offset=tbl.reader.base_offset + tbl.pos,
                field_path=names or None,
            )
        if not n:
            return ()
        reader = tbl.reader
        depth = tbl.depth + 1
        # plain fields (no children, dictionary or metadata; a simple type) decode with a
        # few struct reads; the rest, and anything odd, through Table (which explains)
        fast = depth + 1 <= reader.max_depth
        out = []
        for k, pos in enumerate(tbl._refs(i) or ()):
            f = _plain_field(reader.buf, reader.size, pos) if fast else None
            if f is None:
                f = self.field(Table(reader, pos, depth), (*path, k), names)
            out.append(f)
        return tuple(out)

    def field(self, ft: Table, path: tuple[int, ...], parent: str) -> Field:
        name = ft.string(0)
        if name is None:
            name = ""
        names = f"{parent}.{name}" if parent else name
        try:
            nullable = ft.get(1, BOOL, False)
            code = ft.get(2, U8, 0)
            present = ft.offsets  # vtable entries: 0 for an absent field
            count = len(present)
            children = self.fields(ft, 5, path, names) if count > 5 and present[5] else ()
            metadata = _key_values(ft, 6, self.limits) if count > 6 and present[6] else None
            leaf = _LEAF_TYPES.get(code)
            if leaf is not None and not children and ft.ref(3):
                # parameterless types: their (empty) table need not be read
                typ = leaf
            else:
                typ = _decode_type(code, ft.table(3) if code else None, children, ft)
            if count > 4 and present[4]:
                de = ft.table(4)
                if de is not None:
                    typ = self.dictionary(de, typ, path)
            # like Arrow C++: a dictionary-encoded extension field is an extension type
            # whose storage is the dictionary type
            if metadata is not None and metadata.get(EXTENSION_NAME_KEY) is not None:
                typ, metadata = _extension(typ, metadata, ft)
            return _new_field(name, typ, nullable, metadata)
        except ArrowError as exc:
            raise exc.locate(field_path=names or "<unnamed>") from None

    def dictionary(self, de: Table, value_type: DataType, path: tuple[int, ...]) -> DataType:
        dict_id = de.get(0, I64, 0)
        it = de.table(1)
        index_type = t.IntegerType(32, True) if it is None else _int_type(it, "dictionary index")
        kind = de.get(3, I16, 0)
        if kind != 0:
            raise NotSupported(
                f"dictionaryKind {kind} is not supported: expected DenseArray (0)",
                offset=de.reader.base_offset + de.pos,
            )
        self.dictionary_ids[path] = dict_id
        return t.DictionaryType(index_type, value_type, de.get(2, BOOL, False))


def _decode_schema_table(tbl: Table, limits: MetadataLimits) -> SchemaMessage:
    endian = tbl.get(0, I16, 0)
    if endian not in (0, 1):
        raise tbl.reader.error(f"expected Endianness 0 or 1, found {endian}", tbl.pos)
    dec = _SchemaDecoder(limits)
    try:
        fields = dec.fields(tbl, 1, (), "")
    except RecursionError:
        raise LimitExceeded(
            "expected a schema shallow enough for Python's recursion limit, found deeper "
            "nesting (lower MetadataLimits.max_depth)",
            offset=tbl.reader.base_offset + tbl.pos,
        ) from None
    metadata = _key_values(tbl, 2, limits)
    features = tbl.scalars(3, "q") or ()
    return SchemaMessage(
        Schema(fields, metadata),
        dec.dictionary_ids,
        "little" if endian == 0 else "big",
        tuple(features),
    )


_NO_PAIRS = np.zeros((0, 2), dtype="<i8")
_NO_PAIRS.flags.writeable = False
_PAIR = np.dtype(("<i8", 2))  # frombuffer with this dtype gives an (n, 2) int64 array
_q_many: dict[int, struct.Struct] = {}


def _check_pairs(arr: np.ndarray, tbl: Table, what: str) -> None:
    if bool((arr < 0).any()):
        row = int(np.flatnonzero((arr < 0).any(axis=1))[0])
        raise tbl.reader.error(
            f"expected non-negative {what} values, found {arr[row].tolist()} at {what} {row}",
            tbl.pos,
        )


def _pairs_field(tbl: Table, i: int, what: str, limit: int) -> np.ndarray:
    """A vector of 16-byte structs of two int64 as one zero-copy (n, 2) view, checked >= 0."""
    v = tbl.vector(i, 16)
    if v is None:
        return _NO_PAIRS
    start, n = v
    if n > limit:
        raise LimitExceeded(
            f"expected at most {limit} {what}s, found {n}",
            offset=tbl.reader.base_offset + tbl.pos,
        )
    arr = np.frombuffer(tbl.buf, _PAIR, count=n, offset=start)
    if n <= 32:
        # tiny vectors: one struct call is several times faster than a numpy reduction
        if n:
            st = _q_many.get(n)
            if st is None:
                st = _q_many[n] = struct.Struct(f"<{2 * n}q")
            if min(st.unpack_from(tbl.buf, start)) < 0:
                _check_pairs(arr, tbl, what)
    else:
        _check_pairs(arr, tbl, what)
    return arr


def _decode_record_batch(tbl: Table, limits: MetadataLimits) -> RecordBatch:
    length = tbl.get(0, I64, 0)
    if length < 0:
        raise tbl.reader.error(
            f"expected a non-negative RecordBatch length, found {length}", tbl.pos
        )
    nodes = _pairs_field(tbl, 1, "FieldNode", limits.max_nodes)
    buffers = _pairs_field(tbl, 2, "Buffer", limits.max_buffers)
    compression = None
    ct = tbl.table(3)
    if ct is not None:
        codec = ct.get(0, I8_, 0)
        method = ct.get(1, I8_, 0)
        if not 0 <= codec < len(_CODECS):
            raise CompressionError(
                f"expected a CompressionType 0 (LZ4_FRAME) or 1 (ZSTD), found {codec}",
                offset=ct.reader.base_offset + ct.pos,
            )
        if method != 0:
            raise CompressionError(
                f"expected BodyCompressionMethod 0 (BUFFER), found {method}",
                offset=ct.reader.base_offset + ct.pos,
            )
        compression = _COMPRESSIONS[_CODECS[codec]]
    variadic: tuple[int, ...] = ()
    if tbl.has(4):
        variadic = tbl.scalars(4, "q") or ()
        if variadic and min(variadic) < 0:
            raise tbl.reader.error(
                f"expected non-negative variadicBufferCounts, found {min(variadic)}", tbl.pos
            )
    return RecordBatch(length, nodes, buffers, compression, variadic)


def _decode_dictionary_batch(tbl: Table, limits: MetadataLimits) -> DictionaryBatch:
    data = tbl.table(1)
    if data is None:
        raise tbl.reader.error("expected DictionaryBatch data (a RecordBatch), found none", tbl.pos)
    return DictionaryBatch(
        tbl.get(0, I64, 0), _decode_record_batch(data, limits), tbl.get(2, BOOL, False)
    )


def _buffer_at(tbl: Table, pos: int) -> Buffer:
    off, length = _QQ.unpack_from(tbl.buf, pos)
    if off < 0 or length < 0:
        raise tbl.reader.error(
            f"expected a non-negative Buffer offset and length, found ({off}, {length})", pos
        )
    return Buffer(off, length)


def _required_buffer(tbl: Table, i: int, what: str) -> Buffer:
    p = tbl.struct_pos(i, 16)
    if not p:
        raise tbl.reader.error(f"expected {what}, found none", tbl.pos)
    return _buffer_at(tbl, p)


def _buffer_vector(tbl: Table, i: int, what: str) -> tuple[Buffer, ...]:
    arr = tbl.int64_matrix(i, 2)
    if arr is None:
        raise tbl.reader.error(f"expected {what}, found none", tbl.pos)
    _check_pairs(arr, tbl, "Buffer")
    tbl.reader.count(arr.shape[0], tbl.pos)
    return tuple(Buffer(o, n) for o, n in arr.tolist())


def _tensor_type(tbl: Table) -> DataType:
    code, tt = tbl.union(0)
    return _decode_type(code, tt, (), tbl)


def _tensor_dims(tbl: Table) -> tuple[tuple[int, ...], tuple[str | None, ...]]:
    if not tbl.has(2):
        raise tbl.reader.error("expected a tensor shape, found none", tbl.pos)
    shape = []
    names = []
    for dim in tbl.tables(2):
        size = dim.get(0, I64, 0)
        if size < 0:
            raise dim.reader.error(f"expected a non-negative dimension size, found {size}", dim.pos)
        shape.append(size)
        names.append(dim.string(1))
    return tuple(shape), tuple(names)


def _required_int(tbl: Table, i: int, what: str) -> DataType:
    it = tbl.table(i)
    if it is None:
        raise tbl.reader.error(f"expected {what}, found none", tbl.pos)
    return _int_type(it, what)


def _decode_tensor(tbl: Table) -> Tensor:
    typ = _tensor_type(tbl)
    shape, names = _tensor_dims(tbl)
    strides = tbl.scalars(3, "q") or ()
    data = _required_buffer(tbl, 4, "tensor data (a Buffer)")
    return Tensor(typ, shape, names, tuple(strides), data.offset, data.length)


def _decode_sparse_index(code: int, it: Table | None, where: Table) -> SparseIndex:
    if code == 0 or it is None:
        raise where.reader.error("expected a sparseIndex, found none", where.pos)
    if code == 1:
        return SparseTensorIndexCOO(
            _required_int(it, 0, "COO indicesType"),
            _required_buffer(it, 2, "COO indicesBuffer"),
            tuple(it.scalars(1, "q") or ()),
            it.get(3, BOOL, False),
        )
    if code == 2:
        axis = it.get(0, I16, 0)
        if axis not in (0, 1):
            raise it.reader.error(f"expected compressedAxis 0 or 1, found {axis}", it.pos)
        return SparseMatrixIndexCSX(
            "row" if axis == 0 else "column",
            _required_int(it, 1, "CSX indptrType"),
            _required_buffer(it, 2, "CSX indptrBuffer"),
            _required_int(it, 3, "CSX indicesType"),
            _required_buffer(it, 4, "CSX indicesBuffer"),
        )
    if code == 3:
        axis_order = it.scalars(4, "i")
        if axis_order is None:
            raise it.reader.error("expected CSF axisOrder, found none", it.pos)
        return SparseTensorIndexCSF(
            _required_int(it, 0, "CSF indptrType"),
            _buffer_vector(it, 1, "CSF indptrBuffers"),
            _required_int(it, 2, "CSF indicesType"),
            _buffer_vector(it, 3, "CSF indicesBuffers"),
            tuple(axis_order),
        )
    raise where.reader.error(f"expected a SparseTensorIndex type 1..3, found {code}", where.pos)


def _decode_sparse_tensor(tbl: Table) -> SparseTensor:
    typ = _tensor_type(tbl)
    shape, names = _tensor_dims(tbl)
    nnz = tbl.get(3, I64, 0)
    if nnz < 0:
        raise tbl.reader.error(f"expected a non-negative non_zero_length, found {nnz}", tbl.pos)
    code, it = tbl.union(4)
    index = _decode_sparse_index(code, it, tbl)
    data = _required_buffer(tbl, 6, "sparse tensor data (a Buffer)")
    return SparseTensor(typ, shape, names, nnz, index, data)


def _check_version(version: int, tbl: Table) -> None:
    if version in _SUPPORTED_VERSIONS:
        return
    if 0 <= version < V4:
        raise NotSupported(
            f"metadata version {version_name(version)} is not supported: expected V4 or V5 "
            f"(rewrite the data with Arrow >= 0.15)",
            offset=tbl.reader.base_offset + tbl.pos,
        )
    if version > V5:
        raise NotSupported(
            f"metadata version {version_name(version)} (enum value {version}) is not supported: "
            f"expected V4 or V5 (the data comes from a newer Arrow; upgrade quiver)",
            offset=tbl.reader.base_offset + tbl.pos,
        )
    raise tbl.reader.error(f"expected a MetadataVersion V4 or V5, found {version}", tbl.pos)


def _as_format_error(exc: Exception, reader: Reader, what: str) -> Exception:
    """Malformed input surfaces as a FormatError (or NotSupported), never anything else."""
    if isinstance(exc, (MetadataError, LimitExceeded, CompressionError, NotSupported)):
        return exc
    if isinstance(exc, ArrowError):
        return MetadataError(
            f"expected a valid {what} flatbuffer, found {exc.reason}",
            offset=exc.offset if exc.offset is not None else reader.base_offset,
            field_path=exc.field_path,
        )
    if isinstance(
        exc,
        (
            struct.error,
            IndexError,
            KeyError,
            ValueError,
            OverflowError,
            TypeError,
            RecursionError,
            MemoryError,
        ),
    ):
        return reader.error(f"expected a well-formed {what} flatbuffer, found {exc!r}", 0)
    return exc


_hh = struct.Struct("<HH").unpack_from
_u32 = struct.Struct("<I").unpack_from
_i32 = struct.Struct("<i").unpack_from
_h16 = struct.Struct("<h").unpack_from
_q64 = struct.Struct("<q").unpack_from
_VT = [struct.Struct(f"<{n}H") for n in range(8)]
_PAD = [[(0,) * (count - n) for n in range(count + 1)] for count in range(8)]


def _fast_vtable(buf: Any, size: int, pos: int, count: int = 5) -> tuple[int, ...] | None:
    """The first ``count`` (<= 7) field offsets (0 for an absent field) and the table size
    of the table at ``pos``, when the table and its vtable lie inside the buffer."""
    if pos + 4 > size:
        return None
    vt = pos - _i32(buf, pos)[0]
    if vt < 0 or vt + 4 > size:
        return None
    vlen, tsize = _hh(buf, vt)
    if vlen < 4 or vlen & 1 or vt + vlen > size or tsize < 4 or pos + tsize > size:
        return None
    nf = min((vlen - 4) >> 1, count)
    return (*_VT[nf].unpack_from(buf, vt + 4), *_PAD[count][nf], tsize)


def _fast_pairs(buf: Any, size: int, field: int, limit: int) -> np.ndarray | None:
    vec = field + _u32(buf, field)[0]
    if vec + 4 > size:
        return None
    n = _u32(buf, vec)[0]
    start = vec + 4
    if n * 16 > size - start or n > limit:
        return None
    if n <= 32:
        if n:
            st = _q_many.get(n)
            if st is None:
                st = _q_many[n] = struct.Struct(f"<{2 * n}q")
            if min(st.unpack_from(buf, start)) < 0:
                return None
        return np.frombuffer(buf, _PAIR, count=n, offset=start)
    arr = np.frombuffer(buf, _PAIR, count=n, offset=start)
    return None if (arr < 0).any() else arr


# Building the frozen dataclasses through their slot descriptors skips the generic frozen
# __init__ (half the cost on the per-batch hot path); neither class has a __post_init__.
_new = object.__new__
_RB_SLOTS = tuple(
    getattr(RecordBatch, n).__set__
    for n in ("length", "nodes", "buffers", "compression", "variadic_buffer_counts")
)
_MSG_SLOTS = tuple(
    getattr(Message, n).__set__ for n in ("version", "header", "body_length", "custom_metadata")
)


def _record_batch_message(
    version: int,
    length: int,
    nodes: np.ndarray,
    buffers: np.ndarray,
    compression: BodyCompression | None,
    variadic: tuple[int, ...],
    body_length: int,
) -> Message:
    s0, s1, s2, s3, s4 = _RB_SLOTS
    rb = _new(RecordBatch)
    s0(rb, length)
    s1(rb, nodes)
    s2(rb, buffers)
    s3(rb, compression)
    s4(rb, variadic)
    m0, m1, m2, m3 = _MSG_SLOTS
    msg = _new(Message)
    m0(msg, version)
    m1(msg, rb)
    m2(msg, body_length)
    m3(msg, None)
    return msg


def _fast_record_batch_message(buf: Any, limits: MetadataLimits) -> Message | None:
    """The hot path: a RecordBatch message, decoded with a few struct calls.

    Returns None for anything else (other headers, custom metadata, anything out of bounds or
    invalid); the general path then decodes it or explains the error.
    """
    size = len(buf)
    if size < 12:
        return None
    root = _u32(buf, 0)[0]
    vt = _fast_vtable(buf, size, root)
    if vt is None:
        return None
    o_version, o_htype, o_header, o_body, o_custom, tsize = vt
    if (
        o_custom
        or not o_version
        or not o_htype
        or not o_header
        or o_version + 2 > tsize
        or o_htype + 1 > tsize
        or o_header + 4 > tsize
        or o_body + 8 > tsize
    ):
        return None
    version = _h16(buf, root + o_version)[0]
    if version not in _SUPPORTED_VERSIONS or buf[root + o_htype] != _H_RECORD_BATCH:
        return None
    body_length = _q64(buf, root + o_body)[0] if o_body else 0
    if body_length < 0:
        return None
    p = root + o_header
    rb = p + _u32(buf, p)[0]
    vt = _fast_vtable(buf, size, rb)
    if vt is None:
        return None
    o_length, o_nodes, o_buffers, o_comp, o_variadic, tsize = vt
    if (
        o_length + 8 > tsize
        or o_nodes + 4 > tsize
        or o_buffers + 4 > tsize
        or o_comp + 4 > tsize
        or o_variadic + 4 > tsize
    ):
        return None
    compression = None
    if o_comp:
        p = rb + o_comp
        ct = p + _u32(buf, p)[0]
        vt = _fast_vtable(buf, size, ct)
        if vt is None:
            return None
        o_codec, o_method, _, _, _, tsize = vt
        if o_codec + 1 > tsize or o_method + 1 > tsize:
            return None
        codec = buf[ct + o_codec] if o_codec else 0
        if codec > 1 or (o_method and buf[ct + o_method]):
            return None
        compression = _COMPRESSIONS[_CODECS[codec]]
    variadic: tuple[int, ...] = ()
    if o_variadic:
        p = rb + o_variadic
        vec = p + _u32(buf, p)[0]
        if vec + 4 > size:
            return None
        n = _u32(buf, vec)[0]
        if n * 8 > size - vec - 4 or n > limits.max_count:
            return None
        if n:
            variadic = struct.unpack_from(f"<{n}q", buf, vec + 4)
            if min(variadic) < 0:
                return None
    length = _q64(buf, rb + o_length)[0] if o_length else 0
    if length < 0:
        return None
    if o_nodes:
        nodes = _fast_pairs(buf, size, rb + o_nodes, limits.max_nodes)
        if nodes is None:
            return None
    else:
        nodes = _NO_PAIRS
    if o_buffers:
        buffers = _fast_pairs(buf, size, rb + o_buffers, limits.max_buffers)
        if buffers is None:
            return None
    else:
        buffers = _NO_PAIRS
    return _record_batch_message(
        version, length, nodes, buffers, compression, variadic, body_length
    )



@dataclass(frozen=True, slots=True)
class RecordBatchShape:
    """Where the per-batch numbers sit in one writer's RecordBatch messages.

    A writer that sends batch after batch of one schema produces metadata whose bytes
    differ only in four places: the Message's ``bodyLength``, the RecordBatch's
    ``length``, and the contents of the FieldNode and Buffer struct vectors.  When a later
    message has the same size and the same bytes everywhere else, every vtable and offset
    is the same, so those numbers are read straight from their known positions (one
    ``struct`` call) instead of walking the flatbuffer again.

    ``fixed.unpack_from(buf)`` gives the bytes outside the four places, to compare with
    ``fixed_bytes``; ``numbers.unpack_from(buf)`` gives the numbers in byte order, which
    ``slots`` maps: the index of ``bodyLength`` and ``length``, and the slices of the
    FieldNode (``length, null_count`` pairs) and Buffer (``offset, length`` pairs) values.
    A reader must still refuse negative numbers, as the general decoder does.
    """

    size: int
    fixed: struct.Struct  # the bytes outside the four places, as strings
    fixed_bytes: tuple[bytes, ...]
    numbers: struct.Struct  # the four places, as int64s, with pad bytes between
    slots: tuple[int, int, slice, slice]  # body_length, length, nodes, buffers in numbers


def _vtable_ranges(buf: bytes, pos: int) -> list[tuple[int, int]]:
    """The bytes :func:`_fast_vtable` reads for the table at ``pos``."""
    vt = pos - _i32(buf, pos)[0]
    vlen = _hh(buf, vt)[0]
    return [(pos, pos + 4), (vt, vt + 4 + 2 * min((vlen - 4) >> 1, 5))]


def _record_batch_structure(buf: bytes, root: int, rb: int) -> list[tuple[int, int]]:
    """Byte ranges that :func:`_fast_record_batch_message` reads for structure (all but
    the numbers) in a message it has decoded: root offset, both tables' vtables, the
    version, header type and header offset, the RecordBatch's reference fields, the vector
    counts, the compression table and the variadic counts."""
    size = len(buf)
    o_version, o_htype, o_header, _, o_custom, _ = _fast_vtable(buf, size, root)  # type: ignore[misc]
    out = [(0, 4), *_vtable_ranges(buf, root)]
    out += [
        (root + o_version, root + o_version + 2),
        (root + o_htype, root + o_htype + 1),
        (root + o_header, root + o_header + 4),
    ]
    if o_custom:
        out.append((root + o_custom, root + o_custom + 4))
    out += _vtable_ranges(buf, rb)
    fields = _fast_vtable(buf, size, rb)
    for o in fields[1:5]:  # type: ignore[index]  # nodes, buffers, compression, variadic
        if o:
            field = rb + o
            target = field + _u32(buf, field)[0]
            out += [(field, field + 4), (target, target + 4)]
    o_comp, o_variadic = fields[3], fields[4]  # type: ignore[index]
    if o_comp:
        ct = rb + o_comp + _u32(buf, rb + o_comp)[0]
        o_codec, o_method = _fast_vtable(buf, size, ct)[:2]  # type: ignore[index]
        out += _vtable_ranges(buf, ct)
        out += [(ct + o_codec, ct + o_codec + 1), (ct + o_method, ct + o_method + 1)]
    if o_variadic:
        vec = rb + o_variadic + _u32(buf, rb + o_variadic)[0]
        out.append((vec + 4, vec + 4 + 8 * _u32(buf, vec)[0]))
    return out


def record_batch_shape(buf: Any) -> RecordBatchShape | None:
    """The :class:`RecordBatchShape` of a RecordBatch message's metadata bytes, or None.

    None when the message is not a plain RecordBatch message (custom metadata, an absent
    ``bodyLength``/``length``/vector, anything the fast decoder does not take, places that
    overlap): such messages always go through the general decoder.
    """
    buf = bytes(buf)
    size = len(buf)
    message = _fast_record_batch_message(buf, _DEFAULT_LIMITS)
    if message is None:
        return None
    root = _u32(buf, 0)[0]
    _, _, o_header, o_body, _, _ = _fast_vtable(buf, size, root)  # type: ignore[misc]
    p = root + o_header
    rb = p + _u32(buf, p)[0]
    o_length, o_nodes, o_buffers, _, _, _ = _fast_vtable(buf, size, rb)  # type: ignore[misc]
    if not (o_body and o_length and o_nodes and o_buffers):
        return None
    places = [(root + o_body, 1, "body"), (rb + o_length, 1, "length")]
    for field, name in ((rb + o_nodes, "nodes"), (rb + o_buffers, "buffers")):
        vec = field + _u32(buf, field)[0]
        places.append((vec + 4, 2 * _u32(buf, vec)[0], name))
    places.sort()
    # every byte the fast decoder reads to learn the structure (offsets, vtables, version,
    # header type, counts, compression, variadic counts) must lie outside the places:
    # flatbuffers let a crafted table cover other bytes, and a structural byte inside a
    # place would change with the numbers while the fixed bytes still match
    structure = _record_batch_structure(buf, root, rb)
    for start, n, _ in places:
        end = start + 8 * n
        if any(a < end and start < b for a, b in structure):
            return None
    fixed_fmt, numbers_fmt, slots = ["<"], ["<"], {}
    at = count = 0
    for start, n, name in places:
        if start < at:
            return None  # overlapping places: not something a writer produces
        fixed_fmt.append(f"{start - at}s{8 * n}x")
        numbers_fmt.append(f"{start - at}x{n}q")
        slots[name] = count if n == 1 and name in ("body", "length") else slice(count, count + n)
        count += n
        at = start + 8 * n
    fixed_fmt.append(f"{size - at}s")
    fixed = struct.Struct("".join(fixed_fmt))
    return RecordBatchShape(
        size,
        fixed,
        fixed.unpack_from(buf, 0),
        struct.Struct("".join(numbers_fmt)),
        (slots["body"], slots["length"], slots["nodes"], slots["buffers"]),  # type: ignore[arg-type]
    )


def decode_message(
    buf: Any, *, base_offset: int = 0, limits: MetadataLimits | None = None
) -> Message:
    """Decode a Message flatbuffer (the bytes after the length prefix, padding allowed).

    >>> rb = RecordBatch(3, [[3, 0]], [[0, 0], [0, 24]])
    >>> m = decode_message(encode_message(Message(V5, rb, 24)))
    >>> m.header.nodes.tolist(), m.body_length
    ([[3, 0]], 24)
    """
    lim = limits or _DEFAULT_LIMITS
    if not isinstance(buf, bytes):
        buf = as_readable(buf)
    fast = _fast_record_batch_message(buf, lim)
    if fast is not None:
        return fast
    return _decode_message_general(buf, base_offset, lim)


def _decode_message_general(buf: Any, base_offset: int, lim: MetadataLimits) -> Message:
    """Every message kind, through :class:`~quiver.ipc.flatbuf.Table` (checks and explains)."""
    reader = _reader(buf, base_offset, lim)
    try:
        root = reader.root()
        version = root.get(0, I16, 0)
        _check_version(version, root)
        code, ht = root.union(1)
        body_length = root.get(3, I64, 0)
        if body_length < 0:
            raise reader.error(f"expected a non-negative bodyLength, found {body_length}", root.pos)
        custom = _key_values(root, 4, lim) if root.has(4) else None
        if code == 0:
            return Message(version, None, body_length, custom)
        if ht is None:
            raise reader.error(
                f"expected a header table for header type {code}, found none", root.pos
            )
        if code == _H_RECORD_BATCH:
            header: Header = _decode_record_batch(ht, lim)
        elif code == _H_SCHEMA:
            header = _decode_schema_table(ht, lim)
        elif code == _H_DICTIONARY_BATCH:
            header = _decode_dictionary_batch(ht, lim)
        elif code == _H_TENSOR:
            header = _decode_tensor(ht)
        elif code == _H_SPARSE_TENSOR:
            header = _decode_sparse_tensor(ht)
        else:
            raise reader.error(f"expected a MessageHeader type 0..5, found {code}", root.pos)
        return Message(version, header, body_length, custom)
    except Exception as exc:
        raise _as_format_error(exc, reader, "Message") from None


def decode_schema(
    buf: Any, *, base_offset: int = 0, limits: MetadataLimits | None = None
) -> SchemaMessage:
    """Decode a flatbuffer whose root is a bare Schema table.

    >>> from quiver import types as t
    >>> sm = SchemaMessage(t.schema([("d", t.dictionary(t.int8(), t.string()))]), {(0,): 5})
    >>> decode_schema(encode_schema(sm)).dictionary_ids
    {(0,): 5}
    """
    lim = limits or _DEFAULT_LIMITS
    reader = _reader(buf, base_offset, lim)
    try:
        return _decode_schema_table(reader.root(), lim)
    except Exception as exc:
        raise _as_format_error(exc, reader, "Schema") from None


_BLOCK_DTYPE = np.dtype(
    [("offset", "<i8"), ("meta_data_length", "<i4"), ("pad", "<i4"), ("body_length", "<i8")]
)


_FEW_BLOCKS = 32  # up to this many Blocks, struct beats numpy's per-call cost


def _blocks(tbl: Table, i: int, limits: MetadataLimits) -> tuple[Block, ...]:
    arr = tbl.struct_array(i, _BLOCK_DTYPE)
    if arr is None or not len(arr):
        return ()
    if len(arr) > limits.max_blocks:
        raise LimitExceeded(
            f"expected at most {limits.max_blocks} Blocks, found {len(arr)}",
            offset=tbl.reader.base_offset + tbl.pos,
        )
    if len(arr) <= _FEW_BLOCKS:
        vals = _block_structs(len(arr)).unpack(arr.tobytes())
        if min(vals) >= 0:
            return tuple(
                _block(vals[k], vals[k + 1], vals[k + 2]) for k in range(0, len(vals), 3)
            )
    offsets = arr["offset"]
    meta = arr["meta_data_length"]
    body = arr["body_length"]
    if (offsets < 0).any() or (meta < 0).any() or (body < 0).any():
        k = int(np.flatnonzero((offsets < 0) | (meta < 0) | (body < 0))[0])
        raise tbl.reader.error(
            f"expected non-negative Block values, found ({offsets[k]}, {meta[k]}, {body[k]}) "
            f"at Block {k}",
            tbl.pos,
        )
    return tuple(map(_block, offsets.tolist(), meta.tolist(), body.tolist()))


_BLOCK_STRUCTS: dict[int, struct.Struct] = {}


def _block_structs(n: int) -> struct.Struct:
    st = _BLOCK_STRUCTS.get(n)
    if st is None:
        st = _BLOCK_STRUCTS[n] = struct.Struct("<" + "qi4xq" * n)
    return st


_BLOCK_SLOTS = tuple(
    getattr(Block, n).__set__ for n in ("offset", "meta_data_length", "body_length")
)


def _block(offset: int, meta_data_length: int, body_length: int) -> Block:
    # files with many batches have many Blocks: skip the generic frozen __init__
    s0, s1, s2 = _BLOCK_SLOTS
    blk = object.__new__(Block)
    s0(blk, offset)
    s1(blk, meta_data_length)
    s2(blk, body_length)
    return blk


def decode_footer(
    buf: Any, *, base_offset: int = 0, limits: MetadataLimits | None = None
) -> Footer:
    """Decode an IPC file Footer flatbuffer.

    >>> from quiver import types as t
    >>> sm = SchemaMessage(t.schema([("a", t.int64())]), {})
    >>> f = decode_footer(encode_footer(Footer(V5, sm, (), (Block(8, 136, 64),))))
    >>> f.record_batches
    (Block(offset=8, meta_data_length=136, body_length=64),)
    """
    lim = limits or _DEFAULT_LIMITS
    reader = _reader(buf, base_offset, lim)
    try:
        root = reader.root()
        # a footer without a version field comes from writers that predate it: read as V4
        version = root.get(0, I16, 0) if root.has(0) else V4
        _check_version(version, root)
        st = root.table(1)
        if st is None:
            raise reader.error("expected a Footer schema, found none", root.pos)
        schema = _decode_schema_table(st, lim)
        return Footer(
            version,
            schema,
            _blocks(root, 2, lim),
            _blocks(root, 3, lim),
            _key_values(root, 4, lim),
        )
    except Exception as exc:
        raise _as_format_error(exc, reader, "Footer") from None


# --------------------------------------------------------------------------------------
# encoding


I8_ = struct.Struct("<b")
_QQ = struct.Struct("<qq")


def _encode_key_values(b: Builder, md: Any) -> int:
    if not md:
        return 0
    if not isinstance(md, KeyValueMetadata):
        md = KeyValueMetadata(md)  # a mapping or pairs of str/bytes
    handles = []
    for k, v in md.items():
        kh = b.create_string(k)
        vh = b.create_string(v)
        handles.append(b.table([(0, "offset", kh), (1, "offset", vh)]))
    return b.create_offset_vector(handles)


def _encode_int(b: Builder, typ: DataType) -> int:
    if not isinstance(typ, t.IntegerType):
        raise ArrowInvalidArgument(f"expected an integer type, found {typ}")
    return b.table([(0, "<i", typ.width), (1, "<?", typ.signed, False)])


_UNIT_INDEX = {u: i for i, u in enumerate(_TIME_UNITS)}
_LEAF_CODES = {type(v): k for k, v in _LEAF_TYPES.items()}
_LEAF_CODES[t.BinaryType] = _BINARY  # BinaryType/StringType need the `large` flag below
_LEAF_CODES[t.StringType] = _UTF8


def _encode_type(b: Builder, typ: DataType) -> tuple[int, int]:
    """Write the Type union member for ``typ``: (type code, table handle)."""
    cls = type(typ)
    if cls is t.BinaryType:
        return (_LARGE_BINARY if typ.large else _BINARY), b.table([])  # type: ignore[attr-defined]
    if cls is t.StringType:
        return (_LARGE_UTF8 if typ.large else _UTF8), b.table([])  # type: ignore[attr-defined]
    if cls in _LEAF_CODES:
        return _LEAF_CODES[cls], b.table([])
    if cls is t.IntegerType:
        return _INT, _encode_int(b, typ)
    if cls is t.FloatingPointType:
        return _FLOAT, b.table([(0, "<h", _FLOAT_WIDTHS.index(typ.width))])  # type: ignore[attr-defined]
    if isinstance(typ, t.DecimalType):
        return _DECIMAL, b.table(
            [(0, "<i", typ.precision), (1, "<i", typ.scale), (2, "<i", typ.width)]
        )
    if isinstance(typ, t.DateType):
        return _DATE, b.table([(0, "<h", 0 if typ.unit == "day" else 1)])
    if isinstance(typ, t.TimeType):
        return _TIME, b.table([(0, "<h", _UNIT_INDEX[typ.unit]), (1, "<i", typ.width)])
    if isinstance(typ, t.TimestampType):
        tz = b.create_string(typ.tz) if typ.tz is not None else 0
        return _TIMESTAMP, b.table([(0, "<h", _UNIT_INDEX[typ.unit]), (1, "offset", tz)])
    if isinstance(typ, t.IntervalType):
        return _INTERVAL, b.table([(0, "<h", _INTERVAL_UNITS.index(typ.unit))])
    if isinstance(typ, t.DurationType):
        return _DURATION, b.table([(0, "<h", _UNIT_INDEX[typ.unit])])
    if isinstance(typ, t.FixedSizeBinaryType):
        return _FIXED_BINARY, b.table([(0, "<i", typ.width)])
    if isinstance(typ, t.FixedSizeListType):
        return _FIXED_LIST, b.table([(0, "<i", typ.list_size)])
    if isinstance(typ, t.ListType):
        return _LIST, b.table([])
    if isinstance(typ, t.LargeListType):
        return _LARGE_LIST, b.table([])
    if isinstance(typ, t.ListViewType):
        return _LIST_VIEW, b.table([])
    if isinstance(typ, t.LargeListViewType):
        return _LARGE_LIST_VIEW, b.table([])
    if isinstance(typ, t.StructType):
        return _STRUCT, b.table([])
    if isinstance(typ, t.MapType):
        return _MAP, b.table([(0, "<?", typ.keys_sorted, False)])
    if isinstance(typ, t.UnionType):
        ids = b.create_scalar_vector("i", typ.type_codes)
        return _UNION, b.table([(0, "<h", 0 if typ.mode == "sparse" else 1), (1, "offset", ids)])
    if isinstance(typ, t.RunEndEncodedType):
        return _RUN_END_ENCODED, b.table([])
    raise ArrowInvalidArgument(f"expected a type that IPC metadata can describe, found {typ}")


class _SchemaEncoder:
    __slots__ = ("builder", "dictionary_ids")

    def __init__(self, builder: Builder, dictionary_ids: dict[tuple[int, ...], int]) -> None:
        self.builder = builder
        self.dictionary_ids = dictionary_ids

    def fields(self, fields: Sequence[Field], path: tuple[int, ...]) -> int:
        handles = [self.field(f, (*path, k)) for k, f in enumerate(fields)]
        return self.builder.create_offset_vector(handles)

    def field(self, f: Field, path: tuple[int, ...]) -> int:
        b = self.builder
        typ = f.type
        metadata = f.metadata.items() if f.metadata else []
        dictionary = None
        if isinstance(typ, t.ExtensionType):
            metadata += self._extension_md(typ)
            typ = typ.storage_type
        if isinstance(typ, t.DictionaryType):
            dictionary = typ
            typ = typ.value_type
            if isinstance(typ, t.ExtensionType):
                metadata += self._extension_md(typ)
                typ = typ.storage_type
        if isinstance(typ, (t.ExtensionType, t.DictionaryType)):
            raise ArrowInvalidArgument(
                f"expected at most one extension and one dictionary level on field "
                f"{f.name!r}, found {f.type}"
            )
        children = self.fields(typ.fields, path) if typ.fields else 0
        dict_handle = 0
        if dictionary is not None:
            dict_id = self.dictionary_ids.get(path)
            if dict_id is None:
                raise ArrowInvalidArgument(
                    f"expected a dictionary id for dictionary field {f.name!r} at path {path}, "
                    f"found none in dictionary_ids"
                )
            index = _encode_int(b, dictionary.index_type)
            dict_handle = b.table(
                [
                    (0, "<q", int(dict_id)),
                    (1, "offset", index),
                    (2, "<?", dictionary.ordered, False),
                ]
            )
        code, type_handle = _encode_type(b, typ)
        name = b.create_string(f.name)
        md = _encode_key_values(b, metadata)
        return b.table(
            [
                (0, "offset", name),
                (1, "<?", f.nullable, False),
                (2, "<B", code),
                (3, "offset", type_handle),
                (4, "offset", dict_handle),
                (5, "offset", children),
                (6, "offset", md),
            ]
        )

    @staticmethod
    def _extension_md(typ: t.ExtensionType) -> list[tuple[bytes, bytes]]:
        return [
            (EXTENSION_NAME_KEY, typ.extension_name.encode("utf-8")),
            (EXTENSION_METADATA_KEY, bytes(typ.serialized)),
        ]


def _encode_schema_table(b: Builder, sm: SchemaMessage) -> int:
    if sm.endianness not in ("little", "big"):
        raise ArrowInvalidArgument(
            f"expected endianness 'little' or 'big', found {sm.endianness!r}"
        )
    try:
        fields = _SchemaEncoder(b, sm.dictionary_ids).fields(sm.schema.fields, ())
    except RecursionError:
        raise ArrowInvalidArgument(
            "expected a schema shallow enough for Python's recursion limit, found deeper nesting"
        ) from None
    md = _encode_key_values(b, sm.schema.metadata)
    features = b.create_scalar_vector("q", list(sm.features)) if sm.features else 0
    return b.table(
        [
            (0, "<h", 0 if sm.endianness == "little" else 1, 0),
            (1, "offset", fields),
            (2, "offset", md),
            (3, "offset", features),
        ]
    )


def _encode_record_batch(b: Builder, rb: RecordBatch) -> int:
    nodes = b.create_struct_vector(_pairs(rb.nodes))
    buffers = b.create_struct_vector(_pairs(rb.buffers))
    comp = 0
    if rb.compression is not None:
        if rb.compression.codec not in _CODECS:
            raise ArrowInvalidArgument(
                f"expected a codec in {_CODECS}, found {rb.compression.codec!r}"
            )
        if rb.compression.method != "buffer":
            raise ArrowInvalidArgument(
                f"expected compression method 'buffer', found {rb.compression.method!r}"
            )
        comp = b.table([(0, "<b", _CODECS.index(rb.compression.codec), 0)])
    variadic = (
        b.create_scalar_vector("q", list(rb.variadic_buffer_counts))
        if len(rb.variadic_buffer_counts)
        else 0
    )
    return b.table(
        [
            (0, "<q", int(rb.length)),
            (1, "offset", nodes),
            (2, "offset", buffers),
            (3, "offset", comp),
            (4, "offset", variadic),
        ]
    )


def _encode_buffer(buf: Buffer | tuple[int, int]) -> bytes:
    return _QQ.pack(int(buf[0]), int(buf[1]))


def _encode_dims(b: Builder, shape: Sequence[int], names: Sequence[str | None]) -> int:
    names = list(names) + [None] * (len(shape) - len(names))
    handles = []
    for size, name in zip(shape, names):
        nh = b.create_string(name) if name is not None else 0
        handles.append(b.table([(0, "<q", int(size)), (1, "offset", nh)]))
    return b.create_offset_vector(handles)


def _encode_tensor(b: Builder, tensor: Tensor) -> int:
    code, th = _encode_type(b, tensor.type)
    shape = _encode_dims(b, tensor.shape, tensor.dim_names)
    strides = b.create_scalar_vector("q", list(tensor.strides)) if tensor.strides else 0
    return b.table(
        [
            (0, "<B", code),
            (1, "offset", th),
            (2, "offset", shape),
            (3, "offset", strides),
            (4, "struct", _encode_buffer((tensor.data_offset, tensor.data_length)), 8),
        ]
    )


def _encode_buffer_vector(b: Builder, bufs: Sequence[Buffer]) -> int:
    arr = np.array([(int(o), int(n)) for o, n in bufs], dtype="<i8").reshape(-1, 2)
    return b.create_struct_vector(arr)


def _encode_sparse_index(b: Builder, index: SparseIndex) -> tuple[int, int]:
    if isinstance(index, SparseTensorIndexCOO):
        it = _encode_int(b, index.indices_type)
        strides = (
            b.create_scalar_vector("q", list(index.indices_strides)) if index.indices_strides else 0
        )
        return 1, b.table(
            [
                (0, "offset", it),
                (1, "offset", strides),
                (2, "struct", _encode_buffer(index.indices_buffer), 8),
                (3, "<?", index.is_canonical, False),
            ]
        )
    if isinstance(index, SparseMatrixIndexCSX):
        pt = _encode_int(b, index.indptr_type)
        it = _encode_int(b, index.indices_type)
        return 2, b.table(
            [
                (0, "<h", 0 if index.compressed_axis == "row" else 1, 0),
                (1, "offset", pt),
                (2, "struct", _encode_buffer(index.indptr_buffer), 8),
                (3, "offset", it),
                (4, "struct", _encode_buffer(index.indices_buffer), 8),
            ]
        )
    if isinstance(index, SparseTensorIndexCSF):
        pt = _encode_int(b, index.indptr_type)
        pb = _encode_buffer_vector(b, index.indptr_buffers)
        it = _encode_int(b, index.indices_type)
        ib = _encode_buffer_vector(b, index.indices_buffers)
        ao = b.create_scalar_vector("i", list(index.axis_order))
        return 3, b.table(
            [
                (0, "offset", pt),
                (1, "offset", pb),
                (2, "offset", it),
                (3, "offset", ib),
                (4, "offset", ao),
            ]
        )
    raise ArrowInvalidArgument(f"expected a sparse tensor index, found {index!r}")


def _encode_sparse_tensor(b: Builder, st: SparseTensor) -> int:
    code, th = _encode_type(b, st.type)
    shape = _encode_dims(b, st.shape, st.dim_names)
    icode, ih = _encode_sparse_index(b, st.sparse_index)
    return b.table(
        [
            (0, "<B", code),
            (1, "offset", th),
            (2, "offset", shape),
            (3, "<q", int(st.non_zero_length)),
            (4, "<B", icode),
            (5, "offset", ih),
            (6, "struct", _encode_buffer(st.data), 8),
        ]
    )


def _encode_header(b: Builder, header: Header) -> tuple[int, int]:
    if header is None:
        return 0, 0
    if isinstance(header, RecordBatch):
        return _H_RECORD_BATCH, _encode_record_batch(b, header)
    if isinstance(header, SchemaMessage):
        return _H_SCHEMA, _encode_schema_table(b, header)
    if isinstance(header, DictionaryBatch):
        data = _encode_record_batch(b, header.data)
        return _H_DICTIONARY_BATCH, b.table(
            [(0, "<q", int(header.id)), (1, "offset", data), (2, "<?", header.is_delta, False)]
        )
    if isinstance(header, Tensor):
        return _H_TENSOR, _encode_tensor(b, header)
    if isinstance(header, SparseTensor):
        return _H_SPARSE_TENSOR, _encode_sparse_tensor(b, header)
    raise ArrowInvalidArgument(f"expected a message header object, found {header!r}")


def _check_write_version(version: int) -> None:
    if version not in _SUPPORTED_VERSIONS:
        raise ArrowInvalidArgument(f"expected metadata version V4 (3) or V5 (4), found {version}")


def _finish_message(
    b: Builder, version: int, header_code: int, header: int, body_length: int, custom: Any
) -> bytes:
    """Write the Message root table over an encoded header and finish the flatbuffer."""
    md = _encode_key_values(b, custom)
    root = b.table(
        [
            (0, "<h", version),
            (1, "<B", header_code, 0),
            (2, "offset", header),
            (3, "<q", int(body_length), 0),
            (4, "offset", md),
        ]
    )
    return b.finish(root)


def _field_position(buf: bytes, table: int, index: int) -> int:
    """Where field ``index`` of the table at ``table`` sits (0: absent), from its vtable."""
    (soffset,) = struct.unpack_from("<i", buf, table)
    vtable = table - soffset
    vt_size, _ = struct.unpack_from("<HH", buf, vtable)
    if 4 + 2 * index >= vt_size:
        return 0
    (pos,) = struct.unpack_from("<H", buf, vtable + 4 + 2 * index)
    return table + pos if pos else 0


def _follow(buf: bytes, pos: int) -> int:
    """The target of the uoffset at ``pos``."""
    (rel,) = struct.unpack_from("<I", buf, pos)
    return pos + rel


class RecordBatchTemplate:
    """The Message flatbuffer of a plain RecordBatch, prebuilt for a number of FieldNodes
    and Buffers.

    "Plain" means no compression, no variadic buffer counts, no custom metadata and a
    non-zero body length (the general builder leaves a zero bodyLength out, which changes
    the layout).  The general builder writes one such message once; its fixed structure
    is kept as bytes and each message fills in only bodyLength, length and the FieldNode
    and Buffer structs, with one ``struct.pack``.  The result is byte for byte what
    :func:`encode_message` builds through the general builder for the same message.

    ``prefix`` goes before the flatbuffer (the writer passes the framing prefix, which
    depends only on the metadata size).

    >>> tmpl = RecordBatchTemplate(V5, 1, 2)
    >>> meta = tmpl.encode(8, 1, [1, 0], [0, 0, 0, 8])
    >>> msg = decode_message(meta)
    >>> msg.body_length, msg.header.length, msg.header.buffers.tolist()
    (8, 1, [[0, 0], [0, 8]])
    """

    __slots__ = (
        "_c0", "_c1", "_c2", "_c3", "_pack", "num_buffers", "num_nodes", "size", "version"
    )  # fmt: skip

    def __init__(
        self, version: int, num_nodes: int, num_buffers: int, prefix: bytes = b""
    ) -> None:
        _check_write_version(version)
        if num_nodes < 0 or num_buffers < 0:
            raise ArrowInvalidArgument(
                f"expected non-negative FieldNode and Buffer counts, found {num_nodes} "
                f"and {num_buffers}"
            )
        self.version = version
        self.num_nodes = num_nodes
        self.num_buffers = num_buffers
        rb = RecordBatch(
            1, np.ones((num_nodes, 2), dtype="<i8"), np.ones((num_buffers, 2), dtype="<i8")
        )
        b = Builder()
        buf = _finish_message(b, version, _H_RECORD_BATCH, _encode_record_batch(b, rb), 1, None)
        self.size = len(buf)
        root = _follow(buf, 0)
        body_length_at = _field_position(buf, root, 3)
        rb_table = _follow(buf, _field_position(buf, root, 2))
        length_at = _field_position(buf, rb_table, 0)
        nodes_at = _follow(buf, _field_position(buf, rb_table, 1)) + 4
        buffers_at = _follow(buf, _field_position(buf, rb_table, 2)) + 4
        # the order in which the general builder places them (it writes back to front:
        # nodes first, so they end up last); the one pack below relies on it
        if not 0 < body_length_at < length_at < buffers_at < nodes_at:
            raise AssertionError("the RecordBatch template does not match the builder's layout")
        end_buffers = buffers_at + 16 * num_buffers
        self._c0 = prefix + buf[:body_length_at]
        self._c1 = buf[body_length_at + 8 : length_at]
        self._c2 = buf[length_at + 8 : buffers_at]
        self._c3 = buf[end_buffers:nodes_at]
        if buf[nodes_at + 16 * num_nodes :]:
            raise AssertionError("the RecordBatch template does not end with its FieldNodes")
        self._pack = struct.Struct(
            f"<{len(self._c0)}sq{len(self._c1)}sq{len(self._c2)}s{2 * num_buffers}q"
            f"{len(self._c3)}s{2 * num_nodes}q"
        ).pack

    def with_prefix(self, prefix: bytes) -> RecordBatchTemplate:
        """The same template with ``prefix`` written before the flatbuffer."""
        return RecordBatchTemplate(self.version, self.num_nodes, self.num_buffers, prefix)

    def encode(
        self, body_length: int, length: int, nodes: Sequence[int], buffers: Sequence[int]
    ) -> bytes:
        """The message for ``length`` rows: ``nodes`` flat ``[length, null_count, ...]``,
        ``buffers`` flat ``[offset, length, ...]`` (pre-order), ``body_length`` > 0."""
        return self._pack(
            self._c0, body_length, self._c1, length, self._c2, *buffers, self._c3, *nodes
        )


_TEMPLATES: dict[tuple[int, int, int], RecordBatchTemplate] = {}


def record_batch_template(version: int, num_nodes: int, num_buffers: int) -> RecordBatchTemplate:
    """The (cached) :class:`RecordBatchTemplate` for these counts."""
    key = (version, num_nodes, num_buffers)
    found = _TEMPLATES.get(key)
    if found is None:
        found = RecordBatchTemplate(version, num_nodes, num_buffers)
        if len(_TEMPLATES) < 1024:
            _TEMPLATES[key] = found
    return found


def encode_message(msg: Message) -> bytes:
    """Encode a Message as a flatbuffer (not framed, not padded beyond 8-byte alignment)."""
    _check_write_version(msg.version)
    header = msg.header
    body_length = int(msg.body_length)
    if (
        type(header) is RecordBatch
        and body_length > 0
        and header.compression is None
        and not len(header.variadic_buffer_counts)
        and not msg.custom_metadata
    ):
        nodes = _pairs(header.nodes)
        buffers = _pairs(header.buffers)
        tmpl = record_batch_template(msg.version, nodes.shape[0], buffers.shape[0])
        return tmpl.encode(
            body_length, int(header.length), nodes.ravel().tolist(), buffers.ravel().tolist()
        )
    return encode_message_general(msg)


def encode_message_general(msg: Message) -> bytes:
    """:func:`encode_message` through the general builder only (no template shortcut)."""
    _check_write_version(msg.version)
    b = Builder()
    code, header = _encode_header(b, msg.header)
    return _finish_message(b, msg.version, code, header, msg.body_length, msg.custom_metadata)


def encode_schema(schema_msg: SchemaMessage) -> bytes:
    """Encode a bare Schema table as a flatbuffer root."""
    b = Builder()
    return b.finish(_encode_schema_table(b, schema_msg))


def _blocks_bytes(blocks: Sequence[Block]) -> np.ndarray:
    arr = np.zeros(len(blocks), dtype=_BLOCK_DTYPE)
    if len(blocks):
        arr["offset"] = [blk.offset for blk in blocks]
        arr["meta_data_length"] = [blk.meta_data_length for blk in blocks]
        arr["body_length"] = [blk.body_length for blk in blocks]
    return arr


def encode_footer(footer: Footer) -> bytes:
    """Encode an IPC file Footer as a flatbuffer."""
    _check_write_version(footer.version)
    b = Builder()
    schema = _encode_schema_table(b, footer.schema)
    dicts = b.create_struct_vector(_blocks_bytes(footer.dictionaries))
    batches = b.create_struct_vector(_blocks_bytes(footer.record_batches))
    md = _encode_key_values(b, footer.custom_metadata)
    root = b.table(
        [
            (0, "<h", footer.version),
            (1, "offset", schema),
            (2, "offset", dicts),
            (3, "offset", batches),
            (4, "offset", md),
        ]
    )
    return b.finish(root)


__all__ = [
    "V4",
    "V5",
    "Block",
    "BodyCompression",
    "Buffer",
    "DictionaryBatch",
    "Footer",
    "Message",
    "MetadataLimits",
    "RecordBatch",
    "RecordBatchShape",
    "RecordBatchTemplate",
    "SchemaMessage",
    "SparseMatrixIndexCSX",
    "SparseTensor",
    "SparseTensorIndexCOO",
    "SparseTensorIndexCSF",
    "Tensor",
    "decode_footer",
    "decode_message",
    "decode_schema",
    "encode_footer",
    "encode_message",
    "encode_message_general",
    "encode_schema",
    "record_batch_shape",
    "record_batch_template",
    "version_name",
]
