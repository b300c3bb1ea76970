"""Checked conversion of numeric and temporal numpy arrays to the storage of an explicit
Arrow type, for :func:`quiver.array.build.from_numpy` (pyarrow's ``pa.array(ndarray,
type=...)`` rules).

Safe (the default) means a conversion that would change a value raises: an integer that does
not fit the target integer type, an integer past the range a float holds exactly (2**53 for
double, 2**24 for float; half floats as pyarrow: through float or double), a float with a
fraction,
not finite or out of range for an integer type, and a datetime64 / timedelta64 whose unit
conversion would overflow int64 or drop ticks.  ``safe=False`` wraps and truncates (toward
zero) as pyarrow's unsafe conversion does.  Converting to a narrower float rounds, and
datetime64 to a date drops the time of day, both as in pyarrow.

>>> import numpy as np
>>> from quiver import types as t
>>> convert_numbers(np.array([2**63], "u8"), None, t.int64(), False).tolist()
[-9223372036854775808]
>>> convert_numbers(np.array([2**63], "u8"), None, t.int64(), True)
Traceback (most recent call last):
...
quiver.errors.ArrowInvalid: expected values that fit int64, found 9223372036854775808 at row 0 \
(safe=False wraps it)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import types as t
from ..errors import ArrowInvalid
from ..layout import storage_numpy_dtype

__all__ = ["convert_numbers", "convert_ticks", "native"]

# the bits of the largest integer magnitude pyarrow lets each float width take: the ones
# it holds exactly for float and double; half floats go through double (2**53) from 64-bit
# integers, through float (2**24) from narrower ones, rounding
_EXACT_BITS = {64: 53, 32: 24, 16: 53}


def native(arr: np.ndarray) -> np.ndarray:
    """``arr`` in the machine's byte order (a copy only when it is swapped)."""
    if arr.dtype.isnative or arr.dtype.byteorder == "|":
        return arr
    return arr.astype(arr.dtype.newbyteorder("="))


def _first(bad: np.ndarray, valid: np.ndarray | None) -> int | None:
    if valid is not None:
        bad = bad & valid
    hits = np.flatnonzero(bad)
    return int(hits[0]) if len(hits) else None


def raise_first(bad: np.ndarray, valid: np.ndarray | None, message: Callable[[int], str]
                ) -> None:
    """Raise ArrowInvalid(``message(row)``) for the first row where ``bad`` holds and
    ``valid`` (None: every row) too; return when there is none."""
    row = _first(bad, valid)
    if row is not None:
        raise ArrowInvalid(message(row))


def check_numbers(arr: np.ndarray, valid: np.ndarray | None, target: t.DataType,
                  npdt: np.dtype, float_bits: int) -> None:
    """The safe-conversion checks of numbers ``arr`` (bool, integer or float) to the numpy
    storage ``npdt`` of ``target``: a float must be a whole number in the integer's range,
    an integer must fit the target integer, and within ``float_bits`` bits of magnitude
    for a float target (the integers it holds exactly).  Null slots (``valid`` False)
    are not checked; the first bad row raises ArrowInvalid naming it."""
    kind = arr.dtype.kind
    if npdt.kind in "iu" and kind == "f":
        info = np.iinfo(npdt)
        wide = arr.astype(np.float64)  # (the bounds as half floats would be infinite)
        with np.errstate(invalid="ignore"):
            whole = np.isfinite(wide) & (wide == np.trunc(wide))
            beyond = (wide < info.min) | (wide >= float(info.max) + 1) | ~np.isfinite(wide)
        raise_first(beyond, valid, lambda r: f"expected values that fit {target}, found "
                    f"{float(arr[r])} at row {r}")
        raise_first(~whole, valid, lambda r: f"expected whole numbers (integral values) for "
                    f"{target}, found {float(arr[r])} at row {r} (safe=False truncates it)")
    elif npdt.kind in "iu" and kind in "iu":
        have, want = np.iinfo(arr.dtype), np.iinfo(npdt)
        if have.min < want.min or have.max > want.max:
            # compare in the source's own dtype: the bounds it cannot hold are no limit
            bad = np.zeros(len(arr), dtype=bool)
            if have.min < want.min:
                bad |= arr < arr.dtype.type(max(want.min, have.min))
            if have.max > want.max:
                bad |= arr > arr.dtype.type(min(want.max, have.max))
            raise_first(bad, valid, lambda r: f"expected values that fit {target}, found "
                        f"{int(arr[r])} at row {r} (safe=False wraps it)")
    elif npdt.kind == "f" and kind in "iu" and arr.dtype.itemsize * 8 > float_bits:
        limit = 2**float_bits
        over = arr > arr.dtype.type(min(limit, int(np.iinfo(arr.dtype).max)))
        if kind == "i":
            over |= arr < arr.dtype.type(-limit)
        raise_first(over, valid, lambda r: f"expected integers that {target} holds exactly "
                    f"(-{limit} to {limit}), found {int(arr[r])} at row {r}")


