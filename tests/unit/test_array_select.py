"""Selection kernels (quiver.array.select, reached through quiver.compute) checked against
pyarrow on every type: take, filter, is_null, fill_null, sort indices; hypothesis over
nested types of depth 3 (Table/RecordBatch take, filter and sort_by are in test_batch)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given
from hypothesis import strategies as st

import quiver as qv
import quiver.compute as qc
from tests.ipc_cases import all_type_arrays, sliced
from tests.roundtrip.test_array_props import SETTINGS, _normal, typed_values, unions
from tests.unit._helpers import _q

CASES = {**all_type_arrays(), **{f"sliced {k}": sliced(v) for k, v in all_type_arrays().items()}}


def _same(ours: qv.Array, theirs: pa.Array | list) -> None:
    ours.validate(full=True)
    if isinstance(theirs, list):  # pyarrow has no kernel for this type: Python's indexing
        assert _normal(ours.to_pylist()) == _normal(theirs)
        return
    assert ours.type == _q(theirs).type
    assert _normal(ours.to_pylist()) == _normal(_q(theirs).to_pylist())


def _pa_take(arr: pa.Array, idx: pa.Array) -> pa.Array | list:
    try:
        return pc.take(arr, idx)
    except pa.ArrowNotImplementedError:
        values = _q(arr).to_pylist()
        return [None if i is None else values[i] for i in idx.to_pylist()]


def _pa_filter(arr: pa.Array, mask: pa.Array) -> pa.Array | list:
    try:
        return pc.filter(arr, mask)
    except pa.ArrowNotImplementedError:
        return [v for v, m in zip(_q(arr).to_pylist(), mask.to_pylist()) if m]


@pytest.mark.parametrize("name", list(CASES))
def test_take_matches_pyarrow_on_every_type(name: str) -> None:
    arr = CASES[name]
    n = len(arr)
    for idx in ([n - 1, 0, 0, n // 2], [], list(range(n))[::-1]):
        _same(_q(arr).take(idx), _pa_take(arr, pa.array(idx, pa.int64())))
    if "dense_union" in name:  # a null index points at a null added to the first child
        got = _q(arr).take([0, None, n - 1])
        got.validate(full=True)
        values = _q(arr).to_pylist()
        assert got.to_pylist() == [values[0], None, values[n - 1]]
    else:
        idx = pa.array([None, n - 1, None, 0], pa.int32())
        _same(_q(arr).take(_q(idx)), _pa_take(arr, idx))
    with pytest.raises(qv.ArrowIndexError, match=f"expected indices in 0..{n - 1}, found {n}"):
        _q(arr).take([0, n])


@pytest.mark.parametrize("name", list(CASES))
def test_filter_matches_pyarrow_on_every_type(name: str) -> None:
    arr = CASES[name]
    n = len(arr)
    mask = pa.array(([True, False, None, True] * n)[:n], pa.bool_())
    _same(_q(arr).filter(_q(mask)), _pa_filter(arr, mask))
    _same(_q(arr).filter(np.ones(n, dtype=bool)), arr)
    with pytest.raises(qv.ArrowInvalidArgument, match=f"mask of length {n}"):
        _q(arr).filter([True] * (n + 1))


@pytest.mark.parametrize("name", list(CASES))
def test_is_null_matches_pyarrow_on_every_type(name: str) -> None:
    arr = CASES[name]
    assert _q(arr).is_null().to_pylist() == pc.is_null(arr).to_pylist()
    assert _q(arr).is_valid().to_pylist() == pc.is_valid(arr).to_pylist()


FILLS: dict[str, Any] = {
    "bool": True, "int8": 7, "int64": -1, "uint64": 2**64 - 1, "float64": 0.5,
    "string": "zz", "large_binary": b"q", "string_view": "a long fill value over twelve",
    "date32": pa.scalar(0, pa.date32()).as_py(), "timestamp_ms_utc": None,
    "list": [9], "struct": {"a": 9, "b": "f"},
}


@pytest.mark.parametrize("name", [n for n in FILLS if FILLS[n] is not None])
def test_fill_null_matches_pyarrow(name: str) -> None:
    for arr in (CASES[name], CASES[f"sliced {name}"]):
        fill = FILLS[name]
        ours = _q(arr).fill_null(fill)
        plain = arr.cast(pa.string()) if name == "string_view" else arr  # no pyarrow kernel
        theirs = pc.fill_null(plain, pa.scalar(fill, plain.type))
        if name == "string_view":
            theirs = theirs.to_pylist()
        _same(ours, theirs)
        assert ours.null_count == 0


SORTABLE = ["bool", "int8", "uint64", "float64", "float32", "string", "large_binary",
            "string_view", "date32", "timestamp_us_ny", "duration_us", "decimal128",
            "dictionary", "time64us", "fixed_size_binary"]


@pytest.mark.parametrize("name", SORTABLE)
@pytest.mark.parametrize("order", ["ascending", "descending"])
def test_sort_indices_match_pyarrow(name: str, order: str) -> None:
    arr = pa.concat_arrays([CASES[name], CASES[f"sliced {name}"]])
    ours = qc.sort_indices(_q(arr), order=order).to_pylist()
    plain = arr.cast(pa.string()) if name == "string_view" else arr  # no pyarrow kernel
    theirs = pc.sort_indices(plain, sort_keys=[("", order)]).to_pylist()
    assert ours == theirs


def test_nan_sorts_after_numbers_and_before_nulls_both_ways() -> None:
    arr = pa.array([1.0, float("nan"), None, -2.0, float("nan"), 3.0])
    for order in ("ascending", "descending"):
        assert qc.sort_indices(_q(arr), order=order).to_pylist() == pc.sort_indices(
            arr, sort_keys=[("", order)]
        ).to_pylist()


@SETTINGS
@given(typed_values(), st.data())
def test_take_and_filter_agree_with_list_indexing_for_nested_types(case: Any, data: Any) -> None:
    qt, values = case
    arr = qv.array(values, qt)
    off = data.draw(st.integers(0, len(values)))
    arr = arr.slice(off)
    expected = arr.to_pylist()
    n = len(expected)
    idx = data.draw(st.lists(st.one_of(st.none(), st.integers(0, max(n - 1, 0))),
                             max_size=12)) if n else []
    has_dense = "dense_union" in str(qt) or "union[dense]" in str(qt)
    if has_dense:
        idx = [i for i in idx if i is not None]
    got = arr.take(idx)
    got.validate(full=True)
    assert _normal(got.to_pylist()) == _normal([None if i is None else expected[i] for i in idx])
    mask = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    kept = arr.filter(mask)
    kept.validate(full=True)
    assert _normal(kept.to_pylist()) == _normal([v for v, m in zip(expected, mask) if m])


@SETTINGS
@given(unions(), st.data())
def test_take_filter_and_is_null_on_unions_agree_with_list_indexing(case: Any, data: Any) -> None:
    ut, values = case
    arr = qv.array(values, ut)
    expected = arr.to_pylist()
    n = len(expected)
    ints = st.integers(0, max(n - 1, 0))
    idx = data.draw(st.lists(st.one_of(st.none(), ints), max_size=10)) if n else []
    got = arr.take(idx)
    got.validate(full=True)
    assert _normal(got.to_pylist()) == _normal([None if i is None else expected[i] for i in idx])
    mask = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    assert _normal(arr.filter(mask).to_pylist()) == _normal(
        [v for v, m in zip(expected, mask) if m])
    assert arr.is_null().to_pylist() == [v is None for v in expected]


# -- dictionaries --------------------------------------------------------------------------


def _dictionary(indices: list[int | None], values: list, index_type: str = "int8") -> pa.Array:
    return pa.DictionaryArray.from_arrays(pa.array(indices, index_type), pa.array(values))


def test_fill_null_dictionary() -> None:
    arr = qv.array(pa.array(["a", None, "b"]).dictionary_encode())
    assert arr.fill_null("b").to_pylist() == ["a", "b", "b"]  # raised ArrowInvalid
    nulls_in_values = qv.array(_dictionary([0, 1], ["x", None]))
    # pyarrow keeps ['x', None]; quiver gave ['y', 'y']
    assert nulls_in_values.fill_null("y").to_pylist()[0] == "x"


@pytest.mark.parametrize(
    ("theirs", "fill"),
    [
        (pa.array(["a", None, "b"]).dictionary_encode(), "z"),  # a value not in the dictionary
        (pa.array(["a", None, "b"]).dictionary_encode().slice(1), "a"),
        (_dictionary([0, 1, None], ["x", None]), "y"),  # a null value and a null index
        (_dictionary([None, 0, None], [1.0], "uint16"), -0.0),
        (pa.DictionaryArray.from_arrays(pa.array([None, None], "int64"), pa.array([], "int64")),
         5),  # an empty dictionary
        (_dictionary([0, 1], [b"p", b"q"]), b"r"),  # no null: unchanged
    ],
)
def test_fill_null_dictionary_matches_pyarrow(theirs: pa.Array, fill: Any) -> None:
    expected = pc.fill_null(theirs, pa.scalar(fill, theirs.type.value_type))
    ours = _q(theirs).fill_null(fill)
    ours.validate(full=True)
    assert ours.type == _q(expected).type
    assert [repr(v) for v in ours.to_pylist()] == [repr(v) for v in expected.to_pylist()]
    one = qv.array([fill], ours.type)  # a one-value dictionary array as the fill
    assert _q(theirs).fill_null(one).to_pylist() == ours.to_pylist()


def test_fill_null_dictionary_beyond_the_index_type() -> None:
    # the bound of pyarrow's concat_arrays (at most 127 values for int8); pyarrow's
    # fill_null itself builds a 128-value dictionary here
    full = qv.array(_dictionary([*range(127), None], [str(i) for i in range(127)]))
    with pytest.raises(qv.ArrowInvalid, match="index type int8"):
        full.fill_null("new")
    assert full.fill_null("3").to_pylist()[-1] == "3"


def test_sort_indices_dictionary_of_floats_with_nan() -> None:
    arr = qv.array(pa.array([1.0, float("nan"), 0.5, None]).dictionary_encode())
    assert qc.sort_indices(arr).to_pylist() == [2, 0, 1, 3]  # pyarrow's order


@pytest.mark.parametrize(
    "theirs",
    [
        pa.array([1.0, float("nan"), 0.5, None]).dictionary_encode(),
        _dictionary([0, 1, None, 2, 3, 0, 1, 2, 4], [2.0, None, float("nan"), -0.0, 0.0]),
        _dictionary([0, 1, None, 2, 3, 0, 1, 2], ["b", None, "a", "b"], "uint32"),
        _dictionary([3, 2, 1, 0, None], [5, -1, 5, 2**40], "int16"),
        _dictionary([1, 0, 1, None], [True, False]),
        _dictionary([None, None], ["x"]).slice(1),
        pa.DictionaryArray.from_arrays(pa.array([None, None], "int8"), pa.array([], "int64")),
        pa.array([b"q", b"", None, b"\x00", b"q"]).dictionary_encode().slice(1),
    ],
)
@pytest.mark.parametrize("order", ["ascending", "descending"])
def test_sort_indices_dictionary_matches_pyarrow(theirs: pa.Array, order: str) -> None:
    # pyarrow ranks a dictionary's values (NaN after the numbers) and sorts the ranks, so
    # NaN comes first in descending order, unlike a plain float column
    expected = pc.sort_indices(theirs, sort_keys=[("", order)]).to_pylist()
    assert qc.sort_indices(_q(theirs), order=order).to_pylist() == expected


# -- foreign indices and masks -------------------------------------------------------------


def test_take_with_pyarrow_indices_holding_nulls() -> None:
    arr = qv.array([10, 20, 30])
    assert arr.take(pa.array([2, None, 0])).to_pylist() == [30, None, 10]


@pytest.mark.parametrize(
    "indices",
    [
        pa.array([2, None, 0], pa.uint8()),
        pa.array([None, None], pa.int64()),
        pa.array([1, None, 2, None]).slice(1),
        pa.chunked_array([[2], [None, 0]]),
    ],
)
def test_take_with_foreign_indices_matches_pyarrow(indices: Any) -> None:
    values = pa.array(["a", None, "c"])
    expected = pc.take(values, indices).to_pylist()
    assert _q(values).take(indices).to_pylist() == expected


def test_take_with_null_typed_foreign_indices() -> None:
    # pyarrow has no take kernel for null-typed indices; quiver reads them as all null
    assert qv.array(["a"]).take(pa.array([None, None])).to_pylist() == [None, None]


def test_filter_with_a_pyarrow_mask_holding_nulls() -> None:
    values = pa.array([10, 20, 30, 40])
    for mask in (pa.array([True, None, True, None]),
                 pa.chunked_array([[None], [True, False, True]], pa.bool_())):
        assert _q(values).filter(mask).to_pylist() == pc.filter(values, mask).to_pylist()


def test_foreign_indices_of_other_types_are_refused() -> None:
    with pytest.raises(qv.ArrowTypeError, match="found double"):
        qv.array([1, 2]).take(pa.array([1.0, None]))
    with pytest.raises(qv.ArrowIndexError, match="found 5 at position 1"):
        qv.array([1, 2]).take(pa.array([None, 5]))


@pytest.mark.parametrize("indices", [["1"], [1.5], [1, 1.0], [0, "2", None]])
def test_list_indices_that_are_not_integers_are_refused(indices: list) -> None:
    # numpy's int64 conversion would have read "1" and 1.5 as 1
    with pytest.raises(qv.ArrowTypeError, match="expected indices as integers or booleans"):
        qv.array([10, 20, 30]).take(indices)


def test_list_indices_past_64_bits_are_an_index_error() -> None:
    with pytest.raises(qv.ArrowIndexError, match="within 64 bits, found 18446744073709551616"):
        qv.array([10, 20, 30]).take([0, 2**64])


def test_list_indices_and_masks_of_numpy_scalars_and_nulls() -> None:
    a = qv.array([10, 20, 30])
    assert a.take([np.int32(2), None, 0]).to_pylist() == [30, None, 10]
    assert a.take(range(1, 3)).to_pylist() == [20, 30]
    assert a.filter([True, None, np.bool_(True)]).to_pylist() == [10, 30]
    with pytest.raises(qv.ArrowTypeError, match="filter mask as integers or booleans, found str"):
        a.filter(["x", "y", "z"])


# -- sorting run-end encoded and nested columns ------------------------------------------


@pytest.mark.parametrize("order", ["ascending", "descending"])
@pytest.mark.parametrize("offset", [0, 1])
def test_sort_indices_run_end_encoded_sorts_as_its_decoded_values(order: str, offset: int
                                                                   ) -> None:
    # pyarrow has no kernel for it: the decoded values must sort as a plain column (NaN
    # was compared as a Python float, and the rows came out in the order of their runs)
    ree = pa.RunEndEncodedArray.from_arrays(
        pa.array([2, 3, 6, 9, 10], pa.int32()), pa.array([1.5, None, float("nan"), -0.0, -7.0]))
    theirs = ree.slice(offset)
    plain = pa.array(_q(theirs).to_pylist(), pa.float64())
    expected = pc.sort_indices(plain, sort_keys=[("", order)]).to_pylist()
    assert qc.sort_indices(_q(theirs), order=order).to_pylist() == expected


@pytest.mark.parametrize("theirs", [
    pa.array([[2.0], [float("nan")], [-0.0], [1.0, float("nan")], []]),
    pa.array([[1], [None, 2], None], pa.list_(pa.int64())),
    pa.array([[("a", 1)], []], pa.map_(pa.string(), pa.int64())),
])
def test_sort_indices_refuses_nested_columns_as_pyarrow_does(theirs: pa.Array) -> None:
    # lists were ranked as Python lists: NaN inside gave an order that is none, a null
    # beside a number raised TypeError
    with pytest.raises(pa.ArrowTypeError, match="Sorting not supported"):
        pa.table({"x": theirs}).sort_by("x")
    with pytest.raises(qv.NotSupported, match="types with an order"):
        qc.sort_indices(_q(theirs))
    with pytest.raises(qv.NotSupported, match="types with an order"):
        qv.table({"x": _q(theirs)}).sort_by("x")


def test_run_ends_stopping_short_are_quivers_error_not_an_index_error() -> None:
    from quiver.array import make_array
    from quiver.array.data import null_mask
    from quiver.array.select import sort_keys

    ends = qv.array([2], qv.int32())
    values = qv.array([1.5])
    short = make_array(qv.run_end_encoded(qv.int32(), qv.float64()), 4, [], [ends, values], 0)
    for call in (lambda: null_mask(short), lambda: sort_keys(short)):
        with pytest.raises(qv.ArrowInvalid, match="expected run ends and values reaching slot 3"):
            call()
