"""Tests for quiver.ipc.tensor: Tensor and SparseTensor IPC messages."""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pytest

import quiver as qv
from quiver.errors import (
    ArrowError,
    ArrowTypeError,
    BodyError,
    FormatError,
    MetadataError,
    TruncatedError,
)
from quiver.ipc import metadata as md
from quiver.ipc import tensor as it
from quiver.tensor import SparseCOOTensor, SparseCSCMatrix, SparseCSFTensor, SparseCSRMatrix, Tensor
from tests.conftest import ARROW_TESTING, SUPPLEMENT, require_shared
from tests.unit._tensor_helpers import (
    DENSE,
    GOLD,
    _message,
    _ours,
    _pa_bytes,
    _pa_read,
    _round_trip,
)


def test_gold_manifest_lists_tensors() -> None:
    require_shared(SUPPLEMENT / "manifest.json")
    assert len(GOLD) >= 4


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


def test_metadata_decoding_bugs_are_not_masked_as_metadata_errors(monkeypatch) -> None:
    # decode_message reports malformed bytes as FormatError itself; anything else is a bug
    data = _pa_bytes(np.arange(4, dtype=np.int32))

    def broken(*args, **kwargs):
        raise IndexError("a bug")

    monkeypatch.setattr(md, "decode_message", broken)
    with pytest.raises(IndexError, match="a bug"):
        it.read_tensor(data)


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
