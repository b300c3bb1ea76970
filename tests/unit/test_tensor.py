"""Tests for quiver.tensor and quiver.ipc.tensor: gold files, pyarrow parity, bounds checks."""

from __future__ import annotations

import io
import json

import numpy as np
import pyarrow as pa
import pytest

import quiver as qv
from quiver.errors import (
    ArrowError,
    ArrowInvalid,
    ArrowTypeError,
    BodyError,
    FormatError,
    MetadataError,
    NotSupported,
    TruncatedError,
)
from quiver.ipc import metadata as md
from quiver.ipc import tensor as it
from quiver.ipc.framing import frame_message
from quiver.tensor import (
    SparseCOOTensor,
    SparseCSCMatrix,
    SparseCSFTensor,
    SparseCSRMatrix,
    Tensor,
)
from tests.conftest import ARROW_TESTING, SUPPLEMENT, require_shared

# --------------------------------------------------------------------------------------
# gold files


def _gold_tensors() -> list[dict]:
    manifest = SUPPLEMENT / "manifest.json"
    if not manifest.exists():
        return []
    return [f for f in json.loads(manifest.read_text())["files"] if f["file"].endswith(".tensor")]


GOLD = _gold_tensors()


def _pa_read(data: bytes) -> np.ndarray:
    return pa.ipc.read_tensor(pa.BufferReader(data)).to_numpy()


def _pa_bytes(arr: np.ndarray, dim_names=None) -> bytes:
    sink = pa.BufferOutputStream()
    pa.ipc.write_tensor(pa.Tensor.from_numpy(arr, dim_names=dim_names), sink)
    return sink.getvalue().to_pybytes()


def _ours(obj) -> bytes:
    sink = io.BytesIO()
    n = it.write_tensor(obj, sink)
    out = sink.getvalue()
    assert n == len(out)
    return out


def test_gold_manifest_lists_tensors() -> None:
    require_shared(SUPPLEMENT / "manifest.json")
    assert len(GOLD) >= 4


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


@pytest.mark.parametrize("entry", GOLD, ids=[e["file"] for e in GOLD])
def test_gold_tensor_rewritten_by_quiver_is_byte_identical_in_body(entry: dict) -> None:
    raw = require_shared(SUPPLEMENT / entry["file"]).read_bytes()
    tensor = it.read_tensor(raw)
    ours = _ours(tensor)
    body_len = tensor.size * tensor.itemsize
    assert ours[-body_len:] == raw[-body_len:] if body_len else True
    assert (len(ours) - body_len) % 64 == 0 and (len(raw) - body_len) % 64 == 0
    assert np.array_equal(_pa_read(ours), _pa_read(raw))


def test_read_from_bytes_is_zero_copy() -> None:
    raw = np.frombuffer(_pa_bytes(np.arange(24, dtype=np.int64).reshape(4, 6)), np.uint8)
    view = np.asarray(it.read_tensor(raw))
    assert np.shares_memory(view, raw)
    assert view[3, 5] == 23


def test_read_from_path_memory_maps(tmp_path) -> None:
    p = tmp_path / "t.tensor"
    p.write_bytes(_pa_bytes(np.arange(10, dtype=np.float32)))
    t = it.read_tensor(p)
    arr = t.to_numpy()
    assert arr.tolist() == list(range(10))
    assert not arr.flags.writeable


def test_fuzz_regression_files_read_or_raise_arrow_error() -> None:
    folder = require_shared(ARROW_TESTING / "arrow-ipc-tensor-stream")
    files = [p for p in folder.iterdir() if p.is_file() and not p.name.endswith(".md")]
    assert files
    for p in files:
        for source in (p.read_bytes(), io.BytesIO(p.read_bytes())):
            try:
                t = it.read_tensor(source)
            except ArrowError:
                continue
            np.asarray(t).sum()


# --------------------------------------------------------------------------------------
# writing, read back by pyarrow


