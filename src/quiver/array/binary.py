"""Variable-size binary and string arrays (Columnar spec, "Variable-size Binary Layout"
and "Variable-size Binary View Layout").

Binary and string arrays carry ``(validity, offsets, data)`` with 32-bit offsets, or 64-bit
ones for the ``large_`` types.  View arrays carry ``(validity, views, data0, data1, ...)``:
each 16-byte view holds an int32 length and either up to 12 inline bytes, or a 4-byte
prefix, an int32 buffer index and an int32 offset into that variadic data buffer.

>>> import quiver as qv
>>> qv.array(["a", None, "ccc"]).to_pylist()
['a', None, 'ccc']
>>> qv.array([b"short", b"a value longer than twelve bytes"], qv.binary_view()).to_pylist()
[b'short', b'a value longer than twelve bytes']
"""

from __future__ import annotations

import itertools
from collections import deque
from typing import Any

import numpy as np

from .. import types as t
from ..errors import ArrowInvalid
from .base import Array, OffsetArray, register_array_class, typed_view


def _with_nulls(values: list[Any], mask: np.ndarray | None) -> list[Any]:
    """``values`` (a fresh list) with None where ``mask`` is False, set in place by one
    C-level ``map`` over the null slots only."""
    if mask is not None:
        nulls = np.flatnonzero(~mask).tolist()
        deque(map(values.__setitem__, nulls, itertools.repeat(None)), maxlen=0)
    return values


def _decode_all(chunks: list[bytes], what: str) -> list[str]:
    try:
        return [c.decode("utf-8") for c in chunks]
    except UnicodeDecodeError as exc:
        raise ArrowInvalid(f"expected valid UTF-8 {what} values, found {exc.reason}") from None


def _slices(blob: bytes, starts: list[int], ends: list[int]) -> list[bytes]:
    return [blob[a:b] for a, b in zip(starts, ends)]


def _split_at(raw: np.ndarray, cuts: np.ndarray, is_string: bool) -> list[Any] | None:
    """The pieces of ``raw`` between ``cuts`` (sorted offsets), made by one C-level split:
    a NUL is inserted at every cut and the whole is decoded once and split on NUL.

    None when that cannot work: offsets out of order, a NUL inside the data, or invalid
    UTF-8 (the caller then takes the value-by-value path and its precise errors).
    """
    if (np.diff(cuts) < 0).any() or (cuts.size and (cuts[0] < 0 or cuts[-1] > len(raw))):
        return None
    if (raw == 0).any():
        return None
    # a NUL after each piece but the last: the piece bytes go everywhere else, in order
    k = len(cuts)
    out = np.zeros(len(raw) + k, dtype=np.uint8)
    keep = np.ones(len(out), dtype=bool)
    keep[cuts.astype(np.intp) + np.arange(k, dtype=np.intp)] = False
    out[keep] = raw
    joined = out.tobytes()
    if not is_string:
        return joined.split(b"\x00")
    try:
        return joined.decode("utf-8").split("\x00")
    except UnicodeDecodeError:
        return None


#: arrays of more values than this are split by :func:`_split_at`; fewer are sliced
#: value by value (fewer numpy calls)
_SPLIT_FROM = 32


class _BinaryValues(Array):
    """Shared code of the binary and string families: Python values from ``_chunks``."""

    __slots__ = ()
    _is_string = False

    def _chunks(self) -> tuple[list[Any], np.ndarray | None]:
        """(the values as bytes or str, valid mask or None)."""
        raise NotImplementedError

    def _values(self, chunks: list[bytes], mask: np.ndarray | None,
                what: str) -> tuple[list[Any], np.ndarray | None]:
        """``(chunks, mask)``, the chunks decoded for the string types (``what`` names the
        type in the error)."""
        if self._is_string:
            return _decode_all(chunks, what), mask
        return chunks, mask

    def to_pylist(self, *, maps_as_pydicts: str | None = None) -> list[Any]:
        """``bytes`` (binary types) or ``str`` (string types) values, None for nulls."""
        vals, mask = self._chunks()
        return _with_nulls(vals, mask)


