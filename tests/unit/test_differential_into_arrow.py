"""Differential property tests of every way into Arrow against pyarrow 26 (issue 25).

Cross-module on purpose: each example goes through quiver's builders, type inference,
numpy conversion and pandas conversion, then out through the C data interface so that
pyarrow compares types and values exactly.

The rule checked: on the same input, quiver gives the same type and the same values as
``pa.array(...)`` / ``pa.Table.from_pandas(...)``, or raises a quiver error
(:class:`~quiver.errors.ArrowError`) where pyarrow raises.  Never a raw Python error.

Covered inputs:

- Python lists drawn from one or two scalar kinds (ints of every size up to past uint64,
  floats with NaN and infinities, bools, str, bytes, Decimal, naive and zoned datetimes,
  dates, times, timedeltas, None, nested lists, tuples and dicts), with the type inferred
  or given (integers, floats, bool, text, binary, decimal, dates, timestamps with and
  without a zone, times, durations, lists, structs);
- numpy arrays of every numeric, bool, datetime64 and timedelta64 dtype and unit, both
  byte orders, strided, masked, with the type inferred or given, ``safe`` True and False;
- pandas columns of numpy, nullable, Arrow-backed, categorical, tz-aware, string and
  object dtypes, under range, integer, string and datetime indexes, through
  ``Table.from_pandas`` and back through ``to_pandas``;
- Python lists holding numpy scalars (ints of every width, half/single/double floats,
  bools, ``np.str_``, ``np.bytes_``, datetime64 and timedelta64 of every unit with NaT,
  NaN, ``pd.NA``, ``pd.NaT``), alone, of several dtypes, or beside the Python kinds above,
  with the type inferred or given and ``from_pandas`` True and False;
- nested types given explicitly: list, large_list, fixed_size_list (of the right and
  wrong lengths), struct (dicts with missing and extra keys, tuples), map (dicts and
  (key, value) pairs) over each other and the leaf types, and dictionary; None at every
  level;
- ``Table.from_pandas(df, schema=...)`` (``preserve_index`` None, True, False) and
  ``table(df, schema=...)``: schemas choosing some of the columns and index levels in
  any order, casting them (widths, signedness, floats to ints, text to numbers,
  timestamp units and zones, dates, decimals, dictionaries to text), non-nullable
  fields, and names the frame does not have.

The differences quiver keeps (each matched by a ``_kept*`` function on its exact input,
each with its reason):

1. numpy arrays in the other byte order: pyarrow refuses them (NotImplemented), quiver
   swaps them and gives pyarrow's values of the native array.
2. ``[date, datetime]`` in either order without a type: pyarrow drops the time of day of
   ``[date, datetime]`` (date32) and refuses the other order; quiver refuses both.
3. ``date`` objects to a timestamp type: pyarrow refuses them; quiver takes their midnight
   (no value changes).
4. numpy integers of another width than int64 to a timestamp / duration / date64 / time
   type: pyarrow refuses all but its own storage width; quiver takes the raw values
   (checked for range).
5. numpy int/float/datetime64 arrays into text or decimal types: pyarrow refuses, fails
   oddly, or (binary) gives each value's raw bytes, empty for some; quiver builds decimals
   from integers exactly and refuses text and binary with its own error (an empty array
   it converts: there is no value to refuse).
6. Python floats into decimals: pyarrow refuses them, quiver refuses too (same outcome,
   listed for completeness: no special case needed).
7. ints into bool: pyarrow refuses Python ints for bool; quiver too.  numpy ints and floats
   to bool: both give ``!= 0``.
8. Python floats and Decimals into integer and temporal types: pyarrow truncates them
   silently (``pa.array([1.5], pa.int64())`` is ``[1]``, ``Decimal("1.5")`` as a date is
   1970-01-02); quiver refuses a fraction for integers and takes only ints (or the
   temporal objects) for temporal types, since a truncated count is a changed value.
9. datetimes before 1970 with a time of day into date64: pyarrow rounds toward the epoch
   (1969-01-01T00:00:01 becomes 1969-01-02; its date32 gives 1969-01-01); quiver gives
   each datetime's own date, as both give it for date32.
10. temporal objects mixed with numbers, without a type: pyarrow takes the numbers as raw
    counts when a temporal value comes first (``[datetime(2000, 1, 1), 5]`` is a timestamp
    5 microseconds after the epoch) and refuses the other order; quiver refuses to infer
    a type from values of two kinds.
11. numpy bools to half floats and half floats to bools: pyarrow has no such cast
    (NotImplemented); quiver converts them as pyarrow does for float and double.
12. empty numpy arrays: pyarrow refuses some conversions by dtype alone (bools to half
    floats, numbers to decimals); quiver converts the values, so an empty array converts.
13. numpy datetime64[D] to a timestamp type: pyarrow gives wrong instants for some arrays
    (``[0, 1]`` days to ``timestamp[s]`` is two 1970-01-01 instants); quiver gives numpy's
    own conversion of the days.
14. NaT in a masked datetime64 / timedelta64 array: pyarrow takes the mask alone and
    keeps an unmasked NaT as the value -2**63 (a valid timestamp 292 billion years ago,
    which its own to_pylist cannot convert); quiver makes NaT null, mask or not, as
    pyarrow does for an array without a mask.
15. datetime64 values past the range of date32 / date64: pyarrow wraps them silently
    even when safe; quiver refuses them when safe (``safe=False`` wraps, each its own way).
16. datetime64 values within a day of the int64 minimum to a time of day: pyarrow's
    arithmetic overflows there (23:59:59.999 becomes 00:00); quiver gives the time of day.

17. numpy scalars (not datetime64 / timedelta64) where pyarrow refuses them or gives
    values other than those of the Python values they equal: beside other kinds
    (``[Decimal, np.int8]``, ``[np.True_, 1]``), for a type other than their own
    (``np.int64`` to decimal or timestamp, ``np.float64`` to date), or wrongly
    (``[np.uint64(2**64 - 1), 1.5]`` is ``[-1.0, 1.5]``, ``[np.float16(1.5), 1]`` is
    int64 ``[1, 1]``): quiver takes each as the Python value it equals (numpy
    integers of several dtypes unify as in pyarrow; where pyarrow refuses, quiver may
    give any type holding every value exactly, e.g. float32 for ``[np.float32,
    np.float16]``, which pyarrow takes in the other order only).
18. numpy datetime64 / timedelta64 scalars for another unit or type than their own:
    pyarrow refuses every other unit (and datetime64[D] for date64 with a raw error) and
    gives 1970-01-02 for 1 ns as a date32; quiver converts them exactly (a date: the
    day of the instant, floored) and refuses what a coarser unit would floor or what
    does not fit; datetime64[D] scalars infer date32 as datetime64[D] arrays do (pyarrow
    infers them only for dates Python cannot hold).
19. numpy datetime64 / timedelta64 scalars beside other kinds without a type: pyarrow
    refuses them (takes only NaT in microseconds beside timedeltas); quiver refuses to
    infer from two kinds.
20. ``[np.datetime64, <numpy number or bool>]`` without a type: pyarrow crashes
    (SIGSEGV); it is not called for those, quiver must refuse or give exact values.
21. ``pd.NaT`` for a date type without ``from_pandas``: pyarrow gives 0001-01-01;
    quiver refuses it (with ``from_pandas`` both make it null).
22. ``[float, bool]`` without a type: pyarrow infers double (and refuses
    ``[bool, float]``); quiver refuses to infer from two kinds in either order.
23. pandas' missing markers with ``from_pandas`` where pyarrow fails (NaN beside
    dates: a raw ValueError): quiver gives the values with the markers null.
24. structs of dicts and tuples mixed: pyarrow takes the kind of the first value and
    refuses the other; quiver takes each by its own rule (a tuple by position), with
    pyarrow's values of the all-dicts list.

25. numpy integers before a numpy float32 without a type: pyarrow infers double (float32
    when the float comes first); quiver infers float32 in either order (the integers
    checked to be exact in it, as pyarrow checks them).

Of ``from_pandas(df, schema=...)``, one: an object column of dates for a timestamp field
gives their midnight (3), where pyarrow refuses.  Not a kept difference but worth
knowing: a dict with a key its struct has no field for loses it silently, as in pyarrow.

What it found (fixed in quiver): numpy integer conversions that wrapped, datetime64 unit
conversions that overflowed or dropped ticks, big-endian datetime64 read unswapped,
datetime64 converted to any type (now the ones pyarrow casts to, times of day included),
floats and bools taken as temporal counts, Python ints rounded by floats (half floats
included), Python bools refused for floats, str beside bytes not inferred as binary, the
zone of mixed naive and aware datetimes, ints beside Decimals, and the pandas metadata's
``pandas_type`` of ArrowDtype, string, timedelta and object columns. Then (numpy
scalars, nested types, schemas): ``np.str_`` beside bytes built from its UCS-4 memory
(``b"\\x00"`` for ``"x"``), negative ints (Python beside None, or numpy) wrapped to
uint64, datetime64 scalars of several units wrapped into the finest, datetime64 /
timedelta64 scalars floored to a coarser unit, numpy ints of several dtypes inferred as
int64 (pyarrow: the widest, or refused), ints beside integral floats for an integer type
rounded (past 2**53) or wrapped (past int64) through a double, ``pd.NA`` not null with
``from_pandas``, numpy bools refused for floats, ints beside dates refused for date
types; with a schema, an unnamed index level not found by its ``__index_level_<i>__``
name, object columns inferred and cast instead of built with the field's type (bools
became ints), number and bool columns cast to text fields (pyarrow refuses).
"""

