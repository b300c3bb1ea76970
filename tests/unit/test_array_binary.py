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


@pytest.mark.parametrize("n", [1, 2, 32, 33, 40])  # (at most 32 values: sliced one by one)
def test_to_pylist_is_the_same_on_both_sides_of_the_small_array_path(n):
    from quiver.array.binary import _SPLIT_FROM

    assert _SPLIT_FROM == 32
    texts = [("ключ-" if i % 3 else "key-") + str(i) for i in range(n)]
    raws = [v.encode() for v in texts]
    for typ, values in ((qv.string(), texts), (qv.binary(), raws),
                        (qv.string_view(), texts), (qv.binary_view(), raws)):
        with_nulls = [None if i % 5 == 4 else v for i, v in enumerate(values)]
        for given in (values, with_nulls):
            arr = qv.array(given, typ)
            assert arr.to_pylist() == given
            assert arr.slice(1).to_pylist() == given[1:]
    # invalid UTF-8 says so on both paths
    raw = make_array(t.string(), n, [None, np.arange(n + 1, dtype="<i4").view(np.uint8),
                                     np.full(n, 0xFF, np.uint8)], (), 0)
    with pytest.raises(ArrowInvalid, match="UTF-8"):
        raw.to_pylist()
