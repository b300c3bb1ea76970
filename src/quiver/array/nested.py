"""Nested arrays: lists, list views, fixed-size lists, structs, maps and unions
(Columnar spec, "Variable-size List Layout", "ListView Layout", "Fixed-Size List Layout",
"Struct Layout", "Map" and "Union Layout").

Children are not sliced with their parent (see :mod:`quiver.array.base`): a struct's
``field(i)`` and a sparse union's ``field(i)`` apply the parent's offset and length; lists
and dense unions address their children through offsets.

>>> import quiver as qv
>>> qv.array([[1, 2], None, []]).to_pylist()
[[1, 2], None, []]
>>> s = qv.array([{"a": 1, "b": "x"}, None])
>>> s.field("b").to_pylist()
['x', None]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import types as t
from ..errors import ArrowInvalid, ArrowInvalidArgument
from .base import Array, OffsetArray, int_array, register_array_class, typed_view
from .primitive import finish


def _child_range(child: Array, start: int, stop: int, what: str) -> Array:
    """``child[start:stop]`` after checking the child is long enough."""
    if start < 0 or stop < start:
        raise ArrowInvalid(f"expected a {what} child range within bounds, found {start}..{stop}")
    if stop > len(child):
        raise ArrowInvalid(
            f"expected a {what} child of at least {stop} values, found {len(child)}"
        )
    return child.slice(start, stop - start)


def _objects(values: list[Any]) -> np.ndarray:
    return np.fromiter(values, dtype=object, count=len(values))


def _the_child(arr: Array, what: str) -> Array:
    if not arr.children:
        raise ArrowInvalid(f"expected one child for {what} {arr.type}, found none")
    return arr.children[0]


class _ListLike(Array):
    """Shared code of lists and list views: Python lists cut from the child's values."""

    __slots__ = ()

    def _ranges(self) -> tuple[Array | None, list[int], list[int], np.ndarray | None]:
        """(the child values this slice covers, or None when it covers none; each slot's
        start and end in them; valid mask or None)."""
        raise NotImplementedError

    def to_pylist(self, *, maps_as_pydicts: str | None = None) -> list[Any]:
        """Python lists (None for null lists)."""
        if self._length == 0:
            return []
        child, starts, ends, mask = self._ranges()
        vals = [] if child is None else child.to_pylist(maps_as_pydicts=maps_as_pydicts)
        return finish([vals[a:b] for a, b in zip(starts, ends)], mask)


class _OffsetListArray(_ListLike, OffsetArray):
    """Shared code of list, large list and map arrays."""

    __slots__ = ()

    def _offset_dtype(self) -> str:
        st = t.storage_of(self._type)
        return "<i8" if isinstance(st, t.LargeListType) else "<i4"

    @property
    def values(self) -> Array:
        """The child array, unsliced (pyarrow's ``.values``)."""
        return _the_child(self, "list")

    def flatten(self) -> Array:
        """The child values this slice covers (offsets[0] .. offsets[-1])."""
        offs = self.value_offsets()
        return _child_range(self.values, int(offs[0]), int(offs[-1]), "list")

    def _ranges(self) -> tuple[Array, list[int], list[int], np.ndarray | None]:
        offs = self.value_offsets().astype(np.int64)
        mask = self.is_valid_mask()
        first, last = int(offs[0]), int(offs[-1])
        starts = offs[:-1] - first
        ends = offs[1:] - first
        if mask is not None:
            ends = np.where(mask, ends, starts)
        if len(starts) and (
            (ends < starts).any() or (starts < 0).any() or (ends > last - first).any()
        ):
            raise ArrowInvalid(
                f"expected non-decreasing list offsets for {self._type}, found them out of order"
            )
        child = _child_range(self.values, first, last, "list")
        return child, starts.tolist(), ends.tolist(), mask


@register_array_class(t.ListType)
class ListArray(_OffsetListArray):
    """Lists with 32-bit offsets."""

    __slots__ = ()


