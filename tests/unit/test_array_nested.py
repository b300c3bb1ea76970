"""Tests for quiver.array.nested: list, struct, map and union arrays."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import quiver as qv
from quiver import types as t
from quiver.array import make_array
from quiver.errors import ArrowIndexError, ArrowInvalid, ArrowInvalidArgument, ArrowKeyError
from tests.roundtrip.pa_types import to_pyarrow_type as to_pa
from tests.unit._helpers import same_as_pyarrow


def test_nested_types_like_pyarrow() -> None:
    same_as_pyarrow(pa.array([[1, None], None, []], pa.list_(pa.int64())))
    same_as_pyarrow(pa.array([[1, None], None, []], pa.large_list_view(pa.int64())))
    same_as_pyarrow(pa.array([[1, None], None], pa.list_(pa.int64(), 2)))
    same_as_pyarrow(pa.array([{"a": 1, "b": [1]}, None, {"a": None, "b": None}]))
    got = same_as_pyarrow(pa.array([[("k", 1), ("j", None)], None, []],
                                   pa.map_(pa.string(), pa.int64())))
    assert got[0] == [("k", 1), ("j", None)]


def test_out_of_order_list_views_convert() -> None:
    pa_arr = pa.ListViewArray.from_arrays(
        pa.array([3, 0, 1], pa.int32()), pa.array([1, 2, 0], pa.int32()),
        pa.array([1, 2, 3, 4])
    )
    assert same_as_pyarrow(pa_arr) == [[4], [1, 2], []]


def test_unions_give_the_selected_childs_value() -> None:
    sparse = pa.UnionArray.from_sparse(
        pa.array([5, 1, 5], pa.int8()), [pa.array([1, 2, 3]), pa.array(["a", "b", None])],
        ["i", "s"], [1, 5],
    )
    assert same_as_pyarrow(sparse) == ["a", 2, None]
    assert same_as_pyarrow(sparse.slice(1)) == [2, None]
    dense = pa.UnionArray.from_dense(
        pa.array([0, 1, 0], pa.int8()), pa.array([1, 0, 0], pa.int32()),
        [pa.array([1, None]), pa.array(["a"])],
    )
    assert same_as_pyarrow(dense) == [None, "a", 1]


def test_struct_with_duplicate_names_refuses_dicts_like_pyarrow() -> None:
    arr = make_array(t.struct([("a", t.int8()), ("a", t.int8())]), 1, [None],
                     [qv.array([1], qv.int8()), qv.array([2], qv.int8())])
    with pytest.raises(ArrowInvalid, match="distinct field names"):
        arr.to_pylist()


# -- accessors -------------------------------------------------------------------------


def test_struct_field_is_sliced_to_the_parent() -> None:
    s = qv.array([{"a": 1, "b": "x"}, {"a": 2, "b": "y"}, {"a": 3, "b": None}]).slice(1)
    assert s.field("a").to_pylist() == [2, 3]
    assert s.field(1).to_pylist() == ["y", None]
    with pytest.raises(ArrowKeyError, match="'zz'"):
        s.field("zz")
    with pytest.raises(ArrowIndexError):
        s.field(5)


def test_list_accessors() -> None:
    a = qv.array([[1, 2], None, [3]]).slice(1)
    assert a.offsets.to_pylist() == [2, 2, 3]
    assert a.flatten().to_pylist() == [3]
    assert a.values.to_pylist() == [1, 2, 3]


def test_map_keys_and_items_cover_the_slice() -> None:
    m = qv.array([{"a": 1}, {"b": 2, "c": 3}], qv.map_(qv.string(), qv.int64())).slice(1)
    assert m.keys.to_pylist() == ["b", "c"]
    assert m.items.to_pylist() == [2, 3]


def test_union_accessors() -> None:
    ut = qv.dense_union([qv.field("i", qv.int64()), qv.field("s", qv.string())], [3, 7])
    u = qv.array([1, "a", 2], ut)
    assert u.type_codes.to_pylist() == [3, 7, 3]
    assert u.offsets.to_pylist() == [0, 0, 1]
    assert u.field(0).to_pylist() == [1, 2]
    assert u.slice(1).type_codes.to_pylist() == [7, 3]
    sp = qv.array([1, "a", 2], qv.sparse_union(list(ut.fields), [3, 7])).slice(1)
    assert sp.field(1).to_pylist() == ["a", None]


def test_from_buffers_builds_nested_arrays() -> None:
    child = qv.array([1, 2, 3])
    a = qv.Array.from_buffers(qv.list_(qv.int64()), 2, [None, np.array([0, 1, 3], "<i4")],
                              children=[child])
    assert a.to_pylist() == [[1], [2, 3]]
    d = qv.Array.from_buffers(qv.dictionary(qv.int8(), qv.string()), 2,
                              [None, np.array([1, 0], np.int8)], dictionary=qv.array(["a", "b"]))
    assert d.to_pylist() == ["b", "a"]


def test_malformed_arrays_raise_quiver_errors_not_index_errors() -> None:
    short = make_array(t.int32(), 4, [None, np.zeros(8, np.uint8)])
    with pytest.raises(ArrowInvalid, match="expected a values buffer of at least 16 bytes"):
        short.to_pylist()
    bad_offsets = make_array(t.list_(t.int8()), 1, [None, np.array([0, 5], "<i4").view(np.uint8)],
                             [qv.array([1], qv.int8())])
    with pytest.raises(ArrowInvalid, match="at least 5"):
        bad_offsets.to_pylist()
    bad_dict = make_array(t.dictionary(t.int8(), t.string()), 1,
                          [None, np.array([4], np.uint8)], dictionary=qv.array(["a"]))
    with pytest.raises(ArrowInvalid, match="below 1"):
        bad_dict.to_pylist()
    bad_union = make_array(t.sparse_union([t.field("a", t.int8())]), 1,
                           [np.array([9], np.uint8)], [qv.array([1], qv.int8())])
    with pytest.raises(ArrowInvalid, match="type codes"):
        bad_union.to_pylist()


def test_maps_as_pydicts_like_pyarrow() -> None:
    mt = qv.map_(qv.string(), qv.int64())
    vals = [[("a", 1), ("b", 2)], None, []]
    a = qv.array(vals, mt)
    expected = pa.array(vals, to_pa(mt)).to_pylist(maps_as_pydicts="strict")
    assert a.to_pylist(maps_as_pydicts="strict") == expected
    nested = qv.array([[{"m": [("k", 1)]}]],
                      qv.list_(qv.struct([("m", mt)])))
    assert nested.to_pylist(maps_as_pydicts="lossy") == [[{"m": {"k": 1}}]]
    dup = qv.array([[("a", 1), ("a", 2)]], mt)
    assert dup.to_pylist(maps_as_pydicts="lossy") == [{"a": 2}]
    with pytest.raises(ArrowInvalid, match="distinct map keys"):
        dup.to_pylist(maps_as_pydicts="strict")
    with pytest.raises(ArrowInvalidArgument):
        dup.to_pylist(maps_as_pydicts="yes")
