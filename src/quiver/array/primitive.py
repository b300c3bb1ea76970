"""Fixed-width arrays: null, boolean, primitive (numbers, decimals, temporal, intervals)
and fixed-size binary (Columnar spec, "Null Layout", "Fixed-size Primitive Layout").

Conversion to Python objects follows pyarrow's ``to_pylist`` (without pandas installed):
``Decimal`` for decimals, ``datetime.date/time/datetime/timedelta`` for temporal types
(time-zone aware datetimes for timestamps with a ``tz``), :class:`MonthDayNano` for
month-day-nano intervals.  Nanosecond values convert only when they are whole microseconds,
as in pyarrow; otherwise :class:`~quiver.errors.ArrowInvalid` (a ``ValueError``) is raised.

>>> import quiver as qv
>>> qv.array([1, None, 3]).to_pylist()
[1, None, 3]
>>> qv.array([0, 86_400_000], qv.date64()).to_pylist()
[datetime.date(1970, 1, 1), datetime.date(1970, 1, 2)]
"""

from __future__ import annotations

import datetime as _dt
import functools
import re
import uuid as _uuid
import zoneinfo
from decimal import Decimal
from typing import Any, NamedTuple

import numpy as np

from .. import registry
from .. import types as t
from ..buffers import unpack_bits
from ..errors import ArrowInvalid
from ..layout import storage_numpy_dtype
from ..types.checks import tz_problem
from .base import Array, register_array_class, typed_view
from .decimal import limbs, to_ints


class MonthDayNano(NamedTuple):
    """One month-day-nano interval value (pyarrow's ``MonthDayNano`` has the same fields)."""

    months: int
    days: int
    nanoseconds: int


class DayTime(NamedTuple):
    """One day-time interval value: days and milliseconds."""

    days: int
    milliseconds: int


def _tuples(cls: type, *columns: list[int]) -> list[Any]:
    """Named tuples of ``cls`` from columns, built at C speed (``tuple.__new__`` skips the
    generated ``__new__``; the field count is right by construction)."""
    return list(map(functools.partial(tuple.__new__, cls), zip(*columns)))


def finish(values: Any, mask: np.ndarray | None) -> list[Any]:
    """Python list of ``values`` (a list or object array) with None where ``mask`` is False."""
    if mask is None:
        return values.tolist() if isinstance(values, np.ndarray) else list(values)
    if isinstance(values, np.ndarray):
        obj = values.astype(object) if values.dtype != object else values.copy()
    else:
        obj = np.fromiter(values, dtype=object, count=len(values))
    obj[~mask] = None
    return obj.tolist()


@register_array_class(t.NullType)
class NullArray(Array):
    """All values null; no buffers."""

    __slots__ = ()

    @property
    def null_count(self) -> int:
        """Every slot is null."""
        return self._length

    def to_pylist(self, *, maps_as_pydicts: str | None = None) -> list[Any]:
        """``[None] * len(self)``."""
        return [None] * self._length


@register_array_class(t.BoolType)
class BooleanArray(Array):
    """Booleans packed one bit per value (LSB first)."""

    __slots__ = ()

    def to_numpy_bool(self) -> np.ndarray:
        """The values as a numpy bool array (null slots hold whatever bit is stored)."""
        buf = self._buffers[1] if len(self._buffers) > 1 else None
        if self._length == 0:
            return np.zeros(0, dtype=bool)
        needed = (self._offset + self._length + 7) // 8
        if buf is None or len(buf) < needed:
            found = "None" if buf is None else f"{len(buf)} bytes"
            raise ArrowInvalid(f"expected a bit buffer of at least {needed} bytes, found {found}")
        return unpack_bits(buf, self._offset, self._length)

    def to_pylist(self, *, maps_as_pydicts: str | None = None) -> list[Any]:
        """Python bools, None for nulls."""
        return finish(self.to_numpy_bool(), self.is_valid_mask())


# -- temporal helpers -------------------------------------------------------------------

