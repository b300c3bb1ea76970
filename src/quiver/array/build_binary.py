"""Builders of binary and string arrays from Python values (Columnar spec, "Variable-size
Binary Layout", "Variable-size Binary View Layout", "Fixed-size Primitive Layout" for
fixed-size binary).  The common case, a list of ``str`` or ``bytes`` with or without None,
is joined and encoded once at C speed (:func:`_joined`); other kinds are converted value by
value.

>>> import quiver as qv
>>> qv.array(["a", None, "é"]).to_pylist()
['a', None, 'é']
"""

from __future__ import annotations

import itertools
import operator
from typing import Any

import numpy as np

from .. import registry
from .. import types as t
from ..buffers import as_buffer
from ..errors import ArrowInvalid
from .base import Array, make_array
from .build_common import (
    bitmap_of,
    fill,
    kind_error,
    narrow_offsets,
    offsets_from_lengths,
    valid_mask,
    validity,
)


def _lengths(chunks: list[Any]) -> np.ndarray:
    return np.fromiter(map(len, chunks), np.int64, len(chunks))


_BYTES_LIKE = (bytes, bytearray, memoryview)


def _only_bytes_like(values: list[Any]) -> bool:
    """True when every value is None or bytes-like: ``bytes.join`` also takes numpy scalars
    and arrays (any buffer), whose memory pyarrow does not take as a binary value."""
    return all(k is type(None) or issubclass(k, _BYTES_LIKE) for k in set(map(type, values)))


class MixedKinds(Exception):
    """Internal: a fast path met values of another kind and must hand over."""


def _join(sep: Any, items: list[Any]) -> Any:
    """``sep.join(items)``; bytes are joined 4096 at a time and the pieces joined again,
    which is several times faster for long lists (``bytes.join`` keeps a buffer view per
    item, and a million of them leave the CPU caches)."""
    if isinstance(sep, str) or len(items) <= _JOIN_STEP:
        return sep.join(items)
    step = _JOIN_STEP
    return sep.join([sep.join(items[i : i + step]) for i in range(0, len(items), step)])


_JOIN_STEP = 4096


def _joined(values: list[Any], is_string: bool,
            checked: bool = False) -> tuple[bytes, np.ndarray, np.ndarray | None] | None:
    """(all bytes joined, the ``len(values) + 1`` offsets, valid mask or None), or
    None where this fast path does not apply and :func:`_encoded` must do the work.

    The values are joined once with a NUL separator, None becoming a one-byte marker
    (``\\x01``), and encoded once; numpy then finds the separators (so no ``len`` per value)
    and the markers standing alone between two separators (so no ``is None`` per value).
    A value that is itself ``"\\x01"`` looks like a marker, so the slots of the markers found
    are looked up (C-level, one per marker) to keep only the real Nones.  It does not apply
    to an empty list, values of another kind, values holding NUL bytes, or text that is not
    valid UTF-8, nor to binary values that are not all bytes-like (unless ``checked``: type
    inference saw them all).
    """
    n = len(values)
    if n == 0 or (not is_string and not checked and not _only_bytes_like(values)):
        return None
    sep = "\x00" if is_string else b"\x00"
    has_none = False
    try:
        joined = _join(sep, values)  # fails on the first None or value of another kind
    except TypeError:
        has_none = True
        # 4096 values at a time, each joined while still in the CPU caches
        step = _JOIN_STEP
        try:
            if is_string:
                joined = sep.join([
                    sep.join(["\x01" if v is None else v for v in values[i : i + step]])
                    for i in range(0, n, step)
                ])
            else:
                joined = sep.join([
                    sep.join([b"\x01" if v is None else v for v in values[i : i + step]])
                    for i in range(0, n, step)
                ])
        except TypeError:
            return None
    if is_string:
        try:
            blob = joined.encode("ascii") if joined.isascii() else joined.encode("utf-8")
        except UnicodeError:
            return None
    else:
        blob = bytes(joined)
    del joined
    buf = np.frombuffer(blob, np.uint8)
    size = len(buf)
    # int32 arithmetic while the bytes allow it (the common, non-large case needs no cast)
    odt = np.int32 if size <= np.iinfo(np.int32).max else np.int64
    offs = np.empty(n + 1, dtype=odt)
    offs[0] = 0
    if not has_none:
        seps = np.flatnonzero(buf == 0)  # the end of every value but the last
        if len(seps) != n - 1:  # NUL bytes inside the values
            return None
        # each end less the separators before it
        np.subtract(seps, np.arange(n - 1, dtype=seps.dtype), out=offs[1:n], casting="unsafe")
        offs[n] = size - (n - 1)
        return blob.translate(None, b"\x00"), offs, None
    # the separators and the \x01 bytes (markers, and any in the data), in order
    pos = np.flatnonzero(buf <= 1)
    is_sep = buf[pos] == 0
    if np.count_nonzero(is_sep) != n - 1:  # NUL bytes inside the values
        return None
    at = np.flatnonzero(~is_sep)  # where the \x01 bytes are in ``pos``
    ones = pos[at]
    slots = at - np.arange(len(at))  # the value holding each: separators before it
    before = buf[np.maximum(ones - 1, 0)]
    after = buf[np.minimum(ones + 1, size - 1)]
    is_mark = ((ones == 0) | (before == 0)) & ((ones == size - 1) | (after == 0))
    if not is_mark.all():
        slots = slots[is_mark]
    if not len(slots):  # cannot happen: a None was met
        return None
    picked = operator.itemgetter(*slots.tolist())(values)
    picked = picked if len(slots) > 1 else (picked,)
    if picked.count(None) != len(slots):  # some values are "\x01" themselves
        is_none = np.fromiter(map(operator.is_, picked, itertools.repeat(None)), bool,
                              len(slots))
        is_mark[is_mark] = is_none
        slots = slots[is_none]
    valid = np.ones(n, dtype=bool)
    valid[slots] = False
    if is_mark.all():  # every \x01 byte is a marker: drop them all
        data: Any = blob.translate(None, b"\x00\x01")
    else:  # keep the \x01 bytes of the data
        keep = np.ones(len(pos), dtype=bool)
        keep[at[~is_mark]] = False
        pos, is_sep = pos[keep], is_sep[keep]
        gone = np.zeros(size, dtype=bool)
        gone[pos] = True
        data = buf[~gone].tobytes()
    # each end less the bytes dropped before it (every entry of ``pos`` is dropped)
    kept_before = np.subtract(pos, np.arange(len(pos), dtype=pos.dtype), out=pos)
    offs[1:n] = kept_before[is_sep]
    offs[n] = size - len(pos)
    return data, offs, valid


