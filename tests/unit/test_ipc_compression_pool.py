"""Tests for quiver.ipc.compression.pool: the compression thread pool."""

from __future__ import annotations

import numpy as np
import pytest

from quiver.errors import (
    ArrowInvalidArgument,
    LimitExceeded,
)
from quiver.ipc import compression as c
from tests.unit._helpers import CODECS, _stored


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
