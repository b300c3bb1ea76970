"""Tests for quiver.constructors: the top-level array/record_batch/table constructors."""

from __future__ import annotations

from typing import Any

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


# -- a pandas DataFrame with schema=, names=, metadata= (as pyarrow) ---------------------


def test_table_from_frame_honours_schema() -> None:
    df = pd.DataFrame({"a": [1, 2]})
    schema = qv.schema([("a", qv.int32())])
    assert qv.table(df, schema=schema).schema.field("a").type == qv.int32()  # found int64
    assert qv.record_batch(df, schema=schema).schema.field("a").type == qv.int32()


def _schema_cases() -> list[tuple[str, list[tuple[str, Any]], dict | None]]:
    return [
        ("fewer", [("a", "int32")], None),
        ("same", [("a", "int32"), ("b", "string")], None),
        ("reordered", [("b", "string"), ("a", "int32")], None),
        ("with the index", [("i", "int8"), ("a", "int64"), ("b", "string")], None),
        ("with metadata", [("a", "float64")], {"k": "v"}),
    ]


@pytest.mark.parametrize(("case", "fields", "metadata"), _schema_cases(),
                         ids=[c[0] for c in _schema_cases()])
def test_frame_with_schema_as_pyarrow(case: str, fields: list, metadata: dict | None) -> None:
    df = pd.DataFrame({"a": [1, 2], "b": ["x", None]}, index=pd.Index([5, 6], name="i"))
    theirs_schema = pa.schema([(n, getattr(pa, ty)()) for n, ty in fields], metadata=metadata)
    ours_schema = qv.schema(theirs_schema)
    theirs = pa.table(df, schema=theirs_schema)
    for ours in (qv.table(df, schema=ours_schema), qv.record_batch(df, schema=ours_schema),
                 qv.Table.from_pandas(df, schema=ours_schema)):
        assert pa.schema(ours.schema).remove_metadata() == theirs.schema.remove_metadata()
        assert ours.to_pydict() == theirs.to_pydict()
        assert {k for k in ours.schema.metadata} == set(theirs.schema.metadata)
        pd.testing.assert_frame_equal(ours.to_pandas(), theirs.to_pandas())


def test_frame_with_schema_refusals() -> None:
    df = pd.DataFrame({"a": [1.5, None]})
    with pytest.raises(qv.ArrowKeyError, match="'c'"):
        qv.table(df, schema=qv.schema([("c", qv.int64())]))  # pyarrow: KeyError
    with pytest.raises(qv.ArrowInvalid, match="RangeIndex"):
        qv.table(df.rename_axis("r"), schema=qv.schema([("r", qv.int64())]))
    with pytest.raises(qv.ArrowInvalid, match=r"found 1\.5 at row 0"):
        qv.table(df.fillna(0), schema=qv.schema([("a", qv.int64())]))  # 1.5 to int64
    with pytest.raises(qv.ArrowInvalid, match="non-nullable"):
        qv.table(df, schema=qv.schema([qv.field("a", qv.float64(), nullable=False)]))
    with pytest.raises(qv.ArrowInvalid, match="preserve_index=False"):
        qv.Table.from_pandas(pd.DataFrame({"a": [1]}, index=pd.Index([3], name="i")),
                             schema=qv.schema([("i", qv.int64())]), preserve_index=False)
    for kwargs in ({"names": ["x"]}, {"metadata": {"k": "v"}}):
        for build in (qv.table, qv.record_batch):
            with pytest.raises(qv.ArrowInvalidArgument, match="names= or metadata="):
                build(df, **kwargs)


def test_pyarrow_types_are_taken_wherever_a_type_is():
    # a pyarrow user passes pyarrow's types: they come in through the C data interface
    assert qv.array([1, 2], type=pa.int8()).type == qv.int8()
    assert qv.from_numpy(np.array([1, 2]), pa.int16()).type == qv.int16()
    assert qv.field("a", pa.timestamp("ms", "UTC")).type == qv.timestamp("ms", "UTC")
    assert qv.schema([("a", pa.list_(pa.int8()))]).field("a").type == qv.list_(qv.int8())
    assert qv.list_(pa.int8()) == qv.list_(qv.int8())
    with pytest.raises(qv.ArrowInvalid, match="fit int8"):
        qv.array([300], type=pa.int8())  # checked as quiver's own type is
    with pytest.raises(qv.ArrowTypeError, match="expected a DataType or None"):
        qv.array([1], type="int8")


def test_a_cast_to_a_dictionary_type_is_refused_by_name():
    with pytest.raises(qv.NotSupported, match="casting string to dictionary<"):
        qv.array(["a"]).cast(qv.dictionary(qv.int32(), qv.string()))
