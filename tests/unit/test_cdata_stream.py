"""Tests for quiver.cdata.stream: ArrowArrayStream both ways."""

from __future__ import annotations

import gc

import pyarrow as pa
import pytest

import quiver as qv
from quiver.errors import ArrowTypeError
from quiver.interop import (
    ArrowStreamReader,
    export_stream,
    import_array,
    import_stream,
    live_exports,
)
from tests.unit._cdata_helpers import SCHEMA, Batch, Batches, _batch, _expected, needs_batch

# --------------------------------------------------------------------------------------
# export


def test_batch_exports_as_struct_array_with_schema_metadata():
    p = pa.record_batch(_batch(0, 3))
    assert p.equals(_expected(0, 3))
    assert p.schema.metadata == {b"k": b"v"}


def test_stream_exports_to_pyarrow_reader():
    source = Batches(SCHEMA, [_batch(0, 3), _batch(3, 2)])
    reader = pa.RecordBatchReader.from_stream(source)
    assert reader.schema.names == ["a", "s"]
    table = reader.read_all()
    assert table.num_rows == 5
    assert table.column("a").to_pylist() == [0, 1, 2, 3, 4]


def test_stream_pulls_batches_lazily_and_closes_the_source_on_release():
    pulled = []
    closed = []

    def gen():
        try:
            for i in range(3):
                pulled.append(i)
                yield _batch(i * 2, 2)
        finally:
            closed.append(True)

    reader = pa.RecordBatchReader.from_stream(Batches(SCHEMA, gen()))
    assert pulled == []
    first = reader.read_next_batch()
    assert pulled == [0]
    assert first.equals(_expected(0, 2))
    del reader
    gc.collect()
    assert closed == [True]


def test_stream_producer_error_reaches_the_consumer_with_its_message():
    def gen():
        yield _batch(0, 1)
        raise RuntimeError("disk on fire")

    reader = pa.RecordBatchReader.from_stream(Batches(SCHEMA, gen()))
    reader.read_next_batch()
    with pytest.raises(OSError, match="disk on fire"):
        reader.read_next_batch()


def test_stream_rejects_a_batch_of_another_schema():
    other = Batch(qv.schema([qv.field("x", qv.int64())]), [_batch(0, 1).columns[0]])
    reader = pa.RecordBatchReader.from_stream(Batches(SCHEMA, [other]))
    with pytest.raises(pa.ArrowInvalid, match="expected every batch"):
        reader.read_next_batch()


def test_stream_source_needs_a_schema():
    with pytest.raises(ArrowTypeError, match="schema"):
        export_stream([_batch(0, 1)])
    capsule = export_stream([_batch(0, 1)], schema=SCHEMA)
    assert pa.RecordBatchReader._import_from_c_capsule(capsule).read_all().num_rows == 1


def test_unread_stream_capsule_releases_everything():
    gc.collect()
    before = live_exports()
    capsule = export_stream(Batches(SCHEMA, [_batch(0, 2)]))
    assert live_exports() == before + 1
    del capsule
    gc.collect()
    assert live_exports() == before


def test_imported_array_stream_can_be_passed_on_unread():
    chunked = pa.chunked_array([[1, 2], [3]], pa.int16())
    reader = import_stream(chunked)
    assert isinstance(reader, ArrowStreamReader)
    again = pa.chunked_array(reader)
    assert again.equals(chunked)
    assert again.num_chunks == 2


def test_imported_struct_stream_in_arrays_mode_passes_on_as_batches():
    table = pa.table({"a": [1, 2, 3]})
    back = pa.RecordBatchReader.from_stream(import_stream(table, arrays=True)).read_all()
    assert back.equals(table)


# --------------------------------------------------------------------------------------
# other consumers


def test_polars_builds_a_dataframe_from_a_quiver_batch():
    pl = pytest.importorskip("polars")
    df = pl.DataFrame(_batch(0, 5))
    assert df.columns == ["a", "s"]
    assert df["a"].to_list() == [0, 1, 2, 3, 4]
    assert df["s"].to_list() == ["a", "b", "c", "d", "e"]
    del df
    gc.collect()


def test_polars_reads_a_quiver_stream_and_quiver_reads_polars():
    pl = pytest.importorskip("polars")
    df = pl.DataFrame(Batches(SCHEMA, [_batch(0, 2), _batch(2, 2)]))
    assert df["a"].to_list() == [0, 1, 2, 3]
    series = import_array(df["a"])
    assert series.type == qv.int64()
    assert series.to_pylist() == [0, 1, 2, 3]
    reader = import_stream(df, arrays=True)
    assert reader.field.type.field("s").type == qv.string_view()
    reader.close()


# --------------------------------------------------------------------------------------
# quiver's own RecordBatch, ChunkedArray and Table (the protocol methods are defined on the classes)


@needs_batch
def test_quiver_table_and_batch_speak_the_protocol():
    from quiver.batch import ChunkedArray, RecordBatch, Table

    b1, b2 = _batch(0, 2), _batch(2, 3)
    q1 = RecordBatch(SCHEMA, b1.columns)
    q2 = RecordBatch(SCHEMA, b2.columns)
    table = Table(SCHEMA, [q1, q2])
    assert pa.table(table).equals(pa.Table.from_batches([_expected(0, 2), _expected(2, 3)]))
    assert pa.record_batch(q1).equals(_expected(0, 2))
    assert pa.schema(table).metadata == {b"k": b"v"}
    chunked = ChunkedArray([b1.columns[0], b2.columns[0]])
    assert pa.chunked_array(chunked).to_pylist() == [0, 1, 2, 3, 4]


@needs_batch
def test_polars_and_duckdb_consume_a_quiver_table():
    pl = pytest.importorskip("polars")
    duckdb = pytest.importorskip("duckdb")
    from quiver.batch import RecordBatch, Table

    qtable = Table(SCHEMA, [RecordBatch(SCHEMA, _batch(0, 4).columns)])
    assert pl.DataFrame(qtable)["a"].to_list() == [0, 1, 2, 3]
    con = duckdb.connect()
    assert con.sql("select sum(a) from qtable").fetchall() == [(6,)]
    con.close()


@needs_batch
def test_ipc_stream_reader_exports_lazily(tmp_path):
    from quiver.ipc import reader as ipc_reader

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, _expected(0, 2).schema) as writer:
        writer.write_batch(_expected(0, 2))
        writer.write_batch(_expected(2, 2))
    path = tmp_path / "s.arrows"
    path.write_bytes(sink.getvalue().to_pybytes())
    reader = ipc_reader.RecordBatchStreamReader(str(path))
    table = pa.RecordBatchReader.from_stream(reader).read_all()
    assert table.column("a").to_pylist() == [0, 1, 2, 3]


@needs_batch
def test_ipc_file_reader_exports_as_a_stream(tmp_path):
    from quiver.ipc import reader as ipc_reader

    path = tmp_path / "f.arrow"
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, _expected(0, 1).schema) as w:
        w.write_batch(_expected(0, 3))
        w.write_batch(_expected(3, 1))
    reader = ipc_reader.RecordBatchFileReader(str(path))
    table = pa.table(reader)
    assert table.column("a").to_pylist() == [0, 1, 2, 3]
    assert table.column("s").to_pylist() == ["a", "b", "c", "d"]
