"""``cast``: values of one type as another, safe by default (pyarrow's ``cast`` rules).

Not an Arrow spec section; follows ``pyarrow.compute.cast``.  Supported: between integer,
floating point and boolean types; decimals (rescaling) and between decimals, integers and
floats, and floats to decimals (the exact binary value rounded half to even, as pyarrow);
the temporal types (units of timestamps, durations and times, date32 <-> date64,
timestamps <-> dates, a zoned timestamp giving its local date in that zone, and each
one's own storage integer, int32 or int64, which it reinterprets: pyarrow refuses the
other integer types); between string, large_string and string_view and their
binary counterparts (binary to string checks UTF-8); strings parsed as numbers; integers,
booleans and floats written as text (floats with the shortest digits that read back, in
Arrow's layout).  A dictionary array is decoded first.

Safe (the default) means a value that does not fit (overflow) or would lose digits
(truncation) is an error that names the row; ``safe=False`` wraps or truncates as numpy
(and pyarrow) does.  One difference from pyarrow: a float cast to a decimal whose scale
cannot hold the float's digits (123.456 to scale 2) is an error when safe, where
pyarrow's safe cast rounds it silently; ``safe=False`` rounds as pyarrow does.

>>> import quiver as qv
>>> cast(qv.array([1, None, 300]), qv.int16()).to_pylist()
[1, None, 300]
>>> cast(qv.array([1, None, 300]), qv.int8())
Traceback (most recent call last):
...
quiver.errors.ArrowInvalid: expected values that fit int8, found 300 at row 2 (safe=False wraps it)
"""

from __future__ import annotations

import datetime
import re
import zoneinfo
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import registry
from .. import types as t
from ..buffers import pack_bits, unpack_bits
from ..errors import ArrowInvalid, ArrowTypeError, NotSupported
from ..layout import storage_numpy_dtype
from .base import Array, make_array
from .build_numpy import check_numbers, raise_first
from .data import null_mask
from .data import offsets_and_data as _offsets_and_data
from .data import ranges as _ranges
from .decimal import from_ints, limbs, to_ints
from .parse import parse_floats, parse_integers
from .take import gather

__all__ = ["cast"]

_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_MS_PER_DAY = 86_400_000
_INT32_MAX = (1 << 31) - 1


def _result(dtype: t.DataType, arr: Array, values: np.ndarray) -> Array:
    """A fixed-width array of ``values`` (already in ``dtype``'s storage) with ``arr``'s
    validity."""
    valid = arr.is_valid_mask()
    vbuf = None if valid is None else pack_bits(valid)
    null_count = 0 if valid is None else len(arr) - int(np.count_nonzero(valid))
    data = np.ascontiguousarray(values).view(np.uint8).reshape(-1)
    return make_array(dtype, len(arr), [vbuf, data], (), null_count, 0)


def _raw(arr: Array) -> np.ndarray:
    st = t.storage_of(arr.type)
    if isinstance(st, t.BoolType):
        return getattr(arr, "storage", arr).to_numpy_bool()  # type: ignore[attr-defined]
    npdt = storage_numpy_dtype(st)
    if npdt is None:
        raise NotSupported(f"expected a fixed-width numeric type to cast, found {arr.type}")
    if len(arr) == 0:
        return np.zeros(0, dtype=npdt)
    return arr._fixed_values_view(npdt)


def _int_range(dtype: t.DataType) -> tuple[int, int]:
    info = np.iinfo(storage_numpy_dtype(dtype))  # type: ignore[arg-type]
    return int(info.min), int(info.max)


def _to_numeric(arr: Array, values: np.ndarray, target: t.DataType, safe: bool) -> Array:
    """Numbers (numpy, any kind) as ``target`` (integer, float or bool)."""
    valid = arr.is_valid_mask()
    npdt = storage_numpy_dtype(target)
    if isinstance(target, t.BoolType):
        return _bool_result(arr, values != 0)
    if safe:  # a float target: the integers its mantissa holds exactly
        check_numbers(values, valid, target, npdt,  # type: ignore[arg-type]
                      {16: 11, 32: 24, 64: 53}.get(target.bit_width, 64))  # type: ignore[attr-defined]
    with np.errstate(invalid="ignore", over="ignore"):
        if values.dtype.kind == "f" and isinstance(target, t.IntegerType):
            values = np.where(np.isfinite(values), np.trunc(values), 0)
        out = values.astype(npdt)
    return _result(target, arr, out)


