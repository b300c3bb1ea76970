"""Tests for quiver.array.data."""

from __future__ import annotations

import pytest

import quiver as qv


def test_slice_rejects_a_length_that_is_not_an_int_with_quivers_error() -> None:
    with pytest.raises(qv.ArrowInvalidArgument, match="slice length"):
        qv.array([1, 2, 3]).slice(0, "2")  # type: ignore[arg-type]
    with pytest.raises(qv.ArrowInvalidArgument, match="slice length"):
        qv.record_batch({"a": qv.array([1])}).slice(0, "2")  # type: ignore[arg-type]
