"""Hive partition values as Spark spells, parses and infers them.

A ``partitionBy`` directory is named ``column=text``.  Spark makes ``text`` by casting the
value to a string (``Cast(value, StringType)`` in the session time zone), ``""`` and
null become ``__HIVE_DEFAULT_PARTITION__``, and ``ExternalCatalogUtils.escapePathName``
``%XX``-escapes a few characters.  Reading, ``PartitioningUtils`` takes the *raw*
(escaped) text of each directory: strings and timestamps are unescaped, numbers, dates
and binary are parsed from the raw text.  This module holds those rules once:

* :func:`partition_text` -- a value as its directory text (the write direction);
* :func:`partition_value` -- a directory's raw text as a value of a type (the read
  direction, used for inferred types and for types a user schema names);
* :func:`infer_partition_type` and :func:`wider_partition_type` -- Spark's inference
  order (int, bigint, decimal(p, 0), double, timestamp, date, time, string) and its
  widening table (``findWiderTypeForPartitionColumn``);
* :func:`zone_of` -- a session time zone as ``DateTimeUtils.getZoneId`` reads it
  (``java.time.ZoneId.of`` with its short ids: ``Z``, ``-8``, ``GMT+8``, ``UTC-00:30``,
  ``+05:30``, ``EST``, region ids).

Numbers follow Java's grammars (``Integer.parseInt`` takes Unicode digits and no
spaces, ``new BigDecimal`` the same, ``Double.parseDouble`` trims spaces and takes
``NaN``, ``Infinity``, ``1d``, ``1f`` and hex floats) and doubles are written as Java's
``Double.toString`` writes them (``1.0E20``, ``NaN``, ``-Infinity``; floats as
``Float.toString``: ``0.1``).  Where Spark silently wraps or mangles a value a user
schema asks for (``300`` as a ``tinyint`` becomes ``44``), quiver refuses it instead.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import unicodedata
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np

from .. import types as t
from ..errors import ArrowInvalid, ArrowInvalidArgument, NotSupported

HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"

# ExternalCatalogUtils.charToEscape: U+0001..U+001F and these; U+0000 too (a directory
# name cannot hold it, and Spark fails writing it)
_ESCAPED = frozenset('"#%\'*/:=?\\\x7f{[]^') | {chr(c) for c in range(0x20)}


def escape_partition_text(text: str) -> str:
    """A partition value or column name as Spark writes it in a directory name."""
    if not any(c in _ESCAPED for c in text):
        return text
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in text)


_HEX_PAIR = re.compile(r"%(\+?[0-9A-Fa-f][0-9A-Fa-f]?)")


def unescape_partition_text(text: str) -> str:
    """Spark's ``unescapePathName``: each ``%XX`` (two characters Java's
    ``Integer.parseInt(_, 16)`` takes) is the character of that code; a ``%`` not
    followed by one stays."""
    if "%" not in text:
        return text

    def one(m: re.Match[str]) -> str:
        code = m.group(1)
        return chr(int(code, 16)) if len(code) == 2 else m.group(0)

    return _HEX_PAIR.sub(one, text)


# -- time zones ------------------------------------------------------------------------

# java.time.ZoneId.SHORT_IDS, which Spark's getZoneId passes to ZoneId.of
_SHORT_IDS = {
    "EST": "-05:00", "MST": "-07:00", "HST": "-10:00", "ACT": "Australia/Darwin",
    "AET": "Australia/Sydney", "AGT": "America/Argentina/Buenos_Aires",
    "ART": "Africa/Cairo", "AST": "America/Anchorage", "BET": "America/Sao_Paulo",
    "BST": "Asia/Dhaka", "CAT": "Africa/Harare", "CNT": "America/St_Johns",
    "CST": "America/Chicago", "CTT": "Asia/Shanghai", "EAT": "Africa/Addis_Ababa",
    "ECT": "Europe/Paris", "IET": "America/Indiana/Indianapolis", "IST": "Asia/Kolkata",
    "JST": "Asia/Tokyo", "MIT": "Pacific/Apia", "NET": "Asia/Yerevan",
    "NST": "Pacific/Auckland", "PLT": "Asia/Karachi", "PNT": "America/Phoenix",
    "PRT": "America/Puerto_Rico", "PST": "America/Los_Angeles",
    "SST": "Pacific/Guadalcanal", "VST": "Asia/Ho_Chi_Minh",
}
# ZoneOffset.of: +h, +hh, +hh:mm, +hhmm, +hh:mm:ss, +hhmmss (at most 18 hours)
_OFFSET = re.compile(
    r"([+-])(\d{1,2})(?:(?::(\d{2})(?::(\d{2}))?)|(?:(\d{2})(\d{2})?))?", re.ASCII)
_REGION = re.compile(r"[A-Za-z][A-Za-z0-9~/._+-]+", re.ASCII)


def _offset(text: str) -> dt.timezone | None:
    m = _OFFSET.fullmatch(text)
    if m is None:
        return None
    sign, hours, mm1, ss1, mm2, ss2 = m.groups()
    if len(hours) == 1 and (mm2 is not None):
        return None  # "+hmm" is not a ZoneOffset form
    minutes = int(mm1 or mm2 or 0)
    seconds = int(ss1 or ss2 or 0)
    total = int(hours) * 3600 + minutes * 60 + seconds
    if int(hours) > 18 or minutes > 59 or seconds > 59 or total > 18 * 3600:
        return None
    return dt.timezone(dt.timedelta(seconds=-total if sign == "-" else total))


@lru_cache(maxsize=64)
def zone_of(name: str) -> dt.tzinfo:
    """A session time zone as Spark reads it (``DateTimeUtils.getZoneId``): ``Z``,
    offsets (``+8``, ``-08:00``, ``+0530``, and Spark's ``+h:mm``/``+hh:m``),
    ``UTC``/``GMT``/``UT`` with or without an offset, Java's short ids, region ids."""
    text = re.sub(r"([+-])(\d):", r"\g<1>0\2:", name, count=1)
    text = re.sub(r"([+-])(\d\d):(\d)$", r"\1\2:0\3", text, count=1)
    text = _SHORT_IDS.get(text, text)
    if text == "Z":
        return dt.UTC
    if text[:1] in "+-":
        zone = _offset(text)
        if zone is not None:
            return zone
    for prefix in ("UTC", "GMT", "UT"):
        if text == prefix:
            return dt.UTC
        if text.startswith(prefix) and text[len(prefix):len(prefix) + 1] in ("+", "-"):
            zone = _offset(text[len(prefix):])
            if zone is not None:
                return zone
            break
    if _REGION.fullmatch(text) and ".." not in text:
        try:
            return ZoneInfo(text)
        except (ZoneInfoNotFoundError, ValueError, OSError):
            pass
    raise ArrowInvalidArgument(
        f"expected a time zone Spark accepts (a region such as Europe/Paris, an offset "
        f"such as +05:30, or Z, UTC, GMT+8), found {name!r}"
    )


def session_zone() -> str:
    """The Spark session's time zone where this code runs: in a task, the setting Spark
    passes to it (``spark.sql.session.timeZone``, when it was set); else the zone of
    this machine (what the JVM defaults to), else UTC."""
    try:
        from pyspark import TaskContext

        ctx = TaskContext.get()
    except ImportError:  # pragma: no cover - pyspark is there whenever Spark calls us
        ctx = None
    if ctx is not None:
        zone = ctx.getLocalProperty("spark.sql.session.timeZone")
        if zone:
            return zone
    zone = os.environ.get("TZ", "").lstrip(":")
    if zone:
        return zone
    try:
        link = os.path.realpath("/etc/localtime")
    except OSError:  # pragma: no cover
        return "UTC"
    marker = "zoneinfo" + os.sep
    return link.split(marker, 1)[1] if marker in link else "UTC"


# -- the write direction -----------------------------------------------------------------

_EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def _java_float_text(x: float, single: bool) -> str:
    """``Double.toString`` (``Float.toString`` when ``single``), with the shortest digits
    that read back as the same value (what Java 19 and later print)."""
    if x != x:
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if str(x).startswith("-") else "0.0"
    shortest = (np.format_float_scientific(np.float32(x), unique=True) if single
                else repr(x))
    sign, digits, exponent = Decimal(shortest).as_tuple()
    if len(digits) == 1:
        # Java prints at least two digits (d.dE..) and takes the two-digit decimal
        # nearest the exact value when it reads back the same: 4.9E-324, not 5.0E-324
        exact = Decimal(float(np.float32(x))) if single else Decimal(x)
        two = Decimal(f"{exact:.1e}")
        same = (np.float32(float(two)) == np.float32(x)) if single else float(two) == x
        if same:
            sign, digits, exponent = two.as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    point = len(digits) + exponent  # digits before the decimal point
    minus = "-" if sign else ""
    if 1e-3 <= abs(x) < 1e7:
        if point <= 0:
            return f"{minus}0.{'0' * -point}{text}"
        whole = text[:point].ljust(point, "0")
        return f"{minus}{whole}.{text[point:] or '0'}"
    return f"{minus}{text[0]}.{text[1:] or '0'}E{point - 1}"


def _fraction(micros: int) -> str:
    return f".{micros:06d}".rstrip("0") if micros else ""


def _timestamp_text(value: dt.datetime) -> str:
    return (f"{value.year:04d}-{value.month:02d}-{value.day:02d} "
            f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}"
            f"{_fraction(value.microsecond)}")