@pytest.mark.parametrize(
    "arr",
    [
        np.arange(24, dtype=np.int32).reshape(2, 3, 4),
        np.asfortranarray(np.arange(12, dtype=np.float64).reshape(3, 4)),
        np.linspace(0, 1, 7).astype(np.float16),
        np.arange(40, dtype=np.uint8).reshape(5, 8)[:, ::2],
        np.arange(60, dtype=np.int16).reshape(6, 10)[1:5, 2:7],
        np.arange(10, dtype=np.uint64)[::-1],
        np.zeros((0, 3), dtype=np.float32),
        np.arange(8, dtype=np.int8),
        np.arange(6, dtype=">i4").reshape(2, 3),
        np.array(5.5),
    ],
    ids=["int32_c", "f64_fortran", "f16", "u8_strided", "i16_window", "u64_reversed",
         "empty", "int8", "bigendian", "zero_dim"],
)
def test_written_tensor_reads_equal_in_pyarrow(arr: np.ndarray) -> None:
    data = _ours(arr)
    got = _pa_read(data)
    assert got.shape == arr.shape
    assert np.array_equal(got, arr)
    back = it.read_tensor(data)
    assert np.array_equal(back.to_numpy(), arr)
    assert back.to_numpy().dtype == arr.dtype.newbyteorder("=")


def test_written_column_major_keeps_its_strides() -> None:
    arr = np.asfortranarray(np.arange(12, dtype=np.float64).reshape(3, 4))
    back = pa.ipc.read_tensor(pa.BufferReader(_ours(arr)))
    assert back.strides == (8, 24)
    assert back.is_contiguous


def test_non_contiguous_input_is_written_row_major_like_pyarrow() -> None:
    arr = np.arange(40, dtype=np.uint8).reshape(5, 8)[:, ::2]
    ours = _ours(arr)
    theirs = _pa_bytes(arr)
    assert it.read_tensor(ours).strides == (4, 1)
    assert ours[-20:] == theirs[-20:]
    assert len(ours) == len(theirs)


def test_dim_names_survive_both_ways() -> None:
    arr = np.arange(6, dtype=np.int32).reshape(2, 3)
    ours = _ours(Tensor.from_numpy(arr, dim_names=["row", "col"]))
    assert pa.ipc.read_tensor(pa.BufferReader(ours)).dim_names == ["row", "col"]
    theirs = _pa_bytes(arr, dim_names=["x", "y"])
    assert it.read_tensor(theirs).dim_names == ("x", "y")
    assert it.read_tensor(theirs).dim_name(1) == "y"


def test_layout_matches_pyarrow_framing_and_body() -> None:
    arr = np.arange(12, dtype=np.int32).reshape(3, 4)
    ours, theirs = _ours(arr), _pa_bytes(arr)
    assert ours[:4] == theirs[:4] == b"\xff\xff\xff\xff"
    assert len(ours) == len(theirs)
    assert ours[-48:] == theirs[-48:]
    assert int.from_bytes(ours[4:8], "little") + 8 == len(ours) - 48


def test_get_tensor_size_matches_bytes_written() -> None:
    arr = np.arange(100, dtype=np.float64).reshape(10, 10)[::2]
    assert it.get_tensor_size(arr) == len(_ours(arr))


def test_write_to_path_and_read_back(tmp_path) -> None:
    p = tmp_path / "x.tensor"
    n = it.write_tensor(np.arange(5, dtype=np.int64), str(p))
    assert n == p.stat().st_size
    assert it.read_tensor(str(p)).to_numpy().tolist() == [0, 1, 2, 3, 4]


def test_file_object_reads_consecutive_tensors() -> None:
    sink = io.BytesIO()
    it.write_tensor(np.arange(3, dtype=np.int32), sink)
    it.write_tensor(np.ones((2, 2), dtype=np.float32), sink)
    sink.seek(0)
    assert it.read_tensor(sink).to_numpy().tolist() == [0, 1, 2]
    assert it.read_tensor(sink).to_numpy().tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_legacy_framing_without_continuation_marker_reads() -> None:
    modern = _pa_bytes(np.arange(4, dtype=np.int32))
    legacy = modern[4:]  # drop the marker: the int32 length comes first
    assert it.read_tensor(legacy).to_numpy().tolist() == [0, 1, 2, 3]
    assert it.read_tensor(io.BytesIO(legacy)).to_numpy().tolist() == [0, 1, 2, 3]


