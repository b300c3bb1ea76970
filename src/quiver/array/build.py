"""Building arrays from Python values and numpy arrays: ``quiver.array(values, type=None)``
(Columnar spec, "Physical Memory Layout": the builders produce offset-0 arrays with
canonical buffers).

Type inference follows pyarrow: int -> int64, float (or ints mixed with floats) -> double,
str -> string, bytes -> binary, bool -> bool, None only -> null, Decimal -> decimal128 of the
smallest precision/scale holding every value (decimal256 past 38 digits), date -> date32,
datetime -> timestamp[us] (with the time zone of tz-aware values), time -> time64[us],
timedelta -> duration[us], list/tuple -> list_, dict -> struct, uuid.UUID -> arrow.uuid.

With an explicit type every Arrow type can be built.  Dictionary types get their dictionary
from the distinct values in first-seen order; run-end encoded types get one run per stretch
of equal values; maps take lists of (key, value) pairs or dicts; **unions put each value in
the first child whose type accepts it** (None goes to the first child, as a null there).

numpy input is zero-copy for fixed-width numeric and datetime64/timedelta64 arrays (NaT
becomes null, which needs a validity bitmap but still no copy of the values); bool arrays
are bit-packed; masked arrays and ``mask=`` give validity.

>>> import quiver as qv
>>> qv.array([1, 2.5, None]).type
DataType(double)
>>> qv.array([{"x": [1, 2]}, None]).to_pylist()
[{'x': [1, 2]}, None]
>>> u = qv.sparse_union([qv.field("i", qv.int64()), qv.field("s", qv.string())])
>>> qv.array([1, "a"], u).to_pylist()
[1, 'a']
"""

from __future__ import annotations

import datetime as _dt
import itertools
import operator
import uuid as _uuid
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

import numpy as np

from .. import registry
from .. import types as t
from ..buffers import as_buffer, pack_bits
from ..errors import ArrowError, ArrowInvalid, ArrowTypeError, NotSupported
from ..layout import storage_numpy_dtype
from .base import Array, make_array

# ------------------------------------------------------------------------------------
# helpers


def _valid_mask(values: list[Any]) -> np.ndarray:
    """True where a value is not None (one C-level pass)."""
    return np.fromiter(map(operator.is_not, values, itertools.repeat(None)), dtype=bool,
                       count=len(values))


def _validity(values: list[Any]) -> tuple[np.ndarray | None, int, np.ndarray | None]:
    """(bitmap or None, null_count, bool mask of valid slots or None)."""
    n = len(values)
    if n == 0:
        return None, 0, None
    valid = _valid_mask(values)
    nulls = n - int(np.count_nonzero(valid))
    if nulls == 0:
        return None, 0, None
    return pack_bits(valid), nulls, valid


def _bitmap(valid: np.ndarray | None) -> tuple[np.ndarray | None, int]:
    if valid is None:
        return None, 0
    nulls = int(len(valid) - np.count_nonzero(valid))
    return (pack_bits(valid), nulls) if nulls else (None, 0)


def _fill(values: list[Any], valid: np.ndarray | None, filler: Any) -> list[Any]:
    if valid is None:
        return values
    return [filler if v is None else v for v in values]


def _kind_error(value: Any, dtype: t.DataType) -> ArrowTypeError:
    return ArrowTypeError(
        f"expected a value convertible to {dtype}, found {value!r} of type {type(value).__name__}"
    )


def _first_bad(values: list[Any], ok: Any) -> Any:
    for v in values:
        if v is not None and not ok(v):
            return v
    return None

_INT_TYPES = (int, np.integer)
_FLOAT_TYPES = (float, np.floating)


def _check_kinds(values: list[Any], allowed: tuple[type, ...], dtype: t.DataType,
                 forbid: tuple[type, ...] = ()) -> None:
    kinds = set(map(type, values))
    kinds.discard(type(None))
    for k in kinds:
        if not issubclass(k, allowed) or (forbid and issubclass(k, forbid)):
            raise _kind_error(next(v for v in values if type(v) is k), dtype)


# ------------------------------------------------------------------------------------
# type inference


def _tz_name(tz: _dt.tzinfo) -> str:
    key = getattr(tz, "key", None)
    if isinstance(key, str):
        return key
    if tz is _dt.UTC:
        return "UTC"
    off = tz.utcoffset(None)
    if off is None:
        raise ArrowInvalid(f"expected a time zone with a fixed offset or a name, found {tz!r}")
    total = int(off.total_seconds()) // 60
    sign = "-" if total < 0 else "+"
    h, m = divmod(abs(total), 60)
    return f"{sign}{h:02d}:{m:02d}"


def _decimal_shape(d: Decimal) -> tuple[int, int]:
    """(integer digits, scale) of one Decimal."""
    if not d.is_finite():
        raise ArrowInvalid(f"expected a finite Decimal, found {d}")
    _, digits, exp = d.as_tuple()
    exp = int(exp)
    if exp >= 0:
        return len(digits) + exp, 0
    return max(len(digits) + exp, 0), -exp


