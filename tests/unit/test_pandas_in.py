"""Tests for quiver.pandas_in: pandas objects to quiver arrays and batches."""

from __future__ import annotations

import datetime
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