from __future__ import annotations

import datetime as dt
import math
import os
import zoneinfo
from decimal import Decimal
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import quiver as qv
from quiver.errors import ArrowError

pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")

# bounded and derandomized for CI; QUIVER_HUNT=<examples> explores at random (to hunt);
# QUIVER_HUNT_LOG=<file> keeps the last numpy-scalar input there (pyarrow may crash on one)
_HUNT = int(os.environ.get("QUIVER_HUNT", "0"))
SETTINGS = settings(max_examples=_HUNT or 150, deadline=None, derandomize=not _HUNT,
                    database=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.filter_too_much])

_PARIS = zoneinfo.ZoneInfo("Europe/Paris")
_EPOCH = dt.datetime(1970, 1, 1)
_TEMPORAL = (dt.date, dt.time, dt.timedelta)
_PLUS = dt.timezone(dt.timedelta(hours=5, minutes=30))

# -- outcomes -------------------------------------------------------------------------


def _run(fn: Any) -> tuple[str, Any]:
    try:
        return "ok", fn()
    except ArrowError as exc:
        return "quiver-error", exc
    except (pa.ArrowException, TypeError, ValueError, OverflowError, KeyError) as exc:
        return "error", exc


def _norm(v: Any) -> Any:
    """A value comparable with ==: NaN equal to NaN, -0.0 apart from 0.0."""
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        return (v, math.copysign(1.0, v))
    if isinstance(v, list):
        return [_norm(x) for x in v]
    if isinstance(v, tuple):
        return tuple(_norm(x) for x in v)
    if isinstance(v, dict):
        return {k: _norm(x) for k, x in v.items()}
    return v


def _same_array(ours: Any, theirs: Any) -> None:
    """quiver's array equals pyarrow's: type and values, read back through the C data
    interface."""
    back = pa.array(ours)
    assert back.type == theirs.type, (back.type, theirs.type)
    # (equals: values Python cannot hold too, e.g. dates before year 1; NaN equal to NaN)
    assert _same_values(back, theirs), (_show(back), _show(theirs))


def _same_values(a: Any, b: Any) -> bool:
    """Whether two pyarrow arrays hold the same values (NaN equal to NaN)."""
    if a.equals(b):
        return True
    try:
        return _norm(a.to_pylist()) == _norm(b.to_pylist())
    except (OverflowError, ValueError):  # values Python cannot hold, and they differ
        return False


def _compare(ours: tuple[str, Any], theirs: tuple[str, Any], kept: Any = None) -> None:
    """The rule of the module docstring; ``kept`` (a callable or None) answers for an input
    whose difference is kept on purpose."""
    if ours[0] == "error":  # a raw Python error from quiver is a defect in any case
        raise AssertionError(f"quiver raised a raw {type(ours[1]).__name__}: {ours[1]}")
    if kept is not None and kept(ours, theirs):
        return
    if theirs[0] == "ok":
        assert ours[0] == "ok", f"pyarrow gives {theirs[1].type}, quiver raises {ours[1]!r}"
        _same_array(ours[1], theirs[1])
    else:
        assert ours[0] == "quiver-error", (
            f"pyarrow raises {theirs[1]!r}, quiver gives {ours[1].type}: {_show(ours[1])}")


def _show(arr: Any) -> str:
    try:
        return repr(arr.to_pylist()[:5])
    except (ArrowError, OverflowError, ValueError) as exc:  # values Python cannot hold
        return f"(no Python values: {exc})"


# -- Python values --------------------------------------------------------------------

