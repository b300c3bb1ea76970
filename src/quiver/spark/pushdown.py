"""Data skipping by the read option ``filters``: exact on the rows, used to skip batches
(footer statistics) and partition directories.

Why not Spark's pushed filters
------------------------------
Spark (4.1 to at least 4.3) runs a Python reader's ``pushFilters`` and ``partitions()``
in one worker and stores the result on the relation's ``PythonDataSourceV2``, which every
query of one DataFrame shares; a later query (or the other side of a self-join or union)
takes whatever was stored last.  A reader that left out data because of pushed filters
would lose rows in those queries (issue 24; ``tests/spark/test_read_correctness.py``
probes the installed Spark for it).  So the source never takes Spark's filters.  Skipping
comes from the ``filters`` option instead, which is part of the DataFrame's definition:
every query over the DataFrame sees only matching rows, so nothing can leak.

The option
----------
JSON in the form of ``pyarrow.parquet.read_table(filters=...)``: a list of
``[column, op, value]`` (all must hold) or a list of such lists (any may hold).  Ops:
``==`` (``=``), ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``in``, ``not in`` (a list of
values), ``is null``, ``is not null`` (no value).  Columns are named as Spark names them
(exactly, else ignoring case; ``a.b`` is field ``b`` of struct ``a``); partition columns
too.  Rows are kept as :mod:`quiver.filters` (pyarrow's semantics) keeps them, evaluated
on the values **Spark sees** (after the type policy, under the user's schema): a
comparison with null drops the row, NaN fails every comparison, ``in`` matches null only
when ``null`` is listed and NaN when NaN is, ``not in`` keeps nulls unless ``null`` is
listed.  JSON values are read as the column's Spark type:

========================  ==================================================================
Spark type                JSON value
========================  ==================================================================
boolean                   ``true`` / ``false``
tinyint … bigint          a number (a fraction compares as it lies between two integers)
float, double             a number, or ``"NaN"``, ``"Infinity"``, ``"-Infinity"``
decimal(p, s)             a number or a string, read exactly (more digits than ``s`` or
                          beyond ``p`` compare as the exact value would)
string                    a string
binary                    a string, compared as its UTF-8 bytes
date                      ``"YYYY-MM-DD"``
timestamp                 an ISO 8601 string; without an offset it is UTC
timestamp_ntz             an ISO 8601 string without an offset
time                      ``"HH:MM:SS[.ffffff]"``
any                       ``null`` (a comparison with null keeps no row)
========================  ==================================================================

Fractions of a second finer than microseconds compare as the exact value would against
Spark's microseconds.  Other types (intervals, arrays, maps, structs as a whole) take
only ``is null`` / ``is not null``.

Skipping reasons about the values Spark sees, never the file's: the one rule is
:func:`spark_statistics`, which turns a file's footer statistics into statistics of the
Spark-typed column (bounds converted by the same policy as the rows, which only ever
maps values in order, so converted bounds still bound the converted values; null counts
kept only when no value can turn null on the way).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

import numpy as np

from .. import types as t
from ..errors import ArrowError, ArrowInvalidArgument
from ..filters import (
    DNF,
    Predicate,
    batches_may_match,
    filter_mask,
    normalize,
    valid_mask,
)
from .convert import Where, to_spark_array
from .plan import layout_statistics
from .policy import ReadPolicy, to_spark_type
from .read import adapt, partition_batch

OPTION = "filters"
_NULL_OPS = ("is null", "is not null")
_SET_OPS = ("in", "not in")
_NEVER = "never"  # marks a comparison no row satisfies (an inexact ==)


def _error(message: str) -> ArrowInvalidArgument:
    return ArrowInvalidArgument(f"option {OPTION}: {message}")


# -- building the option ------------------------------------------------------------------


def _json_value(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if value != value:
            return "NaN"
        if value in (float("inf"), float("-inf")):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        try:
            return bytes(value).decode()
        except UnicodeDecodeError:
            raise _error(f"expected bytes that are UTF-8 text, found {value!r}") from None
    raise _error(f"expected a JSON-able filter value, found {value!r} "
                 f"({type(value).__name__})")


def filters_option(filters: Any) -> str:
    """The ``filters`` read option for ``filters`` in ``pyarrow.parquet.read_table`` form
    (tuples of ``(column, op, value)``, in a list, or a list of lists for OR); dates,
    datetimes, times and decimals become the strings the option reads.

    >>> filters_option([("id", ">=", 10), ("id", "<", 20)])
    '[["id", ">=", 10], ["id", "<", 20]]'
    >>> filters_option([[("k", "in", ["a", "b"])], [("d", "==", dt.date(2024, 1, 31))]])
    '[[["k", "in", ["a", "b"]]], [["d", "==", "2024-01-31"]]]'
    """
    try:
        dnf = normalize(filters)
    except ArrowError as exc:
        raise _error(str(exc)) from None

    def item(p: Predicate) -> list[Any]:
        column = ".".join(p.path)
        if p.op in _NULL_OPS:
            return [column, p.op]
        if p.op in _SET_OPS:
            return [column, p.op, [_json_value(v) for v in p.value]]
        return [column, p.op, _json_value(p.value)]

    groups = [[item(p) for p in group] for group in dnf]
    return json.dumps(groups[0] if len(groups) == 1 else groups)


# -- reading the option -------------------------------------------------------------------


def _constant(text: str) -> float:
    return float(text)  # NaN, Infinity, -Infinity


def parse_filters(text: str | None, schema: t.Schema) -> DNF:
    """The option's filters, columns resolved in ``schema`` (the Arrow form of the Spark
    schema the reader was given) and values typed as those columns (see the module doc).
    An inexact comparison is rewritten to the exact one on the column's values."""
    if text is None or not str(text).strip():
        return []
    try:
        raw = json.loads(str(text), parse_float=Decimal, parse_constant=_constant)
    except ValueError as exc:
        raise _error(f"expected JSON, found {str(text)[:80]!r} ({exc})") from None
    if not isinstance(raw, list):
        raise _error(f"expected a JSON list of [column, op, value] lists, found {raw!r}")
    for item in raw:
        if not isinstance(item, list):
            raise _error(f"expected [column, op, value] lists, found {item!r}")
    try:
        dnf = normalize(raw)
    except ArrowError as exc:
        raise _error(str(exc)) from None
    out: DNF = []
    for group in dnf:
        typed: list[Predicate] = []
        never = False
        for p in group:
            q = _typed_predicate(p, schema)
            if q.op == _NEVER:
                never = True
            else:
                typed.append(q)
        if not never:
            out.append(typed)
    if dnf and not out:  # every group can never hold: no row matches
        out = [[Predicate(_first_path(schema), "in", ())]]
    return out


