"""Tests for quiver.interop streams and batches: pyarrow, polars and duckdb as consumers."""

from __future__ import annotations

import gc

import numpy as np
import pyarrow as pa
import pytest

import quiver as qv
from quiver.array import make_array
from quiver.errors import ArrowError, ArrowTypeError, NotSupported
from quiver.interop import (
    ArrowStreamReader,
    export_array,
    export_schema,
    export_stream,
    import_array,
    import_batch,
    import_stream,
    live_exports,
)

try:
    from quiver.batch import RecordBatch as _QuiverBatch
except ImportError:  # batch.py lands separately; a stand-in exercises the export side
    _QuiverBatch = None

needs_batch = pytest.mark.skipif(_QuiverBatch is None, reason="quiver.batch not available yet")


class Batch:
    """A duck-typed record batch (schema, columns, num_rows) that speaks the protocol."""

    def __init__(self, schema, columns):
        self.schema = schema
        self.columns = list(columns)
        self.num_rows = len(self.columns[0]) if self.columns else 0

    def __arrow_c_array__(self, requested_schema=None):
        return export_array(self, requested_schema)

    def __arrow_c_stream__(self, requested_schema=None):
        return export_stream(self, requested_schema)


class Batches:
    """A schema plus an iterable of batches, exported as a stream."""

    def __init__(self, schema, batches):
        self.schema = schema
        self.batches = batches

    def __iter__(self):
        return iter(self.batches)

    def __arrow_c_stream__(self, requested_schema=None):
        return export_stream(self, requested_schema)


SCHEMA = qv.schema([qv.field("a", qv.int64()), qv.field("s", qv.string())], {"k": "v"})


def _batch(start: int, n: int) -> Batch:
    ints = make_array(qv.int64(), n, [None, np.arange(start, start + n, dtype="<i8").view("u1")])
    text = "".join(chr(97 + (start + i) % 26) for i in range(n)).encode()
    offsets = np.arange(n + 1, dtype="<i4").view("u1")
    strings = make_array(qv.string(), n, [None, offsets, np.frombuffer(text, np.uint8)])
    return Batch(SCHEMA, [ints, strings])


def _expected(start: int, n: int) -> pa.RecordBatch:
    return pa.record_batch(
        {
            "a": pa.array(range(start, start + n), pa.int64()),
            "s": pa.array([chr(97 + (start + i) % 26) for i in range(n)]),
        }
    )


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


def test_stream_honours_an_equal_requested_schema_and_refuses_another():
    source = Batches(SCHEMA, [_batch(0, 2)])
    capsule = export_stream(source, export_schema(SCHEMA))
    assert pa.RecordBatchReader._import_from_c_capsule(capsule).read_all().num_rows == 2
    with pytest.raises(NotSupported, match="requested_schema"):
        export_stream(source, export_schema(qv.schema([qv.field("a", qv.int32())])))
    # same fields, other types: answered with the data's own schema (spec: best effort)
    other = qv.schema([qv.field("a", qv.int32()), qv.field("s", qv.string_view())])
    capsule = export_stream(source, export_schema(other))
    reader = pa.RecordBatchReader._import_from_c_capsule(capsule)
    assert reader.schema.field("s").type == pa.string()


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


# --------------------------------------------------------------------------------------
# import


def test_stream_import_yields_arrays_lazily_for_non_struct_streams():
    chunked = pa.chunked_array([[1, 2], [3]], pa.int16())
    reader = import_stream(chunked)
    assert reader.schema is None
    assert reader.field.type == qv.int16()
    chunks = list(reader)
    assert [len(ch) for ch in chunks] == [2, 1]
    assert import_array(chunked).to_pylist() == [1, 2, 3]