_SCALARS = {
    "int": st.one_of(st.integers(-(2**63), 2**63 - 1), st.integers(-(2**70), 2**70),
                     st.sampled_from([2**53, 2**53 + 1, -(2**53) - 1, 2**63, 2**64 - 1])),
    "small_int": st.integers(-300, 300),
    "float": st.floats(allow_nan=True, allow_infinity=True),
    "bool": st.booleans(),
    "str": st.text(max_size=5),
    "bytes": st.binary(max_size=5),
    "decimal": st.decimals(allow_nan=False, allow_infinity=False, places=3,
                           min_value=-(10**6), max_value=10**6),
    "datetime": st.datetimes(min_value=dt.datetime(1677, 10, 1),
                             max_value=dt.datetime(2262, 4, 1)),
    "datetime_tz": st.datetimes(min_value=dt.datetime(1900, 1, 2),
                                max_value=dt.datetime(2200, 1, 1),
                                timezones=st.sampled_from([dt.UTC, _PLUS, _PARIS])),
    "date": st.dates(),
    "time": st.times(),
    "timedelta": st.timedeltas(min_value=dt.timedelta(days=-10**5),
                               max_value=dt.timedelta(days=10**5)),
    "list": st.lists(st.one_of(st.none(), st.integers(-5, 5)), max_size=3),
    "tuple": st.lists(st.integers(-5, 5), max_size=3).map(tuple),
    "dict": st.fixed_dictionaries({"x": st.one_of(st.none(), st.integers(-5, 5)),
                                   "y": st.one_of(st.none(), st.text(max_size=3))}),
}

_TYPES = [
    None, None, None,  # inferred, most often
    ("int8",), ("int64",), ("uint8",), ("uint64",), ("float16",), ("float32",),
    ("float64",), ("bool_",), ("string",), ("large_string",), ("binary",),
    ("decimal128", 10, 3), ("date32",), ("date64",), ("timestamp", "s"),
    ("timestamp", "us"), ("timestamp", "ns"), ("timestamp", "us", "UTC"), ("time32", "s"),
    ("time64", "us"), ("duration", "ms"), ("duration", "ns"),
]


def _types(spec: tuple | None) -> tuple[Any, Any]:
    if spec is None:
        return None, None
    return getattr(qv, spec[0])(*spec[1:]), getattr(pa, spec[0])(*spec[1:])


@st.composite
def python_lists(draw: Any) -> tuple[list, tuple | None]:
    kinds = draw(st.lists(st.sampled_from(sorted(_SCALARS)), min_size=1, max_size=2,
                          unique=True))
    element = st.one_of(st.none(), *[_SCALARS[k] for k in kinds])
    values = draw(st.lists(element, max_size=6))
    return values, draw(st.sampled_from(_TYPES))


def _has(values: list, kind: type, exact: bool = False) -> bool:
    return any((type(v) is kind) if exact else isinstance(v, kind) for v in values)


def _kept_python(values: list, spec: tuple | None):
    def kept(ours: tuple, theirs: tuple) -> bool:
        dates = _has(values, dt.date, exact=True)
        times = any(isinstance(v, dt.datetime) for v in values)
        if spec is None and dates and times:  # (2)
            return ours[0] == "quiver-error"
        if spec is None and _has(values, bool) and _has(values, float) and ours[0] == (
                "quiver-error"):  # (22)
            return True
        if spec is None and ours[0] == "quiver-error" and _has(values, _TEMPORAL) and any(
                isinstance(v, (int, float, Decimal)) for v in values):  # (10)
            return True
        if spec is not None and spec[0] == "timestamp" and dates and theirs[0] != "ok":  # (3)
            return ours[0] == "ok"
        if (spec is not None and spec[0] in _COUNTS and ours[0] == "quiver-error"
                and (_has(values, float) or _has(values, Decimal))):  # (8)
            return True
        if spec == ("date64",) and theirs[0] == "ok" and any(
                isinstance(v, dt.datetime) and v.replace(tzinfo=None) < _EPOCH
                for v in values):  # (9): each datetime's own date, as date32 gives it
            _compare(ours, _run(lambda: pa.array(values, pa.date32()).cast(pa.date64())))
            return True
        return False
    return kept


# integer and temporal types: pyarrow takes floats and Decimals for them as counts,
# truncated (difference 8)
_COUNTS = {"int8", "int64", "uint8", "uint64", "date32", "date64", "timestamp", "time32",
           "time64", "duration"}


@SETTINGS
@given(python_lists())
def test_python_lists_as_pyarrow(case: tuple[list, tuple | None]) -> None:
    values, spec = case
    q_type, p_type = _types(spec)
    ours = _run(lambda: qv.array(values, q_type))
    theirs = _run(lambda: pa.array(values, p_type))
    _compare(ours, theirs, _kept_python(values, spec))


# -- numpy scalars in Python lists -----------------------------------------------------

_NP_INTS = ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8"]
_NP_UNITS = ["s", "ms", "us", "ns", "D"]


def _np_int(code: str) -> Any:
    info = np.iinfo(code)
    kind = np.dtype(code).type
    return st.one_of(st.integers(-300, 300).filter(lambda v: info.min <= v <= info.max),
                     st.integers(int(info.min), int(info.max))).map(kind)


def _np_temporal(kind: str) -> Any:
    def make(unit: str) -> Any:
        ticks = st.one_of(st.integers(-(10**6), 10**6), st.integers(-(2**62), 2**62))
        nat = st.just(np.datetime64("NaT", unit) if kind == "M" else np.timedelta64("NaT", unit))
        scalar = np.datetime64 if kind == "M" else np.timedelta64
        return st.one_of(ticks.map(lambda v: scalar(v, unit)), nat)
    return st.sampled_from(_NP_UNITS).flatmap(make)


_NP_SCALARS = {
    "np_int": st.sampled_from(_NP_INTS).flatmap(_np_int),
    "np_int_one": _np_int("i4"),  # one dtype, to meet it beside Python values more often
    "np_float": st.sampled_from(["f2", "f4", "f8"]).flatmap(
        lambda c: st.floats(width=np.dtype(c).itemsize * 8).map(np.dtype(c).type)),
    "np_bool": st.booleans().map(np.bool_),
    "np_str": st.text(max_size=4).map(np.str_),
    "np_bytes": st.binary(max_size=4).filter(lambda b: not b.endswith(b"\x00")).map(np.bytes_),
    "np_datetime64": _np_temporal("M"),
    "np_timedelta64": _np_temporal("m"),
    "missing": st.sampled_from(["nan", "NA", "NaT"]).map(
        lambda k: {"nan": np.nan, "NA": pd.NA, "NaT": pd.NaT}[k]),
}


