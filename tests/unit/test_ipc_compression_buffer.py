"""Tests for quiver.ipc.compression.buffer: compressed buffer prefixes and stored ranges."""

from __future__ import annotations

from pathlib import Path

import lz4.frame
import numpy as np
import pyarrow as pa
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

import quiver.ipc as ipc
from quiver import errors as E
from quiver.errors import CompressionError, FormatError, LimitExceeded
from quiver.ipc import compression as c
from tests.conftest import SUPPLEMENT, require_shared
from tests.unit._compression_helpers import (
    CODECS,
    KIB,
    SIZES,
    _data,
    _decode,
    _ints,
    _prefixed,
    _stored,
    _walk,
)
from tests.unit._ipc_helpers import _table, _write_deferred


def test_a_lying_length_is_refused_before_reading_the_payloads(
    tmp_path: Path, deferred: list[tuple[int, int]]
) -> None:
    path = tmp_path / "t.arrow"
    _write_deferred(path, _table(), "lz4", chunk=None)
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


PA_NAME = {"lz4_frame": "lz4", "zstd": "zstd"}


@pytest.mark.parametrize("codec", CODECS)
def test_round_trip_restores_bytes(codec: str) -> None:
    raw = _ints()
    parts = c.compress_buffer(codec, raw)
    assert int.from_bytes(bytes(parts[0]), "little", signed=True) == raw.nbytes
    assert c.parts_length(parts) < raw.nbytes
    out = c.decompress_buffer(codec, _stored(parts), max_uncompressed=raw.nbytes)
    assert out.dtype == np.uint8
    assert np.array_equal(out, raw)


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("n", [100_000, 700_000])
def test_output_matches_pyarrow_codec_bytes(codec: str, n: int) -> None:
    # 5.6 MB of lz4: a frame of independent 4 MiB blocks, not Arrow C++'s linked 64 KiB
    # blocks (see compression.lz4_big_frame): pyarrow reads it, at the same size to 0.1%
    raw = _ints(n)
    parts = c.compress_buffer(codec, raw)
    payload = b"".join(bytes(p) for p in parts[1:])
    theirs = pa.compress(raw, PA_NAME[codec], asbytes=True)
    if codec == "lz4_frame" and raw.nbytes > c.LZ4_COMPRESS_CHUNK:
        assert len(parts) > 2
        assert abs(len(payload) - len(theirs)) <= len(theirs) // 1000 + 64
        assert pa.decompress(payload, raw.nbytes, "lz4", asbytes=True) == raw.tobytes()
    else:
        assert len(parts) == 2
        assert payload == theirs


@pytest.mark.parametrize("codec", CODECS)
def test_reads_buffers_compressed_by_pyarrow(codec: str) -> None:
    raw = np.frombuffer(b"".join(b"value-%d," % (i % 977) for i in range(20_000)), np.uint8)
    payload = pa.compress(raw, PA_NAME[codec], asbytes=True)
    out = c.decompress_buffer(codec, _prefixed(raw.nbytes, payload), max_uncompressed=1 << 30)
    assert out.tobytes() == raw.tobytes()


@pytest.mark.parametrize("codec", CODECS)
def test_pyarrow_decompresses_our_payload(codec: str) -> None:
    raw = _ints(5000)
    _, payload = c.compress_buffer(codec, raw, level=3)
    back = pa.decompress(payload, raw.nbytes, PA_NAME[codec], asbytes=True)
    assert back == raw.tobytes()


@pytest.mark.parametrize("codec", CODECS)
def test_empty_buffer_has_no_prefix(codec: str) -> None:
    assert c.compress_buffer(codec, np.zeros(0, np.uint8)) == []
    out = c.decompress_buffer(codec, np.zeros(0, np.uint8), max_uncompressed=0)
    assert out.nbytes == 0


