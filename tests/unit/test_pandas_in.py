"""Tests for quiver.pandas_in: pandas objects to quiver arrays and batches."""

from __future__ import annotations

import datetime
import warnings
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import quiver as qv
from quiver.interop.numpy_pandas import batch_from_pandas

batch_mod = pytest.importorskip("quiver.batch")


pd = pytest.importorskip("pandas")



@pytest.mark.parametrize("series", [
    pd.Series([1.0, np.nan, 3.0]),
    pd.Series([1, None, 3], dtype="Int64"),
    pd.Series([True, None], dtype="boolean"),
    pd.Series(["a", None, "c"], dtype="str"),
    pd.Series(pd.Categorical(["x", None, "y"])),
    pd.Series([[pd.Timestamp("2020-01-01")], None]),
    pd.Series([pd.NA, "x"], dtype=object),
    pd.Series(pd.date_range("2020", periods=2, tz="UTC")),
], ids=lambda s: str(s.dtype))
def test_array_of_a_series_is_record_batch_of_a_frame(series: Any) -> None:
    ours = qv.array(series)
    as_column = qv.record_batch(pd.DataFrame({"x": series})).column("x")
    assert ours.type == as_column.type
    assert ours.to_pylist() == as_column.to_pylist()
    theirs = pa.array(series, from_pandas=True)
    assert ours.to_pylist() == qv.array(theirs).to_pylist()


def test_from_pandas_numeric_is_zero_copy_and_nan_is_null():
    values = np.array([1.0, np.nan, 3.0])
    df = pd.DataFrame({"x": values, "n": np.arange(3, dtype=np.int32)})
    batch = batch_from_pandas(df)
    assert batch.schema.equals(
        qv.schema([qv.field("x", qv.float64()), qv.field("n", qv.int32())])
    )
    assert b"pandas" in batch.schema.metadata  # pyarrow's convention (issue 14)
    assert batch.column(0).to_pylist() == [1.0, None, 3.0]
    assert np.shares_memory(batch.column(1).buffers[1], df["n"].to_numpy())


def test_from_pandas_masked_categorical_tz_and_strings():
    df = pd.DataFrame(
        {
            "i": pd.array([1, None, 3], dtype="Int64"),
            "b": pd.array([True, None, False], dtype="boolean"),
            "c": pd.Categorical(["p", None, "q"], ordered=True),
            "t": pd.to_datetime(["2024-01-01", None, "2024-01-03"]).tz_localize("UTC"),
            "s": pd.array(["a", None, "c"], dtype="string"),
            "o": ["u", None, "w"],
        }
    )
    batch = batch_from_pandas(df)
    assert batch.column(0).type == qv.int64()
    assert batch.column(0).to_pylist() == [1, None, 3]
    assert batch.column(1).to_pylist() == [True, None, False]
    c = batch.column(2)
    # string types as pyarrow gives them (pandas 3 holds str as Arrow large_string)
    theirs = qv.schema(pa.Table.from_pandas(df).schema)
    assert c.type == theirs.field("c").type
    assert c.type.index_type == qv.int8() and c.type.ordered
    assert c.to_pylist() == ["p", None, "q"]
    assert batch.column(3).type in (qv.timestamp("ns", "UTC"), qv.timestamp("us", "UTC"))
    assert batch.column(3).to_pylist()[0] == datetime.datetime(
        2024, 1, 1, tzinfo=datetime.UTC
    )
    assert batch.column(3).null_count == 1
    assert batch.column(4).type == theirs.field("s").type
    assert batch.column(4).to_pylist() == ["a", None, "c"]
    assert batch.column(5).to_pylist() == ["u", None, "w"]


def test_preserve_index_adds_index_columns():
    df = pd.DataFrame({"a": [1, 2]}, index=pd.Index([10, 20], name="key"))
    assert batch_from_pandas(df, preserve_index=False).schema.names == ["a"]
    # the default (None) is pyarrow's: an index other than a RangeIndex is kept (issue 14)
    assert batch_from_pandas(df).schema.names == ["a", "key"]
    batch = batch_from_pandas(df, preserve_index=True)
    assert batch.schema.names == ["a", "key"]
    assert batch.column(1).to_pylist() == [10, 20]


