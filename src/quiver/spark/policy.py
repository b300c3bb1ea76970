"""The type policy: which Arrow type Spark reads for each Arrow type a file may hold.

Spark's Python data sources hand their batches to the JVM only when the first batch's
schema *equals* ``to_arrow_schema(spark_schema, timezone="UTC")``: ``string`` (never large
or view strings), ``timestamp[us, tz=UTC]`` for TIMESTAMP, ``timestamp[us]`` for
TIMESTAMP_NTZ, ``time64[ns]`` for TIME, ``duration[us]`` for DayTimeInterval, lists whose
child is named ``element``, maps of ``key``/``value``.  Nothing is cast on the way.  This
module says, as one pure function per direction, what each Arrow type becomes:

- :func:`spark_arrow_type` — the Arrow type Spark accepts for an Arrow type (a quiver
  DataType to a quiver DataType); :mod:`quiver.spark.convert` turns arrays into it.
- :func:`to_spark_type` — the Spark SQL type of such an Arrow type.
- :func:`from_spark_type` — the Arrow type quiver writes for a Spark SQL type (used for
  user schemas).

Like Spark's own file sources, every field Spark sees is nullable (map keys excepted):
a file that declares a field non-nullable still reads, and a schema merged from files that
disagree on nullability stays valid.

>>> from quiver import types as t
>>> str(spark_arrow_type(t.uint32()))
'int64'
>>> str(spark_arrow_type(t.timestamp("ns", "Europe/Paris")))
'timestamp[us, tz=UTC]'
>>> to_spark_type(spark_arrow_type(t.large_list(t.string_view()))).simpleString()
'array<string>'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import registry
from .. import types as t
from ..errors import NotSupported

# Spark's decimals hold at most 38 digits (DecimalType.MAX_PRECISION)
MAX_DECIMAL_PRECISION = 38


@dataclass(frozen=True, slots=True)
class ReadPolicy:
    """What the source does with values Spark cannot hold.

    ``wide_decimals``: ``"error"`` (default) or ``"string"`` for decimal256 columns of more
    than 38 digits.  ``invalid_values``: ``"error"`` (default) or ``"null"`` for values
    outside what Spark can represent (a time of day of 24:00 or later, a timestamp or
    date outside years 1-9999, a duration that overflows microseconds).
    """

    wide_decimals: str = "error"
    invalid_values: str = "error"

    def __post_init__(self) -> None:
        if self.wide_decimals not in ("error", "string"):
            raise NotSupported(
                f"expected wideDecimals=error or string, found {self.wide_decimals!r}"
            )
        if self.invalid_values not in ("error", "null"):
            raise NotSupported(
                f"expected invalidValues=error or null, found {self.invalid_values!r}"
            )


DEFAULT_POLICY = ReadPolicy()

_INTERVAL_FIELDS = {
    "year_month": (("months", t.int32()),),
    "day_time": (("days", t.int32()), ("milliseconds", t.int32())),
    "month_day_nano": (("months", t.int32()), ("days", t.int32()), ("nanoseconds", t.int64())),
}

UNION_TYPE_CODE = "type_code"


def _nullable(name: str, dtype: t.DataType, policy: ReadPolicy) -> t.Field:
    return t.field(name, spark_arrow_type(dtype, policy), nullable=True)


def _list_of(value: t.DataType, policy: ReadPolicy) -> t.DataType:
    return t.list_(_nullable("element", value, policy))


def spark_arrow_type(dtype: t.DataType, policy: ReadPolicy = DEFAULT_POLICY) -> t.DataType:
    """The Arrow type Spark reads for ``dtype`` (docs/spark.md's type table, as code: one
    function per type class, the registry's ``spark_arrow`` piece).

    Raises :class:`~quiver.errors.NotSupported` for a type Spark cannot hold under the
    policy (a decimal256 of more than 38 digits unless ``wide_decimals="string"``).
    """
    rule = registry.table("spark_arrow").get(type(dtype))
    if rule is None:
        raise NotSupported(f"expected a type Spark can read, found {dtype}")
    return rule(dtype, policy)


@registry.implements("spark_arrow", t.ExtensionType)
def _extension(dtype: t.ExtensionType, policy: ReadPolicy) -> t.DataType:
    return spark_arrow_type(dtype.storage_type, policy)


@registry.implements("spark_arrow", t.NullType, t.BoolType)
def _itself(dtype: t.DataType, policy: ReadPolicy) -> t.DataType:
    return dtype


@registry.implements("spark_arrow", t.IntegerType)
def _integer(dtype: t.IntegerType, policy: ReadPolicy) -> t.DataType:
    if dtype.signed:
        return dtype
    if dtype.width == 64:
        return t.decimal128(20, 0)
    return t.int64() if dtype.width == 32 else t.int32() if dtype.width == 16 else t.int16()


@registry.implements("spark_arrow", t.FloatingPointType)
def _float(dtype: t.FloatingPointType, policy: ReadPolicy) -> t.DataType:
    return t.float32() if dtype.width == 16 else dtype


@registry.implements("spark_arrow", t.DecimalType)
def _decimal(dtype: t.DecimalType, policy: ReadPolicy) -> t.DataType:
    if (dtype.scale < 0 or dtype.scale > dtype.precision) and policy.wide_decimals != "string":
        raise NotSupported(
            f"expected a decimal scale from 0 to its precision for Spark, found {dtype}; "
            "read it as a string with .option('wideDecimals', 'string')"
        )
    if dtype.scale < 0 or dtype.scale > dtype.precision:
        return t.string()
    if dtype.precision <= MAX_DECIMAL_PRECISION:
        return t.decimal128(dtype.precision, dtype.scale)
    if policy.wide_decimals == "string":
        return t.string()
    raise NotSupported(
        f"expected a decimal of at most {MAX_DECIMAL_PRECISION} digits for Spark, found "
        f"{dtype}; read it as a string with .option('wideDecimals', 'string')"
    )


def _constant(result: t.DataType) -> Callable[[t.DataType, ReadPolicy], t.DataType]:
    """The rule of a class whose every type Spark reads as ``result``."""

    def rule(dtype: t.DataType, policy: ReadPolicy) -> t.DataType:
        return result

    return rule


for _result, _classes in (
    (t.date32(), (t.DateType,)),
    (t.time64("ns"), (t.TimeType,)),
    (t.duration("us"), (t.DurationType,)),
    (t.binary(), (t.BinaryType, t.BinaryViewType, t.FixedSizeBinaryType)),
    (t.string(), (t.StringType, t.StringViewType)),
):
    registry.register("spark_arrow", _constant(_result), *_classes)


@registry.implements("spark_arrow", t.TimestampType)
def _timestamp(dtype: t.TimestampType, policy: ReadPolicy) -> t.DataType:
    return t.timestamp("us", "UTC" if dtype.tz else None)


@registry.implements("spark_arrow", t.IntervalType)
def _interval(dtype: t.IntervalType, policy: ReadPolicy) -> t.DataType:
    return t.struct([t.field(n, ft, nullable=True) for n, ft in _INTERVAL_FIELDS[dtype.unit]])


@registry.implements("spark_arrow", t.ListType, t.LargeListType, t.ListViewType,
                     t.LargeListViewType, t.FixedSizeListType)
def _list(dtype: t.DataType, policy: ReadPolicy) -> t.DataType:
    return _list_of(dtype.value_field.type, policy)  # type: ignore[attr-defined]


@registry.implements("spark_arrow", t.MapType)
def _map(dtype: t.MapType, policy: ReadPolicy) -> t.DataType:
    key, value = dtype.entries_field.type.fields
    return t.map_(
        t.field("key", spark_arrow_type(key.type, policy), nullable=False),
        _nullable("value", value.type, policy),
    )


@registry.implements("spark_arrow", t.StructType)
def _struct(dtype: t.StructType, policy: ReadPolicy) -> t.DataType:
    names = [f.name for f in dtype.fields]
    if len(set(names)) != len(names):
        raise NotSupported(
            f"expected distinct field names in a struct for Spark, found duplicate field "
            f"names {names} in {dtype}"
        )
    return t.struct([_nullable(f.name, f.type, policy) for f in dtype.fields])


@registry.implements("spark_arrow", t.UnionType)
def _union(dtype: t.UnionType, policy: ReadPolicy) -> t.DataType:
    return t.struct(
        [t.field(UNION_TYPE_CODE, t.int8(), nullable=True)]
        + [_nullable(f.name, f.type, policy) for f in dtype.fields]
    )


@registry.implements("spark_arrow", t.DictionaryType, t.RunEndEncodedType)
def _encoded(dtype: t.DataType, policy: ReadPolicy) -> t.DataType:
    return spark_arrow_type(dtype.value_type, policy)  # type: ignore[attr-defined]


def spark_arrow_schema(schema: t.Schema, policy: ReadPolicy = DEFAULT_POLICY) -> t.Schema:
    """The schema of the batches the source yields for files of ``schema``; duplicate
    column names are refused (Spark's Arrow reader fails on them deep in the JVM)."""
    names = [f.name for f in schema]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise NotSupported(
            f"expected distinct column names for Spark, found duplicate field names {twice}"
        )
    return t.schema([_nullable(f.name, f.type, policy) for f in schema])


def to_spark_type(dtype: t.DataType) -> Any:
    """The Spark SQL type of a Spark-compatible Arrow type (see :func:`spark_arrow_type`),
    by the registry's ``spark_sql`` piece of its class."""
    from pyspark.sql import types as st

    rule = registry.table("spark_sql").get(type(dtype))
    found = None if rule is None else rule(dtype, st)
    if found is None:
        raise NotSupported(f"expected a Spark-compatible Arrow type, found {dtype}")
    return found


# the registry's spark_sql piece: ``(dtype, pyspark.sql.types) -> Spark type``, or None
# for a type of the class that is not one spark_arrow_type gives


@registry.implements("spark_sql", t.NullType)
def _null_sql(dtype: t.DataType, st: Any) -> Any:
    return st.NullType()


@registry.implements("spark_sql", t.BoolType)
def _bool_sql(dtype: t.DataType, st: Any) -> Any:
    return st.BooleanType()


@registry.implements("spark_sql", t.IntegerType)
def _integer_sql(dtype: t.IntegerType, st: Any) -> Any:
    if not dtype.signed:
        return None
    return {8: st.ByteType, 16: st.ShortType, 32: st.IntegerType, 64: st.LongType}[dtype.width]()


@registry.implements("spark_sql", t.FloatingPointType)
def _float_sql(dtype: t.FloatingPointType, st: Any) -> Any:
    return {32: st.FloatType, 64: st.DoubleType}.get(dtype.width, lambda: None)()


@registry.implements("spark_sql", t.DecimalType)
def _decimal_sql(dtype: t.DecimalType, st: Any) -> Any:
    return st.DecimalType(dtype.precision, dtype.scale) if dtype.width == 128 else None


@registry.implements("spark_sql", t.StringType)
def _string_sql(dtype: t.StringType, st: Any) -> Any:
    return None if dtype.large else st.StringType()


@registry.implements("spark_sql", t.BinaryType)
def _binary_sql(dtype: t.BinaryType, st: Any) -> Any:
    return None if dtype.large else st.BinaryType()


@registry.implements("spark_sql", t.DateType)
def _date_sql(dtype: t.DateType, st: Any) -> Any:
    return st.DateType() if dtype.unit == "day" else None


@registry.implements("spark_sql", t.TimestampType)
def _timestamp_sql(dtype: t.TimestampType, st: Any) -> Any:
    if dtype.unit != "us":
        return None
    return st.TimestampType() if dtype.tz else st.TimestampNTZType()


@registry.implements("spark_sql", t.TimeType)
def _time_sql(dtype: t.TimeType, st: Any) -> Any:
    return st.TimeType(6) if dtype.unit == "ns" else None


@registry.implements("spark_sql", t.DurationType)
def _duration_sql(dtype: t.DurationType, st: Any) -> Any:
    return st.DayTimeIntervalType() if dtype.unit == "us" else None


@registry.implements("spark_sql", t.ListType)
def _list_sql(dtype: t.ListType, st: Any) -> Any:
    return st.ArrayType(to_spark_type(dtype.value_field.type), True)


@registry.implements("spark_sql", t.MapType)
def _map_sql(dtype: t.MapType, st: Any) -> Any:
    key, value = dtype.entries_field.type.fields
    return st.MapType(to_spark_type(key.type), to_spark_type(value.type), True)


@registry.implements("spark_sql", t.StructType)
def _struct_sql(dtype: t.StructType, st: Any) -> Any:
    return st.StructType(
        [st.StructField(f.name, to_spark_type(f.type), True) for f in dtype.fields]
    )


@registry.implements("spark_sql", t.IntervalType, t.BinaryViewType, t.StringViewType,
                     t.FixedSizeBinaryType, t.LargeListType, t.ListViewType,
                     t.LargeListViewType, t.FixedSizeListType, t.UnionType, t.DictionaryType,
                     t.RunEndEncodedType, t.ExtensionType)
def _no_sql(dtype: t.DataType, st: Any) -> Any:
    return None  # spark_arrow_type turns these into others first


def to_spark_schema(schema: t.Schema) -> Any:
    """The Spark StructType of a Spark-compatible Arrow schema."""
    from pyspark.sql import types as st

    return st.StructType([st.StructField(f.name, to_spark_type(f.type), True) for f in schema])


def from_spark_type(dtype: Any) -> t.DataType:
    """The Arrow type of a Spark SQL type, as ``to_arrow_schema(..., timezone="UTC")`` says."""
    from pyspark.sql import types as st

    simple = {
        st.NullType: t.null(), st.BooleanType: t.bool_(), st.ByteType: t.int8(),
        st.ShortType: t.int16(), st.IntegerType: t.int32(), st.LongType: t.int64(),
        st.FloatType: t.float32(), st.DoubleType: t.float64(), st.StringType: t.string(),
        st.BinaryType: t.binary(), st.DateType: t.date32(),
        st.TimestampType: t.timestamp("us", "UTC"), st.TimestampNTZType: t.timestamp("us"),
        st.DayTimeIntervalType: t.duration("us"),
    }
    for cls, arrow in simple.items():
        if type(dtype) is cls:
            return arrow
    if isinstance(dtype, st.CharType | st.VarcharType):
        return t.string()
    if type(dtype).__name__ == "TimeType":
        return t.time64("ns")
    if isinstance(dtype, st.DecimalType):
        return t.decimal128(dtype.precision, dtype.scale)
    if isinstance(dtype, st.ArrayType):
        return t.list_(t.field("element", from_spark_type(dtype.elementType), nullable=True))
    if isinstance(dtype, st.MapType):
        return t.map_(
            t.field("key", from_spark_type(dtype.keyType), nullable=False),
            t.field("value", from_spark_type(dtype.valueType), nullable=True),
        )
    if isinstance(dtype, st.StructType):
        return t.struct(
            [t.field(f.name, from_spark_type(f.dataType), nullable=True) for f in dtype.fields]
        )
    raise NotSupported(f"expected a Spark type with an Arrow form, found {dtype.simpleString()}")


def from_spark_schema(schema: Any) -> t.Schema:
    """The Arrow schema (all fields nullable) of a Spark StructType."""
    return t.schema(
        [t.field(f.name, from_spark_type(f.dataType), nullable=True) for f in schema.fields]
    )
