"""Tests for quiver.ipc.compression.lz4frame: the LZ4 frame walk."""

from __future__ import annotations

import lz4.frame
import numpy as np
import pyarrow as pa
import pytest
import zstandard

from quiver.errors import CompressionError, FormatError
from quiver.ipc import compression as c
from tests.unit._compression_helpers import (
    CODECS,
    KIB,
    SIZES,
    _data,
    _decode,
    _ints,
    _prefixed,
    _walk,
)


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


def test_xxh32_matches_reference_values() -> None:
    # XXH32 (seed 0) as the reference library (libxxhash) computes it
    assert c.xxh32_short(b"") == 0x02CC5D05
    assert c.xxh32_short(b"a") == 0x550D7456
    assert c.xxh32_short(b"abc") == 0x32D153FF
    assert c.xxh32_short(b"abcd") == 0xA3643705
    assert c.xxh32_short(b"Nobody inspects") == 0x9759CD1A


@pytest.mark.parametrize("kind", ["random", "text", "mixed"])
@pytest.mark.parametrize("n", SIZES)
def test_walk_reads_pyarrow_frames(walk: str, kind: str, n: int) -> None:
    raw = _data(kind, n)
    payload = pa.compress(raw, "lz4", asbytes=True)
    if n:
        walked = _walk(payload, n)
        if kind == "random" or n <= 64 * KIB or walk == "always":
            assert walked is not None  # raw blocks, or one block: the walk takes it
        if walked is not None:
            assert walked.tobytes() == raw
            assert not walked.flags.writeable
    assert _decode(payload, n).tobytes() == raw


@pytest.mark.parametrize(
    "block_size",
    [
        lz4.frame.BLOCKSIZE_MAX64KB,
        lz4.frame.BLOCKSIZE_MAX256KB,
        lz4.frame.BLOCKSIZE_MAX1MB,
        lz4.frame.BLOCKSIZE_MAX4MB,
    ],
)
@pytest.mark.parametrize("linked", [True, False])
@pytest.mark.parametrize("store_size", [True, False])
@pytest.mark.parametrize("kind", ["random", "text", "mixed"])
def test_walk_reads_python_lz4_frames(
    walk: str, block_size: int, linked: bool, store_size: bool, kind: str
) -> None:
    raw = _data(kind, 5 * 64 * KIB + 3, seed=block_size)
    payload = lz4.frame.compress(
        raw, block_size=block_size, block_linked=linked, store_size=store_size
    )
    walked = _walk(payload, len(raw))
    if not linked or kind == "random" or walk == "always":
        assert walked is not None and walked.tobytes() == raw
    assert _decode(payload, len(raw)).tobytes() == raw


@pytest.mark.parametrize("block_checksum", [True, False])
@pytest.mark.parametrize("content_checksum", [True, False])
def test_frames_with_checksums_go_to_the_library(block_checksum, content_checksum) -> None:
    raw = _data("random", 200_000)
    payload = lz4.frame.compress(
        raw, content_checksum=content_checksum, block_checksum=block_checksum, store_size=False
    )
    walked = _walk(payload, len(raw))
    assert (walked is None) == (block_checksum or content_checksum)
    assert _decode(payload, len(raw)).tobytes() == raw


def test_walk_declines_odd_frames() -> None:
    raw = _data("random", 100_000)
    good = bytearray(pa.compress(raw, "lz4", asbytes=True))
    n = len(raw)
    assert _walk(bytes(good), n) is not None
    # a wrong header checksum, a dictionary id flag, an unknown block size, a content size
    # other than declared, bytes after the end mark, a strided view
    for mutate in (
        lambda b: b.__setitem__(6, b[6] ^ 1),
        lambda b: b.__setitem__(4, b[4] | 1),
        lambda b: b.__setitem__(5, 0x30),
        lambda b: b.extend(b"\0"),
    ):
        bad = bytearray(good)
        mutate(bad)
        assert _walk(bytes(bad), n) is None
    sized = lz4.frame.compress(raw, store_size=True)
    assert _walk(sized, n) is not None
    assert _walk(sized, n - 1) is None
    doubled = np.repeat(np.frombuffer(bytes(good), np.uint8), 2)[::2]
    assert c.lz4_walk(doubled, n, library_fits=True) is None
    assert _decode(bytes(doubled), n).tobytes() == raw


@pytest.mark.parametrize("kind", ["random", "text", "mixed"])
@pytest.mark.parametrize("delta", [-1, 1, -70_000, 70_000])
def test_walk_rejects_lying_lengths(walk: str, kind: str, delta: int) -> None:
    raw = _data(kind, 200_003)
    payload = pa.compress(raw, "lz4", asbytes=True)
    assert _walk(payload, len(raw) + delta) is None
    with pytest.raises(CompressionError, match=f"expected {len(raw) + delta} uncompressed"):
        _decode(payload, len(raw) + delta)


