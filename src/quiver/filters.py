"""Row filters in the form of ``pyarrow.parquet.read_table(filters=...)``.

A filter is a list of ``(column, op, value)`` tuples (all must hold), or a list of such
lists (any list may hold).  Ops: ``==`` (or ``=``), ``!=``, ``<``, ``<=``, ``>``, ``>=``,
``in``, ``not in``, ``is null``, ``is not null``.  A column is a name or a dotted path
into structs (``"a.b"``).  The result is the rows pyarrow keeps for the same filters
(its ``filters_to_expression`` and ``Table.filter``): a comparison with a null is null and
drops the row; ``in`` matches a null only when ``None`` is among the values, and NaN
matches NaN; ``not in`` is its negation, so it keeps nulls unless ``None`` is listed.

:func:`batches_may_match` decides from a file's statistics which batches may hold a
matching row (a reader skips the others unread), :func:`batches_all_match` which ones
match in every row (a reader keeps those as read); :func:`filter_mask` evaluates the
filter on a batch's rows with numpy.

>>> import quiver as qv
>>> batch = qv.record_batch({"a": qv.array([1, 5, None, 9]), "s": qv.array(["x", "y", "z", "x"])})
>>> dnf = normalize([("a", ">", 2), ("s", "==", "x")])
>>> filter_mask(batch, dnf).tolist()
[False, False, False, True]
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np

from . import registry
from . import types as t
from .array.base import Array, make_array
from .array.cast import cast
from .array.data import null_mask
from .array.decimal import compare as decimal_compare
from .array.decimal import limbs, value_range
from .array.select import take
from .buffers import unpack_bits
from .errors import (
    ArrowError,
    ArrowInvalid,
    ArrowInvalidArgument,
    ArrowKeyError,
    ArrowTypeError,
    NotSupported,
)
from .layout import storage_numpy_dtype

OPS = ("==", "!=", "<", "<=", ">", ">=", "in", "not in", "is null", "is not null")
_ALIASES = {"=": "=="}


@dataclass(frozen=True, slots=True)
class Predicate:
    """One ``(column, op, value)`` condition; ``path`` is the column's dotted path."""

    path: tuple[str, ...]
    op: str
    value: Any = None


DNF = list[list[Predicate]]


def _predicate(item: Any) -> Predicate:
    if not isinstance(item, (tuple, list)) or len(item) not in (2, 3):
        raise ArrowInvalidArgument(
            f"expected a filter as (column, op, value), found {item!r}"
        )
    column, op = item[0], str(item[1]).strip().lower()
    value = item[2] if len(item) == 3 else None
    op = _ALIASES.get(op, op)
    if op not in OPS:
        raise ArrowInvalidArgument(f"expected a filter op among {list(OPS)}, found {item[1]!r}")
    if len(item) == 2 and op not in ("is null", "is not null"):
        raise ArrowInvalidArgument(
            f"expected a filter as (column, op, value) for op {op!r}, found {item!r} (no value)"
        )
    if op in ("in", "not in"):
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            raise ArrowInvalidArgument(
                f"expected a list of values for {op!r}, found {value!r}"
            )
        value = tuple(value)
    path = tuple(column.split(".")) if isinstance(column, str) else tuple(column)
    return Predicate(path, op, value)


def normalize(filters: Any) -> DNF:
    """Filters as a list of AND-groups (an OR of ANDs); None or [] gives no filter ([])."""
    if not filters:
        return []
    if all(isinstance(f, (tuple, list)) and f and not isinstance(f[0], (tuple, list))
           for f in filters):
        return [[_predicate(f) for f in filters]]
    return [[_predicate(f) for f in group] for group in filters]


# -- pruning by statistics ------------------------------------------------------------


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and value != value


def _holds_floats(dtype: t.DataType) -> bool:
    """Whether a column's values are floating-point (a dictionary's, an extension's
    storage's): values that may be NaN."""
    dtype = t.storage_of(dtype)
    if isinstance(dtype, t.DictionaryType):
        dtype = t.storage_of(dtype.value_type)
    return isinstance(dtype, t.FloatingPointType)