def infer_type(values: Iterable[Any]) -> t.DataType:
    """The type pyarrow would infer for a list of Python values.

    >>> import quiver as qv
    >>> str(infer_type([[1, None], [2]])), str(infer_type([{"a": "x"}]))
    ('list<item: int64>', 'struct<a: string>')
    """
    values = values if isinstance(values, list) else list(values)
    kinds = set(map(type, values))
    kinds.discard(type(None))
    if not kinds:
        return t.null()
    if all(issubclass(k, (bool, np.bool_)) for k in kinds):
        return t.bool_()
    if all(issubclass(k, _INT_TYPES) and not issubclass(k, (bool, np.bool_)) for k in kinds):
        npk = [k for k in kinds if issubclass(k, np.integer)]
        if npk and len(kinds) == 1:
            return t.IntegerType(np.dtype(npk[0]).itemsize * 8,
                                 np.dtype(npk[0]).kind == "i")
        return t.int64()
    if all(
        issubclass(k, (*_INT_TYPES, *_FLOAT_TYPES)) and not issubclass(k, (bool, np.bool_))
        for k in kinds
    ):
        if kinds == {np.float32}:
            return t.float32()
        return t.float64()
    if all(issubclass(k, str) for k in kinds):
        return t.string()
    if all(issubclass(k, (bytes, bytearray)) for k in kinds):
        return t.binary()
    if all(issubclass(k, Decimal) for k in kinds):
        shapes = [_decimal_shape(v) for v in values if v is not None]
        scale = max(s for _, s in shapes)
        precision = max(max(i for i, _ in shapes) + scale, 1)
        if precision > 76:
            raise ArrowInvalid(f"expected Decimals of at most 76 digits, found {precision}")
        return t.decimal128(precision, scale) if precision <= 38 else t.decimal256(
            precision, scale
        )
    if all(issubclass(k, _dt.datetime) for k in kinds):
        tz = next((v.tzinfo for v in values if v is not None and v.tzinfo is not None), None)
        return t.timestamp("us", None if tz is None else _tz_name(tz))
    if all(issubclass(k, _dt.date) for k in kinds):
        return t.date32()
    if all(issubclass(k, _dt.time) for k in kinds):
        return t.time64("us")
    if all(issubclass(k, _dt.timedelta) for k in kinds):
        return t.duration("us")
    if all(issubclass(k, _uuid.UUID) for k in kinds):
        return t.uuid()
    if all(_is_mdn(k) for k in kinds):
        return t.month_day_nano_interval()
    if all(issubclass(k, (list, tuple, np.ndarray)) and not _is_mdn(k) for k in kinds):
        flat = list(itertools.chain.from_iterable(v for v in values if v is not None))
        return t.list_(infer_type(flat))
    if all(issubclass(k, Mapping) for k in kinds):
        names: dict[str, None] = {}
        for v in values:
            if v is not None:
                names.update(dict.fromkeys(v))
        return t.struct(
            [t.field(str(n), infer_type([None if v is None else v.get(n) for v in values]))
             for n in names]
        )
    names_found = sorted(k.__name__ for k in kinds)
    raise ArrowInvalid(
        f"expected values of one kind to infer a type, found {', '.join(names_found)}"
    )


def _is_mdn(k: type) -> bool:
    return (issubclass(k, tuple) and getattr(k, "_fields", None) == (
        "months", "days", "nanoseconds"
    )) or k.__name__ == "MonthDayNano"


# ------------------------------------------------------------------------------------
# the entry point


def array(
    values: Any,
    type: t.DataType | None = None,
    *,
    mask: Any = None,
    from_pandas: bool = False,
) -> Array:
    """An Arrow array from Python values or a numpy array (pyarrow's ``pa.array``).

    ``type`` is inferred when None.  ``mask`` (True = null) adds nulls; ``from_pandas``
    makes float NaN null.  See the module docstring for the rules.

    >>> import quiver as qv
    >>> qv.array([1, None, 3], qv.int8()).to_pylist()
    [1, None, 3]
    """
    if type is not None and not isinstance(type, t.DataType):
        raise ArrowTypeError(f"expected a DataType or None, found {type!r}")
    if isinstance(values, Array):
        if type is None or values.type == type:
            return values
        raise NotSupported(
            f"casting arrays is not supported: found {values.type}, asked for {type}; "
            "build from values with the wanted type instead"
        )
    if isinstance(values, np.ndarray):
        return from_numpy(values, type, mask=mask, from_pandas=from_pandas)
    if hasattr(values, "__array__") and not isinstance(values, (list, tuple)):
        # other array-likes: go through numpy
        return from_numpy(np.asarray(values), type, mask=mask, from_pandas=from_pandas)
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise ArrowTypeError(
            f"expected a sequence or numpy array of values, found {values.__class__.__name__}"
        )
    values = values if isinstance(values, list) else list(values)
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        if m.shape != (len(values),):
            raise ArrowInvalid(f"expected a mask of length {len(values)}, found {m.shape}")
        values = [None if mm else v for v, mm in zip(values, m.tolist())]
    if from_pandas:
        values = [None if isinstance(v, float) and v != v else v for v in values]
    if type is None:
        first = next((v for v in values if v is not None), None)
        if first.__class__ is str:  # common case: skip inference, the join checks kinds
            try:
                return _build_binary(values, t.string(), strict=True)
            except _MixedKinds:
                pass
        return build(values, infer_type(values), checked=True)
    return build(values, type)


