"""Compressed bodies of files left in the file: the decoders read each buffer when they
decode it (reader._raw_deferred, body.DeferredBody, compression.StoredRange)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.ipc as pipc
import pytest

import quiver.ipc as ipc
from quiver import errors as E
from quiver.ipc import body, reader


@pytest.fixture
def deferred(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """Defer bodies from 1 KiB, and record every deferred read as (offset, bytes)."""
    monkeypatch.setattr(reader, "_DEFERRED_BODY", 1024)
    monkeypatch.setattr(reader, "_DEFERRED_BUFFER", 0)
    reads: list[tuple[int, int]] = []
    real = reader._RandomAccess.read_into

    def spy(self: reader._RandomAccess, offset: int, out: np.ndarray) -> None:
        reads.append((offset, out.nbytes))
        real(self, offset, out)

    monkeypatch.setattr(reader._RandomAccess, "read_into", spy)
    return reads


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


def _write(path: Path, table: pa.Table, codec: str, chunk: int | None = 10_000) -> None:
    opts = pipc.IpcWriteOptions(compression=codec)
    with pipc.new_file(path, table.schema, options=opts) as w:
        w.write_table(table, max_chunksize=chunk)


def _outcome(source: object, **kwargs: object) -> object:
    """Every batch's values, or the error (type and message) reading stopped at."""
    try:
        with ipc.open_file(source, **kwargs) as r:
            return [r.get_batch(i).to_pylist() for i in range(r.num_record_batches)]
    except E.ArrowError as exc:
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
@pytest.mark.parametrize("threads", [True, False])
def test_deferred_bodies_read_what_pyarrow_wrote(
    tmp_path: Path, deferred: list[tuple[int, int]], codec: str, threads: bool
) -> None:
    path = tmp_path / "t.arrow"
    table = _table()
    _write(path, table, codec)
    with ipc.open_file(path, use_threads=threads) as r:
        got = r.read_all()
    assert deferred, "the deferred path was not taken"
    assert got.to_pylist() == table.to_pylist()
    # the raw (-1) buffers are arrays of their own: later decodes did not overwrite them
    noise = np.concatenate([np.asarray(c) for c in got.column(0).chunks])
    assert (noise == table.column("noise").to_numpy()).all()


def test_only_the_projected_columns_are_read(
    tmp_path: Path, deferred: list[tuple[int, int]]
) -> None:
    path = tmp_path / "t.arrow"
    table = _table()
    _write(path, table, "zstd", chunk=None)
    with ipc.open_file(path, columns=["f"]) as r:
        got = r.read_all()
        block = r.footer.record_batches[0]
    assert got.column(0).to_pylist() == table.column("f").to_pylist()
    body_read = sum(n for _, n in deferred)
    # the prefixes of the f buffers and their payloads: a small part of the whole body
    assert 0 < body_read < block.body_length // 2
    assert all(block.offset <= o < block.offset + block.meta_data_length + block.body_length
               for o, _ in deferred)


def test_a_deferred_body_at_the_default_size(tmp_path: Path) -> None:
    path = tmp_path / "t.arrow"
    table = _table(300_000)  # bodies of several MB
    _write(path, table, "lz4", chunk=None)
    taken = []
    real = body.DeferredBody.__init__

    def spy(self: body.DeferredBody, *args: object) -> None:
        taken.append(args)
        real(self, *args)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(body.DeferredBody, "__init__", spy)
        with ipc.open_file(path) as r:
            got = r.read_all()
    assert taken
    assert got.to_pylist() == table.to_pylist()


def test_memory_mapped_and_in_memory_files_are_not_deferred(
    tmp_path: Path, deferred: list[tuple[int, int]]
) -> None:
    path = tmp_path / "t.arrow"
    table = _table()
    _write(path, table, "lz4")
    assert _outcome(path, memory_map=True) == _outcome(path.read_bytes())
    assert not deferred


def test_uncompressed_bodies_are_read_whole(
    tmp_path: Path, deferred: list[tuple[int, int]]
) -> None:
    path = tmp_path / "t.arrow"
    table = _table()
    with pipc.new_file(path, table.schema) as w:
        w.write_table(table)
    assert _outcome(path) == _outcome(path.read_bytes())
    assert not deferred  # no StoredRange reads: the body came in one read


def test_a_file_cut_short_is_a_truncation_error(
    tmp_path: Path, deferred: list[tuple[int, int]]
) -> None:
    path = tmp_path / "t.arrow"
    _write(path, _table(), "zstd")
    with ipc.open_file(path) as r:
        last = r.footer.record_batches[-1]
        os.truncate(path, last.offset + last.meta_data_length + 64)
        with pytest.raises(E.TruncatedError, match="the file changed"):
            r.get_batch(r.num_record_batches - 1)