@pytest.mark.parametrize(
    "values",
    [
        ["a", None, "bc", None, "déf"],
        [None, "x", float("nan"), "", pd.NA],
        ["\x01", None, "a\x00b", "\x01"],
        [None, None, "only"],
        ["a", None, 1],
        [None, b"x", None],
    ],
)
def test_object_string_columns_with_nulls_match_pyarrow(values: list) -> None:
    df = pd.DataFrame({"s": pd.Series(values, dtype=object)})
    try:
        expected = pa.Table.from_pandas(df).column("s").to_pylist()
    except (pa.ArrowTypeError, pa.ArrowInvalid):
        with pytest.raises(qv.ArrowError):
            qv.Table.from_pandas(df)
        return
    column = qv.record_batch(df).column(0)
    column.validate(full=True)
    assert column.to_pylist() == expected


# -- time zones become Arrow zone strings (as pyarrow's from_pandas) ----------------------


def test_from_pandas_fixed_offset_time_zone() -> None:
    tz = datetime.timezone(datetime.timedelta(hours=5, minutes=30))
    df = pd.DataFrame({"a": pd.Series(pd.to_datetime(["2020-01-01"])).dt.tz_localize(tz)})
    assert qv.table(df).schema.field("a").type.tz == "+05:30"  # found 'UTC+05:30'


def test_from_pandas_dateutil_time_zone_round_trip() -> None:
    dateutil_tz = pytest.importorskip("dateutil.tz")
    s = pd.Series(pd.to_datetime(["2020-01-01"])).dt.tz_localize(dateutil_tz.tzutc())
    back = qv.table(pd.DataFrame({"a": s})).to_pandas()  # ZoneInfoNotFoundError
    assert back["a"].iloc[0] == s.iloc[0]


def _time_zones() -> list[Any]:
    dateutil_tz = pytest.importorskip("dateutil.tz")
    import zoneinfo

    return [
        datetime.timezone(datetime.timedelta(hours=5, minutes=30)),
        datetime.timezone(datetime.timedelta(hours=-3)),
        datetime.UTC, "UTC", "Europe/Paris", zoneinfo.ZoneInfo("America/New_York"),
        dateutil_tz.tzutc(), dateutil_tz.tzoffset(None, 3600),
        dateutil_tz.gettz("Europe/Paris"),
    ]


@pytest.mark.parametrize("tz", _time_zones(), ids=repr)
def test_from_pandas_time_zone_as_pyarrow(tz: Any) -> None:
    s = pd.Series(pd.to_datetime(["2020-01-01 00:00", None, "2021-06-30 12:00"])).dt.tz_localize(tz)
    df = pd.DataFrame({"a": s})
    ours, theirs = qv.table(df), pa.Table.from_pandas(df)
    assert ours.schema.field("a").type.tz == theirs.schema.field("a").type.tz
    meta = ours.schema.metadata[b"pandas"]
    assert pa.table(ours).schema.pandas_metadata["columns"][0]["metadata"] == \
        theirs.schema.pandas_metadata["columns"][0]["metadata"], meta
    pd.testing.assert_frame_equal(ours.to_pandas(), theirs.to_pandas())
    pd.testing.assert_frame_equal(pa.table(ours).to_pandas(), theirs.to_pandas())
    assert qv.array(s).type.tz == theirs.schema.field("a").type.tz


# -- index field names: pyarrow's rule, never a duplicate --------------------------------


def test_index_named_like_a_column_round_trips() -> None:
    for df in [pd.DataFrame({"a": [1, 2]}, index=pd.Index([5, 6], name="a")),
               pd.DataFrame({"a": [1, 2]},
                            index=pd.MultiIndex.from_arrays([[1, 2], [3, 4]], names=["x", "x"]))]:
        pd.testing.assert_frame_equal(qv.table(df).to_pandas(),
                                      pa.Table.from_pandas(df).to_pandas())


def _two_levels(names: list[Any]) -> Any:
    return pd.MultiIndex.from_arrays([[1, 2], [3, 4]], names=names)


@pytest.mark.parametrize("df", [
    pd.DataFrame({"a": [1, 2]}, index=pd.Index([5, 6], name="a")),
    pd.DataFrame({"a": [1, 2]}, index=_two_levels(["x", "x"])),
    pd.DataFrame({"__index_level_0__": [1, 2]}, index=pd.Index([5, 6])),
    pd.DataFrame({"a": [1, 2]}, index=_two_levels(["a", None])),
    pd.DataFrame({"a": [1, 2]}, index=_two_levels([None, "__index_level_0__"])),
    pd.DataFrame({"a": [1, 2], "b": [3, 4]}, index=pd.Index(["p", "q"], name="b")),
])
def test_index_field_names_as_pyarrow(df: Any) -> None:
    ours, theirs = qv.table(df), pa.Table.from_pandas(df)
    assert ours.schema.names == theirs.schema.names
    assert len(set(ours.schema.names)) == len(ours.schema.names)
    pd.testing.assert_frame_equal(ours.to_pandas(), theirs.to_pandas())
    pd.testing.assert_frame_equal(pa.table(ours).to_pandas(), theirs.to_pandas())


