"""Encoded and wrapped arrays: dictionary, run-end encoded and extension arrays
(Columnar spec, "Dictionary-encoded Layout", "Run-End Encoded Layout", "Extension Types").

A dictionary array's own buffers are ``(validity, indices)``; ``.indices`` views them as an
integer array and ``.dictionary`` holds the values.  A run-end encoded array has no buffers
and two children, ``run_ends`` and ``values``; its offset and length are logical.
An extension array has its storage type's buffers and children.

>>> import quiver as qv
>>> d = qv.array(["a", "b", "a", None], qv.dictionary(qv.int8(), qv.string()))
>>> d.indices.to_pylist(), d.dictionary.to_pylist(), d.to_pylist()
([0, 1, 0, None], ['a', 'b'], ['a', 'b', 'a', None])
>>> r = qv.array([1, 1, 1, 2], qv.run_end_encoded(qv.int32(), qv.int64()))
>>> r.run_ends.to_pylist(), r.values.to_pylist(), r.slice(2).to_pylist()
([3, 4], [1, 2], [1, 2])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import types as t
from ..errors import ArrowInvalid
from ..layout import storage_numpy_dtype
from .base import Array, make_array, register_array_class, typed_view
from .primitive import finish, uuids

_UUID_STORAGE = t.FixedSizeBinaryType(16)
_BOOL8_STORAGE = t.IntegerType(8, True)

@register_array_class(t.DictionaryType)
class DictionaryArray(Array):
    """Integer indices into a dictionary array."""

    __slots__ = ()

    @property
    def indices(self) -> Array:
        """The indices as an array of the index type (sharing this array's buffers)."""
        st = t.storage_of(self._type)
        return make_array(
            st.index_type,  # type: ignore[attr-defined]
            self._length,
            self._buffers,
            (),
            self._null_count,
            self._offset,
        )

    def _dictionary_or_fail(self) -> Array:
        if self._dictionary is None:
            raise ArrowInvalid(f"expected a dictionary for {self._type}, found None")
        return self._dictionary

    def index_values(self) -> np.ndarray:
        """The raw indices of this slice as a zero-copy numpy view (null slots unmasked)."""
        buf = self._buffers[1] if len(self._buffers) > 1 else None
        dt = storage_numpy_dtype(self._type)
        if buf is None:
            if self._length == 0:
                return np.zeros(0, dtype=dt)
            raise ArrowInvalid(f"expected an indices buffer for {self._type}, found None")
        return typed_view(buf, dt, self._offset, self._length, "indices")

    def checked_index_values(self) -> np.ndarray:
        """The indices as int64, 0 at null slots, each checked to lie in the dictionary
        (ArrowInvalid naming the first that does not); for arrays with a valid slot."""
        dictionary = self._dictionary_or_fail()
        idx = self.index_values().astype(np.int64)
        mask = self.is_valid_mask()
        if mask is not None:
            idx = np.where(mask, idx, 0)
        if (idx < 0).any() or (idx >= len(dictionary)).any():
            bad = int(idx[(idx < 0) | (idx >= len(dictionary))][0])
            raise ArrowInvalid(
                f"expected dictionary indices below {len(dictionary)}, found {bad}"
            )
        return idx

    def to_pylist(self, *, maps_as_pydicts: str | None = None) -> list[Any]:
        """The decoded values (None for null indices)."""
        n = self._length
        if n == 0:
            return []
        dictionary = self._dictionary_or_fail()
        mask = self.is_valid_mask()
        if mask is not None and not mask.any():
            return [None] * n
        idx = self.checked_index_values()
        values = dictionary.to_pylist(maps_as_pydicts=maps_as_pydicts)
        obj = np.fromiter(values, dtype=object, count=len(values))
        return finish(obj[idx], mask)


@register_array_class(t.RunEndEncodedType)
class RunEndEncodedArray(Array):
    """Runs of equal values: ``run_ends`` (logical end of each run) and ``values``."""

    __slots__ = ()

    @property
    def null_count(self) -> int:
        """Always 0: the nulls of a run-end encoded array live in its values child."""
        return 0

    def _child(self, i: int) -> Array:
        if len(self._children) != 2:
            raise ArrowInvalid(
                f"expected 2 children (run_ends, values) for {self._type}, "
                f"found {len(self._children)}"
            )
        return self._children[i]

    @property
    def run_ends(self) -> Array:
        """The run ends child (unsliced, like pyarrow)."""
        return self._child(0)

    @property
    def values(self) -> Array:
        """The values child (unsliced, like pyarrow)."""
        return self._child(1)

    def _physical(self) -> tuple[int, np.ndarray]:
        """First physical run of this slice and the logical length each covered run adds."""
        ends_arr = self.run_ends
        if ends_arr.null_count:
            raise ArrowInvalid(f"expected no null run ends, found {ends_arr.null_count}")
        ends = ends_arr._fixed_values_view(storage_numpy_dtype(ends_arr.type)).astype(np.int64)
        lo, hi = self._offset, self._offset + self._length
        first = int(np.searchsorted(ends, lo, side="right"))
        last = int(np.searchsorted(ends, hi - 1, side="right"))
        if last >= len(ends):
            end = int(ends[-1]) if len(ends) else 0
            raise ArrowInvalid(f"expected run ends reaching {hi}, found the last at {end}")
        covered = np.minimum(ends[first : last + 1], hi) - lo
        lengths = np.diff(covered, prepend=0)
        if (lengths <= 0).any():
            raise ArrowInvalid("expected strictly increasing run ends, found a repeat")
        return first, lengths

    def to_pylist(self, *, maps_as_pydicts: str | None = None) -> list[Any]:
        """The decoded values, one per logical slot."""
        if self._length == 0:
            return []
        first, lengths = self._physical()
        values = self.values
        if first + len(lengths) > len(values):
            raise ArrowInvalid(
                f"expected at least {first + len(lengths)} run values, found {len(values)}"
            )
        vals = values.slice(first, len(lengths)).to_pylist(maps_as_pydicts=maps_as_pydicts)
        obj = np.fromiter(vals, dtype=object, count=len(vals))
        return np.repeat(obj, lengths).tolist()


@register_array_class(t.ExtensionType)
class ExtensionArray(Array):
    """An extension type over a storage array with the same buffers and children."""

    __slots__ = ()

    @property
    def storage(self) -> Array:
        """The same data as an array of the storage type."""
        st = self._type.storage_type  # type: ignore[attr-defined]
        return make_array(
            st,
            self._length,
            self._buffers,
            self._children,
            self._null_count,
            self._offset,
            self._dictionary,
        )

    @property
    def null_count(self) -> int:
        """Nulls of the storage array."""
        if self._null_count < 0:
            self._null_count = self.storage.null_count
        return self._null_count

    def to_pylist(self, *, maps_as_pydicts: str | None = None) -> list[Any]:
        """The storage values; ``arrow.uuid`` values become ``uuid.UUID`` like pyarrow."""
        values = self.storage.to_pylist(maps_as_pydicts=maps_as_pydicts)
        # only a well-formed uuid (16-byte storage) becomes uuid.UUID; other storage
        # under that name is kept as its plain values rather than failing
        ext: t.ExtensionType = self._type  # type: ignore[assignment]
        if ext.extension_name == "arrow.uuid" and ext.storage_type == _UUID_STORAGE:
            return uuids(values)
        if self._is_bool8():
            return [None if v is None else v != 0 for v in values]
        return values

    def _is_bool8(self) -> bool:
        """Whether this is a well-formed ``arrow.bool8`` (int8 storage: 0 false, any other
        value true), whose values pyarrow gives as bools."""
        ext: t.ExtensionType = self._type  # type: ignore[assignment]
        return ext.extension_name == "arrow.bool8" and ext.storage_type == _BOOL8_STORAGE

    def to_numpy(self, zero_copy_only: bool = True, writable: bool = False) -> np.ndarray:
        """The storage's numpy values; an ``arrow.bool8`` gives bools, as pyarrow (a copy:
        numpy's bools must be 0 or 1), an object array with None when it has nulls."""
        if not self._is_bool8():
            return super().to_numpy(zero_copy_only, writable)
        if self.null_count:
            if zero_copy_only:
                raise ArrowInvalid(
                    f"expected no nulls for a zero-copy to_numpy, found {self.null_count}"
                )
            out = np.empty(len(self), dtype=object)
            out[:] = self.to_pylist()
            return out
        return self.storage.to_numpy(zero_copy_only=False) != 0
