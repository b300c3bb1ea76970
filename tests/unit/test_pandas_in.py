"""Tests for quiver.pandas_in: pandas objects to quiver arrays and batches."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import quiver as qv

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
