"""Tensor and SparseTensor IPC messages (Tensor.fbs, SparseTensor.fbs; Columnar spec,
"Encapsulated message format").

A tensor travels as one encapsulated message on its own: the framing (continuation marker,
int32 metadata length), a ``Message`` flatbuffer whose header is a ``Tensor`` or
``SparseTensor`` table, padding, then the body.  Like Arrow C++ (``ipc::WriteTensor``),
dense tensors are framed so that the body starts on a 64-byte boundary, the body is exactly
the tensor data (no trailing padding) and a tensor that is neither row- nor column-major is
written as a row-major copy.  Sparse tensors use the default 8-byte alignment and pad each
body buffer to 8 bytes, as ``ipc::WriteSparseTensor`` does.

Reading hands the body bytes straight to numpy (zero-copy over ``bytes``, ``memoryview``
and memory-mapped paths) after checking every region: the body against the input, each
buffer against the body, and shape x strides against the data (Python ints, so no
overflow).  Nothing is allocated from a size the input merely claims: file objects are read
in bounded chunks.  Bad bytes raise :class:`~quiver.errors.FormatError` subclasses with the
byte offset.

>>> import io, numpy as np
>>> sink = io.BytesIO()
>>> write_tensor(np.arange(6, dtype=np.int16).reshape(2, 3), sink) == len(sink.getvalue())
True
>>> read_tensor(sink.getvalue()).to_numpy().tolist()
[[0, 1, 2], [3, 4, 5]]
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Sequence
from typing import Any, BinaryIO

import numpy as np

from .. import types as t
from ..buffers import as_buffer, empty_buffer, padded
from ..errors import (
    ArrowError,
    ArrowInvalid,
    ArrowTypeError,
    BodyError,
    FramingError,
    MetadataError,
    TruncatedError,
)
from ..tensor import (
    SparseCOOTensor,
    SparseCSCMatrix,
    SparseCSFTensor,
    SparseCSRMatrix,
    SparseTensor,
    Tensor,
    check_geometry,
    row_major_strides,
    tensor_numpy_dtype,
    tensor_type_of,
)
from . import metadata as md
from .framing import frame_message, read_frame

#: Arrow C++ aligns tensor bodies to 64 bytes (``kTensorAlignment``)
TENSOR_ALIGNMENT = 64
SPARSE_TENSOR_ALIGNMENT = 8

_READ_CHUNK = 1 << 24


# --------------------------------------------------------------------------------------
# sinks and sources


class _Sink:
    """A path opened for writing, or a caller's object with ``write`` (left open)."""

    def __init__(self, sink: Any) -> None:
        self._own = isinstance(sink, (str, os.PathLike))
        if self._own:
            self.file: Any = open(sink, "wb")  # noqa: SIM115 - closed in __exit__
        elif hasattr(sink, "write"):
            self.file = sink
        else:
            raise ArrowTypeError(
                f"expected a path or an object with write() as the sink, found "
                f"{type(sink).__name__}"
            )

    def __enter__(self) -> _Sink:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._own:
            self.file.close()

    def write_all(self, parts: Sequence[Any]) -> int:
        n = 0
        for p in parts:
            mv = memoryview(p).cast("B")
            if mv.nbytes:
                self.file.write(mv)
                n += mv.nbytes
        return n


def _map_path(path: Any) -> np.ndarray:
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            return empty_buffer()
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    return np.frombuffer(mm, dtype=np.uint8)


def _read_exact(f: BinaryIO, n: int, what: str, offset: int) -> np.ndarray:
    """Read ``n`` bytes in bounded chunks, so a lying size cannot force a huge allocation."""
    if n == 0:
        return empty_buffer()
    chunks = []
    got = 0
    while got < n:
        piece = f.read(min(n - got, _READ_CHUNK))
        if not piece:
            raise TruncatedError(f"expected {n} bytes of {what}, found {got}", offset=offset)
        chunks.append(piece)
        got += len(piece)
    data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    return np.frombuffer(data, dtype=np.uint8)


def _source_message(source: Any) -> tuple[md.Message, np.ndarray, int]:
    """Decode the first message of ``source``: (message, body bytes, body's absolute offset)."""
    if isinstance(source, (str, os.PathLike)):
        return _buffer_message(_map_path(source))
    if hasattr(source, "read") and not isinstance(source, (bytes, bytearray, memoryview)):
        return _file_message(source)
    try:
        buf = as_buffer(source)
    except ArrowTypeError:
        raise ArrowTypeError(
            f"expected bytes, a buffer, a path or a readable file as the source, found "
            f"{type(source).__name__}"
        ) from None
    return _buffer_message(buf)


