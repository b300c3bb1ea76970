"""Every DataType has every per-type piece: a layout, IPC metadata both ways, a C data
format both ways, integration JSON both ways, an Array class, a builder, Python values,
statistics, a cast family, a pandas conversion, and a Spark type and conversion.

Cross-module on purpose: one walk over every type through every per-type module
(layout, ipc.metadata, cdata, integration, array, build).

The walk starts from the DataType class tree, so a new type class without samples here
fails first (``test_every_type_class_has_samples``), and a sample missing any piece fails
naming the class and the piece.  Nothing falls back silently: a piece that is missing
raises, and the test reports which.

``test_every_type_class_has_a_registry_row_with_every_piece`` checks the same from the
other side, on the registry (quiver.registry): after importing every module that
registers pieces, each DataType class has a row, and each row every piece it does not
say it goes without ("DataType X has no <piece>").
"""

from __future__ import annotations

import datetime
import decimal
import importlib

import pyarrow as pa
import pytest

import quiver as qv
import quiver.ipc as ipc
from quiver import registry
from quiver import types as t
from quiver.array.base import Array, array_class_for
from quiver.integration.json_reader import schema_from_json
from quiver.integration.json_writer import schema_to_json
from quiver.interop import import_field
from quiver.layout import Layout, layout_of, logical_numpy_dtype, storage_numpy_dtype

_I32 = t.int32()

# each concrete DataType class -> sample types of it, and a non-null Python value each
SAMPLES: dict[type, list[tuple[t.DataType, object]]] = {
    t.NullType: [(t.null(), None)],
    t.BoolType: [(t.bool_(), True)],
    t.IntegerType: [(t.int8(), -3), (t.uint64(), 2**64 - 1)],
    t.FloatingPointType: [(t.float16(), 1.5), (t.float32(), 2.5), (t.float64(), -0.25)],
    t.DecimalType: [(t.decimal32(5, 2), decimal.Decimal("123.45")),
                    (t.decimal128(20, 3), decimal.Decimal("-1.500")),
                    (t.decimal256(40, 0), decimal.Decimal(10**39))],
    t.DateType: [(t.date32(), datetime.date(2024, 2, 29)),
                 (t.date64(), datetime.date(1969, 12, 31))],
    t.TimeType: [(t.time32("s"), datetime.time(1, 2, 3)),
                 (t.time64("us"), datetime.time(23, 59, 59, 999999))],
    t.TimestampType: [(t.timestamp("ms"), datetime.datetime(2020, 1, 2, 3, 4, 5)),
                      (t.timestamp("us", "UTC"),
                       datetime.datetime(2020, 1, 2, tzinfo=datetime.UTC))],
    t.DurationType: [(t.duration("ns"), datetime.timedelta(microseconds=5))],
    t.IntervalType: [(t.month_interval(), 7)],
    t.BinaryType: [(t.binary(), b"ab"), (t.large_binary(), b"")],
    t.StringType: [(t.string(), "x"), (t.large_string(), "yz")],
    t.BinaryViewType: [(t.binary_view(), b"a" * 20)],
    t.StringViewType: [(t.string_view(), "short")],
    t.FixedSizeBinaryType: [(t.fixed_size_binary(3), b"abc")],
    t.ListType: [(t.list_(_I32), [1, None])],
    t.LargeListType: [(t.large_list(t.string()), ["a"])],
    t.ListViewType: [(t.list_view(_I32), [2])],
    t.LargeListViewType: [(t.large_list_view(_I32), [])],
    t.FixedSizeListType: [(t.fixed_size_list(_I32, 2), [1, 2])],
    t.StructType: [(t.struct([("a", _I32), ("b", t.string())]), {"a": 1, "b": "q"})],
    t.MapType: [(t.map_(t.string(), _I32), [("k", 1)])],
    t.UnionType: [(t.sparse_union([t.field("i", _I32), t.field("s", t.string())]), 4),
                  (t.dense_union([t.field("i", _I32)]), 5)],
    t.DictionaryType: [(t.dictionary(t.int16(), t.string()), "v")],
    t.RunEndEncodedType: [(t.run_end_encoded(_I32, t.string()), "r")],
    t.ExtensionType: [(t.uuid(), b"0123456789abcdef")],
}

CASES = [pytest.param(cls, typ, value, id=f"{cls.__name__}-{typ}")
         for cls, samples in SAMPLES.items() for typ, value in samples]


def _concrete(cls: type) -> set[str]:
    # by name: a slotted dataclass replaces its class, and the first one stays a subclass
    found = set()
    for sub in cls.__subclasses__():
        if not sub.__name__.startswith("_"):
            found.add(sub.__name__)
        found |= _concrete(sub)
    return found


