"""Builders of fixed-width arrays from Python values: null, boolean, integers, floats,
decimals, dates, timestamps, times, durations and intervals (Columnar spec, "Null Layout",
"Fixed-size Primitive Layout").  Temporal builders take the matching ``datetime`` objects,
numpy scalars, or plain ints as raw values in the type's unit (as pyarrow does).

>>> import quiver as qv
>>> qv.array([1, None], qv.time32("s")).to_pylist()
[datetime.time(0, 0, 1), None]
"""

from __future__ import annotations

import datetime as _dt
import itertools
import operator
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

import numpy as np

from .. import registry
from .. import types as t
from ..buffers import as_buffer, pack_bits
from ..errors import ArrowInvalid
from ..layout import storage_numpy_dtype
from .base import Array, make_array
from .build_common import (
    FLOAT_TYPES,
    INT_TYPES,
    NOT_INTS,
    bitmap_of,
    check_kinds,
    fill,
    first_bad,
    is_int_kind,
    kind_error,
    valid_mask,
    validity,
)
from .decimal import from_ints


@registry.implements("builder", t.NullType)
def _build_null(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    bad = first_bad(values, lambda v: False)
    if bad is not None:
        raise kind_error(bad, dtype)
    return make_array(dtype, len(values), (), (), len(values))


@registry.implements("builder", t.BoolType)
def _build_bool(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    bitmap, nulls, valid = validity(values)
    check_kinds(values, (bool, np.bool_), dtype)
    bits = np.array(fill(values, valid, False), dtype=bool)
    return make_array(dtype, len(values), (bitmap, pack_bits(bits)), (), nulls)


def _ints(values: list[Any], npdt: np.dtype, dtype: t.DataType,
          checked: bool = False) -> tuple[np.ndarray, Any]:
    """(integer array, valid mask or None) with range and kind checks."""
    n = len(values)
    has_float = False
    if not checked:
        kinds = set(map(type, values)) - {type(None)}
        for k in kinds:
            if not issubclass(k, (*INT_TYPES, *FLOAT_TYPES)) or issubclass(k, NOT_INTS):
                raise kind_error(next(v for v in values if type(v) is k), dtype)
        has_float = any(issubclass(k, FLOAT_TYPES) for k in kinds)
        if has_float and any(issubclass(k, INT_TYPES) for k in kinds):
            # ints beside floats: the integral floats become ints, so that no int is
            # rounded (or wrapped) through a double
            return _ints(_floats_as_ints(values, dtype), npdt, dtype, checked=True)
    wide = np.dtype(np.uint64) if npdt.kind == "u" and npdt.itemsize == 8 else np.dtype(np.int64)
    valid = None
    fraction = None
    try:
        if has_float:
            valid = valid_mask(values)
            raw = np.array(fill(values, valid if not valid.all() else None, 0),
                           dtype=np.float64)
            bad = ~np.isfinite(raw) | (raw != np.trunc(raw))
            if bad.any():
                fraction = raw[np.argmax(bad)]
                raise OverflowError
            if raw.size and (raw.min() < np.iinfo(wide).min or raw.max() > np.iinfo(wide).max):
                raise OverflowError
            raw = raw.astype(wide)
        else:
            try:
                raw = np.fromiter(values, wide, n)
            except TypeError:  # None among the values
                # one C-level pass gives both: None becomes NaN, ints below 2**53 are exact
                as_float = np.array(values, dtype=np.float64)
                valid = ~np.isnan(as_float)
                present = as_float[valid]
                if np.abs(present).max(initial=0) < 2.0**53 and (
                        wide.kind == "i" or present.min(initial=0) >= 0):
                    raw = np.where(valid, as_float, 0).astype(wide)
                else:
                    raw = np.fromiter(fill(values, valid, 0), wide, n)
    except (OverflowError, ValueError):
        if fraction is not None:
            raise ArrowInvalid(f"expected integral values for {dtype}, found {fraction}") from None
        raise ArrowInvalid(f"expected integers that fit {dtype}, found one out of range") from None
    if wide.kind == "u" and not has_float and _negative_numpy_int(values):
        # numpy converts a negative numpy integer to uint64 by wrapping it
        raise ArrowInvalid(f"expected integers that fit {dtype}, found one out of range")
    if valid is not None and valid.all():
        valid = None
    if raw.size and npdt != wide:
        info = np.iinfo(npdt)
        lo, hi = int(raw.min()), int(raw.max())
        if lo < info.min or hi > info.max:
            raise ArrowInvalid(
                f"expected integers that fit {dtype}, found {lo if lo < info.min else hi}"
            )
    return raw.astype(npdt, copy=False), valid


def _floats_as_ints(values: list[Any], dtype: t.DataType) -> list[Any]:
    """The values with each float an int, refusing a fraction, NaN or an infinity."""
    n = len(values)
    is_float = np.fromiter(map(isinstance, values, itertools.repeat(FLOAT_TYPES)), bool, n)
    floats = np.array(list(itertools.compress(values, is_float)), dtype=np.float64)
    bad = ~np.isfinite(floats) | (floats != np.trunc(floats))
    if bad.any():
        raise ArrowInvalid(f"expected integral values for {dtype}, found {floats[np.argmax(bad)]}")
    out = list(values)
    for i, f in zip(np.flatnonzero(is_float).tolist(), floats.tolist()):
        out[i] = int(f)
    return out


def _negative_numpy_int(values: list[Any]) -> bool:
    """Whether a numpy signed integer among the values is negative."""
    signed = tuple(k for k in set(map(type, values)) if issubclass(k, np.signedinteger))
    return bool(signed) and any(v < 0 for v in values if isinstance(v, signed))


@registry.implements("builder", t.IntegerType)
def _build_int(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    npdt = storage_numpy_dtype(dtype)
    raw, valid = _ints(values, npdt, dtype, checked)
    bitmap, nulls = bitmap_of(valid)
    return make_array(dtype, len(values), (bitmap, as_buffer(raw)), (), nulls)


@registry.implements("builder", t.FloatingPointType)
def _build_float(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    npdt = storage_numpy_dtype(dtype)
    if not checked:  # bools are 0.0 / 1.0, as pyarrow takes Python's (numpy's: as Python's)
        check_kinds(values, (*INT_TYPES, *FLOAT_TYPES, np.bool_), dtype,
                     forbid=(np.timedelta64,))
    try:
        raw = np.array(values, dtype=np.float64)  # None becomes NaN
    except OverflowError:
        raise ArrowInvalid(f"expected numbers that fit {dtype}, found one too large") from None
    valid = None
    if np.isnan(raw).any():
        valid = valid_mask(values)
    _check_exact_ints(values, raw, dtype)
    bitmap, nulls = bitmap_of(valid)
    return make_array(dtype, len(values), (bitmap, as_buffer(raw.astype(npdt, copy=False))), (),
                      nulls)


# the largest integer magnitude each float width holds exactly; pyarrow refuses Python ints
# past it (half floats: those past double's, as pyarrow converts them through double)
_EXACT_INT = {64: 2**53, 32: 2**24, 16: 2**53}


def _check_exact_ints(values: list[Any], raw: np.ndarray, dtype: t.DataType) -> None:
    """Refuse integers (Python or numpy) that ``dtype`` would round, as pyarrow does.  Only
    the slots whose double is at or past the limit are looked at exactly."""
    limit = _EXACT_INT.get(dtype.width)  # type: ignore[attr-defined]
    if limit is None:
        return
    for i in np.flatnonzero(np.abs(raw) >= limit).tolist():
        v = values[i]
        if is_int_kind(type(v)) and abs(int(v)) > limit:
            raise ArrowInvalid(
                f"expected integers that {dtype} holds exactly (-{limit} to {limit}), found "
                f"{int(v)} at row {i}"
            )


def _unscaled(v: Any, dtype: t.DecimalType) -> int:
    if is_int_kind(type(v)):
        if dtype.scale < 0:
            return _unscaled(Decimal(int(v)), dtype)
        unscaled = int(v) * 10**dtype.scale
        if abs(unscaled) >= 10**dtype.precision:
            raise ArrowInvalid(f"expected a value of precision {dtype.precision} for {dtype}, "
                               f"found {v}")
        return unscaled
    if not isinstance(v, Decimal):
        raise kind_error(v, dtype)
    if not v.is_finite():
        raise ArrowInvalid(f"expected a finite Decimal for {dtype}, found {v}")
    sign, digits, exp = v.as_tuple()
    mag = int("".join(map(str, digits))) if digits else 0
    shift = int(exp) + dtype.scale
    if shift >= 0:
        mag *= 10**shift
    else:
        mag, rem = divmod(mag, 10**-shift)
        if rem:
            raise ArrowInvalid(f"expected a Decimal with at most scale {dtype.scale}, found {v}")
    if mag >= 10**dtype.precision:
        raise ArrowInvalid(f"expected a Decimal of precision {dtype.precision}, found {v}")
    return -mag if sign else mag


@registry.implements("builder", t.DecimalType)
def _build_decimal(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    bitmap, nulls, _ = validity(values)
    ints = [0 if v is None else _unscaled(v, dtype) for v in values]
    raw = from_ints(ints, dtype.width)  # type: ignore[attr-defined]
    return make_array(dtype, len(values), (bitmap, as_buffer(raw)), (), nulls)


_NP_TEMPORAL = (np.datetime64, np.timedelta64)
_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_UTC = _EPOCH.replace(tzinfo=_dt.UTC)
_EPOCH_DATE = _EPOCH.date()
_EPOCH_ORDINAL = _EPOCH_DATE.toordinal()
_MS_PER_DAY = 86_400_000
_US = {"s": 1_000_000, "ms": 1_000, "us": 1}
# what a timedelta is floor-divided by for the ticks of a unit (for ns: microseconds; Python's
# objects have no nanoseconds, pandas values go by _pandas_ticks)
_TICK = {"s": _dt.timedelta(seconds=1), "ms": _dt.timedelta(milliseconds=1),
         "us": _dt.timedelta(microseconds=1), "ns": _dt.timedelta(microseconds=1)}
_INT64 = np.iinfo(np.int64)


def _range_error(dtype: t.DataType) -> ArrowInvalid:
    return ArrowInvalid(f"expected values that fit {dtype} (64-bit), found one out of range")


def _floor_ticks(deltas: Iterable[Any], n: int, dtype: t.DataType) -> np.ndarray:
    """The ticks of ``dtype``'s unit (microseconds for ns) in ``n`` timedelta-likes, floored
    as pyarrow does.  The division is exact (Python ints), so a value past int64 raises
    instead of wrapping."""
    tick = _TICK[dtype.unit]  # type: ignore[attr-defined]
    try:
        return np.fromiter(map(operator.floordiv, deltas, itertools.repeat(tick)), np.int64, n)
    except OverflowError:
        raise _range_error(dtype) from None


def _scaled(ticks: np.ndarray, factor: int, dtype: t.DataType) -> np.ndarray:
    """``ticks * factor``, refusing results past int64 (numpy would wrap them)."""
    if ((ticks < -(int(_INT64.min) // -factor)) | (ticks > int(_INT64.max) // factor)).any():
        raise _range_error(dtype)
    return ticks * factor


def _pandas_ticks(objs: list[Any], dtype: t.DataType, convert: Any) -> np.ndarray:
    """Ticks of ``dtype``'s unit of pandas Timestamps / Timedeltas from their exact ``value``
    (nanoseconds since the epoch, UTC for aware ones), floored to a coarser unit; those past
    the nanosecond range (of a coarser pandas unit, so without nanoseconds) go by
    ``convert``."""
    try:
        ns = np.fromiter(map(operator.attrgetter("value"), objs), np.int64, len(objs))
    except OverflowError:
        return convert(objs)
    return ns // _per("ns", dtype.unit)  # type: ignore[attr-defined]


def _micros_to(ticks: np.ndarray, dtype: t.DataType) -> np.ndarray:
    """The ticks of :func:`_floor_ticks` in ``dtype``'s unit: microseconds become
    nanoseconds (checked), other units are so already."""
    if dtype.unit == "ns":  # type: ignore[attr-defined]
        return _scaled(ticks, 1000, dtype)
    return ticks


def _numpy_ticks(objs: list[Any], dtype: t.DataType,
                 units: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(int64 ticks, NaT mask) of numpy datetime64 / timedelta64 scalars, converted through
    the numpy ``units`` in turn: exact, refused where a finer unit does not hold them (numpy
    would wrap).  To a coarser unit they are floored for a date (the day of the instant) and
    refused for a timestamp or duration when that drops ticks (a changed value; pyarrow
    refuses every other unit).  NaT is null, as in pyarrow."""
    dtypes = {v.dtype for v in objs}
    if len(dtypes) > 1:  # one unit at a time: numpy would wrap them into the finest one
        ticks = np.zeros(len(objs), np.int64)
        nat = np.zeros(len(objs), bool)
        for d in dtypes:
            mine = np.fromiter((v.dtype == d for v in objs), bool, len(objs))
            ticks[mine], nat[mine] = _numpy_ticks(
                list(itertools.compress(objs, mine)), dtype, units)
        return ticks, nat
    arr = np.array(objs)
    nat = np.isnat(arr)
    have = np.datetime_data(arr.dtype)[0]
    if have in ("Y", "M"):  # calendar units: datetime64 goes through days, timedelta64 cannot
        if arr.dtype.kind == "m" or (np.abs(arr.view(np.int64)[~nat]) >= 2**52).any():
            raise ArrowInvalid(f"expected numpy {arr.dtype.kind}8 scalars convertible to "
                               f"{dtype}, found {objs[int(np.argmax(~nat))]!r}")
        arr, have = arr.astype("M8[D]"), "D"
    ticks = np.where(nat, 0, arr.view(np.int64))
    for unit in units:
        if have not in (unit, "generic"):  # generic: NaT alone
            if np.timedelta64(1, have) > np.timedelta64(1, unit):
                ticks = _scaled(ticks, _per(unit, have), dtype)
            else:
                ticks, dropped = np.divmod(ticks, _per(have, unit))
                if not isinstance(dtype, t.DateType) and dropped.any():
                    bad = objs[int(np.argmax(dropped != 0))]
                    raise ArrowInvalid(f"expected numpy {arr.dtype.kind}8 scalars that {dtype} "
                                       f"holds exactly, found {bad!r}")
        have = unit
    return ticks, nat


def _per(fine: str, coarse: str) -> int:
    """How many ticks of the numpy unit ``fine`` make one of ``coarse``."""
    return int(np.timedelta64(1, coarse).astype(f"m8[{fine}]").astype(np.int64))


def _all_ints(values: list[Any]) -> bool:
    return all(is_int_kind(k) for k in set(map(type, values)) - {type(None)})


def _raw_temporal(values: list[Any], dtype: t.DataType, npdt: np.dtype,
                  valid: np.ndarray | None) -> np.ndarray | None:
    """Raw integers when the values are ints already (pyarrow accepts them), else None."""
    if _all_ints(values):
        raw, _ = _ints(fill(values, valid, 0), npdt, dtype)
        return raw
    return None


def _split_raw(values: list[Any], dtype: t.DataType, npdt: np.dtype, convert: Any,
               units: tuple[str, ...],
               exact: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    """(int64 raw values, NaT mask or None) of a list without None: plain ints are raw values
    in the type's unit (pyarrow accepts them beside objects), numpy scalars are converted by
    :func:`_numpy_ticks` through ``units``, with ``exact`` pandas values by
    :func:`_pandas_ticks`, the other objects by ``convert`` (a list -> int64 array function).
    """
    kinds = set(map(type, values))
    groups = [
        (tuple(k for k in kinds if is_int_kind(k)),
         lambda objs: (_ints(objs, npdt, dtype)[0], None)),
        (tuple(k for k in kinds if issubclass(k, _NP_TEMPORAL)),
         lambda objs: _numpy_ticks(objs, dtype, units)),
        (tuple(k for k in kinds if exact and hasattr(k, "asm8")),  # pandas' scalars
         lambda objs: (_pandas_ticks(objs, dtype, convert), None)),
    ]
    groups = [(ks, to_raw) for ks, to_raw in groups if ks]
    if not groups:
        return convert(values), None
    n = len(values)
    raw = np.zeros(n, np.int64)
    rest = np.ones(n, dtype=bool)
    nat = None
    for ks, to_raw in groups:
        mine = np.fromiter(map(isinstance, values, itertools.repeat(ks)), bool, n)
        raw[mine], nat_mine = to_raw(list(itertools.compress(values, mine)))
        if nat_mine is not None and nat_mine.any():
            nat = np.zeros(n, dtype=bool) if nat is None else nat
            nat[mine] = nat_mine
        rest &= ~mine
    if rest.any():
        raw[rest] = convert(list(itertools.compress(values, rest)))
    return raw, nat


def _date_raw(values: list[Any], valid: np.ndarray | None, dtype: t.DataType,
              npdt: np.dtype) -> tuple[np.ndarray, np.ndarray | None]:
    ms = dtype.unit == "ms"  # type: ignore[attr-defined]

    def convert(objs: list[Any]) -> np.ndarray:
        # the date (of a datetime: its own, local one) as days since the epoch
        days = np.fromiter(map(_dt.date.toordinal, objs), np.int64, len(objs)) - _EPOCH_ORDINAL
        return days * _MS_PER_DAY if ms else days

    raw, nat = _split_raw(fill(values, valid, _EPOCH_DATE), dtype, npdt, convert,
                          ("D", "ms") if ms else ("D",))
    if not ms:  # date32: numpy scalars may be past int32
        raw, _ = _ints(raw, npdt, dtype, checked=True)
    return raw, nat


def _since_epoch(v: Any) -> Any:
    """The timedelta from the epoch to a datetime (aware ones: to the UTC epoch) or date."""
    if isinstance(v, _dt.datetime):
        return v - (_EPOCH if v.tzinfo is None else _EPOCH_UTC)
    return v - _EPOCH_DATE


def _timestamp_raw(values: list[Any], valid: np.ndarray | None, dtype: t.DataType,
                   npdt: np.dtype) -> tuple[np.ndarray, np.ndarray | None]:
    def convert(objs: list[Any]) -> np.ndarray:
        n = len(objs)
        try:  # the common case, naive datetimes, at C speed
            ticks = _floor_ticks(map(operator.sub, objs, itertools.repeat(_EPOCH)), n, dtype)
        except TypeError:  # aware datetimes or dates among them
            ticks = _floor_ticks(map(_since_epoch, objs), n, dtype)
        return _micros_to(ticks, dtype)

    return _split_raw(fill(values, valid, _EPOCH), dtype, npdt, convert,
                      (dtype.unit,), exact=True)  # type: ignore[attr-defined]


def _time_raw(values: list[Any], valid: np.ndarray | None, dtype: t.DataType,
              npdt: np.dtype) -> tuple[np.ndarray, np.ndarray | None]:
    unit = dtype.unit  # type: ignore[attr-defined]

    def convert(objs: list[Any]) -> np.ndarray:
        us = np.array(
            [((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
             for v in objs],
            dtype=np.int64,
        )
        return us * 1000 if unit == "ns" else us // _US[unit]

    return _split_raw(fill(values, valid, _dt.time(0)), dtype, npdt, convert, (unit,))


def _duration_raw(values: list[Any], valid: np.ndarray | None, dtype: t.DataType,
                  npdt: np.dtype) -> tuple[np.ndarray, np.ndarray | None]:
    def convert(objs: list[Any]) -> np.ndarray:
        return _micros_to(_floor_ticks(objs, len(objs), dtype), dtype)

    return _split_raw(fill(values, valid, _dt.timedelta(0)), dtype, npdt, convert,
                      (dtype.unit,), exact=True)  # type: ignore[attr-defined]


# per temporal type class: the Python kinds it takes and the conversion of such objects
# (None already replaced where ``valid`` is False) to raw integers in the type's unit, with
# the NaT mask of numpy scalars (or None)
_TEMPORAL: dict[type, tuple[tuple[type, ...], Any]] = {
    t.DateType: ((_dt.date, np.datetime64, *INT_TYPES), _date_raw),
    t.TimestampType: ((_dt.date, np.datetime64, *INT_TYPES), _timestamp_raw),
    t.TimeType: ((_dt.time, *INT_TYPES), _time_raw),
    t.DurationType: ((_dt.timedelta, np.timedelta64, *INT_TYPES), _duration_raw),
}


@registry.implements("builder", *_TEMPORAL)
def _build_temporal(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    """Dates, timestamps, times and durations: plain ints are raw values in the type's
    unit (as pyarrow takes them), other values are converted by the type's entry in
    :data:`_TEMPORAL`; numpy NaT scalars are nulls (as in pyarrow), pandas' NaT is refused
    (``array(..., from_pandas=True)`` makes it null)."""
    bitmap, nulls, valid = validity(values)
    npdt = storage_numpy_dtype(dtype)
    raw = _raw_temporal(values, dtype, npdt, valid)
    if raw is None:
        kinds, objects_to_raw = _TEMPORAL[dtype.__class__]
        # bools are ints, np.timedelta64 too (to numpy): only durations take the latter
        forbid = (bool, np.bool_) if np.timedelta64 in kinds else NOT_INTS
        check_kinds(values, kinds, dtype, forbid=forbid)
        raw, nat = objects_to_raw(values, valid, dtype, npdt)
        if nat is not None:
            valid = ~nat if valid is None else valid & ~nat
            bitmap, nulls = bitmap_of(valid)
    return make_array(dtype, len(values), (bitmap, as_buffer(raw.astype(npdt, copy=False))), (),
                      nulls)


@registry.implements("builder", t.IntervalType)
def _build_interval(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    bitmap, nulls, valid = validity(values)
    unit = dtype.unit  # type: ignore[attr-defined]
    try:
        if unit == "year_month":
            raw, _ = _ints(fill(values, valid, 0), np.dtype("<i4"), dtype)
        elif unit == "day_time":
            raw = np.array([tuple(v) for v in fill(values, valid, (0, 0))], dtype="<i4")
            raw = raw.reshape(len(values), 2)
        else:
            rec = np.dtype([("m", "<i4"), ("d", "<i4"), ("n", "<i8")])
            raw = np.array([tuple(v) for v in fill(values, valid, (0, 0, 0))], dtype=rec)
    except (TypeError, ValueError, OverflowError):
        raise ArrowInvalid(
            f"expected {dtype} values as tuples of integers in range, found {values[:3]!r}..."
        ) from None
    return make_array(dtype, len(values), (bitmap, as_buffer(raw)), (), nulls)
