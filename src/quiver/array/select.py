"""Selection kernels: ``take``, ``filter``, ``is_null``, ``fill_null`` and sort indices.

Not an Arrow spec section: these follow pyarrow's compute functions of the same names
(``pyarrow.compute.take``, ``filter``, ``is_null``, ``fill_null``, ``sort_indices``) so that
results compare equal to pyarrow's.  Not a compute engine: only what selecting rows needs.

Theory of operation
-------------------
One walk, :func:`_take`, gathers rows of any array.  It asks the layout table
(:func:`quiver.layout.layout_of`) what each buffer holds and how the children relate to the
parent, and each buffer kind and child rule has one vectorized gather:

- ``validity`` / ``bits``: unpack, index, repack (a null index makes a null slot);
- ``values`` (fixed width), ``views``, ``type_ids`` and the per-slot ``offsets``/``sizes`` of
  list views and dense unions: rows of ``byte_width`` bytes, indexed as a 2-d uint8 array;
- ``offsets`` + ``data`` (binary, string) and ``offsets`` + child (lists, maps): the selected
  ranges, turned into one position array (``np.repeat`` of the range starts plus a running
  count), which indexes the data bytes or is taken from the child;
- children ``same`` (struct, sparse union): the same rows of every child; ``fixed``
  (fixed-size list): each row widened to its ``list_size`` child rows; ``views`` and
  ``dense``: children kept whole (the gathered offsets point into them); ``run_end``: the
  runs that hold the rows, equal neighbours merged back into runs.

Dictionary arrays gather their indices and keep the dictionary; extension arrays gather
their storage.  No Python loop runs per row.

>>> import quiver as qv
>>> take(qv.array(["a", None, "c"]), [2, 0, None]).to_pylist()
['c', 'a', None]
>>> filter(qv.array([1, 2, 3]), [True, False, True]).to_pylist()
[1, 3]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import types as t
from ..buffers import pack_bits, unpack_bits
from ..errors import (
    ArrowIndexError,
    ArrowInvalid,
    ArrowInvalidArgument,
    ArrowTypeError,
    NotSupported,
)
from ..layout import layout_of, storage_numpy_dtype
from .base import Array, make_array

__all__ = ["fill_null", "filter", "is_null", "is_valid", "sort_indices", "take"]

_I32_MAX = (1 << 31) - 1


# --------------------------------------------------------------------------------------
# inputs


def _mask_of(values: Any, what: str) -> tuple[np.ndarray, np.ndarray | None]:
    """``values`` (a quiver Array, numpy array, list, ChunkedArray or any
    ``__arrow_c_array__`` object) as (numpy values, valid mask or None)."""
    if hasattr(values, "combine_chunks") and not isinstance(values, Array):
        values = values.combine_chunks()
    if not isinstance(values, Array) and hasattr(values, "__arrow_c_array__"):
        from .build import array

        values = array(values)
    if isinstance(values, Array):
        st = t.storage_of(values.type)
        valid = values.is_valid_mask()
        if isinstance(st, t.BoolType):
            data = getattr(values, "storage", values).to_numpy_bool()  # type: ignore[attr-defined]
        elif isinstance(st, t.IntegerType):
            data = values._fixed_values_view(storage_numpy_dtype(st))  # type: ignore[arg-type]
        elif isinstance(st, t.NullType):
            data = np.zeros(len(values), dtype=np.int64)
            valid = np.zeros(len(values), dtype=bool)
        else:
            raise ArrowTypeError(f"expected {what} as integers or booleans, found {values.type}")
        return data, valid
    if isinstance(values, np.ndarray):
        if values.dtype.kind not in "biu":
            raise ArrowTypeError(f"expected {what} as integers or booleans, found {values.dtype}")
        return values, None
    if isinstance(values, (list, tuple, range)):
        items = list(values)
        nulls = [v is None for v in items]
        if any(nulls):
            fill = False if any(isinstance(v, bool) for v in items) else 0
            data = np.array([fill if v is None else v for v in items])
            return data, ~np.array(nulls, dtype=bool)
        return np.array(items, dtype=np.int64 if not items else None), None
    raise ArrowTypeError(f"expected {what} as an array or a list, found {type(values).__name__}")


def _indices(indices: Any, n: int) -> tuple[np.ndarray, np.ndarray | None]:
    """Checked int64 indices (negative ones refused, as pyarrow does) and their validity."""
    data, valid = _mask_of(indices, "indices")
    if data.dtype.kind == "b":
        raise ArrowTypeError("expected integer indices, found booleans (use filter)")
    idx = np.asarray(data, dtype=np.int64) if data.dtype != np.int64 else data
    if valid is not None:
        idx = np.where(valid, idx, 0)
    if len(idx):
        bad = (idx < 0) | (idx >= n)
        if valid is not None:
            bad &= valid
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ArrowIndexError(
                f"expected indices in 0..{n - 1}, found {int(idx[row])} at position {row}"
                if n else f"expected no indices into an empty array, found {int(idx[row])}"
            )
    if valid is not None and valid.all():
        valid = None
    return idx, valid


# --------------------------------------------------------------------------------------
# the one gather walk


def _bits(buf: np.ndarray | None, offset: int, length: int) -> np.ndarray | None:
    return None if buf is None else unpack_bits(buf, offset, length)


def _rows(buf: np.ndarray, width: int, start: int, count: int) -> np.ndarray:
    """``count`` rows of ``width`` bytes from row ``start`` of ``buf`` (a 2-d view)."""
    need = (start + count) * width
    if len(buf) < need:
        raise ArrowInvalid(f"expected a buffer of at least {need} bytes, found {len(buf)}")
    return buf[start * width : need].reshape(count, width)


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The positions ``starts[i] .. starts[i] + lengths[i]`` for every i, concatenated."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    out_starts = np.cumsum(lengths) - lengths
    return np.arange(total, dtype=np.int64) + np.repeat(starts - out_starts, lengths)


def _new_offsets(lengths: np.ndarray, width: int) -> np.ndarray:
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if width == 4 and offsets[-1] > _I32_MAX:
        raise ArrowInvalid(
            f"expected at most {_I32_MAX} values under 32-bit offsets, found {offsets[-1]} "
            "(take into the large_ type)"
        )
    return offsets.astype(f"<i{width}").view(np.uint8)


def _take(arr: Array, idx: np.ndarray, valid: np.ndarray | None) -> Array:
    """Rows ``idx`` (relative to ``arr``'s offset) of ``arr``; ``valid`` False makes a null."""
    dtype = arr.type
    st = t.storage_of(dtype)
    lay = layout_of(dtype)
    k = len(idx)
    off = arr.offset
    at = idx + off if off else idx  # positions in the buffers' element space
    if isinstance(st, t.NullType):
        return make_array(dtype, k, [], (), k, 0)
    if isinstance(st, t.RunEndEncodedType):
        return _take_run_end(arr, at, valid)
    out_valid = valid
    buffers: list[np.ndarray | None] = []
    positions: np.ndarray | None = None  # child (or data) positions of offset ranges
    src = arr.buffers
    for i, spec in enumerate(lay.buffers):
        buf = src[i] if i < len(src) else None
        kind = spec.kind
        if kind == "validity":
            mask = None if arr.null_count == 0 else _bits(buf, off, len(arr))
            if mask is not None:
                out_valid = mask[idx] if out_valid is None else mask[idx] & out_valid
            buffers.append(None)  # filled in at the end
        elif kind == "bits":
            bits = unpack_bits(buf, off, len(arr)) if len(arr) else np.zeros(0, bool)
            got = bits[idx] if len(arr) else np.zeros(k, bool)
            buffers.append(pack_bits(got))
        elif kind == "offsets" and lay.children in ("offsets", "none"):
            w = spec.byte_width
            if buf is None or len(arr) == 0:
                offsets = np.zeros(len(arr) + 1 + off, dtype=f"<i{w}")
            else:
                offsets = _rows(buf, w, 0, off + len(arr) + 1).reshape(-1).view(f"<i{w}")
            starts = offsets[at].astype(np.int64) if k else np.zeros(0, np.int64)
            lengths = offsets[at + 1].astype(np.int64) - starts if k else starts
            if valid is not None:
                lengths = np.where(valid, lengths, 0)
            buffers.append(_new_offsets(lengths, w))
            positions = _ranges(starts, lengths)
        elif kind == "data":
            data = buf if buf is not None else np.zeros(0, np.uint8)
            buffers.append(data[positions] if positions is not None and len(positions)
                           else np.zeros(0, np.uint8))
        elif kind in ("values", "views", "type_ids", "offsets", "sizes"):
            w = spec.byte_width
            if len(arr) == 0:
                buffers.append(np.zeros(k * w, np.uint8))
                continue
            rows = _rows(buf, w, off, len(arr))[idx]  # type: ignore[arg-type]
            if kind == "sizes" and valid is not None:
                rows[~valid] = 0  # a null list view covers nothing
            buffers.append(rows.reshape(-1))
        else:  # pragma: no cover - the layout table has no other kinds
            raise NotSupported(f"take does not know buffer kind {kind!r} of {dtype}")
    if lay.variadic:  # view types keep their data buffers; the views point into them
        buffers.extend(src[len(lay.buffers):])

    children: list[Array] = []
    rule = lay.children
    if rule == "same":
        # struct and sparse union children hold the same rows; a null index makes a null
        # in every child too (for a sparse union, that is how its slot becomes null)
        children = [_take(c, at, valid) for c in arr.children]
    elif rule == "offsets":
        children = [_take(arr.children[0], positions, None)]  # type: ignore[arg-type]
    elif rule == "fixed":
        size = st.list_size  # type: ignore[attr-defined]
        pos = (at[:, None] * size + np.arange(size, dtype=np.int64)).reshape(-1)
        cv = None if valid is None else np.repeat(valid, size)
        children = [_take(arr.children[0], pos, cv)]
    elif rule in ("views", "dense"):
        children = list(arr.children)
        if rule == "dense" and valid is not None and not valid.all():
            # a dense union has no validity: a null index points at a null appended to
            # the first child
            from .concat import concat_arrays

            first = children[0]
            null_at = len(first)
            children[0] = concat_arrays([first, _all_null(first.type, 1)])
            ids = buffers[0].view(np.int8)
            offs = buffers[1].view("<i4")
            ids[~valid] = st.type_codes[0]  # type: ignore[attr-defined]
            offs[~valid] = null_at
    if lay.has_validity:
        if out_valid is not None and not out_valid.all():
            buffers[0] = pack_bits(out_valid)
            null_count = int(k - np.count_nonzero(out_valid))
        else:
            null_count = 0
    else:
        null_count = 0
    return make_array(dtype, k, buffers, children, null_count, 0, arr.dictionary)


def _take_run_end(arr: Array, at: np.ndarray, valid: np.ndarray | None) -> Array:
    """Rows of a run-end encoded array, as runs again (equal neighbours merged)."""
    ends_arr, values = arr.children[0], arr.children[1]
    ends = ends_arr._fixed_values_view(storage_numpy_dtype(ends_arr.type))  # type: ignore[arg-type]
    ends = ends.astype(np.int64)
    k = len(at)
    run = np.searchsorted(ends, at, side="right")
    if k and int(run.max()) >= len(values):
        raise ArrowInvalid(f"expected run ends covering row {int(at.max())}, found fewer runs")
    key = run if valid is None else np.where(valid, run, -1)
    change = np.flatnonzero(key[1:] != key[:-1]) + 1 if k else np.zeros(0, np.int64)
    firsts = np.concatenate(([0], change)).astype(np.int64) if k else change
    new_ends = np.append(change, k).astype(np.int64) if k else change
    run_values = _take(values, run[firsts], None if valid is None else valid[firsts])
    end_type = ends_arr.type
    end_dtype = storage_numpy_dtype(end_type)
    ends_out = make_array(end_type, len(new_ends),
                          [None, new_ends.astype(end_dtype).view(np.uint8)], (), 0, 0)
    return make_array(arr.type, k, [], [ends_out, run_values], 0, 0)


# --------------------------------------------------------------------------------------
# public kernels


def take(arr: Array, indices: Any) -> Array:
    """The values of ``arr`` at ``indices`` (any integer array or list; a null index gives a
    null), for every type; like ``pyarrow.compute.take``.

    >>> import quiver as qv
    >>> take(qv.array([[1], [], [2, 3]]), [2, 2, 0]).to_pylist()
    [[2, 3], [2, 3], [1]]
    """
    if not isinstance(arr, Array):
        raise ArrowTypeError(f"expected a quiver Array, found {type(arr).__name__}")
    idx, valid = _indices(indices, len(arr))
    if len(arr) == 0 and len(idx):
        return _all_null(arr.type, len(idx))
    return _take(arr, idx, valid)


def _all_null(dtype: t.DataType, n: int) -> Array:
    from .build import array

    return array([None] * n, type=dtype)


def _selection(mask: Any, n: int) -> np.ndarray:
    """The positions a boolean mask keeps (null entries drop the row, as pyarrow's
    default ``null_selection_behavior="drop"``)."""
    data, valid = _mask_of(mask, "a filter mask")
    if len(data) == 0:
        data = data.astype(bool)
    if data.dtype.kind != "b":
        raise ArrowTypeError(f"expected a boolean filter mask, found {data.dtype}")
    if len(data) != n:
        raise ArrowInvalidArgument(f"expected a filter mask of length {n}, found {len(data)}")
    keep = data if valid is None else data & valid
    return np.flatnonzero(keep)


def filter(arr: Array, mask: Any) -> Array:
    """The values of ``arr`` where ``mask`` is True (nulls in the mask drop the row).

    >>> import quiver as qv
    >>> filter(qv.array(["a", "b", "c"]), qv.array([True, None, True])).to_pylist()
    ['a', 'c']
    """
    if not isinstance(arr, Array):
        raise ArrowTypeError(f"expected a quiver Array, found {type(arr).__name__}")
    return _take(arr, _selection(mask, len(arr)), None)


def _null_mask(arr: Array) -> np.ndarray:
    """True where a slot is null, as pyarrow's ``is_null`` sees it: the validity bitmap;
    for unions the selected child's slot; for run-end encoded arrays the run's value; for
    dictionaries a null index or an index to a null value."""
    st = t.storage_of(arr.type)
    n = len(arr)
    if isinstance(st, t.NullType):
        return np.ones(n, dtype=bool)
    if isinstance(st, t.DictionaryType) and arr.dictionary is not None:
        own = arr.is_valid_mask()
        values_null = _null_mask(arr.dictionary)
        if not values_null.any():
            return np.zeros(n, dtype=bool) if own is None else ~own
        index = arr._fixed_values_view(storage_numpy_dtype(st.index_type)).astype(np.int64)  # type: ignore[arg-type]
        if own is not None:
            index = np.where(own, index, 0)
        out = values_null[np.clip(index, 0, max(len(values_null) - 1, 0))] if n else np.zeros(
            0, bool)
        return out if own is None else out | ~own
    if isinstance(st, t.RunEndEncodedType):
        ends_arr, values = arr.children
        ends = ends_arr._fixed_values_view(storage_numpy_dtype(ends_arr.type))  # type: ignore[arg-type]
        run = np.searchsorted(ends.astype(np.int64), np.arange(arr.offset, arr.offset + n),
                              side="right")
        return _null_mask(values)[run] if n else np.zeros(0, bool)
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
                out[sel] = _null_mask(child)[slot[sel]]
        return out
    valid = arr.is_valid_mask()
    return np.zeros(n, dtype=bool) if valid is None else ~valid


def is_null(arr: Array) -> Array:
    """A boolean array, True where ``arr`` is null (never null itself).

    >>> import quiver as qv
    >>> is_null(qv.array([1, None])).to_pylist()
    [False, True]
    """
    from .build import from_numpy

    return from_numpy(_null_mask(arr))


def is_valid(arr: Array) -> Array:
    """A boolean array, True where ``arr`` is not null."""
    from .build import from_numpy

    return from_numpy(~_null_mask(arr))


def fill_null(arr: Array, fill_value: Any) -> Array:
    """``arr`` with its nulls replaced by ``fill_value`` (a Python value of the array's
    type, or a one-value quiver Array).

    >>> import quiver as qv
    >>> fill_null(qv.array(["a", None]), "z").to_pylist()
    ['a', 'z']
    """
    from .build import array
    from .concat import concat_arrays

    if isinstance(fill_value, Array):
        fill = fill_value
        if not fill.type.equals(arr.type):
            from .cast import cast

            fill = cast(fill, arr.type)
    else:
        fill = array([fill_value], type=arr.type)
    if len(fill) != 1:
        raise ArrowInvalidArgument(f"expected one fill value, found {len(fill)}")
    nulls = _null_mask(arr)
    if not nulls.any():
        return arr
    idx = np.where(nulls, len(arr), np.arange(len(arr)))
    return _take(concat_arrays([arr, fill]), idx, None)


# --------------------------------------------------------------------------------------
# sorting


_ORDERS = ("ascending", "descending")


def sort_keys(arr: Array, order: str = "ascending") -> list[np.ndarray]:
    """numpy keys that order ``arr`` as pyarrow's ``sort_indices`` does (least significant
    first, for ``np.lexsort``): values (nulls, then NaN, placed at the end)."""
    if order not in _ORDERS:
        raise ArrowInvalidArgument(f"expected order in {_ORDERS}, found {order!r}")
    st = t.storage_of(arr.type)
    nulls = _null_mask(arr)
    if isinstance(st, t.DictionaryType):
        values = arr.dictionary.to_pylist()  # type: ignore[union-attr]
        codes = arr.indices.to_numpy(zero_copy_only=False)  # type: ignore[attr-defined]
        codes = np.where(nulls, 0, np.nan_to_num(codes)).astype(np.int64)
        rank = _rank(np.array([*values, None], dtype=object)[codes], nulls)
        nan = np.zeros(len(arr), dtype=bool)
    else:
        numeric = storage_numpy_dtype(st) if t.is_fixed_width(st) and not isinstance(
            st, (t.DecimalType, t.FixedSizeBinaryType, t.IntervalType, t.BoolType)) else None
        if numeric is not None:
            raw = arr._fixed_values_view(numeric) if len(arr) else np.zeros(0, numeric)
            nan = np.isnan(raw) if raw.dtype.kind == "f" else np.zeros(len(arr), dtype=bool)
            rank = np.where(nan | nulls, 0, raw) if (nan | nulls).any() else raw
        else:
            # other types rank by their Python values (np.unique sorts them)
            objects = np.empty(len(arr), dtype=object)
            objects[:] = arr.to_pylist()
            nan = np.zeros(len(arr), dtype=bool)
            rank = _rank(objects, nulls)
    if order == "descending":
        # ~x reverses signed and unsigned integers without overflow; -x reverses floats
        rank = ~rank if rank.dtype.kind in "iu" else -rank
    # pyarrow: nulls last, NaN just before them, whatever the order
    return [rank, nan, nulls]


def _rank(objects: np.ndarray, nulls: np.ndarray) -> np.ndarray:
    """Dense ranks of Python values (nulls ranked 0; they sort by the null key)."""
    out = np.zeros(len(objects), dtype=np.int64)
    keep = ~nulls
    if keep.any():
        present = objects[keep]
        try:
            _, inverse = np.unique(present, return_inverse=True)
        except TypeError:
            raise NotSupported(
                "sorting is supported for types with an order (numbers, strings, binary, "
                "temporal, decimal, booleans)"
            ) from None
        out[keep] = inverse.reshape(-1)
    return out


def sort_indices(columns: Sequence[Array], orders: Sequence[str] | None = None) -> np.ndarray:
    """Row order (a stable sort) by ``columns``, the first the most significant; each
    ascending or descending; nulls at the end (NaN just before them), as pyarrow's
    ``sort_indices``.

    >>> import quiver as qv
    >>> sort_indices([qv.array([3, None, 1, 3]), qv.array(["b", "x", "y", "a"])]).tolist()
    [2, 3, 0, 1]
    """
    orders = list(orders) if orders is not None else ["ascending"] * len(columns)
    if len(orders) != len(columns):
        raise ArrowInvalidArgument(f"expected {len(columns)} sort orders, found {len(orders)}")
    keys: list[np.ndarray] = []
    for col, order in zip(reversed(columns), reversed(orders)):
        keys.extend(sort_keys(col, order))
    if not keys:
        return np.zeros(0, dtype=np.int64)
    return np.lexsort(keys).astype(np.int64)
