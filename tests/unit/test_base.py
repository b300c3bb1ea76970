"""Tests for the family helpers of quiver.array.base: absent buffers and shared offsets."""

from __future__ import annotations

import numpy as np
import pytest

import quiver as qv
from quiver import types as t
from quiver.array import make_array
from quiver.array.base import OffsetArray, int_array


def test_an_absent_buffer_is_empty_for_an_empty_array_and_an_error_otherwise() -> None:
    assert make_array(t.string(), 0, [None, None, None]).value_offsets().tolist() == [0]
    assert make_array(t.int8(), 0, [None, None]).to_pylist() == []
    with pytest.raises(qv.ArrowInvalid, match="expected an offsets buffer for list<item: int8>"):
        make_array(t.list_(t.int8()), 1, [None, None], [qv.array([1], t.int8())]).value_offsets()
    with pytest.raises(qv.ArrowInvalid, match="expected a views buffer for string_view"):
        make_array(t.string_view(), 1, [None, None]).views()


def test_binary_string_list_and_map_share_the_offsets_code() -> None:
    for arr in (qv.array([b"a", b"bc"]), qv.array(["a", "bc"], t.large_string()),
                qv.array([[1], [2, 3]]), qv.array([[("k", 1)]], t.map_(t.string(), t.int8()))):
        assert isinstance(arr, OffsetArray)
        sliced = arr.slice(1)
        assert sliced.offsets.to_pylist() == sliced.value_offsets().tolist()
        assert np.shares_memory(sliced.value_offsets(), arr.buffers[1])


def test_int_array_keeps_width_and_sign() -> None:
    assert int_array(np.array([1, 2], dtype="<u2")).type == t.uint16()
    assert int_array(np.array([-1], dtype="<i8")).to_pylist() == [-1]