def _bound_compare(arr: Array, op: str, value: Any) -> np.ndarray | None:
    """``arr op value`` per batch on an array of bounds; None when they do not compare."""
    try:
        return _compare(arr, t.storage_of(arr.type), op, value)
    except (ArrowError, TypeError, ValueError, OverflowError):
        return None


def _column_may_hold(p: Predicate, stats: Any, c: int, nan_is_largest: bool,
                     is_float: bool) -> np.ndarray:
    """Per batch: False only where the statistics prove no row of column ``c`` satisfies
    ``p``; batches whose row or null count (or, for a float column in Spark's order, NaN
    count) the statistics do not state are never ruled out."""
    unknown = ~(stats.row_known & stats.null_known[c])
    if nan_is_largest and is_float:
        unknown |= ~stats.nan_known[c]
    return _proven_may_hold(p, stats, c, nan_is_largest, is_float) | unknown


def _proven_may_hold(p: Predicate, stats: Any, c: int, nan_is_largest: bool,
                     is_float: bool) -> np.ndarray:
    """:func:`_column_may_hold` from the counts and bounds, taken as stated.
    ``nan_is_largest``: NaN equals NaN and exceeds every number (Spark's order), so
    batches holding NaN are never ruled out by their bounds.  A float column's NaN count
    the statistics do not state may be anything (``in [nan]`` and ``!=`` keep such
    batches in either order)."""
    n = len(stats.row_counts)
    rows, nulls, nans = stats.row_counts, stats.null_counts[c], stats.nan_counts[c]
    has_nan = (nans > 0) | ~stats.nan_known[c] if is_float else nans > 0
    if p.op == "is null":
        return nulls > 0
    if p.op == "is not null":
        return nulls < rows
    if p.op == "not in":
        return np.ones(n, bool)
    some = nulls < rows
    null_ok = (nulls > 0) if (p.op == "in" and None in p.value) else np.zeros(n, bool)
    mins, maxs = stats.mins[c], stats.maxs[c]
    if mins is None or maxs is None:
        return some | null_ok
    bounded = stats.has_bounds[c]
    if nan_is_largest:
        bounded = bounded & ~has_nan

    if nan_is_largest and _is_nan(p.value) and p.op in ("<", "<=", ">", ">=", "==", "!="):
        # Spark: NaN equals NaN and exceeds every number; bounds leave NaN out
        numbers = rows - nulls - nans > 0
        return {"<": numbers, "<=": some, ">": np.zeros(n, bool), ">=": has_nan,
                "==": has_nan, "!=": numbers}[p.op]

    def within(v: Any) -> np.ndarray:
        if _is_nan(v):
            return has_nan if nan_is_largest else np.zeros(n, bool)
        low, high = _bound_compare(mins, "<=", v), _bound_compare(maxs, ">=", v)
        return np.ones(n, bool) if low is None or high is None else low & high

    if p.op == "==":
        cond = within(p.value)
    elif p.op == "in":
        cond = np.zeros(n, bool)
        for v in p.value:
            if v is None:
                continue
            if _is_nan(v):  # set membership matches NaN with NaN (pyarrow's is_in), unlike ==
                cond |= has_nan
                continue
            if is_float and isinstance(v, (int, float)) and not isinstance(v, bool):
                # is_in takes the member in the column's float type (0.1 as float32 is
                # above the double 0.1), as the rows are matched
                member = _float_member(storage_numpy_dtype(t.storage_of(mins.type)), v)
                if member is None:
                    continue
                v = float(member)
            cond |= within(v)
    elif p.op == "!=":
        low, high = _bound_compare(mins, "==", p.value), _bound_compare(maxs, "==", p.value)
        if low is None or high is None:
            cond = np.ones(n, bool)
        else:
            constant = stats.min_exact[c] & stats.max_exact[c] & low & high
            cond = ~constant | has_nan
    else:
        side = mins if p.op in ("<", "<=") else maxs
        found = _bound_compare(side, p.op, p.value)
        cond = np.ones(n, bool) if found is None else found
    return (some & np.where(bounded, cond, True)) | null_ok