@register_array_class(t.LargeListType)
class LargeListArray(_OffsetListArray):
    """Lists with 64-bit offsets."""

    __slots__ = ()


@register_array_class(t.MapType)
class MapArray(_OffsetListArray):
    """Maps: lists of ``entries`` structs (key, value); ``to_pylist`` gives (key, value)
    tuples, as pyarrow does."""

    __slots__ = ()

    def _entries(self) -> Array:
        entries = self.flatten()
        if len(entries.children) != 2:
            raise ArrowInvalid(
                f"expected 2 children in map entries, found {len(entries.children)}"
            )
        return entries

    @property
    def keys(self) -> Array:
        """The keys this slice covers, flattened."""
        return self._entries().field(0)  # type: ignore[attr-defined]

    @property
    def items(self) -> Array:
        """The values this slice covers, flattened."""
        return self._entries().field(1)  # type: ignore[attr-defined]

    def to_pylist(self, *, maps_as_pydicts: str | None = None) -> list[Any]:
        """Lists of (key, value) tuples (None for null maps), or dicts with
        ``maps_as_pydicts='lossy'`` (last duplicate key wins) / ``'strict'`` (duplicates
        raise), as in pyarrow."""
        if self._length == 0:
            return []
        entries, starts, ends, mask = self._ranges()
        keys = entries.field(0).to_pylist(maps_as_pydicts=maps_as_pydicts)  # type: ignore[attr-defined]
        items = entries.field(1).to_pylist(maps_as_pydicts=maps_as_pydicts)  # type: ignore[attr-defined]
        pairs = list(zip(keys, items))
        if maps_as_pydicts is None:
            return finish([pairs[a:b] for a, b in zip(starts, ends)], mask)
        if maps_as_pydicts not in ("lossy", "strict"):
            raise ArrowInvalidArgument(
                f"expected maps_as_pydicts None, 'lossy' or 'strict', found {maps_as_pydicts!r}"
            )
        dicts = [dict(pairs[a:b]) for a, b in zip(starts, ends)]
        if maps_as_pydicts == "strict":
            for d, a, b in zip(dicts, starts, ends):
                if len(d) != b - a:
                    raise ArrowInvalid(
                        f"expected distinct map keys for maps_as_pydicts='strict', found "
                        f"{b - a - len(d)} repeated"
                    )
        return finish(dicts, mask)


class _ListViewArray(_ListLike):
    """Shared code of list views with 32- or 64-bit offsets and sizes."""

    __slots__ = ()

    def _dtype(self) -> str:
        return "<i8" if isinstance(t.storage_of(self._type), t.LargeListViewType) else "<i4"

    def _buf(self, i: int, what: str) -> np.ndarray:
        buf = self._buffers[i] if len(self._buffers) > i else None
        if buf is None:
            return self._absent_buffer(f"a {what}", np.zeros(0, dtype=np.uint8))
        return buf

    def value_offsets(self) -> np.ndarray:
        """The ``len(self)`` offsets of this slice (a zero-copy numpy view)."""
        return typed_view(self._buf(1, "offsets"), self._dtype(), self._offset, self._length,
                          "offsets")

    def value_sizes(self) -> np.ndarray:
        """The ``len(self)`` sizes of this slice (a zero-copy numpy view)."""
        return typed_view(self._buf(2, "sizes"), self._dtype(), self._offset, self._length,
                          "sizes")

    @property
    def offsets(self) -> Array:
        """The offsets of this slice as an integer array."""
        return int_array(self.value_offsets())

    @property
    def sizes(self) -> Array:
        """The sizes of this slice as an integer array."""
        return int_array(self.value_sizes())

    @property
    def values(self) -> Array:
        """The child array, unsliced."""
        return _the_child(self, "list_view")

    def _ranges(self) -> tuple[Array | None, list[int], list[int], np.ndarray | None]:
        mask = self.is_valid_mask()
        offs = self.value_offsets().astype(np.int64)
        sizes = self.value_sizes().astype(np.int64)
        used = sizes > 0
        if mask is not None:
            used &= mask
        if (sizes[used] < 0).any() or (offs[used] < 0).any():
            raise ArrowInvalid("expected non-negative list view offsets and sizes, found negative")
        if not used.any():
            empty = [0] * self._length
            return None, empty, empty, mask
        lo = int(offs[used].min())
        hi = int((offs + sizes)[used].max())
        child = _child_range(self.values, lo, hi, "list_view")
        starts = np.where(used, offs - lo, 0).tolist()
        ends = np.where(used, offs + sizes - lo, 0).tolist()
        return child, starts, ends, mask


