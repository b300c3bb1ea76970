"""Tests for quiver.ipc.framing: the one parser of the message prefix."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import quiver as qv
import quiver.ipc as ipc
from quiver.errors import FramingError, TruncatedError
from quiver.ipc import tensor as it
from quiver.ipc.decoder import END, MessageDecoder
from quiver.ipc.framing import (
    EOS,
    LEGACY_EOS,
    PREFIX_PAIR,
    expected_prefix,
    frame_message,
    metadata_length,
    parse_prefix,
    read_frame,
)
from tests.unit._tensor_helpers import _pa_bytes


def test_parse_prefix_reads_both_forms_and_end_of_stream() -> None:
    assert parse_prefix(frame_message(b"x" * 8)) == (8, 8)
    assert parse_prefix(b"\x10\x00\x00\x00" + bytes(16)) == (16, 4)  # before Arrow 0.15
    assert parse_prefix(EOS) == (0, 8)
    assert parse_prefix(LEGACY_EOS) == (0, 4)
    assert parse_prefix(b"pad" + frame_message(b"x" * 8), 3) == (8, 8)


@pytest.mark.parametrize("data", [b"", b"\xff", b"\xff\xff\xff", b"\xff" * 4, b"\xff" * 7])
def test_parse_prefix_asks_for_more_bytes_when_the_prefix_is_cut(data: bytes) -> None:
    assert parse_prefix(data) is None


def test_negative_lengths_are_framing_errors_at_the_length_word() -> None:
    negative = "expected a non-negative metadata length, found -2"
    with pytest.raises(FramingError, match=negative) as e:
        parse_prefix(b"\xff\xff\xff\xff\xfe\xff\xff\xff", base_offset=100)
    assert e.value.offset == 104
    with pytest.raises(FramingError, match="found -16") as e:
        parse_prefix(b"\x00" * 4 + b"\xf0\xff\xff\xff" + bytes(8), 4)
    assert e.value.offset == 4
    with pytest.raises(FramingError):
        metadata_length(b"\xff\xff\xff\x80", 0)


def test_read_frame_uses_the_same_parser_and_checks_the_metadata_fits() -> None:
    framed = frame_message(b"abcdefgh")
    meta, body_start, prefix_and_meta = read_frame(framed)
    assert bytes(meta) == b"abcdefgh" and body_start == prefix_and_meta == 16
    with pytest.raises(TruncatedError, match="expected 8 bytes of metadata, found 4"):
        read_frame(framed[:12])
    with pytest.raises(TruncatedError, match="expected an int32 metadata length"):
        read_frame(framed[:6])
    with pytest.raises(TruncatedError, match="expected a 4-byte message prefix"):
        read_frame(framed[:2])


def test_the_steady_prefix_is_what_the_writer_frames() -> None:
    assert PREFIX_PAIR.unpack_from(frame_message(bytes(24))) == expected_prefix(24)


def test_stream_decoder_reports_a_negative_length_with_the_message_index() -> None:
    dec = MessageDecoder()
    dec.feed(b"\xff\xff\xff\xff\xf0\xff\xff\xff")
    dec.feed_eof()
    with pytest.raises(FramingError) as e:
        dec.next_message()
    assert e.value.offset == 4 and e.value.message_index == 0
    dec = MessageDecoder()
    dec.feed(EOS)
    assert dec.next_message() is END


@pytest.mark.parametrize("cut", [0, 3, 7, 20])
def test_short_inputs_are_truncated_errors(cut: int) -> None:
    data = _pa_bytes(np.arange(4, dtype=np.int32))
    with pytest.raises(TruncatedError):
        it.read_tensor(data[:cut])


def test_negative_metadata_length_is_a_framing_error() -> None:
    with pytest.raises(qv.FramingError, match="non-negative"):
        ipc.open_stream(b"\xff\xff\xff\xff" + struct.pack("<i", -8))