def _over_groups(dnf: DNF, stats: Any, schema: t.Schema,
                 decide: Callable[[Predicate, int, bool], np.ndarray], uncovered: bool
                 ) -> np.ndarray:
    """Per batch: any group whose predicates all hold by ``decide(p, column index,
    whether the column holds floats)``; a predicate on a column the statistics do not
    cover (a dotted path, another file's columns) holds as ``uncovered`` says."""
    n = len(stats.row_counts)
    if not dnf:
        return np.ones(n, bool)
    names = schema.names
    out = np.zeros(n, bool)
    for group in dnf:
        holds = np.ones(n, bool)
        for p in group:
            c = names.index(p.path[0]) if len(p.path) == 1 and p.path[0] in names else -1
            if not 0 <= c < len(stats.null_counts):
                if uncovered:
                    continue
                holds[:] = False
                break
            holds &= decide(p, c, _holds_floats(schema.field(c).type))
        out |= holds
    return out


def batches_may_match(dnf: DNF, stats: Any, schema: t.Schema, *,
                      nan_is_largest: bool = False) -> np.ndarray:
    """Per batch of a file, whether it may hold a row the filter keeps, from its
    statistics (a :class:`~quiver.ipc.statistics.FileStatistics`), vectorized."""
    return _over_groups(dnf, stats, schema, lambda p, c, is_float: _column_may_hold(
        p, stats, c, nan_is_largest, is_float), uncovered=True)


def _column_holds_throughout(p: Predicate, stats: Any, c: int, is_float: bool
                             ) -> np.ndarray:
    """Per batch: True only where the statistics prove that every row of column ``c``
    satisfies ``p`` (exact counts and exact bounds only; nulls, and NaN in a float
    column, fail a comparison, so a comparison needs none of them)."""
    n = len(stats.row_counts)
    rows, nulls = stats.row_counts, stats.null_counts[c]
    counted = stats.row_known & stats.null_known[c]
    if p.op == "is null":
        return counted & (nulls == rows)
    if p.op == "is not null":
        return counted & (nulls == 0)
    mins, maxs = stats.mins[c], stats.maxs[c]
    if p.op not in ("==", "<", "<=", ">", ">=") or mins is None or maxs is None or (
            p.value is None or _is_nan(p.value)):
        return np.zeros(n, bool)
    clean = stats.null_known[c] & (nulls == 0) & stats.has_bounds[c]
    if is_float:
        clean &= stats.nan_known[c] & (stats.nan_counts[c] == 0)
    if p.op == "==":
        low, high = _bound_compare(mins, "==", p.value), _bound_compare(maxs, "==", p.value)
        proven = None if low is None or high is None else (
            low & high & stats.min_exact[c] & stats.max_exact[c])
    else:
        # both sides must compare (an int64 bound past 2**53 against a float refuses, as
        # the rows would: such a batch is evaluated, and raises as pyarrow does)
        low, high = _bound_compare(mins, p.op, p.value), _bound_compare(maxs, p.op, p.value)
        if low is None or high is None:
            proven = None
        elif p.op in (">", ">="):  # the least value satisfies it: all do
            proven = low & stats.min_exact[c]
        else:  # the greatest value satisfies it: all do
            proven = high & stats.max_exact[c]
    return np.zeros(n, bool) if proven is None else clean & proven


def batches_all_match(dnf: DNF, stats: Any, schema: t.Schema) -> np.ndarray:
    """Per batch of a file, whether its statistics prove that the filter keeps every one
    of its rows (then it need not be evaluated row by row), vectorized; pyarrow's
    semantics (NaN fails every comparison), dotted paths never proven."""
    return _over_groups(dnf, stats, schema, lambda p, c, is_float: _column_holds_throughout(
        p, stats, c, is_float), uncovered=False)


# -- evaluating on rows ----------------------------------------------------------------


def _resolve(batch: Any, path: tuple[str, ...]) -> tuple[Array, np.ndarray | None]:
    """The column at ``path`` (structs descended) and the validity of its parents."""
    names = batch.schema.names
    if path[0] not in names:
        raise ArrowKeyError(f"expected a column named {path[0]!r} for the filter, found {names}")
    arr = batch.column(names.index(path[0]))
    parents: np.ndarray | None = None
    for name in path[1:]:
        dtype = t.storage_of(arr.type)
        if not isinstance(dtype, t.StructType):
            raise ArrowKeyError(f"expected a struct to find {name!r} in, found {dtype}")
        fields = [f.name for f in dtype.fields]
        if name not in fields:
            raise ArrowKeyError(f"expected a field named {name!r} in {dtype}, found {fields}")
        valid = valid_mask(arr)
        parents = valid if parents is None else (parents if valid is None else parents & valid)
        arr = arr.children[fields.index(name)].slice(arr.offset, len(arr))
    return arr, parents