def test_index_named_like_a_non_text_column_gets_its_own_name() -> None:
    # pyarrow names both '0' (and its frame then has two columns 0); quiver keeps them apart
    df = pd.DataFrame({0: [1, 2]}, index=pd.Index([5, 6], name=0))
    table = qv.table(df)
    assert table.schema.names == ["0", "__index_level_0__"]
    back = table.to_pandas()
    assert list(back.columns) == [0]
    assert back.index.tolist() == [5, 6] and back.index.name == "0"  # stored as text


# -- column labels: pyarrow's field names and level types ----------------------------------


def test_multiindex_columns_from_pyarrow_metadata() -> None:
    df = pd.DataFrame(np.arange(4).reshape(2, 2),
                      columns=pd.MultiIndex.from_tuples([("a", 1), ("b", 2)]))
    pt = pa.Table.from_pandas(df)
    assert qv.table(df).schema.names == pt.schema.names  # "('a', '1')", as pyarrow
    pd.testing.assert_frame_equal(qv.table(pt).to_pandas(), pt.to_pandas())


def test_none_column_label_round_trips() -> None:
    df = pd.DataFrame({None: [1, 2]})
    assert list(qv.table(df).to_pandas().columns) == [None]


@pytest.mark.parametrize("columns", [
    pd.MultiIndex.from_tuples([("a", 1), ("b", 2), ("a", 3)], names=["l0", "l1"]),
    pd.MultiIndex.from_tuples([("a", 1.5, "x"), ("b", 2.5, "y"), ("a", 0.5, "z")],
                              names=[None, "f", None]),
    pd.MultiIndex.from_tuples([(1, "a"), (2, "b"), (1, "c")]),
    pd.MultiIndex.from_tuples([(pd.Timestamp("2020-01-01"), "a"),
                               (pd.Timestamp("2021-01-01"), "b"),
                               (pd.Timestamp("2020-01-01"), "c")]),
    pd.Index([1, 2, 3], dtype="int32", name="n"),
    pd.Index([0.5, 1.5, 2.5]),
    pd.Index(pd.to_datetime(["2020-01-01", "2020-01-02", "2020-01-03"])),
    pd.Index([b"x", b"y", b"z"], dtype=object),
    pd.Index(["a", None, "c"]),
    pd.Index([None, "b", "c"], dtype=object),
])
def test_column_labels_round_trip_as_pyarrow(columns: Any) -> None:
    df = pd.DataFrame(np.arange(6).reshape(2, 3), columns=columns)
    ours = qv.table(df)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # pyarrow's: mixed label types
        theirs = pa.Table.from_pandas(df)
    assert ours.schema.names == theirs.schema.names
    expected = theirs.to_pandas()
    pd.testing.assert_frame_equal(ours.to_pandas(), expected)
    pd.testing.assert_frame_equal(qv.table(theirs).to_pandas(), expected)
    pd.testing.assert_frame_equal(pa.table(ours).to_pandas(), expected)


NAN = float("nan")


@pytest.mark.parametrize("values", [
    [[1.5, NAN], None, []],
    [np.array([1.5, NAN]), None, np.array([2.0])],
    [np.array([1.5, NAN], np.float32), np.array([], np.float32)],
    [{"x": NAN, "y": "a"}, None, {"x": 1.0, "y": None}],
    [[{"x": [NAN, 2.0]}], [None]],
    [[pd.NA, "a"], None],
])
def test_nan_nested_in_object_columns_is_null_as_pyarrow(values: list) -> None:
    # pyarrow's from_pandas takes NaN (and pd.NA) as null at every depth; quiver took it
    # so only at the top, and kept NaN inside lists, structs and numpy arrays
    df = pd.DataFrame({"v": pd.Series(values, dtype=object)})
    expected = pa.Table.from_pandas(df, preserve_index=False).column("v").to_pylist()
    got = qv.Table.from_pandas(df, preserve_index=False).column("v").to_pylist()
    assert repr(got) == repr(expected)
    assert repr(qv.array(values, from_pandas=True).to_pylist()) == repr(
        pa.array(values, from_pandas=True).to_pylist())