@register_array_class(t.ListViewType)
class ListViewArray(_ListViewArray):
    """List views with 32-bit offsets and sizes."""

    __slots__ = ()


@register_array_class(t.LargeListViewType)
class LargeListViewArray(_ListViewArray):
    """List views with 64-bit offsets and sizes."""

    __slots__ = ()


@register_array_class(t.FixedSizeListType)
class FixedSizeListArray(Array):
    """Lists of exactly ``list_size`` values each."""

    __slots__ = ()

    @property
    def list_size(self) -> int:
        """Values per list."""
        return t.storage_of(self._type).list_size  # type: ignore[attr-defined]

    @property
    def values(self) -> Array:
        """The child array, unsliced."""
        return _the_child(self, "fixed_size_list")

    def flatten(self) -> Array:
        """The child values this slice covers."""
        k = self.list_size
        return _child_range(self.values, self._offset * k, (self._offset + self._length) * k,
                            "fixed_size_list")

    def to_pylist(self, *, maps_as_pydicts: str | None = None) -> list[Any]:
        """Python lists of ``list_size`` values (None for null lists)."""
        n, k = self._length, self.list_size
        mask = self.is_valid_mask()
        if k == 0:
            return finish([[] for _ in range(n)], mask)
        vals = self.flatten().to_pylist(maps_as_pydicts=maps_as_pydicts)
        return finish([vals[i : i + k] for i in range(0, n * k, k)], mask)


@register_array_class(t.StructType)
class StructArray(Array):
    """Named child fields of equal length; ``to_pylist`` gives dicts."""

    __slots__ = ()

    def field(self, i: int | str) -> Array:
        """Child by position or name, sliced to this array's offset and length."""
        st = t.storage_of(self._type)
        if isinstance(i, str):
            idx = st.get_field_index(i)  # type: ignore[attr-defined]
            if idx < 0:
                st.field(i)  # raises ArrowKeyError when absent
                raise ArrowInvalidArgument(f"expected one child named {i!r}, found several")
        else:
            st.field(i)  # raises ArrowIndexError when out of range
            idx = i % len(st.fields)
        if idx >= len(self._children):
            raise ArrowInvalid(
                f"expected {len(st.fields)} children for {self._type}, found "
                f"{len(self._children)}"
            )
        return _child_range(self._children[idx], self._offset, self._offset + self._length,
                            f"struct field {st.fields[idx].name!r}")

    def flatten(self) -> list[Array]:
        """Every child, sliced to this array (parent nulls are not merged in)."""
        return [self.field(i) for i in range(len(t.storage_of(self._type).fields))]

    def to_pylist(self, *, maps_as_pydicts: str | None = None) -> list[Any]:
        """Dicts keyed by field name (None for null structs).

        Like pyarrow, duplicate field names cannot become dict keys: that raises
        :class:`~quiver.errors.ArrowInvalid`.
        """
        names = [f.name for f in t.storage_of(self._type).fields]
        if len(set(names)) != len(names):
            raise ArrowInvalid(
                "expected distinct field names to convert a struct to dicts, found duplicates"
            )
        n = self._length
        mask = self.is_valid_mask()
        if not names:
            return finish([{} for _ in range(n)], mask)
        cols = [
            self.field(i).to_pylist(maps_as_pydicts=maps_as_pydicts) for i in range(len(names))
        ]
        return finish([dict(zip(names, row)) for row in zip(*cols)], mask)