def valid_mask(arr: Array) -> np.ndarray | None:
    """The validity of ``arr``'s own slots as bools (all False for the null type), None
    when every slot is valid."""
    if isinstance(t.storage_of(arr.type), t.NullType):
        return np.zeros(len(arr), bool)
    return arr.is_valid_mask()


def _storage(arr: Array) -> Array:
    """An extension column as its storage."""
    if isinstance(arr.type, t.ExtensionType):
        return make_array(arr.type.storage_type, len(arr), arr.buffers, arr.children,
                          arr.null_count, arr.offset, arr.dictionary)
    return arr


def _plain(arr: Array) -> Array:
    """Views, run-end encoded and extension columns as their plain equivalents."""
    arr = _storage(arr)
    dtype = arr.type
    if isinstance(dtype, t.RunEndEncodedType):
        ends_arr, values = arr.children
        ends = ends_arr.buffers[1].view(storage_numpy_dtype(ends_arr.type))[
            ends_arr.offset : ends_arr.offset + len(ends_arr)].astype(np.int64)
        runs = np.searchsorted(ends, np.arange(arr.offset, arr.offset + len(arr)),
                               side="right")
        if len(runs) and int(runs[-1]) >= len(values):
            raise ArrowInvalid(f"expected run ends covering {arr.offset + len(arr)} values, "
                               f"found {len(ends)} runs")
        return _plain(take(values, runs))
    if isinstance(dtype, (t.StringViewType, t.BinaryViewType)):
        target = t.large_string() if isinstance(dtype, t.StringViewType) else t.large_binary()
        return cast(arr, target)
    return arr


def _compare_numbers(column: np.ndarray, op: str, value: Any) -> np.ndarray:
    if op == "==":
        return column == value
    if op == "!=":
        return column != value
    if op == "<":
        return column < value
    if op == "<=":
        return column <= value
    if op == ">":
        return column > value
    return column >= value