@pytest.mark.parametrize("codec", CODECS)
def test_incompressible_buffer_is_left_raw_without_copy(codec: str) -> None:
    raw = np.random.default_rng(1).integers(0, 256, 1000, dtype=np.uint8)
    parts = c.compress_buffer(codec, raw)
    assert bytes(parts[0]) == b"\xff" * 8
    assert parts[1] is raw or np.shares_memory(np.asarray(parts[1]), raw)
    assert np.array_equal(c.decompress_buffer(codec, _stored(parts), max_uncompressed=0), raw)


@pytest.mark.parametrize("codec", CODECS)
def test_minus_one_prefix_returns_zero_copy_view(codec: str) -> None:
    stored = _prefixed(-1, b"abcdef")
    out = c.decompress_buffer(codec, stored, max_uncompressed=0)
    assert out.tobytes() == b"abcdef"
    assert np.shares_memory(out, stored)


@pytest.mark.parametrize("codec", CODECS)
def test_declared_length_over_limit_is_rejected_before_decompressing(codec: str) -> None:
    stored = _prefixed(1 << 50, b"not even a frame")
    with pytest.raises(LimitExceeded, match=r"expected .*<= 1000.*found 1125899906842624"):
        c.decompress_buffer(codec, stored, max_uncompressed=1000, where="column 'x'")
    with pytest.raises(LimitExceeded, match="column 'x'"):
        c.decompress_buffer(codec, stored, max_uncompressed=1000, where="column 'x'")


@pytest.mark.parametrize("codec", CODECS)
def test_negative_declared_length_is_a_compression_error(codec: str) -> None:
    with pytest.raises(CompressionError, match="expected an uncompressed length >= 0"):
        c.decompress_buffer(codec, _prefixed(-2, b"xx"), max_uncompressed=100)


@pytest.mark.parametrize("codec", CODECS)
def test_short_prefix_is_a_compression_error(codec: str) -> None:
    with pytest.raises(CompressionError, match=r"expected at least 8 bytes.*found 3"):
        c.decompress_buffer(codec, np.frombuffer(b"\x01\x00\x00", np.uint8), max_uncompressed=9)


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("delta", [1, -1, 1000])
def test_declared_length_that_lies_is_a_compression_error(codec: str, delta: int) -> None:
    raw = _ints(1000)
    _, payload = c.compress_buffer(codec, raw)
    stored = _prefixed(raw.nbytes + delta, bytes(payload))
    with pytest.raises(CompressionError, match="expected"):
        c.decompress_buffer(codec, stored, max_uncompressed=1 << 20)


def test_zstd_frame_claiming_huge_content_is_rejected_without_allocating() -> None:
    # a frame header stating 2**40 bytes of content, with a prefix declaring 16
    big = zstandard.ZstdCompressor(level=1).compress(b"\0" * 64)
    params = zstandard.get_frame_parameters(big)
    assert params.content_size == 64
    cobj = zstandard.ZstdCompressor(level=1)
    chunker = cobj.compressobj(size=1 << 40)
    lying = chunker.compress(b"\0" * 16) + chunker.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK)
    assert zstandard.frame_content_size(lying) == 1 << 40
    with pytest.raises(CompressionError, match="frame header claiming 1099511627776"):
        c.decompress_buffer("zstd", _prefixed(16, lying), max_uncompressed=1 << 20)


@pytest.mark.parametrize("codec", CODECS)
def test_corrupt_payload_is_a_compression_error(codec: str) -> None:
    with pytest.raises(CompressionError, match=f"expected valid {codec} data"):
        c.decompress_buffer(codec, _prefixed(100, b"garbage garbage"), max_uncompressed=100)


def test_lz4_raw_block_format_is_rejected() -> None:
    import lz4.block

    raw = _ints(1000)
    block = lz4.block.compress(raw.tobytes(), store_size=False)
    with pytest.raises(CompressionError):
        c.decompress_buffer("lz4", _prefixed(raw.nbytes, block), max_uncompressed=1 << 20)