def _first_path(schema: t.Schema) -> tuple[str, ...]:
    return (schema.names[0],)


def _resolve(schema: t.Schema, column: tuple[str, ...]) -> tuple[tuple[str, ...], t.DataType]:
    """A column's path as ``schema`` spells it, and its type."""
    name = ".".join(column)

    def find(fields: Sequence[t.Field], wanted: str) -> t.Field | None:
        exact = [f for f in fields if f.name == wanted]
        if exact:
            return exact[0]
        loose = [f for f in fields if f.name.lower() == wanted.lower()]
        return loose[0] if len(loose) == 1 else None

    whole = find(schema.fields, name)
    if whole is not None:
        return (whole.name,), whole.type
    fields: Sequence[t.Field] = schema.fields
    path: list[str] = []
    dtype: t.DataType | None = None
    for part in column:
        f = find(fields, part)
        if f is None:
            raise _error(f"expected a column among {schema.names}, found {name!r}")
        path.append(f.name)
        dtype = f.type
        fields = dtype.fields if isinstance(dtype, t.StructType) else ()
    assert dtype is not None
    return tuple(path), dtype


def _spark_name(dtype: t.DataType) -> str:
    try:
        return to_spark_type(dtype).simpleString()
    except Exception:  # (a name for a message only)
        return str(dtype)