def _encoded(values: list[Any], dtype: t.DataType, is_string: bool, strict: bool = False,
             try_joined: bool = True,
             checked: bool = False) -> tuple[Any, np.ndarray, np.ndarray | None]:
    """(all bytes joined, byte length of each value, valid mask or None).

    One C-level ``join`` does the work when every value is of the expected kind (``str``
    for strings, bytes-like for binary); other kinds are converted one by one, or, with
    ``strict``, raise :class:`MixedKinds`.  :func:`_joined` is tried first unless
    ``try_joined`` is False (the caller tried it already).
    """
    fast = _joined(values, is_string, checked) if try_joined else None
    if fast is not None:
        data, offs, valid = fast
        return data, np.diff(offs).astype(np.int64), valid
    n = len(values)
    empty: Any = "" if is_string else b""
    valid = None
    present = values
    all_lengths = None
    try:
        joined = empty.join(values)  # fails on the first None or value of another kind
    except TypeError:
        # one C-level pass: the length of every value, -1 for None (and for objects
        # without a length, which the check below tells apart)
        all_lengths = np.fromiter(map(operator.length_hint, values, itertools.repeat(-1)),
                                  np.int64, n)
        valid = all_lengths >= 0
        if valid.all():
            valid = None
        else:
            missing = list(itertools.compress(values, ~valid))
            if missing.count(None) != len(missing):
                valid = valid_mask(values)
                all_lengths = None
            present = list(itertools.compress(values, valid))
        try:
            joined = empty.join(present)
        except TypeError:
            joined = None
    if joined is not None and not is_string and not checked and not _only_bytes_like(present):
        joined = None  # numpy scalars or arrays among them: refused one by one below
    if checked and joined is not None and not is_string and len(joined) != sum(
            map(len, present)):
        # a str subclass exporting other bytes (np.str_: its UCS-4 memory) was joined
        joined = None
    try:
        if joined is not None and (not is_string or joined.isascii()):
            # for ASCII text, byte lengths equal character lengths
            data: Any = joined.encode("ascii") if is_string else joined
            if all_lengths is not None:
                return data, np.maximum(all_lengths, 0), valid
            present_lengths = _lengths(present)
        else:
            if joined is None and strict:
                raise MixedKinds
            if joined is not None:
                enc = [v.encode("utf-8") for v in present]
            else:
                conv = _as_utf8 if is_string else _as_bytes
                enc = [conv(v, dtype) for v in present]
            data = b"".join(enc)
            present_lengths = _lengths(enc)
    except UnicodeError as exc:
        raise ArrowInvalid(f"expected valid UTF-8 for {dtype}, found {exc.reason}") from None
    if valid is None:
        return data, present_lengths, None
    lengths = np.zeros(n, dtype=np.int64)
    lengths[valid] = present_lengths
    return data, lengths, valid


