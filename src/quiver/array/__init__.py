"""Arrays for every physical layout; see :mod:`quiver.array.base` for the core object.

Importing this package registers every family subclass with :func:`make_array`.
"""

from . import cast as _cast
from . import select as _select
from .base import Array, make_array, register_array_class
from .binary import BinaryArray, BinaryViewArray, StringArray, StringViewArray
from .build import array, from_numpy, infer_type
from .encoded import DictionaryArray, ExtensionArray, RunEndEncodedArray
from .nested import (
    FixedSizeListArray,
    LargeListArray,
    LargeListViewArray,
    ListArray,
    ListViewArray,
    MapArray,
    StructArray,
    UnionArray,
)
from .primitive import (
    BooleanArray,
    DayTime,
    FixedSizeBinaryArray,
    MonthDayNano,
    NullArray,
    PrimitiveArray,
)


def _attach_kernels() -> None:
    """The selection kernels and ``cast`` as Array methods (pyarrow's spellings); they
    live in :mod:`quiver.array.select` and :mod:`quiver.array.cast`, above the base."""

    def take(self: Array, indices: object) -> Array:
        """The values at ``indices`` (a null index gives a null); see
        :func:`quiver.array.select.take`."""
        return _select.take(self, indices)

    def filter(self: Array, mask: object) -> Array:
        """The values where ``mask`` is True; see :func:`quiver.array.select.filter`."""
        return _select.filter(self, mask)

    def is_null(self: Array) -> Array:
        """A boolean array, True where a value is null."""
        return _select.is_null(self)

    def is_valid(self: Array) -> Array:
        """A boolean array, True where a value is not null."""
        return _select.is_valid(self)

    def fill_null(self: Array, fill_value: object) -> Array:
        """The array with nulls replaced by ``fill_value``."""
        return _select.fill_null(self, fill_value)

    def cast(self: Array, target_type: object, safe: bool = True) -> Array:
        """The values as ``target_type``; see :func:`quiver.array.cast.cast`."""
        return _cast.cast(self, target_type, safe=safe)

    for fn in (take, filter, is_null, is_valid, fill_null, cast):
        setattr(Array, fn.__name__, fn)


_attach_kernels()

__all__ = [
    "Array",
    "BinaryArray",
    "BinaryViewArray",
    "BooleanArray",
    "DayTime",
    "DictionaryArray",
    "ExtensionArray",
    "FixedSizeBinaryArray",
    "FixedSizeListArray",
    "LargeListArray",
    "LargeListViewArray",
    "ListArray",
    "ListViewArray",
    "MapArray",
    "MonthDayNano",
    "NullArray",
    "PrimitiveArray",
    "RunEndEncodedArray",
    "StringArray",
    "StringViewArray",
    "StructArray",
    "UnionArray",
    "array",
    "from_numpy",
    "infer_type",
    "make_array",
    "register_array_class",
]
