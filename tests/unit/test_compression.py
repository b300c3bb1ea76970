"""Tests for quiver.ipc.compression: prefixes, codecs, limits, threads, pyarrow parity."""

from __future__ import annotations

import lz4.frame
import numpy as np
import pyarrow as pa
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from quiver.errors import (
    ArrowInvalidArgument,
    CompressionError,
    FormatError,
    LimitExceeded,
)
from quiver.ipc import compression as c
from tests.conftest import SUPPLEMENT, require_shared

CODECS = ["lz4_frame", "zstd"]
PA_NAME = {"lz4_frame": "lz4", "zstd": "zstd"}


def _stored(parts) -> np.ndarray:
    return np.frombuffer(b"".join(bytes(memoryview(p)) for p in parts), np.uint8)


def _prefixed(n: int, payload: bytes) -> np.ndarray:
    return np.frombuffer(n.to_bytes(8, "little", signed=True) + payload, np.uint8)


def _ints(n: int = 100_000) -> np.ndarray:
    return np.arange(n, dtype=np.int64).view(np.uint8)


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
    # blocks (see compression._lz4_big_frame): pyarrow reads it, at the same size to 0.1%
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


@pytest.mark.parametrize("name", ["snappy", "gzip", "", None, 3])
def test_unknown_codec_name_is_invalid_argument(name) -> None:
    with pytest.raises(ArrowInvalidArgument, match="expected a codec name"):
        c.compress_buffer(name, np.zeros(10, np.uint8))
    with pytest.raises(ValueError):
        c.normalize_codec(name)


@pytest.mark.parametrize(
    ("codec", "level"), [("lz4", 13), ("lz4", -1), ("zstd", 23), ("zstd", 1.5), ("zstd", True)]
)
def test_out_of_range_level_is_invalid_argument(codec: str, level) -> None:
    with pytest.raises(ArrowInvalidArgument, match="compression level"):
        c.compress_buffer(codec, np.zeros(10, np.uint8), level=level)


@pytest.mark.parametrize(("codec", "level"), [("lz4", 0), ("lz4", 12), ("zstd", -5), ("zstd", 19)])
def test_levels_in_range_round_trip(codec: str, level: int) -> None:
    raw = _ints(20_000)
    parts = c.compress_buffer(codec, raw, level=level)
    assert np.array_equal(c.decompress_buffer(codec, _stored(parts), max_uncompressed=1 << 20), raw)


def test_codec_names_come_from_one_table_in_message_fbs_order() -> None:
    from quiver.ipc import metadata as md
    from quiver.ipc.writer import IpcWriteOptions

    # CompressionType: LZ4_FRAME = 0, ZSTD = 1
    assert c.CODECS is md.CODECS and md.CODECS == ("lz4_frame", "zstd")
    for alias, name in md.CODEC_ALIASES.items():
        assert c.normalize_codec(alias.upper()) == name
        # the writer takes every name the table has, and stores the codec it stands for
        assert IpcWriteOptions(compression=alias).compression == alias
    for codec in md.CODECS:
        rb = md.RecordBatch(1, [[1, 0]], [[0, 0]], md.BodyCompression(codec))
        msg = md.decode_message(md.encode_message(md.Message(md.V5, rb, 8)))
        assert msg.header.compression.codec == codec
    with pytest.raises(ArrowInvalidArgument, match="expected a codec name"):
        c.normalize_codec("snappy")


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


def test_many_buffers_error_names_the_buffer() -> None:
    good = _stored(c.compress_buffer("lz4", _ints(100)))
    bad = _prefixed(800, b"garbage")
    with pytest.raises(CompressionError, match="message 3, buffer 1"):
        c.decompress_buffers("lz4", [good, bad], max_uncompressed=1 << 20, where="message 3")


def test_negative_thread_count_is_invalid_argument() -> None:
    with pytest.raises(ArrowInvalidArgument, match="threads"):
        c.compress_buffers("lz4", _many(3), threads=-2)


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


def test_zstd_concatenated_frames_decode_like_arrow_cpp() -> None:
    comp = zstandard.ZstdCompressor(level=1)
    payload = comp.compress(b"a" * 1000) + comp.compress(b"b" * 500)
    out = c.decompress_buffer("zstd", _prefixed(1500, payload), max_uncompressed=1 << 20)
    assert out.tobytes() == b"a" * 1000 + b"b" * 500
    with pytest.raises(CompressionError, match="expected 1400 uncompressed bytes, found more"):
        c.decompress_buffer("zstd", _prefixed(1400, payload), max_uncompressed=1 << 20)


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


def test_plausible_ratio_decides_one_call_or_pieces() -> None:
    mib = 1 << 20
    assert c._one_shot("lz4_frame", 100, mib)  # small: always one call
    assert c._one_shot("lz4_frame", 40_000, 8 * mib)  # 210x: lz4 reaches ~255x
    assert not c._one_shot("lz4_frame", 4_000, 8 * mib)
    assert c._one_shot("zstd", 300, 8 * mib)  # 28000x: zstd reaches ~32500x
    assert not c._one_shot("zstd", 100, 8 * mib)
    assert not c._one_shot("zstd", 64 * mib, 65 * mib)  # big: in pieces


@pytest.fixture
def in_pieces(monkeypatch):
    """Force the piecewise decoders on small buffers (pieces of 64 output / 16 input bytes)."""
    monkeypatch.setattr(c.codecs, "ONE_SHOT_MAX", 0)
    monkeypatch.setattr(c.codecs, "DECOMPRESS_CHUNK", 64)
    monkeypatch.setattr(c.codecs, "LZ4_INPUT_CHUNK", 16)


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


def test_piecewise_zstd_reads_concatenated_frames(in_pieces) -> None:
    comp = zstandard.ZstdCompressor(level=1)
    payload = comp.compress(b"a" * 1000) + comp.compress(b"b" * 500)
    out = c.decompress_buffer("zstd", _prefixed(1500, payload), max_uncompressed=1 << 20)
    assert out.tobytes() == b"a" * 1000 + b"b" * 500
    with pytest.raises(CompressionError, match="expected 1400 uncompressed bytes, found more"):
        c.decompress_buffer("zstd", _prefixed(1400, payload), max_uncompressed=1 << 20)


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


@pytest.mark.parametrize("name", ["LZ4", "Lz4", "ZSTD", "zstd", "lz4_FRAME"])
def test_compression_names_are_case_insensitive(name: str) -> None:
    import pyarrow as pa

    import quiver as qv
    import quiver.ipc as ipc

    batch = qv.record_batch({"a": list(range(100))})
    sink = ipc.BufferOutputStream()
    with ipc.new_stream(sink, batch.schema, compression=name) as w:
        w.write_batch(batch)
    back = pa.ipc.open_stream(bytes(sink.getvalue())).read_all()
    assert back.column("a").to_pylist() == list(range(100))
    assert ipc.IpcWriteOptions(compression=name).compression == name.lower()
    with pytest.raises(qv.ArrowInvalidArgument, match="'snappy'"):
        ipc.IpcWriteOptions(compression="snappy")
