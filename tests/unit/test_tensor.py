"""Tests for quiver.tensor and quiver.ipc.tensor: gold files, pyarrow parity, bounds checks."""

from __future__ import annotations

import io
import json

import numpy as np
import pyarrow as pa
import pytest

import quiver as qv
from quiver.errors import ArrowError, ArrowInvalid, ArrowTypeError, BodyError, NotSupported
from quiver.ipc import metadata as md
from quiver.ipc import tensor as it
from quiver.tensor import SparseCOOTensor, SparseCSCMatrix, SparseCSFTensor, SparseCSRMatrix, Tensor
from tests.conftest import SUPPLEMENT, require_shared
from tests.unit._tensor_helpers import (
    DENSE,
    GOLD,
    _message,
    _ours,
    _pa_bytes,
    _pa_read,
    _round_trip,
)


@pytest.mark.parametrize("entry", GOLD, ids=[e["file"] for e in GOLD])
@pytest.mark.parametrize("how", ["path", "bytes", "file"])
def test_gold_tensor_reads_like_pyarrow_and_manifest(entry: dict, how: str) -> None:
    path = require_shared(SUPPLEMENT / entry["file"])
    raw = path.read_bytes()
    source = {"path": path, "bytes": raw, "file": io.BytesIO(raw)}[how]
    tensor = it.read_tensor(source)
    want = _pa_read(raw)
    got = tensor.to_numpy()
    assert got.dtype == want.dtype
    assert got.shape == want.shape == tuple(entry["shape"])
    assert np.array_equal(got, want)
    assert str(tensor.type) == entry["type"]
    pa_tensor = pa.ipc.read_tensor(pa.BufferReader(raw))
    assert tensor.strides == tuple(pa_tensor.strides)
    assert list(tensor.dim_names) == entry["dim_names"]
    flat = np.ascontiguousarray(got).reshape(-1).tolist()
    assert flat == json.loads(entry["values_row_major"])


def test_dim_names_survive_both_ways() -> None:
    arr = np.arange(6, dtype=np.int32).reshape(2, 3)
    ours = _ours(Tensor.from_numpy(arr, dim_names=["row", "col"]))
    assert pa.ipc.read_tensor(pa.BufferReader(ours)).dim_names == ["row", "col"]
    theirs = _pa_bytes(arr, dim_names=["x", "y"])
    assert it.read_tensor(theirs).dim_names == ("x", "y")
    assert it.read_tensor(theirs).dim_name(1) == "y"


def test_shape_beyond_data_is_body_error_with_offset() -> None:
    hdr = md.Tensor(qv.int32(), (1000, 1000), (), (4000, 4), 0, 16)
    data = _message(hdr, bytes(16))
    pattern = r"expected shape \(1000, 1000\).*found it needs 4000000"
    with pytest.raises(BodyError, match=pattern) as e:
        it.read_tensor(data)
    assert e.value.offset == len(data) - 16


def test_huge_claimed_shape_is_rejected_without_allocating() -> None:
    hdr = md.Tensor(qv.float64(), (1 << 40, 1 << 40), (), (0, 0), 0, 8)
    with pytest.raises(BodyError, match="at most"):
        it.read_tensor(_message(hdr, bytes(8)))


@pytest.mark.parametrize(
    ("typ", "shape"),
    [(qv.int64(), (1 << 62, 0)), (qv.int8(), (0, 1 << 62, 2)), (qv.int16(), ((1 << 63) - 1, 0))],
)
def test_empty_tensor_too_big_for_numpy_is_body_error(typ, shape) -> None:
    # size 0, but numpy still multiplies the non-zero dimensions by the item size
    hdr = md.Tensor(typ, shape, (), (), 0, 0)
    with pytest.raises(BodyError, match="non-zero dimensions span at most") as e:
        it.read_tensor(_message(hdr, b""))
    assert e.value.offset is not None
    with pytest.raises(ArrowInvalid, match="non-zero dimensions span at most"):
        Tensor(b"", typ, shape)


def test_empty_tensor_at_numpys_size_limit_reads() -> None:
    shape = ((1 << 63) - 1, 0)
    t = it.read_tensor(_message(md.Tensor(qv.int8(), shape, (), (), 0, 0), b""))
    arr = np.asarray(t)
    assert arr.shape == shape and arr.size == 0


def test_stride_beyond_int64_is_invalid() -> None:
    with pytest.raises(ArrowInvalid, match=r"expected stride 0 <= 9223372036854775807"):
        Tensor(bytes(8), qv.int8(), (1,), (1 << 64,))


def test_zero_strides_broadcast_within_data_reads() -> None:
    hdr = md.Tensor(qv.int64(), (3, 4), (), (0, 0), 0, 8)
    t = it.read_tensor(_message(hdr, (7).to_bytes(8, "little")))
    assert t.to_numpy().tolist() == [[7] * 4] * 3
    assert not t.is_contiguous


