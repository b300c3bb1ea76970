"""Tests for quiver.ipc.writer: the stream and file writers."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.ipc as pipc

import quiver.ipc as ipc


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
