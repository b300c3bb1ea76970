"""Tests for quiver.ipc.stream_decoder: the sans-IO stream decoder (schema first, levels)."""

from __future__ import annotations

import struct

import pytest

import quiver as qv
import quiver.ipc as ipc
from quiver.ipc.stream_decoder import StreamDecoder
from tests.unit._helpers import TABLE, _stream


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