class _OffsetBinaryArray(_BinaryValues, OffsetArray):
    """Shared code of binary/string arrays with 32- or 64-bit offsets."""

    __slots__ = ()

    def _offset_dtype(self) -> str:
        return "<i8" if t.storage_of(self._type).large else "<i4"  # type: ignore[attr-defined]

    def _chunks(self) -> tuple[list[Any], np.ndarray | None]:
        offs = self.value_offsets()
        mask = self.is_valid_mask()
        if self._length == 0:
            return [], mask
        first, last = int(offs[0]), int(offs[-1])
        if mask is not None:  # null slots may hold any offsets; keep them inside the data
            ends = np.where(mask, offs[1:], offs[:-1])
        else:
            ends = offs[1:]
        local_start = offs[:-1] - first
        local_end = ends - first
        if (
            first < 0
            or last < first
            or (local_end < local_start).any()
            or (local_start < 0).any()
            or (local_end > last - first).any()
        ):
            raise ArrowInvalid(
                f"expected non-decreasing offsets within the data, found {first}..{last}"
            )
        data = self._buffers[2] if len(self._buffers) > 2 else None
        size = 0 if data is None else len(data)
        if last > size:
            raise ArrowInvalid(f"expected a data buffer of at least {last} bytes, found {size}")
        if data is not None and self._length > _SPLIT_FROM:
            split = _split_at(data[first:last], offs[1:-1] - first, self._is_string)
            if split is not None:
                return split, mask
        blob = b"" if data is None else data[first:last].tobytes()
        starts, stops = local_start.tolist(), local_end.tolist()
        if self._is_string and blob.isascii():
            # one decode, then str slicing: byte offsets equal char offsets for ASCII
            text = blob.decode("ascii")
            return [text[a:b] for a, b in zip(starts, stops)], mask
        return self._values(_slices(blob, starts, stops), mask, "string")


@register_array_class(t.BinaryType)
class BinaryArray(_OffsetBinaryArray):
    """Variable-size bytes (``binary`` and ``large_binary``)."""

    __slots__ = ()


@register_array_class(t.StringType)
class StringArray(_OffsetBinaryArray):
    """Variable-size UTF-8 strings (``string`` and ``large_string``)."""

    __slots__ = ()
    _is_string = True


class _ViewBinaryArray(_BinaryValues):
    """Shared code of binary and string view arrays."""

    __slots__ = ()

    @property
    def data_buffers(self) -> tuple[np.ndarray, ...]:
        """The variadic data buffers (after validity and views)."""
        return tuple(self._buffers[2:])  # type: ignore[arg-type]

    def views(self) -> np.ndarray:
        """The views of this slice as an ``(n, 4)`` int32 array (length, prefix, index, offset)."""
        buf = self._buffers[1] if len(self._buffers) > 1 else None
        if buf is None:
            return self._absent_buffer("a views", np.zeros((0, 4), dtype="<i4"))
        return typed_view(buf, "<i4", self._offset * 4, self._length * 4, "views").reshape(-1, 4)

    def _chunks(self) -> tuple[list[Any], np.ndarray | None]:
        n = self._length
        mask = self.is_valid_mask()
        if n == 0:
            return [], mask
        v = self.views()
        lens = v[:, 0].astype(np.int64)
        if mask is not None:
            lens = np.where(mask, lens, 0)
        if (lens < 0).any():
            raise ArrowInvalid(f"expected non-negative view lengths, found {int(lens.min())}")
        inline = lens <= 12
        data = self.data_buffers
        # one blob: the views' bytes, then the data buffers these views use (only those:
        # a slice of one row must not copy every buffer); starts index into it
        raw_views = self._buffers[1][self._offset * 16 : (self._offset + n) * 16]
        parts = [raw_views]
        starts = np.arange(n, dtype=np.int64) * 16 + 4
        outline = ~inline
        if outline.any():
            idx = v[:, 2].astype(np.int64)[outline]
            off = v[:, 3].astype(np.int64)[outline]
            olen = lens[outline]
            if (idx < 0).any() or (idx >= len(data)).any():
                bad = int(idx[(idx < 0) | (idx >= len(data))][0])
                raise ArrowInvalid(
                    f"expected view buffer indices below {len(data)}, found {bad}"
                )
            sizes = np.array([len(d) for d in data], dtype=np.int64)
            if (off < 0).any() or (off + olen > sizes[idx]).any():
                raise ArrowInvalid(
                    "expected views within their data buffers, found one past the end"
                )
            base_of = np.zeros(len(data), dtype=np.int64)
            pos = len(raw_views)
            for used in np.unique(idx).tolist():  # per data buffer, not per row
                base_of[used] = pos
                pos += len(data[used])
                parts.append(data[used])
            starts[outline] = base_of[idx] + off
        pieces = np.concatenate(parts) if len(parts) > 1 else raw_views
        total = int(lens.sum())
        # gather every value's bytes into one contiguous run, then split it once
        src = np.repeat(starts - np.cumsum(lens) + lens, lens) + np.arange(total)
        gathered = pieces[src]
        if n > _SPLIT_FROM:
            split = _split_at(gathered, np.cumsum(lens)[:-1], self._is_string)
            if split is not None:
                return split, mask
        blob = gathered.tobytes()
        ends = np.cumsum(lens).tolist()
        chunks = [blob[b - ln : b] for b, ln in zip(ends, lens.tolist())]
        return self._values(chunks, mask, "string_view")


@register_array_class(t.BinaryViewType)
class BinaryViewArray(_ViewBinaryArray):
    """Bytes stored as 16-byte views."""

    __slots__ = ()


@register_array_class(t.StringViewType)
class StringViewArray(_ViewBinaryArray):
    """UTF-8 strings stored as 16-byte views."""

    __slots__ = ()
    _is_string = True