def _sign_of_bytes(starts: np.ndarray, lengths: np.ndarray, data: np.ndarray,
                   value: bytes) -> np.ndarray:
    """-1, 0, 1 per row comparing byte strings with ``value``, in pieces of rows."""
    n = len(starts)
    out = np.empty(n, dtype=np.int8)
    width = len(value)
    target = np.frombuffer(value, np.uint8).astype(np.int16)
    step = max(1, (1 << 22) // max(width, 1))
    columns = np.arange(width)
    for lo in range(0, n, step):
        s, ln = starts[lo : lo + step], lengths[lo : lo + step]
        if width:
            inside = columns[None, :] < ln[:, None]
            index = np.where(inside, s[:, None] + columns[None, :], 0)
            picked = data[index].astype(np.int16) if len(data) else np.zeros(index.shape, np.int16)
            got = np.where(inside, picked, np.int16(-1))
            differ = got != target[None, :]
            any_diff = differ.any(axis=1)
            first = differ.argmax(axis=1)
            rows = np.arange(len(s))
            by_byte = np.sign(got[rows, first] - target[first])
        else:
            any_diff = np.zeros(len(s), bool)
            by_byte = np.zeros(len(s), np.int16)
        out[lo : lo + step] = np.where(any_diff, by_byte, np.sign(ln - width))
    return out


def _evaluate(arr: Array, p: Predicate, parents: np.ndarray | None = None
              ) -> tuple[np.ndarray, np.ndarray | None]:
    """(result, validity) of ``p`` on every row of ``arr``; validity None: all valid.
    ``parents`` is the validity of the structs above the column (a null parent makes the
    field null)."""
    if p.op in ("is null", "is not null"):
        # logical nulls: a null dictionary value, union child or run is null too
        is_null = null_mask(_storage(arr))
        if parents is not None:
            is_null = is_null | ~parents
        return (is_null if p.op == "is null" else ~is_null), None
    arr = _plain(arr)
    dtype = t.storage_of(arr.type)
    own = valid_mask(arr)
    valid = own if parents is None else (parents if own is None else own & parents)
    n = len(arr)
    if isinstance(dtype, t.DictionaryType):
        inner = Predicate(p.path, "in", p.value) if p.op == "not in" else p
        values_result, values_valid = _evaluate(arr.dictionary, inner)
        width = dtype.index_type.width // 8
        kind = "i" if dtype.index_type.signed else "u"
        idx = arr.buffers[1].view(f"<{kind}{width}")[arr.offset : arr.offset + n]
        idx = idx.astype(np.int64)
        if valid is not None:
            idx = np.where(valid, idx, 0)
        if len(values_result) == 0:
            result, inner_valid = np.zeros(n, bool), np.zeros(n, bool)
        else:
            result = values_result[idx]
            inner_valid = np.ones(n, bool) if values_valid is None else values_valid[idx]
        if p.op in ("in", "not in"):
            # a null index is a null value: matched only when None is listed
            hit = result if valid is None else np.where(valid, result, None in p.value)
            return (hit if p.op == "in" else ~hit), None
        return result, inner_valid if valid is None else valid & inner_valid
    if p.op in ("in", "not in"):
        hits = np.zeros(n, bool)
        listed = [v for v in p.value if v is not None]
        if isinstance(dtype, t.IntegerType) and all(
                isinstance(v, int) and not isinstance(v, bool) for v in listed):
            # one pass over the column for the whole set (values outside the type: none)
            info = np.iinfo(_numbers(arr, dtype).dtype)
            members = np.array([v for v in listed if info.min <= v <= info.max],
                               dtype=_numbers(arr, dtype).dtype)
            hits = np.isin(_numbers(arr, dtype), members)
            listed = []
        elif isinstance(dtype, t.FloatingPointType) and len(listed) > 4 and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in listed):
            column = _numbers(arr, dtype)
            bits = column.dtype.str.replace("f", "u")
            members = [_float_member(column.dtype, v) for v in listed if not _is_nan(v)]
            plain = np.array([m for m in members if m is not None], column.dtype)
            hits = np.isin(column.view(bits), plain.view(bits))  # -0.0 apart from 0.0
            if any(_is_nan(v) for v in listed):
                hits |= np.isnan(column)
            listed = []
        for v in listed:
            if isinstance(dtype, t.FloatingPointType) and isinstance(v, (int, float)):
                # set membership as pyarrow's is_in: NaN matches NaN, and -0.0 and 0.0
                # are different members (compared by their bits)
                column = _numbers(arr, dtype)
                member = None if _is_nan(v) else _float_member(column.dtype, v)
                if _is_nan(v):
                    hits |= np.isnan(column)
                elif member is not None:
                    bits = column.dtype.str.replace("f", "u")
                    hits |= column.view(bits) == member.view(bits)
            else:
                hits |= _compare(arr, dtype, "==", v)
        if valid is not None:
            hits = np.where(valid, hits, None in p.value)
        return (hits if p.op == "in" else ~hits), None
    return _compare(arr, dtype, p.op, p.value), valid


def _numbers(arr: Array, dtype: t.DataType) -> np.ndarray:
    return arr._fixed_values_view(storage_numpy_dtype(dtype))


_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def _micros(delta: dt.timedelta) -> int:
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _temporal_value(dtype: t.DataType, value: Any) -> tuple[int, bool]:
    """``value`` in the column's units: (the largest whole count not above it, whether it
    is exact).  Values finer than the unit are not rounded into equality."""
    if isinstance(dtype, t.DateType):
        if isinstance(value, dt.datetime):
            us = _micros(value - (_EPOCH_UTC if value.tzinfo else _EPOCH))
        else:
            us = (value - dt.date(1970, 1, 1)).days * 86_400_000_000
        per = 86_400_000_000 if dtype.unit == "day" else 1_000
    elif isinstance(dtype, t.TimestampType):
        if isinstance(value, dt.datetime):
            us = _micros(value - (_EPOCH_UTC if value.tzinfo else _EPOCH))
        else:  # a date: its midnight
            us = (value - dt.date(1970, 1, 1)).days * 86_400_000_000
        per = 1_000_000 // _PER_SECOND[dtype.unit] if dtype.unit != "ns" else 0
    elif isinstance(dtype, t.TimeType):
        us = ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond
        per = 1_000_000 // _PER_SECOND[dtype.unit] if dtype.unit != "ns" else 0
    else:  # duration
        us = _micros(value)
        per = 1_000_000 // _PER_SECOND[dtype.unit] if dtype.unit != "ns" else 0
    if per == 0:  # nanoseconds: every microsecond value is exact
        return us * 1000, True
    return us // per, us % per == 0


