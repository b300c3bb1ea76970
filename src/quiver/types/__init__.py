"""Arrow logical data types, fields and schemas (Columnar spec, "Data Types"; Schema.fbs).

Types are immutable values: hashable and equal by value.  They are built with the same
factory names and arguments as pyarrow's type API and print the way pyarrow prints them:

>>> import quiver as qv
>>> str(qv.list_(qv.int32()))
'list<item: int32>'
>>> qv.timestamp("us", tz="UTC") == qv.timestamp("us", "UTC")
True
>>> qv.schema([qv.field("a", qv.int64(), nullable=False)]).field("a").type
DataType(int64)

Key/value metadata keeps its order and duplicate keys (:class:`KeyValueMetadata`).
Physical layouts (which buffers each type has) live in :mod:`quiver.layout`, not here.

This package holds the factories (pyarrow's names) and the predicates, and re-exports the
rest from its modules, by job: :mod:`~quiver.types.metadata` (key/value metadata),
:mod:`~quiver.types.datatypes` (the DataType classes and their C data format),
:mod:`~quiver.types.schema` (fields and schemas); this package also declares what the types
register in :mod:`quiver.registry` (their rows and the C format-string table).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .. import registry
from .._lazy import adopt_classes
from ..errors import ArrowInvalidArgument, ArrowTypeError
from .checks import check_tz, extension_storage_problem
from .datatypes import (
    C_EXTENSION_METADATA_KEY,
    C_EXTENSION_NAME_KEY,
    C_FLAG_DICTIONARY_ORDERED,
    C_FLAG_MAP_KEYS_SORTED,
    C_FLAG_NULLABLE,
    INTERVAL_UNITS,
    TIME_UNITS,
    BinaryType,
    BinaryViewType,
    BoolType,
    DataType,
    DateType,
    DecimalType,
    DictionaryType,
    DurationType,
    ExtensionType,
    FixedSizeBinaryType,
    FixedSizeListType,
    FloatingPointType,
    IntegerType,
    IntervalType,
    LargeListType,
    LargeListViewType,
    ListType,
    ListViewType,
    MapType,
    NullType,
    RunEndEncodedType,
    StringType,
    StringViewType,
    StructType,
    TimestampType,
    TimeType,
    UnionType,
    as_type,
    c_field_metadata,
    c_format,
    c_schema_node,
    storage_of,
)
from .metadata import KeyValueMetadata, as_metadata
from .schema import Field, Schema

# --------------------------------------------------------------------------------------
# factories (pyarrow's names and arguments)

_NULL = NullType()
_BOOL = BoolType()


def null() -> DataType:
    """The null type."""
    return _NULL


def bool_() -> DataType:
    """Booleans."""
    return _BOOL


def int8() -> DataType:
    """Signed 8-bit integers."""
    return IntegerType(8, True)


def int16() -> DataType:
    """Signed 16-bit integers."""
    return IntegerType(16, True)


def int32() -> DataType:
    """Signed 32-bit integers."""
    return IntegerType(32, True)


def int64() -> DataType:
    """Signed 64-bit integers."""
    return IntegerType(64, True)


def uint8() -> DataType:
    """Unsigned 8-bit integers."""
    return IntegerType(8, False)


def uint16() -> DataType:
    """Unsigned 16-bit integers."""
    return IntegerType(16, False)


def uint32() -> DataType:
    """Unsigned 32-bit integers."""
    return IntegerType(32, False)


def uint64() -> DataType:
    """Unsigned 64-bit integers."""
    return IntegerType(64, False)


def float16() -> DataType:
    """Half-precision floats."""
    return FloatingPointType(16)


def float32() -> DataType:
    """Single-precision floats."""
    return FloatingPointType(32)


def float64() -> DataType:
    """Double-precision floats."""
    return FloatingPointType(64)


def decimal32(precision: int, scale: int = 0) -> DataType:
    """32-bit decimals (precision 1..9)."""
    return DecimalType(32, precision, scale)


def decimal64(precision: int, scale: int = 0) -> DataType:
    """64-bit decimals (precision 1..18)."""
    return DecimalType(64, precision, scale)


def decimal128(precision: int, scale: int = 0) -> DataType:
    """128-bit decimals (precision 1..38)."""
    return DecimalType(128, precision, scale)


def decimal256(precision: int, scale: int = 0) -> DataType:
    """256-bit decimals (precision 1..76)."""
    return DecimalType(256, precision, scale)


def date32() -> DataType:
    """Days since the UNIX epoch, 32-bit."""
    return DateType("day")


def date64() -> DataType:
    """Milliseconds since the UNIX epoch, 64-bit."""
    return DateType("ms")


def time32(unit: str) -> DataType:
    """Time of day in seconds or milliseconds."""
    return TimeType(32, unit)


def time64(unit: str) -> DataType:
    """Time of day in microseconds or nanoseconds."""
    return TimeType(64, unit)


def timestamp(unit: str, tz: str | None = None) -> DataType:
    """Timestamps in ``unit`` with an optional time zone: an IANA name or a ``[+-]HH:MM``
    offset (Schema.fbs); anything else is refused."""
    check_tz(tz, "tz")
    return TimestampType(unit, tz)


def duration(unit: str) -> DataType:
    """Durations in ``unit``."""
    return DurationType(unit)


def month_day_nano_interval() -> DataType:
    """Intervals of (months, days, nanoseconds)."""
    return IntervalType("month_day_nano")


def month_interval() -> DataType:
    """Intervals of whole months (Arrow's YEAR_MONTH)."""
    return IntervalType("year_month")


def day_time_interval() -> DataType:
    """Intervals of (days, milliseconds)."""
    return IntervalType("day_time")


def binary(length: int = -1) -> DataType:
    """Variable-size bytes, or fixed-size bytes when ``length`` >= 0 (pyarrow's rule)."""
    if length == -1:
        return BinaryType(False)
    return FixedSizeBinaryType(length)


def string() -> DataType:
    """UTF-8 strings."""
    return StringType(False)


utf8 = string


def large_binary() -> DataType:
    """Bytes with 64-bit offsets."""
    return BinaryType(True)


def large_string() -> DataType:
    """UTF-8 strings with 64-bit offsets."""
    return StringType(True)


large_utf8 = large_string


def binary_view() -> DataType:
    """Bytes stored as 16-byte views."""
    return BinaryViewType()


def string_view() -> DataType:
    """UTF-8 strings stored as 16-byte views."""
    return StringViewType()


def fixed_size_binary(byte_width: int) -> DataType:
    """Bytes of exactly ``byte_width`` each."""
    return FixedSizeBinaryType(byte_width)


def _as_field(value: DataType | Field, default_name: str) -> Field:
    if isinstance(value, Field):
        return value
    found = as_type(value)
    if found is not None:
        return Field(default_name, found, True)
    raise ArrowTypeError(f"expected a DataType or Field, found {value!r}")


def list_(value_type: DataType | Field, list_size: int = -1) -> DataType:
    """Lists of ``value_type``; fixed-size lists when ``list_size`` >= 0."""
    f = _as_field(value_type, "item")
    if list_size == -1:
        return ListType(f)
    return FixedSizeListType(f, list_size)


def large_list(value_type: DataType | Field) -> DataType:
    """Lists with 64-bit offsets."""
    return LargeListType(_as_field(value_type, "item"))


def list_view(value_type: DataType | Field) -> DataType:
    """List views with 32-bit offsets and sizes."""
    return ListViewType(_as_field(value_type, "item"))


def large_list_view(value_type: DataType | Field) -> DataType:
    """List views with 64-bit offsets and sizes."""
    return LargeListViewType(_as_field(value_type, "item"))


def fixed_size_list(value_type: DataType | Field, list_size: int) -> DataType:
    """Lists of exactly ``list_size`` values."""
    return FixedSizeListType(_as_field(value_type, "item"), list_size)


def _fields_from(fields: Any) -> tuple[Field, ...]:
    if isinstance(fields, Mapping):
        return tuple(Field(str(k), v) for k, v in fields.items())
    out = []
    for f in fields:
        if isinstance(f, Field):
            out.append(f)
        elif isinstance(f, tuple) and len(f) == 2:
            out.append(Field(f[0], f[1]))
        else:
            raise ArrowTypeError(f"expected a Field or (name, type) pair, found {f!r}")
    return tuple(out)


def struct(fields: Iterable[Field | tuple[str, DataType]] | Mapping[str, DataType]) -> DataType:
    """Structs of the given fields (Field objects, (name, type) pairs, or a mapping)."""
    return StructType(_fields_from(fields))


def map_(
    key_type: DataType | Field, item_type: DataType | Field, keys_sorted: bool = False
) -> DataType:
    """Maps from ``key_type`` to ``item_type``; keys are never null."""
    kf = _as_field(key_type, "key").with_nullable(False)
    vf = _as_field(item_type, "value")
    entries = Field("entries", StructType((kf, vf)), nullable=False)
    return MapType(entries, keys_sorted)


def _union(mode: str, child_fields: Any, type_codes: Sequence[int] | None) -> DataType:
    fields = _fields_from(child_fields)
    codes = tuple(range(len(fields))) if type_codes is None else tuple(type_codes)
    return UnionType(mode, fields, codes)


def sparse_union(child_fields: Any, type_codes: Sequence[int] | None = None) -> DataType:
    """Sparse unions: every child has the union's length."""
    return _union("sparse", child_fields, type_codes)


def dense_union(child_fields: Any, type_codes: Sequence[int] | None = None) -> DataType:
    """Dense unions: an offsets buffer selects the slot in each child."""
    return _union("dense", child_fields, type_codes)


def union(child_fields: Any, mode: str, type_codes: Sequence[int] | None = None) -> DataType:
    """A union of the given ``mode`` ('sparse' or 'dense')."""
    return _union(mode, child_fields, type_codes)


def dictionary(index_type: DataType, value_type: DataType, ordered: bool = False) -> DataType:
    """Dictionary-encoded values: integer indices into a dictionary."""
    return DictionaryType(index_type, value_type, bool(ordered))


def run_end_encoded(run_end_type: DataType, value_type: DataType) -> DataType:
    """Run-end encoded values with run ends of ``run_end_type``."""
    return RunEndEncodedType(
        Field("run_ends", run_end_type, nullable=False), Field("values", value_type, True)
    )


def extension(name: str, storage_type: DataType, serialized: bytes | str = b"") -> DataType:
    """An extension type: ``name`` and serialized metadata over ``storage_type``."""
    if isinstance(serialized, str):
        serialized = serialized.encode("utf-8")
    ext = ExtensionType(name, storage_type, bytes(serialized))
    problem = extension_storage_problem(ext)
    if problem is not None:
        raise ArrowInvalidArgument(f"storage_type: {problem}")
    return ext


def uuid() -> DataType:
    """The canonical ``arrow.uuid`` extension over fixed_size_binary(16)."""
    return ExtensionType("arrow.uuid", FixedSizeBinaryType(16), b"")


def field(
    name: str, type: DataType, nullable: bool = True, metadata: Any = None
) -> Field:
    """A named field; ``metadata`` is a mapping or (key, value) pairs."""
    return Field(name, type, nullable, as_metadata(metadata))


def schema(fields: Any, metadata: Any = None) -> Schema:
    """A schema from Field objects, (name, type) pairs or a mapping.  (``quiver.schema``,
    :func:`quiver.constructors.schema`, also takes other libraries' schemas.)"""
    if isinstance(fields, Schema):
        return fields if metadata is None else fields.with_metadata(metadata)
    return Schema(_fields_from(fields), as_metadata(metadata))


# --------------------------------------------------------------------------------------
# predicates


def is_nested(t: DataType) -> bool:
    """True for types with child fields."""
    return bool(t.fields)


def is_integer(t: DataType) -> bool:
    """True for signed and unsigned integer types."""
    return isinstance(t, IntegerType)


def is_binary_like(t: DataType) -> bool:
    """True for binary and string types with offsets (not views, not fixed size)."""
    return isinstance(t, (BinaryType, StringType))


def is_fixed_width(t: DataType) -> bool:
    """True for types stored as one fixed-width value buffer (booleans included)."""
    return isinstance(
        t,
        (
            BoolType,
            IntegerType,
            FloatingPointType,
            DecimalType,
            DateType,
            TimeType,
            TimestampType,
            DurationType,
            IntervalType,
            FixedSizeBinaryType,
        ),
    )


# --------------------------------------------------------------------------------------
# the registry rows (quiver.registry): one per concrete DataType class, with what this
# layer knows of it (Schema.fbs Type union codes and names, integration JSON names)

_AS_ANOTHER = registry.TRAVELS_AS_ANOTHER
_NOT_FIXED_WIDTH = registry.ONLY_FIXED_WIDTH
for _row in (
    registry.TypeRow(NullType, ((1, "Null"),), ("null",), _NOT_FIXED_WIDTH),
    registry.TypeRow(BoolType, ((6, "Bool"),), ("bool",), _NOT_FIXED_WIDTH),
    registry.TypeRow(IntegerType, ((2, "Int"),), ("int",)),
    registry.TypeRow(FloatingPointType, ((3, "FloatingPoint"),), ("floatingpoint",)),
    registry.TypeRow(DecimalType, ((7, "Decimal"),), ("decimal",)),
    registry.TypeRow(DateType, ((8, "Date"),), ("date",)),
    registry.TypeRow(TimeType, ((9, "Time"),), ("time",)),
    registry.TypeRow(TimestampType, ((10, "Timestamp"),), ("timestamp",)),
    registry.TypeRow(DurationType, ((18, "Duration"),), ("duration",)),
    registry.TypeRow(IntervalType, ((11, "Interval"),), ("interval",)),
    registry.TypeRow(BinaryType, ((4, "Binary"), (19, "LargeBinary")),
                     ("binary", "largebinary"), _NOT_FIXED_WIDTH),
    registry.TypeRow(StringType, ((5, "Utf8"), (20, "LargeUtf8")), ("utf8", "largeutf8"),
                     _NOT_FIXED_WIDTH),
    registry.TypeRow(BinaryViewType, ((23, "BinaryView"),), ("binaryview",), _NOT_FIXED_WIDTH),
    registry.TypeRow(StringViewType, ((24, "Utf8View"),), ("utf8view",), _NOT_FIXED_WIDTH),
    registry.TypeRow(FixedSizeBinaryType, ((15, "FixedSizeBinary"),), ("fixedsizebinary",),
                     _NOT_FIXED_WIDTH),
    registry.TypeRow(ListType, ((12, "List"),), ("list",), _NOT_FIXED_WIDTH),
    registry.TypeRow(LargeListType, ((21, "LargeList"),), ("largelist",), _NOT_FIXED_WIDTH),
    registry.TypeRow(ListViewType, ((25, "ListView"),), ("listview",), _NOT_FIXED_WIDTH),
    registry.TypeRow(LargeListViewType, ((26, "LargeListView"),), ("largelistview",),
                     _NOT_FIXED_WIDTH),
    registry.TypeRow(FixedSizeListType, ((16, "FixedSizeList"),), ("fixedsizelist",),
                     _NOT_FIXED_WIDTH),
    registry.TypeRow(StructType, ((13, "Struct_"),), ("struct",), _NOT_FIXED_WIDTH),
    registry.TypeRow(MapType, ((17, "Map"),), ("map",), _NOT_FIXED_WIDTH),
    registry.TypeRow(UnionType, ((14, "Union"),), ("union",), _NOT_FIXED_WIDTH),
    registry.TypeRow(RunEndEncodedType, ((22, "RunEndEncoded"),), ("runendencoded",),
                     _NOT_FIXED_WIDTH),
    # a dictionary travels as its index type (and a dictionary batch)
    # (casts decode it first; pandas makes a Categorical of it)
    registry.TypeRow(DictionaryType, without=_AS_ANOTHER | {"cast_family"}),
    # an extension travels as its storage type, whose layout, dtypes and format it uses,
    # and casts and converts to pandas as it
    registry.TypeRow(ExtensionType, without=_AS_ANOTHER | registry.CONVERTS_AS_ANOTHER | {
        "layout", "numpy_storage", "numpy_logical", "c_format"}),
):
    registry.add_row(_row)


# --------------------------------------------------------------------------------------
# C data format strings (CDataInterface.rst, "Data type description -- format strings"):
# the one table, read both ways (quiver.cdata.schema parses with it)

C_SIMPLE_FORMATS: dict[bytes, DataType] = {
    b"n": null(),
    b"b": bool_(),
    b"c": int8(),
    b"C": uint8(),
    b"s": int16(),
    b"S": uint16(),
    b"i": int32(),
    b"I": uint32(),
    b"l": int64(),
    b"L": uint64(),
    b"e": float16(),
    b"f": float32(),
    b"g": float64(),
    b"z": binary(),
    b"Z": large_binary(),
    b"vz": binary_view(),
    b"u": string(),
    b"U": large_string(),
    b"vu": string_view(),
    b"tdD": date32(),
    b"tdm": date64(),
    b"tts": time32("s"),
    b"ttm": time32("ms"),
    b"ttu": time64("us"),
    b"ttn": time64("ns"),
    b"tDs": duration("s"),
    b"tDm": duration("ms"),
    b"tDu": duration("us"),
    b"tDn": duration("ns"),
    b"tiM": month_interval(),
    b"tiD": day_time_interval(),
    b"tin": month_day_nano_interval(),
}
_C_FORMAT_OF_SIMPLE: dict[DataType, bytes] = {v: k for k, v in C_SIMPLE_FORMATS.items()}
C_UNIT_CODES = {"s": b"s", "ms": b"m", "us": b"u", "ns": b"n"}
# the nested formats without parameters, by class
_C_NESTED_FORMATS: dict[type, bytes] = {
    ListType: b"+l",
    LargeListType: b"+L",
    ListViewType: b"+vl",
    LargeListViewType: b"+vL",
    StructType: b"+s",
    MapType: b"+m",
    RunEndEncodedType: b"+r",
}
C_NESTED_CLASSES: dict[bytes, type] = {v: k for k, v in _C_NESTED_FORMATS.items()}


# the registry's "c_format" piece: DataType class -> (dtype -> format bytes, or None for
# a value the tables above lack)
registry.register(
    "c_format", _C_FORMAT_OF_SIMPLE.get, NullType, BoolType, IntegerType, FloatingPointType,
    DateType, TimeType, DurationType, IntervalType, BinaryType, StringType, BinaryViewType,
    StringViewType,
)
for _cls, _fmt in _C_NESTED_FORMATS.items():
    registry.register("c_format", lambda dtype, fmt=_fmt: fmt, _cls)


@registry.implements("c_format", DictionaryType)
def _c_dictionary(dtype: DictionaryType) -> bytes:
    return _C_FORMAT_OF_SIMPLE[dtype.index_type]


@registry.implements("c_format", DecimalType)
def _c_decimal(dtype: DecimalType) -> bytes:
    tail = b"" if dtype.width == 128 else b",%d" % dtype.width
    return b"d:%d,%d" % (dtype.precision, dtype.scale) + tail


@registry.implements("c_format", FixedSizeBinaryType)
def _c_fixed_binary(dtype: FixedSizeBinaryType) -> bytes:
    return b"w:%d" % dtype.width


@registry.implements("c_format", TimestampType)
def _c_timestamp(dtype: TimestampType) -> bytes:
    tz = (dtype.tz or "").encode("utf-8")
    return b"ts" + C_UNIT_CODES[dtype.unit] + b":" + tz


@registry.implements("c_format", FixedSizeListType)
def _c_fixed_list(dtype: FixedSizeListType) -> bytes:
    return b"+w:%d" % dtype.list_size


@registry.implements("c_format", UnionType)
def _c_union(dtype: UnionType) -> bytes:
    mode = b"+ud:" if dtype.mode == "dense" else b"+us:"
    return mode + b",".join(b"%d" % c for c in dtype.type_codes)


adopt_classes(__name__, globals())  # pickles and reprs name the package
