"""Dense and sparse tensors in memory (Tensor.fbs, SparseTensor.fbs; Columnar spec, "IPC
Streaming Format" notes on tensors).

A :class:`Tensor` is a fixed-width numeric value type, a shape, byte strides and optional
dimension names over one contiguous ``uint8`` data buffer.  numpy sees it without copying:
``numpy.asarray(tensor)`` and :meth:`Tensor.to_numpy` build an ``ndarray`` with the given
strides over the buffer.  Every constructor checks that the shape and strides stay inside
the buffer (Python integers, so no overflow), which is what lets the IPC reader hand body
bytes straight to numpy.

Sparse tensors follow SparseTensor.fbs and pyarrow's classes: :class:`SparseCOOTensor`
(coordinates), :class:`SparseCSRMatrix` / :class:`SparseCSCMatrix` (compressed rows or
columns of a matrix) and :class:`SparseCSFTensor` (compressed sparse fibers).  Each converts
to and from dense numpy arrays, and to and from ``scipy.sparse`` when scipy is installed.

>>> import numpy as np
>>> t = Tensor.from_numpy(np.arange(6, dtype=np.int32).reshape(2, 3), dim_names=["r", "c"])
>>> t.shape, t.strides, t.dim_names, t.is_contiguous, str(t.type)
((2, 3), (12, 4), ('r', 'c'), True, 'int32')
>>> np.asarray(t).sum()
np.int64(15)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from . import types as t
from .buffers import as_buffer, empty_buffer
from .errors import ArrowError, ArrowInvalid, ArrowInvalidArgument, ArrowTypeError, NotSupported

# numpy's own limit on dimensions (NPY_MAXDIMS is 64 in numpy 2)
MAX_NDIM = 64
_MAX_NBYTES = (1 << 63) - 1

_TENSOR_TYPES: dict[np.dtype, t.DataType] = {
    np.dtype("int8"): t.int8(),
    np.dtype("int16"): t.int16(),
    np.dtype("int32"): t.int32(),
    np.dtype("int64"): t.int64(),
    np.dtype("uint8"): t.uint8(),
    np.dtype("uint16"): t.uint16(),
    np.dtype("uint32"): t.uint32(),
    np.dtype("uint64"): t.uint64(),
    np.dtype("float16"): t.float16(),
    np.dtype("float32"): t.float32(),
    np.dtype("float64"): t.float64(),
}


def tensor_numpy_dtype(dtype: t.DataType) -> np.dtype:
    """The little-endian numpy dtype of a tensor value type (integers and floats only).

    >>> tensor_numpy_dtype(t.float16())
    dtype('float16')
    """
    if isinstance(dtype, t.IntegerType):
        return np.dtype(f"<{'i' if dtype.signed else 'u'}{dtype.width // 8}")
    if isinstance(dtype, t.FloatingPointType):
        return np.dtype(f"<f{dtype.width // 8}")
    raise NotSupported(
        f"expected a tensor value type of int8..uint64 or float16/32/64, found {dtype} "
        f"(Arrow tensors hold fixed-width numbers; use a RecordBatch for other types)"
    )


def tensor_type_of(dtype: Any) -> t.DataType:
    """The Arrow type of a numpy dtype usable in a tensor.

    >>> str(tensor_type_of(np.dtype(">u2")))
    'uint16'
    """
    npd = np.dtype(dtype)
    found = _TENSOR_TYPES.get(npd.newbyteorder("=")) if npd.kind in "iuf" else None
    if found is None:
        raise ArrowTypeError(
            f"expected a numpy integer or float dtype for a tensor, found {npd}"
        )
    return found


def row_major_strides(shape: Sequence[int], itemsize: int) -> tuple[int, ...]:
    """C-order byte strides of ``shape``.

    >>> row_major_strides((2, 3, 4), 4)
    (48, 16, 4)
    """
    out = []
    step = itemsize
    for dim in reversed(shape):
        out.append(step)
        step *= max(int(dim), 1)
    return tuple(reversed(out))


def column_major_strides(shape: Sequence[int], itemsize: int) -> tuple[int, ...]:
    """Fortran-order byte strides of ``shape``.

    >>> column_major_strides((3, 4), 8)
    (8, 24)
    """
    out = []
    step = itemsize
    for dim in shape:
        out.append(step)
        step *= max(int(dim), 1)
    return tuple(out)


def strided_extent(shape: Sequence[int], strides: Sequence[int], itemsize: int) -> int:
    """Bytes from the first element to the end of the last one (0 for an empty tensor).

    >>> strided_extent((5, 4), (8, 2), 1)
    39
    """
    if any(int(d) == 0 for d in shape):
        return 0
    return sum((int(d) - 1) * int(s) for d, s in zip(shape, strides)) + itemsize


def check_geometry(
    shape: Sequence[int],
    strides: Sequence[int],
    itemsize: int,
    available: int,
    *,
    what: str = "tensor",
    offset: int | None = None,
    error: type[ArrowError] = ArrowInvalid,
) -> None:
    """Check that ``shape``/``strides`` are sane and stay within ``available`` bytes.

    Raises ``error`` (:class:`~quiver.errors.ArrowInvalid` by default; the IPC reader
    passes :class:`~quiver.errors.BodyError`) worded "expected ..., found ..."; ``offset``
    (the data's absolute byte offset) is attached when known.
    """
    if len(shape) > MAX_NDIM:
        raise NotSupported(
            f"expected a {what} of at most {MAX_NDIM} dimensions (numpy's limit), "
            f"found {len(shape)}"
        )
    if len(strides) != len(shape):
        raise error(
            f"expected {len(shape)} {what} strides (one per dimension), found {len(strides)}",
            offset=offset,
        )
    for i, d in enumerate(shape):
        if int(d) < 0:
            raise error(f"expected dimension {i} size >= 0, found {d}", offset=offset)
    for i, s in enumerate(strides):
        if int(s) < 0:
            raise error(f"expected stride {i} >= 0, found {s}", offset=offset)
    # numpy multiplies the non-zero dimensions and the item size into an intp even when
    # another dimension is 0 (np.zeros((2**62, 0)) is "array is too big"), so bound that
    # product, not the element count
    count = math.prod(int(d) for d in shape if int(d))
    if count * itemsize > _MAX_NBYTES:
        raise error(
            f"expected a {what} whose non-zero dimensions span at most {_MAX_NBYTES} bytes, "
            f"found shape {tuple(shape)} ({count} x {itemsize} bytes)",
            offset=offset,
        )
    for i, s in enumerate(strides):
        if int(s) > _MAX_NBYTES:
            raise error(f"expected stride {i} <= {_MAX_NBYTES}, found {s}", offset=offset)
    need = strided_extent(shape, strides, itemsize)
    if need > available:
        raise error(
            f"expected shape {tuple(shape)} with strides {tuple(strides)} to fit in the "
            f"{available} data bytes, found it needs {need}",
            offset=offset,
        )


def _names(dim_names: Sequence[str | None] | None, ndim: int) -> tuple[str, ...]:
    if not dim_names:
        return ()
    names = tuple("" if n is None else n for n in dim_names)
    if len(names) != ndim:
        raise ArrowInvalidArgument(
            f"expected {ndim} dimension names, found {len(names)}"
        )
    for n in names:
        if not isinstance(n, str):
            raise ArrowTypeError(f"expected dimension names as str, found {n!r}")
    if all(n == "" for n in names):
        return ()
    return names


def _base_bytes(arr: np.ndarray) -> np.ndarray:
    """A uint8 view from ``arr``'s first element to the end of its last (non-negative strides)."""
    if arr.size == 0:
        return empty_buffer()
    corner = arr[tuple(slice(0, 1) for _ in range(arr.ndim))] if arr.ndim else arr
    first = corner.reshape(1).view(np.uint8)
    span = strided_extent(arr.shape, arr.strides, arr.itemsize)
    return np.lib.stride_tricks.as_strided(first, shape=(span,), strides=(1,))


def _ints(values: Sequence[Any], what: str) -> tuple[int, ...]:
    try:
        return tuple(int(v) for v in values)
    except (TypeError, ValueError):
        raise ArrowTypeError(f"expected a sequence of ints as {what}, found {values!r}") from None


class _Dimensioned:
    """What dense and sparse tensors share: value type, shape, dimension names, data."""

    __slots__ = ("_data", "_dim_names", "_shape", "_type")
    _data: np.ndarray
    _dim_names: tuple[str, ...]
    _shape: tuple[int, ...]
    _type: t.DataType

    @property
    def type(self) -> t.DataType:
        """The value type."""
        return self._type

    @property
    def shape(self) -> tuple[int, ...]:
        """Size of each dimension."""
        return self._shape

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self._shape)

    @property
    def size(self) -> int:
        """Number of elements (of the dense equivalent, for a sparse tensor)."""
        return math.prod(self._shape)

    @property
    def dim_names(self) -> tuple[str, ...]:
        """Dimension names ('' where unnamed), or () when no dimension is named."""
        return self._dim_names

    def dim_name(self, i: int) -> str:
        """The name of dimension ``i`` ('' when unnamed)."""
        if not -self.ndim <= i < self.ndim:
            raise ArrowInvalidArgument(f"expected a dimension below {self.ndim}, found {i}")
        return self._dim_names[i] if self._dim_names else ""

    # what "equal" means, for every kind: ``_family`` is the class compared with at all,
    # ``_same_kind`` the test for equality, ``_dense_values`` the values compared
    _family: ClassVar[type]

    def _dense_values(self) -> np.ndarray:
        raise NotImplementedError

    def _same_kind(self, other: object) -> bool:
        return isinstance(other, self._family)

    def equals(self, other: object) -> bool:
        """Same kind, value type, shape, dimension names and (dense) values; strides may
        differ."""
        return (
            self._same_kind(other)
            and self._type == other._type  # type: ignore[attr-defined]
            and self._shape == other._shape  # type: ignore[attr-defined]
            and self._dim_names == other._dim_names  # type: ignore[attr-defined]
            and bool(np.array_equal(self._dense_values(), other._dense_values()))  # type: ignore[attr-defined]
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, self._family):
            return NotImplemented
        return self.equals(other)

    __hash__ = None  # type: ignore[assignment]