def _as_utf8(v: Any, dtype: t.DataType) -> bytes:
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, (bytes, bytearray, memoryview)):
        b = bytes(v)
        b.decode("utf-8")
        return b
    raise kind_error(v, dtype)


def _as_bytes(v: Any, dtype: t.DataType) -> bytes:
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    if isinstance(v, str):
        return v.encode("utf-8")
    raise kind_error(v, dtype)


@registry.implements("builder", t.BinaryType, t.StringType)
def build_binary(values: list[Any], dtype: t.DataType, checked: bool = False,
                  strict: bool = False) -> Array:
    is_string = isinstance(dtype, t.StringType)
    fast = _joined(values, is_string, checked)
    if fast is not None:
        data, offs, valid = fast
        offs = narrow_offsets(offs, dtype.large, dtype)  # type: ignore[attr-defined]
    else:
        data, lengths, valid = _encoded(values, dtype, is_string, strict, try_joined=False,
                                        checked=checked)
        offs = offsets_from_lengths(lengths, dtype.large, dtype)  # type: ignore[attr-defined]
    bitmap, nulls = bitmap_of(valid)
    return make_array(dtype, len(values), (bitmap, as_buffer(offs), as_buffer(data)), (), nulls)


@registry.implements("builder", t.BinaryViewType, t.StringViewType)
def _build_view(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    n = len(values)
    blob, lengths, valid = _encoded(values, dtype, isinstance(dtype, t.StringViewType))
    bitmap, nulls = bitmap_of(valid)
    if lengths.size and lengths.max() > np.iinfo(np.int32).max:
        raise ArrowInvalid(f"expected values below 2**31 bytes, found {int(lengths.max())}")
    starts = np.zeros(n, dtype=np.int64)
    if n:
        np.cumsum(lengths[:-1], out=starts[1:])
    padded = np.concatenate([as_buffer(blob), np.zeros(12, dtype=np.uint8)])
    views = np.zeros((n, 16), dtype=np.uint8)
    cols = np.arange(12)
    inline = lengths <= 12
    gathered = padded[starts[:, None] + cols]  # first 12 bytes of each value
    gathered[cols[None, :] >= lengths[:, None]] = 0
    views[:, 4:] = gathered
    long_ = ~inline
    buffers: list[Any] = [bitmap, None]
    if long_.any():
        long_lens = lengths[long_]
        long_starts = starts[long_]
        data_offs = np.zeros(len(long_lens), dtype=np.int64)
        np.cumsum(long_lens[:-1], out=data_offs[1:])
        total = int(long_lens.sum())
        if total > np.iinfo(np.int32).max:
            raise ArrowInvalid(f"expected at most 2**31-1 bytes of long values, found {total}")
        # gather the long values' bytes into one data buffer
        src = np.repeat(long_starts - data_offs, long_lens) + np.arange(total)
        data = padded[src]
        ints = views.view("<i4").reshape(n, 4)
        ints[long_, 2] = 0
        ints[long_, 3] = data_offs.astype(np.int32)
        buffers.append(data)
    views.view("<i4").reshape(n, 4)[:, 0] = lengths.astype(np.int32)
    buffers[1] = views.reshape(-1)
    return make_array(dtype, n, buffers, (), nulls)


@registry.implements("builder", t.FixedSizeBinaryType)
def _build_fixed_binary(values: list[Any], dtype: t.DataType, checked: bool = False) -> Array:
    bitmap, nulls, valid = validity(values)
    w = dtype.width  # type: ignore[attr-defined]
    data, lengths, _ = _encoded(fill(values, valid, bytes(w)), dtype, False)
    if lengths.size and (lengths != w).any():
        bad = int(lengths[lengths != w][0])
        raise ArrowInvalid(f"expected values of {w} bytes for {dtype}, found {bad} bytes")
    return make_array(dtype, len(values), (bitmap, as_buffer(data)), (), nulls)
