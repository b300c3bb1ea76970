"""Tests for quiver.constructors: the top-level array/record_batch/table constructors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import quiver as qv


def test_schema_from_a_pyarrow_schema() -> None:
    ps = pa.schema([pa.field("a", pa.int64(), nullable=False), ("s", pa.list_(pa.string()))],
                   metadata={"k": "v"})
    got = qv.schema(ps)
    assert got.names == ["a", "s"]
    assert got.field("a").nullable is False
    assert got.field("s").type == qv.list_(qv.string())
    assert got.metadata.get("k") == b"v"


def test_record_batch_and_table_from_pyarrow_share_memory() -> None:
    values = np.arange(1000, dtype=np.int64)
    pb = pa.record_batch({"v": values})
    got = qv.record_batch(pb)
    assert np.shares_memory(np.asarray(got.column(0)), values)
    table = qv.table(pa.table({"v": values, "s": [str(i) for i in range(1000)]}))
    assert table.num_rows == 1000 and table.schema.names == ["v", "s"]


def test_record_batch_from_polars() -> None:
    pl = pytest.importorskip("polars")
    got = qv.record_batch(pl.DataFrame({"a": [1, 2], "b": ["x", None]}))
    assert got.to_pylist() == [{"a": 1, "b": "x"}, {"a": 2, "b": None}]


def test_pandas_frames_both_ways() -> None:
    df = pd.DataFrame({"x": [1.5, 2.5], "i": np.array([1, 2], dtype=np.int32)})
    batch = qv.record_batch(df)
    assert batch.schema.field("i").type == qv.int32()
    assert batch.to_pylist() == [{"x": 1.5, "i": 1}, {"x": 2.5, "i": 2}]
    back = batch.to_pandas()
    assert list(back.columns) == ["x", "i"] and back["i"].tolist() == [1, 2]
    assert qv.Table.from_pandas(df).num_rows == 2
    assert qv.table(df).to_pandas()["x"].tolist() == [1.5, 2.5]
