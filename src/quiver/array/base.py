"""The core array object shared by every layout family (Columnar spec, "Array").

An :class:`Array` is a type, a logical ``length``, an ``offset`` into its buffers, a
``null_count`` (computed lazily when unknown), the buffers of its layout (see
:mod:`quiver.layout`; absent buffers are ``None``), its child arrays, and for dictionary
arrays the ``dictionary``.  Buffers are 1-D ``numpy.uint8`` arrays (see
:mod:`quiver.buffers`).

Children are *not* sliced with their parent: like Arrow C++ and the C data interface, the
parent's ``offset`` applies to its own buffers and the children keep theirs (struct and
fixed-size-list children are addressed at ``offset`` + i).

Family subclasses (primitive, binary, list, struct, union, ...) register themselves with
:func:`register_array_class`; :func:`make_array` picks the right one.  The IPC reader, the
C data importer and the JSON loader build arrays only through :func:`make_array`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import types as t
from ..buffers import count_set_bits
from ..errors import ArrowIndexError, ArrowInvalidArgument
from ..layout import layout_of

_ARRAY_CLASSES: dict[type, type[Array]] = {}


def register_array_class(*type_classes: type) -> Any:
    """Class decorator: use the decorated Array subclass for these DataType classes."""

    def deco(cls: type[Array]) -> type[Array]:
        for tc in type_classes:
            _ARRAY_CLASSES[tc] = cls
        return cls

    return deco


class Array:
    """An Arrow array: type, length, offset, null_count, buffers, children, dictionary."""

    __slots__ = (
        "__weakref__",
        "_buffers",
        "_children",
        "_dictionary",
        "_length",
        "_null_count",
        "_offset",
        "_type",
    )

    def __init__(
        self,
        type: t.DataType,
        length: int,
        buffers: Sequence[np.ndarray | None],
        children: Sequence[Array] = (),
        null_count: int = -1,
        offset: int = 0,
        dictionary: Array | None = None,
    ) -> None:
        # no checks here: make_array callers validate at the level they choose
        self._type = type
        self._length = length
        self._buffers = tuple(buffers)
        self._children = tuple(children)
        self._null_count = null_count
        self._offset = offset
        self._dictionary = dictionary

    # -- the common attributes -------------------------------------------------------

    @property
    def type(self) -> t.DataType:
        """The array's data type."""
        return self._type

    @property
    def offset(self) -> int:
        """Logical start of this array inside its buffers."""
        return self._offset

    @property
    def buffers(self) -> tuple[np.ndarray | None, ...]:
        """This array's own buffers in layout order (children not included)."""
        return self._buffers

    @property
    def children(self) -> tuple[Array, ...]:
        """Child arrays (unsliced; see the module docstring)."""
        return self._children

    @property
    def dictionary(self) -> Array | None:
        """The dictionary of a dictionary-encoded array (None otherwise)."""
        return self._dictionary

    def __len__(self) -> int:
        return self._length

    @property
    def null_count(self) -> int:
        """Number of null slots, computed from the validity bitmap when unknown."""
        if self._null_count < 0:
            self._null_count = self._compute_null_count()
        return self._null_count

    def _compute_null_count(self) -> int:
        lay = layout_of(self._type)
        if isinstance(t.storage_of(self._type), t.NullType):
            return self._length
        if not lay.has_validity:
            return 0
        validity = self._buffers[0] if self._buffers else None
        if validity is None:
            return 0
        return self._length - count_set_bits(validity, self._offset, self._length)

    @property
    def validity(self) -> np.ndarray | None:
        """The validity bitmap buffer, or None when the layout has none or all are valid."""
        lay = layout_of(self._type)
        if not lay.has_validity or not self._buffers:
            return None
        return self._buffers[0]

    # -- zero-copy slicing -------------------------------------------------------------

    def slice(self, offset: int = 0, length: int | None = None) -> Array:
        """A zero-copy view of ``length`` values from ``offset`` (clamped like pyarrow)."""
        if not isinstance(offset, (int, np.integer)) or offset < 0:
            raise ArrowInvalidArgument(f"expected a non-negative slice offset, found {offset!r}")
        offset = min(int(offset), self._length)
        avail = self._length - offset
        if length is None:
            length = avail
        elif length < 0:
            raise ArrowInvalidArgument(f"expected a non-negative slice length, found {length}")
        length = min(int(length), avail)
        null_count = -1
        if self._null_count == 0 or (length == self._length and offset == 0):
            null_count = self._null_count
        return type(self)(
            self._type,
            length,
            self._buffers,
            self._children,
            null_count,
            self._offset + offset,
            self._dictionary,
        )

    def __getitem__(self, key: int | slice) -> Any:
        if isinstance(key, slice):
            start, stop, step = key.indices(self._length)
            if step != 1:
                raise ArrowInvalidArgument(f"expected a slice step of 1, found {step}")
            return self.slice(start, max(stop - start, 0))
        if not isinstance(key, (int, np.integer)):
            raise ArrowInvalidArgument(f"expected an int or slice index, found {key!r}")
        i = int(key)
        if i < 0:
            i += self._length
        if not 0 <= i < self._length:
            raise ArrowIndexError(f"expected an index below {self._length}, found {key}")
        return self.slice(i, 1).to_pylist()[0]

    # -- what family subclasses provide --------------------------------------------------

    def to_pylist(self) -> list[Any]:
        """The values as Python objects (None for nulls), as pyarrow returns them."""
        raise NotImplementedError(f"to_pylist is not implemented for {self._type}")

    def __repr__(self) -> str:
        n = self._length
        preview = self.slice(0, 10).to_pylist()
        more = ", ..." if n > 10 else ""
        return f"<quiver.Array {self._type} length={n}> {preview!r}"[:-1] + more + "]"


def make_array(
    type: t.DataType,
    length: int,
    buffers: Sequence[np.ndarray | None],
    children: Sequence[Array] = (),
    null_count: int = -1,
    offset: int = 0,
    dictionary: Array | None = None,
) -> Array:
    """Build the right Array subclass for ``type`` from parts, without validation."""
    cls = _ARRAY_CLASSES.get(type.__class__, Array)
    return cls(type, length, buffers, children, null_count, offset, dictionary)