def test_frames_of_raw_blocks_are_walked_past_the_one_call_limit(monkeypatch) -> None:
    import tracemalloc

    monkeypatch.setattr(c.codecs, "ONE_SHOT_MAX", 64 * KIB)
    monkeypatch.setattr(c.codecs, "DECOMPRESS_CHUNK", 64 * KIB)
    n = 2_000_003
    raw = _data("random", n)
    payload = pa.compress(raw, "lz4", asbytes=True)
    assert not c.decompress_one_shot("lz4_frame", len(payload), n)
    stored = _prefixed(n, payload)
    tracemalloc.start()
    try:
        out = c.decompress_buffer("lz4", stored, max_uncompressed=1 << 30)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out.tobytes() == raw
    assert peak < n + (n >> 2)  # the output, no pieces joined
    assert _walk(payload, n) is not None
    # compressed blocks prove nothing: past the limit the output grows with what they
    # really produce, to at most twice that
    text = _data("text", n)
    packed = pa.compress(text, "lz4", asbytes=True)
    assert _walk(packed, n) is None  # cramjam's frame decoder would be faster, if it fit
    frame = np.frombuffer(packed, np.uint8)
    tracemalloc.start()
    try:
        out = c.lz4_walk(frame, n, library_fits=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out is not None and out.tobytes() == text
    assert peak < 3 * n + (1 << 20)
    assert _decode(packed, n).tobytes() == text
    for lie in (n + 1, n + 70_000, 300 * len(packed)):
        assert c.lz4_walk(frame, lie, library_fits=False) is None
        with pytest.raises(CompressionError, match=f"expected {lie} uncompressed bytes"):
            _decode(packed, lie)


def test_walk_never_allocates_more_than_the_blocks_can_reach() -> None:
    # 2000 compressed blocks of one byte each reach at most 264 bytes apiece
    blocks = b"".join(b"\x01\x00\x00\x00\x00" for _ in range(2000))
    frame = bytes(pa.compress(b"", "lz4", asbytes=True)[:7]) + blocks + b"\0\0\0\0"
    assert _walk(frame, 0) is None or _walk(frame, 0).nbytes == 0
    assert _walk(frame, 2000 * 264 + 1) is None
    with pytest.raises(CompressionError, match="expected"):
        _decode(frame, 1 << 29)


@pytest.mark.parametrize("kind", ["random", "text", "mixed"])
def test_every_truncation_is_a_compression_error(walk: str, kind: str) -> None:
    raw = _data(kind, 2 * 64 * KIB + 100, seed=3)
    payload = pa.compress(raw, "lz4", asbytes=True)
    # every cut in the headers, around each block header, and every 97th byte elsewhere
    cuts = set(range(0, 40)) | set(range(0, len(payload), 97))
    pos = 7
    while pos + 4 <= len(payload):
        cuts |= set(range(pos - 3, pos + 8))
        size = int.from_bytes(payload[pos : pos + 4], "little") & 0x7FFFFFFF
        pos += 4 + size
    for cut in sorted(x for x in cuts if 0 <= x < len(payload)):
        with pytest.raises(CompressionError) as info:
            _decode(payload[:cut], len(raw))
        assert isinstance(info.value, FormatError)
        assert "expected" in str(info.value)


def _frame_of(blocks: bytes) -> bytes:
    """An LZ4 frame (independent 64 KiB blocks, no checksums) around ``blocks``."""
    head = bytearray(b"\x04\x22\x4d\x18" + bytes([0x60, 0x40]))
    head.append((c.xxh32_short(bytes(head[4:6])) >> 8) & 0xFF)
    return bytes(head) + blocks + b"\x00\x00\x00\x00"


@pytest.mark.parametrize(
    ("blocks", "expected"),
    [
        # 200,000 empty stored blocks, then one byte
        (b"\x00\x00\x00\x80" * 200_000 + b"\x01\x00\x00\x80x", b"x"),
        # 100,000 one-byte stored blocks for a declared size of one byte
        (b"\x01\x00\x00\x80x" * 100_000, None),
        # 50,000 one-byte compressed blocks (each a literal 'x')
        (b"\x02\x00\x00\x00\x10x" * 50_000, None),
    ],
    ids=["empty", "too-many-raw", "tiny-compressed"],
)
def test_frames_of_many_tiny_blocks_are_left_to_the_c_decoders(
    blocks: bytes, expected: bytes | None
) -> None:
    """Found in review: the walk made one Python turn per block before looking at the
    declared size, so 16 MB of empty blocks took seconds and hundreds of MB.  The walk now
    declines them; the library decoders give the byte or say the frame holds more."""
    payload = _frame_of(blocks)
    assert c.lz4_walk(np.frombuffer(payload, np.uint8), 1, library_fits=False) is None
    stored = _prefixed(1, payload)
    if expected is None:
        with pytest.raises(CompressionError):
            c.decompress_buffer("lz4", stored, max_uncompressed=1 << 20)
    else:
        assert bytes(c.decompress_buffer("lz4", stored, max_uncompressed=1 << 20)) == expected
