"""Type inference for :func:`quiver.array.build.array`: the type pyarrow would give a list
of Python values (see the rules in :mod:`quiver.array.build`).

>>> import datetime
>>> str(infer_type([1, 2.5])), str(infer_type([datetime.date(2024, 1, 2), None]))
('double', 'date32[day]')
"""

from __future__ import annotations

import datetime as _dt
import itertools
import uuid as _uuid
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

import numpy as np

from .. import types as t
from ..errors import ArrowInvalid, ArrowTypeError, NotSupported
from .build_common import (
    FLOAT_TYPES,
    INT_TYPES,
    NOT_INTS,
    is_int_kind,
    is_nat_kind,
)


def tz_name(tz: _dt.tzinfo) -> str:
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
    if all(is_int_kind(k) for k in kinds):
        if all(issubclass(k, np.integer) for k in kinds):  # numpy ints alone
            return _numpy_int_type(kinds)
        return t.int64()
    if all(
        issubclass(k, (*INT_TYPES, *FLOAT_TYPES)) and not issubclass(k, NOT_INTS)
        for k in kinds
    ):
        if all(issubclass(k, np.generic) for k in kinds):  # numpy numbers alone
            return _numpy_float_type(kinds)
        return t.float64()  # (Python numbers among them)
    if all(issubclass(k, str) for k in kinds):
        return t.string()
    if all(issubclass(k, (str, bytes, bytearray, memoryview)) for k in kinds):
        return t.binary()  # (text beside bytes: its UTF-8 bytes, as pyarrow infers)
    if kinds == {np.datetime64} or kinds == {np.timedelta64}:
        return _numpy_scalar_type(values)
    if any(issubclass(k, Decimal) for k in kinds) and all(
            issubclass(k, Decimal) or is_int_kind(k) for k in kinds):
        # the Decimals give the precision and scale; ints beside them must fit it (pyarrow's
        # rule: they do not widen it, and the build refuses one that does not fit)
        shapes = [_decimal_shape(v) for v in values if isinstance(v, Decimal)]
        scale = max(s for _, s in shapes)
        precision = max(max(i for i, _ in shapes) + scale, 1)
        if precision > 76:
            raise ArrowInvalid(f"expected Decimals of at most 76 digits, found {precision}")
        return t.decimal128(precision, scale) if precision <= 38 else t.decimal256(
            precision, scale
        )
    if all(issubclass(k, _dt.datetime) for k in kinds):
        # the first datetime's zone, as pyarrow: naive first gives a naive timestamp (the
        # aware ones kept as their UTC instants), aware first its zone (naive ones as UTC)
        tz = next(v.tzinfo for v in values if v is not None)
        return t.timestamp("us", None if tz is None else tz_name(tz))
    if all(issubclass(k, _dt.date) for k in kinds):
        times = sorted(k.__name__ for k in kinds
                       if issubclass(k, _dt.datetime) and not is_nat_kind(k))
        if times:  # pyarrow refuses [datetime, date] and drops the time of [date, datetime]
            raise ArrowTypeError(
                f"expected dates or datetimes to infer a type, found both (date and "
                f"{', '.join(times)}); a date32 would drop the time of day: give the type"
            )
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
        _check_field_names(names)
        return t.struct(
            [t.field(n, infer_type([None if v is None else v.get(n) for v in values]))
             for n in names]
        )
    names_found = sorted(k.__name__ for k in kinds)
    raise ArrowInvalid(
        f"expected values of one kind to infer a type, found {', '.join(names_found)}"
    )


def _numpy_int_type(kinds: set[type]) -> t.DataType:
    """The integer type of numpy integer scalars of several dtypes (pyarrow's unification):
    the widest of one signedness; signed and unsigned ones give the widest signed type if
    it is wider than every unsigned one, and are refused otherwise (no type holds both)."""
    dtypes = [np.dtype(k) for k in kinds]
    signed = max((d.itemsize for d in dtypes if d.kind == "i"), default=0)
    unsigned = max((d.itemsize for d in dtypes if d.kind == "u"), default=0)
    if signed and unsigned and signed <= unsigned:
        found = ", ".join(sorted(str(d) for d in dtypes))
        raise ArrowInvalid(f"expected numpy integer scalars of one signedness, or signed ones "
                           f"wider than the unsigned ones, found {found}; give the type")
    return t.IntegerType(8 * (signed or unsigned), bool(signed))


def _numpy_float_type(kinds: set[type]) -> t.DataType:
    """The floating-point type of numpy float (and integer) scalars (pyarrow's unification):
    the widest float among them; half floats beside integers are refused, as in pyarrow
    (float32 and float64 take the integers, checked to be exact)."""
    widths = {np.dtype(k).itemsize * 8 for k in kinds if issubclass(k, np.floating)}
    if max(widths) > 64:
        raise NotSupported(f"numpy float{max(widths)} scalars have no Arrow type; convert "
                           "them to float64 or give the type")
    if max(widths) == 16 and any(issubclass(k, np.integer) for k in kinds):
        found = ", ".join(sorted(str(np.dtype(k)) for k in kinds))
        raise ArrowInvalid(f"expected numpy half floats alone or beside wider floats, found "
                           f"{found}; give the type")
    return t.FloatingPointType(max(widths))


def _numpy_scalar_type(values: list[Any]) -> t.DataType:
    """timestamp / duration of the one unit of numpy datetime64 / timedelta64 scalars
    (pyarrow's rule: one unit of s, ms, us or ns; NaT of no unit beside them is a null),
    date32 of datetime64[D] ones (pyarrow takes only those whose date Python cannot hold)."""
    kind = "M" if isinstance(next(v for v in values if v is not None), np.datetime64) else "m"
    dtypes = {v.dtype for v in values if v is not None}
    units = {np.datetime_data(d)[0] for d in dtypes} - {"generic"}
    if len(units) != 1:
        found = ", ".join(sorted(units)) or "NaT of no unit"
        raise ArrowInvalid(f"expected numpy {kind}8 scalars of one unit, found {found}")
    unit = units.pop()
    if kind == "M" and unit == "D":  # days: a date32, as numpy datetime64[D] arrays give
        return t.date32()
    if unit not in ("s", "ms", "us", "ns"):
        raise NotSupported(f"numpy {kind}8 unit {unit!r} has no Arrow type; convert the "
                           f"scalars with .astype('{kind}8[s]') or give the type")
    return t.timestamp(unit) if kind == "M" else t.duration(unit)


def _check_field_names(names: dict[Any, None]) -> None:
    """Struct field names from dict keys must be text, as in pyarrow (which also decodes
    bytes keys; quiver's struct builder looks fields up by their text, so it refuses them)."""
    for n in names:
        if not isinstance(n, str):
            if isinstance(n, bytes):
                raise NotSupported(f"dict keys of type bytes are not supported, found {n!r}; "
                                   "use str keys")
            raise ArrowTypeError(
                f"expected dict keys of type str or bytes, found {n!r} of type "
                f"{type(n).__name__}"
            )


def _is_mdn(k: type) -> bool:
    return (issubclass(k, tuple) and getattr(k, "_fields", None) == (
        "months", "days", "nanoseconds"
    )) or k.__name__ == "MonthDayNano"
