"""quiver.ipc.decoder and stream_decoder: the sans-IO message and stream decoders (framing
of each message, limits on what the input claims, the legacy prefix, any chunking)."""

from __future__ import annotations

import struct

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import quiver as qv
import quiver.ipc as ipc
from quiver.ipc.decoder import END, NEED_DATA, IpcLimits
from quiver.ipc.stream_decoder import StreamDecoder
from tests.unit._helpers import TABLE, _file, _stream


def _decode_all(data: bytes, chunk: int | None = None) -> list:
    dec = StreamDecoder()
    pieces = [data] if chunk is None else [data[i : i + chunk] for i in range(0, len(data), chunk)]
    out = []
    for p in pieces:
        dec.feed(p)
        while (b := dec.next_batch()) is not NEED_DATA and b is not END:
            out.append(b.to_pylist())
    dec.feed_eof()
    while (b := dec.next_batch()) is not END:
        out.append(b.to_pylist())
    return out


def test_huge_claimed_metadata_length_is_not_allocated() -> None:
    data = b"\xff\xff\xff\xff" + struct.pack("<i", 2**31 - 1)
    with pytest.raises(qv.LimitExceeded, match="max_metadata_size"):
        ipc.open_stream(data)
    lim = IpcLimits(max_metadata_size=2**31 - 1)
    with pytest.raises(qv.TruncatedError):
        ipc.open_stream(data, limits=lim)


def test_negative_metadata_length_is_a_framing_error() -> None:
    with pytest.raises(qv.FramingError, match="non-negative"):
        ipc.open_stream(b"\xff\xff\xff\xff" + struct.pack("<i", -8))


def test_legacy_stream_without_continuation_markers_reads() -> None:
    data = _stream(TABLE)
    legacy = bytearray()
    pos = 0
    while pos < len(data):
        (n,) = struct.unpack_from("<i", data, pos + 4)
        if n == 0:
            legacy += b"\x00\x00\x00\x00"
            break
        meta = data[pos + 8 : pos + 8 + n]
        msg_body = pa.ipc.read_message(pa.py_buffer(data[pos:])).body
        body_len = 0 if msg_body is None else msg_body.size
        legacy += struct.pack("<i", n) + meta + data[pos + 8 + n : pos + 8 + n + body_len]
        pos += 8 + n + body_len
    batches = list(ipc.open_stream(bytes(legacy)))
    assert [r for b in batches for r in b.to_pylist()] == TABLE.to_pylist()


@settings(max_examples=30, deadline=None)
@given(st.integers(min_value=1, max_value=97))
def test_decoder_gives_the_same_batches_for_any_chunking(chunk: int) -> None:
    data = _stream(pa.concat_tables([TABLE, TABLE]))
    assert _decode_all(data, chunk) == _decode_all(data)


@settings(max_examples=30, deadline=None)
@given(st.integers(min_value=1, max_value=64), st.integers(min_value=0, max_value=10_000))
def test_decoder_gives_the_same_error_for_any_chunking(chunk: int, cut: int) -> None:
    data = _stream(TABLE)
    broken = data[: cut % len(data)]

    def outcome(c):
        try:
            return ("ok", _decode_all(broken, c))
        except qv.ArrowError as exc:
            return (type(exc).__name__, exc.offset)

    assert outcome(chunk) == outcome(None)


def test_truncated_stream_raises_truncated_error_with_offset() -> None:
    data = _stream(TABLE)
    with pytest.raises(qv.TruncatedError) as info:
        list(ipc.open_stream(data[:-20]))
    assert info.value.offset is not None and info.value.message_index == 1
    assert "expected" in str(info.value) and "found" in str(info.value)
    assert isinstance(info.value, EOFError)


def test_file_given_to_stream_reader_is_explained() -> None:
    with pytest.raises(qv.FramingError, match="open_file"):
        ipc.open_stream(_file(TABLE))
