"""Tests for quiver.array.build_nested: nested and encoded builders."""

from __future__ import annotations

import datetime as dt
import math
import struct

import numpy as np
import pyarrow as pa
import pytest

import quiver as qv
from quiver import types as t
from quiver.array import build_nested
from tests.unit._helpers import _q


def test_child_errors_name_the_field_path() -> None:
    dtype = t.struct([t.field("a", t.list_(t.int8()))])
    with pytest.raises(qv.ArrowInvalid, match=r"at field 'a\.item'"):
        qv.array([{"a": [1000]}], dtype)


def test_union_children_take_the_first_accepting_type() -> None:
    u = t.dense_union([t.field("i", t.int8()), t.field("j", t.int64()), t.field("s", t.string())])
    assert build_nested._accepts(t.int8(), 1000) is False
    arr = qv.array([1, 1000, "x", None], u)
    assert arr.type_ids().tolist() == [0, 1, 2, 0]
    assert arr.to_pylist() == [1, 1000, "x", None]


def test_dictionary_and_run_end_builders() -> None:
    d = qv.array(["a", "b", "a", None], t.dictionary(t.int8(), t.string()))
    assert d.dictionary.to_pylist() == ["a", "b"]
    r = qv.array([1, 1, 2], t.run_end_encoded(t.int16(), t.int64()))
    assert r.children[0].to_pylist() == [2, 3]


# -- dictionary and run-end builders: values compared as Arrow stores them ---------------------


def test_build_dictionary_keeps_negative_zero() -> None:
    for ty in (qv.dictionary(qv.int32(), qv.float64()),
               qv.run_end_encoded(qv.int32(), qv.float64())):
        got = qv.array([0.0, -0.0], ty).to_pylist()
        assert math.copysign(1.0, got[1]) == -1.0, ty


_NAN2 = struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000001))[0]  # another NaN payload


@pytest.mark.parametrize(
    "values",
    [
        [0.0, -0.0, -0.0, float("nan"), float("nan"), _NAN2, 0.0, None, None, 1.0, 1.0],
        [np.float32(-0.0), np.float32(0.0), np.float32("nan"), float("nan"), None],
        [-0.0, 0.0, -0.0],
    ],
)
@pytest.mark.parametrize("kind", ["dictionary", "run_end_encoded"])
def test_float_dictionary_and_runs_match_pyarrow(values: list, kind: str) -> None:
    value_type = pa.float32() if isinstance(values[0], np.float32) else pa.float64()
    if kind == "dictionary":
        theirs = pa.array(values, pa.dictionary(pa.int32(), value_type))
        ours = qv.array(values, qv.dictionary(qv.int32(), _q(pa.array([], value_type)).type))
        assert ours.indices.to_pylist() == theirs.indices.to_pylist()  # type: ignore[attr-defined]
        pairs = [(ours.dictionary, theirs.dictionary)]
    else:
        theirs = pa.array(values, pa.run_end_encoded(pa.int32(), value_type))
        ours = qv.array(values, qv.run_end_encoded(qv.int32(), _q(pa.array([], value_type)).type))
        assert ours.children[0].to_pylist() == theirs.run_ends.to_pylist()
        pairs = [(ours.children[1], theirs.values)]
    for mine, their in pairs:
        assert _bits(mine.to_pylist()) == _bits(their.to_pylist())  # type: ignore[union-attr]


def _bits(values: list) -> list:
    return [None if v is None else struct.pack("<d", v) for v in values]


def test_build_dictionary_of_bytearray() -> None:
    ty = qv.dictionary(qv.int8(), qv.binary())
    assert qv.array([bytearray(b"x")], ty).to_pylist() == [b"x"]  # TypeError: unhashable


def test_bytes_like_values_share_dictionary_entries_and_runs() -> None:
    values = [bytearray(b"x"), b"x", None, memoryview(b"y"), b"y", None]
    theirs = pa.array([None if v is None else bytes(v) for v in values],
                      pa.dictionary(pa.int8(), pa.binary()))
    ours = qv.array(values, qv.dictionary(qv.int8(), qv.binary()))
    assert ours.to_pylist() == theirs.to_pylist()
    assert ours.dictionary.to_pylist() == theirs.dictionary.to_pylist() == [b"x", b"y"]  # type: ignore[union-attr]
    runs = qv.array(values, qv.run_end_encoded(qv.int16(), qv.binary()))
    assert runs.children[0].to_pylist() == [2, 3, 5, 6]
    nested = qv.array([[bytearray(b"a")], [b"a"]], qv.dictionary(qv.int8(), qv.list_(qv.binary())))
    assert nested.dictionary.to_pylist() == [[b"a"]]  # type: ignore[union-attr]


def test_list_values_keep_negative_zero_in_dictionaries_and_runs() -> None:
    ty = qv.dictionary(qv.int8(), qv.list_(qv.float64()))
    got = qv.array([[0.0], [-0.0], [0.0]], ty)
    assert _bits([v[0] for v in got.dictionary.to_pylist()]) == _bits([0.0, -0.0])  # type: ignore[union-attr]
    runs = qv.array([[0.0], [-0.0], [-0.0]], qv.run_end_encoded(qv.int16(), qv.list_(qv.float64())))
    assert runs.children[0].to_pylist() == [1, 3]


def test_union_children_take_numpy_temporal_scalars_by_kind() -> None:
    # np.timedelta64 is a numpy integer: it went to the int64 child and raised a raw TypeError
    ut = qv.dense_union([qv.field("i", qv.int64()), qv.field("d", qv.duration("s")),
                         qv.field("ts", qv.timestamp("s"))])
    got = qv.array([1, np.timedelta64(5, "s"), np.datetime64("2020-01-01T00:00:00", "s")], ut)
    assert got.to_pylist() == [1, dt.timedelta(seconds=5), dt.datetime(2020, 1, 1)]
    assert got.type_codes.to_pylist() == [0, 1, 2]  # each went to its own child