def _decode(meta: Any, base_offset: int) -> md.Message:
    # decode_message itself turns malformed bytes into FormatError subclasses, as for the
    # stream and file readers; any other exception escaping it is a bug, left unmasked
    try:
        return md.decode_message(meta, base_offset=base_offset)
    except ArrowError as exc:
        exc.locate(offset=base_offset)
        raise


def _buffer_message(buf: np.ndarray) -> tuple[md.Message, np.ndarray, int]:
    meta, body_start, _ = read_frame(memoryview(buf), 0)
    if len(meta) == 0:
        raise FramingError("expected a tensor message, found the end-of-stream marker", offset=0)
    msg = _decode(meta, body_start - len(meta))
    end = body_start + msg.body_length
    if end > buf.nbytes:
        raise TruncatedError(
            f"expected a body of {msg.body_length} bytes, found {buf.nbytes - body_start}",
            offset=body_start,
        )
    return msg, buf[body_start:end], body_start


def _file_message(f: BinaryIO) -> tuple[md.Message, np.ndarray, int]:
    start = _tell(f)
    head = _read_exact(f, 4, "message prefix", start)
    first = int(head.view("<i4")[0])
    pos = start + 4
    if first == -1:
        length = int(_read_exact(f, 4, "metadata length", pos).view("<i4")[0])
        pos += 4
    else:
        length = first  # a stream from before Arrow 0.15: no continuation marker
    if length < 0:
        raise FramingError(
            f"expected a non-negative metadata length, found {length}", offset=pos - 4
        )
    if length == 0:
        raise FramingError(
            "expected a tensor message, found the end-of-stream marker", offset=start
        )
    meta = _read_exact(f, length, "metadata", pos)
    msg = _decode(meta, pos)
    pos += length
    body = _read_exact(f, msg.body_length, "message body", pos)
    return msg, body, pos


def _tell(f: Any) -> int:
    try:
        return int(f.tell())
    except (OSError, AttributeError, ValueError):
        return 0


# --------------------------------------------------------------------------------------
# dense tensors


def _tensor_message(tensor: Tensor) -> tuple[bytes, np.ndarray]:
    if not tensor.is_contiguous:
        tensor = tensor.contiguous()
    nbytes = tensor.size * tensor.itemsize
    data = tensor.data[:nbytes]
    names = tuple(n or None for n in tensor.dim_names)
    header = md.Tensor(tensor.type, tensor.shape, names, tensor.strides, 0, nbytes)
    meta = md.encode_message(md.Message(md.V5, header, nbytes))
    return frame_message(meta, nbytes, alignment=TENSOR_ALIGNMENT), data


def _as_tensor(obj: Any) -> Tensor:
    if isinstance(obj, Tensor):
        return obj
    if isinstance(obj, SparseTensor):
        raise ArrowTypeError(
            "expected a dense tensor, found a sparse one (use write_sparse_tensor)"
        )
    return Tensor.from_numpy(obj)


def write_tensor(tensor: Any, sink: Any) -> int:
    """Write a :class:`~quiver.tensor.Tensor` (or anything numpy takes) as one Tensor message.

    ``sink`` is a path or an object with ``write``; returns the bytes written.  The body
    starts on a 64-byte boundary, as pyarrow writes it.

    >>> import io, numpy as np
    >>> buf = io.BytesIO()
    >>> write_tensor(np.eye(2, dtype=np.float32), buf) == len(buf.getvalue())
    True
    """
    framed, data = _tensor_message(_as_tensor(tensor))
    with _Sink(sink) as out:
        return out.write_all([framed, data])


def get_tensor_size(tensor: Any) -> int:
    """The number of bytes :func:`write_tensor` writes for ``tensor``.

    >>> import io, numpy as np
    >>> x = np.zeros(10, np.int64)
    >>> get_tensor_size(x) == write_tensor(x, io.BytesIO())
    True
    """
    framed, data = _tensor_message(_as_tensor(tensor))
    return len(framed) + data.nbytes


def _region(
    body: np.ndarray, body_offset: int, buf: md.Buffer | tuple[int, int], what: str
) -> np.ndarray:
    off, length = int(buf[0]), int(buf[1])
    if off < 0 or length < 0:
        raise BodyError(
            f"expected a non-negative offset and length for {what}, found ({off}, {length})",
            offset=body_offset,
        )
    if off + length > body.nbytes:
        raise BodyError(
            f"expected {what} ({off}+{length}) within the {body.nbytes}-byte body, found it "
            f"ends at {off + length}",
            offset=body_offset + off,
        )
    return body[off : off + length]


def _numeric_type(dtype: t.DataType, what: str, offset: int) -> np.dtype:
    try:
        return tensor_numpy_dtype(dtype)
    except ArrowError as exc:
        exc.locate(offset=offset, field_path=what)
        raise