class Tensor(_Dimensioned):
    """A dense n-dimensional array of fixed-width numbers over one data buffer."""

    __slots__ = ("_strides",)

    def __init__(
        self,
        data: Any,
        type: t.DataType,
        shape: Sequence[int],
        strides: Sequence[int] | None = None,
        dim_names: Sequence[str | None] | None = None,
    ) -> None:
        npd = tensor_numpy_dtype(type)
        shape_t = _ints(shape, "shape")
        strides_t = (
            row_major_strides(shape_t, npd.itemsize)
            if strides is None
            else _ints(strides, "strides")
        )
        buf = as_buffer(data) if data is not None else empty_buffer()
        check_geometry(shape_t, strides_t, npd.itemsize, buf.nbytes)
        self._data = buf
        self._type = type
        self._shape = shape_t
        self._strides = strides_t
        self._dim_names = _names(dim_names, len(shape_t))

    @classmethod
    def from_numpy(cls, obj: Any, dim_names: Sequence[str] | None = None) -> Tensor:
        """A tensor viewing ``obj``'s memory (copied only for negative strides or big-endian).

        >>> import numpy as np
        >>> x = np.arange(12, dtype=np.float64).reshape(3, 4)[:, ::2]
        >>> Tensor.from_numpy(x).strides
        (32, 16)
        """
        arr = np.asarray(obj)
        typ = tensor_type_of(arr.dtype)
        if arr.dtype.byteorder == ">":
            arr = arr.astype(arr.dtype.newbyteorder("<"))
        if any(s < 0 for s in arr.strides):
            arr = np.ascontiguousarray(arr)
        return cls(_base_bytes(arr), typ, arr.shape, arr.strides, dim_names)

    # -- attributes (type, shape, ndim, size, dim_names: _Dimensioned) -------------------

    @property
    def strides(self) -> tuple[int, ...]:
        """Bytes to step one index along each dimension."""
        return self._strides

    @property
    def data(self) -> np.ndarray:
        """The data buffer (uint8) the values live in."""
        return self._data

    @property
    def is_mutable(self) -> bool:
        """Whether the data buffer is writeable."""
        return bool(self._data.flags.writeable)

    @property
    def is_row_major(self) -> bool:
        """Strides are C order."""
        return self._strides == row_major_strides(self._shape, self.itemsize)

    @property
    def is_column_major(self) -> bool:
        """Strides are Fortran order."""
        return self._strides == column_major_strides(self._shape, self.itemsize)

    @property
    def is_contiguous(self) -> bool:
        """Row-major or column-major without gaps (Arrow's definition)."""
        return self.is_row_major or self.is_column_major

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return tensor_numpy_dtype(self._type).itemsize

    # -- numpy --------------------------------------------------------------------------

    def to_numpy(self) -> np.ndarray:
        """An ndarray viewing the data buffer with this tensor's shape and strides (no copy)."""
        npd = tensor_numpy_dtype(self._type)
        if self.size == 0:
            return np.zeros(self._shape, dtype=npd)
        return np.ndarray(self._shape, dtype=npd, buffer=self._data, strides=self._strides)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        arr = self.to_numpy()
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            if copy is False:
                raise ValueError("expected a dtype change without a copy, which is impossible")
            return arr.astype(dtype)
        return arr.copy() if copy else arr

    def contiguous(self) -> Tensor:
        """This tensor if row-/column-major, else a row-major copy."""
        if self.is_contiguous:
            return self
        return Tensor.from_numpy(np.ascontiguousarray(self.to_numpy()), self._dim_names or None)

    def _dense_values(self) -> np.ndarray:
        return self.to_numpy()

    def __repr__(self) -> str:
        return (
            f"<quiver.Tensor type={self._type} shape={self._shape} strides={self._strides}"
            f" dim_names={list(self._dim_names)}>"
        )