def partition_text(value: Any, dtype: t.DataType) -> str:
    """The directory text (before escaping) Spark writes for ``value`` of ``dtype``:
    ``Cast(value AS STRING)`` in the session time zone, the zone of a timestamp type
    (Spark hands writers timestamps in the session zone); ``None`` and ``""`` give
    ``__HIVE_DEFAULT_PARTITION__``.  Timestamps come as aware datetimes or as ticks."""
    if value is None:
        return HIVE_NULL
    if isinstance(dtype, t.BoolType):
        text = "true" if value else "false"
    elif isinstance(dtype, t.FloatingPointType):
        text = _java_float_text(float(value), single=dtype.width <= 32)
    elif isinstance(dtype, t.DecimalType):
        text = format(Decimal(value).quantize(Decimal(1).scaleb(-dtype.scale)), "f")
    elif isinstance(dtype, t.TimestampType):
        if not isinstance(value, dt.datetime):
            per_second = {"s": 1, "ms": 1000, "us": 10**6, "ns": 10**9}[dtype.unit]
            value = _EPOCH_UTC + dt.timedelta(microseconds=int(value) * 10**6 // per_second)
        if dtype.tz:
            value = value.astimezone(zone_of(dtype.tz))
        text = _timestamp_text(value)
    elif isinstance(dtype, t.DateType):
        text = f"{value.year:04d}-{value.month:02d}-{value.day:02d}"
    elif isinstance(dtype, t.TimeType):
        text = (f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}"
                f"{_fraction(value.microsecond)}")
    elif isinstance(dtype, t.BinaryType):
        text = bytes(value).decode("utf-8", "replace")
    elif isinstance(dtype, (t.IntegerType, t.StringType)):
        text = str(value)
    else:
        raise NotSupported(f"expected a partitionBy column of a plain type, found {dtype}")
    return text if text else HIVE_NULL


