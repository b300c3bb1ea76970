"""Tests for quiver.ipc.metadata.encode: quiver dataclasses -> IPC flatbuffer metadata."""

from __future__ import annotations

import numpy as np
import pytest

import quiver as qv
from quiver.ipc import metadata as md
from quiver.ipc.body import (
    V5,
)
from tests.unit._helpers import VERSIONS

# -- the template ---------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("num_nodes", [0, 1, 2, 3, 8, 57])
@pytest.mark.parametrize("num_buffers", [0, 1, 2, 5, 22, 131])
def test_template_bytes_equal_the_general_builder(
    version: int, num_nodes: int, num_buffers: int
) -> None:
    rng = np.random.default_rng(num_nodes * 1000 + num_buffers)
    for _ in range(3):
        nodes = rng.integers(0, 1 << 40, (num_nodes, 2))
        buffers = rng.integers(0, 1 << 40, (num_buffers, 2))
        header = md.RecordBatch(int(rng.integers(0, 1 << 50)), nodes, buffers)
        msg = md.Message(version, header, int(rng.integers(1, 1 << 50)))
        tmpl = md.record_batch_template(version, num_nodes, num_buffers)
        fast = tmpl.encode(
            msg.body_length, header.length, nodes.ravel().tolist(), buffers.ravel().tolist()
        )
        assert fast == md.encode_message_general(msg) == md.encode_message(msg)
        assert len(fast) == tmpl.size
        back = md.decode_message(fast)
        assert back.header == header and back.body_length == msg.body_length
        assert back.version == version


def test_template_prefix_goes_before_the_flatbuffer() -> None:
    tmpl = md.record_batch_template(V5, 1, 2).with_prefix(b"PREFIX!!")
    out = tmpl.encode(16, 2, [2, 0], [0, 0, 0, 16])
    assert out[:8] == b"PREFIX!!"
    assert out[8:] == md.encode_message_general(
        md.Message(V5, md.RecordBatch(2, [[2, 0]], [[0, 0], [0, 16]]), 16)
    )


def test_messages_the_template_cannot_express_use_the_general_builder() -> None:
    header = md.RecordBatch(0, [[0, 0]], [[0, 0], [0, 0]])
    zero_body = md.Message(V5, header, 0)  # bodyLength 0 is left out by the builder
    assert md.encode_message(zero_body) == md.encode_message_general(zero_body)
    assert md.decode_message(md.encode_message(zero_body)).body_length == 0
    header = md.RecordBatch(1, [[1, 0]], [[0, 8]])
    custom = md.Message(V5, header, 8, qv.KeyValueMetadata({"k": "v"}))
    assert md.encode_message(custom) == md.encode_message_general(custom)


def test_template_refuses_a_bad_version() -> None:
    with pytest.raises(qv.ArrowInvalidArgument, match="expected metadata version"):
        md.RecordBatchTemplate(2, 1, 1)