def read_tensor(source: Any) -> Tensor:
    """Read one Tensor message from bytes, a buffer, a path (memory-mapped) or a file.

    The result views the body without copying (``numpy.asarray(t)``); strides and
    dimension names are kept as written.

    >>> import numpy as np
    >>> x = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    >>> import io; b = io.BytesIO(); _ = write_tensor(x, b)
    >>> t = read_tensor(b.getvalue()); t.strides, t.is_column_major
    ((8, 16), True)
    """
    msg, body, body_offset = _source_message(source)
    header = msg.header
    if not isinstance(header, md.Tensor):
        raise MetadataError(
            f"expected a Tensor message, found {_header_name(header)}", offset=body_offset
        )
    npd = _numeric_type(header.type, "tensor type", body_offset)
    data = _region(body, body_offset, (header.data_offset, header.data_length), "tensor data")
    shape = tuple(header.shape)
    strides = tuple(header.strides) or row_major_strides(shape, npd.itemsize)
    check_geometry(
        shape,
        strides,
        npd.itemsize,
        data.nbytes,
        offset=body_offset + header.data_offset,
        error=BodyError,
    )
    return Tensor(data, header.type, shape, strides, header.dim_names)


def _header_name(header: Any) -> str:
    return "a message without header" if header is None else f"a {type(header).__name__} message"


# --------------------------------------------------------------------------------------
# sparse tensors


def _int_type_of(arr: np.ndarray) -> t.DataType:
    typ = tensor_type_of(arr.dtype)
    if not isinstance(typ, t.IntegerType):
        raise ArrowTypeError(f"expected an integer index array, found {arr.dtype}")
    return typ


class _BodyBuilder:
    """Collects body buffers, each padded to 8 bytes, and their Buffer entries."""

    def __init__(self) -> None:
        self.parts: list[Any] = []
        self.size = 0

    def add(self, arr: np.ndarray) -> md.Buffer:
        raw = np.ascontiguousarray(arr)
        if raw.dtype.byteorder == ">":
            raw = raw.astype(raw.dtype.newbyteorder("<"))
        raw_u8 = raw.reshape(-1).view(np.uint8) if raw.size else empty_buffer()
        entry = md.Buffer(self.size, raw_u8.nbytes)
        self.parts.append(raw_u8)
        pad = padded(raw_u8.nbytes) - raw_u8.nbytes
        if pad:
            self.parts.append(b"\x00" * pad)
        self.size += raw_u8.nbytes + pad
        return entry


def _sparse_message(st: SparseTensor) -> tuple[bytes, list[Any]]:
    body = _BodyBuilder()
    if isinstance(st, SparseCOOTensor):
        coords = np.ascontiguousarray(st.coords)
        buf = body.add(coords)
        strides = row_major_strides(coords.shape, coords.itemsize)
        index: md.SparseIndex = md.SparseTensorIndexCOO(
            _int_type_of(coords), buf, strides, st.is_canonical
        )
    elif isinstance(st, (SparseCSRMatrix, SparseCSCMatrix)):
        ptr = body.add(st.indptr)
        idx = body.add(st.indices)
        index = md.SparseMatrixIndexCSX(
            "row" if isinstance(st, SparseCSRMatrix) else "column",
            _int_type_of(st.indptr),
            ptr,
            _int_type_of(st.indices),
            idx,
        )
    elif isinstance(st, SparseCSFTensor):
        ptr_type = _int_type_of(st.indptr[0]) if st.indptr else t.int64()
        idx_type = _int_type_of(st.indices[0])
        ptr_np = tensor_numpy_dtype(ptr_type)
        idx_np = tensor_numpy_dtype(idx_type)
        ptrs = tuple(body.add(p.astype(ptr_np, copy=False)) for p in st.indptr)
        idxs = tuple(body.add(i.astype(idx_np, copy=False)) for i in st.indices)
        index = md.SparseTensorIndexCSF(ptr_type, ptrs, idx_type, idxs, st.axis_order)
    else:
        raise ArrowTypeError(f"expected a quiver sparse tensor, found {type(st).__name__}")
    data = body.add(st.data)
    names = tuple(n or None for n in st.dim_names)
    header = md.SparseTensor(st.type, st.shape, names, st.non_zero_length, index, data)
    meta = md.encode_message(md.Message(md.V5, header, body.size))
    framed = frame_message(meta, body.size, alignment=SPARSE_TENSOR_ALIGNMENT)
    return framed, body.parts