# -- the read direction ------------------------------------------------------------------

# Java's Integer.parseInt / new BigDecimal take any Unicode decimal digit (Python's \d)
_JAVA_INTEGER = re.compile(r"[+-]?\d+")
_JAVA_DECIMAL = re.compile(r"([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?")
# Double.parseDouble: trimmed, ASCII digits, NaN, Infinity, a d/f suffix, hex floats
_JAVA_DOUBLE = re.compile(
    r"[+-]?(?:NaN|Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[dDfF]?)",
    re.ASCII)
_JAVA_HEX_DOUBLE = re.compile(
    r"[+-]?0[xX](?:[0-9a-fA-F]+\.?|[0-9a-fA-F]*\.[0-9a-fA-F]+)[pP][+-]?[0-9]+[dDfF]?",
    re.ASCII)
# the inference patterns: "yyyy-MM-dd HH:mm:ss[.S]" (one fraction digit at most),
# "yyyy-MM-dd" and a time of day "HH:mm:ss[.fraction]"
_INFER_TIMESTAMP = re.compile(r"(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d))?",
                              re.ASCII)
_INFER_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})", re.ASCII)
_INFER_TIME = re.compile(r"(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?", re.ASCII)
# Spark's string-to-date and string-to-timestamp casts (a subset: what directories hold)
_CAST_DATE = re.compile(r"([+-]?\d{4,7})(?:-(\d{1,2})(?:-(\d{1,2})(?:[ T].*)?)?)?",
                        re.ASCII | re.DOTALL)
_CAST_TIMESTAMP = re.compile(
    r"([+-]?\d{4,7})(?:-(\d{1,2})(?:-(\d{1,2}))?)?"
    r"(?:[ T](\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d*))?)?)?"
    r"\s*(Z|[+-][\d:]+|(?:UTC|GMT|UT)(?:[+-][\d:]+)?|[A-Za-z][A-Za-z0-9~/._+-]*)?", re.ASCII)
_CAST_TIME = re.compile(r"(\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,9}))?)?", re.ASCII)


def _ascii_digits(text: str) -> str:
    return "".join(str(unicodedata.digit(c)) if c.isdigit() and not c.isascii() else c
                   for c in text)


def _java_int(text: str) -> int | None:
    return int(_ascii_digits(text)) if _JAVA_INTEGER.fullmatch(text) else None


