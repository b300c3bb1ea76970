"""Builders of nested and encoded arrays from Python values: lists, list views, fixed-size
lists, structs, maps, unions, dictionaries, run-end encoded and extension arrays (Columnar
spec, "Nested Layouts", "Union Layout", "Dictionary-encoded Layout", "Run-End Encoded
Layout").  Children are built by :func:`~quiver.array.build_common.build`; an error in a
child names the child's field in its path.

>>> import quiver as qv
>>> qv.array([{"k": 1}], qv.map_(qv.string(), qv.int8())).to_pylist()
[[('k', 1)]]
"""

from __future__ import annotations

import datetime as _dt
import itertools
import uuid as _uuid
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import numpy as np

from .. import registry
from .. import types as t
from ..buffers import as_buffer
from ..errors import ArrowError, ArrowInvalid
from ..layout import storage_numpy_dtype
from .base import Array, make_array
from .build_common import (
    FLOAT_TYPES,
    build,
    fill,
    is_int_kind,
    kind_error,
    offsets_from_lengths,
    validity,
)
from .keys import value_key


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
            raise kind_error(next(v for v in values if type(v) is k), dtype)


@registry.implements("builder", t.ListType, t.LargeListType, t.ListViewType, t.LargeListViewType)
def _build_list(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    bitmap, nulls, valid = validity(values)
    _check_sequences(values, dtype)
    filled = fill(values, valid, ())
    lengths = np.fromiter(map(len, filled), np.int64, len(values))
    child = _build_child(list(itertools.chain.from_iterable(filled)), dtype.value_field)  # type: ignore[attr-defined]
    large = isinstance(dtype, (t.LargeListType, t.LargeListViewType))
    offs = offsets_from_lengths(lengths, large, dtype)
    if isinstance(dtype, (t.ListViewType, t.LargeListViewType)):
        bufs = (bitmap, as_buffer(offs[:-1].copy()), as_buffer(lengths.astype(offs.dtype)))
    else:
        bufs = (bitmap, as_buffer(offs))
    return make_array(dtype, len(values), bufs, (child,), nulls)


@registry.implements("builder", t.FixedSizeListType)
def _build_fixed_list(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    bitmap, nulls, valid = validity(values)
    _check_sequences(values, dtype)
    k = dtype.list_size  # type: ignore[attr-defined]
    filled = fill(values, valid, (None,) * k)
    lengths = np.fromiter(map(len, filled), np.int64, len(values))
    if lengths.size and (lengths != k).any():
        bad = int(lengths[lengths != k][0])
        raise ArrowInvalid(f"expected lists of {k} values for {dtype}, found {bad} values")
    child = _build_child(list(itertools.chain.from_iterable(filled)), dtype.value_field)  # type: ignore[attr-defined]
    return make_array(dtype, len(values), (bitmap,), (child,), nulls)


@registry.implements("builder", t.StructType)
def _build_struct(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    bitmap, nulls, _ = validity(values)
    fields = dtype.fields
    for kind in set(map(type, values)) - {type(None)}:
        if not issubclass(kind, (Mapping, tuple, list)):
            raise kind_error(next(v for v in values if type(v) is kind), dtype)
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


@registry.implements("builder", t.MapType)
def _build_map(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    bitmap, nulls, _ = validity(values)
    pairs_per = []
    for v in values:
        if v is None:
            pairs_per.append(())
        elif isinstance(v, Mapping):
            pairs_per.append(tuple(v.items()))
        elif isinstance(v, (list, tuple)):
            pairs_per.append(v)
        else:
            raise kind_error(v, dtype)
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
    offs = offsets_from_lengths(lengths, False, dtype)
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
        if not is_int_kind(type(v)):
            return False
        info = np.iinfo(storage_numpy_dtype(st))
        return info.min <= int(v) <= info.max
    if isinstance(st, t.FloatingPointType):
        return is_int_kind(type(v)) or isinstance(v, FLOAT_TYPES)
    if isinstance(st, t.DecimalType):
        return isinstance(v, Decimal)
    if isinstance(st, t.TimestampType):
        return isinstance(v, (_dt.datetime, np.datetime64))
    if isinstance(st, t.DateType):
        return isinstance(v, _dt.date) and not isinstance(v, _dt.datetime)
    if isinstance(st, t.TimeType):
        return isinstance(v, _dt.time)
    if isinstance(st, t.DurationType):
        return isinstance(v, (_dt.timedelta, np.timedelta64))
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


@registry.implements("builder", t.UnionType)
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
            raise kind_error(v, dtype)
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


# kinds whose (type, value) pair is the key value_key would give: the fast path
_PLAIN_KEYS = frozenset({int, str, bytes, bool, type(None), Decimal, _dt.datetime, _dt.date,
                         _dt.time, _dt.timedelta})
_FLOATS = frozenset({float, np.float16, np.float32, np.float64})


def _key(v: Any) -> Any:
    """The equality key of a Python value, as Arrow's hash tables compare the stored value
    (floats by their bits: -0.0 and 0.0 stay apart, a NaN equals a NaN of its bits)."""
    tv = type(v)
    if tv in _PLAIN_KEYS or (tv in _FLOATS and v and v == v):  # non-zero, non-NaN floats:
        return (tv, v)  # equal values have equal bits
    return value_key(v)


@registry.implements("builder", t.DictionaryType)
def _build_dictionary(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    dt_: t.DictionaryType = dtype  # type: ignore[assignment]
    bitmap, nulls, _ = validity(values)
    codes: dict[Any, int] = {}
    uniques: list[Any] = []
    idx = []
    for v in values:
        if v is None:
            idx.append(0)
            continue
        tv = type(v)
        if tv is str or tv is int or tv is bytes or (tv is float and v and v == v):
            key = (tv, v)  # the fast path of _key
        else:
            key = _key(v)
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


@registry.implements("builder", t.RunEndEncodedType)
def _build_ree(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    rt: t.RunEndEncodedType = dtype  # type: ignore[assignment]
    ends: list[int] = []
    run_values: list[Any] = []
    prev: Any = object()  # its key is no value's: the first value starts a run
    prev_type: Any = object
    plain, floats = _PLAIN_KEYS, _FLOATS
    for i, v in enumerate(values):
        tv = type(v)
        if tv is not prev_type:  # bytearray and bytes, or numpy and Python floats, may match
            new = _key(v) != _key(prev)
        elif v != prev:  # a NaN too: equal to a NaN of its bits
            new = v == v or _key(v) != _key(prev)
        elif tv is str or (tv is float and v) or tv in plain or (v and tv in floats):
            new = False  # equal, and the same bits
        else:  # equal: float zeros and (nested) lists may still differ in their bits
            new = _key(v) != _key(prev)
        if new:
            if run_values:
                ends.append(i)
            run_values.append(v)
            prev, prev_type = v, tv
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


@registry.implements("builder", t.ExtensionType)
def _build_extension(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    et: t.ExtensionType = dtype  # type: ignore[assignment]
    if et.extension_name == "arrow.uuid":
        values = [v.bytes if isinstance(v, _uuid.UUID) else v for v in values]
    elif et.extension_name == "arrow.bool8":  # bools as 0 / 1 (ints are taken as they are)
        values = [int(v) if isinstance(v, (bool, np.bool_)) else v for v in values]
    storage = build(values, et.storage_type)
    return make_array(dtype, len(storage), storage.buffers, storage.children,
                      storage.null_count, 0, storage.dictionary)
