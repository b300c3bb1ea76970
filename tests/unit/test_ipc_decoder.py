"""quiver.ipc.decoder: the sans-IO message decoder (framing of each message, limits on
what the input claims, the legacy prefix); the stream decoder is in test_ipc_stream_decoder."""

from __future__ import annotations

import struct

import pyarrow as pa
import pytest

import quiver as qv
import quiver.ipc as ipc
from quiver.ipc.decoder import IpcLimits
from tests.unit._ipc_helpers import TABLE, _file, _stream


def test_huge_claimed_metadata_length_is_not_allocated() -> None:
    data = b"\xff\xff\xff\xff" + struct.pack("<i", 2**31 - 1)
    with pytest.raises(qv.LimitExceeded, match="max_metadata_size"):
        ipc.open_stream(data)
    lim = IpcLimits(max_metadata_size=2**31 - 1)
    with pytest.raises(qv.TruncatedError):
        ipc.open_stream(data, limits=lim)


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
