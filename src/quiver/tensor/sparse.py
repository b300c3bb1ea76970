"""Sparse tensors (SparseTensor.fbs, pyarrow's classes): coordinates (COO), compressed
rows or columns of a matrix (CSR, CSC) and compressed sparse fibers (CSF)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

import numpy as np

from .. import types as t
from .._readonly import readonly
from ..errors import ArrowInvalid, ArrowInvalidArgument, ArrowTypeError, NotSupported
from .dense import Dimensioned, Tensor, dim_names_of, int_tuple, tensor_type_of


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
    out = int_tuple(shape, "shape")
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


class SparseTensor(Dimensioned):
    """What the sparse formats share: value type, shape, dimension names, the values."""

    __slots__ = ()

    def __init__(
        self, data: Any, shape: Sequence[int], dim_names: Sequence[str | None] | None
    ) -> None:
        self._data, self._type = _values_array(data)
        self._shape = _shape_of(shape)
        if not self._shape:
            raise ArrowInvalid("expected a sparse tensor of at least 1 dimension, found 0")
        self._dim_names = dim_names_of(dim_names, len(self._shape))

    data: np.ndarray = readonly("_data", "The non-zero values (1-D).")

    @property
    def non_zero_length(self) -> int:
        """Number of stored values."""
        return int(self._data.size)

    @classmethod
    def from_dense_numpy(cls, obj: Any, dim_names: Sequence[str] | None = None) -> Self:
        """The non-zero entries of a dense array (2-D for the matrices)."""
        raise NotImplementedError

    @classmethod
    def from_tensor(cls, tensor: Tensor) -> Self:
        """The non-zero entries of a dense :class:`Tensor` (2-D for the matrices)."""
        return cls.from_dense_numpy(tensor.to_numpy(), tensor.dim_names or None)

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

    coords: np.ndarray = readonly("_coords", "The (nnz, ndim) coordinate matrix.")

    is_canonical: bool = readonly(
        "_is_canonical", "Coordinates sorted row-major without duplicates."
    )

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

    indptr: np.ndarray = readonly(
        "_indptr", "Start of each compressed row (or column) in ``indices``/``data``, plus the end."
    )

    indices: np.ndarray = readonly("_indices", "The minor-axis index of each value.")

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
        order = tuple(range(ndim)) if axis_order is None else int_tuple(axis_order, "axis_order")
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

    indptr: tuple[np.ndarray, ...] = readonly("_indptr", "One indptr array per level but the last.")

    indices: tuple[np.ndarray, ...] = readonly("_indices", "One indices array per level.")

    axis_order: tuple[int, ...] = readonly("_axis_order", "The dimension each level walks.")

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


# the classes name their package as their module (its __init__), which doctest would then
# not look for here: their methods' examples are collected through this table
__test__ = {"SparseCOOTensor": SparseCOOTensor, "SparseCSRMatrix": SparseCSRMatrix,
            "SparseCSCMatrix": SparseCSCMatrix, "SparseCSFTensor": SparseCSFTensor}
