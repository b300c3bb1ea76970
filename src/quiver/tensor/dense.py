"""Dense tensors: a fixed-width numeric value type, a shape, byte strides and optional
dimension names over one ``uint8`` data buffer (Tensor.fbs), and the geometry checks
that keep every view inside its buffer."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from .. import types as t
from .._readonly import readonly
from ..buffers import as_buffer, empty_buffer
from ..errors import ArrowError, ArrowInvalid, ArrowInvalidArgument, ArrowTypeError, NotSupported

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

    >>> from quiver import types as t
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


def dim_names_of(dim_names: Sequence[str | None] | None, ndim: int) -> tuple[str, ...]:
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


def int_tuple(values: Sequence[Any], what: str) -> tuple[int, ...]:
    try:
        return tuple(int(v) for v in values)
    except (TypeError, ValueError):
        raise ArrowTypeError(f"expected a sequence of ints as {what}, found {values!r}") from None


class Dimensioned:
    """What dense and sparse tensors share: value type, shape, dimension names, data."""

    __slots__ = ("_data", "_dim_names", "_shape", "_type")
    _data: np.ndarray
    _dim_names: tuple[str, ...]
    _shape: tuple[int, ...]
    _type: t.DataType

    type: t.DataType = readonly("_type", "The value type.")

    shape: tuple[int, ...] = readonly("_shape", "Size of each dimension.")

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self._shape)

    @property
    def size(self) -> int:
        """Number of elements (of the dense equivalent, for a sparse tensor)."""
        return math.prod(self._shape)

    dim_names: tuple[str, ...] = readonly(
        "_dim_names", "Dimension names ('' where unnamed), or () when no dimension is named."
    )

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


class Tensor(Dimensioned):
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
        shape_t = int_tuple(shape, "shape")
        strides_t = (
            row_major_strides(shape_t, npd.itemsize)
            if strides is None
            else int_tuple(strides, "strides")
        )
        buf = as_buffer(data) if data is not None else empty_buffer()
        check_geometry(shape_t, strides_t, npd.itemsize, buf.nbytes)
        self._data = buf
        self._type = type
        self._shape = shape_t
        self._strides = strides_t
        self._dim_names = dim_names_of(dim_names, len(shape_t))

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

    # -- attributes (type, shape, ndim, size, dim_names: Dimensioned) -------------------

    strides: tuple[int, ...] = readonly("_strides", "Bytes to step one index along each dimension.")

    data: np.ndarray = readonly("_data", "The data buffer (uint8) the values live in.")

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


Tensor._family = Tensor


# the classes name their package as their module (its __init__), which doctest would then
# not look for here: their methods' examples are collected through this table
__test__ = {"Tensor": Tensor}