def test_a_lying_length_is_refused_before_reading_the_payloads(
    tmp_path: Path, deferred: list[tuple[int, int]]
) -> None:
    path = tmp_path / "t.arrow"
    _write(path, _table(), "lz4", chunk=None)
    data = bytearray(path.read_bytes())
    with ipc.open_file(bytes(data)) as r:
        block = r.footer.record_batches[0]
        body_start = block.offset + block.meta_data_length
        first = r._raw(block, 0, "record batch").message.header.buffers[1]  # noise values
    at = body_start + int(first[0])
    data[at : at + 8] = (1 << 50).to_bytes(8, "little")
    path.write_bytes(bytes(data))
    with ipc.open_file(path) as r, pytest.raises(E.LimitExceeded, match="the limit"):
        r.get_batch(0)
    assert all(n <= 8 for _, n in deferred)  # prefixes only


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
def test_damaged_bodies_fail_as_whole_reads_fail(
    tmp_path: Path, deferred: list[tuple[int, int]], codec: str
) -> None:
    """Byte flips across the bodies: the deferred read gives the values or the error
    (type and message) that reading the same bytes from memory gives."""
    path = tmp_path / "t.arrow"
    _write(path, _table(3_000), codec, chunk=1_000)
    clean = path.read_bytes()
    with ipc.open_file(clean) as r:
        spans = [
            (b.offset + b.meta_data_length, b.offset + b.meta_data_length + b.body_length)
            for b in r.footer.record_batches
        ]
    rng = np.random.default_rng(3)
    positions = sorted({int(rng.integers(s, e)) for s, e in spans for _ in range(25)})
    differed = 0
    for pos in positions:
        data = bytearray(clean)
        data[pos] ^= 0x5A
        path.write_bytes(bytes(data))
        deferred.clear()
        got = _outcome(path)
        assert deferred
        want = _outcome(bytes(data))
        assert got == want, pos
        differed += want != _outcome(clean)
    assert differed > 0  # the flips did reach the decoders


def test_zero_length_buffers_of_a_default_size_body(tmp_path: Path) -> None:
    """An all-empty string column in a body deferred at the default sizes (found in
    review: its zero-length data buffer came back as a StoredRange)."""
    rows = 200_000
    table = pa.table(
        {
            "x": np.random.default_rng(0).integers(0, 1 << 60, rows),
            "s": pa.array([""] * rows),
        }
    )
    path = tmp_path / "t.arrow"
    _write(path, table, "zstd", chunk=None)
    for threads in (True, False):
        with ipc.open_file(path, use_threads=threads) as r:
            got = r.get_batch(0)
        assert got.to_pylist() == table.to_batches()[0].to_pylist()
        for column in got.columns:
            assert all(b is None or isinstance(b, np.ndarray) for b in column.buffers)


def test_an_unused_dense_union_child(tmp_path: Path, deferred: list[tuple[int, int]]) -> None:
    rows = 20_000
    union = pa.UnionArray.from_dense(
        pa.array(np.zeros(rows, np.int8)),
        pa.array(np.arange(rows, dtype=np.int32)),
        [pa.array(np.arange(rows) * 3), pa.array([], pa.float64())],
    )
    table = pa.table({"u": union})
    path = tmp_path / "t.arrow"
    _write(path, table, "lz4", chunk=None)
    with ipc.open_file(path) as r:
        got = r.get_batch(0)
    assert deferred
    unused = got.column(0).children[1]
    assert all(b is None or isinstance(b, np.ndarray) for b in unused.buffers)
    assert pa.record_batch(got).to_pylist() == table.to_batches()[0].to_pylist()


@pytest.mark.parametrize("threads", [True, False])
def test_the_decompressed_size_limit_is_per_buffer_on_every_path(
    tmp_path: Path, deferred: list[tuple[int, int]], threads: bool
) -> None:
    """IpcLimits.max_decompressed_size bounds one buffer: two buffers that each fit read
    from memory and from a file alike, with or without threads (found in review)."""
    rows = 300_000
    table = pa.table({"a": np.arange(rows), "b": np.arange(rows) * 2})  # 2.4 MB each
    path = tmp_path / "t.arrow"
    _write(path, table, "zstd", chunk=None)
    limits = ipc.IpcLimits(max_decompressed_size=2_400_100)
    want = table.to_pylist()
    assert _outcome(path.read_bytes(), limits=limits, use_threads=threads) == [want]
    assert _outcome(path, limits=limits, use_threads=threads) == [want]
    tight = ipc.IpcLimits(max_decompressed_size=2_000_000)
    got = _outcome(path, limits=tight, use_threads=threads)
    assert got == _outcome(path.read_bytes(), limits=tight, use_threads=threads)
    assert got[0] == "LimitExceeded"