def test_declared_zero_gives_empty_buffer() -> None:
    payload = lz4.frame.compress(b"", store_size=False)
    out = c.decompress_buffer("lz4", _prefixed(0, payload), max_uncompressed=0)
    assert out.nbytes == 0


@pytest.mark.parametrize(("codec", "level"), [("lz4", 0), ("lz4", 12), ("zstd", -5), ("zstd", 19)])
def test_levels_in_range_round_trip(codec: str, level: int) -> None:
    raw = _ints(20_000)
    parts = c.compress_buffer(codec, raw, level=level)
    assert np.array_equal(c.decompress_buffer(codec, _stored(parts), max_uncompressed=1 << 20), raw)


def test_many_buffers_error_names_the_buffer() -> None:
    good = _stored(c.compress_buffer("lz4", _ints(100)))
    bad = _prefixed(800, b"garbage")
    with pytest.raises(CompressionError, match="message 3, buffer 1"):
        c.decompress_buffers("lz4", [good, bad], max_uncompressed=1 << 20, where="message 3")


@pytest.mark.parametrize("codec", CODECS)
@settings(max_examples=40, deadline=None)
@given(data=st.binary(max_size=3000))
def test_any_bytes_round_trip(codec: str, data: bytes) -> None:
    raw = np.frombuffer(data, np.uint8)
    stored = _stored(c.compress_buffer(codec, raw))
    assert stored.nbytes == 0 if not data else stored.nbytes >= 8
    assert c.decompress_buffer(codec, stored, max_uncompressed=len(data)).tobytes() == data


@pytest.mark.parametrize("codec", CODECS)
@settings(max_examples=60, deadline=None)
@given(data=st.binary(min_size=8, max_size=200))
def test_arbitrary_stored_bytes_decode_or_raise_format_error(codec: str, data: bytes) -> None:
    try:
        out = c.decompress_buffer(codec, np.frombuffer(data, np.uint8), max_uncompressed=4096)
    except FormatError:
        return
    assert out.nbytes <= max(4096, len(data))


def _check_concatenated_zstd_frames() -> None:
    """Two zstd frames back to back decode as one buffer (as Arrow C++ reads them), and a
    length prefix short of their total is refused."""
    comp = zstandard.ZstdCompressor(level=1)
    payload = comp.compress(b"a" * 1000) + comp.compress(b"b" * 500)
    out = c.decompress_buffer("zstd", _prefixed(1500, payload), max_uncompressed=1 << 20)
    assert out.tobytes() == b"a" * 1000 + b"b" * 500
    with pytest.raises(CompressionError, match="expected 1400 uncompressed bytes, found more"):
        c.decompress_buffer("zstd", _prefixed(1400, payload), max_uncompressed=1 << 20)


def test_zstd_concatenated_frames_decode_like_arrow_cpp() -> None:
    _check_concatenated_zstd_frames()


def test_zstd_frames_without_content_size_decode() -> None:
    comp = zstandard.ZstdCompressor(level=1, write_content_size=False)
    raw = _ints(5000)
    payload = comp.compress(raw.tobytes())
    out = c.decompress_buffer("zstd", _prefixed(raw.nbytes, payload), max_uncompressed=1 << 20)
    assert np.array_equal(out, raw)
    with pytest.raises(CompressionError, match="expected"):
        c.decompress_buffer("zstd", _prefixed(raw.nbytes - 8, payload), max_uncompressed=1 << 20)