@st.composite
def numpy_scalar_lists(draw: Any) -> tuple[list, tuple | None, bool]:
    kinds = [draw(st.sampled_from(sorted(_NP_SCALARS)))]
    if draw(st.booleans()):  # beside a Python kind or another numpy kind
        kinds.append(draw(st.sampled_from(sorted(_NP_SCALARS) + sorted(_SCALARS))))
    pool = {**_NP_SCALARS, **_SCALARS}
    element = st.one_of(st.none(), *[pool[k] for k in kinds])
    values = draw(st.lists(element, min_size=1, max_size=6))
    return values, draw(st.sampled_from(_TYPES)), draw(st.booleans())


def _pythonized(values: list) -> list:
    """The values with numpy's non-temporal scalars as the Python values they equal."""
    return [v[:] if isinstance(v, (np.str_, np.bytes_))
            else v.item() if isinstance(v, np.generic) and not isinstance(
                v, (np.datetime64, np.timedelta64)) else v
            for v in values]  # (.item() and str() drop the trailing NULs of np.str_)


_NP_TEMPORAL = (np.datetime64, np.timedelta64)


def _ticks_of(v: Any, target: Any) -> Any:
    """What quiver should make of one numpy datetime64 / timedelta64 scalar for the
    pyarrow type ``target``: its storage integer (converted exactly; a date floored to its
    day), None for NaT, or "refused"."""
    if np.isnat(v):
        return None
    unit = np.datetime_data(v.dtype)[0]
    ticks = int(v.astype(np.int64))
    kind = "M" if isinstance(v, np.datetime64) else "m"
    per = {"D": 86_400 * 10**9, "s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
    ns = ticks * per[unit]
    if kind == "M" and pa.types.is_date(target):
        days = ns // per["D"]
        out = days if pa.types.is_date32(target) else days * 86_400_000
        bits = 31 if pa.types.is_date32(target) else 63
        return out if -(2**bits) <= out < 2**bits else "refused"
    ok = pa.types.is_timestamp(target) if kind == "M" else pa.types.is_duration(target)
    if not ok or ns % per[target.unit]:
        return "refused"
    out = ns // per[target.unit]
    return out if -(2**63) <= out < 2**63 else "refused"


def _one_as(v: Any, target: Any) -> Any:
    """pyarrow's storage integer of one (non-numpy) value of type ``target``, or
    "refused"."""
    if pa.types.is_date64(target) and isinstance(v, dt.datetime):  # its own date (9)
        one = _run(lambda: pa.array(_pythonized([v]), pa.date32()).cast(target))
    else:
        one = _run(lambda: pa.array(_pythonized([v]), target))
    if one[0] != "ok" or not pa.types.is_temporal(target):
        return "refused"
    return _storage_ints(one[1])[0]


def _storage_ints(arr: Any) -> list:
    width = pa.int32() if arr.type.bit_width == 32 else pa.int64()
    return arr.view(width).to_pylist()


def _missing(v: Any) -> bool:
    """pandas' missing markers (null with ``from_pandas``): NaN, pd.NA, pd.NaT."""
    return v is pd.NA or v is pd.NaT or (isinstance(v, float) and v != v)


def _kept_numpy_scalars(values: list, spec: tuple | None, from_pandas: bool):
    """numpy scalars: pyarrow refuses most of them beside other kinds, for another type or
    unit than their own, and gives some wrong values; quiver takes them as the Python values
    they equal (temporal ones converted exactly).  Where pyarrow refuses or its values are
    not those of the Python values, quiver's must be (17, 18)."""
    plain = _pythonized(values)

    def kept(ours: tuple, theirs: tuple) -> bool:
        if any(isinstance(v, _NP_TEMPORAL) for v in values):
            return _kept_temporal_scalars(ours, theirs)
        if not from_pandas and _has(values, type(pd.NaT)) and theirs[0] == "ok" and (
                spec is not None and spec[0] in ("date32", "date64")):
            return ours[0] == "quiver-error"  # (21)
        if from_pandas and theirs[0] != "ok" and any(_missing(v) for v in values):
            # (23) pyarrow fails on some markers with from_pandas (NaN beside dates: a raw
            # ValueError); quiver gives the values with the markers as None
            plain_nulls = [None if _missing(v) else v for v in values]
            again = _run(lambda: pa.array(_pythonized(plain_nulls), _types(spec)[1]))
            _compare(ours, again, _kept_numpy_scalars(plain_nulls, spec, False))
            return True
        if not any(isinstance(v, np.generic) for v in values):
            return _kept_python(values, spec)(ours, theirs)
        if theirs[0] != "ok" and ours[0] == "quiver-error":
            return False  # both refuse: the rule holds
        if (spec is None and theirs[0] == "ok" and ours[0] == "ok"
                and theirs[1].type == pa.float64()
                and pa.array(ours[1]).type in (pa.float32(), pa.float16())):
            # (25) numpy ints before a float32: pyarrow infers double (float32 after);
            # quiver the widest float among them in either order
            return _same_values(pa.array(ours[1]).cast(pa.float64()), theirs[1])
        if theirs[0] == "ok" and ours[0] == "ok" and pa.array(ours[1]).type == theirs[
                1].type and _same_values(pa.array(ours[1]), theirs[1]):
            return False  # the same: the rule holds
        p_type = _types(spec)[1]
        if spec is None and ours[0] == "ok":  # the type quiver chose, for the values
            p_type = pa.array(ours[1]).type
        oracle = _run(lambda: pa.array(plain, p_type, from_pandas=from_pandas))
        if theirs[0] == "ok" and oracle[0] == "ok" and _same_values(theirs[1], oracle[1]):
            # pyarrow gives the Python values: the differences kept for those only
            return _kept_python(plain, spec)(ours, theirs)
        _compare(ours, oracle, _kept_python(plain, spec))  # (17)
        return True

    def _kept_temporal_scalars(ours: tuple, theirs: tuple) -> bool:
        if spec is None and ours[0] == "quiver-error":
            return theirs[0] != "ok"
        target = _types(spec)[1] if spec is not None else (
            pa.array(ours[1]).type if ours[0] == "ok" else None)
        if target is None:  # quiver refuses to infer a type of them beside other kinds;
            return True  # (19) pyarrow takes only NaT of its own unit beside them
        items = [None if from_pandas and _missing(v) else v
                 for v in values]  # pandas' missing markers are null with from_pandas
        want = [None if v is None else _ticks_of(v, target) if isinstance(v, _NP_TEMPORAL)
                else _one_as(v, target) for v in items]
        if theirs[0] == "ok" and _storage_ints(theirs[1]) == want:
            return False
        if "refused" in want:  # (18)
            return ours[0] == "quiver-error"
        return ours[0] == "ok" and _storage_ints(pa.array(ours[1])) == want  # (18)
    return kept


@SETTINGS
@given(numpy_scalar_lists())
def test_numpy_scalar_lists_as_pyarrow(case: tuple[list, tuple | None, bool]) -> None:
    values, spec, from_pandas = case
    q_type, p_type = _types(spec)
    ours = _run(lambda: qv.array(values, q_type, from_pandas=from_pandas))
    if os.environ.get("QUIVER_HUNT_LOG"):
        with open(os.environ["QUIVER_HUNT_LOG"], "w") as log:
            log.write(repr((values, spec, from_pandas)))
    first = next((v for v in values if v is not None), None)
    if spec is None and isinstance(first, np.datetime64) and any(
            isinstance(v, (np.number, np.bool_)) for v in values):
        # pyarrow crashes (SIGSEGV) inferring numpy numbers after a datetime64 (20)
        theirs: tuple[str, Any] = ("error", "pyarrow crashes")
    else:
        theirs = _run(lambda: pa.array(values, p_type, from_pandas=from_pandas))
    _compare(ours, theirs, _kept_numpy_scalars(values, spec, from_pandas))


# -- nested types given explicitly -----------------------------------------------------

_LEAVES = {
    "int8": (st.integers(-200, 200), ("int8",)),
    "int64": (st.integers(-(2**63), 2**63 - 1), ("int64",)),
    "float64": (st.floats(allow_nan=False), ("float64",)),
    "bool_": (st.booleans(), ("bool_",)),
    "string": (st.text(max_size=3), ("string",)),
    "binary": (st.binary(max_size=3), ("binary",)),
    "timestamp": (st.datetimes(min_value=dt.datetime(1900, 1, 1),
                               max_value=dt.datetime(2100, 1, 1)), ("timestamp", "us")),
}


def _nested_types() -> Any:
    """Strategies of (description, strategy of values) pairs, the description a tree of
    tuples that :func:`_nested_type` makes a quiver or pyarrow type of."""
    leaves = st.sampled_from(sorted(_LEAVES)).map(lambda k: ((k,), _LEAVES[k][0]))

    def extend(inner: Any) -> Any:
        def wrap(kind: str, child: tuple, other: tuple) -> tuple:
            (c_desc, c_vals), (o_desc, o_vals) = child, other
            some = st.one_of(st.none(), c_vals)
            if kind in ("list", "large_list"):
                vals = st.one_of(st.lists(some, max_size=3),
                                 st.lists(some, max_size=3).map(tuple))
            elif kind == "fixed":
                vals = st.lists(some, min_size=1, max_size=3)  # (length 2 mostly)
                vals = st.one_of(st.lists(some, min_size=2, max_size=2), vals)
            elif kind == "struct":
                pair = st.tuples(some, st.one_of(st.none(), o_vals))
                vals = st.one_of(
                    pair.map(lambda p: {"a": p[0], "b": p[1]}),
                    pair.map(lambda p: {"a": p[0]}),  # a missing key
                    pair.map(lambda p: {"b": p[1], "a": p[0], "c": 1}),  # an extra one
                    pair,  # a tuple
                )
            elif kind == "map":
                keys = st.text(max_size=2)
                vals = st.one_of(st.dictionaries(keys, some, max_size=3),
                                 st.lists(st.tuples(keys, some), max_size=3))
            else:  # dictionary of the child's values: only leaves
                vals = c_vals
            return (kind, c_desc, o_desc), vals

        kinds = st.sampled_from(["list", "large_list", "fixed", "struct", "map"])
        return st.builds(wrap, kinds, inner, inner)

    nested = st.recursive(leaves, extend, max_leaves=4)
    dictionary = st.sampled_from(["string", "int64"]).map(
        lambda k: (("dict", (k,), (k,)), _LEAVES[k][0]))
    return st.one_of(nested, dictionary)


def _nested_type(desc: tuple, lib: Any) -> Any:
    kind = desc[0]
    if kind in _LEAVES:
        spec = _LEAVES[kind][1]
        return getattr(lib, spec[0])(*spec[1:])
    child = _nested_type(desc[1], lib)
    if kind == "list":
        return lib.list_(child)
    if kind == "large_list":
        return lib.large_list(child)
    if kind == "fixed":
        return lib.list_(child, 2) if lib is pa else lib.fixed_size_list(child, 2)
    if kind == "struct":
        return lib.struct([lib.field("a", child), lib.field("b", _nested_type(desc[2], lib))])
    if kind == "map":
        return lib.map_(lib.string(), child)
    return lib.dictionary(lib.int8(), child)


@st.composite
def nested_lists(draw: Any) -> tuple[list, tuple]:
    desc, vals = draw(_nested_types())
    return draw(st.lists(st.one_of(st.none(), vals), max_size=5)), desc


def _kept_nested(values: list, desc: tuple):
    def kept(ours: tuple, theirs: tuple) -> bool:
        dicts = _as_dicts(values, desc)
        if theirs[0] != "ok" and dicts != values:
            # (24) structs of dicts and tuples mixed: pyarrow takes the kind of the first
            # and refuses the other; quiver takes each by its own rule (a tuple by position)
            again = _run(lambda: pa.array(dicts, _nested_type(desc, pa)))
            _compare(ours, again, _kept_nested(dicts, desc))
            return True
        return False
    return kept


def _as_dicts(values: Any, desc: tuple) -> Any:
    """``values`` of type ``desc`` with every struct value a dict."""
    kind = desc[0]
    out = []
    for v in values:
        if v is None:
            out.append(v)
        elif kind == "struct":
            d = dict(v) if isinstance(v, dict) else dict(zip("ab", v))
            for key, sub in (("a", desc[1]), ("b", desc[2])):
                if key in d:
                    d[key] = _as_dicts([d[key]], sub)[0]
            out.append(d)
        elif kind in ("list", "large_list", "fixed"):
            out.append(type(v)(_as_dicts(list(v), desc[1])))
        elif kind == "map":
            pairs = v.items() if isinstance(v, dict) else v
            items = _as_dicts([p[1] for p in pairs], desc[1])
            out.append({p[0]: x for p, x in zip(pairs, items)} if isinstance(v, dict)
                       else [(p[0], x) for p, x in zip(pairs, items)])
        else:
            out.append(v)
    return out


@SETTINGS
@given(nested_lists())
def test_nested_python_values_as_pyarrow(case: tuple[list, tuple]) -> None:
    values, desc = case
    q_type, p_type = _nested_type(desc, qv), _nested_type(desc, pa)
    ours = _run(lambda: qv.array(values, q_type))
    theirs = _run(lambda: pa.array(values, p_type))
    _compare(ours, theirs, _kept_nested(values, desc))


# -- numpy arrays ---------------------------------------------------------------------

_DTYPES = ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "?",
           "M8[s]", "M8[ms]", "M8[us]", "M8[ns]", "M8[D]", "m8[s]", "m8[ms]", "m8[us]",
           "m8[ns]"]


