"""Tests for quiver.interop.numpy_pandas: DataFrames to and from quiver batches."""

from __future__ import annotations

import datetime

import numpy as np
import pyarrow as pa
import pytest

import quiver as qv
from quiver.errors import ArrowTypeError, NotSupported

pd = pytest.importorskip("pandas")
batch_mod = pytest.importorskip("quiver.batch")

from quiver.interop.numpy_pandas import batch_from_pandas, batch_to_pandas  # noqa: E402

RecordBatch = batch_mod.RecordBatch


def _batch(**columns):
    arrays = list(columns.values())
    schema = qv.schema([qv.field(n, a.type) for n, a in columns.items()])
    return RecordBatch(schema, arrays)


def test_numeric_columns_without_nulls_are_zero_copy():
    data = np.arange(10, dtype=np.int64)
    col = qv.array(data)
    df = batch_to_pandas(_batch(a=col))
    out = df["a"].to_numpy()
    assert out.dtype == np.int64
    assert out.tolist() == list(range(10))
    assert np.shares_memory(out, col.buffers[1])


def test_nulls_follow_pyarrow_rules():
    df = batch_to_pandas(
        _batch(
            i=qv.array([1, None, 3]),
            f=qv.array([1.5, None, 2.5]),
            s=qv.array(["a", None, "c"]),
            b=qv.array([True, None, False]),
        )
    )
    assert df["i"].dtype == np.float64
    assert np.isnan(df["i"][1])
    assert np.isnan(df["f"][1])
    assert df["s"].tolist()[0] == "a" and df["s"].isna().tolist() == [False, True, False]
    assert df["b"].tolist() == [True, None, False]


def test_timestamps_keep_time_zone_and_nat():
    ts = qv.array(
        np.array(["2024-01-01T00:00", "NaT"], dtype="M8[us]"), qv.timestamp("us", "Asia/Tokyo")
    )
    df = batch_to_pandas(_batch(t=ts))
    assert str(df["t"].dt.tz) == "Asia/Tokyo"
    assert df["t"][0] == pd.Timestamp("2024-01-01T09:00", tz="Asia/Tokyo")
    assert pd.isna(df["t"][1])


def test_dictionary_becomes_categorical():
    col = qv.array(["x", "y", None, "x"], qv.dictionary(qv.int8(), qv.string()))
    df = batch_to_pandas(_batch(c=col))
    cat = df["c"]
    assert isinstance(cat.dtype, pd.CategoricalDtype)
    assert cat.cat.codes.tolist()[2] == -1
    assert cat.astype(object).where(cat.notna(), None).tolist() == ["x", "y", None, "x"]


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


def test_round_trip_through_pandas_keeps_values():
    batch = _batch(a=qv.array([1, 2, 3]), s=qv.array(["x", "y", "z"]))
    back = batch_from_pandas(batch_to_pandas(batch))
    assert back.to_pydict() == batch.to_pydict()


def test_preserve_index_adds_index_columns():
    df = pd.DataFrame({"a": [1, 2]}, index=pd.Index([10, 20], name="key"))
    assert batch_from_pandas(df, preserve_index=False).schema.names == ["a"]
    # the default (None) is pyarrow's: an index other than a RangeIndex is kept (issue 14)
    assert batch_from_pandas(df).schema.names == ["a", "key"]
    batch = batch_from_pandas(df, preserve_index=True)
    assert batch.schema.names == ["a", "key"]
    assert batch.column(1).to_pylist() == [10, 20]


def test_rejects_non_dataframes_and_duplicate_names():
    with pytest.raises(ArrowTypeError, match="DataFrame"):
        batch_from_pandas({"a": [1]})
    with pytest.raises(ArrowTypeError, match="RecordBatch or Table"):
        batch_to_pandas([1, 2])
    dup = RecordBatch(
        qv.schema([qv.field("a", qv.int64()), qv.field("a", qv.int64())]),
        [qv.array([1]), qv.array([2])],
    )
    with pytest.raises(NotSupported, match="duplicate"):
        batch_to_pandas(dup)


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
