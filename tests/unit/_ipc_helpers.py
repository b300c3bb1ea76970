"""IPC helpers shared by the reader, writer, body and decoder tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.ipc as pipc

import quiver as qv
import quiver.ipc as ipc
from quiver.ipc.body import V4, V5
from tests.ipc_cases import all_type_arrays


def _stream(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue().to_pybytes()


def _file(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue().to_pybytes()


TABLE = pa.table({"a": [1, 2, 3], "s": ["x", None, "zzz"], "l": [[1], [], None]})


CASES = all_type_arrays()


VERSIONS = [V4, V5]


def _quiver_batch(table: pa.Table) -> qv.RecordBatch:
    sink = pa.BufferOutputStream()
    with pipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    (batch,) = list(ipc.open_stream(sink.getvalue().to_pybytes()))
    return batch


def _windows(n: int) -> list[tuple[int, int]]:
    """Whole, byte-aligned and unaligned slices (and an empty one) of an n-row batch."""
    return [(0, n), (8, n - 8), (3, n - 5), (1, 1), (n, 0), (16, n - 16)]


def _plain_table(rows: int, nulls: bool) -> pa.Table:
    """A batch of the kinds the compiled plan handles inline, with or without nulls."""
    rng = np.random.default_rng(rows)
    mask = rng.random(rows) < 0.3 if nulls else None
    words = np.array([f"w{i}" * (i % 4) for i in range(50)], dtype=object)[
        rng.integers(0, 50, rows)
    ]
    return pa.table(
        {
            "i8": pa.array(rng.integers(-100, 100, rows).astype(np.int8), mask=mask),
            "i64": pa.array(rng.integers(0, 1 << 40, rows), mask=mask),
            "f32": pa.array(rng.random(rows).astype(np.float32), mask=mask),
            "b": pa.array(rng.random(rows) > 0.5, mask=mask),
            "s": pa.array(words, pa.string(), mask=mask),
            "ls": pa.array(words, pa.large_string(), mask=mask),
            "bin": pa.array([w.encode() for w in words], pa.binary(), mask=mask),
            "d128": pa.array(rng.integers(0, 1000, rows), mask=mask).cast(pa.decimal128(21, 2)),
            "ts": pa.array(rng.integers(0, 1 << 50, rows), pa.timestamp("us"), mask=mask),
            "fsb": pa.array([b"abcd"] * rows, pa.binary(4), mask=mask),
            "dict": pa.array(words, pa.string()).dictionary_encode(),
        }
    )


def _table(rows: int = 30_000) -> pa.Table:
    rng = np.random.default_rng(11)
    return pa.table(
        {
            "noise": rng.integers(0, 1 << 62, rows),  # incompressible: stored raw (-1)
            "small": rng.integers(0, 10, rows),  # compresses well
            "s": pa.array([f"w{k % 53}" if k % 7 else None for k in range(rows)]),
            "f": rng.random(rows),
            "empty": pa.array([None] * rows, pa.int32()),  # validity only, values empty
        }
    )


def _write_deferred(path: Path, table: pa.Table, codec: str, chunk: int | None = 10_000) -> None:
    opts = pipc.IpcWriteOptions(compression=codec)
    with pipc.new_file(path, table.schema, options=opts) as w:
        w.write_table(table, max_chunksize=chunk)