@st.composite
def numpy_arrays(draw: Any) -> tuple[np.ndarray, tuple | None, bool]:
    dtype = np.dtype(draw(st.sampled_from(_DTYPES)))
    n = draw(st.integers(0, 8))
    if dtype.kind == "f":
        raw = draw(st.lists(st.floats(allow_nan=True, width=dtype.itemsize * 8), min_size=n,
                            max_size=n))
        arr = np.array(raw, dtype=dtype)
    elif dtype.kind == "b":
        arr = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=dtype)
    else:
        info = np.iinfo(dtype if dtype.kind in "iu" else np.int64)
        small = st.integers(-(10**6), 10**6).filter(lambda v: info.min <= v <= info.max)
        ints = draw(st.lists(st.one_of(small, st.integers(int(info.min), int(info.max))),
                             min_size=n, max_size=n))
        arr = np.array(ints, dtype=np.int64 if dtype.kind in "Mm" else dtype)
        if dtype.kind in "Mm":
            arr = arr.view(dtype)
    if draw(st.booleans()):  # strided: every other value of a longer array
        longer = np.repeat(arr, 2)
        arr = longer[::2]
    if draw(st.integers(0, 3)) == 0:
        arr = arr.astype(arr.dtype.newbyteorder(">" if arr.dtype.isnative else "<"))
    if draw(st.integers(0, 3)) == 0:
        arr = np.ma.masked_array(arr, mask=draw(st.lists(st.booleans(), min_size=len(arr),
                                                         max_size=len(arr))))
    return arr, draw(st.sampled_from(_TYPES)), draw(st.booleans())