def test_strides_count_mismatch_is_body_error() -> None:
    hdr = md.Tensor(qv.int32(), (2, 2), (), (4,), 0, 16)
    with pytest.raises(BodyError, match="expected 2 tensor strides"):
        it.read_tensor(_message(hdr, bytes(16)))


def test_missing_strides_default_to_row_major() -> None:
    hdr = md.Tensor(qv.int16(), (2, 2), (), (), 0, 8)
    body = np.arange(4, dtype="<i2").tobytes()
    assert it.read_tensor(_message(hdr, body)).to_numpy().tolist() == [[0, 1], [2, 3]]


def test_unsupported_value_type_is_not_supported() -> None:
    hdr = md.Tensor(qv.bool_(), (4,), (), (1,), 0, 1)
    with pytest.raises(NotSupported, match="tensor value type"):
        it.read_tensor(_message(hdr, bytes(8)))


# --------------------------------------------------------------------------------------
# the in-memory Tensor


def test_from_numpy_views_without_copy() -> None:
    arr = np.arange(20, dtype=np.float32).reshape(4, 5)[:, 1:4]
    t = Tensor.from_numpy(arr)
    out = np.asarray(t)
    assert np.shares_memory(out, arr)
    assert out.strides == arr.strides
    assert np.array_equal(out, arr)
    assert not t.is_contiguous


def test_array_protocol_copy_and_dtype() -> None:
    t = Tensor.from_numpy(np.arange(3, dtype=np.int32))
    assert not np.shares_memory(np.array(t, copy=True), t.to_numpy())
    assert np.asarray(t, dtype=np.float64).dtype == np.float64


def test_tensor_rejects_buffer_smaller_than_shape() -> None:
    with pytest.raises(ArrowInvalid, match="found it needs 16"):
        Tensor(bytes(8), qv.int32(), (4,))


def test_tensor_rejects_negative_dimension_and_stride() -> None:
    with pytest.raises(ArrowInvalid, match="dimension 0 size >= 0"):
        Tensor(bytes(8), qv.int32(), (-1,))
    with pytest.raises(ArrowInvalid, match="stride 0 >= 0"):
        Tensor(bytes(8), qv.int32(), (2,), (-4,))


def test_from_numpy_rejects_non_numeric() -> None:
    with pytest.raises(ArrowTypeError, match="integer or float dtype"):
        Tensor.from_numpy(np.array(["a", "b"]))
    with pytest.raises(ArrowTypeError):
        Tensor.from_numpy(np.array([True, False]))


def test_tensor_equality_ignores_strides() -> None:
    arr = np.arange(6, dtype=np.int64).reshape(2, 3)
    assert Tensor.from_numpy(arr) == Tensor.from_numpy(np.asfortranarray(arr))
    assert Tensor.from_numpy(arr) != Tensor.from_numpy(arr + 1)


def test_dim_names_must_match_ndim() -> None:
    with pytest.raises(ArrowError, match="expected 2 dimension names, found 1"):
        Tensor.from_numpy(np.zeros((2, 2)), dim_names=["a"])


def test_csr_matches_spec_example_and_pyarrow() -> None:
    m = SparseCSRMatrix.from_dense_numpy(DENSE)
    assert m.indptr.tolist() == [0, 2, 3, 5, 5, 8, 9]
    assert m.indices.tolist() == [1, 2, 2, 1, 3, 0, 2, 3, 1]
    _, p_indptr, p_indices = pa.SparseCSRMatrix.from_dense_numpy(DENSE).to_numpy()
    assert m.indptr.tolist() == p_indptr.tolist()
    assert m.indices.tolist() == p_indices.tolist()


def test_csc_matches_pyarrow() -> None:
    m = SparseCSCMatrix.from_dense_numpy(DENSE)
    data, p_indptr, p_indices = pa.SparseCSCMatrix.from_dense_numpy(DENSE).to_numpy()
    assert m.indptr.tolist() == p_indptr.tolist()
    assert m.indices.tolist() == p_indices.tolist()
    assert m.data.tolist() == data.reshape(-1).tolist()


def test_coo_matches_pyarrow() -> None:
    x = np.zeros((2, 3, 4, 5), dtype=np.int32)
    for c, v in [((0, 1, 2, 0), 1), ((1, 1, 2, 3), 2), ((0, 2, 1, 0), 3), ((0, 1, 3, 0), 4),
                 ((0, 1, 2, 1), 5), ((1, 2, 0, 4), 6)]:
        x[c] = v
    s = SparseCOOTensor.from_dense_numpy(x)
    data, coords = pa.SparseCOOTensor.from_dense_numpy(x).to_numpy()
    assert s.coords.tolist() == coords.tolist()
    assert s.data.tolist() == data.reshape(-1).tolist()
    assert s.is_canonical


