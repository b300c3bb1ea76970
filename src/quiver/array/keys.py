"""Equality keys for values, as Arrow's hash tables see them: what the dictionary builder,
the run-end builder and dictionary unification (concatenating dictionary arrays) group by.

Not an Arrow spec section.  pyarrow's memo tables compare fixed-width values by their bit
patterns: ``-0.0`` and ``0.0`` are two values, a NaN equals a NaN of the same bits, and a
null is one more value.  Python values get the same treatment through :func:`value_key`
(floats by their bits, ``bytearray`` as ``bytes``, lists and mappings as tuples); arrays
through :func:`first_seen`, vectorized over the bytes of fixed-width values.

>>> import quiver as qv
>>> groups, firsts = first_seen(qv.array([0.0, -0.0, 0.0, None, float("nan")]))
>>> groups.tolist(), firsts.tolist()
([0, 1, 0, 2, 3], [0, 1, 3, 4])
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import types as t
from ..buffers import unpack_bits
from ..layout import layout_of
from .base import Array
from .data import typed_view

__all__ = ["first_seen", "value_key"]

_DOUBLE = struct.Struct("<d")


def value_key(v: Any) -> Any:
    """A hashable key for the Python value ``v``: equal keys for values Arrow stores as one
    (floats by their bits, ``bytearray`` and ``memoryview`` as ``bytes``), typed so that
    1, 1.0 and True stay distinct; an unhashable value of no known kind keys by identity
    (the builder then refuses it)."""
    if isinstance(v, (float, np.floating)):
        return (float, _DOUBLE.pack(v))
    if isinstance(v, (bytearray, memoryview)):
        return (bytes, bytes(v))
    if isinstance(v, Mapping):
        return ("m", tuple((value_key(k), value_key(x)) for k, x in v.items()))
    if isinstance(v, (list, tuple, np.ndarray)):
        return ("l", tuple(value_key(x) for x in v))
    key = (type(v), v)
    try:
        hash(key)
    except TypeError:
        return ("id", id(v))
    return key


def _byte_rows(arr: Array) -> np.ndarray | None:
    """Each slot of a fixed-width or boolean ``arr`` as one row of bytes (a valid flag, then
    the value's bytes, zeroed where null); None for other layouts."""
    st = t.storage_of(arr.type)
    lay = layout_of(st)
    n = len(arr)
    if isinstance(st, t.NullType):
        return np.zeros((n, 1), dtype=np.uint8)
    if [b.kind for b in lay.buffers] == ["validity", "bits"]:
        values = unpack_bits(arr.buffers[1], arr.offset, n).view(np.uint8)[:, None]
    elif [b.kind for b in lay.buffers] == ["validity", "values"] and not isinstance(
        st, t.DictionaryType
    ):
        w = lay.buffers[1].byte_width
        values = typed_view(arr.buffers[1], np.uint8, arr.offset * w, n * w, "values")
        values = values.reshape(n, w)
    else:
        return None
    valid = arr.is_valid_mask()
    rows = np.empty((n, values.shape[1] + 1), dtype=np.uint8)
    rows[:, 0] = 1 if valid is None else valid
    rows[:, 1:] = values
    if valid is not None:
        rows[~valid, 1:] = 0
    return rows


def first_seen(arr: Array) -> tuple[np.ndarray, np.ndarray]:
    """Group ids of the slots of ``arr`` (equal values share one; ids numbered in order of
    first appearance) and the position where each group first appears (ascending).

    Fixed-width and boolean values group by their bytes, vectorized; other types by
    :func:`value_key` of their Python values (one step per slot, not per row of any array
    built on them)."""
    n = len(arr)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    rows = _byte_rows(arr)
    if rows is not None:
        as_void = np.ascontiguousarray(rows).view(np.dtype((np.void, rows.shape[1]))).reshape(-1)
        _, first, inverse = np.unique(as_void, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order), dtype=np.int64)
        return rank[inverse.reshape(-1)], first[order].astype(np.int64)
    ids: dict[Any, int] = {}
    groups = np.fromiter(
        (ids.setdefault(value_key(v), len(ids)) for v in arr.to_pylist()), np.int64, n
    )
    _, firsts = np.unique(groups, return_index=True)
    return groups, firsts.astype(np.int64)
