"""The ways into Arrow refuse what would change a value (issue 25), side by side with
pyarrow on the same inputs: numpy arrays converted to an explicit type, Python ints to
floats, type inference of mixed dates, Arrow-backed pandas columns, the type factories'
parameters, canonical extension storage, filters, and the smaller API corners."""

from __future__ import annotations

import datetime as dt
import json
import warnings
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

import quiver as qv
from quiver.array import make_array
from quiver.errors import ArrowInvalid, ArrowInvalidArgument, ArrowTypeError
from quiver.filters import check_filters, filter_mask, normalize
from quiver.types import ExtensionType, TimestampType

pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")


# -- numpy arrays ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["M8[ns]", "m8[us]", "M8[s]", "m8[ms]"])
def test_big_endian_datetime64_and_timedelta64_are_swapped(kind: str) -> None:
    native = np.array([1, -7, 123_456_789], dtype=kind)
    swapped = native.astype(native.dtype.newbyteorder(">"))
    assert qv.array(swapped).to_pylist() == pa.array(native).to_pylist()
    assert qv.array(swapped, qv.array(native).type).to_pylist() == pa.array(native).to_pylist()


@pytest.mark.parametrize(("values", "dtype", "target"), [
    ([2**63], "u8", "int64"),
    ([-1], "i1", "uint8"),
    ([65535], "u2", "int8"),
    ([-1], "i8", "uint64"),
    ([2**32], "i8", "int32"),
    ([1.5], "f8", "int64"),
    ([np.nan], "f8", "int16"),
    ([1e20], "f8", "int64"),
    ([2**53 + 1], "i8", "float64"),
    ([2**24 + 1], "i4", "float32"),
])
def test_numpy_conversion_to_an_explicit_type_refuses_changed_values(
        values: list, dtype: str, target: str) -> None:
    arr = np.array(values, dtype=dtype)
    with pytest.raises(pa.ArrowInvalid):
        pa.array(arr, type=getattr(pa, target)())
    with pytest.raises(ArrowInvalid, match="at row 0"):
        qv.array(arr, getattr(qv, target)())


@pytest.mark.parametrize(("values", "dtype", "target"), [
    ([2**63, 1], "u8", "int64"),
    ([-1, 200], "i2", "uint8"),
    ([65535], "u2", "int8"),
    ([1.5, -2.7], "f8", "int32"),
])
def test_numpy_conversion_with_safe_false_wraps_and_truncates_as_pyarrow(
        values: list, dtype: str, target: str) -> None:
    arr = np.array(values, dtype=dtype)
    want = pa.array(arr, type=getattr(pa, target)(), safe=False).to_pylist()
    assert qv.array(arr, getattr(qv, target)(), safe=False).to_pylist() == want


def test_numpy_conversion_checks_only_valid_slots() -> None:
    arr = np.ma.masked_array(np.array([2**63, 5], "u8"), mask=[True, False])
    assert qv.array(arr, qv.int64()).to_pylist() == [None, 5]
    assert pa.array(arr, type=pa.int64()).to_pylist() == [None, 5]


