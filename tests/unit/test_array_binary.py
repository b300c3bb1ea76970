"""Tests for quiver.array.binary: string and binary arrays."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import quiver as qv
from quiver import types as t
from quiver.array import make_array
from quiver.errors import ArrowInvalid
from tests.unit._helpers import same_as_pyarrow


def test_strings_and_binaries_of_every_layout() -> None:
    vals = ["a", None, "héllo", "", "x" * 40]
    for typ in (pa.string(), pa.large_string(), pa.string_view()):
        assert same_as_pyarrow(pa.array(vals, typ)) == vals
    bvals = [b"a", None, b"", b"\xff" * 20]
    for typ in (pa.binary(), pa.large_binary(), pa.binary_view()):
        assert same_as_pyarrow(pa.array(bvals, typ)) == bvals
    assert same_as_pyarrow(pa.array([b"ab", None], pa.binary(2))) == [b"ab", None]


def test_invalid_utf8_raises_a_quiver_error() -> None:
    arr = make_array(t.string(), 1, [None, np.array([0, 1], "<i4").view(np.uint8),
                                     np.frombuffer(b"\xff", np.uint8)])
    with pytest.raises(ArrowInvalid, match="UTF-8"):
        arr.to_pylist()


# -- from_buffers ------------------------------------------------------------------------


def test_from_buffers_accepts_bytes_and_numpy() -> None:
    a = qv.Array.from_buffers(qv.string(), 2, [None, np.array([0, 1, 3], "<i4"), b"abc"])
    assert a.to_pylist() == ["a", "bc"]
    b = qv.Array.from_buffers(qv.int16(), 2, [b"\x02", b"\x01\x00\x02\x00"])
    assert b.to_pylist() == [None, 2]
    assert b.null_count == 1
