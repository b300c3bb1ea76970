"""Selection kernels: ``take``, ``filter``, ``is_null``, ``fill_null`` and sort indices.

Not an Arrow spec section: these follow pyarrow's compute functions of the same names
(``pyarrow.compute.take``, ``filter``, ``is_null``, ``fill_null``, ``sort_indices``) so that
results compare equal to pyarrow's.  Not a compute engine: only what selecting rows needs.

The gather walk itself, :func:`quiver.array.take.gather`, lives in :mod:`quiver.array.take`
(below :mod:`quiver.array.cast`, which decodes dictionaries with it); this module parses
the indices and masks and holds the public kernels and sorting.

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
from ..errors import (
    ArrowIndexError,
    ArrowInvalidArgument,
    ArrowTypeError,
    NotSupported,
)
from ..hooks import Hook
from ..layout import storage_numpy_dtype
from .base import Array
from .build import array, from_numpy
from .cast import cast
from .concat import concat_arrays
from .data import null_mask as _null_mask
from .data import slot_runs
from .take import all_null, gather

# another library's array as a quiver Array: the C data interface, above this layer
# (quiver.hooks)
_import_array = Hook("cdata.import_array")

__all__ = ["fill_null", "filter", "is_null", "is_valid", "sort_indices", "take"]


# --------------------------------------------------------------------------------------
# inputs


def _mask_of(values: Any, what: str) -> tuple[np.ndarray, np.ndarray | None]:
    """``values`` (a quiver Array, numpy array, list, ChunkedArray or any
    ``__arrow_c_array__`` object) as (numpy values, valid mask or None)."""
    if hasattr(values, "combine_chunks") and not isinstance(values, Array):
        values = values.combine_chunks()
    if not isinstance(values, Array) and (
        hasattr(values, "__arrow_c_array__") or hasattr(values, "__arrow_c_stream__")
    ):
        values = _import_array.call(values)  # as is: its nulls stay nulls (no trip through numpy)
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
        valid = ~np.array(nulls, dtype=bool) if any(nulls) else None
        if valid is not None:
            fill = False if any(isinstance(v, bool) for v in items) else 0
            items = [fill if v is None else v for v in items]
        try:
            # no dtype: numpy would turn "1" and 1.5 into 1
            data = np.array(items) if items else np.zeros(0, dtype=np.int64)
        except (OverflowError, ValueError, TypeError):
            data = np.array(items, dtype=object)
        if data.dtype == object and all(isinstance(v, int) for v in items):
            big = next(v for v in items if not -(2**63) <= v < 2**64)
            raise ArrowIndexError(f"expected {what} within 64 bits, found {big}")
        if data.dtype.kind not in "biu":
            kinds = sorted({type(v).__name__ for v in items if v is not None})
            raise ArrowTypeError(
                f"expected {what} as integers or booleans, found {', '.join(kinds)} values"
            )
        return data, valid
    raise ArrowTypeError(f"expected {what} as an array or a list, found {type(values).__name__}")


def checked_indices(indices: Any, n: int) -> tuple[np.ndarray, np.ndarray | None]:
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
    idx, valid = checked_indices(indices, len(arr))
    if len(arr) == 0 and len(idx):
        return all_null(arr.type, len(idx))
    return gather(arr, idx, valid)


def selection(mask: Any, n: int) -> np.ndarray:
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
    return gather(arr, selection(mask, len(arr)), None)


def is_null(arr: Array) -> Array:
    """A boolean array, True where ``arr`` is null (never null itself).

    >>> import quiver as qv
    >>> is_null(qv.array([1, None])).to_pylist()
    [False, True]
    """
    return from_numpy(_null_mask(arr))


def is_valid(arr: Array) -> Array:
    """A boolean array, True where ``arr`` is not null."""
    return from_numpy(~_null_mask(arr))


def fill_null(arr: Array, fill_value: Any) -> Array:
    """``arr`` with its nulls replaced by ``fill_value`` (a Python value of the array's
    type, or a one-value quiver Array).  A dictionary array fills its null indices (a
    null value inside its dictionary stays), its dictionary extended by the fill value.

    >>> import quiver as qv
    >>> fill_null(qv.array(["a", None]), "z").to_pylist()
    ['a', 'z']
    """
    if isinstance(fill_value, Array):
        fill = fill_value
        if not fill.type.equals(arr.type):
            fill = cast(fill, arr.type)
    else:
        fill = array([fill_value], type=arr.type)
    if len(fill) != 1:
        raise ArrowInvalidArgument(f"expected one fill value, found {len(fill)}")
    if isinstance(t.storage_of(arr.type), t.DictionaryType):
        # only null indices, as pyarrow: a null value inside the dictionary stays null;
        # the fill value's dictionary is unified with the array's by the concatenation
        valid = arr.is_valid_mask()
        nulls = np.zeros(len(arr), dtype=bool) if valid is None else ~valid
    else:
        nulls = _null_mask(arr)
    if not nulls.any():
        return arr
    idx = np.where(nulls, len(arr), np.arange(len(arr)))
    return gather(concat_arrays([arr, fill]), idx, None)


# --------------------------------------------------------------------------------------
# sorting


_ORDERS = ("ascending", "descending")
_NO_ORDER = ("sorting is supported for types with an order (numbers, strings, binary, temporal, "
             "decimal, booleans, and dictionaries and run-end encodings of them)")


def sort_keys(arr: Array, order: str = "ascending") -> list[np.ndarray]:
    """numpy keys that order ``arr`` as pyarrow's ``sort_indices`` does (least significant
    first, for ``np.lexsort``): values (nulls, then NaN, placed at the end)."""
    if order not in _ORDERS:
        raise ArrowInvalidArgument(f"expected order in {_ORDERS}, found {order!r}")
    st = t.storage_of(arr.type)
    if isinstance(st, t.RunEndEncodedType):
        # each row takes the keys of its run's value (the values sort as a plain column)
        run = slot_runs(arr)
        return [k[run] for k in sort_keys(arr.children[1], order)]
    if t.is_nested(st):  # pyarrow has no order for lists, maps, structs or unions either
        raise NotSupported(_NO_ORDER)
    nulls = _null_mask(arr)
    if isinstance(st, t.DictionaryType):
        rank = _dictionary_rank(arr, st, nulls)
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


def _dictionary_rank(arr: Array, st: t.DictionaryType, nulls: np.ndarray) -> np.ndarray:
    """Each slot's dense rank among its dictionary's values sorted ascending (NaN after the
    numbers, as pyarrow ranks a dictionary: in descending order NaN then comes first), 0
    where null (index or value; those sort by the null key)."""
    dictionary: Array = arr.dictionary  # type: ignore[assignment]
    if len(dictionary) == 0 or len(arr) == 0:
        return np.zeros(len(arr), dtype=np.int64)
    keys = sort_keys(dictionary)
    order = np.lexsort(keys)
    change = np.zeros(len(order), dtype=bool)
    for k in keys:  # a new rank where any key differs from the entry sorted before
        ranked = k[order]
        change[1:] |= ranked[1:] != ranked[:-1]
    dense = np.empty(len(order), dtype=np.int64)
    dense[order] = np.cumsum(change)
    codes = arr._fixed_values_view(storage_numpy_dtype(st.index_type)).astype(np.int64)  # type: ignore[arg-type]
    codes = np.clip(codes, 0, len(dictionary) - 1)  # a null index may hold any value
    return np.where(nulls, 0, dense[codes])


def _rank(objects: np.ndarray, nulls: np.ndarray) -> np.ndarray:
    """Dense ranks of Python values (nulls ranked 0; they sort by the null key)."""
    out = np.zeros(len(objects), dtype=np.int64)
    keep = ~nulls
    if keep.any():
        present = objects[keep]
        try:
            _, inverse = np.unique(present, return_inverse=True)
        except TypeError:
            raise NotSupported(_NO_ORDER) from None
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
