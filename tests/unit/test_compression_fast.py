"""Tests for the fast decoders of quiver.ipc.compression: the LZ4 frame walk and zstd
read straight into the output.  Each is checked against the library decoders (python-lz4,
zstandard, pyarrow) on frames of many shapes, and on truncated and corrupted frames."""

from __future__ import annotations

import lz4.frame
import numpy as np
import pyarrow as pa
import pytest
import zstandard

from quiver.errors import CompressionError, FormatError
from quiver.ipc import compression as c

KIB = 1 << 10
#: sizes around the 64 KiB block boundaries, and odd ones
SIZES = [0, 1, 7, 64 * KIB - 1, 64 * KIB, 64 * KIB + 1, 3 * 64 * KIB + 5, 300_001]


def _prefixed(n: int, payload: bytes) -> np.ndarray:
    return np.frombuffer(n.to_bytes(8, "little", signed=True) + payload, np.uint8)


def _data(kind: str, n: int, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    if kind == "random":
        return rng.integers(0, 256, n, dtype=np.uint8).tobytes()
    if kind == "text":
        words = [b"value-%d," % i for i in range(300)]
        return b"".join(words[i] for i in rng.integers(0, 300, n // 4 + 1))[:n]
    # half random, half compressible, in 48 KiB runs: frames of mixed raw and compressed blocks
    out = bytearray()
    while len(out) < n:
        out += _data("random" if len(out) // (48 * KIB) % 2 else "text", 48 * KIB, seed + len(out))
    return bytes(out[:n])


@pytest.fixture(params=["by ratio", "always"])
def walk(request, monkeypatch) -> str:
    """Run a test as configured, and again with the walk taking every linked frame."""
    if request.param == "always":
        monkeypatch.setattr(c.lz4frame, "LZ4_LINKED_COMPRESSED_RATIO", float("inf"))
    return request.param


def _walk(payload: bytes, n: int) -> np.ndarray | None:
    return c._lz4_walk(np.frombuffer(payload, np.uint8), n, library_fits=True)


def _decode(payload: bytes, n: int) -> np.ndarray:
    return c.decompress_buffer("lz4", _prefixed(n, payload), max_uncompressed=1 << 30)


def test_xxh32_matches_reference_values() -> None:
    # XXH32 (seed 0) as the reference library (libxxhash) computes it
    assert c._xxh32_short(b"") == 0x02CC5D05
    assert c._xxh32_short(b"a") == 0x550D7456
    assert c._xxh32_short(b"abc") == 0x32D153FF
    assert c._xxh32_short(b"abcd") == 0xA3643705
    assert c._xxh32_short(b"Nobody inspects") == 0x9759CD1A


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
    assert c._lz4_walk(doubled, n, library_fits=True) is None
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
    assert not c._one_shot("lz4_frame", len(payload), n)
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
        out = c._lz4_walk(frame, n, library_fits=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out is not None and out.tobytes() == text
    assert peak < 3 * n + (1 << 20)
    assert _decode(packed, n).tobytes() == text
    for lie in (n + 1, n + 70_000, 300 * len(packed)):
        assert c._lz4_walk(frame, lie, library_fits=False) is None
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


def _library(payload: bytes) -> bytes | None:
    try:
        return lz4.frame.decompress(payload)
    except RuntimeError:
        return None


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


@pytest.mark.parametrize("kind", ["random", "text", "mixed"])
def test_flipped_bytes_agree_with_the_library_or_raise(walk: str, kind: str) -> None:
    raw = _data(kind, 2 * 64 * KIB + 100, seed=5)
    payload = pa.compress(raw, "lz4", asbytes=True)
    rng = np.random.default_rng(11)
    block_heads = []
    pos = 7
    while pos + 4 <= len(payload):
        block_heads.extend(range(pos, pos + 4))
        pos += 4 + (int.from_bytes(payload[pos : pos + 4], "little") & 0x7FFFFFFF)
    places = list(range(7)) + block_heads + list(rng.integers(0, len(payload), 150))
    for place in places:
        for bit in (0x01, 0x80):
            bad = bytearray(payload)
            bad[place] ^= bit
            want = _library(bytes(bad))
            try:
                got = _decode(bytes(bad), len(raw)).tobytes()
            except CompressionError as exc:
                assert "expected" in str(exc)
                continue
            # quiver accepts only what the library decodes, and then to the same bytes
            assert got == want, place


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


# --------------------------------------------------------------------------------------
# zstd straight into the output


@pytest.mark.parametrize("kind", ["random", "text", "mixed"])
@pytest.mark.parametrize("n", SIZES)
def test_zstd_reads_pyarrow_frames(kind: str, n: int) -> None:
    raw = _data(kind, n)
    payload = pa.compress(raw, "zstd", asbytes=True)
    out = c.decompress_buffer("zstd", _prefixed(n, payload), max_uncompressed=1 << 30)
    assert out.tobytes() == raw
    assert n == 0 or not out.flags.writeable


@pytest.mark.parametrize("content_size", [True, False])
@pytest.mark.parametrize("delta", [-1, 1, -5000])
def test_zstd_rejects_lying_lengths(content_size: bool, delta: int) -> None:
    raw = _data("mixed", 100_000)
    payload = zstandard.ZstdCompressor(write_content_size=content_size).compress(raw)
    with pytest.raises(CompressionError, match=f"expected .*{len(raw) + delta}"):
        c.decompress_buffer("zstd", _prefixed(len(raw) + delta, payload), max_uncompressed=1 << 30)


def test_zstd_every_truncation_is_a_compression_error() -> None:
    raw = _data("mixed", 300_000)
    payload = pa.compress(raw, "zstd", asbytes=True)
    for cut in sorted(set(range(0, 30)) | set(range(0, len(payload), 53))):
        with pytest.raises(CompressionError):
            c.decompress_buffer(
                "zstd", _prefixed(len(raw), payload[:cut]), max_uncompressed=1 << 30
            )


# --------------------------------------------------------------------------------------
# lz4 compression in pieces, and the pool


@pytest.mark.parametrize("kind", ["random", "text", "mixed"])
@pytest.mark.parametrize(
    "n", [c.LZ4_COMPRESS_CHUNK, c.LZ4_COMPRESS_CHUNK + 1, 3_000_001, 2 * c.LZ4_BIG_BLOCK + 5]
)
def test_large_lz4_buffers_are_frames_of_independent_4mib_blocks(kind: str, n: int) -> None:
    raw = np.frombuffer(_data(kind, n), np.uint8)
    parts = c.compress_buffer("lz4", raw)
    theirs = pa.compress(raw, "lz4", asbytes=True)
    if int.from_bytes(bytes(parts[0]), "little", signed=True) == -1:
        assert len(theirs) >= n and parts[1] is raw
        return
    payload = b"".join(bytes(p) for p in parts[1:])
    if n <= c.LZ4_COMPRESS_CHUNK:
        assert payload == theirs  # small buffers: Arrow C++'s frame, byte for byte
        return
    info = lz4.frame.get_frame_info(payload)
    assert info["block_linked"] is False and info["block_size"] == c.LZ4_BIG_BLOCK
    assert info["content_size"] == 0 and not info["content_checksum"]
    # a match across a 4 MiB block boundary is lost: the same size to 0.1%
    assert abs(len(payload) - len(theirs)) <= len(theirs) // 1000 + 64
    assert pa.decompress(payload, n, "lz4", asbytes=True) == raw.tobytes()
    assert lz4.frame.decompress(payload) == raw.tobytes()
    # the walk decodes the frame itself (independent blocks), not a library frame decoder
    assert _walk(payload, n).tobytes() == raw.tobytes()


def test_incompressible_lz4_blocks_are_stored_as_views() -> None:
    """Blocks that do not compress go out as views of the buffer (no copy)."""
    raw = np.frombuffer(_data("text", 3 * c.LZ4_BIG_BLOCK) + _data("random", c.LZ4_BIG_BLOCK),
                        np.uint8)
    parts = c.compress_buffer("lz4", raw)
    stored = [p for p in parts if isinstance(p, np.ndarray)]
    assert len(stored) == 1 and np.shares_memory(stored[0], raw)
    assert stored[0].nbytes == c.LZ4_BIG_BLOCK
    payload = b"".join(bytes(p) for p in parts[1:])
    assert pa.decompress(payload, raw.nbytes, "lz4", asbytes=True) == raw.tobytes()


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
    assert c._run(lambda i: i * 2, sizes, threads=2, min_bytes=1 << 16) == [i * 2 for i in range(6)]
    assert submitted == [3, 4, 1]
    submitted.clear()
    assert c._run(lambda i: i * 2, sizes, threads=1, min_bytes=1) == [i * 2 for i in range(6)]
    assert c._run(lambda i: i * 2, [10, 5 << 20, 3], threads=2, min_bytes=1 << 16) == [0, 2, 4]
    assert c._run(lambda i: i * 2, sizes, threads=2, min_bytes=8 << 20) == [i * 2 for i in range(6)]
    assert submitted == []  # serial, or a single large buffer: no hand-off


def test_pool_raises_the_first_failing_buffers_error() -> None:
    sizes = [1 << 20, 10, 2 << 20, 5]

    def fn(i: int) -> int:
        if i in (1, 2):
            raise CompressionError(f"buffer {i}")
        return i

    with pytest.raises(CompressionError, match="buffer 1"):
        c._run(fn, sizes, threads=2, min_bytes=1 << 16)


@pytest.mark.parametrize("level", [0, 3, 9, 12])
def test_lz4_levels_in_pieces_round_trip_through_pyarrow(level: int) -> None:
    raw = np.frombuffer(_data("mixed", 2 * c.LZ4_COMPRESS_CHUNK + 12_345, seed=level), np.uint8)
    parts = c.compress_buffer("lz4", raw, level=level)
    assert len(parts) > 2
    payload = b"".join(bytes(p) for p in parts[1:])
    assert pa.decompress(payload, raw.nbytes, "lz4", asbytes=True) == raw.tobytes()
    stored = np.frombuffer(b"".join(bytes(p) for p in parts), np.uint8)
    assert (
        c.decompress_buffer("lz4", stored, max_uncompressed=raw.nbytes).tobytes() == raw.tobytes()
    )


def _frame_of(blocks: bytes) -> bytes:
    """An LZ4 frame (independent 64 KiB blocks, no checksums) around ``blocks``."""
    head = bytearray(b"\x04\x22\x4d\x18" + bytes([0x60, 0x40]))
    head.append((c._xxh32_short(bytes(head[4:6])) >> 8) & 0xFF)
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
    assert c._lz4_walk(np.frombuffer(payload, np.uint8), 1, library_fits=False) is None
    stored = _prefixed(1, payload)
    if expected is None:
        with pytest.raises(CompressionError):
            c.decompress_buffer("lz4", stored, max_uncompressed=1 << 20)
    else:
        assert bytes(c.decompress_buffer("lz4", stored, max_uncompressed=1 << 20)) == expected