def test_every_type_class_has_samples() -> None:
    missing = sorted(_concrete(t.DataType) - {c.__name__ for c in SAMPLES})
    assert not missing, f"DataType classes without samples in {__name__}: {missing}"


@pytest.mark.parametrize(("cls", "typ", "value"), CASES)
def test_layout(cls: type, typ: t.DataType, value: object) -> None:
    assert isinstance(layout_of(typ), Layout), f"{cls.__name__}: no layout"


@pytest.mark.parametrize(("cls", "typ", "value"), CASES)
def test_numpy_dtypes_for_fixed_width_numbers(cls: type, typ: t.DataType, value: object) -> None:
    st = t.storage_of(typ)
    numeric = (t.IntegerType, t.FloatingPointType, t.DateType, t.TimeType, t.TimestampType,
               t.DurationType)
    if isinstance(st, numeric):
        assert storage_numpy_dtype(typ) is not None, f"{cls.__name__}: no numpy storage dtype"
        assert logical_numpy_dtype(typ) is not None, f"{cls.__name__}: no numpy logical dtype"


@pytest.mark.parametrize(("cls", "typ", "value"), CASES)
def test_ipc_metadata_both_ways(cls: type, typ: t.DataType, value: object) -> None:
    schema = t.schema([t.field("c", typ)])
    sink = ipc.BufferOutputStream()
    with ipc.new_stream(sink, schema):
        pass
    got = ipc.open_stream(sink.getvalue()).schema
    assert got.field(0).type.equals(typ), f"{cls.__name__}: IPC metadata gave {got.field(0).type}"


@pytest.mark.parametrize(("cls", "typ", "value"), CASES)
def test_c_data_format_both_ways(cls: type, typ: t.DataType, value: object) -> None:
    field = t.field("c", typ)
    theirs = pa.field(field)  # export through __arrow_c_schema__
    back = import_field(theirs)
    assert back.type.equals(typ), f"{cls.__name__}: C data format gave {back.type}"


@pytest.mark.parametrize(("cls", "typ", "value"), CASES)
def test_integration_json_both_ways(cls: type, typ: t.DataType, value: object) -> None:
    schema = t.schema([t.field("c", typ)])
    back, _nodes = schema_from_json(schema_to_json(schema))
    assert back.field(0).type.equals(typ), f"{cls.__name__}: JSON gave {back.field(0).type}"


@pytest.mark.parametrize(("cls", "typ", "value"), CASES)
def test_array_class_builder_and_python_values(cls: type, typ: t.DataType, value: object) -> None:
    storage = t.storage_of(typ)
    if not isinstance(typ, t.ExtensionType):
        assert array_class_for(storage) is not Array, f"{cls.__name__}: no Array class"
    arr = qv.array([value, None], type=typ)
    assert arr.type.equals(typ), f"{cls.__name__}: the builder gave {arr.type}"
    got = arr.to_pylist()
    try:
        want = pa.array([value, None], type=pa.field(t.field("c", typ)).type).to_pylist()
    except pa.ArrowNotImplementedError:  # pyarrow builds no intervals or unions from values
        want = [value, None]
    if isinstance(storage, t.MapType):
        got = [None if v is None else [tuple(kv) for kv in v] for v in got]
    assert got == want, f"{cls.__name__}: Python values {got}, pyarrow gives {want}"


@pytest.mark.parametrize(("cls", "typ", "value"), CASES)
def test_statistics_cast_pandas_and_spark(cls: type, typ: t.DataType, value: object) -> None:
    from quiver.ipc.statistics.compute import column_raw
    from quiver.spark.convert import to_spark_array
    from quiver.spark.policy import ReadPolicy, spark_arrow_type, to_spark_type

    arr = qv.array([value, None], type=typ)
    # statistics: the (logical) null count at least, for every type
    nulls = arr.to_pylist().count(None)
    assert column_raw(arr)[0] == nulls, f"{cls.__name__}: statistics gave {column_raw(arr)}"
    # casts: to its own type is itself; its storage's family names the casts it has
    assert arr.cast(typ) is arr
    storage = t.storage_of(typ)
    if not isinstance(storage, t.DictionaryType):
        assert isinstance(registry.lookup("cast_family", type(storage)), str)
    # pandas: one value a row
    pytest.importorskip("pandas")
    assert len(arr.to_pandas()) == 2, f"{cls.__name__}: pandas"
    # Spark: the array as the type Spark reads (wide decimals as strings)
    policy = ReadPolicy(wide_decimals="string")
    spark = to_spark_array(arr, policy)
    assert spark.type.equals(spark_arrow_type(typ, policy)), f"{cls.__name__}: {spark.type}"
    spark.validate(full=True)
    first, last = spark.to_pylist()
    assert first is not None or isinstance(typ, t.NullType), f"{cls.__name__}: {first}"
    # a null stays null (a union's struct: every member null)
    assert last is None or not any(v for k, v in last.items() if k != "type_code"), last
    # and the Spark SQL type of the type Spark reads (pyspark's types need no JVM)
    pytest.importorskip("pyspark")
    assert to_spark_type(spark.type) is not None


