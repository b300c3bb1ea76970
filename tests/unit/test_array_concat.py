"""Tests for quiver.array.concat: joining dictionary arrays whose dictionaries differ
(unified as pyarrow's ``concat_arrays`` does) and keeping one shared dictionary as is."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest

import quiver as qv
import quiver.ipc as ipc
from quiver.array.concat import concat_arrays


def _dict(indices: list[int | None], values: list, index_type: str = "int8") -> qv.Array:
    return qv.array(pa.DictionaryArray.from_arrays(pa.array(indices, index_type), pa.array(values)))


def test_combine_chunks_of_dictionaries_with_different_dictionaries() -> None:
    chunks = [qv.array(pa.array(["a", "b"]).dictionary_encode()),
              qv.array(pa.array(["c", "a"]).dictionary_encode())]
    assert qv.chunked_array(chunks).combine_chunks().to_pylist() == ["a", "b", "c", "a"]


def test_read_pandas_after_dictionary_replacement() -> None:
    b1 = pa.record_batch({"d": pa.array(["a", "b"]).dictionary_encode()})
    b2 = pa.record_batch({"d": pa.array(["c", "a"]).dictionary_encode()})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, b1.schema) as w:
        w.write_batch(b1)
        w.write_batch(b2)  # a replacement dictionary
    data = sink.getvalue().to_pybytes()
    assert ipc.open_stream(data).read_pandas()["d"].tolist() == ["a", "b", "c", "a"]
    table = ipc.open_stream(data).read_all()
    assert table.sort_by("d").column("d").to_pylist() == ["a", "a", "b", "c"]
    assert table.column("d").take([3, 2]).to_pylist() == ["a", "c"]


@pytest.mark.parametrize(
    ("parts", "index_type"),
    [
        ([([0, 1, 2], ["x", "x", "y"]), ([0, 1], ["y", "q"])], pa.int8()),
        ([([1], ["a", "b"]), ([0, None], ["c"])], pa.int16()),  # unused entries, null index
        ([([0, 1, 2], [0.0, float("nan"), 1.0]), ([0, 1, 2], [-0.0, float("nan"), 1.0])],
         pa.int32()),
        ([([0, 1], [b"a", b"a\x00"]), ([1, 0], [b"a\x00", b""])], pa.uint8()),
        ([([0, 1], [True, False]), ([0], [False])], pa.int64()),
        ([([0, 1], [10, 20]), ([0, 1], [20, 30]), ([1, 0], [30, 10])], pa.uint32()),
    ],
)
def test_unified_dictionary_matches_pyarrow(parts: list, index_type: pa.DataType) -> None:
    theirs = [pa.DictionaryArray.from_arrays(pa.array(i, index_type), pa.array(v))
              for i, v in parts]
    expected = pa.concat_arrays(theirs)
    got = concat_arrays([qv.array(a) for a in theirs])
    got.validate(full=True)
    assert got.type == qv.array(expected).type
    assert got.indices.to_pylist() == expected.indices.to_pylist()  # type: ignore[attr-defined]
    ours_dict = got.dictionary.to_pylist()  # type: ignore[union-attr]
    theirs_dict = expected.dictionary.to_pylist()
    assert [repr(v) for v in ours_dict] == [repr(v) for v in theirs_dict]  # -0.0, nan


def test_unified_dictionary_of_sliced_chunks() -> None:
    a = pa.array(["z", "a", "b"]).dictionary_encode().slice(1)
    b = pa.array(["b", "c", "z"]).dictionary_encode().slice(1, 1)
    expected = pa.concat_arrays([a, b])
    got = concat_arrays([qv.array(a), qv.array(b)])
    assert got.to_pylist() == ["a", "b", "c"]
    assert got.dictionary.to_pylist() == expected.dictionary.to_pylist()  # type: ignore[union-attr]


def test_one_shared_dictionary_is_kept_as_is() -> None:
    base = qv.array(pa.DictionaryArray.from_arrays(pa.array([0, 1], pa.int8()),
                                                   pa.array(["x", "x"])))
    got = concat_arrays([base, base.slice(1)])
    assert got.dictionary is base.dictionary  # the zero-copy path: no unification
    equal = _dict([1, 1], ["x", "x"])  # equal values, another object: kept as pyarrow does
    assert concat_arrays([base, equal]).dictionary is base.dictionary
    assert concat_arrays([base, equal]).indices.to_pylist() == [0, 1, 1, 1]  # type: ignore[attr-defined]
    # pyarrow also keeps [0.0] for [-0.0] (its Equals ignores the sign); quiver keeps both
    zeros = concat_arrays([_dict([0], [0.0]), _dict([0], [-0.0])])
    assert [math.copysign(1, v) for v in zeros.to_pylist()] == [1, -1]


def test_unified_dictionary_of_lists() -> None:
    # pyarrow: "Unification of list<item: int64> dictionaries is not implemented"
    got = concat_arrays([_dict([0], [[1, 2]]), _dict([0, 0], [[3]]), _dict([0], [[1, 2]])])
    got.validate(full=True)
    assert got.to_pylist() == [[1, 2], [3], [3], [1, 2]]
    assert got.dictionary.to_pylist() == [[1, 2], [3]]  # type: ignore[union-attr]


def test_unified_dictionary_keeps_a_null_value() -> None:
    # pyarrow refuses ("Cannot yet unify dictionaries with nulls"); quiver keeps the null
    # as one more dictionary value, so a null value stays distinct from a null index
    got = concat_arrays([_dict([0, 1, None], ["x", None]), _dict([0, 1], [None, "z"])])
    got.validate(full=True)
    assert got.to_pylist() == ["x", None, None, None, "z"]
    assert got.dictionary.to_pylist() == ["x", None, "z"]  # type: ignore[union-attr]
    assert got.indices.to_pylist() == [0, 1, None, 1, 2]  # type: ignore[attr-defined]
    assert got.null_count == 1


def test_unified_dictionary_too_large_for_the_index_type() -> None:
    a, b, c = (pa.DictionaryArray.from_arrays(pa.array(range(100), pa.int8()),
                                              pa.array([str(i) for i in range(s, s + 100)]))
               for s in (0, 100, 27))
    with pytest.raises(pa.ArrowInvalid):
        pa.concat_arrays([a, b])
    with pytest.raises(qv.ArrowInvalid, match=r"expected .* found 200"):
        concat_arrays([qv.array(a), qv.array(b)])
    assert len(pa.concat_arrays([a, c]).dictionary) == 127  # pyarrow: at most 127 for int8
    assert len(concat_arrays([qv.array(a), qv.array(c)]).dictionary) == 127  # type: ignore[arg-type]


def test_unified_dictionary_of_many_chunks_is_vectorized_over_rows() -> None:
    rng = np.random.default_rng(0)
    chunks, expected = [], []
    for k in range(5):
        vals = [f"v{k + j}" for j in range(4)]
        idx = rng.integers(0, 4, 1000)
        chunks.append(_dict(idx.tolist(), vals, "int32"))
        expected.extend(vals[i] for i in idx)
    got = concat_arrays(chunks)
    assert got.to_pylist() == expected
    assert got.dictionary.to_pylist() == [f"v{i}" for i in range(8)]  # type: ignore[union-attr]
