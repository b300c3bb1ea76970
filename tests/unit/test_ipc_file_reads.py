"""The file reader's positional reads: large blocks in pieces on the pool, short reads."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.ipc as pipc
import pytest

import quiver.ipc as ipc
from quiver import errors as E
from quiver.ipc import reader


@pytest.fixture
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Big reads from 4 KiB, in 8 KiB pieces, so that small files exercise the pieces."""
    monkeypatch.setattr(reader, "_BIG_READ", 4096)
    monkeypatch.setattr(reader, "_READ_PIECE", 8192)
    monkeypatch.setattr("quiver.ipc.compression.pool.PARALLEL_THRESHOLD", 0)


def _write(path: Path, compression: str | None) -> pa.Table:
    rng = np.random.default_rng(5)
    table = pa.table(
        {
            "i": rng.integers(0, 1 << 40, 20_000),
            "s": pa.array([f"v{k % 97}" for k in range(20_000)]),
        }
    )
    opts = pipc.IpcWriteOptions(compression=compression)
    with pipc.new_file(path, table.schema, options=opts) as w:
        w.write_table(table, max_chunksize=7_000)
    return table


@pytest.mark.parametrize("compression", [None, "lz4", "zstd"])
@pytest.mark.parametrize("threads", [True, False])
def test_pieces_read_what_a_whole_read_reads(
    tmp_path: Path,
    small_pieces: None,
    compression: str | None,
    threads: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = tmp_path / "t.arrow"
    table = _write(path, compression)
    pieces = []
    pooled = reader.run_pooled

    def counting(fn, sizes, **kwargs):
        pieces.append(len(sizes))
        return pooled(fn, sizes, **kwargs)

    monkeypatch.setattr(reader, "run_pooled", counting)
    with ipc.open_file(path, use_threads=threads) as r:
        got = r.read_all()
    assert pieces and max(pieces) > 1
    assert got.to_pylist() == table.to_pylist()
    with ipc.open_file(path.read_bytes()) as r:
        assert r.read_all().to_pylist() == table.to_pylist()


def test_a_file_cut_short_after_opening_is_a_truncation_error(
    tmp_path: Path, small_pieces: None
) -> None:
    path = tmp_path / "t.arrow"
    _write(path, None)
    with ipc.open_file(path) as r:
        last = r.footer.record_batches[-1]
        os.truncate(path, last.offset + 100)
        with pytest.raises(E.TruncatedError, match="the file changed"):
            r.get_batch(r.num_record_batches - 1)
