"""Building arrays from Python values and numpy arrays: ``quiver.array(values, type=None)``
(Columnar spec, "Physical Memory Layout": the builders produce offset-0 arrays with
canonical buffers).

Type inference follows pyarrow: int -> int64, float (or ints mixed with floats) -> double,
str -> string, bytes -> binary, bool -> bool, None only -> null, Decimal -> decimal128 of the
smallest precision/scale holding every value (decimal256 past 38 digits), date -> date32,
datetime -> timestamp[us] (with the time zone of tz-aware values), time -> time64[us],
timedelta -> duration[us], list/tuple -> list_, dict (str keys) -> struct, uuid.UUID ->
arrow.uuid; numpy scalars keep their type (np.float16 -> halffloat, np.datetime64 /
np.timedelta64 -> timestamp / duration of their unit, NaT among them null).  Temporal values
are converted exactly (pandas Timestamp/Timedelta keep their nanoseconds) and floored to a
coarser unit, as pyarrow does; pandas' NaT is null only with ``from_pandas=True``.

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

This module holds the entry points (:func:`array`, :func:`from_numpy`); the parts live by job
in :mod:`~quiver.array.infer` (type inference), :mod:`~quiver.array.build_common` (the
``builder`` dispatch and shared helpers), and the builders per layout family, which register
themselves in the registry's ``builder`` piece: :mod:`~quiver.array.build_fixed`,
:mod:`~quiver.array.build_binary` and :mod:`~quiver.array.build_nested`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from .. import types as t
from ..buffers import as_buffer, pack_bits
from ..errors import ArrowInvalid, ArrowTypeError, NotSupported
from ..layout import storage_numpy_dtype
from . import build_fixed as _build_fixed  # noqa: F401  (registers the fixed-width builders)
from . import build_nested as _build_nested  # noqa: F401  (registers the nested builders)
from . import build_numpy as _numpy
from .base import Array, make_array
from .build_binary import MixedKinds, build_binary
from .build_common import bitmap_of, build, is_nat_kind, kind_error
from .infer import infer_type

__all__ = ["array", "build", "from_numpy", "infer_type"]


def array(
    values: Any,
    type: t.DataType | None = None,
    *,
    mask: Any = None,
    from_pandas: bool = False,
    safe: bool = True,
) -> Array:
    """An Arrow array from Python values or a numpy array (pyarrow's ``pa.array``).

    ``type`` is inferred when None.  ``mask`` (True = null) adds nulls; ``from_pandas``
    makes float NaN and pandas' NaT null (numpy NaT scalars are null in any case).
    ``safe=False`` lets a numpy array's conversion to ``type`` wrap or truncate values
    (as in pyarrow, Python values are checked in any case).  See the module docstring for
    the rules.

    >>> import quiver as qv
    >>> qv.array([1, None, 3], qv.int8()).to_pylist()
    [1, None, 3]
    """
    type = _type_asked(type)
    if isinstance(values, Array):
        if type is None or values.type == type:
            return values
        raise NotSupported(
            f"casting arrays is not supported: found {values.type}, asked for {type}; "
            "build from values with the wanted type instead"
        )
    if isinstance(values, np.ndarray):
        return from_numpy(values, type, mask=mask, from_pandas=from_pandas, safe=safe)
    if hasattr(values, "__array__") and not isinstance(values, (list, tuple)):
        # other array-likes: go through numpy
        return from_numpy(np.asarray(values), type, mask=mask, from_pandas=from_pandas,
                          safe=safe)
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
        values = _pandas_nulls(values)
    if type is None:
        first = next((v for v in values if v is not None), None)
        if first.__class__ is str:  # common case: skip inference, the join checks kinds
            try:
                return build_binary(values, t.string(), strict=True)
            except MixedKinds:
                pass
        return build(values, infer_type(values), checked=True)
    return build(values, type)



def _type_asked(type: Any) -> t.DataType | None:
    """The ``type`` argument as a quiver DataType (another library's type through the C
    data interface, :func:`quiver.types.as_type`), or None when none is asked."""
    if type is None:
        return None
    found = t.as_type(type)
    if found is None:
        raise ArrowTypeError(f"expected a DataType or None, found {type!r}")
    return found


_CONTAINERS = (list, tuple, dict, np.ndarray)


def _pandas_nulls(values: list[Any]) -> list[Any]:
    """The values with pandas' missing markers (float NaN, NaT, ``pd.NA``) as None, as
    pyarrow's ``from_pandas`` reads them: at every depth (inside lists, tuples, dicts and
    numpy arrays among the values)."""
    kinds = set(map(type, values))
    if any(issubclass(k, _CONTAINERS) for k in kinds):
        values = [_nested_pandas_nulls(v) if isinstance(v, _CONTAINERS) else v
                  for v in values]
    if any(k.__name__ == "NAType" for k in kinds):  # pd.NA (by name: no pandas here)
        values = [None if type(v).__name__ == "NAType" else v for v in values]
    kinds = tuple(k for k in kinds if issubclass(k, float) or is_nat_kind(k))
    if not kinds:
        return values
    return [None if isinstance(v, kinds) and v != v else v for v in values]


def _nested_pandas_nulls(value: Any) -> Any:
    """A list, tuple, dict or numpy array of values with :func:`_pandas_nulls` applied."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "f" and value.ndim == 1:
            nan = np.isnan(value)
            if not nan.any():
                return value
            out = value.astype(object)
            out[nan] = None
            return out.tolist()
        return _pandas_nulls(value.tolist()) if value.dtype.kind == "O" else value
    if isinstance(value, dict):
        return dict(zip(value.keys(), _pandas_nulls(list(value.values())), strict=True))
    out = _pandas_nulls(list(value))
    return tuple(out) if isinstance(value, tuple) else out


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
    safe: bool = True,
) -> Array:
    """An array over a 1-D numpy array; zero-copy for fixed-width numeric and temporal data
    in the machine's byte order (swapped arrays are copied into it).

    With an explicit ``type`` the values are converted checked (see
    :mod:`~quiver.array.build_numpy`): a value the type cannot hold raises, unless
    ``safe=False``, which wraps or truncates as pyarrow does.

    >>> import numpy as np
    >>> a = from_numpy(np.arange(4, dtype=np.int32))
    >>> str(a.type), a.to_pylist()
    ('int32', [0, 1, 2, 3])
    """
    type = _type_asked(type)
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
    arr = _numpy.native(arr)
    target = natural if type is None else type
    st = t.storage_of(target)
    if arr.dtype.kind in "Mm":
        nat = np.isnat(arr)
        if nat.any():
            null_mask = nat if null_mask is None else (null_mask | nat)
        arr = _temporal_ticks(arr, null_mask, st, target, safe)
    elif arr.dtype.kind in "bf" and isinstance(st, _TEMPORAL_TYPES):
        # counts of a unit are integers: pyarrow has no cast of floats or bools either
        raise ArrowTypeError(f"expected integers or numpy datetime64/timedelta64 for "
                             f"{target}, found numpy {arr.dtype} values")
    if arr.dtype.kind == "f" and from_pandas:
        nan = np.isnan(arr)
        if nan.any():
            null_mask = nan if null_mask is None else (null_mask | nan)
    valid = None if null_mask is None else ~null_mask
    bitmap, nulls = bitmap_of(valid)
    if isinstance(st, t.BoolType):
        if arr.dtype.kind not in "biuf":
            raise kind_error(arr.dtype, target)
        bits = _numpy.convert_numbers(arr, valid, st, safe)
        return make_array(target, len(arr), (bitmap, pack_bits(bits)), (), nulls)
    npdt = None if isinstance(st, t.DictionaryType) else storage_numpy_dtype(st)
    if npdt is None:
        values = arr.tolist()
        if valid is not None:
            values = [v if ok else None for v, ok in zip(values, valid.tolist())]
        return build(values, target)
    if arr.dtype != npdt:
        arr = _numpy.convert_numbers(arr, valid, st, safe)
    if not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr)
    return make_array(target, len(arr), (bitmap, as_buffer(arr)), (), nulls)


