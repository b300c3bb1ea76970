"""Tests for quiver.ipc.writer: the stream and file writers."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.ipc as pipc

import quiver as qv
import quiver.ipc as ipc
from quiver.ipc import metadata as md
from quiver.ipc.decoder import END, MessageDecoder


def test_v4_run_end_encoded_columns_cross_with_pyarrow_both_ways() -> None:
    ree = pa.RunEndEncodedArray.from_arrays(pa.array([2, 3], pa.int32()), pa.array(["a", None]))
    table = pa.table({"r": ree})
    sink = pa.BufferOutputStream()
    opts = pipc.IpcWriteOptions(metadata_version=pipc.MetadataVersion.V4)
    with pipc.new_stream(sink, table.schema, options=opts) as w:
        w.write_table(table)
    batch = next(iter(ipc.open_stream(sink.getvalue().to_pybytes())))
    assert batch.column(0).to_pylist() == ["a", "a", None]
    out = ipc.BufferOutputStream()
    with ipc.new_stream(out, batch.schema, metadata_version="V4") as w:
        w.write_batch(batch)
    assert pipc.open_stream(pa.py_buffer(out.getvalue())).read_all().equals(table)


def _record_batch_headers(data: bytes) -> list[md.RecordBatch]:
    dec = MessageDecoder()
    dec.feed(data)
    dec.feed_eof()
    out = []
    while (raw := dec.next_message()) is not END:
        if isinstance(raw.message.header, md.RecordBatch):
            out.append(raw.message.header)
    return out


def test_seeds_worked_example_has_nodes_and_buffers_in_pre_order() -> None:
    # col1: Struct<a: Int32, b: List<item: Int64>, c: Float64>, col2: Utf8
    col1 = qv.array(
        [{"a": 1, "b": [1, 2], "c": 0.5}, None, {"a": None, "b": None, "c": 1.5}],
        qv.struct([("a", qv.int32()), ("b", qv.list_(qv.int64())), ("c", qv.float64())]),
    )
    col2 = qv.array(["x", "yy", None])
    batch = qv.record_batch({"col1": col1, "col2": col2})
    sink = ipc.BufferOutputStream()
    with ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch)
    (header,) = _record_batch_headers(sink.getvalue())
    # FieldNodes (length, null_count): col1, col1.a, col1.b, col1.b.item, col1.c, col2;
    # the null struct row is null in every child too, as built from Python
    assert header.nodes.tolist() == [[3, 1], [3, 2], [3, 2], [2, 0], [3, 1], [3, 1]]
    lengths = header.buffers[:, 1].tolist()
    offsets = header.buffers[:, 0].tolist()
    # buffers: col1 validity; a validity, a values; b validity, b offsets;
    # b.item validity (absent: no nulls), b.item values; c validity, c values;
    # col2 validity, col2 offsets, col2 data
    assert len(lengths) == 12
    assert lengths == [1, 1, 12, 1, 16, 0, 16, 1, 24, 1, 16, 3]
    assert all(o % 8 == 0 for o in offsets)
    assert pipc.open_stream(pa.py_buffer(sink.getvalue())).read_all().to_pylist() == (
        batch.to_pylist()
    )
