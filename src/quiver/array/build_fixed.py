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
    _FLOAT_TYPES,
    _INT_TYPES,
    _bitmap,
    _check_kinds,
    _fill,
    _first_bad,
    _kind_error,
    _valid_mask,
    _validity,
)


@registry.implements("builder", t.NullType)
def _build_null(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    bad = _first_bad(values, lambda v: False)
    if bad is not None:
        raise _kind_error(bad, dtype)
    return make_array(dtype, len(values), (), (), len(values))


@registry.implements("builder", t.BoolType)
def _build_bool(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    bitmap, nulls, valid = _validity(values)
    _check_kinds(values, (bool, np.bool_), dtype)
    bits = np.array(_fill(values, valid, False), dtype=bool)
    return make_array(dtype, len(values), (bitmap, pack_bits(bits)), (), nulls)


def _ints(values: list[Any], npdt: np.dtype, dtype: t.DataType,
          checked: bool = False) -> tuple[np.ndarray, Any]:
    """(integer array, valid mask or None) with range and kind checks."""
    n = len(values)
    has_float = False
    if not checked:
        kinds = set(map(type, values)) - {type(None)}
        for k in kinds:
            if not issubclass(k, (*_INT_TYPES, *_FLOAT_TYPES)) or issubclass(k, (bool, np.bool_)):
                raise _kind_error(next(v for v in values if type(v) is k), dtype)
        has_float = any(issubclass(k, _FLOAT_TYPES) for k in kinds)
    wide = np.dtype(np.uint64) if npdt.kind == "u" and npdt.itemsize == 8 else np.dtype(np.int64)
    valid = None
    fraction = None
    try:
        if has_float:
            valid = _valid_mask(values)
            raw = np.array(_fill(values, valid if not valid.all() else None, 0),
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
                if np.abs(as_float[valid]).max(initial=0) < 2.0**53:
                    raw = np.where(valid, as_float, 0).astype(wide)
                else:
                    raw = np.fromiter(_fill(values, valid, 0), wide, n)
    except (OverflowError, ValueError):
        if fraction is not None:
            raise ArrowInvalid(f"expected integral values for {dtype}, found {fraction}") from None
        raise ArrowInvalid(f"expected integers that fit {dtype}, found one out of range") from None
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


@registry.implements("builder", t.IntegerType)
def _build_int(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    npdt = storage_numpy_dtype(dtype)
    raw, valid = _ints(values, npdt, dtype, checked)
    bitmap, nulls = _bitmap(valid)
    return make_array(dtype, len(values), (bitmap, as_buffer(raw)), (), nulls)


@registry.implements("builder", t.FloatingPointType)
def _build_float(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    npdt = storage_numpy_dtype(dtype)
    if not checked:
        _check_kinds(values, (*_INT_TYPES, *_FLOAT_TYPES), dtype, forbid=(bool, np.bool_))
    try:
        raw = np.array(values, dtype=np.float64)  # None becomes NaN
    except OverflowError:
        raise ArrowInvalid(f"expected numbers that fit {dtype}, found one too large") from None
    valid = None
    if np.isnan(raw).any():
        valid = _valid_mask(values)
    bitmap, nulls = _bitmap(valid)
    return make_array(dtype, len(values), (bitmap, as_buffer(raw.astype(npdt, copy=False))), (),
                      nulls)


def _unscaled(v: Any, dtype: t.DecimalType) -> int:
    if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
        return int(v) * 10**dtype.scale if dtype.scale >= 0 else _unscaled(Decimal(int(v)), dtype)
    if not isinstance(v, Decimal):
        raise _kind_error(v, dtype)
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
    bitmap, nulls, _ = _validity(values)
    ints = [0 if v is None else _unscaled(v, dtype) for v in values]
    width = dtype.width  # type: ignore[attr-defined]
    if width in (32, 64):
        raw = np.array(ints, dtype=f"<i{width // 8}")
    else:
        mask = (1 << 64) - 1
        words = [np.array([(x >> s) & mask for x in ints], dtype=np.uint64)
                 for s in range(0, width, 64)]
        raw = np.stack(words, axis=1) if ints else np.zeros((0, width // 64), np.uint64)
    return make_array(dtype, len(values), (bitmap, as_buffer(np.ascontiguousarray(raw))), (),
                      nulls)


_US = {"s": 1_000_000, "ms": 1_000, "us": 1}


def _from_micros(us: np.ndarray, unit: str) -> np.ndarray:
    if unit == "ns":
        lim = np.iinfo(np.int64).max // 1000
        if us.size and (us.max() > lim or us.min() < -lim):
            raise ArrowInvalid("expected values within the nanosecond range, found one outside")
        return us * 1000
    return us // _US[unit]


def _all_ints(values: list[Any]) -> bool:
    return all(
        issubclass(k, _INT_TYPES) and not issubclass(k, (bool, np.bool_))
        for k in set(map(type, values)) - {type(None)}
    )


def _raw_temporal(values: list[Any], dtype: t.DataType, npdt: np.dtype,
                  valid: np.ndarray | None) -> np.ndarray | None:
    """Raw integers when the values are ints already (pyarrow accepts them), else None."""
    if _all_ints(values):
        raw, _ = _ints(_fill(values, valid, 0), npdt, dtype)
        return raw
    return None


def _with_raw_ints(values: list[Any], dtype: t.DataType, npdt: np.dtype, placeholder: Any,
                   convert: Any) -> np.ndarray:
    """Temporal objects converted by ``convert`` (a list -> int array function), with any
    plain ints among them taken as raw values (pyarrow accepts both in one list)."""
    is_int = np.fromiter(
        (isinstance(v, _INT_TYPES) and not isinstance(v, (bool, np.bool_)) for v in values),
        dtype=bool, count=len(values),
    )
    if not is_int.any():
        return convert(values)
    objs = [placeholder if i else v for v, i in zip(values, is_int.tolist())]
    raw = convert(objs).astype(npdt)
    ints, _ = _ints([v for v, i in zip(values, is_int.tolist()) if i], npdt, dtype)
    raw[is_int] = ints
    return raw


def _date_raw(values: list[Any], valid: np.ndarray | None, dtype: t.DataType,
              npdt: np.dtype) -> np.ndarray:
    filled = [v.date() if isinstance(v, _dt.datetime) else v
              for v in _fill(values, valid, _dt.date(1970, 1, 1))]
    days = np.array(filled, dtype="M8[D]").view(np.int64)
    if dtype.unit == "ms":  # type: ignore[attr-defined]
        return days * 86_400_000
    raw, _ = _ints(days, npdt, dtype)
    return raw


def _timestamp_raw(values: list[Any], valid: np.ndarray | None, dtype: t.DataType,
                   npdt: np.dtype) -> np.ndarray:
    utc = _dt.UTC

    def convert(objs: list[Any]) -> np.ndarray:
        naive = [
            v.astimezone(utc).replace(tzinfo=None)
            if isinstance(v, _dt.datetime) and v.tzinfo is not None else v
            for v in objs
        ]
        us = np.array(naive, dtype="M8[us]").view(np.int64)
        return _from_micros(us, dtype.unit)  # type: ignore[attr-defined]

    epoch = _dt.datetime(1970, 1, 1)
    return _with_raw_ints(_fill(values, valid, epoch), dtype, npdt, epoch, convert)


def _time_raw(values: list[Any], valid: np.ndarray | None, dtype: t.DataType,
              npdt: np.dtype) -> np.ndarray:
    def convert(objs: list[Any]) -> np.ndarray:
        us = np.array(
            [((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
             for v in objs],
            dtype=np.int64,
        )
        return _from_micros(us, dtype.unit).astype(npdt)  # type: ignore[attr-defined]

    midnight = _dt.time(0)
    return _with_raw_ints(_fill(values, valid, midnight), dtype, npdt, midnight, convert)


def _duration_raw(values: list[Any], valid: np.ndarray | None, dtype: t.DataType,
                  npdt: np.dtype) -> np.ndarray:
    def convert(objs: list[Any]) -> np.ndarray:
        us = np.array(objs, dtype="m8[us]").view(np.int64)
        return _from_micros(us, dtype.unit)  # type: ignore[attr-defined]

    zero = _dt.timedelta(0)
    return _with_raw_ints(_fill(values, valid, zero), dtype, npdt, zero, convert)


# per temporal type class: the Python kinds it takes and the conversion of such objects
# (None already replaced where ``valid`` is False) to raw integers in the type's unit
_TEMPORAL: dict[type, tuple[tuple[type, ...], Any]] = {
    t.DateType: ((_dt.date, np.datetime64), _date_raw),
    t.TimestampType: ((_dt.date, np.datetime64, *_INT_TYPES), _timestamp_raw),
    t.TimeType: ((_dt.time, *_INT_TYPES), _time_raw),
    t.DurationType: ((_dt.timedelta, np.timedelta64, *_INT_TYPES), _duration_raw),
}


@registry.implements("builder", *_TEMPORAL)
def _build_temporal(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    """Dates, timestamps, times and durations: plain ints are raw values in the type's
    unit (as pyarrow takes them), other values are converted by the type's entry in
    :data:`_TEMPORAL`."""
    bitmap, nulls, valid = _validity(values)
    npdt = storage_numpy_dtype(dtype)
    raw = _raw_temporal(values, dtype, npdt, valid)
    if raw is None:
        kinds, objects_to_raw = _TEMPORAL[dtype.__class__]
        _check_kinds(values, kinds, dtype, forbid=(bool, np.bool_))  # bools are ints
        raw = objects_to_raw(values, valid, dtype, npdt)
    return make_array(dtype, len(values), (bitmap, as_buffer(raw.astype(npdt, copy=False))), (),
                      nulls)


@registry.implements("builder", t.IntervalType)
def _build_interval(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    bitmap, nulls, valid = _validity(values)
    unit = dtype.unit  # type: ignore[attr-defined]
    try:
        if unit == "year_month":
            raw, _ = _ints(_fill(values, valid, 0), np.dtype("<i4"), dtype)
        elif unit == "day_time":
            raw = np.array([tuple(v) for v in _fill(values, valid, (0, 0))], dtype="<i4")
            raw = raw.reshape(len(values), 2)
        else:
            rec = np.dtype([("m", "<i4"), ("d", "<i4"), ("n", "<i8")])
            raw = np.array([tuple(v) for v in _fill(values, valid, (0, 0, 0))], dtype=rec)
    except (TypeError, ValueError, OverflowError):
        raise ArrowInvalid(
            f"expected {dtype} values as tuples of integers in range, found {values[:3]!r}..."
        ) from None
    return make_array(dtype, len(values), (bitmap, as_buffer(raw)), (), nulls)
