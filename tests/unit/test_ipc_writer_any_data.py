"""Writers take any Arrow data (issue 14): pyarrow / polars schemas, and batches, tables
and streams through the PyCapsule protocol, zero-copy."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import quiver as qv
import quiver.ipc as ipc


def _pa_table() -> pa.Table:
    return pa.table(
        {
            "i": pa.array([1, None, 3], pa.int32()),
            "s": ["a", "bb", None],
            "d": pa.array(["x", "y", "x"]).dictionary_encode(),
            "l": pa.array([[1], [], None], pa.list_(pa.int64())),
        }
    )


def _read_back(data: object, fmt: str) -> pa.Table:
    opener = pa.ipc.open_stream if fmt == "stream" else pa.ipc.open_file
    return opener(pa.py_buffer(bytes(data))).read_all()  # type: ignore[arg-type]


FORMATS = ["stream", "file"]


def _writer(sink: object, schema: object, fmt: str) -> object:
    return (ipc.new_stream if fmt == "stream" else ipc.new_file)(sink, schema)


@pytest.mark.parametrize("fmt", FORMATS)
def test_writer_takes_a_pyarrow_schema_and_pyarrow_batches(fmt: str) -> None:
    table = _pa_table()
    sink = ipc.BufferOutputStream()
    with _writer(sink, table.schema, fmt) as w:
        for batch in table.to_batches():
            w.write_batch(batch)
        w.write_batch(table.slice(1).to_batches()[0])
    back = _read_back(sink.getvalue(), fmt)
    assert back.equals(pa.concat_tables([table, table.slice(1)]))


@pytest.mark.parametrize("fmt", FORMATS)
def test_write_table_and_write_take_pyarrow_tables_and_readers(fmt: str) -> None:
    table = _pa_table()
    sink = ipc.BufferOutputStream()
    with _writer(sink, table.schema, fmt) as w:
        w.write_table(table)
        w.write(table)
        w.write(pa.RecordBatchReader.from_batches(table.schema, table.to_batches()))
        w.write(table.to_batches()[0])
        w.write_table(table, max_chunksize=2)
    back = _read_back(sink.getvalue(), fmt)
    assert back.equals(pa.concat_tables([table] * 5))


def test_writer_takes_polars_and_duckdb_data() -> None:
    pl = pytest.importorskip("polars")
    duckdb = pytest.importorskip("duckdb")
    df = pl.DataFrame({"a": [1, 2, 3], "s": ["x", None, "z"]})
    sink = ipc.BufferOutputStream()
    with ipc.new_stream(sink, df.schema) as w:  # a polars Schema speaks __arrow_c_schema__
        w.write(df)
        w.write_table(df)
    back = pl.read_ipc_stream(bytes(sink.getvalue()))
    assert back.to_dict(as_series=False) == {"a": [1, 2, 3] * 2, "s": ["x", None, "z"] * 2}

    rel = duckdb.sql("select range::BIGINT as n from range(5)")
    sink = ipc.BufferOutputStream()
    with ipc.new_file(sink, qv.schema([("n", qv.int64())])) as w:
        w.write(rel)
    assert _read_back(sink.getvalue(), "file").column("n").to_pylist() == list(range(5))


def test_writer_refuses_batches_of_another_schema_with_quivers_error() -> None:
    sink = ipc.BufferOutputStream()
    w = ipc.new_stream(sink, pa.schema([("a", pa.int64())]))
    with pytest.raises(qv.ArrowInvalidArgument, match="expected batches of the writer's"):
        w.write_batch(pa.record_batch({"a": pa.array([1.5])}))
    w.close()
    with pytest.raises(qv.ArrowTypeError, match="__arrow_c_schema__"):
        ipc.new_stream(ipc.BufferOutputStream(), "not a schema")
    with pytest.raises(qv.ArrowTypeError, match="__arrow_c_stream__"):
        ipc.new_stream(ipc.BufferOutputStream(), qv.schema([("a", qv.int64())])).write(42)


def test_pyarrow_batches_are_written_without_a_copy_of_their_buffers(monkeypatch) -> None:
    # the writer hands the sink views of the producer's buffers: catch the write of the
    # values buffer and check that it shares pyarrow's memory
    values = np.arange(100_000, dtype=np.int64)
    batch = pa.record_batch({"x": values})
    pa_values = np.frombuffer(batch.column(0).buffers()[1], dtype=np.int64)
    seen: list[bool] = []

    class Sink:
        def write(self, data: object) -> int:
            arr = np.asarray(memoryview(data))  # type: ignore[arg-type]
            seen.append(np.shares_memory(arr, pa_values))
            return arr.nbytes

        def flush(self) -> None:
            pass

    with ipc.new_stream(Sink(), batch.schema) as w:
        w.write_batch(batch)
    assert any(seen)


def test_write_takes_a_pandas_dataframe() -> None:
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
    sink = ipc.BufferOutputStream()
    with ipc.new_stream(sink, qv.schema([("a", qv.int64()), ("b", qv.string())])) as w:
        w.write(df)
    assert _read_back(sink.getvalue(), "stream").to_pydict() == {"a": [1, 2], "b": ["x", "y"]}