def _typed_predicate(p: Predicate, schema: t.Schema) -> Predicate:
    path, dtype = _resolve(schema, p.path)
    if p.op in _NULL_OPS:
        return Predicate(path, p.op)
    if not isinstance(dtype, (t.BoolType, t.IntegerType, t.FloatingPointType, t.DecimalType,
                              t.StringType, t.BinaryType, t.DateType, t.TimestampType,
                              t.TimeType)):
        raise _error(f"expected a column of a comparable type for {p.op!r}, found "
                     f"{'.'.join(path)} of type {_spark_name(dtype)} (only 'is null' and "
                     f"'is not null' apply to it)")
    if p.op in _SET_OPS:
        members = []
        for v in p.value:
            exact, value = _typed_value(v, dtype, path)
            if exact:  # a value no row can equal is no member
                members.append(value)
        return Predicate(path, p.op, tuple(members))
    exact, value = _typed_value(p.value, dtype, path)
    if exact:
        return Predicate(path, p.op, value)
    # the value lies strictly between ``value`` and the next value of the column's type
    if value is None:  # beyond every value of the type (a huge decimal): ``value`` bound
        return _beyond(path, p.op, p.value)
    if p.op in ("<", "<="):
        return Predicate(path, "<=", value)
    if p.op in (">", ">="):
        return Predicate(path, ">", value)
    if p.op == "==":
        return Predicate(path, _NEVER)
    return Predicate(path, "is not null")  # != : every value differs


def _beyond(path: tuple[str, ...], op: str, value: Any) -> Predicate:
    """A comparison with a number beyond every value of the column's type."""
    above = Decimal(value) > 0
    if op == "==":
        return Predicate(path, _NEVER)
    if op == "!=" or (op in ("<", "<=") and above) or (op in (">", ">=") and not above):
        return Predicate(path, "is not null")
    return Predicate(path, _NEVER)


