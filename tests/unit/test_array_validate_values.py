"""Tests for quiver.array.validate_values: the full level's value checks and their helper."""

from __future__ import annotations

import numpy as np
import pytest

import quiver as qv
from quiver import types as t
from quiver.array import make_array, validate, validate_values
from quiver.array.validate_values import raise_first_bad


def test_raise_first_bad_reports_the_first_bad_slot_only_when_there_is_one() -> None:
    calls: list[int] = []

    def message(k: int) -> str:
        calls.append(k)
        return f"expected ok, found slot {k}"

    raise_first_bad(np.zeros(4, dtype=bool), "a.b", message)
    assert calls == []  # nothing formatted on the success path
    with pytest.raises(qv.ArrowInvalid, match=r"expected ok, found slot 2 \(at field 'a.b'\)"):
        raise_first_bad(np.array([False, False, True, True]), "a.b", message)
    assert calls == [2]


def test_validate_re_exports_the_helpers_from_here() -> None:
    assert validate.ragged_indices is validate_values.ragged_indices
    assert validate.view_slices is validate_values.view_slices


def test_full_offsets_names_the_first_decreasing_offset() -> None:
    offsets = np.array([0, 2, 1, 3], dtype="<i4").view(np.uint8)
    arr = make_array(t.binary(), 3, [None, offsets, np.zeros(3, np.uint8)])
    with pytest.raises(qv.ArrowInvalid, match=r"expected offsets\[2\] >= 2, found 1"):
        validate.validate_array(arr, full=True)


def test_full_time_of_day_counts_every_value_out_of_range() -> None:
    values = np.array([0, 86_400, -1, 5], dtype="<i4").view(np.uint8)
    arr = make_array(t.time32("s"), 4, [None, values])
    with pytest.raises(qv.ArrowInvalid, match=r"at slot 1, found 86400 \(2 values out of range\)"):
        validate.validate_array(arr, full=True, check_time_of_day=True)


def test_full_list_views_names_each_rule() -> None:
    child = qv.array([1, 2, 3])
    for offs, sizes, what in (
        ([0, 1], [1, -1], r"sizes\[1\] >= 0, found -1"),
        ([0, 4], [1, 0], r"offsets\[1\] in 0..3, found 4"),
        ([0, 2], [1, 2], r"offsets \+ sizes\[1\] <= child length 3, found 4"),
    ):
        bufs = [None, np.array(offs, "<i4").view(np.uint8), np.array(sizes, "<i4").view(np.uint8)]
        arr = make_array(t.list_view(t.int64()), 2, bufs, [child])
        with pytest.raises(qv.ArrowInvalid, match=what):
            validate.validate_array(arr, full=True)