def convert_numbers(arr: np.ndarray, valid: np.ndarray | None, target: t.DataType,
                    safe: bool) -> np.ndarray:
    """``arr`` (bool, integer or float, native order) as the numpy storage of ``target``
    (an integer, floating point or bool type), checked unless ``safe`` is False; null slots
    (``valid`` False) are not checked."""
    st = t.storage_of(target)
    if isinstance(st, t.BoolType):
        return arr != 0 if arr.dtype.kind != "b" else arr
    npdt = storage_numpy_dtype(st)
    if npdt is None or arr.dtype == npdt:
        return arr
    if safe:
        bits = _EXACT_BITS.get(npdt.itemsize * 8, 64)  # (64: no float target)
        if npdt.kind == "f" and npdt.itemsize == 2 and arr.dtype.itemsize <= 4:
            bits = 24  # (pyarrow takes 32-bit integers to half floats through float)
        check_numbers(arr, valid, target, npdt, bits)
    with np.errstate(invalid="ignore", over="ignore"):
        return arr.astype(npdt)


def _per(fine: str, coarse: str) -> int:
    """How many ticks of the numpy unit ``fine`` make one of ``coarse``."""
    return int(np.timedelta64(1, coarse).astype(f"m8[{fine}]").astype(np.int64))


def _is_coarser(unit: str, than: str) -> bool:
    return bool(np.timedelta64(1, unit) > np.timedelta64(1, than))


def convert_ticks(ticks: np.ndarray, have: str, want: str, valid: np.ndarray | None,
                  source: str, target: t.DataType, safe: bool) -> np.ndarray:
    """int64 ``ticks`` of the numpy unit ``have`` in the unit ``want``: a finer unit must
    hold them (int64), a coarser one must not drop ticks, unless ``safe`` is False (then
    they wrap, or are truncated toward zero, as pyarrow's unsafe casts do).  ``source``
    names the numpy dtype in errors."""
    if have == want:
        return ticks
    if _is_coarser(have, want):
        factor = _per(want, have)
        if safe:
            limit = np.iinfo(np.int64).max // factor
            raise_first((ticks > limit) | (ticks < -limit), valid, lambda r: (
                f"expected {source} values that fit {target} (64-bit), found {int(ticks[r])} "
                f"at row {r}: it would be out of bounds in unit {want!r} (safe=False wraps it)"))
        with np.errstate(over="ignore"):
            return ticks * np.int64(factor)
    factor = _per(have, want)
    rem = ticks % factor
    if safe:
        raise_first(rem != 0, valid, lambda r: (
            f"expected {source} values that convert to {target} without losing data, found "
            f"{int(ticks[r])} at row {r} (safe=False truncates it)"))
    quot = ticks // factor
    return quot + ((rem != 0) & (ticks < 0))  # toward zero, as pyarrow truncates