def _compare_inexact(column: np.ndarray, op: str, floor: Any) -> np.ndarray:
    """``column op v`` for a ``v`` strictly between ``floor`` and the next value."""
    if op == "==":
        return np.zeros(len(column), bool)
    if op == "!=":
        return np.ones(len(column), bool)
    return column <= floor if op in ("<", "<=") else column > floor


# the largest integer magnitude a float column of each width compares with: pyarrow turns
# the filter's integer into the column's float type, refusing one it would round
_EXACT_INT = {64: 2**53, 32: 2**24}


def _check_exact(dtype: t.DataType, value: Any) -> None:
    """Refuse an integer filter value that a float column's type would round (pyarrow's
    rule: the comparison would otherwise match a neighbouring float)."""
    if not isinstance(dtype, t.FloatingPointType) or isinstance(value, bool) or not isinstance(
            value, int):
        return
    limit = _EXACT_INT.get(dtype.width)
    if limit is not None and abs(value) > limit:
        raise ArrowInvalid(
            f"expected an integer that a {dtype} column holds exactly (-{limit} to {limit}) "
            f"to compare with, found {value}"
        )


def _float_member(dtype: np.dtype, v: Any) -> Any:
    """``v`` as a member of the set of a float column of numpy ``dtype``, or None when no
    float of that width equals it (an integer it would round: pyarrow matches nothing
    then)."""
    as_float = np.array(v, dtype)
    if isinstance(v, int) and not _is_nan(v) and int(as_float) != v:
        return None
    return as_float


def _decimal_floor(dtype: t.DecimalType, value: Any) -> tuple[int, bool]:
    """(the unscaled integer of ``value`` at the column's scale, floored; whether it is
    exact): a Decimal finer than the scale compares between two column values, as in
    pyarrow."""
    scaled = Decimal(value).scaleb(dtype.scale)
    floor = int(scaled.to_integral_value(rounding="ROUND_FLOOR"))
    return floor, floor == scaled


def _compare_decimal(arr: Array, dtype: t.DecimalType, op: str, value: Any) -> np.ndarray:
    """``arr op value`` on a decimal column, exact for a value of any scale or size."""
    if not Decimal(value).is_finite():
        raise ArrowInvalid(f"expected a finite Decimal to compare with {dtype}, found {value}")
    floor, exact = _decimal_floor(dtype, value)
    low, high = value_range(dtype.width)
    if not low <= floor <= high:  # beyond every value the column's width holds
        below = floor < 0
        result = {"==": False, "!=": True, "<": not below, "<=": not below,
                  ">": below, ">=": below}[op]
        return np.full(len(arr), result)
    sign = decimal_compare(limbs(arr.buffers[1], dtype.width, arr.offset, len(arr)), floor)
    if exact:
        return _compare_numbers(sign, op, 0)
    return _compare_inexact(sign, op, 0)


def _compare(arr: Array, dtype: t.DataType, op: str, value: Any) -> np.ndarray:
    if value is None:
        return np.zeros(len(arr), bool)  # a comparison with null is null: no row kept
    return _rule(dtype).compare(arr, dtype, op, value)


def _accepts(dtype: t.DataType, value: Any) -> bool:
    """Whether a filter value of this Python type compares with a column of ``dtype``
    (as pyarrow would, without guessing: a string is not a number, a naive datetime is
    not a zoned one)."""
    return value is None or _rule(dtype).accepts(dtype, value)


@dataclass(frozen=True, slots=True)
class FilterRule:
    """How a column of one type class compares with a filter value (the registry's
    ``filter`` piece): ``compare(array, dtype, op, value) -> mask`` and
    ``accepts(dtype, value) -> bool`` (whether a Python value of its kind compares)."""

    compare: Callable[[Array, Any, str, Any], np.ndarray]
    accepts: Callable[[Any, Any], bool]

    def __repr__(self) -> str:  # stable across a module imported anew (the registry's check)
        return f"FilterRule({self.compare.__qualname__}, {self.accepts.__qualname__})"


