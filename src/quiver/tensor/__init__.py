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

The modules: :mod:`~quiver.tensor.dense` (Tensor and the geometry checks) and
:mod:`~quiver.tensor.sparse` (the sparse formats).
"""

from __future__ import annotations

from .._lazy import adopt_classes
from .dense import (
    MAX_NDIM,
    Tensor,
    check_geometry,
    column_major_strides,
    row_major_strides,
    strided_extent,
    tensor_numpy_dtype,
    tensor_type_of,
)
from .sparse import (
    SparseCOOTensor,
    SparseCSCMatrix,
    SparseCSFTensor,
    SparseCSRMatrix,
    SparseTensor,
)

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


adopt_classes(__name__, globals())  # pickles and reprs name the package
