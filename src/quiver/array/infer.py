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
from ..errors import ArrowInvalid
from .build_common import (
    _FLOAT_TYPES,
    _INT_TYPES,
)


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