_FRACTION = re.compile(r"^(.*?[T ]?\d{2}:\d{2}:\d{2})\.(\d+)(.*)$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _micro_text(text: str) -> tuple[str, bool]:
    """``text`` with its fraction of a second cut to microseconds; whether that was
    exact."""
    m = _FRACTION.match(text)
    if m is None or len(m.group(2)) <= 6:
        return text, True
    digits = m.group(2)
    return f"{m.group(1)}.{digits[:6]}{m.group(3)}", not digits[6:].strip("0")


def _typed_value(value: Any, dtype: t.DataType, path: tuple[str, ...]) -> tuple[bool, Any]:
    """(exact, the value as the column's Python type); when not exact the value is the
    largest value of the type below the JSON value (None: there is none in range)."""
    column = ".".join(path)

    def refuse(expected: str) -> ArrowInvalidArgument:
        return _error(f"expected {expected} for column {column} ({_spark_name(dtype)}), "
                      f"found {value!r}")

    if value is None:
        return True, None
    if isinstance(dtype, t.BoolType):
        if not isinstance(value, bool):
            raise refuse("true or false")
        return True, value
    if isinstance(dtype, (t.IntegerType, t.DecimalType)):
        if isinstance(value, bool) or not isinstance(value, (int, Decimal, str, float)):
            raise refuse("a number")
        if isinstance(value, str) and isinstance(dtype, t.IntegerType):
            raise refuse("a number")
        if isinstance(value, float):  # NaN or an infinity
            raise refuse("a finite number")
        try:
            number = Decimal(value)
        except InvalidOperation:
            raise refuse("a number") from None
        if not number.is_finite():
            raise refuse("a finite number")
        scale = dtype.scale if isinstance(dtype, t.DecimalType) else 0
        step = Decimal(1).scaleb(-scale)
        floor = number.quantize(step, rounding="ROUND_FLOOR")
        if isinstance(dtype, t.DecimalType):
            limit = Decimal(10) ** (dtype.precision - scale) - step
            if abs(floor) > limit or abs(number) > limit:
                return False, None
            return floor == number, floor
        return floor == number, int(floor)
    if isinstance(dtype, t.FloatingPointType):
        if isinstance(value, str):
            spelled = {"nan": float("nan"), "infinity": float("inf"), "inf": float("inf"),
                       "-infinity": float("-inf"), "-inf": float("-inf")}
            if value.strip().lower() not in spelled:
                raise refuse('a number, "NaN", "Infinity" or "-Infinity"')
            return True, spelled[value.strip().lower()]
        if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
            raise refuse("a number")
        return True, float(value)
    if isinstance(dtype, t.StringType):
        if not isinstance(value, str):
            raise refuse("a string")
        return True, value
    if isinstance(dtype, t.BinaryType):
        if not isinstance(value, str):
            raise refuse("a string (its UTF-8 bytes)")
        return True, value.encode()
    if not isinstance(value, str):
        raise refuse("a string")
    text = value.strip()
    if isinstance(dtype, t.DateType):
        if not _DATE.match(text):
            raise refuse('a date "YYYY-MM-DD"')
        try:
            return True, dt.date.fromisoformat(text)
        except ValueError:
            raise refuse('a date "YYYY-MM-DD"') from None
    if isinstance(dtype, t.TimeType):
        cut, exact = _micro_text(text)
        try:
            found = dt.time.fromisoformat(cut)
        except ValueError:
            raise refuse('a time "HH:MM:SS[.ffffff]"') from None
        if found.tzinfo is not None:
            raise refuse("a time of day without an offset")
        return exact, found
    # timestamps
    cut, exact = _micro_text(text)
    try:
        found = (dt.datetime.fromisoformat(cut) if not _DATE.match(cut)
                 else dt.datetime.combine(dt.date.fromisoformat(cut), dt.time()))
    except ValueError:
        raise refuse("an ISO 8601 timestamp") from None
    if dtype.tz is None:
        if found.tzinfo is not None:
            raise refuse("a timestamp without an offset (timestamp_ntz)")
    elif found.tzinfo is None:
        found = found.replace(tzinfo=dt.UTC)
    return exact, found


# -- statistics in Spark's units ----------------------------------------------------------


def _plain_value_type(dtype: t.DataType) -> t.DataType:
    while True:
        if isinstance(dtype, t.ExtensionType):
            dtype = dtype.storage_type
        elif isinstance(dtype, (t.DictionaryType, t.RunEndEncodedType)):
            dtype = dtype.value_type
        else:
            return dtype


def _may_turn_null(dtype: t.DataType) -> bool:
    """Whether the policy may make a non-null value of this file type null (an invalid
    value under ``invalidValues=null``)."""
    return isinstance(_plain_value_type(dtype),
                      (t.DateType, t.TimeType, t.TimestampType, t.DurationType, t.DecimalType))


def _order_kept(source: t.DataType, target: t.DataType) -> bool:
    """Whether the policy maps values of ``source`` to ``target`` in order (so bounds of
    the one, converted, bound the other): never a number made text."""
    source = _plain_value_type(source)
    if isinstance(target, t.StringType):
        return isinstance(source, (t.StringType, t.StringViewType))
    if isinstance(target, t.BinaryType):
        return isinstance(source, (t.BinaryType, t.BinaryViewType, t.FixedSizeBinaryType))
    return isinstance(target, (t.BoolType, t.IntegerType, t.FloatingPointType, t.DecimalType,
                               t.DateType, t.TimestampType, t.TimeType))


def spark_statistics(stats: Any, file_schema: t.Schema, columns: dict[int, t.DataType],
                     policy: ReadPolicy) -> tuple[Any, t.Schema]:
    """A file's statistics as Spark sees its columns: for each file column index in
    ``columns``, bounds converted to the Spark type given (by the policy's conversion,
    then the widening to a user's or merged schema), and the schema they describe.

    The one rule of skipping: a bound is kept only when the conversion keeps order (every
    conversion of the policy is monotone: scaling, flooring ``date64`` to days, cutting
    nanoseconds toward zero, widening), so converted bounds bound converted values; a
    batch whose bound is a value Spark cannot hold loses its bounds; and where the policy
    turns invalid values into null (``invalidValues=null``), the footer's null count is
    no longer Spark's, so it is trusted only for batches whose bounds prove every value
    valid.  Columns not in ``columns`` lose their bounds and counts."""
    n_cols = len(stats.null_counts)
    nb = len(stats.row_counts)
    false = np.zeros(nb, bool)
    mins: list[Any] = [None] * n_cols
    maxs: list[Any] = [None] * n_cols
    has_bounds = list(stats.has_bounds)
    null_known = list(stats.null_known)
    fields = list(file_schema.fields)
    lenient = ReadPolicy(wide_decimals=policy.wide_decimals, invalid_values="null")
    for c in range(n_cols):
        if c not in columns:
            has_bounds[c], null_known[c] = false, false
            continue
        target = columns[c]
        fields[c] = t.field(fields[c].name, target, nullable=True)
        source_type = file_schema.field(c).type
        nulls_change = policy.invalid_values == "null" and _may_turn_null(source_type)
        low, high = stats.mins[c], stats.maxs[c]
        if low is None or high is None or not _order_kept(source_type, target):
            has_bounds[c] = false
            if nulls_change:
                null_known[c] = false
            continue
        try:
            where = Where(f"statistics of column {file_schema.names[c]}", "")
            low2 = adapt(to_spark_array(low, lenient, where), target, where)
            high2 = adapt(to_spark_array(high, lenient, where), target, where)
        except ArrowError:
            has_bounds[c] = false
            if nulls_change:
                null_known[c] = false
            continue
        valid = np.ones(nb, bool)
        for before, after in ((low, low2), (high, high2)):
            m = valid_mask(after)
            if m is not None:
                valid &= m
            m = valid_mask(before)
            if m is not None:
                valid &= m
        bounded = stats.has_bounds[c] & valid
        has_bounds[c] = bounded
        if nulls_change:
            null_known[c] = stats.null_known[c] & bounded
        mins[c], maxs[c] = low2, high2
    converted = dataclasses.replace(
        stats, mins=mins, maxs=maxs, has_bounds=tuple(has_bounds),
        null_known=tuple(null_known),
    )
    return converted, t.schema(fields)


def _find(names: Sequence[str], name: str) -> int | None:
    if name in names:
        return list(names).index(name)
    lowered = [n.lower() for n in names]
    return lowered.index(name.lower()) if lowered.count(name.lower()) == 1 else None


def batches_to_read(dnf: DNF, layout: Any, target: t.Schema, partition_names: set[str],
                    policy: ReadPolicy) -> list[bool] | None:
    """Which batches of a file may hold rows the filters keep (None: all of them), from
    its footer statistics read in Spark's units (:func:`spark_statistics`)."""
    if not dnf:
        return None
    stats = layout_statistics(layout)
    if stats is None:
        return None
    wanted = {f.name: f.type for f in target.fields}
    columns: dict[int, t.DataType] = {}
    located: DNF = []
    for group in dnf:
        out = []
        for p in group:
            if len(p.path) != 1 or p.path[0] in partition_names:
                continue  # structs' fields and partition columns: not the footer's
            c = _find(layout.schema.names, p.path[0])
            if c is None:
                continue  # a merged schema's column the file lacks: read as nulls
            columns[c] = wanted[p.path[0]]
            out.append(Predicate((layout.schema.names[c],), p.op, p.value))
        located.append(out)
    if not columns:
        return None
    converted, schema = spark_statistics(stats, layout.schema, columns, policy)
    try:
        return batches_may_match(located, converted, schema).tolist()
    except ArrowError:
        return None  # statistics that do not compare: read everything


# -- partition directories ------------------------------------------------------------


def partition_matches(dnf: DNF, values: dict[str, Any], fields: Sequence[t.Field]) -> bool:
    """Whether a directory whose partition columns (``fields``, the types Spark reads
    them as) hold ``values`` may have rows the filters keep: each predicate on a
    partition column is evaluated exactly on its value; one that cannot be evaluated
    keeps the directory (the rows are then filtered, and fail, on the executor)."""
    if not dnf or not fields:
        return True
    names = {f.name for f in fields}
    try:
        batch = partition_batch(fields, values)
    except ArrowError:
        return True
    for group in dnf:
        mine = [p for p in group if p.path[0] in names and len(p.path) == 1]
        try:
            if not mine or bool(filter_mask(batch, [mine])[0]):
                return True
        except (ArrowError, TypeError, ValueError, OverflowError):
            return True
    return False


__all__ = [
    "OPTION",
    "batches_to_read",
    "filters_option",
    "parse_filters",
    "partition_matches",
    "spark_statistics",
]