_US_PER = {"s": 1_000_000, "ms": 1_000, "us": 1, "ns": 1}
_MIN_DATETIME_US = -62_135_596_800_000_000  # 0001-01-01T00:00:00
_MAX_DATETIME_US = 253_402_300_799_999_999  # 9999-12-31T23:59:59.999999
_MIN_DATE_DAYS = -719_162
_MAX_DATE_DAYS = 2_932_896
_MS_PER_DAY = 86_400_000
_US_PER_DAY = 86_400_000_000
_FIXED_OFFSET = re.compile(r"^([+-])(\d{2}):?(\d{2})$")


def _to_micros(raw: np.ndarray, unit: str, what: str) -> np.ndarray:
    """int64 microseconds from values in ``unit``; nanoseconds must be whole micros."""
    raw = raw.astype(np.int64, copy=False)
    if unit == "ns":
        bad = raw % 1000 != 0
        if bad.any():
            v = int(raw[np.argmax(bad)])
            raise ArrowInvalid(
                f"expected nanosecond {what} values that are whole microseconds to convert "
                f"to Python objects, found {v}"
            )
        return raw // 1000
    factor = _US_PER[unit]
    if factor == 1:
        return raw
    lim = np.iinfo(np.int64).max // factor
    if raw.size and (raw.max() > lim or raw.min() < -lim):
        v = int(raw[np.argmax(np.abs(raw) > lim)])
        raise ArrowInvalid(f"expected {what} values within the int64 microsecond range, found {v}")
    return raw * factor


def _check_range(values: np.ndarray, lo: int, hi: int, what: str) -> None:
    if values.size:
        bad = (values < lo) | (values > hi)
        if bad.any():
            v = int(values[np.argmax(bad)])
            raise ArrowInvalid(f"expected {what} in {lo}..{hi}, found {v}")


def resolve_tz(tz: str) -> _dt.tzinfo:
    """The tzinfo for an Arrow time zone string: a fixed offset or an IANA name."""
    problem = tz_problem(tz)
    if problem is not None:
        raise ArrowInvalid(problem)
    m = _FIXED_OFFSET.match(tz)
    if m:
        sign = -1 if m.group(1) == "-" else 1
        delta = _dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3)))
        return _dt.timezone(sign * delta)
    try:
        return zoneinfo.ZoneInfo(tz)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        raise ArrowInvalid(
            f"expected an IANA time zone name or [+-]HH:MM offset, found {tz!r}"
        ) from None


def _pandas() -> Any:
    """pandas when it is installed (pyarrow then returns its nanosecond scalars), else None."""
    try:
        import pandas
    except ImportError:
        return None
    return pandas


def _timestamps(raw: np.ndarray, unit: str, tz: str | None) -> Any:
    pd = _pandas() if unit == "ns" else None
    if pd is not None:  # pyarrow's rule: nanosecond timestamps become pandas Timestamps
        zone = resolve_tz(tz) if tz is not None else None  # quiver checks the zone name
        try:
            idx = pd.to_datetime(raw.astype(np.int64, copy=False), unit="ns")
            if zone is not None:
                idx = idx.tz_localize("UTC").tz_convert(zone)
            return idx.tolist()
        except (ValueError, OverflowError) as exc:  # pandas' out-of-bounds errors
            raise ArrowInvalid(
                f"expected nanosecond timestamps that pandas can represent in {tz}, "
                f"found one out of range ({exc})"
            ) from None
    us = _to_micros(raw, unit, "timestamp")
    tzinfo = resolve_tz(tz) if tz is not None else None
    if isinstance(tzinfo, _dt.timezone):
        shift = int(tzinfo.utcoffset(None).total_seconds()) * 1_000_000
        us = us + shift
    _check_range(us, _MIN_DATETIME_US, _MAX_DATETIME_US, "timestamp microseconds")
    naive = us.view("M8[us]").astype(object)
    if tzinfo is None:
        return naive
    if isinstance(tzinfo, _dt.timezone):
        return [d.replace(tzinfo=tzinfo) for d in naive.tolist()]
    utc = _dt.UTC
    try:
        return [d.replace(tzinfo=utc).astimezone(tzinfo) for d in naive.tolist()]
    except OverflowError:
        raise ArrowInvalid(
            f"expected timestamps representable in time zone {tz}, found one out of range"
        ) from None