@pytest.mark.parametrize(("values", "have", "target"), [
    (["3000-01-01"], "M8[s]", ("timestamp", "ns")),
    (["3000-01-01"], "M8[ms]", ("timestamp", "ns")),
    ([2**62], "m8[s]", ("duration", "ns")),
    ([1500], "m8[ns]", ("duration", "us")),
    ([-1500], "m8[ns]", ("duration", "us")),
    ([1500], "M8[ms]", ("timestamp", "s")),
])
def test_datetime64_unit_conversion_refuses_overflow_and_lost_ticks(
        values: list, have: str, target: tuple) -> None:
    arr = np.array(values, dtype=have)
    with pytest.raises(pa.ArrowInvalid):
        pa.array(arr, type=getattr(pa, target[0])(target[1]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy RuntimeWarning either
        with pytest.raises(ArrowInvalid, match="at row 0"):
            qv.array(arr, getattr(qv, target[0])(target[1]))
    want = pa.array(arr, type=getattr(pa, target[0])(target[1]), safe=False).to_pylist()
    assert qv.array(arr, getattr(qv, target[0])(target[1]), safe=False).to_pylist() == want


def test_datetime64_to_dates_keeps_the_day_as_pyarrow() -> None:
    arr = np.array(["2020-01-01T12:30", "1969-12-31T23:00", "NaT"], "M8[s]")
    for target, pa_target in ((qv.date32(), pa.date32()), (qv.date64(), pa.date64())):
        got = qv.array(arr, target)
        assert got.to_pylist() == pa.array(arr, type=pa_target).to_pylist()
        # the stored values too (date64: whole days in milliseconds)
        assert pa.array(got).equals(pa.array(arr, type=pa_target))


# -- Python values --------------------------------------------------------------------


@pytest.mark.parametrize(("values", "target"), [
    ([2**53 + 1], "float64"),
    ([-(2**53) - 1, None], "float64"),
    ([2**60], "float64"),
    ([np.int64(2**53 + 1)], "float64"),
    ([2**24 + 1], "float32"),
    ([1.5, 2**53 + 1], None),
])
def test_python_ints_a_float_would_round_are_refused(values: list, target: str | None) -> None:
    with pytest.raises(pa.ArrowInvalid):
        pa.array(values, type=None if target is None else getattr(pa, target)())
    with pytest.raises(ArrowInvalid, match="exactly"):
        qv.array(values, None if target is None else getattr(qv, target)())


def test_python_ints_a_float_holds_are_taken() -> None:
    values = [2**53, -(2**53), 3, None]
    assert qv.array(values, qv.float64()).to_pylist() == pa.array(
        values, pa.float64()).to_pylist()
    assert qv.array([2**53]).to_pylist() == [2**53]  # ints stay int64


@pytest.mark.parametrize("values", [
    [dt.datetime(2020, 1, 1, 12, 30), dt.date(2020, 1, 2)],
    [dt.date(2020, 1, 2), dt.datetime(2020, 1, 1, 12, 30)],
    [None, dt.date(2020, 1, 2), dt.datetime(2020, 1, 1)],
])
def test_dates_mixed_with_datetimes_are_not_inferred_as_dates(values: list) -> None:
    # pyarrow refuses the first order and drops the time of the second: quiver refuses both
    with pytest.raises(ArrowTypeError, match="date32 would drop the time"):
        qv.array(values)
    # with the type given, the date of each is taken, as pyarrow does
    assert qv.array(values, qv.date32()).to_pylist() == pa.array(
        values, pa.date32()).to_pylist()


# -- pandas ---------------------------------------------------------------------------


def test_arrow_backed_pandas_columns_round_trip_as_pyarrow() -> None:
    df = pd.DataFrame({
        "a": pd.array([2**53 + 1, None], dtype="int64[pyarrow]"),
        "f": pd.array([1.5, None], dtype="float32[pyarrow]"),
        "b": pd.array([True, None], dtype="bool[pyarrow]"),
        "d": pd.array([dt.date(2020, 1, 1), None], dtype=pd.ArrowDtype(pa.date32())),
        "t": pd.array([dt.time(1, 2), None], dtype=pd.ArrowDtype(pa.time64("us"))),
    })
    table = qv.Table.from_pandas(df)
    theirs = pa.Table.from_pandas(df)
    ours = json.loads(table.schema.metadata[b"pandas"])["columns"]
    for mine, want in zip(ours, theirs.schema.pandas_metadata["columns"]):
        assert (mine["pandas_type"], mine["numpy_type"]) == (want["pandas_type"],
                                                             want["numpy_type"])
    back = table.to_pandas()
    expected = theirs.to_pandas()
    assert list(back.dtypes) == list(expected.dtypes) == list(df.dtypes)
    assert back["a"].tolist() == [2**53 + 1, pd.NA] or back["a"].iloc[0] == 2**53 + 1
    pd.testing.assert_frame_equal(back, expected)


# -- type factories -------------------------------------------------------------------


@pytest.mark.parametrize("tz", ["+25:00", "+05:60", "+0530", "+5:30", "05:30", "Foo/Bar",
                                " UTC", "+24:00", "../etc/passwd"])
def test_timestamp_refuses_malformed_time_zones(tz: str) -> None:
    with pytest.raises(ArrowInvalidArgument, match="expected tz as an IANA"):
        qv.timestamp("us", tz)


@pytest.mark.parametrize("tz", ["UTC", "Europe/Paris", "America/Argentina/Buenos_Aires",
                                "+05:30", "-23:59", "+00:00", "Etc/GMT+5"])
def test_timestamp_takes_the_time_zones_the_spec_allows(tz: str) -> None:
    arr = qv.array([dt.datetime(2020, 1, 1, 12)], qv.timestamp("us", tz))
    assert arr.to_pylist() == pa.array([dt.datetime(2020, 1, 1, 12)],
                                       pa.timestamp("us", tz)).to_pylist()


def test_to_pylist_of_a_malformed_zone_gives_quivers_error() -> None:
    arr = make_array(TimestampType("s", "+25:00"), 1,
                     qv.array([1], qv.int64()).buffers, (), 0)
    with pytest.raises(ArrowInvalid, match="time zone"):
        arr.to_pylist()


@pytest.mark.parametrize(("make", "parameter"), [
    (lambda: qv.fixed_size_binary(2**31), "byte_width"),
    (lambda: qv.fixed_size_list(qv.int8(), 2**31), "list_size"),
    (lambda: qv.list_(qv.int8(), 2**31), "list_size"),
    (lambda: qv.fixed_size_binary(-1), "byte_width"),
])
def test_widths_past_int32_are_refused_naming_the_parameter(make, parameter: str) -> None:
    with pytest.raises(ArrowInvalidArgument, match=parameter):
        make()


# -- canonical extension storage ------------------------------------------------------

_WRONG_STORAGE = [
    ("arrow.uuid", lambda: qv.int64(), [1], b""),
    ("arrow.uuid", lambda: qv.fixed_size_binary(8), [b"12345678"], b""),
    ("arrow.bool8", lambda: qv.string(), ["a"], b""),
    ("arrow.bool8", lambda: qv.uint8(), [1], b""),
    ("arrow.json", lambda: qv.int32(), [1], b""),
    ("arrow.json", lambda: qv.binary(), [b"{}"], b""),
    ("arrow.fixed_shape_tensor", lambda: qv.int32(), [1], b'{"shape": [1]}'),
    ("arrow.variable_shape_tensor", lambda: qv.int32(), [1], b""),
]


def _write(path: Path, dtype: qv.DataType, values: list) -> None:
    base = qv.array(values, dtype.storage_type)
    col = make_array(dtype, len(base), base.buffers, base.children, base.null_count)
    table = qv.table({"col": col})
    with qv.ipc.new_file(path, table.schema) as w:
        w.write_table(table)


@pytest.mark.parametrize(("name", "storage", "values", "meta"), _WRONG_STORAGE)
def test_canonical_extension_on_the_wrong_storage_is_refused(
        tmp_path: Path, name: str, storage, values: list, meta: bytes) -> None:
    with pytest.raises(ArrowInvalidArgument, match=f"expected {name} over"):
        qv.extension(name, storage(), meta)
    path = tmp_path / "bad.arrow"
    _write(path, ExtensionType(name, storage(), meta), values)
    if name != "arrow.variable_shape_tensor":  # (pyarrow 26 does not register that one)
        with pytest.raises(pa.ArrowInvalid):
            pa.ipc.open_file(path).read_all()
    for level in ("structural", "full"):
        with pytest.raises(ArrowInvalid, match=f"expected {name} over") as info:
            qv.ipc.open_file(path, validate=level).read_all()
        assert info.value.field_path == "col"
    # an array built past the factory is not exported either (pyarrow died of it)
    base = qv.array(values, storage())
    col = make_array(ExtensionType(name, storage(), meta), len(base), base.buffers,
                     base.children, base.null_count)
    with pytest.raises(ArrowInvalid, match=f"expected {name} over"):
        pa.array(col)
    with pytest.raises(ArrowInvalid, match=f"expected {name} over"):
        col.validate()


def test_canonical_extensions_on_their_storage_are_taken() -> None:
    assert qv.extension("arrow.json", qv.large_string()).storage_type == qv.large_string()
    assert qv.extension("arrow.json", qv.string_view()).storage_type == qv.string_view()
    assert qv.extension("arrow.opaque", qv.int32(), b'{"type_name": "x", "vendor_name": "y"}')
    assert qv.extension("arrow.fixed_shape_tensor", qv.fixed_size_list(qv.int8(), 4),
                        b'{"shape": [2, 2]}')
    shape = qv.fixed_size_list(qv.int32(), 2)
    assert qv.extension("arrow.variable_shape_tensor",
                        qv.struct([qv.field("data", qv.list_(qv.int8())),
                                   qv.field("shape", shape)]))
    assert qv.extension("x.mine", qv.int64())  # not canonical: any storage


def test_a_malformed_zone_in_a_file_is_read_structurally_and_refused_at_full(
        tmp_path: Path) -> None:
    path = tmp_path / "tz.arrow"
    base = qv.array([1], qv.int64())
    col = make_array(TimestampType("s", "+0530"), 1, base.buffers, (), 0)
    table = qv.table({"ts": col})
    with qv.ipc.new_file(path, table.schema) as w:
        w.write_table(table)
    # as pyarrow reads it (only converting the values to zoned objects fails)
    assert pa.ipc.open_file(path).read_all().column(0).type.tz == "+0530"
    assert qv.ipc.open_file(path).read_all().num_rows == 1
    with pytest.raises(ArrowInvalid, match="time zone") as info:
        qv.ipc.open_file(path, validate="full").read_all()
    assert info.value.field_path == "ts"


# -- filters --------------------------------------------------------------------------


def _both(table_data: dict, filters: list) -> tuple:
    from pyarrow.parquet import filters_to_expression

    theirs = pa.table(table_data)
    try:
        want = theirs.filter(filters_to_expression(filters)).to_pydict()
    except pa.ArrowInvalid:
        want = "refused"
    batch = qv.record_batch(qv.table(theirs).to_batches()[0])
    dnf = normalize(filters)
    try:
        check_filters(dnf, batch.schema)
        got = qv.table(batch.filter(qv.array(filter_mask(batch, dnf)))).to_pydict()
    except ArrowInvalid:
        got = "refused"
    return got, want


def test_a_filter_without_a_value_is_refused() -> None:
    with pytest.raises(ArrowInvalidArgument, match="no value"):
        normalize([("a", ">")])
    assert normalize([("a", "is null")])[0][0].op == "is null"


@pytest.mark.parametrize("filters", [
    [("f", "==", 2**53 + 1)],
    [("f", "<", 2**60)],
    [("f", "==", 2**53)],
    [("f4", "==", 2**24 + 1)],
    [("f", "in", [2**60])],
    [("f", "in", [2**53, 2**53 + 1])],
    [("f4", "in", [2**24 + 1, 1])],
    [("f", "not in", [2**53 + 1])],
    [("f", "in", [2**53 + 1, 1.5])],
])
def test_integer_filters_on_float_columns_answer_as_pyarrow(filters: list) -> None:
    data = {"f": pa.array([2.0**60, 2.0**53, 1.0]),
            "f4": pa.array([2.0**24, 1.0, 3.0], pa.float32())}
    got, want = _both(data, filters)
    assert got == want


@pytest.mark.parametrize("value", ["1.501", "1.500", "1.5", "1.499", "-1.515", "1.51",
                                   "1e40", "-1e80", "12345.678", "0.001", "-0"])
@pytest.mark.parametrize("op", ["==", "!=", "<", "<=", ">", ">="])
def test_decimal_filters_of_any_scale_answer_as_pyarrow(value: str, op: str) -> None:
    import operator

    column = [Decimal("1.50"), Decimal("1.51"), Decimal("-1.51"), None, Decimal("0.00")]
    data = {"dec": pa.array(column, pa.decimal128(5, 2))}
    got, want = _both(data, [("dec", op, Decimal(value))])
    compare = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
               ">": operator.gt, ">=": operator.ge}[op]
    exact = {"dec": [v for v in column if v is not None and compare(v, Decimal(value))]}
    assert got == exact
    if value == "-1e80":  # a difference kept: pyarrow cannot cast a value past 76 digits
        assert want == "refused"  # to a decimal and refuses; quiver answers exactly
    else:
        assert want == exact


def test_decimal_in_filters_of_any_scale_answer_as_pyarrow() -> None:
    data = {"dec": pa.array([Decimal("1.50"), Decimal("1.51")], pa.decimal128(5, 2))}
    got, want = _both(data, [("dec", "in", [Decimal("1.501"), Decimal("1.5")])])
    assert got == want


# -- smaller corners ------------------------------------------------------------------


def test_table_append_column_takes_a_list_of_sequences_as_chunks() -> None:
    ours = qv.table({"a": [1, 2]}).append_column("c", [[1], [2]])
    theirs = pa.table({"a": [1, 2]}).append_column("c", [[1], [2]])
    assert str(ours.schema.field("c").type) == str(theirs.schema.field("c").type) == "int64"
    assert ours.to_pydict() == theirs.to_pydict()
    nested = qv.table({"a": [1, 2]}).append_column("c", [[[1]], [[2]]])
    assert nested.to_pydict() == pa.table({"a": [1, 2]}).append_column(
        "c", [[[1]], [[2]]]).to_pydict()
    # a batch takes the list as values, as pyarrow's RecordBatch does
    batch = qv.record_batch({"a": [1, 2]}).append_column("c", [[1], [2]])
    assert batch.to_pydict() == pa.record_batch({"a": [1, 2]}).append_column(
        "c", [[1], [2]]).to_pydict()


@pytest.mark.parametrize(("values", "factory"), [
    ([dt.time(1, 2), None], ("time64", "us")),
    ([dt.time(1, 2, 3)], ("time64", "ns")),
    ([dt.time(1, 2)], ("time32", "s")),
    ([dt.time(1, 2, 3, 4000), None], ("time32", "ms")),
    ([dt.date(2020, 1, 2)], ("date32",)),
    ([dt.date(2020, 1, 2)], ("date64",)),
])
def test_time_and_date_to_numpy_as_pyarrow(values: list, factory: tuple) -> None:
    ours = qv.array(values, getattr(qv, factory[0])(*factory[1:]))
    theirs = pa.array(values, getattr(pa, factory[0])(*factory[1:]))
    got, want = ours.to_numpy(zero_copy_only=False), theirs.to_numpy(zero_copy_only=False)
    assert got.dtype == want.dtype and got.tolist() == want.tolist()
    with pytest.raises(pa.ArrowInvalid):
        theirs.to_numpy(zero_copy_only=True)
    with pytest.raises(ArrowInvalid):
        ours.to_numpy(zero_copy_only=True)


def test_bool8_gives_bools_as_pyarrow() -> None:
    storage = [0, 1, -3, None]
    theirs = pa.ExtensionArray.from_storage(pa.bool8(), pa.array(storage, pa.int8()))
    ours = qv.array(theirs)
    assert ours.to_pylist() == theirs.to_pylist() == [False, True, True, None]
    assert ours.to_numpy(zero_copy_only=False).tolist() == theirs.to_numpy(
        zero_copy_only=False).tolist()
    built = qv.array([True, None, False], qv.extension("arrow.bool8", qv.int8()))
    assert built.to_pylist() == [True, None, False]
    assert pa.array(built).to_pylist() == [True, None, False]


@pytest.mark.parametrize("tz", ["Z", "GMT+08:00", "UTC+01:00", "UT", "-08:00"])
def test_c_data_import_takes_zones_pyarrow_takes(tz):
    """Spark hands batches in its session zone ('Z', 'GMT+08:00', ...): the import takes
    them as pyarrow does (only the timestamp() factory refuses them)."""
    import pyarrow as pa

    batch = pa.record_batch([pa.array([0, 1], pa.timestamp("us", tz=tz))], names=["ts"])
    got = qv.record_batch(batch)
    assert got.schema.field("ts").type.tz == tz
    assert pa.record_batch(got).equals(batch)