def write_sparse_tensor(tensor: SparseTensor, sink: Any) -> int:
    """Write a sparse tensor (COO, CSR, CSC or CSF) as one SparseTensor message.

    Returns the bytes written.

    >>> import io, numpy as np
    >>> from quiver.tensor import SparseCSRMatrix
    >>> m = SparseCSRMatrix.from_dense_numpy(np.array([[0, 2], [3, 0]], np.int32))
    >>> b = io.BytesIO(); n = write_sparse_tensor(m, b)
    >>> read_sparse_tensor(b.getvalue()).to_dense().tolist()
    [[0, 2], [3, 0]]
    """
    framed, parts = _sparse_message(tensor)
    with _Sink(sink) as out:
        return out.write_all([framed, *parts])


def _typed(
    body: np.ndarray,
    body_offset: int,
    buf: md.Buffer,
    dtype: t.DataType,
    count: int | None,
    what: str,
) -> np.ndarray:
    region = _region(body, body_offset, buf, what)
    npd = _numeric_type(dtype, what, body_offset + int(buf[0]))
    if count is None:
        count = region.nbytes // npd.itemsize
    if count < 0 or count * npd.itemsize > region.nbytes:
        raise BodyError(
            f"expected {what} to hold {count} values of {npd.itemsize} bytes, found "
            f"{region.nbytes} bytes",
            offset=body_offset + int(buf[0]),
        )
    return region[: count * npd.itemsize].view(npd)


def read_sparse_tensor(source: Any) -> SparseTensor:
    """Read one SparseTensor message (bytes, buffer, path or file) into a quiver sparse tensor.

    Index and value arrays view the body without copying; every buffer, count and index
    is checked (:class:`~quiver.errors.BodyError` with the byte offset otherwise).
    """
    msg, body, body_offset = _source_message(source)
    h = msg.header
    if not isinstance(h, md.SparseTensor):
        raise MetadataError(
            f"expected a SparseTensor message, found {_header_name(h)}", offset=body_offset
        )
    shape = tuple(h.shape)
    ndim = len(shape)
    nnz = int(h.non_zero_length)
    values = _typed(body, body_offset, h.data, h.type, nnz, "sparse tensor data")
    idx = h.sparse_index
    try:
        if isinstance(idx, md.SparseTensorIndexCOO):
            npd = _numeric_type(idx.indices_type, "COO indices", body_offset)
            region = _region(body, body_offset, idx.indices_buffer, "COO indices")
            cshape = (nnz, ndim)
            cstrides = tuple(idx.indices_strides) or row_major_strides(cshape, npd.itemsize)
            check_geometry(
                cshape,
                cstrides,
                npd.itemsize,
                region.nbytes,
                what="COO index",
                offset=body_offset + int(idx.indices_buffer[0]),
                error=BodyError,
            )
            if nnz and ndim:
                coords = np.ndarray(cshape, dtype=npd, buffer=region, strides=cstrides)
            else:
                coords = np.zeros(cshape, dtype=npd)
            return SparseCOOTensor(
                values, coords, shape, h.dim_names, is_canonical=bool(idx.is_canonical)
            )
        if isinstance(idx, md.SparseMatrixIndexCSX):
            if ndim != 2:
                raise BodyError(
                    f"expected a 2-D shape for a CSX sparse matrix, found {shape}",
                    offset=body_offset,
                )
            axis = 0 if idx.compressed_axis == "row" else 1
            indptr = _typed(body, body_offset, idx.indptr_buffer, idx.indptr_type,
                            shape[axis] + 1, "CSX indptr")
            indices = _typed(body, body_offset, idx.indices_buffer, idx.indices_type, nnz,
                             "CSX indices")
            cls = SparseCSRMatrix if axis == 0 else SparseCSCMatrix
            return cls(values, indptr, indices, shape, h.dim_names)
        if isinstance(idx, md.SparseTensorIndexCSF):
            ptrs = [
                _typed(body, body_offset, b, idx.indptr_type, None, f"CSF indptr {k}")
                for k, b in enumerate(idx.indptr_buffers)
            ]
            idxs = [
                _typed(body, body_offset, b, idx.indices_type, None, f"CSF indices {k}")
                for k, b in enumerate(idx.indices_buffers)
            ]
            return SparseCSFTensor(values, ptrs, idxs, shape, idx.axis_order, h.dim_names)
    except ArrowInvalid as exc:
        # the sparse classes validate their parts; here those parts are body bytes
        raise BodyError(exc.reason, offset=body_offset) from None
    raise MetadataError(
        f"expected a COO, CSX or CSF sparse index, found {type(idx).__name__}",
        offset=body_offset,
    )


__all__ = [
    "SPARSE_TENSOR_ALIGNMENT",
    "TENSOR_ALIGNMENT",
    "get_tensor_size",
    "read_sparse_tensor",
    "read_tensor",
    "write_sparse_tensor",
    "write_tensor",
]
