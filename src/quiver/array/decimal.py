"""The one limb codec of every decimal width (32, 64, 128, 256 bits).

A decimal value is an unscaled two's complement little-endian integer of the type's
``bit_width``.  Every module that reads or writes those integers (Python values, casts,
building, validation, filters, statistics, integration JSON, Spark) goes through the
*limb* form defined here instead of branching on the width:

* **limbs** — an ``(n, k)`` int64 matrix, least significant limb first, where
  ``k = limb_count(width)``: one limb for widths up to 64 bits (the value sign-extended),
  ``width // 64`` limbs above.  The top limb is signed; the lower limbs hold unsigned
  64-bit digits stored in int64 (read them with ``.view(np.uint64)``).  For widths of 64
  bits and more the matrix is a view of the buffer, no copy.

So a new width is one entry in the types layer's precision table; nothing here names a
width.

>>> import numpy as np
>>> raw = from_ints([1, -2, 2**100], 128)
>>> to_ints(limbs(raw, 128, 0, 3)).tolist()
[1, -2, 1267650600228229401496703205376]
>>> compare(limbs(raw, 128, 0, 3), -2).tolist()
[1, 0, 1]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .data import typed_view

LIMB_BITS = 64
_LIMB = 1 << LIMB_BITS


def limb_count(width: int) -> int:
    """How many 64-bit limbs hold one decimal of ``width`` bits (one up to 64 bits)."""
    return max(1, width // LIMB_BITS)


def limbs(buf: np.ndarray, width: int, offset: int, length: int) -> np.ndarray:
    """The ``(length, limb_count(width))`` int64 limbs of values ``offset ..`` of a decimal
    value buffer (uint8); a view for widths of 64 bits and more.  A buffer too short
    raises ArrowInvalid naming the bytes it needed."""
    if width <= LIMB_BITS:
        narrow = typed_view(buf, f"<i{width // 8}", offset, length, "values")
        return narrow.astype(np.int64, copy=False).reshape(-1, 1)
    k = width // LIMB_BITS
    return typed_view(buf, "<i8", offset * k, length * k, "values").reshape(length, k)


def widen(lmb: np.ndarray, k: int) -> np.ndarray:
    """``lmb`` sign-extended to ``k`` limbs (itself when it has as many or more)."""
    have = lmb.shape[1]
    if have >= k:
        return lmb
    sign = lmb[:, have - 1 : have] >> np.int64(LIMB_BITS - 1)
    return np.concatenate([lmb, np.repeat(sign, k - have, axis=1)], axis=1)


def to_ints(lmb: np.ndarray) -> np.ndarray:
    """The values of limbs as an object array of Python ints (whole-column numpy object
    arithmetic, one step per limb)."""
    k = lmb.shape[1]
    out = lmb[:, k - 1].astype(object)
    for j in range(k - 2, -1, -1):  # a few limbs, not rows
        out = out * _LIMB + lmb[:, j].view(np.uint64).astype(object)
    return out


def value_range(width: int) -> tuple[int, int]:
    """The smallest and largest integers ``width`` bits hold."""
    return -(1 << (width - 1)), (1 << (width - 1)) - 1


def from_ints(values: Sequence[Any] | np.ndarray, width: int) -> np.ndarray:
    """The value buffer (uint8, ``width // 8`` bytes a value) of Python ints that fit
    ``width`` bits (the caller checks, see :func:`value_range`)."""
    if width <= LIMB_BITS:
        return np.asarray(np.asarray(values, dtype=object).astype(f"<i{width // 8}")).view(
            np.uint8).reshape(-1)
    k = width // LIMB_BITS
    rest = np.asarray(values, dtype=object).reshape(-1)
    out = np.empty((len(rest), k), dtype="<u8")
    for j in range(k):  # a few limbs, not rows
        out[:, j] = (rest % _LIMB).astype(np.uint64)
        rest = rest // _LIMB
    return out.view(np.uint8).reshape(-1)


def int_limbs(value: int, k: int) -> np.ndarray:
    """One integer as ``k`` int64 limbs (two's complement, least significant first)."""
    return np.array([(value >> (LIMB_BITS * j)) & (_LIMB - 1) for j in range(k)],
                    dtype=np.uint64).view(np.int64)


def compare(lmb: np.ndarray, value: int) -> np.ndarray:
    """-1, 0 or 1 per row: each row of limbs compared with the integer ``value`` (which
    must fit the rows' limbs)."""
    k = lmb.shape[1]
    want = int_limbs(value, k)
    top = lmb[:, k - 1]
    out = np.where(top != want[k - 1], np.where(top < want[k - 1], -1, 1), 0)
    for j in range(k - 2, -1, -1):  # a few limbs, not rows
        low = lmb[:, j].view(np.uint64)
        v = want[j : j + 1].view(np.uint64)[0]
        out = np.where((out == 0) & (low != v), np.where(low < v, -1, 1), out)
    return out


def sort_keys(lmb: np.ndarray) -> list[np.ndarray]:
    """Keys for ``np.lexsort`` ordering rows of limbs by value (the last key, the signed
    top limb, is the primary one)."""
    k = lmb.shape[1]
    return [lmb[:, j].view(np.uint64) for j in range(k - 1)] + [lmb[:, k - 1]]


def beyond_digits(lmb: np.ndarray, precision: int) -> np.ndarray:
    """Rows whose value has more than ``precision`` decimal digits."""
    bound = 10**precision - 1
    k = lmb.shape[1]
    out = np.zeros(len(lmb), dtype=bool)
    low, high = value_range(k * LIMB_BITS)
    if bound <= high:
        out |= compare(lmb, bound) > 0
    if -bound >= low:
        out |= compare(lmb, -bound) < 0
    return out