def _java_big_decimal(text: str) -> Decimal | None:
    m = _JAVA_DECIMAL.fullmatch(text)
    if m is None or not (m.group(2) or m.group(3)):
        return None
    exponent = m.group(4)
    if exponent is not None and len(_ascii_digits(exponent).lstrip("+-0")) > 9:
        return None  # beyond an int scale: BigDecimal refuses it
    return Decimal(_ascii_digits(text))


def _java_double(text: str) -> float | None:
    body = text.strip("".join(chr(c) for c in range(0x21)))  # String.trim
    if _JAVA_DOUBLE.fullmatch(body):
        return float(body.rstrip("dDfF"))
    if _JAVA_HEX_DOUBLE.fullmatch(body):
        return float.fromhex(body.rstrip("dDfF"))
    return None


def _datetime(year: int, month: int, day: int, hour: int = 0, minute: int = 0,
              second: int = 0, micros: int = 0) -> dt.datetime | None:
    try:
        return dt.datetime(year, month, day, hour, minute, second, micros)
    except ValueError:
        return None


def _cast_date(text: str) -> dt.date | None:
    m = _CAST_DATE.fullmatch(text.strip())
    if m is None:
        return None
    found = _datetime(int(m.group(1)), int(m.group(2) or 1), int(m.group(3) or 1))
    return None if found is None else found.date()


def _micros(fraction: str | None) -> int:
    return int((fraction or "")[:6].ljust(6, "0"))


def _cast_timestamp(text: str, zone: str | None) -> dt.datetime | None:
    """Spark's string-to-timestamp cast: a naive local datetime (``zone`` None) or an
    aware one, the text's own zone winning over ``zone``."""
    m = _CAST_TIMESTAMP.fullmatch(text.strip())
    if m is None:
        return None
    year, month, day, hour, minute, second, fraction, own = m.groups()
    local = _datetime(int(year), int(month or 1), int(day or 1), int(hour or 0),
                      int(minute or 0), int(second or 0), _micros(fraction))
    if local is None or zone is None:
        return local
    try:
        tz = zone_of(own) if own else zone_of(zone)
    except ArrowInvalidArgument:
        return None
    return local.replace(tzinfo=tz).astimezone(dt.UTC)


def _infer_timestamp(text: str) -> bool:
    m = _INFER_TIMESTAMP.fullmatch(text)
    if m is None:
        return False
    year, month, day, hour, minute, second, tenth = m.groups()
    return _datetime(int(year), int(month), int(day), int(hour), int(minute), int(second),
                     _micros(tenth)) is not None


def _infer_date(text: str) -> bool:
    m = _INFER_DATE.fullmatch(text)
    return m is not None and _datetime(*map(int, m.groups())) is not None


def _infer_time(text: str) -> bool:
    m = _INFER_TIME.fullmatch(text)
    return m is not None and int(m.group(1)) < 24 and int(m.group(2)) < 60 and \
        int(m.group(3)) < 60


def infer_partition_type(raw: str | None, *, timestamp_tz: str | None = "UTC") -> t.DataType:
    """Spark's type for one directory's raw (escaped) text: int, bigint, decimal(p, 0),
    double, timestamp, date, time, else string; null for ``None`` (the default
    partition).  ``timestamp_tz=None`` infers timestamps without time zone."""
    if raw is None or raw == HIVE_NULL:
        return t.null()
    whole = _java_int(raw)
    if whole is not None:
        if -(2**31) <= whole < 2**31:
            return t.int32()
        if -(2**63) <= whole < 2**63:
            return t.int64()
    number = _java_big_decimal(raw)
    if number is not None and number.as_tuple().exponent >= 0:  # no fraction digits
        value = int(number)
        precision = len(str(abs(value)))
        if precision <= 38:
            return t.decimal128(precision, 0)
    if _java_double(raw) is not None:
        return t.float64()
    unescaped = unescape_partition_text(raw)
    if _infer_timestamp(unescaped):
        return t.timestamp("us", timestamp_tz)
    if _infer_date(raw):
        return t.date32()
    if _infer_time(unescaped):
        return t.time64("ns")
    return t.string()


_INTEGRAL_RANK = {8: 0, 16: 1, 32: 2, 64: 3}


