"""What quiver.types registers in quiver.registry: one row per concrete DataType class
(Schema.fbs Type union codes and names, integration JSON names) and the ``c_format``
piece, from the one table of C data format strings."""

from __future__ import annotations

from .. import registry
from .datatypes import (
    _BOOL,
    _NULL,
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
    registry.TypeRow(DictionaryType, without=_AS_ANOTHER),
    # an extension travels as its storage type, whose layout, dtypes and format it uses
    registry.TypeRow(ExtensionType, without=_AS_ANOTHER | {
        "layout", "numpy_storage", "numpy_logical", "c_format"}),
):
    registry.add_row(_row)


# --------------------------------------------------------------------------------------
# C data format strings (CDataInterface.rst, "Data type description -- format strings"):
# the one table, read both ways (quiver.cdata.schema parses with it)

C_SIMPLE_FORMATS: dict[bytes, DataType] = {
    b"n": _NULL,
    b"b": _BOOL,
    b"c": IntegerType(8),
    b"C": IntegerType(8, False),
    b"s": IntegerType(16),
    b"S": IntegerType(16, False),
    b"i": IntegerType(32),
    b"I": IntegerType(32, False),
    b"l": IntegerType(64),
    b"L": IntegerType(64, False),
    b"e": FloatingPointType(16),
    b"f": FloatingPointType(32),
    b"g": FloatingPointType(64),
    b"z": BinaryType(),
    b"Z": BinaryType(True),
    b"vz": BinaryViewType(),
    b"u": StringType(),
    b"U": StringType(True),
    b"vu": StringViewType(),
    b"tdD": DateType("day"),
    b"tdm": DateType("ms"),
    b"tts": TimeType(32, "s"),
    b"ttm": TimeType(32, "ms"),
    b"ttu": TimeType(64, "us"),
    b"ttn": TimeType(64, "ns"),
    b"tDs": DurationType("s"),
    b"tDm": DurationType("ms"),
    b"tDu": DurationType("us"),
    b"tDn": DurationType("ns"),
    b"tiM": IntervalType("year_month"),
    b"tiD": IntervalType("day_time"),
    b"tin": IntervalType("month_day_nano"),
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
