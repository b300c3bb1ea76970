"""Tests for quiver.ipc.stream_decoder: the sans-IO stream decoder (schema first, levels)."""

from __future__ import annotations

import struct

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import quiver as qv
import quiver.ipc as ipc
from quiver.ipc.decoder import END, NEED_DATA
from quiver.ipc.stream_decoder import StreamDecoder
from tests.unit._ipc_helpers import TABLE, _stream


def test_empty_input_has_no_schema() -> None:
    with pytest.raises(qv.FormatError, match="expected a Schema message"):
        ipc.open_stream(b"")


def test_batch_before_schema_is_rejected() -> None:
    data = _stream(TABLE)
    (n,) = struct.unpack_from("<i", data, 4)
    with pytest.raises(qv.FormatError, match="expected a Schema message first"):
        ipc.open_stream(data[8 + n :])


def test_invalid_validate_level_is_caller_error() -> None:
    with pytest.raises(qv.ArrowInvalidArgument, match="validate"):
        ipc.open_stream(_stream(TABLE), validate="paranoid")


def test_validate_none_is_refused_not_taken_as_structural() -> None:
    # "none" used to be accepted and quietly meant "structural"
    with pytest.raises(qv.ArrowInvalidArgument, match=r"found 'none'.*use 'structural'"):
        ipc.open_stream(_stream(TABLE), validate="none")
    with pytest.raises(qv.ArrowInvalidArgument, match="found 'none'"):
        StreamDecoder(ipc.IpcReadOptions(validate="none"))
    assert len(list(ipc.open_stream(_stream(TABLE), validate="structural"))) >= 1


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
