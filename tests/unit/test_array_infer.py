"""Tests for quiver.array.infer: type inference from Python values."""

from __future__ import annotations

import datetime
from decimal import Decimal

import numpy as np
import pytest

import quiver as qv
from quiver.array import build
from quiver.array.infer import infer_type


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([None, None], "null"),
        ([True, None], "bool"),
        ([np.int16(1), np.int16(2)], "int16"),
        ([1, 2.5], "double"),
        ([np.float32(1)], "float"),
        ([Decimal("1.25"), Decimal("-10")], "decimal128(4, 2)"),
        ([datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)], "timestamp[us, tz=UTC]"),
        ([datetime.time(1)], "time64[us]"),
        ([[1], None, []], "list<item: int64>"),
        ([{"a": 1}, {"b": "x"}], "struct<a: int64, b: string>"),
    ],
)
def test_infer_type_follows_pyarrow(values: list, expected: str) -> None:
    assert str(infer_type(values)) == expected


def test_mixed_kinds_are_refused_with_their_names() -> None:
    with pytest.raises(qv.ArrowInvalid, match="found int, str"):
        infer_type([1, "a"])


def test_build_re_exports_infer_type() -> None:
    assert build.infer_type is infer_type
