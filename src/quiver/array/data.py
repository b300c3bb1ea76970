"""The untyped array and the reads that every module above it shares (Columnar spec,
"Array"; the arrow-rs ``ArrayData`` level).

:class:`ArrayData` holds what any array is: a type, a logical ``length``, an ``offset`` into
its buffers, a ``null_count`` (computed lazily when unknown), the buffers of its layout
(:mod:`quiver.layout`; absent buffers are ``None``), its children, and for dictionary
arrays the ``dictionary``.  :class:`quiver.array.base.Array` adds the behaviour (values,
slicing, validation, equality, numpy, pandas, the PyCapsule protocol) on top.

Validation (:mod:`quiver.array.validate`), equality (:mod:`quiver.array.equal`) and the
pandas conversion (:mod:`quiver.pandas_out`) take arrays at this level, so ``Array`` can
call them without an import running back up.  The functions below read values out of an
array's buffers with checked views: :func:`typed_view`, :func:`offsets_and_data` of
binary-like arrays, and :func:`null_mask`, the nulls as pyarrow's ``is_null`` sees them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import types as t
from .._readonly import readonly
from ..buffers import count_set_bits, unpack_bits
from ..errors import ArrowInvalid, ArrowInvalidArgument, ArrowTypeError
from ..layout import layout_of, storage_numpy_dtype


class ArrayData:
    """An array's parts: type, length, offset, null_count, buffers, children, dictionary."""

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
        children: Sequence[ArrayData] = (),
        null_count: int = -1,
        offset: int = 0,
        dictionary: ArrayData | None = None,
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

    type: t.DataType = readonly("_type", "The array's data type.")

    offset: int = readonly("_offset", "Logical start of this array inside its buffers.")

    buffers: tuple[np.ndarray | None, ...] = readonly(
        "_buffers", "This array's own buffers in layout order (children not included)."
    )

    children: tuple[Any, ...] = readonly(
        "_children", "Child arrays (unsliced; see the module docstring)."
    )

    dictionary: Any = readonly(
        "_dictionary", "The dictionary of a dictionary-encoded array (None otherwise)."
    )

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

    def is_valid_mask(self) -> np.ndarray | None:
        """A bool array, True where a slot is valid; None when every slot is valid.

        Unions and run-end encoded arrays have no validity of their own (None).
        """
        validity = self.validity
        if validity is None or self.null_count == 0:
            return None
        needed = (self._offset + self._length + 7) // 8
        if len(validity) < needed:
            raise ArrowInvalid(
                f"expected a validity bitmap of at least {needed} bytes, found {len(validity)}"
            )
        return unpack_bits(validity, self._offset, self._length)

    def _fixed_values_view(self, np_dtype: np.dtype) -> np.ndarray:
        raw = storage_numpy_dtype(self._type)
        if raw is None:
            raise ArrowTypeError(f"expected a numeric or temporal type, found {self._type}")
        buf = self._buffers[1] if len(self._buffers) > 1 else None
        if buf is None:
            if self._length == 0:
                return np.zeros(0, dtype=np_dtype)
            raise ArrowInvalid(f"expected a values buffer for {self._type}, found None")
        view = typed_view(buf, raw, self._offset, self._length, "values")
        if np_dtype == raw:
            return view
        if np_dtype.itemsize != raw.itemsize:  # date32 days widen to datetime64[D]: a copy
            return view.astype(np.int64).view(np_dtype)
        return view.view(np_dtype)


def typed_view(buf: np.ndarray, dtype: Any, start: int, count: int, what: str) -> np.ndarray:
    """``count`` elements of ``dtype`` from element ``start`` of ``buf`` (a checked view)."""
    dt = np.dtype(dtype)
    lo = start * dt.itemsize
    hi = (start + count) * dt.itemsize
    if len(buf) < hi:
        raise ArrowInvalid(f"expected a {what} buffer of at least {hi} bytes, found {len(buf)}")
    return buf[lo:hi].view(dt)


def slice_bounds(size: int, offset: Any, length: Any) -> tuple[int, int]:
    """``(offset, length)`` of a slice of ``size`` items, clamped like pyarrow's."""
    if not isinstance(offset, (int, np.integer)) or offset < 0:
        raise ArrowInvalidArgument(f"expected a non-negative slice offset, found {offset!r}")
    if length is not None and (not isinstance(length, (int, np.integer)) or length < 0):
        raise ArrowInvalidArgument(f"expected a non-negative slice length, found {length!r}")
    offset = min(int(offset), size)
    avail = size - offset
    return offset, avail if length is None else min(int(length), avail)


def ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The positions ``starts[i] .. starts[i] + lengths[i]`` for every i, concatenated
    (int64, whatever integer type the inputs have)."""
    starts = np.asarray(starts, np.int64)
    lengths = np.asarray(lengths, np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    out_starts = np.cumsum(lengths) - lengths
    return np.arange(total, dtype=np.int64) + np.repeat(starts - out_starts, lengths)


def offsets_and_data(arr: ArrayData) -> tuple[np.ndarray, np.ndarray]:
    """int64 offsets from 0 and the data bytes of a binary-like or view array."""
    st = t.storage_of(arr.type)
    n = len(arr)
    if isinstance(st, (t.BinaryViewType, t.StringViewType)):
        return _view_offsets_and_data(arr)
    if n == 0:
        return np.zeros(1, np.int64), np.zeros(0, np.uint8)
    w = 8 if st.large else 4  # type: ignore[attr-defined]
    raw = arr.buffers[1][arr.offset * w : (arr.offset + n + 1) * w].view(f"<i{w}")  # type: ignore[index]
    offs = raw.astype(np.int64)
    data = arr.buffers[2] if arr.buffers[2] is not None else np.zeros(0, np.uint8)
    return offs - offs[0], data[int(offs[0]) : int(offs[-1])]


def _view_offsets_and_data(arr: ArrayData) -> tuple[np.ndarray, np.ndarray]:
    n = len(arr)
    views = arr.buffers[1][arr.offset * 16 : (arr.offset + n) * 16]  # type: ignore[index]
    valid = arr.is_valid_mask()
    words = views.view("<i4").reshape(n, 4)
    lengths = words[:, 0].astype(np.int64)
    if valid is not None:
        lengths = np.where(valid, lengths, 0)
    inline = lengths <= 12
    pool = [views, *(b for b in arr.buffers[2:] if b is not None)]
    bases = np.cumsum([0] + [len(b) for b in pool])
    source = np.concatenate(pool) if len(pool) > 1 else views
    starts = np.where(
        inline,
        np.arange(n, dtype=np.int64) * 16 + 4,
        bases[1:][np.clip(words[:, 2], 0, len(pool) - 2)] + words[:, 3] if len(pool) > 1
        else 0,
    )
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets, source[ranges(starts.astype(np.int64), lengths)]


def slot_runs(arr: ArrayData) -> np.ndarray:
    """For each logical slot of a run-end encoded array, its run: the slot of the values
    child that holds its value (int64); ArrowInvalid when the run ends stop short."""
    ends_arr, values = arr.children
    n = len(arr)
    ends = ends_arr._fixed_values_view(storage_numpy_dtype(ends_arr.type))  # type: ignore[arg-type]
    run = np.searchsorted(ends.astype(np.int64), np.arange(arr.offset, arr.offset + n),
                          side="right")
    if n and int(run[-1]) >= min(len(ends), len(values)):  # (runs never decrease)
        last = int(ends[-1]) if len(ends) else 0
        raise ArrowInvalid(
            f"expected run ends and values reaching slot {arr.offset + n - 1}, found the "
            f"last run end at {last} and {len(values)} values")
    return run


def null_mask(arr: ArrayData) -> np.ndarray:
    """True where a slot is null, as pyarrow's ``is_null`` sees it: the validity bitmap;
    for unions the selected child's slot; for run-end encoded arrays the run's value; for
    dictionaries a null index or an index to a null value."""
    st = t.storage_of(arr.type)
    n = len(arr)
    if isinstance(st, t.NullType):
        return np.ones(n, dtype=bool)
    if isinstance(st, t.DictionaryType) and arr.dictionary is not None:
        own = arr.is_valid_mask()
        values_null = null_mask(arr.dictionary)
        if not values_null.any():
            return np.zeros(n, dtype=bool) if own is None else ~own
        index = arr._fixed_values_view(storage_numpy_dtype(st.index_type)).astype(np.int64)  # type: ignore[arg-type]
        if own is not None:
            index = np.where(own, index, 0)
        out = values_null[np.clip(index, 0, max(len(values_null) - 1, 0))] if n else np.zeros(
            0, bool)
        return out if own is None else out | ~own
    if isinstance(st, t.RunEndEncodedType):
        return null_mask(arr.children[1])[slot_runs(arr)] if n else np.zeros(0, bool)
    if isinstance(st, t.UnionType):
        out = np.zeros(n, dtype=bool)
        which = arr.child_indices()  # type: ignore[attr-defined]
        if st.mode == "dense":
            slot = arr.value_offsets().astype(np.int64)  # type: ignore[attr-defined]
        else:
            slot = np.arange(arr.offset, arr.offset + n, dtype=np.int64)
        for k, child in enumerate(arr.children):
            sel = which == k
            if sel.any():
                out[sel] = null_mask(child)[slot[sel]]
        return out
    valid = arr.is_valid_mask()
    return np.zeros(n, dtype=bool) if valid is None else ~valid