def build(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    """An offset-0 array of ``dtype`` from a list of Python values (None = null).

    ``checked`` says the Python types of the values are known to suit ``dtype`` (type
    inference looked at every one), so leaf builders may skip their own kind check.
    """
    builder = _BUILDERS.get(dtype.__class__)
    if builder is None:
        raise NotSupported(f"building arrays of {dtype} from Python values is not supported: "
                           f"DataType {dtype.__class__.__name__} has no builder")
    return builder(values, dtype, checked)


# ------------------------------------------------------------------------------------
# fixed width


def _build_null(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    bad = _first_bad(values, lambda v: False)
    if bad is not None:
        raise _kind_error(bad, dtype)
    return make_array(dtype, len(values), (), (), len(values))


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


def _build_int(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    npdt = storage_numpy_dtype(dtype)
    raw, valid = _ints(values, npdt, dtype, checked)
    bitmap, nulls = _bitmap(valid)
    return make_array(dtype, len(values), (bitmap, as_buffer(raw)), (), nulls)


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


def _build_date(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    bitmap, nulls, valid = _validity(values)
    npdt = storage_numpy_dtype(dtype)
    raw = _raw_temporal(values, dtype, npdt, valid)
    if raw is None:
        _check_kinds(values, (_dt.date, np.datetime64), dtype)
        filled = [v.date() if isinstance(v, _dt.datetime) else v
                  for v in _fill(values, valid, _dt.date(1970, 1, 1))]
        days = np.array(filled, dtype="M8[D]").view(np.int64)
        if dtype.unit == "ms":  # type: ignore[attr-defined]
            raw = days * 86_400_000
        else:
            raw, _ = _ints(days, npdt, dtype)
    return make_array(dtype, len(values), (bitmap, as_buffer(raw.astype(npdt))), (), nulls)


def _build_timestamp(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    bitmap, nulls, valid = _validity(values)
    raw = _raw_temporal(values, dtype, np.dtype(np.int64), valid)
    if raw is None:
        _check_kinds(values, (_dt.date, np.datetime64, *_INT_TYPES), dtype)
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
        raw = _with_raw_ints(_fill(values, valid, epoch), dtype, np.dtype(np.int64), epoch,
                             convert)
    return make_array(dtype, len(values), (bitmap, as_buffer(raw.astype(np.int64))), (), nulls)


def _build_time(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    bitmap, nulls, valid = _validity(values)
    npdt = storage_numpy_dtype(dtype)
    raw = _raw_temporal(values, dtype, npdt, valid)
    if raw is None:
        _check_kinds(values, (_dt.time, *_INT_TYPES), dtype)

        def convert(objs: list[Any]) -> np.ndarray:
            us = np.array(
                [((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
                 for v in objs],
                dtype=np.int64,
            )
            return _from_micros(us, dtype.unit).astype(npdt)  # type: ignore[attr-defined]

        midnight = _dt.time(0)
        raw = _with_raw_ints(_fill(values, valid, midnight), dtype, npdt, midnight, convert)
    return make_array(dtype, len(values), (bitmap, as_buffer(raw)), (), nulls)


def _build_duration(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    bitmap, nulls, valid = _validity(values)
    raw = _raw_temporal(values, dtype, np.dtype(np.int64), valid)
    if raw is None:
        _check_kinds(values, (_dt.timedelta, np.timedelta64, *_INT_TYPES), dtype)

        def convert(objs: list[Any]) -> np.ndarray:
            us = np.array(objs, dtype="m8[us]").view(np.int64)
            return _from_micros(us, dtype.unit)  # type: ignore[attr-defined]

        zero = _dt.timedelta(0)
        raw = _with_raw_ints(_fill(values, valid, zero), dtype, np.dtype(np.int64), zero,
                             convert)
    return make_array(dtype, len(values), (bitmap, as_buffer(raw)), (), nulls)


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


# ------------------------------------------------------------------------------------
# binary and strings


def _lengths(chunks: list[Any]) -> np.ndarray:
    return np.fromiter(map(len, chunks), np.int64, len(chunks))


class _MixedKinds(Exception):
    """Internal: a fast path met values of another kind and must hand over."""


def _join(sep: Any, items: list[Any]) -> Any:
    """``sep.join(items)``; bytes are joined 4096 at a time and the pieces joined again,
    which is several times faster for long lists (``bytes.join`` keeps a buffer view per
    item, and a million of them leave the CPU caches)."""
    if isinstance(sep, str) or len(items) <= _JOIN_STEP:
        return sep.join(items)
    step = _JOIN_STEP
    return sep.join([sep.join(items[i : i + step]) for i in range(0, len(items), step)])


_JOIN_STEP = 4096


def _joined(values: list[Any],
            is_string: bool) -> tuple[bytes, np.ndarray, np.ndarray | None] | None:
    """(all bytes joined, the ``len(values) + 1`` offsets, valid mask or None), or
    None where this fast path does not apply and :func:`_encoded` must do the work.

    The values are joined once with a NUL separator, None becoming a one-byte marker
    (``\\x01``), and encoded once; numpy then finds the separators (so no ``len`` per value)
    and the markers standing alone between two separators (so no ``is None`` per value).
    A value that is itself ``"\\x01"`` looks like a marker, so the slots of the markers found
    are looked up (C-level, one per marker) to keep only the real Nones.  It does not apply
    to an empty list, values of another kind, values holding NUL bytes, or text that is not
    valid UTF-8.
    """
    n = len(values)
    if n == 0:
        return None
    sep = "\x00" if is_string else b"\x00"
    has_none = False
    try:
        joined = _join(sep, values)  # fails on the first None or value of another kind
    except TypeError:
        has_none = True
        # 4096 values at a time, each joined while still in the CPU caches
        step = _JOIN_STEP
        try:
            if is_string:
                joined = sep.join([
                    sep.join(["\x01" if v is None else v for v in values[i : i + step]])
                    for i in range(0, n, step)
                ])
            else:
                joined = sep.join([
                    sep.join([b"\x01" if v is None else v for v in values[i : i + step]])
                    for i in range(0, n, step)
                ])
        except TypeError:
            return None
    if is_string:
        try:
            blob = joined.encode("ascii") if joined.isascii() else joined.encode("utf-8")
        except UnicodeError:
            return None
    else:
        blob = bytes(joined)
    del joined
    buf = np.frombuffer(blob, np.uint8)
    size = len(buf)
    # int32 arithmetic while the bytes allow it (the common, non-large case needs no cast)
    odt = np.int32 if size <= np.iinfo(np.int32).max else np.int64
    offs = np.empty(n + 1, dtype=odt)
    offs[0] = 0
    if not has_none:
        seps = np.flatnonzero(buf == 0)  # the end of every value but the last
        if len(seps) != n - 1:  # NUL bytes inside the values
            return None
        # each end less the separators before it
        np.subtract(seps, np.arange(n - 1, dtype=seps.dtype), out=offs[1:n], casting="unsafe")
        offs[n] = size - (n - 1)
        return blob.translate(None, b"\x00"), offs, None
    # the separators and the \x01 bytes (markers, and any in the data), in order
    pos = np.flatnonzero(buf <= 1)
    is_sep = buf[pos] == 0
    if np.count_nonzero(is_sep) != n - 1:  # NUL bytes inside the values
        return None
    at = np.flatnonzero(~is_sep)  # where the \x01 bytes are in ``pos``
    ones = pos[at]
    slots = at - np.arange(len(at))  # the value holding each: separators before it
    before = buf[np.maximum(ones - 1, 0)]
    after = buf[np.minimum(ones + 1, size - 1)]
    is_mark = ((ones == 0) | (before == 0)) & ((ones == size - 1) | (after == 0))
    if not is_mark.all():
        slots = slots[is_mark]
    if not len(slots):  # cannot happen: a None was met
        return None
    picked = operator.itemgetter(*slots.tolist())(values)
    picked = picked if len(slots) > 1 else (picked,)
    if picked.count(None) != len(slots):  # some values are "\x01" themselves
        is_none = np.fromiter(map(operator.is_, picked, itertools.repeat(None)), bool,
                              len(slots))
        is_mark[is_mark] = is_none
        slots = slots[is_none]
    valid = np.ones(n, dtype=bool)
    valid[slots] = False
    if is_mark.all():  # every \x01 byte is a marker: drop them all
        data: Any = blob.translate(None, b"\x00\x01")
    else:  # keep the \x01 bytes of the data
        keep = np.ones(len(pos), dtype=bool)
        keep[at[~is_mark]] = False
        pos, is_sep = pos[keep], is_sep[keep]
        gone = np.zeros(size, dtype=bool)
        gone[pos] = True
        data = buf[~gone].tobytes()
    # each end less the bytes dropped before it (every entry of ``pos`` is dropped)
    kept_before = np.subtract(pos, np.arange(len(pos), dtype=pos.dtype), out=pos)
    offs[1:n] = kept_before[is_sep]
    offs[n] = size - len(pos)
    return data, offs, valid


def _encoded(values: list[Any], dtype: t.DataType, is_string: bool, strict: bool = False,
             try_joined: bool = True) -> tuple[Any, np.ndarray, np.ndarray | None]:
    """(all bytes joined, byte length of each value, valid mask or None).

    One C-level ``join`` does the work when every value is of the expected kind (``str``
    for strings, bytes-like for binary); other kinds are converted one by one, or, with
    ``strict``, raise :class:`_MixedKinds`.  :func:`_joined` is tried first unless
    ``try_joined`` is False (the caller tried it already).
    """
    fast = _joined(values, is_string) if try_joined else None
    if fast is not None:
        data, offs, valid = fast
        return data, np.diff(offs).astype(np.int64), valid
    n = len(values)
    empty: Any = "" if is_string else b""
    valid = None
    present = values
    all_lengths = None
    try:
        joined = empty.join(values)  # fails on the first None or value of another kind
    except TypeError:
        # one C-level pass: the length of every value, -1 for None (and for objects
        # without a length, which the check below tells apart)
        all_lengths = np.fromiter(map(operator.length_hint, values, itertools.repeat(-1)),
                                  np.int64, n)
        valid = all_lengths >= 0
        if valid.all():
            valid = None
        else:
            missing = list(itertools.compress(values, ~valid))
            if missing.count(None) != len(missing):
                valid = _valid_mask(values)
                all_lengths = None
            present = list(itertools.compress(values, valid))
        try:
            joined = empty.join(present)
        except TypeError:
            joined = None
    try:
        if joined is not None and (not is_string or joined.isascii()):
            # for ASCII text, byte lengths equal character lengths
            data: Any = joined.encode("ascii") if is_string else joined
            if all_lengths is not None:
                return data, np.maximum(all_lengths, 0), valid
            present_lengths = _lengths(present)
        else:
            if joined is None and strict:
                raise _MixedKinds
            if joined is not None:
                enc = [v.encode("utf-8") for v in present]
            else:
                conv = _as_utf8 if is_string else _as_bytes
                enc = [conv(v, dtype) for v in present]
            data = b"".join(enc)
            present_lengths = _lengths(enc)
    except UnicodeError as exc:
        raise ArrowInvalid(f"expected valid UTF-8 for {dtype}, found {exc.reason}") from None
    if valid is None:
        return data, present_lengths, None
    lengths = np.zeros(n, dtype=np.int64)
    lengths[valid] = present_lengths
    return data, lengths, valid


def _as_utf8(v: Any, dtype: t.DataType) -> bytes:
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, (bytes, bytearray, memoryview)):
        b = bytes(v)
        b.decode("utf-8")
        return b
    raise _kind_error(v, dtype)


def _as_bytes(v: Any, dtype: t.DataType) -> bytes:
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    if isinstance(v, str):
        return v.encode("utf-8")
    raise _kind_error(v, dtype)


def _offsets(lengths: np.ndarray, large: bool, dtype: t.DataType) -> np.ndarray:
    offs = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offs[1:])
    return _narrow_offsets(offs, large, dtype)


def _narrow_offsets(offs: np.ndarray, large: bool, dtype: t.DataType) -> np.ndarray:
    """int32/int64 offsets as the type's offsets (int32 unless ``large``), checking the
    range."""
    if large:
        return offs.astype(np.int64, copy=False)
    if offs[-1] > np.iinfo(np.int32).max:
        raise ArrowInvalid(
            f"expected at most 2**31-1 bytes or elements for {dtype}, found {int(offs[-1])}; "
            "use the large_ variant"
        )
    return offs.astype(np.int32, copy=False)


def _build_binary(values: list[Any], dtype: t.DataType, checked: bool = False,
                  strict: bool = False) -> Array:
    is_string = isinstance(dtype, t.StringType)
    fast = _joined(values, is_string)
    if fast is not None:
        data, offs, valid = fast
        offs = _narrow_offsets(offs, dtype.large, dtype)  # type: ignore[attr-defined]
    else:
        data, lengths, valid = _encoded(values, dtype, is_string, strict, try_joined=False)
        offs = _offsets(lengths, dtype.large, dtype)  # type: ignore[attr-defined]
    bitmap, nulls = _bitmap(valid)
    return make_array(dtype, len(values), (bitmap, as_buffer(offs), as_buffer(data)), (), nulls)


def _build_view(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    n = len(values)
    blob, lengths, valid = _encoded(values, dtype, isinstance(dtype, t.StringViewType))
    bitmap, nulls = _bitmap(valid)
    if lengths.size and lengths.max() > np.iinfo(np.int32).max:
        raise ArrowInvalid(f"expected values below 2**31 bytes, found {int(lengths.max())}")
    starts = np.zeros(n, dtype=np.int64)
    if n:
        np.cumsum(lengths[:-1], out=starts[1:])
    padded = np.concatenate([as_buffer(blob), np.zeros(12, dtype=np.uint8)])
    views = np.zeros((n, 16), dtype=np.uint8)
    cols = np.arange(12)
    inline = lengths <= 12
    gathered = padded[starts[:, None] + cols]  # first 12 bytes of each value
    gathered[cols[None, :] >= lengths[:, None]] = 0
    views[:, 4:] = gathered
    long_ = ~inline
    buffers: list[Any] = [bitmap, None]
    if long_.any():
        long_lens = lengths[long_]
        long_starts = starts[long_]
        data_offs = np.zeros(len(long_lens), dtype=np.int64)
        np.cumsum(long_lens[:-1], out=data_offs[1:])
        total = int(long_lens.sum())
        if total > np.iinfo(np.int32).max:
            raise ArrowInvalid(f"expected at most 2**31-1 bytes of long values, found {total}")
        # gather the long values' bytes into one data buffer
        src = np.repeat(long_starts - data_offs, long_lens) + np.arange(total)
        data = padded[src]
        ints = views.view("<i4").reshape(n, 4)
        ints[long_, 2] = 0
        ints[long_, 3] = data_offs.astype(np.int32)
        buffers.append(data)
    views.view("<i4").reshape(n, 4)[:, 0] = lengths.astype(np.int32)
    buffers[1] = views.reshape(-1)
    return make_array(dtype, n, buffers, (), nulls)


def _build_fixed_binary(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    bitmap, nulls, valid = _validity(values)
    w = dtype.width  # type: ignore[attr-defined]
    data, lengths, _ = _encoded(_fill(values, valid, bytes(w)), dtype, False)
    if lengths.size and (lengths != w).any():
        bad = int(lengths[lengths != w][0])
        raise ArrowInvalid(f"expected values of {w} bytes for {dtype}, found {bad} bytes")
    return make_array(dtype, len(values), (bitmap, as_buffer(data)), (), nulls)


# ------------------------------------------------------------------------------------
# nested


def _build_child(values: list[Any], f: t.Field) -> Array:
    """``build`` for a child field; errors get the field's name prefixed to their path."""
    try:
        return build(values, f.type)
    except ArrowError as exc:
        exc.field_path = f"{f.name}.{exc.field_path}" if exc.field_path else f.name
        exc.args = (exc._render(),)
        raise


def _check_sequences(values: list[Any], dtype: t.DataType) -> None:
    for k in set(map(type, values)) - {type(None)}:
        if issubclass(k, (str, bytes, Mapping)) or not issubclass(k, (list, tuple, np.ndarray)):
            raise _kind_error(next(v for v in values if type(v) is k), dtype)


def _build_list(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    bitmap, nulls, valid = _validity(values)
    _check_sequences(values, dtype)
    filled = _fill(values, valid, ())
    lengths = np.fromiter(map(len, filled), np.int64, len(values))
    child = _build_child(list(itertools.chain.from_iterable(filled)), dtype.value_field)  # type: ignore[attr-defined]
    large = isinstance(dtype, (t.LargeListType, t.LargeListViewType))
    offs = _offsets(lengths, large, dtype)
    if isinstance(dtype, (t.ListViewType, t.LargeListViewType)):
        bufs = (bitmap, as_buffer(offs[:-1].copy()), as_buffer(lengths.astype(offs.dtype)))
    else:
        bufs = (bitmap, as_buffer(offs))
    return make_array(dtype, len(values), bufs, (child,), nulls)


def _build_fixed_list(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    bitmap, nulls, valid = _validity(values)
    _check_sequences(values, dtype)
    k = dtype.list_size  # type: ignore[attr-defined]
    filled = _fill(values, valid, (None,) * k)
    lengths = np.fromiter(map(len, filled), np.int64, len(values))
    if lengths.size and (lengths != k).any():
        bad = int(lengths[lengths != k][0])
        raise ArrowInvalid(f"expected lists of {k} values for {dtype}, found {bad} values")
    child = _build_child(list(itertools.chain.from_iterable(filled)), dtype.value_field)  # type: ignore[attr-defined]
    return make_array(dtype, len(values), (bitmap,), (child,), nulls)


def _build_struct(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    bitmap, nulls, _ = _validity(values)
    fields = dtype.fields
    for kind in set(map(type, values)) - {type(None)}:
        if not issubclass(kind, (Mapping, tuple, list)):
            raise _kind_error(next(v for v in values if type(v) is kind), dtype)
    children = []
    for i, f in enumerate(fields):
        col = [
            None if v is None else (v.get(f.name) if isinstance(v, Mapping) else _item(v, i, dtype))
            for v in values
        ]
        children.append(_build_child(col, f))
    return make_array(dtype, len(values), (bitmap,), tuple(children), nulls)


def _item(v: Any, i: int, dtype: t.DataType) -> Any:
    if len(v) != len(dtype.fields):
        raise ArrowInvalid(
            f"expected tuples of {len(dtype.fields)} values for {dtype}, found {len(v)}"
        )
    return v[i]


def _build_map(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    bitmap, nulls, _ = _validity(values)
    pairs_per = []
    for v in values:
        if v is None:
            pairs_per.append(())
        elif isinstance(v, Mapping):
            pairs_per.append(tuple(v.items()))
        elif isinstance(v, (list, tuple)):
            pairs_per.append(v)
        else:
            raise _kind_error(v, dtype)
    lengths = np.fromiter(map(len, pairs_per), np.int64, len(values))
    flat = list(itertools.chain.from_iterable(pairs_per))
    try:
        keys = [k for k, _ in flat]
        items = [x for _, x in flat]
    except (TypeError, ValueError):
        raise ArrowInvalid(f"expected (key, value) pairs for {dtype}, found {flat[:3]!r}") from None
    if any(k is None for k in keys):
        raise ArrowInvalid(f"expected non-null map keys for {dtype}, found None")
    mt: t.MapType = dtype  # type: ignore[assignment]
    key_arr = _build_child(keys, mt.key_field)
    item_arr = _build_child(items, mt.item_field)
    entries = make_array(mt.entries_field.type, len(flat), (None,), (key_arr, item_arr), 0)
    offs = _offsets(lengths, False, dtype)
    return make_array(dtype, len(values), (bitmap, as_buffer(offs)), (entries,), nulls)


def _accepts(dtype: t.DataType, v: Any) -> bool:
    """Whether a union child of ``dtype`` should take the Python value ``v``."""
    st = t.storage_of(dtype)
    if isinstance(st, t.DictionaryType):
        return _accepts(st.value_type, v)
    if isinstance(st, t.RunEndEncodedType):
        return _accepts(st.value_type, v)
    if isinstance(st, t.BoolType):
        return isinstance(v, (bool, np.bool_))
    if isinstance(st, t.IntegerType):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, _INT_TYPES):
            return False
        info = np.iinfo(storage_numpy_dtype(st))
        return info.min <= int(v) <= info.max
    if isinstance(st, t.FloatingPointType):
        return isinstance(v, (*_INT_TYPES, *_FLOAT_TYPES)) and not isinstance(v, bool)
    if isinstance(st, t.DecimalType):
        return isinstance(v, Decimal)
    if isinstance(st, t.TimestampType):
        return isinstance(v, _dt.datetime)
    if isinstance(st, t.DateType):
        return isinstance(v, _dt.date) and not isinstance(v, _dt.datetime)
    if isinstance(st, t.TimeType):
        return isinstance(v, _dt.time)
    if isinstance(st, t.DurationType):
        return isinstance(v, _dt.timedelta)
    if isinstance(st, t.IntervalType):
        return isinstance(v, tuple) if st.unit != "year_month" else isinstance(v, int)
    if isinstance(st, (t.StringType, t.StringViewType)):
        return isinstance(v, str)
    if isinstance(st, (t.BinaryType, t.BinaryViewType)):
        return isinstance(v, (bytes, bytearray))
    if isinstance(st, t.FixedSizeBinaryType):
        return (isinstance(v, (bytes, bytearray)) and len(v) == st.width) or (
            isinstance(v, _uuid.UUID) and st.width == 16
        )
    if isinstance(st, t.FixedSizeListType):
        return isinstance(v, (list, tuple)) and len(v) == st.list_size
    if isinstance(st, (t.ListType, t.LargeListType, t.ListViewType, t.LargeListViewType)):
        return isinstance(v, (list, tuple, np.ndarray))
    if isinstance(st, t.MapType):
        return isinstance(v, (Mapping, list))
    if isinstance(st, t.StructType):
        return isinstance(v, Mapping)
    if isinstance(st, t.UnionType):
        return any(_accepts(f.type, v) for f in st.fields)
    return False


def _build_union(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    ut: t.UnionType = dtype  # type: ignore[assignment]
    n = len(values)
    nkids = len(ut.fields)
    if nkids == 0:
        if n:
            raise ArrowInvalid(f"expected no values for a union without children, found {n}")
        return make_array(dtype, 0, (np.zeros(0, np.uint8),) * (2 if ut.mode == "dense" else 1))
    choice = []
    for v in values:
        if v is None:
            choice.append(0)
            continue
        for i, f in enumerate(ut.fields):
            if _accepts(f.type, v):
                choice.append(i)
                break
        else:
            raise _kind_error(v, dtype)
    ch = np.array(choice, dtype=np.int64)
    type_ids = np.array(ut.type_codes, dtype=np.int8)[ch] if n else np.zeros(0, np.int8)
    children = []
    if ut.mode == "sparse":
        for i, f in enumerate(ut.fields):
            col = [v if c == i else None for v, c in zip(values, choice)]
            children.append(_build_child(col, f))
        return make_array(dtype, n, (as_buffer(type_ids),), tuple(children), 0)
    offsets = np.zeros(n, dtype=np.int32)
    for i, f in enumerate(ut.fields):
        pos = np.flatnonzero(ch == i)
        offsets[pos] = np.arange(len(pos), dtype=np.int32)
        children.append(_build_child([values[p] for p in pos.tolist()], f))
    return make_array(dtype, n, (as_buffer(type_ids), as_buffer(offsets)), tuple(children), 0)


def _freeze(v: Any) -> Any:
    """A hashable stand-in for a value (lists and dicts become tuples), typed so that
    1, 1.0 and True stay distinct."""
    if isinstance(v, Mapping):
        return ("m", tuple((k, _freeze(x)) for k, x in v.items()))
    if isinstance(v, (list, tuple, np.ndarray)):
        return ("l", tuple(_freeze(x) for x in v))
    return (type(v), v)


def _build_dictionary(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    dt_: t.DictionaryType = dtype  # type: ignore[assignment]
    bitmap, nulls, _ = _validity(values)
    codes: dict[Any, int] = {}
    uniques: list[Any] = []
    idx = []
    for v in values:
        if v is None:
            idx.append(0)
            continue
        try:
            key = (type(v), v)
            hash(key)
        except TypeError:
            key = _freeze(v)
        code = codes.get(key)
        if code is None:
            code = codes[key] = len(uniques)
            uniques.append(v)
        idx.append(code)
    dictionary = build(uniques, dt_.value_type)
    npdt = storage_numpy_dtype(dt_.index_type)
    if len(uniques) - 1 > np.iinfo(npdt).max:
        raise ArrowInvalid(
            f"expected at most {np.iinfo(npdt).max + 1} distinct values for {dtype}, "
            f"found {len(uniques)}"
        )
    indices = np.array(idx, dtype=npdt)
    return make_array(dtype, len(values), (bitmap, as_buffer(indices)), (), nulls, 0, dictionary)


def _build_ree(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    rt: t.RunEndEncodedType = dtype  # type: ignore[assignment]
    ends: list[int] = []
    run_values: list[Any] = []
    sentinel = object()
    prev: Any = sentinel
    for i, v in enumerate(values):
        if prev is sentinel or type(v) is not type(prev) or v != prev:
            if run_values:
                ends.append(i)
            run_values.append(v)
            prev = v
    if values:
        ends.append(len(values))
    npdt = storage_numpy_dtype(rt.run_end_type)
    if len(values) > np.iinfo(npdt).max:
        raise ArrowInvalid(
            f"expected at most {np.iinfo(npdt).max} values for {dtype}, found {len(values)}"
        )
    run_ends = make_array(rt.run_end_type, len(ends),
                          (None, as_buffer(np.array(ends, dtype=npdt))), (), 0)
    vals = build(run_values, rt.value_type)
    return make_array(dtype, len(values), (), (run_ends, vals), 0)


def _build_extension(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    et: t.ExtensionType = dtype  # type: ignore[assignment]
    if et.extension_name == "arrow.uuid":
        values = [v.bytes if isinstance(v, _uuid.UUID) else v for v in values]
    storage = build(values, et.storage_type)
    return make_array(dtype, len(storage), storage.buffers, storage.children,
                      storage.null_count, 0, storage.dictionary)


# the registry's "builder" piece: DataType class -> (values, dtype, checked) -> Array
_BUILDERS: dict[type, Any] = registry.table("builder")
registry.register("builder", _build_null, t.NullType)
registry.register("builder", _build_bool, t.BoolType)
registry.register("builder", _build_int, t.IntegerType)
registry.register("builder", _build_float, t.FloatingPointType)
registry.register("builder", _build_decimal, t.DecimalType)
registry.register("builder", _build_date, t.DateType)
registry.register("builder", _build_timestamp, t.TimestampType)
registry.register("builder", _build_time, t.TimeType)
registry.register("builder", _build_duration, t.DurationType)
registry.register("builder", _build_interval, t.IntervalType)
registry.register("builder", _build_binary, t.BinaryType, t.StringType)
registry.register("builder", _build_view, t.BinaryViewType, t.StringViewType)
registry.register("builder", _build_fixed_binary, t.FixedSizeBinaryType)
registry.register(
    "builder", _build_list, t.ListType, t.LargeListType, t.ListViewType, t.LargeListViewType
)
registry.register("builder", _build_fixed_list, t.FixedSizeListType)
registry.register("builder", _build_struct, t.StructType)
registry.register("builder", _build_map, t.MapType)
registry.register("builder", _build_union, t.UnionType)
registry.register("builder", _build_dictionary, t.DictionaryType)
registry.register("builder", _build_ree, t.RunEndEncodedType)
registry.register("builder", _build_extension, t.ExtensionType)


# ------------------------------------------------------------------------------------
# numpy


def _numpy_type(arr: np.ndarray) -> t.DataType | None:
    k = arr.dtype.kind
    if k == "b":
        return t.bool_()
    if k in "iu":
        return t.IntegerType(arr.dtype.itemsize * 8, k == "i")
    if k == "f":
        return t.FloatingPointType(arr.dtype.itemsize * 8)
    if k in "Mm":
        unit, _ = np.datetime_data(arr.dtype)
        if k == "M" and unit == "D":
            return t.date32()
        if unit not in ("s", "ms", "us", "ns"):
            raise NotSupported(
                f"numpy {k}8 unit {unit!r} has no Arrow type; convert with .astype('{k}8[s]')"
            )
        return t.timestamp(unit) if k == "M" else t.duration(unit)
    if k == "U":
        return t.string()
    if k == "S":
        return t.binary()
    return None


def from_numpy(
    arr: np.ndarray,
    type: t.DataType | None = None,
    *,
    mask: Any = None,
    from_pandas: bool = False,
) -> Array:
    """An array over a 1-D numpy array; zero-copy for fixed-width numeric and temporal data.

    >>> import numpy as np
    >>> a = from_numpy(np.arange(4, dtype=np.int32))
    >>> str(a.type), a.to_pylist()
    ('int32', [0, 1, 2, 3])
    """
    null_mask = None
    if isinstance(arr, np.ma.MaskedArray):
        null_mask = np.ma.getmaskarray(arr)
        arr = arr.data
    if arr.ndim != 1:
        raise ArrowInvalid(f"expected a 1-D numpy array, found {arr.ndim} dimensions")
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        if m.shape != arr.shape:
            raise ArrowInvalid(f"expected a mask of shape {arr.shape}, found {m.shape}")
        null_mask = m if null_mask is None else (null_mask | m)
    natural = _numpy_type(arr)
    if natural is None or (arr.dtype.kind in "USO"):
        values = arr.tolist()
        if null_mask is not None:
            values = [None if mm else v for v, mm in zip(values, null_mask.tolist())]
        return array(values, type, from_pandas=from_pandas)
    target = natural if type is None else type
    st = t.storage_of(target)
    if arr.dtype.kind in "Mm":
        nat = np.isnat(arr)
        if nat.any():
            null_mask = nat if null_mask is None else (null_mask | nat)
        if isinstance(st, (t.TimestampType, t.DurationType, t.DateType)) and type is not None:
            want = np.dtype(f"{arr.dtype.kind}8[{'D' if isinstance(st, t.DateType) else st.unit}]")
            if isinstance(st, t.DateType) and st.unit == "ms":
                want = np.dtype("M8[ms]")
            if arr.dtype != want:
                arr = arr.astype(want)
        arr = arr.view(np.int64)
    if arr.dtype.kind == "f" and from_pandas:
        nan = np.isnan(arr)
        if nan.any():
            null_mask = nan if null_mask is None else (null_mask | nan)
    valid = None if null_mask is None else ~null_mask
    bitmap, nulls = _bitmap(valid)
    if isinstance(st, t.BoolType):
        if arr.dtype.kind != "b":
            raise _kind_error(arr.dtype, target)
        return make_array(target, len(arr), (bitmap, pack_bits(arr)), (), nulls)
    npdt = None if isinstance(st, t.DictionaryType) else storage_numpy_dtype(st)
    if npdt is None:
        values = arr.tolist()
        if valid is not None:
            values = [v if ok else None for v, ok in zip(values, valid.tolist())]
        return build(values, target)
    if arr.dtype != npdt:
        if npdt.kind in "iu":
            check = arr if valid is None else arr[valid]
            if check.dtype.kind == "f" and not np.all(check == np.trunc(check)):
                raise ArrowInvalid(f"expected integral values for {target}, found fractions")
            with np.errstate(invalid="ignore", over="ignore"):
                converted = arr.astype(npdt)
            same = converted.astype(arr.dtype) == arr
            if valid is not None:
                same |= ~valid
            if not np.all(same):
                raise ArrowInvalid(f"expected values that fit {target}, found one out of range")
            arr = converted
        else:  # to floats: narrowing rounds, as pyarrow does
            arr = arr.astype(npdt)
    if not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr)
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    return make_array(target, len(arr), (bitmap, as_buffer(arr)), (), nulls)
