"""Arrays for every physical layout; see :mod:`quiver.array.base` for the core object.

Importing this package registers every family subclass with :func:`make_array`.
"""

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