def _dates(raw: np.ndarray, unit: str) -> Any:
    days = raw.astype(np.int64)
    if unit == "ms":
        days = days // _MS_PER_DAY
    _check_range(days, _MIN_DATE_DAYS, _MAX_DATE_DAYS, "date days since the epoch")
    return days.view("M8[D]").astype(object)


def _times(raw: np.ndarray, unit: str) -> list[Any]:
    if unit == "ns":  # like pyarrow: a time of day keeps whole microseconds (truncated)
        us = raw.astype(np.int64, copy=False) // 1000
    else:
        us = _to_micros(raw, unit, "time")
    _check_range(us, 0, _US_PER_DAY - 1, "time of day in microseconds")
    secs, micro = np.divmod(us, 1_000_000)
    mins, sec = np.divmod(secs, 60)
    hour, minute = np.divmod(mins, 60)
    time = _dt.time
    return [
        time(h, m, s, u)
        for h, m, s, u in zip(hour.tolist(), minute.tolist(), sec.tolist(), micro.tolist())
    ]


def _durations(raw: np.ndarray, unit: str) -> Any:
    pd = _pandas() if unit == "ns" else None
    if pd is not None:  # pyarrow's rule: nanosecond durations become pandas Timedeltas
        try:
            return pd.to_timedelta(raw.astype(np.int64, copy=False), unit="ns").tolist()
        except (ValueError, OverflowError) as exc:
            raise ArrowInvalid(
                f"expected nanosecond durations that pandas can represent, found ({exc})"
            ) from None
    try:
        us = _to_micros(raw, unit, "duration")
    except ArrowInvalid:
        if unit not in ("s", "ms"):
            raise
        try:  # past int64 microseconds: Python's timedelta holds up to 999999999 days
            return [_dt.timedelta(microseconds=_US_PER[unit] * v) for v in raw.tolist()]
        except OverflowError:
            raise ArrowInvalid(f"expected durations that Python's timedelta holds, found one "
                               f"past 999999999 days in duration[{unit}]") from None
    out = us.view("m8[us]").astype(object)
    nat = us == np.iinfo(np.int64).min  # numpy reads this value as NaT; it is a real duration
    if nat.any():
        out = np.asarray(out, dtype=object)
        out[nat] = _dt.timedelta(microseconds=int(np.iinfo(np.int64).min))
    return out


def decimals(buf: np.ndarray, dtype: t.DecimalType, offset: int, length: int) -> list[Any]:
    """``Decimal`` values of a decimal buffer (no null handling)."""
    ints = to_ints(limbs(buf, dtype.width, offset, length)).tolist()
    exp = -dtype.scale
    return [Decimal(f"{v}E{exp}") for v in ints]


@register_array_class(
    t.IntegerType,
    t.FloatingPointType,
    t.DecimalType,
    t.DateType,
    t.TimeType,
    t.TimestampType,
    t.DurationType,
    t.IntervalType,
)
class PrimitiveArray(Array):
    """Fixed-width values: integers, floats, decimals, dates, times, timestamps,
    durations and intervals."""

    __slots__ = ()

    def _values_buffer(self) -> np.ndarray:
        buf = self._buffers[1] if len(self._buffers) > 1 else None
        if buf is None:
            return self._absent_buffer("a values", np.zeros(0, dtype=np.uint8))
        return buf

    def _python_values(self, mask: np.ndarray | None) -> Any:
        st = t.storage_of(self._type)
        convert = _PYTHON_VALUES.get(st.__class__)
        if convert is None:
            raise registry.missing_piece("python_values", st.__class__)
        return convert(self, st, mask)

    def _storage_dtype(self) -> np.dtype:
        dt = storage_numpy_dtype(self._type)
        if dt is None:
            raise ArrowInvalid(f"expected a numeric type, found {self._type}")
        return dt

    def to_pylist(self, *, maps_as_pydicts: str | None = None) -> list[Any]:
        """Python values as pyarrow gives them (see the module docstring)."""
        mask = self.is_valid_mask()
        return finish(self._python_values(mask), mask)