def _stream_buffers(path, codec: str | None) -> list[bytes]:
    """Every body buffer of every (dictionary) batch of a stream, decompressed if ``codec``."""
    from quiver.ipc import metadata as md
    from quiver.ipc.framing import read_frame

    data = memoryview(require_shared(path).read_bytes())
    pos, out = 0, []
    while True:
        meta, body_start, _ = read_frame(data, pos)
        if len(meta) == 0:
            return out
        msg = md.decode_message(meta)
        body = np.frombuffer(data[body_start : body_start + msg.body_length], np.uint8)
        header = msg.header.data if isinstance(msg.header, md.DictionaryBatch) else msg.header
        if isinstance(header, md.RecordBatch):
            assert (header.compression.codec if header.compression else None) == codec
            for off, length in header.buffers.tolist():
                view = body[off : off + length]
                if codec is not None:
                    view = c.decompress_buffer(codec, view, max_uncompressed=1 << 30)
                out.append(view.tobytes())
        pos = body_start + msg.body_length


@pytest.mark.parametrize(
    ("codec", "name"),
    [("lz4_frame", "compressed_lz4_newtypes.stream"), ("zstd", "compressed_zstd_newtypes.stream")],
)
def test_gold_compressed_buffers_equal_the_uncompressed_stream(codec: str, name: str) -> None:
    plain = _stream_buffers(SUPPLEMENT / "uncompressed_newtypes.stream", None)
    packed = _stream_buffers(SUPPLEMENT / name, codec)
    assert len(packed) == len(plain) > 50
    assert packed == plain


# --------------------------------------------------------------------------------------
# a declared length far beyond what the payload can produce is never allocated up front


@pytest.mark.parametrize("codec", CODECS)
def test_huge_declared_length_under_the_limit_is_not_allocated(codec: str) -> None:
    import tracemalloc

    raw = _ints(1000)
    _, payload = c.compress_buffer(codec, raw)
    claimed = 3 << 30  # ~100 bytes of payload claiming 3 GiB, under a 4 GiB limit
    stored = _prefixed(claimed, bytes(payload))
    tracemalloc.start()
    try:
        with pytest.raises(CompressionError, match=f"expected {claimed} uncompressed bytes"):
            c.decompress_buffer(codec, stored, max_uncompressed=4 << 30)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("n", [9, 64, 65, 1000, 100_000])
def test_piecewise_decoding_round_trips(in_pieces, codec: str, n: int) -> None:
    for raw in (_ints(n // 8 + 1), np.zeros(n, np.uint8)):
        stored = _stored(c.compress_buffer(codec, raw))
        if int.from_bytes(stored[:8].tobytes(), "little", signed=True) == -1:
            continue
        out = c.decompress_buffer(codec, stored, max_uncompressed=1 << 20)
        assert out.tobytes() == raw.tobytes()
        assert not out.flags.writeable


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("delta", [1, -1, -64, 1000])
def test_piecewise_decoding_rejects_lying_lengths(in_pieces, codec: str, delta: int) -> None:
    raw = _ints(1000)
    _, payload = c.compress_buffer(codec, raw)
    with pytest.raises(CompressionError, match="expected"):
        c.decompress_buffer(
            codec, _prefixed(raw.nbytes + delta, bytes(payload)), max_uncompressed=1 << 20
        )


def test_piecewise_zstd_reads_concatenated_frames(in_pieces) -> None:
    _check_concatenated_zstd_frames()


@pytest.mark.parametrize("codec", CODECS)
@settings(max_examples=60, deadline=None)
@given(data=st.binary(min_size=8, max_size=300))
def test_piecewise_arbitrary_bytes_decode_or_raise_format_error(codec: str, data: bytes) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(c.codecs, "ONE_SHOT_MAX", 0)
        mp.setattr(c.codecs, "DECOMPRESS_CHUNK", 64)
        mp.setattr(c.codecs, "LZ4_INPUT_CHUNK", 16)
        try:
            out = c.decompress_buffer(codec, np.frombuffer(data, np.uint8), max_uncompressed=4096)
        except FormatError:
            return
    assert out.nbytes <= max(4096, len(data))


def _library(payload: bytes) -> bytes | None:
    try:
        return lz4.frame.decompress(payload)
    except RuntimeError:
        return None


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
