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


def test_build_dict_with_non_string_keys() -> None:
    for values in ([{1: 2}], [{"a": 1}, {1: 2}], [{"a": {(1,): 2}}], [{None: 1}]):
        with pytest.raises(qv.ArrowTypeError, match="expected dict keys of type str or bytes"):
            qv.array(values)


def test_dict_bytes_keys_are_refused_rather_than_lost() -> None:
    # pyarrow names the field by the decoded key; quiver's struct builder looks fields up
    # by their text, so it refuses bytes keys instead of giving nulls
    with pytest.raises(qv.NotSupported, match="dict keys of type bytes"):
        qv.array([{b"a": 2}, {"a": 3}])


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
def test_infer_numpy_temporal_scalars(unit: str) -> None:
    assert infer_type([np.datetime64(1, unit), None]) == qv.timestamp(unit)
    assert infer_type([np.timedelta64(1, unit), None]) == qv.duration(unit)
    assert infer_type([np.datetime64("NaT", unit)]) == qv.timestamp(unit)
    got = qv.array([np.timedelta64(5, unit), np.timedelta64("NaT", unit)])
    assert got.type == qv.duration(unit) and got.null_count == 1
    assert got.cast(qv.int64()).to_pylist() == [5, None]


def test_infer_numpy_temporal_scalars_refuses_what_pyarrow_refuses() -> None:
    for values in ([np.datetime64(1, "s"), np.datetime64(1, "ms")],
                   [np.timedelta64(1, "D")], [np.datetime64(1, "h")],
                   [np.datetime64(1, "s"), datetime.datetime(2020, 1, 1)],
                   [np.datetime64("NaT")]):
        with pytest.raises(qv.ArrowError):
            infer_type(values)


def test_infer_float16_and_memoryview_like_pyarrow() -> None:
    assert infer_type([np.float16(1.5), None]) == qv.float16()
    assert infer_type([np.float16(1.5), np.float32(2)]) == qv.float32()
    assert infer_type([memoryview(b"ab"), b"x", bytearray(b"y")]) == qv.binary()
    assert qv.array([memoryview(b"ab"), None]).to_pylist() == [b"ab", None]
