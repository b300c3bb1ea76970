"""Tests for quiver.ipc.compression.buffer: compressed buffer prefixes and stored ranges."""

from __future__ import annotations

from pathlib import Path

import pytest

import quiver.ipc as ipc
from quiver import errors as E
from tests.unit._helpers import _table, _write_deferred


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
