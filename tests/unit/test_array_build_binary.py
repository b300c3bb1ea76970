"""Tests for quiver.array.build_binary: binary, string, view and fixed-size binary builders."""

from __future__ import annotations

import pytest

import quiver as qv
from quiver import types as t
from quiver.array import build, build_binary


def test_the_joined_fast_path_and_the_value_by_value_path_agree() -> None:
    values = ["a", None, "\x01", "é", ""]
    fast = build_binary._joined(values, True)
    assert fast is not None
    data, offs, valid = fast
    slow_data, lengths, slow_valid = build_binary._encoded(values, t.string(), True,
                                                           try_joined=False)
    assert bytes(data) == bytes(slow_data)
    assert offs[1:].tolist() == lengths.cumsum().tolist()
    assert valid.tolist() == slow_valid.tolist() == [True, False, True, True, True]


def test_strict_mode_hands_mixed_kinds_back() -> None:
    assert build.MixedKinds is build_binary.MixedKinds
    with pytest.raises(build_binary.MixedKinds):
        build_binary.build_binary(["a", 1], t.string(), strict=True)


def test_fixed_size_binary_checks_the_width() -> None:
    with pytest.raises(qv.ArrowInvalid, match=r"expected values of 2 bytes .* found 3 bytes"):
        qv.array([b"ab", b"abc"], t.binary(2))


@pytest.mark.parametrize(
    "dtype",
    [t.binary(), t.large_binary(), t.binary(2), t.binary(4), t.binary_view(), t.string(),
     t.string_view(), t.uuid()],
    ids=str,
)
def test_build_invalid_values_raise_quiver_errors(dtype: t.DataType) -> None:
    np = pytest.importorskip("numpy")
    for v in (np.float32(1.5), np.int8(1), 1, 2.5):
        with pytest.raises(qv.ArrowTypeError, match="expected a value convertible"):
            qv.array([v, None], dtype)