def _rule(dtype: t.DataType) -> FilterRule:
    found = registry.table("filter").get(type(dtype))
    if found is None:
        raise registry.missing_piece("filter", type(dtype))
    return found


def _compare_numeric(arr: Array, dtype: Any, op: str, value: Any) -> np.ndarray:
    column = _numbers(arr, dtype)
    _check_exact(dtype, value)
    if isinstance(value, float) or isinstance(dtype, t.FloatingPointType):
        # as pyarrow: the column widened to double, compared with the double; an
        # integer column must convert exactly (pyarrow's safe cast refuses otherwise)
        if isinstance(dtype, t.IntegerType) and dtype.width == 64 and len(column) and (
                int(np.abs(column.astype(np.float64)).max()) > 2**53):
            raise ArrowInvalid(
                f"expected integers that convert exactly to double to compare with "
                f"{value!r}, found values beyond 2**53 in a {dtype} column"
            )
        return _compare_numbers(column.astype(np.float64), op, float(value))
    info = np.iinfo(column.dtype)
    if not info.min <= value <= info.max:  # outside the type: settled without the data
        below = value < info.min
        result = {"==": False, "!=": True, "<": not below, "<=": not below,
                  ">": below, ">=": below}[op]
        return np.full(len(column), result)
    return _compare_numbers(column, op, value)


def _compare_temporal(arr: Array, dtype: Any, op: str, value: Any) -> np.ndarray:
    floor, exact = _temporal_value(dtype, value)
    column = _numbers(arr, dtype).astype(np.int64)
    if exact:
        return _compare_numbers(column, op, floor)
    return _compare_inexact(column, op, floor)


def _compare_bool(arr: Array, dtype: Any, op: str, value: Any) -> np.ndarray:
    bits = unpack_bits(arr.buffers[1], arr.offset, len(arr))
    return _compare_numbers(bits.astype(np.int8), op, int(value))


def _compare_bytes(arr: Array, dtype: Any, op: str, value: Any) -> np.ndarray:
    raw = value.encode() if isinstance(value, str) else bytes(value)
    width = "<i8" if dtype.large else "<i4"
    offsets = arr.buffers[1].view(width)[arr.offset : arr.offset + len(arr) + 1]
    offsets = offsets.astype(np.int64)
    sign = _sign_of_bytes(offsets[:-1], offsets[1:] - offsets[:-1], arr.buffers[2], raw)
    return _compare_numbers(sign, op, 0)


def _not_comparable(arr: Array, dtype: Any, op: str, value: Any) -> np.ndarray:
    raise NotSupported(f"expected a filter on a comparable column, found {dtype} ({op})")