def wider_partition_type(a: t.DataType, b: t.DataType) -> t.DataType:
    """Spark's ``findWiderTypeForPartitionColumn``: int < bigint < decimal(38, 0); int <
    double; date < timestamp; null below all; anything else meets at string."""
    if a == b:
        return a
    if isinstance(a, t.NullType):
        return b
    if isinstance(b, t.NullType):
        return a
    integral = (t.IntegerType, t.DecimalType)
    if isinstance(a, integral) and isinstance(b, integral):
        if isinstance(a, t.IntegerType) and isinstance(b, t.IntegerType):
            return a if a.width >= b.width else b
        digits = [x.precision if isinstance(x, t.DecimalType) else (10 if x.width <= 32 else 20)
                  for x in (a, b)]
        return t.decimal128(min(38, max(digits)), 0)
    kinds = {type(a), type(b)}
    if kinds == {t.FloatingPointType, t.IntegerType}:
        whole = a if isinstance(a, t.IntegerType) else b
        return t.float64() if whole.width <= 32 else t.string()
    if kinds == {t.DateType, t.TimestampType}:
        return a if isinstance(a, t.TimestampType) else b
    return t.string()


def _refuse(raw: str, dtype: t.DataType) -> ArrowInvalid:
    return ArrowInvalid(f"expected a partition value of type {dtype}, found {raw!r}")


def _parsed(value: Any, raw: str, dtype: t.DataType) -> Any:
    """``value`` as parsed from ``raw``, or the error when the parse gave ``None``."""
    if value is None:
        raise _refuse(raw, dtype)
    return value


def partition_value(raw: str | None, dtype: t.DataType, zone: str | None = None) -> Any:
    """The value of a directory's raw (escaped) text under ``dtype``, as Spark's
    ``castPartValueToDesiredType`` reads it; ``None`` (the default partition) is null.
    ``zone`` is the session time zone for timestamps (default: :func:`session_zone`).
    A text that is no value of ``dtype`` is an error (Spark: ``INVALID_PARTITION_VALUE``),
    as is a value ``dtype`` cannot hold."""
    if raw is None or raw == HIVE_NULL or isinstance(dtype, t.NullType):
        return None
    if isinstance(dtype, t.StringType):
        return unescape_partition_text(raw)
    if isinstance(dtype, t.BinaryType):
        return raw.encode()
    if isinstance(dtype, t.IntegerType):
        value = _parsed(_java_int(raw), raw, dtype)
        low, high = ((0, 2**dtype.width) if not dtype.signed
                     else (-(2 ** (dtype.width - 1)), 2 ** (dtype.width - 1)))
        if not low <= value < high:
            raise ArrowInvalid(f"expected a partition value that fits {dtype}, found {raw!r}")
        return value
    if isinstance(dtype, t.FloatingPointType):
        return _parsed(_java_double(raw), raw, dtype)
    if isinstance(dtype, t.DecimalType):
        exact = _parsed(_java_big_decimal(raw), raw, dtype)
        try:
            scaled = exact.quantize(Decimal(1).scaleb(-dtype.scale))
        except InvalidOperation:
            scaled = None
        if scaled is None or scaled != exact or len(scaled.as_tuple().digits) > dtype.precision:
            raise ArrowInvalid(f"expected a partition value that fits {dtype}, found {raw!r}")
        return scaled
    if isinstance(dtype, t.BoolType):
        lowered = raw.lower()
        if lowered not in ("true", "false"):
            raise _refuse(raw, dtype)
        return lowered == "true"
    if isinstance(dtype, t.DateType):
        return _parsed(_cast_date(raw), raw, dtype)
    if isinstance(dtype, t.TimestampType):
        text = unescape_partition_text(raw)
        target = (zone or session_zone()) if dtype.tz else None
        found = _cast_timestamp(text, target)
        if found is None:
            day = _parsed(_cast_date(raw), raw, dtype)
            found = _cast_timestamp(day.isoformat(), target)
        return found
    if isinstance(dtype, t.TimeType):
        m = _CAST_TIME.fullmatch(unescape_partition_text(raw).strip())
        if m is None or int(m.group(1)) > 23 or int(m.group(2)) > 59 or \
                int(m.group(3) or 0) > 59:
            raise _refuse(raw, dtype)
        hour, minute, second, fraction = m.groups()
        per_second = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[dtype.unit]
        nanos = int((fraction or "").ljust(9, "0"))
        ticks = (int(hour) * 3600 + int(minute) * 60 + int(second or 0)) * per_second
        return ticks + nanos * per_second // 10**9
    raise ArrowInvalid(f"expected a partition column of a plain type, found {dtype}")


__all__ = [
    "HIVE_NULL",
    "escape_partition_text",
    "infer_partition_type",
    "partition_text",
    "partition_value",
    "session_zone",
    "unescape_partition_text",
    "wider_partition_type",
    "zone_of",
]
