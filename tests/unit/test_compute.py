"""quiver.compute entry points (take, filter, is_null, is_valid, fill_null, cast,
sort_indices) on every kind of input, against pyarrow.compute: what pyarrow computes,
quiver computes alike; what it refuses, quiver refuses with its own error."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import quiver as qv
import quiver.compute as qc


def test_compute_entry_points_on_chunked_and_batches() -> None:
    col = qv.chunked_array([qv.array([1, None])])
    assert qc.is_valid(col).to_pylist() == [True, False]  # AttributeError
    with pytest.raises(qv.ArrowError):
        qc.is_null(qv.table({"a": [1, None]}))  # AttributeError, not a quiver error


VALUES = [3, None, 1, 2]
KINDS: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {  # (quiver's, pyarrow's)
    "Array": (lambda: qv.array(VALUES), lambda: pa.array(VALUES)),
    "ChunkedArray": (lambda: qv.chunked_array([qv.array(VALUES[:1]), qv.array(VALUES[1:])]),
                     lambda: pa.chunked_array([VALUES[:1], VALUES[1:]])),
    "RecordBatch": (lambda: qv.record_batch({"a": VALUES}),
                    lambda: pa.record_batch({"a": VALUES})),
    "Table": (lambda: qv.table({"a": VALUES}), lambda: pa.table({"a": VALUES})),
}
FUNCTIONS: dict[str, Callable[[Any, Any], Any]] = {  # (module, data) -> result
    "take": lambda m, d: m.take(d, [2, 0]),
    "filter": lambda m, d: m.filter(d, [True, False, True, True]),
    "is_null": lambda m, d: m.is_null(d),
    "is_valid": lambda m, d: m.is_valid(d),
    "fill_null": lambda m, d: m.fill_null(d, 0),
    "cast": lambda m, d: m.cast(d, qv.int32() if m is qc else pa.int32()),
    "sort_indices": lambda m, d: m.sort_indices(d, [("a", "descending")]),
}


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("function", list(FUNCTIONS))
def test_entry_points_take_what_pyarrow_takes(function: str, kind: str) -> None:
    ours, theirs = KINDS[kind]
    call = FUNCTIONS[function]
    try:
        expected = call(pc, theirs())
    except (pa.ArrowTypeError, pa.ArrowNotImplementedError, AttributeError):
        # pyarrow refuses a batch or table here (some with a raw AttributeError)
        with pytest.raises(qv.ArrowTypeError, match="expected a quiver Array or "
                                                     "ChunkedArray, found"):
            call(qc, ours())
        return
    got = call(qc, ours())
    same_kind = [(pa.Array, qv.Array), (pa.ChunkedArray, qv.ChunkedArray),
                 (pa.RecordBatch, qv.RecordBatch), (pa.Table, qv.Table)]
    assert [isinstance(got, q) for _, q in same_kind] == [
        isinstance(expected, p) for p, _ in same_kind]
    assert got.to_pylist() == expected.to_pylist()


@pytest.mark.parametrize("function", ["is_null", "is_valid", "fill_null", "cast",
                                      "sort_indices"])
def test_entry_points_on_an_empty_chunked_array(function: str) -> None:
    got = FUNCTIONS[function](qc, qv.chunked_array([], qv.int64()))
    expected = FUNCTIONS[function](pc, pa.chunked_array([], pa.int64()))
    assert got.to_pylist() == expected.to_pylist()


@pytest.mark.parametrize("function", list(FUNCTIONS))
@pytest.mark.parametrize("data", [[1, 2], pa.array([1, 2]), pa.scalar(1), 5, None, "a"],
                         ids=["list", "pyarrow array", "pyarrow scalar", "int", "None", "str"])
def test_entry_points_refuse_other_inputs_with_quiver_errors(function: str, data: Any) -> None:
    with pytest.raises(qv.ArrowTypeError, match=f"found {type(data).__name__}"):
        FUNCTIONS[function](qc, data)


def test_sort_indices_arguments() -> None:
    arr = qv.array(VALUES)
    batch = qv.record_batch({"a": VALUES, "b": [1, 1, 2, 2]})
    assert qc.sort_indices(arr, order="descending").to_pylist() == [0, 3, 2, 1]
    assert qc.sort_indices(batch, order="descending").to_pylist() == [0, 3, 2, 1]
    assert qc.sort_indices(batch, [("b", "descending"), ("a", "ascending")]).to_pylist() == (
        pc.sort_indices(pa.record_batch({"a": VALUES, "b": [1, 1, 2, 2]}),
                        [("b", "descending"), ("a", "ascending")]).to_pylist())
    with pytest.raises(qv.ArrowInvalidArgument, match="one sort key for an array, found 2"):
        qc.sort_indices(arr, [("a", "ascending"), ("b", "ascending")])
    with pytest.raises(qv.ArrowInvalidArgument, match="found 'up'"):
        qc.sort_indices(arr, [("a", "up")])
    with pytest.raises(qv.ArrowTypeError, match="to sort by, found 5"):
        qc.sort_indices(batch, 5)  # type: ignore[arg-type]
    with pytest.raises(qv.ArrowInvalidArgument, match="column to sort by, found no columns"):
        qc.sort_indices(qv.record_batch({}))
