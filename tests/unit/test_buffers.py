"""Unit tests of quiver.buffers: zero-copy buffer views and LSB-first bitmaps."""

from __future__ import annotations

import mmap

import numpy as np
import pytest

from quiver.buffers import (
    as_buffer,
    bitmap_bytes,
    count_set_bits,
    pack_bits,
    padded,
    unpack_bits,
)
from quiver.errors import ArrowTypeError


def test_as_buffer_views_without_copying() -> None:
    data = bytearray(b"abcd")
    buf = as_buffer(data)
    data[0] = ord("z")
    assert bytes(buf) == b"zbcd"
    arr = np.array([1, 2], dtype="<i4")
    assert np.shares_memory(as_buffer(arr), arr)
    assert as_buffer(None) is None
    m = mmap.mmap(-1, 16)
    assert len(as_buffer(m)) == 16


def test_as_buffer_refuses_non_buffers() -> None:
    with pytest.raises(ArrowTypeError, match="bytes-like"):
        as_buffer(12)


def test_bitmaps_are_lsb_first() -> None:
    bits = np.array([True, False, True, True, False, False, False, False, True])
    packed = pack_bits(bits)
    assert bytes(packed) == b"\x0d\x01"
    assert unpack_bits(packed, 0, 9).tolist() == bits.tolist()
    assert unpack_bits(packed, 2, 3).tolist() == [True, True, False]


@pytest.mark.parametrize(("offset", "length"), [(0, 0), (0, 9), (1, 7), (3, 14), (7, 1),
                                                 (8, 16), (5, 20)])
def test_count_set_bits_matches_numpy(offset: int, length: int) -> None:
    rng = np.random.default_rng(offset * 31 + length)
    bits = rng.random(40) < 0.5
    packed = pack_bits(bits)
    assert count_set_bits(packed, offset, length) == int(bits[offset : offset + length].sum())


def test_sizes() -> None:
    assert bitmap_bytes(0) == 0 and bitmap_bytes(9) == 2
    assert padded(9) == 16 and padded(64, 64) == 64
