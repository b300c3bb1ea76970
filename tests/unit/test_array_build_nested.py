"""Tests for quiver.array.build_nested: nested and encoded builders."""

from __future__ import annotations

import pytest

import quiver as qv
from quiver import types as t
from quiver.array import build_nested


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