def _a_number(dtype: Any, value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _a_timestamp(dtype: Any, value: Any) -> bool:
    if isinstance(value, dt.datetime):
        return (value.tzinfo is not None) == (dtype.tz is not None)
    return isinstance(value, dt.date)


def _a_date(dtype: Any, value: Any) -> bool:
    return isinstance(value, dt.date) and not (
        isinstance(value, dt.datetime) and value.tzinfo is not None)


def _a_time(dtype: Any, value: Any) -> bool:
    return isinstance(value, dt.time) and value.tzinfo is None


def _any(dtype: Any, value: Any) -> bool:
    return True  # other types: the comparison itself says whether it can


def _of(*kinds: type) -> Callable[[Any, Any], bool]:
    """Accepts values of ``kinds`` (never a bool unless ``bool`` is one)."""

    def accepts(dtype: Any, value: Any) -> bool:
        return isinstance(value, kinds) and (bool in kinds or not isinstance(value, bool))

    return accepts


for _filter_rule, _classes in (
    (FilterRule(_compare_numeric, _a_number), (t.IntegerType, t.FloatingPointType)),
    (FilterRule(_compare_temporal, _a_date), (t.DateType,)),
    (FilterRule(_compare_temporal, _a_time), (t.TimeType,)),
    (FilterRule(_compare_temporal, _a_timestamp), (t.TimestampType,)),
    (FilterRule(_compare_temporal, _of(dt.timedelta)), (t.DurationType,)),
    (FilterRule(_compare_bool, _of(bool)), (t.BoolType,)),
    (FilterRule(_compare_decimal, _of(int, Decimal)), (t.DecimalType,)),
    (FilterRule(_compare_bytes, _of(str)), (t.StringType,)),
    (FilterRule(_compare_bytes, _of(bytes, bytearray)), (t.BinaryType,)),
    # views are compared as their large_ type (see _plain), but say what they accept
    (FilterRule(_not_comparable, _of(str)), (t.StringViewType,)),
    (FilterRule(_not_comparable, _of(bytes, bytearray)), (t.BinaryViewType,)),
    (FilterRule(_not_comparable, _any), (
        t.NullType, t.IntervalType, t.FixedSizeBinaryType, t.ListType, t.LargeListType,
        t.ListViewType, t.LargeListViewType, t.FixedSizeListType, t.StructType, t.MapType,
        t.UnionType, t.DictionaryType, t.RunEndEncodedType, t.ExtensionType)),
):
    registry.register("filter", _filter_rule, *_classes)


def check_filters(dnf: DNF, schema: t.Schema) -> None:
    """Every predicate names a column of ``schema`` and compares it with a value of a
    fitting Python type; raises quiver's error before any data is read (or skipped)."""
    for group in dnf:
        for p in group:
            dtype = _type_at(schema, p.path)
            if p.op in ("is null", "is not null"):
                continue
            values = p.value if p.op in ("in", "not in") else (p.value,)
            if p.op not in ("in", "not in"):
                _check_exact(_comparable(dtype), p.value)
            elif any(isinstance(v, float) for v in values):
                # pyarrow builds the value set first: ints past 2**53 beside floats fail
                for v in values:
                    _check_exact(t.float64(), v)
            for v in values:
                if _is_nan(v) and isinstance(_comparable(dtype), t.FloatingPointType):
                    continue
                if not _accepts(_comparable(dtype), v):
                    raise ArrowTypeError(
                        f"expected a filter value comparable with column "
                        f"{'.'.join(p.path)} ({dtype}), found {v!r} ({type(v).__name__})"
                    )


def _comparable(dtype: t.DataType) -> t.DataType:
    dtype = t.storage_of(dtype) if isinstance(dtype, t.ExtensionType) else dtype
    if isinstance(dtype, (t.DictionaryType, t.RunEndEncodedType)):
        return _comparable(dtype.value_type)
    return dtype


def _type_at(schema: t.Schema, path: tuple[str, ...]) -> t.DataType:
    names = schema.names
    if path[0] not in names:
        raise ArrowKeyError(f"expected a column named {path[0]!r} for the filter, found {names}")
    dtype = schema.field(path[0]).type
    for name in path[1:]:
        inner = t.storage_of(dtype)
        fields = [f.name for f in getattr(inner, "fields", ())]
        if not isinstance(inner, t.StructType) or name not in fields:
            raise ArrowKeyError(f"expected a field named {name!r} in {inner}, found {fields}")
        dtype = inner.fields[fields.index(name)].type
    return dtype


def filter_mask(batch: Any, dnf: DNF) -> np.ndarray:
    """The rows of ``batch`` the filter keeps, as a bool array."""
    n = batch.num_rows
    if not dnf:
        return np.ones(n, bool)
    keep = np.zeros(n, bool)
    for group in dnf:
        rows = np.ones(n, bool)
        for p in group:
            arr, parents = _resolve(batch, p.path)
            result, valid = _evaluate(arr, p, parents)
            rows &= result
            if valid is not None:
                rows &= valid
        keep |= rows
    return keep


def filter_batch(batch: Any, dnf: DNF) -> Any:
    """The rows of ``batch`` the filter keeps.  Without a copy when they are one run of
    at least half the rows (a range filter on sorted data, or a batch whose statistics
    could not rule the filter out and that matches throughout): the batch itself, or a
    slice of it.  A shorter run is copied, so that a few rows kept do not hold a whole
    decompressed batch in memory."""
    mask = filter_mask(batch, dnf)
    count = int(np.count_nonzero(mask))
    if count == len(mask):
        return batch
    if 2 * count >= len(mask):
        first = int(mask.argmax())
        if mask[first : first + count].all():
            return batch.slice(first, count)
    return batch.filter(mask)
