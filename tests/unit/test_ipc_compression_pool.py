"""Tests for quiver.ipc.compression.pool: the compression thread pool."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from quiver.errors import ArrowInvalidArgument, CompressionError, LimitExceeded
from quiver.ipc import compression as c
from tests.unit._compression_helpers import CODECS, _data, _prefixed, _stored


def _many(n: int = 6, size: int = 400_000) -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    return [np.cumsum(rng.integers(0, 50, size // 8)).view(np.uint8) for _ in range(n)]


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("threads", [True, False, 3])
def test_many_buffers_round_trip_threaded_or_serial(codec: str, threads) -> None:
    raws = [*_many(), None, np.zeros(0, np.uint8)]
    packed = c.compress_buffers(codec, raws, threads=threads)
    serial = c.compress_buffers(codec, raws, threads=False)
    assert [[bytes(memoryview(p)) for p in a] for a in packed] == [
        [bytes(memoryview(p)) for p in b] for b in serial
    ]
    assert packed[-2] == [] and packed[-1] == []
    stored = [_stored(p) for p in packed[:-2]] + [None, np.zeros(0, np.uint8)]
    out = c.decompress_buffers(codec, stored, max_uncompressed=1 << 24, threads=threads)
    for got, want in zip(out[:-2], raws[:-2]):
        assert np.array_equal(got, want)
    assert out[-2] is None and out[-1].nbytes == 0


def test_many_buffers_limit_applies_to_their_sum() -> None:
    raws = _many(4, 100_000)
    stored = [_stored(p) for p in c.compress_buffers("zstd", raws)]
    with pytest.raises(LimitExceeded, match=r"total <= 250000.*found 400000"):
        c.decompress_buffers("zstd", stored, max_uncompressed=250_000)


def test_negative_thread_count_is_invalid_argument() -> None:
    with pytest.raises(ArrowInvalidArgument, match="threads"):
        c.compress_buffers("lz4", _many(3), threads=-2)


@pytest.mark.parametrize("threads", [False, True])
def test_many_pyarrow_frames_on_the_pool(walk: str, threads: bool) -> None:
    raws = [
        _data(k, n, seed=i)
        for i, (k, n) in enumerate(
            [("random", 900_000), ("text", 700_000), ("mixed", 500_000), ("random", 1), ("text", 0)]
        )
    ]
    stored = [_prefixed(len(r), pa.compress(r, "lz4", asbytes=True)) if r else None for r in raws]
    out = c.decompress_buffers("lz4", stored, max_uncompressed=1 << 30, threads=threads)
    assert [None if o is None else o.tobytes() for o in out] == [r or None for r in raws]


def test_pool_runs_the_largest_first_and_small_ones_inline(monkeypatch) -> None:
    from concurrent.futures import Future

    submitted: list[int] = []

    class Pool:
        def submit(self, fn, i):
            submitted.append(i)
            future: Future = Future()
            future.set_result(fn(i))
            return future

    monkeypatch.setattr(c.pool, "_pool", lambda workers: Pool())
    sizes = [10, 5 << 20, 100, 9 << 20, 7 << 20, 3]
    doubled = [i * 2 for i in range(6)]
    assert c.run_parallel(lambda i: i * 2, sizes, threads=2, min_bytes=1 << 16) == doubled
    assert submitted == [3, 4, 1]
    submitted.clear()
    assert c.run_parallel(lambda i: i * 2, sizes, threads=1, min_bytes=1) == doubled
    three = [10, 5 << 20, 3]
    assert c.run_parallel(lambda i: i * 2, three, threads=2, min_bytes=1 << 16) == [0, 2, 4]
    assert c.run_parallel(lambda i: i * 2, sizes, threads=2, min_bytes=8 << 20) == doubled
    assert submitted == []  # serial, or a single large buffer: no hand-off


def test_pool_raises_the_first_failing_buffers_error() -> None:
    sizes = [1 << 20, 10, 2 << 20, 5]

    def fn(i: int) -> int:
        if i in (1, 2):
            raise CompressionError(f"buffer {i}")
        return i

    with pytest.raises(CompressionError, match="buffer 1"):
        c.run_parallel(fn, sizes, threads=2, min_bytes=1 << 16)