# --------------------------------------------------------------------------------------
# malformed input


def _message(header, body: bytes, body_length: int | None = None) -> bytes:
    blen = len(body) if body_length is None else body_length
    meta = md.encode_message(md.Message(md.V5, header, blen))
    return frame_message(meta, blen, alignment=64) + body


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


def test_metadata_decoding_bugs_are_not_masked_as_metadata_errors(monkeypatch) -> None:
    # decode_message reports malformed bytes as FormatError itself; anything else is a bug
    data = _pa_bytes(np.arange(4, dtype=np.int32))

    def broken(*args, **kwargs):
        raise IndexError("a bug")

    monkeypatch.setattr(md, "decode_message", broken)
    with pytest.raises(IndexError, match="a bug"):
        it.read_tensor(data)


def test_metadata_errors_carry_the_message_offset() -> None:
    data = bytearray(_pa_bytes(np.arange(4, dtype=np.int32)))
    data[8:12] = (0x7FFFFFF0).to_bytes(4, "little")  # the root table offset, out of bounds
    with pytest.raises(MetadataError) as e:
        it.read_tensor(bytes(data))
    assert e.value.offset is not None


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


def test_data_region_past_body_is_body_error() -> None:
    hdr = md.Tensor(qv.int32(), (4,), (), (4,), 8, 16)
    with pytest.raises(BodyError, match="within the 16-byte body"):
        it.read_tensor(_message(hdr, bytes(16)))


def test_truncated_body_is_truncated_error() -> None:
    data = _pa_bytes(np.arange(16, dtype=np.int64))
    with pytest.raises(TruncatedError, match="expected a body of 128 bytes"):
        it.read_tensor(data[:-5])
    with pytest.raises(TruncatedError):
        it.read_tensor(io.BytesIO(data[:-5]))


def test_lying_body_length_in_file_does_not_allocate_it() -> None:
    hdr = md.Tensor(qv.int8(), (4,), (), (1,), 0, 4)
    data = _message(hdr, bytes(4), body_length=1 << 50)
    with pytest.raises(TruncatedError, match="found 4"):
        it.read_tensor(io.BytesIO(data))


def test_unsupported_value_type_is_not_supported() -> None:
    hdr = md.Tensor(qv.bool_(), (4,), (), (1,), 0, 1)
    with pytest.raises(NotSupported, match="tensor value type"):
        it.read_tensor(_message(hdr, bytes(8)))


def test_record_batch_message_is_not_a_tensor() -> None:
    batch = pa.record_batch([pa.array([1, 2])], names=["a"])
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch)
    with pytest.raises(MetadataError, match="expected a Tensor message, found a Schema"):
        it.read_tensor(sink.getvalue().to_pybytes())


def test_end_of_stream_marker_is_framing_error() -> None:
    with pytest.raises(FormatError, match="end-of-stream"):
        it.read_tensor(b"\xff\xff\xff\xff\x00\x00\x00\x00")


@pytest.mark.parametrize("cut", [0, 3, 7, 20])
def test_short_inputs_are_truncated_errors(cut: int) -> None:
    data = _pa_bytes(np.arange(4, dtype=np.int32))
    with pytest.raises(TruncatedError):
        it.read_tensor(data[:cut])


def test_every_single_byte_corruption_reads_or_raises_arrow_error() -> None:
    base = bytearray(_pa_bytes(np.arange(12, dtype=np.int32).reshape(3, 4), ["a", "b"]))
    for pos in range(len(base) - 48):
        for value in (0x00, 0xFF, 0x7F, base[pos] ^ 0x01):
            data = bytearray(base)
            data[pos] = value
            try:
                t = it.read_tensor(bytes(data))
            except ArrowError:
                continue
            np.asarray(t).sum()


