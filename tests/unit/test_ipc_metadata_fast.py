"""Tests for quiver.ipc.metadata.fast: the fast RecordBatch metadata paths."""

from __future__ import annotations

import pytest

from quiver.errors import CompressionError, LimitExceeded, MetadataError
from quiver.ipc import metadata as md
from quiver.ipc.flatbuf import Builder
from quiver.ipc.metadata import Message, MetadataLimits, RecordBatch, decode_message, encode_message


def test_negative_field_node_is_a_metadata_error():
    rb = RecordBatch(1, [[1, 0], [1, -1]], [[0, 8]])
    with pytest.raises(MetadataError, match=r"non-negative FieldNode values, found \[1, -1\]"):
        decode_message(encode_message(Message(md.V5, rb, 8)))
    rb = RecordBatch(1, [[1, 0]] * 40, [[0, -8]] * 40)
    with pytest.raises(MetadataError, match="non-negative Buffer values"):
        decode_message(encode_message(Message(md.V5, rb, 8)))


def test_unknown_compression_codec_is_a_compression_error():
    b = Builder()
    comp = b.table([(0, "<b", 5)])
    hdr = b.table([(0, "<q", 0), (3, "offset", comp)])
    root = b.table([(0, "<h", md.V5), (1, "<B", 3), (2, "offset", hdr)])
    with pytest.raises(CompressionError, match="found 5"):
        decode_message(b.finish(root))


def test_too_many_buffers_raise_limit_exceeded():
    rb = RecordBatch(1, [[1, 0]], [[0, 0]] * 20)
    data = encode_message(Message(md.V5, rb, 0))
    with pytest.raises(LimitExceeded, match="at most 5 Buffers"):
        decode_message(data, limits=MetadataLimits(max_buffers=5))
