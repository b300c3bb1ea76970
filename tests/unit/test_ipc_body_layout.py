"""The body layout of the seeds' worked example, and what projection leaves untouched."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.ipc as pipc
import pytest

import quiver as qv
import quiver.ipc as ipc
from quiver.ipc import metadata as md
from quiver.ipc.decoder import END, MessageDecoder


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


def test_projection_never_decompresses_a_skipped_column() -> None:
    rng = np.random.default_rng(1)
    table = pa.table({"keep": rng.integers(0, 5, 100_000), "skip": rng.integers(0, 5, 100_000)})
    sink = pa.BufferOutputStream()
    with pipc.new_file(sink, table.schema, options=pipc.IpcWriteOptions(compression="zstd")) as w:
        w.write_table(table)
    data = bytearray(sink.getvalue().to_pybytes())
    reader = ipc.open_file(bytes(data))
    block = reader.footer.record_batches[0]
    raw = reader._raw(block, 0, "record batch")
    header = raw.message.header
    offset, length = header.buffers[3].tolist()  # the skipped column's values buffer
    start = raw.body_offset + offset + 8  # past the uncompressed-length prefix
    data[start : start + length - 8] = b"\x00" * (length - 8)
    broken = bytes(data)
    with pytest.raises(qv.CompressionError):
        ipc.open_file(broken).get_batch(0)
    kept = ipc.open_file(broken, columns=["keep"]).get_batch(0)
    assert kept.column(0).to_pylist() == table.column("keep").to_pylist()


def test_uncompressed_buffers_of_a_batch_are_views_of_one_body() -> None:
    table = pa.table({"a": np.arange(10), "b": np.arange(10.0)})
    sink = pa.BufferOutputStream()
    with pipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    data = sink.getvalue().to_pybytes()
    batch = next(iter(ipc.open_stream(data)))
    a, b = (np.asarray(c) for c in batch.columns)
    src = np.frombuffer(data, np.uint8)
    assert np.shares_memory(a, src) and np.shares_memory(b, src)