# the registry's "python_values" piece: storage type class -> (array, storage type, valid
# mask) -> values (a list or numpy array; ``finish`` puts the Nones in)
_PYTHON_VALUES = registry.table("python_values")


@registry.implements("python_values", t.IntegerType, t.FloatingPointType)
def _numbers(arr: PrimitiveArray, st: Any, mask: np.ndarray | None) -> Any:
    raw = arr._fixed_values_view(arr._storage_dtype())
    return raw.astype(object) if st.width == 16 else raw


def _temporal(arr: PrimitiveArray, mask: np.ndarray | None) -> np.ndarray:
    raw = arr._fixed_values_view(arr._storage_dtype())
    if mask is not None:  # null slots may hold anything; do not let them fail conversion
        raw = np.where(mask, raw, 0)
    return raw


@registry.implements("python_values", t.TimestampType)
def _timestamp_values(arr: PrimitiveArray, st: t.TimestampType, mask: np.ndarray | None) -> Any:
    return _timestamps(_temporal(arr, mask), st.unit, st.tz)


@registry.implements("python_values", t.DateType)
def _date_values(arr: PrimitiveArray, st: t.DateType, mask: np.ndarray | None) -> Any:
    return _dates(_temporal(arr, mask), st.unit)


@registry.implements("python_values", t.TimeType)
def _time_values(arr: PrimitiveArray, st: t.TimeType, mask: np.ndarray | None) -> Any:
    return _times(_temporal(arr, mask), st.unit)


@registry.implements("python_values", t.DurationType)
def _duration_values(arr: PrimitiveArray, st: t.DurationType, mask: np.ndarray | None) -> Any:
    return _durations(_temporal(arr, mask), st.unit)


@registry.implements("python_values", t.DecimalType)
def _decimal_values(arr: PrimitiveArray, st: t.DecimalType, mask: np.ndarray | None) -> Any:
    return decimals(arr._values_buffer(), st, arr._offset, arr._length)


@registry.implements("python_values", t.IntervalType)
def _interval_values(arr: PrimitiveArray, st: t.IntervalType, mask: np.ndarray | None) -> Any:
    buf = arr._values_buffer()
    off, n = arr._offset, arr._length
    if st.unit == "year_month":
        return typed_view(buf, "<i4", off, n, "values")
    if st.unit == "day_time":
        v = typed_view(buf, "<i4", off * 2, n * 2, "values").reshape(n, 2)
        return _tuples(DayTime, v[:, 0].tolist(), v[:, 1].tolist())
    rec = typed_view(buf, np.dtype([("m", "<i4"), ("d", "<i4"), ("n", "<i8")]), off, n, "values")
    return _tuples(MonthDayNano, rec["m"].tolist(), rec["d"].tolist(), rec["n"].tolist())


@register_array_class(t.FixedSizeBinaryType)
class FixedSizeBinaryArray(Array):
    """Byte strings of one fixed width."""

    __slots__ = ()

    @property
    def byte_width(self) -> int:
        """Bytes per value."""
        return t.storage_of(self._type).width  # type: ignore[attr-defined]

    def to_pylist(self, *, maps_as_pydicts: str | None = None) -> list[Any]:
        """``bytes`` values (None for nulls)."""
        w = self.byte_width
        n = self._length
        if w == 0:
            vals: list[Any] = [b""] * n
        else:
            buf = self._buffers[1] if len(self._buffers) > 1 else None
            if buf is None:
                buf = np.zeros(0, dtype=np.uint8)
            raw = typed_view(buf, np.uint8, self._offset * w, n * w, "values").tobytes()
            vals = [raw[i : i + w] for i in range(0, n * w, w)]
        return finish(vals, self.is_valid_mask())


def uuids(values: list[Any]) -> list[Any]:
    """``uuid.UUID`` objects from 16-byte values (None kept), as pyarrow gives arrow.uuid."""
    u = _uuid.UUID
    return [None if v is None else u(bytes=v) for v in values]