def test_wrong_source_type_is_type_error() -> None:
    with pytest.raises(ArrowTypeError, match="expected bytes"):
        it.read_tensor(12345)
    with pytest.raises(ArrowTypeError, match="sink"):
        it.write_tensor(np.zeros(2), 12345)


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


# --------------------------------------------------------------------------------------
# sparse tensors

DENSE = np.array(
    [[0, 1, 2, 0], [0, 0, 3, 0], [0, 4, 0, 5], [0, 0, 0, 0], [6, 0, 7, 8], [0, 9, 0, 0]],
    dtype=np.float64,
)


def _round_trip(st):
    sink = io.BytesIO()
    n = it.write_sparse_tensor(st, sink)
    data = sink.getvalue()
    assert n == len(data)
    return it.read_sparse_tensor(data), data


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


def test_coo_with_out_of_range_coordinates_is_body_error() -> None:
    body = np.array([[0, 9]], dtype="<i8").tobytes() + np.array([1.0]).tobytes()
    index = md.SparseTensorIndexCOO(qv.int64(), md.Buffer(0, 16), (16, 8), True)
    hdr = md.SparseTensor(qv.float64(), (2, 2), (), 1, index, md.Buffer(16, 8))
    with pytest.raises(BodyError, match="below the dimension size, found 9"):
        it.read_sparse_tensor(_message(hdr, body))


def test_csr_with_bad_indptr_is_body_error() -> None:
    body = np.array([0, 5, 1], dtype="<i8").tobytes() + np.array([0], "<i8").tobytes()
    body += np.array([1.0]).tobytes()
    index = md.SparseMatrixIndexCSX(
        "row", qv.int64(), md.Buffer(0, 24), qv.int64(), md.Buffer(24, 8)
    )
    hdr = md.SparseTensor(qv.float64(), (2, 2), (), 1, index, md.Buffer(32, 8))
    with pytest.raises(BodyError, match="indptr"):
        it.read_sparse_tensor(_message(hdr, body))


def test_sparse_nnz_beyond_data_is_body_error() -> None:
    index = md.SparseTensorIndexCOO(qv.int64(), md.Buffer(0, 16), (), True)
    hdr = md.SparseTensor(qv.float64(), (2, 2), (), 1 << 40, index, md.Buffer(16, 8))
    with pytest.raises(BodyError, match="sparse tensor data"):
        it.read_sparse_tensor(_message(hdr, bytes(24)))


def test_dense_reader_rejects_sparse_message_and_vice_versa() -> None:
    _, data = _round_trip(SparseCOOTensor.from_dense_numpy(DENSE))
    with pytest.raises(MetadataError, match="expected a Tensor message, found a SparseTensor"):
        it.read_tensor(data)
    with pytest.raises(MetadataError, match="expected a SparseTensor message"):
        it.read_sparse_tensor(_pa_bytes(DENSE))


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


def test_random_mutations_of_dense_and_sparse_messages_read_or_raise_arrow_error() -> None:
    import random

    seeds = [_pa_bytes(np.arange(12, dtype=np.int32).reshape(3, 4), ["a", "b"])]
    for st in (
        SparseCOOTensor.from_dense_numpy(DENSE),
        SparseCSRMatrix.from_dense_numpy(DENSE),
        SparseCSCMatrix.from_dense_numpy(DENSE),
        SparseCSFTensor.from_dense_numpy(np.arange(24).reshape(2, 3, 4) % 5),
    ):
        seeds.append(_round_trip(st)[1])
    rng = random.Random(4)
    for _ in range(3000):
        data = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.choice([0, 0xFF, 0x7F, 0x80, rng.randrange(256)])
        if rng.random() < 0.1:
            data = data[: rng.randrange(len(data))]
        for read in (it.read_tensor, it.read_sparse_tensor):
            try:
                got = read(bytes(data))
            except ArrowError:
                continue
            with np.errstate(all="ignore"):  # mutated floats may be NaN
                if isinstance(got, Tensor):
                    np.asarray(got).sum()
                elif got.size < 10_000_000:
                    got.to_dense()


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