# every module that registers pieces in quiver.registry (see its docstring's table)
REGISTERING_MODULES = (
    "quiver.types",  # the rows, c_format
    "quiver.layout",  # layout, numpy_storage, numpy_logical
    "quiver.array.primitive",  # array_class, python_values
    "quiver.array.binary",  # array_class
    "quiver.array.nested",  # array_class
    "quiver.array.encoded",  # array_class
    "quiver.array.build",  # builder
    "quiver.ipc.metadata.fields",  # ipc_decode
    "quiver.ipc.metadata.encode",  # ipc_encode
    "quiver.integration.json_writer",  # json_encode
    "quiver.integration.json_reader",  # json_decode
    "quiver.array.cast",  # cast_family
    "quiver.pandas_out",  # pandas
    "quiver.ipc.statistics.compute",  # stats_raw
    "quiver.filters",  # filter
    "quiver.spark.policy",  # spark_arrow
    "quiver.spark.convert",  # spark_convert
)


def test_every_type_class_has_a_registry_row_with_every_piece() -> None:
    for name in REGISTERING_MODULES:
        importlib.import_module(name)
    rowless = sorted(_concrete(t.DataType) - {r.cls.__name__ for r in registry.rows()})
    assert not rowless, f"DataType classes without a row in quiver.registry: {rowless}"
    missing = registry.missing()
    assert not missing, "\n".join(missing)
    # a piece a row says it goes without is not registered either (the row would lie)
    contradictions = [f"DataType {r.cls.__name__} has a {piece} its row says it goes without"
                      for r in registry.rows() for piece in r.without
                      if r.cls in registry.table(piece)]
    assert not contradictions, "\n".join(contradictions)


def test_registry_rows_agree_with_ipc_codes_and_to_pylist() -> None:
    from quiver.integration import json_reader
    from quiver.ipc.metadata import fields

    for row in registry.rows():
        for code, name in row.ipc_types:
            assert fields._TYPE_NAMES[code] == name, f"{row.cls.__name__}: Type code {code}"
            assert fields._DECODERS[code] is registry.lookup("ipc_decode", row.cls), name
        for json_name in row.json_names:
            assert json_reader._DECODERS[json_name] is registry.lookup("json_decode", row.cls)
        # Python conversion: the Array class converts, itself or by its python_values piece
        arr_cls = registry.lookup("array_class", row.cls)
        name = row.cls.__name__
        assert arr_cls.to_pylist is not Array.to_pylist, f"DataType {name} has no to_pylist"


def test_a_missing_piece_is_named() -> None:
    with pytest.raises(qv.NotSupported, match="DataType StringType has no no_such_piece"):
        registry.lookup("no_such_piece", t.StringType)
    with pytest.raises(qv.NotSupported, match="DataType _Unknown has no array_class"):
        array_class_for(_Unknown())
    importlib.import_module("quiver.array.build")
    with pytest.raises(ValueError, match="DataType StringType already has a builder"):
        registry.register("builder", lambda values, dtype, checked=False: None, t.StringType)


class _Unknown(t.DataType):
    """A DataType class with no row: lookups fail loudly instead of falling back."""


def test_a_forgotten_piece_is_named_by_the_coverage_check(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in REGISTERING_MODULES:
        importlib.import_module(name)
    monkeypatch.delitem(registry.table("spark_convert"), t.DecimalType)
    monkeypatch.delitem(registry.table("stats_raw"), t.StringViewType)
    missing = registry.missing()
    assert "DataType DecimalType has no spark_convert" in missing
    assert "DataType StringViewType has no stats_raw" in missing
    compute = importlib.import_module("quiver.ipc.statistics.compute")
    monkeypatch.setattr(compute, "_RAW_FUNCTIONS", {})  # what earlier lookups kept
    with pytest.raises(qv.NotSupported, match="DataType StringViewType has no stats_raw"):
        compute.column_raw(qv.array(["a"], type=t.string_view()))