def _bool_result(arr: Array, out: np.ndarray) -> Array:
    valid = arr.is_valid_mask()
    vbuf = None if valid is None else pack_bits(valid)
    null_count = 0 if valid is None else len(arr) - int(np.count_nonzero(valid))
    return make_array(t.bool_(), len(arr), [vbuf, pack_bits(out)], (), null_count, 0)


# -- temporal ---------------------------------------------------------------------------


def _unit_of(dtype: t.DataType) -> tuple[str, int]:
    """(kind, ticks per day) of a temporal type: date32 counts days, date64 milliseconds.

    Every ratio of two of these is a whole number or its inverse (1 and 86400 x 10**k)."""
    if isinstance(dtype, t.DateType):
        return "date", 1 if dtype.unit == "day" else _MS_PER_DAY
    kind = {t.TimeType: "time", t.TimestampType: "timestamp", t.DurationType: "duration"}
    return kind[type(dtype)], 86_400 * _PER_SECOND[dtype.unit]  # type: ignore[attr-defined]


def _rescale(arr: Array, values: np.ndarray, num: int, den: int, target: t.DataType,
             safe: bool) -> Array:
    """``values * num / den`` as ``target``: overflow and (safe) truncation are errors."""
    valid = arr.is_valid_mask()
    v = values.astype(np.int64)
    if num > 1:
        if safe:
            limit = np.iinfo(np.int64).max // num
            raise_first((v > limit) | (v < -limit), valid, lambda r: (
                f"expected values that fit {target} after scaling by {num}, found {int(v[r])} "
                f"at row {r} (safe=False wraps)"))
        v = v * num  # wraps when unsafe, as pyarrow
    if den > 1:
        q = v // den
        q += (v < 0) & (q * den != v)  # toward zero, as pyarrow
        if safe:
            raise_first(q * den != v, valid, lambda r: (
                f"expected values that convert to {target} without losing data, found "
                f"{int(values[r])} at row {r} (safe=False truncates)"))
        v = q
    npdt = storage_numpy_dtype(target)
    if npdt is not None and npdt.itemsize < 8 and safe:
        lo, hi = _int_range(t.int32())
        raise_first((v < lo) | (v > hi), valid,
                    lambda r: f"expected values that fit {target}, found {int(v[r])} at row {r}")
    return _result(target, arr, v.astype(npdt))