def test_stream_import_pulls_lazily_and_releases_at_end():
    pulled = []

    def gen():
        for i in range(3):
            pulled.append(i)
            yield pa.record_batch({"a": [i]})

    source = pa.RecordBatchReader.from_batches(pa.schema([("a", pa.int64())]), gen())
    reader = import_stream(source, arrays=True)
    assert pulled == []
    first = next(reader)
    assert pulled == [0]
    assert first.type == qv.struct([qv.field("a", qv.int64())])
    rest = list(reader)
    assert len(rest) == 2
    assert reader._stream is None  # released at the end of the stream


def test_stream_import_reports_producer_errors():
    def gen():
        yield pa.record_batch({"a": [1]})
        raise ValueError("bad batch")

    source = pa.RecordBatchReader.from_batches(pa.schema([("a", pa.int64())]), gen())
    reader = import_stream(source, arrays=True)
    next(reader)
    with pytest.raises(ArrowError, match="bad batch"):
        next(reader)


def test_stream_import_passes_requested_schema_to_producer():
    table = pa.table({"a": pa.array([1, 2], pa.int64())})
    reader = import_stream(table, qv.schema([qv.field("a", qv.int32())]), arrays=True)
    assert reader.field.type == qv.struct([qv.field("a", qv.int32())])


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


@needs_batch
def test_batch_import_from_pyarrow_is_zero_copy():
    p = _expected(0, 4)
    b = import_batch(p)
    assert b.num_rows == 4
    assert b.schema.names == ["a", "s"]
    address = b.columns[0].buffers[1].__array_interface__["data"][0]
    assert address == p.column(0).buffers()[1].address


@needs_batch
def test_stream_import_builds_record_batches_and_table():
    table = pa.table({"a": [1, 2, 3], "b": ["x", None, "z"]})
    reader = import_stream(table)
    assert reader.schema.names == ["a", "b"]
    batches = list(reader)
    assert sum(b.num_rows for b in batches) == 3
    again = pa.RecordBatchReader.from_stream(import_stream(table)).read_all()
    assert again.equals(table)


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


def test_duckdb_queries_a_quiver_batch_and_stream():
    duckdb = pytest.importorskip("duckdb")
    batch = _batch(0, 10)  # noqa: F841 - duckdb finds it by name (replacement scan)
    con = duckdb.connect()
    assert con.sql("select sum(a), count(*) from batch").fetchall() == [(45, 10)]
    stream = Batches(SCHEMA, [_batch(0, 3), _batch(3, 3)])  # noqa: F841 - found by name
    assert con.sql("select max(a), min(s) from stream").fetchall() == [(5, "a")]
    result = con.sql("select 7::bigint as x, 'hi' as y")
    reader = import_stream(result, arrays=True)
    (chunk,) = list(reader)
    assert chunk.children[0].to_pylist() == [7]
    con.close()


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
def test_import_table_from_pyarrow_polars_and_duckdb():
    from quiver.interop import import_table

    table = pa.table({"a": [1, 2, 3], "s": ["x", None, "z"]})
    q = import_table(table)
    assert q.num_rows == 3 and q.schema.names == ["a", "s"]
    assert q.column("s").to_pylist() == ["x", None, "z"]
    assert import_table(pa.record_batch(table.to_batches()[0])).num_rows == 3
    pl = pytest.importorskip("polars")
    from_polars = import_table(pl.DataFrame({"v": [1.5, None]}))
    assert from_polars.column("v").to_pylist() == [1.5, None]
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    from_duckdb = import_table(con.sql("select range as r from range(5)"))
    assert from_duckdb.column("r").to_pylist() == [0, 1, 2, 3, 4]
    con.close()
    with pytest.raises(ArrowTypeError, match="struct"):
        import_table(pa.chunked_array([[1]]))


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


@needs_batch
def test_import_batch_from_a_table_source_concatenates_chunks():
    table = pa.Table.from_batches([_expected(0, 2), _expected(2, 3)])
    batch = import_batch(table)
    assert batch.num_rows == 5
    assert batch.column(0).to_pylist() == [0, 1, 2, 3, 4]
    one = import_batch(pa.Table.from_batches([_expected(0, 2)]))
    assert one.column(1).to_pylist() == ["a", "b"]