def test_csf_matches_spec_example_and_pyarrow() -> None:
    x = np.zeros((2, 3, 4, 5), dtype=np.int64)
    for c, v in [((0, 0, 0, 1), 1), ((0, 0, 0, 2), 2), ((0, 1, 0, 0), 3), ((0, 1, 0, 2), 4),
                 ((0, 1, 1, 0), 5), ((1, 1, 1, 0), 6), ((1, 1, 1, 1), 7), ((1, 1, 1, 2), 8)]:
        x[c] = v
    s = SparseCSFTensor.from_dense_numpy(x)
    assert [p.tolist() for p in s.indptr] == [[0, 2, 3], [0, 1, 3, 4], [0, 2, 4, 5, 8]]
    assert [i.tolist() for i in s.indices] == [[0, 1], [0, 1, 1], [0, 0, 1, 1],
                                               [1, 2, 0, 2, 0, 0, 1, 2]]
    _, p_indptr, p_indices = pa.SparseCSFTensor.from_dense_numpy(x).to_numpy()
    assert [p.tolist() for p in s.indptr] == [p.tolist() for p in p_indptr]
    assert [i.tolist() for i in s.indices] == [i.tolist() for i in p_indices]
    assert np.array_equal(s.to_dense(), x)


@pytest.mark.parametrize(
    "make",
    [
        lambda: SparseCOOTensor.from_dense_numpy(DENSE, dim_names=["r", "c"]),
        lambda: SparseCSRMatrix.from_dense_numpy(DENSE),
        lambda: SparseCSCMatrix.from_dense_numpy(DENSE.astype(np.int16)),
        lambda: SparseCSFTensor.from_dense_numpy(np.arange(24).reshape(2, 3, 4) % 5),
        lambda: SparseCOOTensor.from_dense_numpy(np.zeros((3, 3), np.float32)),
    ],
    ids=["coo", "csr", "csc", "csf", "coo_empty"],
)
def test_sparse_round_trip_through_ipc(make) -> None:
    st = make()
    back, data = _round_trip(st)
    assert type(back) is type(st)
    assert back.shape == st.shape and back.dim_names == st.dim_names
    assert back.type == st.type
    assert np.array_equal(back.to_dense(), st.to_dense())
    assert back == st
    assert int.from_bytes(data[4:8], "little") % 8 == 0


def test_sparse_read_views_the_body() -> None:
    _, data = _round_trip(SparseCSRMatrix.from_dense_numpy(DENSE))
    raw = np.frombuffer(data, np.uint8)
    back = it.read_sparse_tensor(raw)
    assert np.shares_memory(back.data, raw)
    assert np.shares_memory(back.indices, raw)


def test_sparse_rejects_bad_construction() -> None:
    with pytest.raises(ArrowInvalid, match="COO coordinates of shape"):
        SparseCOOTensor([1.0], [[0]], (2, 2))
    with pytest.raises(ArrowInvalid, match="axis_order"):
        SparseCSFTensor([1], [[0, 1]], [[0], [0]], (2, 2), axis_order=[0, 0])


def test_scipy_conversion() -> None:
    sp = pytest.importorskip("scipy.sparse", reason="scipy is an optional dependency")
    m = sp.random(20, 30, density=0.1, format="csr", random_state=1)
    ours = SparseCSRMatrix.from_scipy(m)
    assert np.array_equal(ours.to_dense(), m.toarray())
    assert (ours.to_scipy() != m).nnz == 0
    coo = SparseCOOTensor.from_scipy(m)
    assert np.array_equal(coo.to_scipy().toarray(), m.toarray())
    csc = SparseCSCMatrix.from_scipy(m)
    assert np.array_equal(csc.to_scipy().toarray(), m.toarray())


def test_to_scipy_without_scipy_names_the_fix() -> None:
    try:
        import scipy  # noqa: F401
    except ImportError:
        with pytest.raises(NotSupported, match="pip install scipy"):
            SparseCSRMatrix.from_dense_numpy(DENSE).to_scipy()
    else:
        pytest.skip("scipy is installed; the missing-scipy message cannot be observed")


def test_zero_dimensional_sparse_tensor_is_rejected() -> None:
    with pytest.raises(ArrowInvalid, match="at least 1 dimension"):
        SparseCOOTensor([1.0], np.zeros((1, 0), np.int64), ())


def test_csf_with_permuted_axis_order_round_trips() -> None:
    x = np.zeros((3, 4, 2), dtype=np.int32)
    x[0, 1, 1], x[2, 3, 0], x[2, 0, 1] = 5, 6, 7
    order = (2, 0, 1)
    levels = SparseCSFTensor.from_dense_numpy(np.transpose(x, order))
    s = SparseCSFTensor(levels.data, levels.indptr, levels.indices, x.shape, order)
    assert np.array_equal(s.to_dense(), x)
    back, _ = _round_trip(s)
    assert back.axis_order == order
    assert np.array_equal(back.to_dense(), x)


def test_tensor_pickles_name_the_package():
    import pickle

    import numpy as np

    from quiver.tensor import Tensor

    tensor = Tensor.from_numpy(np.arange(6, dtype=np.int32).reshape(2, 3))
    data = pickle.dumps(tensor)
    assert b"quiver.tensor." not in data
    assert np.array_equal(np.asarray(pickle.loads(data)), np.asarray(tensor))