# --------------------------------------------------------------------------------------
# sparse tensors


def _index_array(values: Any, what: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype.kind not in "iu":
        raise ArrowTypeError(f"expected integer {what}, found dtype {arr.dtype}")
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    return arr


def _values_array(values: Any) -> tuple[np.ndarray, t.DataType]:
    arr = np.asarray(values)
    typ = tensor_type_of(arr.dtype)
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    return arr.reshape(-1), typ


def _shape_of(shape: Sequence[int]) -> tuple[int, ...]:
    out = _ints(shape, "shape")
    if any(d < 0 for d in out):
        raise ArrowInvalidArgument(f"expected non-negative dimension sizes, found {out}")
    return out


def _check_range(arr: np.ndarray, upper: int | np.ndarray, what: str) -> None:
    if arr.size == 0:
        return
    if int(arr.min()) < 0:
        raise ArrowInvalid(f"expected {what} >= 0, found {int(arr.min())}")
    bad = arr >= upper
    if bool(np.any(bad)):
        found = int(arr[bad].reshape(-1)[0])
        raise ArrowInvalid(f"expected {what} below the dimension size, found {found}")


def _check_indptr(indptr: np.ndarray, length: int, total: int, what: str) -> None:
    if indptr.ndim != 1 or indptr.size != length:
        raise ArrowInvalid(f"expected {length} {what} values, found {indptr.size}")
    if indptr.size == 0:
        return
    if int(indptr[0]) != 0 or int(indptr[-1]) != total:
        raise ArrowInvalid(
            f"expected {what} from 0 to {total}, found {int(indptr[0])} to {int(indptr[-1])}"
        )
    if bool(np.any(np.diff(indptr.astype(np.int64)) < 0)):
        raise ArrowInvalid(f"expected non-decreasing {what}, found a decrease")


class SparseTensor(_Dimensioned):
    """What the sparse formats share: value type, shape, dimension names, the values."""

    __slots__ = ()

    def __init__(
        self, data: Any, shape: Sequence[int], dim_names: Sequence[str | None] | None
    ) -> None:
        self._data, self._type = _values_array(data)
        self._shape = _shape_of(shape)
        if not self._shape:
            raise ArrowInvalid("expected a sparse tensor of at least 1 dimension, found 0")
        self._dim_names = _names(dim_names, len(self._shape))

    @property
    def data(self) -> np.ndarray:
        """The non-zero values (1-D)."""
        return self._data

    @property
    def non_zero_length(self) -> int:
        """Number of stored values."""
        return int(self._data.size)

    def to_dense(self) -> np.ndarray:
        """The dense ndarray (a new array)."""
        raise NotImplementedError

    def to_tensor(self) -> Tensor:
        """The dense :class:`Tensor`."""
        return Tensor.from_numpy(self.to_dense(), self._dim_names or None)

    def _dense_values(self) -> np.ndarray:
        return self.to_dense()

    def _same_kind(self, other: object) -> bool:
        return type(other) is type(self)  # a COO tensor never equals a CSF one

    def __repr__(self) -> str:
        return (
            f"<quiver.{type(self).__name__} type={self._type} shape={self._shape} "
            f"non_zero_length={self.non_zero_length}>"
        )


def _scipy_sparse() -> Any:
    try:
        import scipy.sparse as sp
    except ImportError:  # pragma: no cover - depends on the environment
        raise NotSupported(
            "scipy is not installed: install it (pip install scipy) to convert to scipy.sparse"
        ) from None
    return sp


Tensor._family = Tensor
SparseTensor._family = SparseTensor


class SparseCOOTensor(SparseTensor):
    """Coordinate format: an (nnz, ndim) matrix of indices and nnz values.

    >>> import numpy as np
    >>> s = SparseCOOTensor.from_dense_numpy(np.array([[0, 1], [2, 0]], np.int32))
    >>> s.coords.tolist(), s.data.tolist(), s.is_canonical
    ([[0, 1], [1, 0]], [1, 2], True)
    """

    __slots__ = ("_coords", "_is_canonical")

    def __init__(
        self,
        data: Any,
        coords: Any,
        shape: Sequence[int],
        dim_names: Sequence[str | None] | None = None,
        *,
        is_canonical: bool | None = None,
    ) -> None:
        super().__init__(data, shape, dim_names)
        coords = _index_array(coords, "COO coordinates")
        nnz = self._data.size
        if coords.ndim != 2 or coords.shape != (nnz, len(self._shape)):
            raise ArrowInvalid(
                f"expected COO coordinates of shape ({nnz}, {len(self._shape)}), "
                f"found {coords.shape}"
            )
        _check_range(coords, np.asarray(self._shape, dtype=np.int64), "COO coordinates")
        self._coords = coords
        if is_canonical is None:
            is_canonical = _lexsorted_unique(coords)
        self._is_canonical = bool(is_canonical)

    @property
    def coords(self) -> np.ndarray:
        """The (nnz, ndim) coordinate matrix."""
        return self._coords

    @property
    def is_canonical(self) -> bool:
        """Coordinates sorted row-major without duplicates."""
        return self._is_canonical

    has_canonical_format = is_canonical

    @classmethod
    def from_dense_numpy(
        cls, obj: Any, dim_names: Sequence[str] | None = None
    ) -> SparseCOOTensor:
        """The non-zero entries of a dense array, in row-major (canonical) order."""
        arr = np.asarray(obj)
        coords = np.argwhere(arr != 0).astype(np.int64)
        return cls(arr[arr != 0], coords, arr.shape, dim_names, is_canonical=True)

    @classmethod
    def from_tensor(cls, tensor: Tensor) -> SparseCOOTensor:
        """The non-zero entries of a dense :class:`Tensor`."""
        return cls.from_dense_numpy(tensor.to_numpy(), tensor.dim_names or None)

    @classmethod
    def from_numpy(
        cls,
        data: Any,
        coords: Any,
        shape: Sequence[int],
        dim_names: Sequence[str] | None = None,
    ) -> SparseCOOTensor:
        """From values and an (nnz, ndim) coordinate matrix (pyarrow's signature)."""
        return cls(data, coords, shape, dim_names)

    @classmethod
    def from_scipy(cls, matrix: Any, dim_names: Sequence[str] | None = None) -> SparseCOOTensor:
        """From a ``scipy.sparse`` matrix or array (any format)."""
        coo = matrix.tocoo()
        coords = np.stack([coo.row, coo.col], axis=1).astype(np.int64)
        return cls(coo.data, coords, coo.shape, dim_names)

    def to_numpy(self) -> tuple[np.ndarray, np.ndarray]:
        """``(data as (nnz, 1), coords)`` like pyarrow."""
        return self._data.reshape(-1, 1), self._coords

    def to_dense(self) -> np.ndarray:
        """The dense ndarray; duplicate coordinates are summed (as scipy does)."""
        out = np.zeros(self._shape, dtype=self._data.dtype)
        if self._data.size:
            np.add.at(out, tuple(self._coords.T.astype(np.intp)), self._data)
        return out

    def to_scipy(self) -> Any:
        """A ``scipy.sparse.coo_matrix`` (2-D only)."""
        sp = _scipy_sparse()
        if self.ndim != 2:
            raise ArrowInvalidArgument(f"expected a 2-D tensor for scipy, found {self.ndim}-D")
        return sp.coo_matrix((self._data, (self._coords[:, 0], self._coords[:, 1])), self._shape)


def _lexsorted_unique(coords: np.ndarray) -> bool:
    if coords.shape[0] < 2:
        return True
    a, b = coords[:-1], coords[1:]
    diff = b.astype(np.int64) - a.astype(np.int64)
    nz = diff != 0
    first = np.argmax(nz, axis=1)
    any_nz = nz.any(axis=1)
    lead = diff[np.arange(diff.shape[0]), first]
    return bool(np.all(any_nz & (lead > 0)))


class _SparseCSX(SparseTensor):
    __slots__ = ("_indices", "_indptr")
    _axis = 0  # the compressed axis: 0 rows, 1 columns

    def __init__(
        self,
        data: Any,
        indptr: Any,
        indices: Any,
        shape: Sequence[int],
        dim_names: Sequence[str | None] | None = None,
    ) -> None:
        super().__init__(data, shape, dim_names)
        if len(self._shape) != 2:
            raise ArrowInvalid(f"expected a 2-D shape for a sparse matrix, found {self._shape}")
        indptr = _index_array(indptr, "indptr").reshape(-1)
        indices = _index_array(indices, "indices").reshape(-1)
        nnz = self._data.size
        major, minor = self._shape[self._axis], self._shape[1 - self._axis]
        _check_indptr(indptr, major + 1, nnz, "indptr")
        if indices.size != nnz:
            raise ArrowInvalid(f"expected {nnz} indices (one per value), found {indices.size}")
        _check_range(indices, minor, "indices")
        self._indptr = indptr
        self._indices = indices

    @property
    def indptr(self) -> np.ndarray:
        """Start of each compressed row (or column) in ``indices``/``data``, plus the end."""
        return self._indptr

    @property
    def indices(self) -> np.ndarray:
        """The minor-axis index of each value."""
        return self._indices

    @classmethod
    def from_dense_numpy(cls, obj: Any, dim_names: Sequence[str] | None = None) -> Any:
        """The non-zero entries of a 2-D dense array."""
        arr = np.asarray(obj)
        if arr.ndim != 2:
            raise ArrowInvalidArgument(f"expected a 2-D array, found {arr.ndim}-D")
        work = arr if cls._axis == 0 else arr.T
        rows, cols = np.nonzero(work)
        indptr = np.zeros(work.shape[0] + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=work.shape[0]), out=indptr[1:])
        return cls(work[rows, cols], indptr, cols.astype(np.int64), arr.shape, dim_names)

    @classmethod
    def from_tensor(cls, tensor: Tensor) -> Any:
        """From a dense 2-D :class:`Tensor`."""
        return cls.from_dense_numpy(tensor.to_numpy(), tensor.dim_names or None)

    @classmethod
    def from_numpy(
        cls,
        data: Any,
        indptr: Any,
        indices: Any,
        shape: Sequence[int],
        dim_names: Sequence[str] | None = None,
    ) -> Any:
        """From values, indptr and indices (pyarrow's signature)."""
        return cls(data, indptr, indices, shape, dim_names)

    @classmethod
    def from_scipy(cls, matrix: Any, dim_names: Sequence[str] | None = None) -> Any:
        """From a ``scipy.sparse`` matrix or array."""
        m = matrix.tocsr() if cls._axis == 0 else matrix.tocsc()
        return cls(m.data, m.indptr, m.indices, m.shape, dim_names)

    def to_numpy(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(data as (nnz, 1), indptr, indices)`` like pyarrow."""
        return self._data.reshape(-1, 1), self._indptr, self._indices

    def to_dense(self) -> np.ndarray:
        """The dense 2-D ndarray."""
        major = self._shape[self._axis]
        counts = np.diff(self._indptr.astype(np.int64))
        majors = np.repeat(np.arange(major, dtype=np.intp), counts)
        out = np.zeros(self._shape, dtype=self._data.dtype)
        minors = self._indices.astype(np.intp)
        if self._axis == 0:
            np.add.at(out, (majors, minors), self._data)
        else:
            np.add.at(out, (minors, majors), self._data)
        return out

    def to_scipy(self) -> Any:
        """A ``scipy.sparse.csr_matrix`` / ``csc_matrix``."""
        sp = _scipy_sparse()
        make = sp.csr_matrix if self._axis == 0 else sp.csc_matrix
        return make((self._data, self._indices, self._indptr), shape=self._shape)


class SparseCSRMatrix(_SparseCSX):
    """Compressed sparse rows of a matrix.

    >>> import numpy as np
    >>> m = SparseCSRMatrix.from_dense_numpy(np.array([[0, 1, 2], [3, 0, 0]], np.float32))
    >>> m.indptr.tolist(), m.indices.tolist(), m.data.tolist()
    ([0, 2, 3], [1, 2, 0], [1.0, 2.0, 3.0])
    """

    __slots__ = ()
    _axis = 0


class SparseCSCMatrix(_SparseCSX):
    """Compressed sparse columns of a matrix.

    >>> import numpy as np
    >>> m = SparseCSCMatrix.from_dense_numpy(np.array([[0, 1, 2], [3, 0, 0]], np.float32))
    >>> m.indptr.tolist(), m.indices.tolist(), m.data.tolist()
    ([0, 1, 2, 3], [1, 0, 0], [3.0, 1.0, 2.0])
    """

    __slots__ = ()
    _axis = 1


class SparseCSFTensor(SparseTensor):
    """Compressed sparse fibers: a prefix tree of indices, one level per dimension.

    ``indptr[k]`` (for ``k < ndim - 1``) splits level ``k + 1`` among the nodes of level
    ``k``; ``indices[k]`` are the coordinates of level ``k`` along ``axis_order[k]``.

    >>> import numpy as np
    >>> x = np.zeros((2, 3), np.int64); x[0, 1] = 5; x[1, 0] = 6; x[1, 2] = 7
    >>> s = SparseCSFTensor.from_dense_numpy(x)
    >>> [p.tolist() for p in s.indptr], [i.tolist() for i in s.indices]
    ([[0, 1, 3]], [[0, 1], [1, 0, 2]])
    >>> bool((s.to_dense() == x).all())
    True
    """

    __slots__ = ("_axis_order", "_indices", "_indptr")

    def __init__(
        self,
        data: Any,
        indptr: Sequence[Any],
        indices: Sequence[Any],
        shape: Sequence[int],
        axis_order: Sequence[int] | None = None,
        dim_names: Sequence[str | None] | None = None,
    ) -> None:
        super().__init__(data, shape, dim_names)
        ndim = len(self._shape)
        order = tuple(range(ndim)) if axis_order is None else _ints(axis_order, "axis_order")
        if sorted(order) != list(range(ndim)):
            raise ArrowInvalid(f"expected axis_order to be a permutation of 0..{ndim - 1}, "
                            f"found {order}")
        ptrs = [_index_array(p, "CSF indptr").reshape(-1) for p in indptr]
        idxs = [_index_array(i, "CSF indices").reshape(-1) for i in indices]
        if len(ptrs) != ndim - 1 or len(idxs) != ndim:
            raise ArrowInvalid(
                f"expected {ndim - 1} indptr and {ndim} indices arrays, "
                f"found {len(ptrs)} and {len(idxs)}"
            )
        nnz = self._data.size
        if idxs[-1].size != nnz:
            raise ArrowInvalid(
                f"expected {nnz} leaf indices (one per value), found {idxs[-1].size}"
            )
        for k in range(ndim):
            _check_range(idxs[k], self._shape[order[k]], f"CSF level {k} indices")
            if k < ndim - 1:
                _check_indptr(ptrs[k], idxs[k].size + 1, idxs[k + 1].size, f"CSF indptr {k}")
        self._indptr = tuple(ptrs)
        self._indices = tuple(idxs)
        self._axis_order = order

    @property
    def indptr(self) -> tuple[np.ndarray, ...]:
        """One indptr array per level but the last."""
        return self._indptr

    @property
    def indices(self) -> tuple[np.ndarray, ...]:
        """One indices array per level."""
        return self._indices

    @property
    def axis_order(self) -> tuple[int, ...]:
        """The dimension each level walks."""
        return self._axis_order

    @classmethod
    def from_dense_numpy(
        cls, obj: Any, dim_names: Sequence[str] | None = None
    ) -> SparseCSFTensor:
        """The non-zero entries of a dense array, levels in dimension order."""
        arr = np.asarray(obj)
        if arr.ndim < 1:
            raise ArrowInvalidArgument("expected an array of at least 1 dimension, found 0-D")
        coords = np.argwhere(arr != 0).astype(np.int64)  # row-major sorted
        values = arr[arr != 0]
        return cls._from_sorted_coords(values, coords, arr.shape, dim_names)

    @classmethod
    def _from_sorted_coords(
        cls, values: np.ndarray, coords: np.ndarray, shape: Sequence[int], dim_names: Any
    ) -> SparseCSFTensor:
        n, ndim = coords.shape
        indptr: list[np.ndarray] = []
        indices: list[np.ndarray] = []
        # a node starts at level k wherever the prefix coords[:, :k+1] changes
        changed = np.zeros(n, dtype=bool)
        if n:
            changed[0] = True
        starts_prev: np.ndarray | None = None
        for k in range(ndim):
            if n > 1:
                changed[1:] |= coords[1:, k] != coords[:-1, k]
            starts = np.flatnonzero(changed)
            indices.append(coords[starts, k])
            if starts_prev is not None:
                ptr = np.searchsorted(starts, starts_prev).astype(np.int64)
                indptr.append(np.append(ptr, np.int64(starts.size)))
            starts_prev = starts
        return cls(values, indptr, indices, shape, None, dim_names)

    def _coords(self) -> np.ndarray:
        """The (nnz, ndim) coordinates in axis order."""
        ndim = len(self._shape)
        nnz = self._data.size
        out = np.empty((nnz, ndim), dtype=np.int64)
        # expand each level to the leaves: node ids per leaf, from the bottom up
        node = np.arange(nnz, dtype=np.int64)
        out[:, ndim - 1] = self._indices[ndim - 1]
        for k in range(ndim - 2, -1, -1):
            ptr = self._indptr[k].astype(np.int64)
            node = np.searchsorted(ptr, node, side="right") - 1
            out[:, k] = self._indices[k][node]
        return out

    def to_numpy(self) -> tuple[np.ndarray, tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
        """``(data as (nnz, 1), indptr, indices)``."""
        return self._data.reshape(-1, 1), self._indptr, self._indices

    def to_dense(self) -> np.ndarray:
        """The dense ndarray."""
        out = np.zeros(self._shape, dtype=self._data.dtype)
        if self._data.size:
            coords = self._coords()
            dims = [None] * len(self._shape)
            for k, axis in enumerate(self._axis_order):
                dims[axis] = coords[:, k].astype(np.intp)
            np.add.at(out, tuple(dims), self._data)
        return out

    @classmethod
    def from_tensor(cls, tensor: Tensor) -> SparseCSFTensor:
        """From a dense :class:`Tensor`."""
        return cls.from_dense_numpy(tensor.to_numpy(), tensor.dim_names or None)


__all__ = [
    "SparseCOOTensor",
    "SparseCSCMatrix",
    "SparseCSFTensor",
    "SparseCSRMatrix",
    "SparseTensor",
    "Tensor",
    "check_geometry",
    "column_major_strides",
    "row_major_strides",
    "strided_extent",
    "tensor_numpy_dtype",
    "tensor_type_of",
]
