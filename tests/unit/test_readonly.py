"""quiver._readonly: the one-line read-only attributes of the data classes."""

from __future__ import annotations

import numpy as np
import pytest

import quiver as qv
from quiver._readonly import readonly
from quiver.array.data import ArrayData
from quiver.tensor import SparseCOOTensor, Tensor


class _Box:
    __slots__ = ("_size",)
    size: int = readonly("_size", "How big the box is.")

    def __init__(self, size: int) -> None:
        self._size = size


def test_reads_the_slot_and_keeps_the_doc() -> None:
    box = _Box(3)
    assert box.size == 3
    assert _Box.size.__doc__ == "How big the box is."
    assert isinstance(_Box.size, property)


def test_cannot_be_assigned() -> None:
    box = _Box(3)
    with pytest.raises(AttributeError):
        box.size = 4  # type: ignore[misc]
    assert box.size == 3


def test_the_data_classes_read_their_parts() -> None:
    arr = qv.array([1, None, 3])
    assert isinstance(ArrayData.type, property)
    assert arr.type == qv.int64() and arr.offset == 0 and arr.children == ()
    assert arr.buffers[1] is arr._buffers[1] and arr.dictionary is None
    batch = qv.record_batch({"a": [1, 2]})
    assert batch.schema is batch._schema and batch.num_rows == 2
    table = qv.table({"a": [1, 2]})
    assert table.column("a").type == qv.int64()
    tensor = Tensor.from_numpy(np.arange(6, dtype=np.int32).reshape(2, 3))
    assert tensor.shape == (2, 3) and tensor.strides == (12, 4) and tensor.data.dtype == np.uint8
    coo = SparseCOOTensor.from_dense_numpy(np.array([[0, 1], [2, 0]], np.int32))
    assert coo.coords.tolist() == [[0, 1], [1, 0]] and coo.is_canonical
