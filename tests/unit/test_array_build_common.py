"""Tests for quiver.array.build_common: the builder dispatch and shared helpers."""

from __future__ import annotations

import numpy as np
import pytest

import quiver as qv
from quiver import registry
from quiver import types as t
from quiver.array import build, build_common


def test_build_dispatches_by_type_class_through_the_registry() -> None:
    assert build.build is build_common.build
    assert build_common._BUILDERS is registry.table("builder")
    assert build_common.build([1, None], t.int8()).to_pylist() == [1, None]


def test_validity_gives_bitmap_count_and_mask_only_with_nulls() -> None:
    assert build_common.validity([1, 2]) == (None, 0, None)
    bitmap, nulls, valid = build_common.validity([1, None, 3])
    assert nulls == 1 and valid.tolist() == [True, False, True]
    assert bitmap.tolist() == [0b101]


def test_offsets_refuse_more_than_int32_unless_large() -> None:
    lengths = np.array([2**31 - 1, 1], dtype=np.int64)
    with pytest.raises(qv.ArrowInvalid, match="use the large_ variant"):
        build_common.offsets_from_lengths(lengths, False, t.binary())
    large = build_common.offsets_from_lengths(lengths, True, t.large_binary())
    assert large.tolist() == [0, 2**31 - 1, 2**31]
