"""Tests for quiver.ipc.compression.lz4frame: the LZ4 frame walk."""

from __future__ import annotations

import lz4.frame
import numpy as np
import pytest
import zstandard

from quiver.errors import (
    CompressionError,
    FormatError,
)
from quiver.ipc import compression as c
from tests.unit._helpers import CODECS, _ints, _prefixed


@pytest.mark.parametrize("codec", CODECS)
def test_truncated_payload_is_a_format_error(codec: str) -> None:
    raw = _ints(1000)
    _, payload = c.compress_buffer(codec, raw)
    stored = _prefixed(raw.nbytes, bytes(payload)[:-7])
    with pytest.raises(CompressionError) as info:
        c.decompress_buffer(codec, stored, max_uncompressed=1 << 20)
    assert isinstance(info.value, FormatError)


def test_lz4_bytes_after_the_frame_are_rejected() -> None:
    raw = _ints(1000)
    payload = lz4.frame.compress(raw, store_size=False) + b"junk"
    with pytest.raises(CompressionError, match="expected one LZ4 frame, found 4 bytes"):
        c.decompress_buffer("lz4", _prefixed(raw.nbytes, payload), max_uncompressed=1 << 20)


@pytest.mark.parametrize("codec", CODECS)
def test_piecewise_decoding_stops_just_past_the_declared_length(monkeypatch, codec) -> None:
    import tracemalloc

    # 32 MiB of real output (a zstd frame without a content size, so only decoding tells),
    # 3 MiB declared: decoding in 1 MiB pieces stops early instead of producing all of it
    monkeypatch.setattr(c.codecs, "ONE_SHOT_MAX", 0)
    raw = np.zeros(32 << 20, np.uint8)
    if codec == "zstd":
        payload = zstandard.ZstdCompressor(write_content_size=False).compress(raw)
    else:
        payload = b"".join(bytes(p) for p in c.compress_buffer(codec, raw)[1:])
    tracemalloc.start()
    try:
        with pytest.raises(CompressionError, match="expected 3145728 uncompressed bytes, found"):
            c.decompress_buffer(codec, _prefixed(3 << 20, payload), max_uncompressed=1 << 30)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 12 << 20


@pytest.mark.parametrize("codec", CODECS)
def test_piecewise_decoding_rejects_truncated_payload(in_pieces, codec: str) -> None:
    raw = _ints(1000)
    _, payload = c.compress_buffer(codec, raw)
    with pytest.raises(CompressionError):
        c.decompress_buffer(
            codec, _prefixed(raw.nbytes, bytes(payload)[:-7]), max_uncompressed=1 << 20
        )


def test_piecewise_lz4_rejects_bytes_after_the_frame(in_pieces) -> None:
    raw = _ints(1000)
    payload = lz4.frame.compress(raw, store_size=False) + b"junk" * 20
    with pytest.raises(CompressionError, match="expected one LZ4 frame, found 80 bytes"):
        c.decompress_buffer("lz4", _prefixed(raw.nbytes, payload), max_uncompressed=1 << 20)