def _temporal(arr: Array, src: t.DataType, target: t.DataType, safe: bool) -> Array:
    values = _raw(arr)
    skind, sper = _unit_of(src)
    tkind, tper = _unit_of(target)
    if skind == "timestamp" and tkind == "date":
        tz = src.tz  # type: ignore[attr-defined]
        ticks = values.astype(np.int64)
        if tz not in (None, "UTC", "utc", "+00:00", "Z"):
            valid = arr.is_valid_mask()
            seconds = np.floor_divide(ticks, sper // 86_400)
            if valid is not None:
                seconds = np.where(valid, seconds, 0)
            ticks = ticks + _utc_offsets(seconds, tz) * (sper // 86_400)  # the local wall clock
        days = np.floor_divide(ticks, sper)  # dates floor, as pyarrow
        if target.unit == "day":  # type: ignore[attr-defined]
            return _result(target, arr, days.astype("<i4"))
        return _result(target, arr, (days * _MS_PER_DAY).astype("<i8"))
    if skind != tkind and {skind, tkind} != {"date", "timestamp"}:
        raise NotSupported(f"casting {src} to {target} is not supported")
    # a date counts days (or ms) from the epoch as a timestamp does: one exact ratio of units
    if tper >= sper:
        return _rescale(arr, values, tper // sper, 1, target, safe)
    return _rescale(arr, values, 1, sper // tper, target, safe)


_FIXED_OFFSET = re.compile(r"([+-])(\d\d):?(\d\d)")
_EPOCH = datetime.datetime(1970, 1, 1)


def _utc_offsets(seconds: np.ndarray, tz: str) -> np.ndarray:
    """The UTC offset (seconds, int64) of time zone ``tz`` at each UTC instant.

    Zone rules come from ``zoneinfo``, asked once per distinct UTC day of the data (at its
    first and last second) rather than per value; a day whose two offsets differ holds a
    transition, found by bisection, and its values take the offset of their side of it.
    This assumes at most one offset change per UTC day, which every tz database zone
    meets.
    """
    fixed = _FIXED_OFFSET.fullmatch(tz)
    if fixed is not None:
        sign = -1 if fixed.group(1) == "-" else 1
        return np.full(len(seconds), sign * (int(fixed.group(2)) * 3600
                                             + int(fixed.group(3)) * 60), np.int64)
    try:
        zone = zoneinfo.ZoneInfo(tz)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ArrowInvalid(f"expected a time zone name of the tz database or an offset "
                           f"like +05:30, found {tz!r}") from None

    def offset_at(second: int) -> int:
        local = zone.fromutc((_EPOCH + datetime.timedelta(seconds=second)).replace(
            tzinfo=zone))
        return int(local.utcoffset().total_seconds())  # type: ignore[union-attr]

    days, inverse = np.unique(np.floor_divide(seconds, 86_400), return_inverse=True)
    firsts = (days * 86_400).tolist()
    try:
        start = np.array([offset_at(s) for s in firsts], np.int64)  # distinct days only
        end = np.array([offset_at(s + 86_399) for s in firsts], np.int64)
    except OverflowError:
        def fits(second: int) -> bool:
            try:
                offset_at(second)
                offset_at(second + 86_399)
            except OverflowError:
                return False
            return True

        bad = next(i for i, s in enumerate(firsts) if not fits(s))  # the error path only
        row = int(np.flatnonzero(inverse.reshape(-1) == bad)[0])
        raise ArrowInvalid(f"expected timestamps within years 1 to 9999 to find their local "
                           f"date in {tz!r}, found {int(seconds[row])} s at row {row}") from None
    switch = np.array(firsts, np.int64) + 86_400  # the first second of the end offset
    for i in np.flatnonzero(start != end).tolist():  # transitions: a few per year of data
        lo, hi = firsts[i], firsts[i] + 86_399
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if offset_at(mid) == start[i]:
                lo = mid
            else:
                hi = mid
        switch[i] = hi
    day_of = inverse.reshape(-1)
    return np.where(seconds >= switch[day_of], end[day_of], start[day_of])


# -- decimals ---------------------------------------------------------------------------
# Unscaled values are held as a numpy object array of Python ints (decimal128/256 do not
# fit a machine integer); the arithmetic and the checks are whole-array numpy operations.


def _decimal_ints(arr: Array) -> np.ndarray:
    """The unscaled values (object array of int; 0 in null slots)."""
    st = t.storage_of(arr.type)
    out = to_ints(limbs(arr.buffers[1], st.bit_width, arr.offset, len(arr)))  # type: ignore[arg-type, attr-defined]
    valid = arr.is_valid_mask()
    if valid is not None:
        out[~valid] = 0
    return out


def _first(bad: np.ndarray) -> int | None:
    hits = np.flatnonzero(bad.astype(bool))
    return int(hits[0]) if len(hits) else None


def _divide(ints: np.ndarray, den: int, target: t.DataType, safe: bool, what: str) -> np.ndarray:
    """``ints / den`` toward zero; with ``safe``, a remainder is an error naming the row."""
    q = np.abs(ints) // den
    if safe:
        row = _first(np.abs(ints) % den != 0)
        if row is not None:
            raise ArrowInvalid(
                f"expected values that convert to {target} without losing digits, found "
                f"an unscaled {ints[row]} {what}at row {row} (safe=False truncates)"
            )
    return np.where(ints < 0, -q, q)


def _to_decimal(arr: Array, src: t.DataType, target: t.DecimalType, safe: bool) -> Array:
    if isinstance(src, t.DecimalType):
        ints = _decimal_ints(arr)
        shift = target.scale - src.scale
    elif isinstance(src, t.IntegerType):
        ints = _raw(arr).astype(object)
        valid = arr.is_valid_mask()
        if valid is not None:
            ints[~valid] = 0
        shift = target.scale
    else:
        raise NotSupported(f"casting {src} to {target} is not supported")
    if shift >= 0:
        ints = ints * 10**shift
    else:
        ints = _divide(ints, 10 ** (-shift), target, safe, "")
    limit = 10 ** target.precision
    row = _first(np.abs(ints) >= limit)
    if row is not None:
        raise ArrowInvalid(
            f"expected values that fit {target}, found an unscaled {ints[row]} at row {row}"
        )
    return _result(target, arr, from_ints(ints, target.bit_width))


def _float_to_decimal(arr: Array, target: t.DecimalType, safe: bool) -> Array:
    """Floats as decimals: the float's exact binary value rounded half to even at the
    target scale (pyarrow's result).  Safe: NaN, infinity, a value that does not fit the
    precision, and a value whose shortest text (what ``repr`` shows) has digits beyond
    the scale are errors naming the row; pyarrow's safe cast rounds those digits away
    silently (``safe=False`` does the same here) and writes 0 for what does not fit."""
    values = _raw(arr)
    valid = arr.is_valid_mask()
    if valid is not None:
        values = np.where(valid, values, 0)
    finite = np.isfinite(values)
    row = _first(~finite)
    if row is not None:
        raise ArrowInvalid(f"expected finite values to cast to {target}, found "
                           f"{float(values[row])} at row {row}")
    scale = target.scale
    if safe:
        neg = np.signbit(values)
        nonzero = values != 0
        if nonzero.any():
            sub = values[nonzero]
            _, k, p = _digits_and_point(_shortest_raw(sub if sub.dtype != np.float16 else
                                                      sub.astype(np.float64)), neg[nonzero])
            lost = np.zeros(len(values), bool)
            lost[nonzero] = k - p > scale
            row = _first(lost)
            if row is not None:
                raise ArrowInvalid(
                    f"expected values that convert to {target} without losing digits, found "
                    f"{float(values[row])!r} at row {row} (safe=False rounds to the scale)"
                )
    # value = mantissa * 2**exponent exactly, with a 53-bit integer mantissa
    frac, exp2 = np.frexp(values.astype(np.float64))
    mantissa = np.ldexp(frac, 53).astype(np.int64).astype(object)
    shift = exp2.astype(np.int64) - 53
    num = np.abs(mantissa) * (10**scale if scale > 0 else 1)
    num = np.where(shift > 0, np.left_shift(num, np.maximum(shift, 0).astype(object)), num)
    den = np.left_shift(1, np.maximum(-shift, 0).astype(object)) * (
        10 ** (-scale) if scale < 0 else 1)
    q = num // den
    r = num - q * den
    up = (2 * r > den) | ((2 * r == den) & (q % 2 == 1))
    ints = np.where(mantissa < 0, -(q + up), q + up)
    limit = 10 ** target.precision
    too_big = np.abs(ints) >= limit
    row = _first(too_big)
    if row is not None:
        if safe:
            raise ArrowInvalid(
                f"expected values that fit {target}, found {float(values[row])!r} at row {row}"
            )
        ints = np.where(too_big, 0, ints)
    return _result(target, arr, from_ints(ints, target.bit_width))


def _from_decimal(arr: Array, src: t.DecimalType, target: t.DataType, safe: bool) -> Array:
    ints = _decimal_ints(arr)
    if isinstance(target, t.FloatingPointType):
        vals = (ints / 10**src.scale if src.scale >= 0 else ints * 10 ** (-src.scale))
        return _to_numeric(arr, np.asarray(vals, dtype=np.float64), target, False)
    if isinstance(target, t.IntegerType):
        if src.scale >= 0:
            whole = _divide(ints, 10**src.scale, target, safe, f"(scale {src.scale}) ")
        else:
            whole = ints * 10 ** (-src.scale)
        lo, hi = _int_range(target)
        if safe:
            row = _first((whole < lo) | (whole > hi))
            if row is not None:
                raise ArrowInvalid(
                    f"expected values that fit {target}, found {whole[row]} at row {row}"
                )
        wrapped = (whole % (1 << 64)).astype(np.uint64)  # unsafe casts wrap, as numpy's
        return _result(target, arr, wrapped.astype(storage_numpy_dtype(target)))
    raise NotSupported(f"casting {src} to {target} is not supported")


# -- strings and binary -----------------------------------------------------------------


def _make_views(arr: Array, offsets: np.ndarray, data: np.ndarray, target: t.DataType) -> Array:
    n = len(offsets) - 1
    if len(data) > _INT32_MAX:
        raise NotSupported("views over more than 2 GiB of data are not supported here")
    lengths = np.diff(offsets)
    out = np.zeros(n * 16, np.uint8)
    words = out.view("<i4").reshape(n, 4)
    words[:, 0] = lengths
    starts = offsets[:-1]
    rows = np.arange(n, dtype=np.int64) * 16 + 4
    inline = lengths <= 12
    out[_ranges(rows[inline], lengths[inline])] = data[_ranges(starts[inline], lengths[inline])]
    big = ~inline
    out[_ranges(rows[big], np.full(int(big.sum()), 4))] = data[
        _ranges(starts[big], np.full(int(big.sum()), 4))
    ]
    words[big, 2] = 0
    words[big, 3] = starts[big]
    valid = arr.is_valid_mask()
    vbuf = None if valid is None else pack_bits(valid)
    null_count = 0 if valid is None else n - int(np.count_nonzero(valid))
    buffers: list[Any] = [vbuf, out]
    if big.any():
        buffers.append(np.ascontiguousarray(data))
    return make_array(target, n, buffers, (), null_count, 0)


def _check_utf8(offsets: np.ndarray, data: np.ndarray, target: t.DataType) -> None:
    try:
        bytes(data).decode("utf-8")
        starts = offsets[:-1][np.diff(offsets) > 0]
        whole = not ((data[starts] & 0xC0) == 0x80).any() if len(starts) else True
    except UnicodeDecodeError:
        whole = False
    if whole:
        return
    for row in range(len(offsets) - 1):  # only on the error path: name the row
        try:
            bytes(data[offsets[row] : offsets[row + 1]]).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ArrowInvalid(
                f"expected UTF-8 to cast to {target}, found invalid bytes at row {row} "
                f"({exc.reason})"
            ) from None


def _binary_like(arr: Array, src: t.DataType, target: t.DataType) -> Array:
    offsets, data = _offsets_and_data(arr)
    if isinstance(target, (t.StringType, t.StringViewType)) and isinstance(
        src, (t.BinaryType, t.BinaryViewType)
    ):
        _check_utf8(offsets, data, target)
    if isinstance(target, (t.BinaryViewType, t.StringViewType)):
        return _make_views(arr, offsets, data, target)
    w = 8 if target.large else 4  # type: ignore[attr-defined]
    if w == 4 and offsets[-1] > _INT32_MAX:
        raise ArrowInvalid(
            f"expected at most {_INT32_MAX} bytes of data for {target}, found {int(offsets[-1])} "
            "(cast to the large_ type)"
        )
    valid = arr.is_valid_mask()
    vbuf = None if valid is None else pack_bits(valid)
    null_count = 0 if valid is None else len(arr) - int(np.count_nonzero(valid))
    return make_array(target, len(arr), [vbuf, offsets.astype(f"<i{w}").view(np.uint8), data],
                      (), null_count, 0)


def _parse_numbers(arr: Array, target: t.DataType, safe: bool) -> Array:
    """Text as ``target`` numbers, in pyarrow's syntax (:mod:`quiver.array.parse`)."""
    offsets, data = _offsets_and_data(arr)
    valid = arr.is_valid_mask()
    if isinstance(target, t.FloatingPointType):
        return _to_numeric(arr, parse_floats(offsets, data, valid, str(target)), target, safe)
    return _result(target, arr, parse_integers(offsets, data, valid,
                                               storage_numpy_dtype(target), str(target)))


# -- the entry point ----------------------------------------------------------------------

# Every type class names its cast family (the registry's cast_family piece); a cast is
# chosen by the (source, target) families, in :data:`_RULES`.  A family without rules
# ("none") casts only to its own type (and between an extension and its storage).
for _family, _classes in (
    ("bool", (t.BoolType,)),
    ("integer", (t.IntegerType,)),
    ("float", (t.FloatingPointType,)),
    ("decimal", (t.DecimalType,)),
    ("temporal", (t.DateType, t.TimeType, t.TimestampType, t.DurationType)),
    ("binary", (t.BinaryType, t.BinaryViewType)),
    ("string", (t.StringType, t.StringViewType)),
    ("none", (t.NullType, t.IntervalType, t.FixedSizeBinaryType, t.ListType,
              t.LargeListType, t.ListViewType, t.LargeListViewType, t.FixedSizeListType,
              t.StructType, t.MapType, t.UnionType, t.RunEndEncodedType)),
):
    registry.register("cast_family", _family, *_classes)

_Rule = Callable[[Array, t.DataType, t.DataType, Any, bool], Array]


def _numeric_rule(arr: Array, src: t.DataType, dst: t.DataType, target: Any,
                  safe: bool) -> Array:
    return _to_numeric(arr, _raw(arr), dst, safe)


def _float_decimal_rule(arr: Array, src: t.DataType, dst: t.DataType, target: Any,
                        safe: bool) -> Array:
    return _float_to_decimal(arr, dst, safe)  # type: ignore[arg-type]


def _to_decimal_rule(arr: Array, src: t.DataType, dst: t.DataType, target: Any,
                     safe: bool) -> Array:
    return _to_decimal(arr, src, dst, safe)  # type: ignore[arg-type]


def _from_decimal_rule(arr: Array, src: t.DataType, dst: t.DataType, target: Any,
                       safe: bool) -> Array:
    return _from_decimal(arr, src, dst, safe)  # type: ignore[arg-type]


def _temporal_rule(arr: Array, src: t.DataType, dst: t.DataType, target: Any,
                   safe: bool) -> Array:
    return _temporal(arr, src, dst, safe)


def _reinterpret_rule(arr: Array, src: t.DataType, dst: t.DataType, target: Any,
                      safe: bool) -> Array:
    # pyarrow reinterprets a temporal type's storage integer (int32 or int64) and refuses
    # every other integer type
    src_temporal = _family(src) == "temporal"
    storage = storage_numpy_dtype(src if src_temporal else dst)
    if storage_numpy_dtype(dst if src_temporal else src) != storage:
        temporal = arr.type if src_temporal else target
        raise NotSupported(
            f"casting {arr.type} to {target} is not supported: expected "
            f"{np.dtype(storage).name} (the storage of {temporal}), found "  # type: ignore[arg-type]
            f"{target if src_temporal else arr.type}"
        )
    return _result(dst, arr, _raw(arr))


def _binary_rule(arr: Array, src: t.DataType, dst: t.DataType, target: Any,
                 safe: bool) -> Array:
    return _binary_like(arr, src, dst)


def _parse_rule(arr: Array, src: t.DataType, dst: t.DataType, target: Any,
                safe: bool) -> Array:
    return _parse_numbers(arr, dst, safe)


def _format_rule(arr: Array, src: t.DataType, dst: t.DataType, target: Any,
                 safe: bool) -> Array:
    text = _format_numbers(arr, src)
    return text if dst == text.type else cast(text, target, safe=safe)


_NUMBERS = ("bool", "integer", "float")
_FAMILIES = (*_NUMBERS, "decimal", "temporal", "binary", "string", "none")
_RULES: dict[tuple[str, str], _Rule] = {}
for _src in _FAMILIES:  # the later a rule here, the more it takes precedence
    _RULES[(_src, "decimal")] = _to_decimal_rule
    if _src != "decimal":
        _RULES[("decimal", _src)] = _from_decimal_rule
_RULES[("float", "decimal")] = _float_decimal_rule
_RULES.update({(a, b): _numeric_rule for a in _NUMBERS for b in _NUMBERS})
_RULES[("temporal", "temporal")] = _temporal_rule
_RULES[("temporal", "integer")] = _RULES[("integer", "temporal")] = _reinterpret_rule
_RULES.update({(a, b): _binary_rule for a in ("binary", "string") for b in ("binary", "string")})
_RULES[("string", "integer")] = _RULES[("string", "float")] = _parse_rule
_RULES.update({(a, "string"): _format_rule for a in _NUMBERS})


def _family(dtype: t.DataType) -> str:
    found = registry.table("cast_family").get(type(dtype))
    if found is None:
        raise registry.missing_piece("cast_family", type(dtype))
    return found


def cast(arr: Array, target_type: Any, *, safe: bool = True) -> Array:
    """``arr`` as ``target_type`` (a quiver type or any ``__arrow_c_schema__`` type).

    ``safe`` (default): overflow and lost digits are errors naming the row.

    >>> import quiver as qv
    >>> cast(qv.array(["a", None]), qv.large_string()).type
    DataType(large_string)
    >>> cast(qv.array([1.5]), qv.int32(), safe=False).to_pylist()
    [1]
    """
    target = t.as_type(target_type)
    if target is None:
        raise ArrowTypeError(f"expected a DataType to cast to, found {target_type!r}")
    if not isinstance(arr, Array):
        raise ArrowTypeError(f"expected a quiver Array, found {type(arr).__name__}")
    if arr.type == target:
        return arr
    src = t.storage_of(arr.type)
    if isinstance(src, t.DictionaryType):
        idx = arr.indices.to_numpy(zero_copy_only=False)  # type: ignore[attr-defined]
        nulls = null_mask(arr)
        codes = np.where(nulls, 0, np.nan_to_num(idx)).astype(np.int64)
        decoded = gather(arr.dictionary, codes, None if not nulls.any() else ~nulls)  # type: ignore[arg-type]
        return cast(decoded, target, safe=safe)
    dst = t.storage_of(target)
    if isinstance(arr.type, t.ExtensionType) or isinstance(target, t.ExtensionType):
        if src == dst:  # storage <-> extension: the same buffers under another type
            return make_array(target, len(arr), arr.buffers, arr.children, arr.null_count,
                              arr.offset, arr.dictionary)
        raise NotSupported(f"casting {arr.type} to {target} is not supported")
    if isinstance(dst, t.DictionaryType):  # (a dictionary source was decoded above)
        raise NotSupported(
            f"casting {arr.type} to {target} is not supported: quiver does not "
            "dictionary-encode arrays")
    rule = _RULES.get((_family(src), _family(dst)))
    if rule is not None:
        return rule(arr, src, dst, target, safe)
    raise NotSupported(
        f"casting {arr.type} to {target} is not supported (quiver casts between numeric, "
        "decimal, temporal and string/binary types)"
    )


def _format_numbers(arr: Array, src: t.DataType) -> Array:
    """Integers, floats and booleans as text, as Arrow writes them (decimal digits;
    floats as :func:`_float_text`; ``true``/``false``), with numpy's string ufuncs."""
    n = len(arr)
    valid = arr.is_valid_mask()
    if isinstance(src, t.BoolType):
        bits = unpack_bits(arr.buffers[1], arr.offset, n) if n else np.zeros(0, bool)
        raw = np.where(bits, b"true", b"false")
    elif isinstance(src, t.FloatingPointType):
        values = _raw(arr)
        if valid is not None:
            values = np.where(valid, values, 0)
        raw = _float_text(values if values.dtype != np.float16 else values.astype(np.float64))
    else:
        raw = _raw(arr).astype("S")
    if valid is not None:
        raw = np.where(valid, raw, b"")
    if not n:
        raw = np.zeros(0, "S1")
    lengths = np.strings.str_len(raw).astype(np.int64)
    # the texts hold no NUL byte, so dropping the padding NULs of the fixed-width bytes
    # leaves the values one after another
    padded = np.frombuffer(raw.tobytes(), np.uint8)
    data = padded[padded != 0]
    offsets = np.zeros(n + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    validity = None if valid is None else pack_bits(valid)
    return make_array(t.string(), n, [validity, offsets.view(np.uint8), data], (),
                      -1 if valid is not None else 0, 0)


# -- floats as text ---------------------------------------------------------------------
# Arrow writes a float with the shortest digits that read back to the same value
# (double-conversion's ToShortest), positionally when the decimal exponent x of the first
# digit is -6 <= x < 10 and as d.ddde+x otherwise (no zero padding of the exponent, no
# trailing ".0"), and "nan", "inf", "-inf", "-0".  The shortest digits come from Python's
# repr for float64 (a per-element C call through ``map``; numpy has no vectorized shortest
# formatting, and ``ndarray.astype(str)`` is the same per-element Dragon4 and slower) and
# from numpy's ``astype`` for float32 (shortest for the float32 value); everything after
# that is whole-array numpy string work.

_S = np.strings


def _shortest_raw(values: np.ndarray) -> np.ndarray:
    """Shortest round-trip text of each value, in repr's or numpy's layout (bytes)."""
    if values.dtype == np.float64:
        return np.array(list(map(repr, values.tolist())), dtype="S") if len(values) else (
            np.zeros(0, "S1"))
    return values.astype("S")


def _digits_and_point(raw: np.ndarray, neg: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                 np.ndarray]:
    """(digits, k, p) of finite values' texts: the significant digits without leading or
    trailing zeros, their count k, and p, the count of digits before the decimal point
    (value = 0.digits * 10**p)."""
    body = np.where(neg, _S.slice(raw, 1, None), raw)
    mant, _, exp = _S.partition(body, b"e")
    exp10 = np.zeros(len(raw), np.int64)
    has_e = _S.str_len(exp) > 0
    if has_e.any():
        exp10[has_e] = _S.replace(exp[has_e], b"+", b"").astype(np.int64)
    ip, _, fp = _S.partition(mant, b".")
    joined = _S.add(ip, fp)
    stripped = _S.lstrip(joined, b"0")
    lead = (_S.str_len(joined) - _S.str_len(stripped)).astype(np.int64)
    digits = _S.rstrip(stripped, b"0")
    k = _S.str_len(digits).astype(np.int64)
    p = _S.str_len(ip).astype(np.int64) + exp10 - lead
    return digits, k, p


def _relayout(raw: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """Finite values' shortest texts in Arrow's layout."""
    digits, k, p = _digits_and_point(raw, neg)
    x = p - 1
    out = np.empty(len(raw), dtype=f"S{raw.dtype.itemsize + 8}")
    positional = (x >= -6) & (x < 10)
    m = positional & (p <= 0)
    if m.any():  # 0.000ddd
        out[m] = _S.add(_S.add(b"0.", _S.multiply(b"0", -p[m])), digits[m])
    m = positional & (p > 0) & (p < k)
    if m.any():  # dd.ddd
        out[m] = _S.add(_S.add(_S.slice(digits[m], 0, p[m]), b"."),
                        _S.slice(digits[m], p[m], None))
    m = positional & (p >= k)
    if m.any():  # ddd000
        out[m] = _S.add(digits[m], _S.multiply(b"0", p[m] - k[m]))
    m = ~positional
    if m.any():  # d.ddde+x
        d = digits[m]
        tail = np.where(k[m] > 1, _S.add(b".", _S.slice(d, 1, None)), b"")
        sign = np.where(x[m] >= 0, b"e+", b"e-")
        out[m] = _S.add(_S.add(_S.add(_S.slice(d, 0, 1), tail), sign),
                        np.abs(x[m]).astype("S"))
    out[k == 0] = b"0"
    if neg.any():
        out[neg] = _S.add(b"-", out[neg])
    return out


def _float_text(values: np.ndarray) -> np.ndarray:
    """float32/float64 values as Arrow's text (bytes array).

    >>> _float_text(np.array([0.1, 1e20, 1e-7, 1.0, -0.0, 3e10, 1e-6])).tolist()
    [b'0.1', b'1e+20', b'1e-7', b'1', b'-0', b'3e+10', b'0.000001']
    """
    raw = _shortest_raw(values)
    finite = np.isfinite(values)
    if values.dtype == np.float64:
        # repr already is Arrow's text for values written positionally with a fraction and
        # -4 <= exponent < 10, and whole numbers there (and zeros) only lose repr's ".0";
        # the rest are laid out again
        mag = np.abs(values)
        positional = (mag >= 1e-4) & (mag < 1e10) | (mag == 0)
        whole = positional & _S.endswith(raw, b".0")
        need = finite & ~positional
        if whole.any():
            raw = raw.copy()
            raw[whole] = _S.slice(raw[whole], 0, -2)
    else:
        need = finite
    if not need.any():
        return raw
    out = raw.astype(f"S{raw.dtype.itemsize + 8}")
    out[need] = _relayout(raw[need], np.signbit(values[need]))
    return out