def _temporal_ticks(arr: np.ndarray, null_mask: np.ndarray | None, st: t.DataType,
                    target: t.DataType, safe: bool) -> np.ndarray:
    """The int64 ticks of a native datetime64 / timedelta64 array in the unit of the
    temporal type ``st`` (checked, see :func:`~quiver.array.build_numpy.convert_ticks`;
    a date keeps the day, as in pyarrow), or its own ticks for other targets."""
    have = np.datetime_data(arr.dtype)[0]
    kind = arr.dtype.kind
    allowed = _TEMPORAL_TARGETS[kind if kind == "m" or have != "D" else "D"]
    if not isinstance(st, allowed[0]) and st != allowed[1]:
        raise ArrowTypeError(
            f"expected a type numpy {arr.dtype} values convert to ("
            f"{', '.join(c.__name__ for c in allowed[0])} or {allowed[1]}), found {target}"
        )
    ticks = arr.view(np.int64)
    valid = None if null_mask is None else ~null_mask
    if isinstance(st, t.DateType):  # the day (floored), as pyarrow's cast of a timestamp
        days = ticks // np.int64(_numpy_per(have, "D")) if have != "D" else ticks
        if st.unit == "ms":
            return _numpy.convert_ticks(days, "D", "ms", valid, str(arr.dtype), target, safe)
        return days
    if isinstance(st, t.TimeType):  # the time of day, as pyarrow's cast of a timestamp
        ticks = ticks % np.int64(_numpy_per(have, "D"))
    if isinstance(st, (t.TimestampType, t.DurationType, t.TimeType)):
        return _numpy.convert_ticks(ticks, have, st.unit, valid, str(arr.dtype), target, safe)
    return ticks


# what numpy datetime64 ("M"; "D": in days) and timedelta64 ("m") arrays convert to, as in
# pyarrow: these type classes, or their own storage integer
_TEMPORAL_TARGETS: dict[str, tuple[tuple[type, ...], t.DataType]] = {
    "M": ((t.TimestampType, t.DateType, t.TimeType), t.int64()),
    "D": ((t.TimestampType, t.DateType), t.int32()),
    "m": ((t.DurationType,), t.int64()),
}


_TEMPORAL_TYPES = (t.TimestampType, t.DateType, t.TimeType, t.DurationType)


def _numpy_per(fine: str, coarse: str) -> int:
    return int(np.timedelta64(1, coarse).astype(f"m8[{fine}]").astype(np.int64))