def _out_of_dates(arr: np.ndarray, target: str) -> bool:
    """Whether a valid datetime64 of ``arr`` lies past the dates ``target`` holds."""
    data = np.ma.getdata(arr)
    valid = ~np.ma.getmaskarray(arr) & ~np.isnat(data)
    unit = np.datetime_data(data.dtype)[0]
    per_day = int(np.timedelta64(1, "D").astype(f"m8[{unit}]").astype(np.int64))
    days = [int(v) // per_day for v in data.view(np.int64)[valid].tolist()]
    bound = 2**31 if target == "date32" else 2**63 // 86_400_000
    return any(not -bound <= d < bound for d in days)


def _kept_numpy(arr: np.ndarray, spec: tuple | None, safe: bool):
    def kept(ours: tuple, theirs: tuple) -> bool:
        data = arr.data if isinstance(arr, np.ma.MaskedArray) else arr
        if not data.dtype.isnative and data.dtype.itemsize > 1 and theirs[0] != "ok":  # (1)
            native = arr.astype(data.dtype.newbyteorder("="))
            again = _run(lambda: pa.array(native, _types(spec)[1], safe=safe))
            _compare(ours, again, _kept_numpy(native, spec, safe))
            return True
        if isinstance(arr, np.ma.MaskedArray) and data.dtype.kind in "Mm" and np.isnat(
                data[~np.ma.getmaskarray(arr)]).any():  # (14): NaT is null, mask or not
            nulls = np.ma.getmaskarray(arr) | np.isnat(data)
            again = _run(lambda: pa.array(np.ma.masked_array(data, nulls), _types(spec)[1],
                                          safe=safe))
            _compare(ours, again, _kept_numpy(np.ma.masked_array(data, nulls), spec, safe))
            return True
        if spec is None and data.dtype == np.dtype("M8[D]") and _out_of_dates(arr, "date32"):
            return ours[0] == "quiver-error"  # (15)
        if spec is None:
            return False
        target = spec[0]
        if target in ("string", "large_string", "binary"):  # (5)
            return ours[0] == "quiver-error" or (ours[0] == "ok" and ours[1].null_count == len(
                arr))
        if data.dtype == np.dtype("M8[D]") and target == "timestamp":  # (13)
            unit = spec[1]
            per_day = int(np.timedelta64(1, "D").astype(f"m8[{unit}]").astype(np.int64))
            valid = ~np.ma.getmaskarray(arr) & ~np.isnat(data)
            days = data.view(np.int64)[valid].tolist()
            if ours[0] == "quiver-error":  # only for days past the unit's int64 range
                return safe and any(abs(d) * per_day >= 2**63 for d in days)
            want = np.asarray(arr.astype(f"M8[{unit}]")).view(np.int64)
            got = pa.array(ours[1]).cast(pa.int64()).fill_null(np.iinfo(np.int64).min)
            return got.to_pylist() == np.where(np.ma.getmaskarray(arr), np.iinfo(
                np.int64).min, want).tolist()
        if target in ("date32", "date64") and data.dtype.kind == "M" and _out_of_dates(
                arr, target):  # (15)
            return ours[0] == "quiver-error" or not safe
        if target in ("time32", "time64") and data.dtype.kind == "M" and ours[0] == "ok":
            unit = np.datetime_data(data.dtype)[0]
            per_day = int(np.timedelta64(1, "D").astype(f"m8[{unit}]").astype(np.int64))
            valid = ~np.ma.getmaskarray(arr) & ~np.isnat(data)
            if (data.view(np.int64)[valid] < np.iinfo(np.int64).min + per_day).any():  # (16)
                return True
        if theirs[0] == "ok":
            return False
        if data.dtype.kind in "iu" and target in ("timestamp", "duration", "date64",
                                                  "time32", "time64", "date32"):  # (4)
            return ours[0] in ("ok", "quiver-error")
        if data.dtype.kind in "iubf" and target == "decimal128":  # (5)
            return ours[0] in ("ok", "quiver-error")
        if len(arr) == 0:  # (12)
            return ours[0] == "quiver-error" or len(ours[1]) == 0
        if data.dtype.kind == "b" and target == "float16":  # (11)
            return ours[0] == "ok" and ours[1].to_pylist() == [
                None if v is None else float(v) for v in pa.array(arr).to_pylist()]
        if data.dtype == "f2" and target == "bool_":  # (11)
            return ours[0] == "ok" and ours[1].to_pylist() == [
                None if v is None else v != 0 for v in pa.array(arr).to_pylist()]
        return False
    return kept


@SETTINGS
@given(numpy_arrays())
def test_numpy_arrays_as_pyarrow(case: tuple[np.ndarray, tuple | None, bool]) -> None:
    arr, spec, safe = case
    q_type, p_type = _types(spec)
    ours = _run(lambda: qv.array(arr, q_type, safe=safe))
    theirs = _run(lambda: pa.array(arr, p_type, safe=safe))
    _compare(ours, theirs, _kept_numpy(arr, spec, safe))


# -- pandas ---------------------------------------------------------------------------

def _pandas_columns(draw: Any, n: int) -> dict[str, Any]:
    ints = st.lists(st.integers(-(2**62), 2**62), min_size=n, max_size=n)
    maybe_ints = st.lists(st.one_of(st.none(), st.integers(-(2**62), 2**62)),
                          min_size=n, max_size=n)
    floats = st.lists(st.floats(allow_nan=True), min_size=n, max_size=n)
    texts = st.lists(st.one_of(st.none(), st.text(max_size=4)), min_size=n, max_size=n)
    stamps = st.lists(st.one_of(st.none(), st.integers(-(2**60), 2**60)), min_size=n,
                      max_size=n)
    makers = {
        "int64": lambda: pd.Series(draw(ints), dtype="int64"),
        "int8": lambda: pd.Series(np.array(draw(ints)) % 100, dtype="int8"),
        "uint32": lambda: pd.Series(np.abs(np.array(draw(ints))) % 2**32, dtype="uint32"),
        "float64": lambda: pd.Series(draw(floats), dtype="float64"),
        "float32": lambda: pd.Series(draw(st.lists(st.floats(width=32), min_size=n,
                                                   max_size=n)), dtype="float32"),
        "bool": lambda: pd.Series(draw(st.lists(st.booleans(), min_size=n, max_size=n)),
                                  dtype=bool),
        "Int64": lambda: pd.Series(draw(maybe_ints), dtype="Int64"),
        "UInt8": lambda: pd.Series([None if v is None else v % 256 for v in draw(maybe_ints)],
                                   dtype="UInt8"),
        "Float64": lambda: pd.Series([None if v is None else v / 7 for v in draw(maybe_ints)],
                                     dtype="Float64"),
        "boolean": lambda: pd.Series([None if v is None else v % 2 == 0
                                      for v in draw(maybe_ints)], dtype="boolean"),
        "int64[pyarrow]": lambda: pd.Series(draw(maybe_ints), dtype="int64[pyarrow]"),
        "double[pyarrow]": lambda: pd.Series(
            [None if v is None else v / 3 for v in draw(maybe_ints)], dtype="double[pyarrow]"),
        "string[pyarrow]": lambda: pd.Series(draw(texts), dtype="string[pyarrow]"),
        "string": lambda: pd.Series(draw(texts), dtype="string"),
        "str": lambda: pd.Series(draw(texts), dtype="str"),
        "object_str": lambda: pd.Series(draw(texts), dtype=object),
        "category": lambda: pd.Series(draw(texts), dtype="category"),
        "datetime64[ns]": lambda: pd.Series(
            np.array([np.iinfo(np.int64).min if v is None else v for v in draw(stamps)],
                     dtype=np.int64).view("M8[ns]")),
        "datetime64[us]": lambda: pd.Series(
            np.array([np.iinfo(np.int64).min if v is None else v // 1000
                      for v in draw(stamps)], dtype=np.int64).view("M8[us]")),
        "datetime_tz": lambda: pd.Series(
            np.array([np.iinfo(np.int64).min if v is None else v for v in draw(stamps)],
                     dtype=np.int64).view("M8[ns]")).dt.tz_localize("UTC").dt.tz_convert(
                         draw(st.sampled_from(["Europe/Paris", "UTC", "America/New_York"]))),
        "timedelta64[ns]": lambda: pd.Series(
            np.array([np.iinfo(np.int64).min if v is None else v for v in draw(stamps)],
                     dtype=np.int64).view("m8[ns]")),
        "category_int": lambda: pd.Series(draw(maybe_ints), dtype="Int64").astype("category"),
        "timestamp[pyarrow]": lambda: pd.Series(
            [None if v is None else pd.Timestamp(v // 1000, unit="us") for v in draw(stamps)],
            dtype=pd.ArrowDtype(pa.timestamp("us", "UTC"))),
        "date32[pyarrow]": lambda: pd.Series(
            draw(st.lists(st.one_of(st.none(), st.dates()), min_size=n, max_size=n)),
            dtype=pd.ArrowDtype(pa.date32())),
        "bool_object": lambda: pd.Series(
            draw(st.lists(st.one_of(st.none(), st.booleans()), min_size=n, max_size=n)),
            dtype=object),
        "object_date": lambda: pd.Series(
            draw(st.lists(st.one_of(st.none(), st.dates()), min_size=n, max_size=n)),
            dtype=object),
        "object_decimal": lambda: pd.Series(
            draw(st.lists(st.one_of(st.none(), st.decimals(places=2, allow_nan=False,
                                                            allow_infinity=False,
                                                            min_value=-999, max_value=999)),
                          min_size=n, max_size=n)), dtype=object),
    }
    chosen = draw(st.lists(st.sampled_from(sorted(makers)), min_size=1, max_size=3,
                           unique=True))
    return {name: makers[name]() for name in chosen}


@st.composite
def frames(draw: Any) -> Any:
    n = draw(st.integers(0, 5))
    df = pd.DataFrame(_pandas_columns(draw, n))
    index = draw(st.sampled_from(["range", "range_step", "int", "str", "datetime", "named",
                                  "multi"]))
    if index == "range_step":
        df.index = pd.RangeIndex(10, 10 + 3 * n, 3)
    elif index == "int":
        df.index = pd.Index(draw(st.lists(st.integers(-99, 99), min_size=n, max_size=n)),
                            dtype="int64")
    elif index == "str":
        df.index = pd.Index([f"r{i}" for i in range(n)])
    elif index == "datetime":
        df.index = pd.date_range("2020-01-01", periods=n, freq="D", name="when")
    elif index == "named":
        df.index = pd.RangeIndex(n, name="idx")
    elif index == "multi":
        df.index = pd.MultiIndex.from_arrays([[f"k{i % 2}" for i in range(n)], list(range(n))],
                                             names=["k", None])
    return df


@SETTINGS
@given(frames())
def test_pandas_frames_as_pyarrow(df: Any) -> None:
    ours = _run(lambda: qv.Table.from_pandas(df))
    theirs = _run(lambda: pa.Table.from_pandas(df))
    assert ours[0] != "error", f"quiver raised a raw {type(ours[1]).__name__}: {ours[1]}"
    if theirs[0] != "ok":
        assert ours[0] == "quiver-error", f"pyarrow raises {theirs[1]!r}, quiver converts"
        return
    assert ours[0] == "ok", f"pyarrow converts, quiver raises {ours[1]!r}"
    back = pa.table(ours[1])
    assert back.schema.remove_metadata() == theirs[1].schema.remove_metadata()
    for name in theirs[1].column_names:
        assert _norm(back.column(name).to_pylist()) == _norm(
            theirs[1].column(name).to_pylist()), name
    ours_meta = back.schema.pandas_metadata
    theirs_meta = theirs[1].schema.pandas_metadata
    assert ours_meta["index_columns"] == theirs_meta["index_columns"]
    for mine, want in zip(ours_meta["columns"], theirs_meta["columns"]):
        assert (mine["name"], mine["pandas_type"], mine["numpy_type"]) == (
            want["name"], want["pandas_type"], want["numpy_type"])
    # and back to pandas: the frame pyarrow gives from its own table
    pd.testing.assert_frame_equal(ours[1].to_pandas(), theirs[1].to_pandas())


# -- pandas with a schema ---------------------------------------------------------------

# the casts a schema asks for, per pyarrow type of the column (as pyarrow infers it)
_SCHEMA_CASTS: dict[str, list[Any]] = {
    "int64": [pa.int32(), pa.int8(), pa.float64(), pa.uint64(), pa.string()],
    "int8": [pa.int64(), pa.uint8(), pa.float32()],
    "uint32": [pa.int64(), pa.int32(), pa.uint8()],
    "double": [pa.float32(), pa.int64(), pa.float16()],
    "float": [pa.float64(), pa.int32()],
    "bool": [pa.int8(), pa.string()],
    "string": [pa.large_string(), pa.binary(), pa.int64(), pa.string_view()],
    "large_string": [pa.string()],
    "timestamp[ns]": [pa.timestamp("us"), pa.timestamp("s"), pa.date32(), pa.int64()],
    "timestamp[us]": [pa.timestamp("ns"), pa.timestamp("ms")],
    "duration[ns]": [pa.duration("us"), pa.int64()],
    "date32[day]": [pa.timestamp("s"), pa.date64()],
    "decimal128(5, 2)": [pa.decimal128(10, 3), pa.decimal128(3, 1), pa.float64()],
    "dictionary<values=string, indices=int8, ordered=0>": [pa.string()],
}


def _schema_cast(draw: Any, t: Any) -> Any:
    if pa.types.is_timestamp(t) and t.tz is not None:
        return draw(st.sampled_from([pa.timestamp("us", t.tz), pa.timestamp(t.unit, "UTC"),
                                     pa.timestamp(t.unit)]))
    return draw(st.sampled_from(_SCHEMA_CASTS.get(str(t), [t])))


@st.composite
def frames_with_schemas(draw: Any) -> tuple[Any, Any, Any]:
    df = draw(frames())
    preserve = draw(st.sampled_from([None, True, False]))
    natural = _run(lambda: pa.Schema.from_pandas(df, preserve_index=preserve))
    assume(natural[0] == "ok")
    fields = list(natural[1].remove_metadata())
    chosen = draw(st.lists(st.sampled_from(range(len(fields))), unique=True, max_size=4)
                  ) if fields else []
    out = []
    for i in chosen:
        f = fields[i]
        t = _schema_cast(draw, f.type) if draw(st.booleans()) else f.type
        out.append(pa.field(f.name, t, nullable=pa.types.is_null(t) or draw(
            st.integers(0, 4)) != 0))
    if draw(st.integers(0, 6)) == 0:
        out.append(pa.field("no_such_column", pa.int64()))
    return df, pa.schema(out), preserve


def _kept_schema(df: Any, schema: Any, preserve: Any):
    def kept(ours: tuple, theirs: tuple) -> bool:
        if theirs[0] == "ok" or ours[0] != "ok":
            return False
        dates = [f.name for f in schema if pa.types.is_timestamp(f.type)
                 and f.name in df.columns and df[f.name].dtype == object
                 and any(type(v) is dt.date for v in df[f.name])]
        if not dates:
            return False
        # (3) date objects for a timestamp field: quiver takes their midnight
        midnight = df.assign(**{name: [None if v is None else dt.datetime.combine(
            v, dt.time()) for v in df[name]] for name in dates})
        midnight = midnight.astype({name: object for name in dates})
        again = _run(lambda: pa.Table.from_pandas(midnight, schema=schema,
                                                  preserve_index=preserve))
        _same_tables(ours, again, _kept_schema(midnight, schema, preserve))
        return True
    return kept


def _same_tables(ours: tuple, theirs: tuple, kept: Any) -> None:
    """The rule of the module docstring for tables from pandas."""
    assert ours[0] != "error", f"quiver raised a raw {type(ours[1]).__name__}: {ours[1]}"
    if kept(ours, theirs):
        return
    if theirs[0] != "ok":
        assert ours[0] == "quiver-error", (
            f"pyarrow raises {theirs[1]!r}, quiver converts: {pa.table(ours[1])}")
        return
    assert ours[0] == "ok", f"pyarrow converts, quiver raises {ours[1]!r}"
    back = pa.table(ours[1])
    assert back.schema.remove_metadata() == theirs[1].schema.remove_metadata()
    for name in theirs[1].column_names:
        assert _same_values(back.column(name), theirs[1].column(name)), name
    assert back.schema.pandas_metadata["index_columns"] == theirs[
        1].schema.pandas_metadata["index_columns"]


@SETTINGS
@given(frames_with_schemas(), st.booleans())
def test_pandas_frames_with_a_schema_as_pyarrow(case: tuple, through_table: bool) -> None:
    df, schema, preserve = case
    q_schema = qv.schema(schema)
    if through_table:  # qv.table(df, schema=...) / pa.table(df, schema=...)
        ours = _run(lambda: qv.table(df, schema=q_schema))
        theirs = _run(lambda: pa.table(df, schema=schema))
        preserve = None  # (the default of both)
    else:
        ours = _run(lambda: qv.Table.from_pandas(df, schema=q_schema, preserve_index=preserve))
        theirs = _run(lambda: pa.Table.from_pandas(df, schema=schema, preserve_index=preserve))
    _same_tables(ours, theirs, _kept_schema(df, schema, preserve))