@register_array_class(t.UnionType)
class UnionArray(Array):
    """Sparse or dense unions (V5 layout: no validity; nulls live in the children)."""

    __slots__ = ()

    @property
    def mode(self) -> str:
        """``'sparse'`` or ``'dense'``."""
        return t.storage_of(self._type).mode  # type: ignore[attr-defined]

    def type_ids(self) -> np.ndarray:
        """The int8 type codes of this slice (a zero-copy numpy view)."""
        buf = self._buffers[0] if self._buffers else None
        if buf is None:
            return self._absent_buffer("a type_ids", np.zeros(0, dtype=np.int8))
        return typed_view(buf, np.int8, self._offset, self._length, "type_ids")

    def value_offsets(self) -> np.ndarray:
        """The int32 offsets of a dense union slice (a zero-copy numpy view)."""
        if self.mode != "dense":
            raise ArrowInvalidArgument("expected a dense union for offsets, found sparse")
        buf = self._buffers[1] if len(self._buffers) > 1 else None
        if buf is None:
            return self._absent_buffer("an offsets", np.zeros(0, dtype=np.int32))
        return typed_view(buf, "<i4", self._offset, self._length, "offsets")

    @property
    def type_codes(self) -> Array:
        """The type codes of this slice as an int8 array."""
        return int_array(self.type_ids())

    @property
    def offsets(self) -> Array:
        """The offsets of a dense union slice as an int32 array."""
        return int_array(self.value_offsets())

    def field(self, i: int) -> Array:
        """Child ``i`` (by position): sparse children sliced to this array, dense unchanged."""
        st = t.storage_of(self._type)
        st.field(i)
        idx = i % len(st.fields)
        if idx >= len(self._children):
            raise ArrowInvalid(
                f"expected {len(st.fields)} children for {self._type}, found "
                f"{len(self._children)}"
            )
        child = self._children[idx]
        if self.mode == "dense":
            return child
        return _child_range(child, self._offset, self._offset + self._length, "union")

    def child_indices(self) -> np.ndarray:
        """For each slot, the position of the selected child (from the type codes)."""
        st = t.storage_of(self._type)
        lookup = np.full(256, -1, dtype=np.int64)
        lookup[np.array(st.type_codes, dtype=np.int64)] = np.arange(len(st.type_codes))  # type: ignore[attr-defined]
        ids = self.type_ids()
        idx = lookup[ids.view(np.uint8)]
        if (idx < 0).any():
            bad = int(ids[idx < 0][0])
            raise ArrowInvalid(
                f"expected union type codes in {st.type_codes}, found {bad}"  # type: ignore[attr-defined]
            )
        return idx

    def to_pylist(self, *, maps_as_pydicts: str | None = None) -> list[Any]:
        """The selected child's value for every slot."""
        n = self._length
        if n == 0:
            return []
        idx = self.child_indices()
        out = np.empty(n, dtype=object)
        dense = self.mode == "dense"
        offs = self.value_offsets().astype(np.int64) if dense else None
        for k in np.unique(idx).tolist():
            pos = np.flatnonzero(idx == k)
            if k >= len(self._children):
                raise ArrowInvalid(
                    f"expected a child {k} for {self._type}, found {len(self._children)}"
                )
            child = self._children[k]
            where = offs[pos] if offs is not None else pos + self._offset
            lo, hi = int(where.min()), int(where.max()) + 1
            vals = _objects(
                _child_range(child, lo, hi, "union").to_pylist(maps_as_pydicts=maps_as_pydicts)
            )
            out[pos] = vals[where - lo]
        return out.tolist()
