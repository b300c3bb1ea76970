"""Computing one batch's statistics, column by column (vectorized)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import registry
from ... import types as t
from ...array import make_array
from ...array.base import Array
from ...array.concat import concat_arrays
from ...array.data import null_mask, typed_view
from ...array.decimal import limbs, sort_keys, to_ints
from ...array.validate_values import full_union, join_path
from ...buffers import unpack_bits
from ...errors import ArrowError, ArrowInvalid
from ...layout import kept_per_type, storage_numpy_dtype
from .model import PREFIX_BYTES, BatchStatistics, ColumnStatistics, value_type

# -- computing -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Bounds:
    """A column's bounds in one batch as it is written: the minimum and the maximum as
    one-value arrays of the column's value type (slices of the batch where possible),
    exactness, NaN and null counts."""

    low: Array | None
    high: Array | None = None
    min_exact: bool = True
    max_exact: bool = True
    nan_count: int = 0
    null_count: int = 0

    @property
    def pair(self) -> Array | None:
        """[min, max] as one array (None without bounds)."""
        if self.low is None or self.high is None:
            return None

        return concat_arrays([self.low, self.high])


def _numbers(arr: Array, dtype: t.DataType) -> np.ndarray:

    return arr._fixed_values_view(storage_numpy_dtype(dtype))


def _split(pair: Array) -> tuple[Array, Array]:
    return pair.slice(0, 1), pair.slice(1, 1)


def _fixed_extremes(values: np.ndarray, valid: np.ndarray | None
                    ) -> tuple[Any, Any, int] | None:
    """(minimum, maximum, NaN count) of a numeric column's values (numpy scalars of their
    dtype); the bounds are None when every valid value is NaN, and the whole result None
    without valid values."""
    if valid is not None:
        values = values[valid]
    if len(values) == 0:
        return None
    if values.dtype.kind != "f":  # integers: any minimum is the minimum
        return values.min(), values.max(), 0
    # min propagates NaN, so one (SIMD) pass tells whether there is any: 5x faster than
    # argmin over 100,000 doubles
    low = values.min()
    if not np.isnan(low):
        return (*signed_zero_bounds(low, values.max()), 0)
    nan = np.isnan(values)
    nans = int(np.count_nonzero(nan))
    if nans == len(values):
        return None, None, nans
    usable = values[~nan]
    return (*signed_zero_bounds(usable[usable.argmin()], usable[usable.argmax()]), nans)


def signed_zero_bounds(low: Any, high: Any) -> tuple[Any, Any]:
    """Float bounds with a zero minimum as -0.0 and a zero maximum as +0.0: bounds of
    either zero, whichever one a reduction happened to return (they compare equal), so
    that the stored bytes do not depend on how the values were reduced."""
    if low == 0:
        low = -abs(low)
    if high == 0:
        high = abs(high)
    return low, high


def _decimal_bounds(arr: Array, dtype: t.DataType, valid: np.ndarray | None
                    ) -> tuple[int, int] | None:
    keys = sort_keys(limbs(arr.buffers[1], dtype.width, arr.offset, len(arr)))  # type: ignore[attr-defined, arg-type]
    rows = np.arange(len(arr)) if valid is None else np.flatnonzero(valid)
    if len(rows) == 0:
        return None
    order = np.lexsort([k[rows] for k in keys])  # the last key (the sign word) is primary
    return int(rows[order[0]]), int(rows[order[-1]])


def value_offsets(arr: Array) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """The offsets of this array's values (intp, indexing the data buffer, which a slice
    may share with a whole column), their lengths, the data buffer and the shortest
    length (0 without values), checked to be non-decreasing and within the buffer: values
    the structural checks do not look at, which statistics index by."""
    width = "<i8" if arr.type.large else "<i4"
    if arr.buffers[1] is None and len(arr):
        raise ArrowInvalid(f"expected an offsets buffer for {arr.type}, found None")
    offsets = typed_view(arr.buffers[1] if arr.buffers[1] is not None else _NO_BYTES, width,
                         arr.offset, len(arr) + 1 if len(arr) else 0, "offsets")
    offsets = offsets.astype(np.intp) if len(offsets) else np.zeros(1, np.intp)
    data = arr.buffers[2] if arr.buffers[2] is not None else _NO_BYTES
    first, last = int(offsets[0]), int(offsets[-1])
    lengths = offsets[1:] - offsets[:-1]
    shortest = int(lengths.min()) if len(lengths) else 0
    if first < 0 or last > len(data) or shortest < 0:
        raise ArrowInvalid(
            f"expected offsets that do not decrease, within the {len(data)} data bytes, "
            f"to compute statistics; found {first}..{last}"
        )
    return offsets, lengths, data, shortest


_NO_BYTES = np.zeros(0, np.uint8)


def _bytes_of(arr: Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Starts, lengths and the data bytes of this array's values only (a slice's data
    buffer may hold a whole column)."""
    offsets, lengths, data, _ = value_offsets(arr)
    first = int(offsets[0])
    return offsets[:-1] - first, lengths, data[first : int(offsets[-1])]


# the top k bytes of a big-endian word (k = 0..8): what is left of a value's 8 bytes
_KEEP = np.array([0] + [((1 << (8 * k)) - 1) << (8 * (8 - k)) for k in range(1, 9)],
                 dtype=np.uint64)


_ALL_ONES = np.uint64(0xFFFF_FFFF_FFFF_FFFF)


def _gather(words: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Bytes ``at .. at+8`` of the 8-aligned little-endian uint64 ``words`` as big-endian
    uint64s (byte ``at`` the most significant) where ``at >> 3`` + 1 indexes ``words``
    (other rows read the last words). Two gathers from the aligned words and shifts:
    numpy gathers from an unaligned view of the bytes 1.5x as slowly."""
    index = at >> 3
    shift = at << 3
    shift &= 63
    shift = shift.view(np.uint64)
    found = words.take(index, mode="clip")  # never past the words
    found >>= shift
    np.subtract(64, shift, out=shift)  # numpy shifts by 64 or more give 0 (numpy >= 1.18)
    high = words[1:].take(index, mode="clip")
    high <<= shift
    found |= high
    return found.byteswap(inplace=True)


#: reads of at most this many rows gather from an unaligned view: slower per row, but
#: with fewer numpy calls
_FEW_ROWS = 2048


class Words:
    """Reads bytes ``j .. j+8`` of a string or binary array's valid values as big-endian
    uint64s (bytes past a value's end are 0), so that comparing words compares the
    values' bytes eight at a time; ``starts`` index ``data``, ``lengths`` are the values'
    (row ``i`` is the ``i``-th valid value)."""

    def __init__(self, arr: Array, valid: np.ndarray | None) -> None:

        offsets, lengths, data, shortest = value_offsets(arr)
        starts = offsets[:-1]
        if valid is not None:
            starts, lengths = starts[valid], lengths[valid]
            shortest = int(lengths.min()) if len(lengths) else 0
        first, last = int(offsets[0]), int(offsets[-1])
        if data.ctypes.data % 8 or not data.flags.c_contiguous:
            # an aligned copy of the values' bytes, a word of zeros past them
            copy = np.zeros(((last - first) >> 3) + 2, np.uint64).view(np.uint8)
            copy[: last - first] = data[first:last]
            data, starts, last = copy, starts - first, last - first
        whole = len(data) >> 3
        self.words = data[: 8 * whole].view("<u8")
        # reading at ``limit`` or later would pass the buffer's last whole word: those
        # reads take the buffer's last 8 to 15 bytes from ``tail``, zero-padded
        self.limit = 8 * max(whole - 1, 0)
        tail = np.zeros(24, np.uint8)
        tail[: len(data) - self.limit] = data[self.limit :]
        # element i: bytes i .. i+8 (unaligned reads, for a few rows)
        self.tail = np.ndarray((17,), ">u8", tail, 0, (1,))
        self.bytes = np.ndarray((self.limit,), ">u8", data, 0, (1,))
        self.starts, self.lengths, self.data, self.stop = starts, lengths, data, last
        self.shortest = shortest
        self._every: dict[int, np.ndarray] = {}  # j -> the words of every row

    def _read(self, at: np.ndarray) -> np.ndarray:
        """:func:`_gather` at byte positions ``at`` (non-decreasing, at most ``stop``)."""
        few = len(at) <= _FEW_ROWS
        if at[-1] < self.limit:
            return self.bytes[at].astype(np.uint64) if few else _gather(self.words, at)
        k = int(np.searchsorted(at, self.limit))  # rows k.. read the tail
        if few or k == 0:
            found = np.empty(len(at), np.uint64)
            found[:k] = self.bytes[at[:k]]
        else:  # their reads from the words are clipped to the last words, then replaced
            found = _gather(self.words, at)
        found[k:] = self.tail[at[k:] - self.limit]
        return found

    def at(self, rows: np.ndarray | None, j: int) -> np.ndarray:
        """The words at byte ``j`` of the values of ``rows`` (increasing; None: every
        row, computed once per ``j``)."""
        if rows is None:
            found = self._every.get(j)
            if found is None:
                found = self._every[j] = self._at(self.starts, self.lengths, j,
                                                  self.shortest)
            return found
        return self._at(self.starts[rows], self.lengths[rows], j, None)

    def _at(self, starts: np.ndarray, lengths: np.ndarray, j: int, shortest: int | None
            ) -> np.ndarray:
        if j:
            starts = starts + j
            if starts[-1] > self.stop:  # past the last value's end: such values are 0s
                np.minimum(starts, self.stop, out=starts)
        words = self._read(starts)
        if shortest is not None and shortest >= j + 8:
            return words
        # bytes past the values' ends count as 0
        if len(words) <= _FEW_ROWS:  # fewest numpy calls
            words &= _KEEP[np.minimum(np.maximum(lengths - j, 0), 8)]
            return words
        short = lengths < j + 8
        count = np.count_nonzero(short)
        if count == 0:
            return words
        if 16 * count < len(words):  # a few: those alone (a quarter of the time)
            short = short.nonzero()[0]
            words[short] &= _KEEP[np.maximum(lengths[short] - j, 0)]
            return words
        # many: every word, keeping its top (length - j) bytes; a shift by 64 or more gives
        # 0, keeping every byte of the longer values
        if j:
            kept = lengths - j
            np.maximum(kept, 0, out=kept)
            kept <<= 3
        else:
            kept = lengths << 3
        drop = np.right_shift(_ALL_ONES, kept.view(np.uint64))
        np.invert(drop, out=drop)
        words &= drop
        return words

    def value(self, row: int, n: int) -> bytes:
        """The first ``n`` bytes (at most) of value ``row``."""
        start = int(self.starts[row])
        return bytes(self.data[start : start + min(int(self.lengths[row]), n)])


def _extreme_bytes(words: Words, largest: bool) -> tuple[int, bool]:
    """The row whose value is smallest (largest) comparing at most PREFIX_BYTES bytes,
    eight at a time, and whether the comparison was cut short."""
    lengths = words.lengths
    candidates = None  # every row (as long as they all tie)
    sizes = lengths
    for j in range(0, PREFIX_BYTES, 8):
        found = words.at(candidates, j)
        best = found.max() if largest else found.min()
        hit = found == best
        if candidates is not None:
            candidates = candidates[hit]
        elif np.count_nonzero(hit) < len(hit):
            candidates = hit.nonzero()[0]
        if candidates is not None:
            sizes = lengths[candidates]
        shortest, longest = int(sizes.min()), int(sizes.max())
        if len(sizes) == 1 or longest <= j + 8:
            # the rest are equal up to their ends: the shortest is smallest, longest largest
            return _row_of(candidates, sizes, largest)
        if not largest and shortest <= j + 8:
            # those ending here are prefixes of the others, zero-padded: smaller
            return _row_of(candidates, sizes, False)[0], False
    if largest:
        return _row_of(candidates, sizes, True)
    row = 0 if candidates is None else int(candidates[0])
    return row, bool(lengths[row] > PREFIX_BYTES)


def _row_of(candidates: np.ndarray | None, sizes: np.ndarray, longest: bool
            ) -> tuple[int, bool]:
    """The first of the longest (shortest) candidates and whether it passes PREFIX_BYTES."""
    pick = int(np.argmax(sizes) if longest else np.argmin(sizes))
    return (pick if candidates is None else int(candidates[pick]),
            bool(sizes[pick] > PREFIX_BYTES))


def _round_up(prefix: bytes, is_text: bool) -> bytes | None:
    """The smallest value above every value that starts with ``prefix`` (None: no bound)."""
    if is_text:
        text = prefix.decode("utf-8", errors="ignore")
        while text:
            last = ord(text[-1])
            if last < 0x10FFFF and not 0xD7FF <= last < 0xE000:
                return (text[:-1] + chr(last + 1)).encode()
            text = text[:-1]
        return None
    raw = bytearray(prefix)
    while raw:
        if raw[-1] < 0xFF:
            raw[-1] += 1
            return bytes(raw)
        raw.pop()
    return None


#: rows of a string or binary column handled at once: its words, starts and lengths then
#: stay in the CPU's cache (100,000 strings took 1.5-2x as long in one piece)
BINARY_CHUNK = 32768


def _binary_extremes(arr: Array, dtype: t.DataType, valid: np.ndarray | None
                     ) -> tuple[bytes, bytes, bool, bool] | None:
    """(minimum, maximum, min exact, max exact) of a string or binary column as bytes,
    each at most PREFIX_BYTES long; None without valid values or without an upper bound.
    A long column is taken in chunks of :data:`BINARY_CHUNK` rows whose bounds are then
    compared (an exact bound winning a tie: the same bounds as in one piece)."""
    n = len(arr)
    if n <= BINARY_CHUNK:
        found = [_chunk_extremes(arr, dtype, valid)]
    else:
        found = [_chunk_extremes(arr.slice(k, min(BINARY_CHUNK, n - k)), dtype,
                                 None if valid is None else valid[k : k + BINARY_CHUNK])
                 for k in range(0, n, BINARY_CHUNK)]
    found = [f for f in found if f is not None]  # chunks with valid values
    if not found or any(f[1] is None for f in found):  # none, or no upper bound
        return None
    low, _, min_exact, _ = min(found, key=lambda f: (f[0], not f[2]))
    _, high, _, max_exact = max(found, key=lambda f: (f[1], f[3]))
    return low, high, min_exact, max_exact


def _chunk_extremes(arr: Array, dtype: t.DataType, valid: np.ndarray | None
                    ) -> tuple[bytes, bytes | None, bool, bool] | None:
    """:func:`_binary_extremes` of one chunk, but None only without valid values, and a
    maximum of None when nothing bounds it."""
    words = Words(arr, valid)
    if len(words.lengths) == 0:
        return None
    low, low_cut = _extreme_bytes(words, False)
    high, high_cut = _extreme_bytes(words, True)
    return finish_binary(words.value, low, high, low_cut, high_cut,
                          isinstance(dtype, t.StringType))


def finish_binary(value: Any, low: int, high: int, low_cut: bool, high_cut: bool,
                   is_text: bool) -> tuple[bytes, bytes | None, bool, bool]:
    """(minimum, maximum, min exact, max exact) from the rows holding them (``value(row,
    n)``: a row's first n bytes) and whether comparing them was cut short: a cut maximum
    rounded up (None when nothing bounds it), a cut string minimum kept whole characters."""
    if not low_cut and not high_cut:
        return value(low, PREFIX_BYTES), value(high, PREFIX_BYTES), True, True
    low_value = value(low, PREFIX_BYTES)
    high_value: bytes | None = value(high, PREFIX_BYTES + 1)
    if high_cut:
        high_value = _round_up(high_value[:PREFIX_BYTES], is_text)
    if is_text:
        low_value = low_value.decode("utf-8", errors="ignore").encode()
    return low_value, high_value, not low_cut, not high_cut


# What a column's statistics are while a file is written: plain numbers, no arrays.
# (null_count, nan_count, min, max, min_exact, max_exact); min and max are None without
# bounds, else raw values of the column's value type (see values_array).
Raw = tuple[int, int, Any, Any, bool, bool]


def _bounded(extremes: Any) -> Any:
    """A column's :data:`Raw` function around ``extremes(arr, null_count)``, which gives
    (NaN count, min, max, min exact, max exact), or None without bounds; a column of
    nulls only is not asked."""

    def raw(arr: Array) -> Raw:
        nulls = arr.null_count
        found = None if nulls == len(arr) else extremes(arr, nulls)
        if found is None:
            return (nulls, 0, None, None, True, True)
        return (nulls, *found)

    return raw


def _check_selected_slots(arr: Array, path: str) -> None:
    """Check the slots the logical null count follows (union type codes and dense union
    offsets, in every union it reaches through union children, run-end encoded values
    and dictionary values) against their children, vectorized: the structural level of
    reading leaves them to the full one, and a slot outside its child raises
    :class:`~quiver.errors.ArrowInvalid` naming the field, not an IndexError."""
    st = t.storage_of(arr.type)
    if isinstance(st, t.DictionaryType):
        if arr.dictionary is not None:
            _check_selected_slots(arr.dictionary, join_path(path, "<dictionary>"))
    elif isinstance(st, t.RunEndEncodedType):
        _check_selected_slots(arr.children[1], join_path(path, "values"))
    elif isinstance(st, t.UnionType):
        full_union(arr, st, list(arr.buffers), dense=st.mode == "dense", path=path)
        for f, child in zip(st.fields, arr.children):
            _check_selected_slots(child, join_path(path, f.name))


def raw_function(dtype: t.DataType, name: str = "") -> Any:
    """The function computing a column's :data:`Raw` statistics, chosen once per type
    (``name``: the column's, for errors) by the registry's ``stats_raw`` piece."""
    make = registry.table("stats_raw").get(type(dtype))
    if make is None:
        raise registry.missing_piece("stats_raw", type(dtype))
    return make(dtype, name)


@registry.implements("stats_raw", t.ExtensionType)
def _extension_raw(dtype: t.DataType, name: str) -> Any:
    """Bounds of the storage values."""
    storage = dtype.storage_type  # type: ignore[attr-defined]
    inner = raw_function(storage, name)

    def extension(arr: Array) -> Raw:
        return inner(make_array(storage, len(arr), arr.buffers, arr.children,
                                arr.null_count, arr.offset, arr.dictionary))

    return extension


@registry.implements("stats_raw", t.DictionaryType, t.RunEndEncodedType, t.UnionType)
def _logical_raw(dtype: t.DataType, name: str) -> Any:
    """The logical null count; a dictionary's bounds are its values' (not exact)."""
    is_dict = isinstance(dtype, t.DictionaryType)

    def logical(arr: Array) -> Raw:
        # the logical null count (a null dictionary value, run or union child is a
        # null to every reader), which is what a filter's "is null" asks about
        _check_selected_slots(arr, name)
        nulls = int(np.count_nonzero(null_mask(arr)))
        if not is_dict or arr.dictionary is None or nulls == len(arr):
            return (nulls, 0, None, None, True, True)
        inner = column_raw(arr.dictionary)
        # a float dictionary's NaNs count where a valid slot selects one (the values'
        # own count is of the dictionary, not of the column)
        nans = _selected_nans(arr, name) if inner[1] else 0
        return (nulls, nans, inner[2], inner[3], False, False)

    return logical


def _selected_nans(arr: Array, name: str) -> int:
    """How many valid slots of a dictionary array (one with a valid slot) select a NaN
    value (an index of a null slot is not read: it may be anything)."""
    values = arr.dictionary
    nan_at = np.isnan(values._fixed_values_view(storage_numpy_dtype(values.type)))
    valid_values = values.is_valid_mask()
    if valid_values is not None:
        nan_at &= valid_values
    try:
        selected = nan_at[arr.checked_index_values()]  # type: ignore[attr-defined]
    except ArrowInvalid as exc:
        raise ArrowInvalid(f"{exc} in column {name!r}") from None
    own = arr.is_valid_mask()
    if own is not None:
        selected &= own
    return int(np.count_nonzero(selected))


@registry.implements("stats_raw", t.IntegerType, t.FloatingPointType, t.DateType, t.TimeType,
                     t.TimestampType, t.DurationType)
def _fixed_raw(dtype: t.DataType, name: str) -> Any:
    """Bounds of numbers numpy holds (NaNs counted for floats)."""
    np_dtype = storage_numpy_dtype(dtype)

    def fixed(arr: Array, nulls: int) -> tuple[Any, ...] | None:
        found = _fixed_extremes(arr._fixed_values_view(np_dtype),
                                arr.is_valid_mask() if nulls else None)
        return None if found is None else (found[2], found[0], found[1], True, True)

    return _bounded(fixed)


@registry.implements("stats_raw", t.DecimalType)
def _decimal_raw(dtype: t.DataType, name: str) -> Any:
    """Bounds of decimals, as their stored bytes."""
    width = dtype.byte_width

    def decimal(arr: Array, nulls: int) -> tuple[Any, ...] | None:
        rows = _decimal_bounds(arr, dtype, arr.is_valid_mask())
        if rows is None:
            return None
        raw = arr.buffers[1]
        low, high = ((arr.offset + r) * width for r in rows)
        return (0, bytes(raw[low : low + width]), bytes(raw[high : high + width]),
                True, True)

    return _bounded(decimal)


@registry.implements("stats_raw", t.BoolType)
def _bool_raw(dtype: t.DataType, name: str) -> Any:
    """Bounds of booleans: all true, any true."""

    def boolean(arr: Array, nulls: int) -> tuple[Any, ...]:
        bits = unpack_bits(arr.buffers[1], arr.offset, len(arr))
        valid = arr.is_valid_mask()
        if valid is not None:
            bits = bits[valid]
        return (0, bool(bits.all()), bool(bits.any()), True, True)

    return _bounded(boolean)


@registry.implements("stats_raw", t.StringType, t.BinaryType)
def _binary_raw(dtype: t.DataType, name: str) -> Any:
    """Bounds of strings and binaries (cut to a prefix when long)."""

    def binary(arr: Array, nulls: int) -> tuple[Any, ...] | None:
        found = _binary_extremes(arr, dtype, arr.is_valid_mask())
        return None if found is None else (0, *found)

    return _bounded(binary)


@registry.implements("stats_raw", t.NullType, t.IntervalType, t.BinaryViewType,
                     t.StringViewType, t.FixedSizeBinaryType, t.ListType, t.LargeListType,
                     t.ListViewType, t.LargeListViewType, t.FixedSizeListType, t.StructType,
                     t.MapType)
def _counts_raw(dtype: t.DataType, name: str) -> Any:
    """No bounds: the null count only."""

    def other(arr: Array) -> Raw:
        return (arr.null_count, 0, None, None, True, True)

    return other


_RAW_FUNCTIONS: dict[t.DataType, Any] = {}


def column_raw(arr: Array) -> Raw:
    """A column's statistics as plain numbers (see :data:`Raw`)."""
    return kept_per_type(_RAW_FUNCTIONS, arr.type, raw_function, 256)(arr)


def values_array(values: Sequence[Any], dtype: t.DataType) -> Array:
    """An array of ``dtype`` (a value type: no extension, no dictionary) holding raw
    bounds as :func:`column_raw` gives them."""

    n = len(values)
    storage = t.storage_of(dtype)
    np_dtype = storage_numpy_dtype(storage)
    if np_dtype is not None:
        data = np.array(values, dtype=np_dtype) if n else np.zeros(0, np_dtype)
        return make_array(dtype, n, [None, data.view(np.uint8)], (), 0)
    if isinstance(storage, t.DecimalType):
        data = np.frombuffer(b"".join(values), np.uint8).copy()
        return make_array(dtype, n, [None, data], (), 0)
    if isinstance(storage, t.BoolType):
        bits = np.packbits(np.array(values, dtype=bool), bitorder="little")
        return make_array(dtype, n, [None, bits], (), 0)
    offsets = np.zeros(n + 1, np.int64 if storage.large else np.int32)
    np.cumsum([len(v) for v in values], out=offsets[1:])
    data = np.frombuffer(b"".join(values), np.uint8).copy()
    return make_array(dtype, n, [None, offsets.view(np.uint8), data], (), 0)


def column_bounds(arr: Array) -> Bounds:
    """The statistics of one column of a batch, as they are written."""
    nulls, nans, low, high, min_exact, max_exact = column_raw(arr)
    if low is None or high is None:
        return Bounds(None, nan_count=nans, null_count=nulls)
    pair = values_array([low, high], value_type(arr.type))
    return Bounds(*_split(pair), min_exact, max_exact, nans, nulls)


def compare_values(a: Array, b: Array) -> int:
    """-1, 0 or 1 comparing two one-value arrays of the same bounded type by their
    stored values (what Python objects cannot always hold: nanosecond timestamps past
    year 2262, durations beyond microseconds)."""
    dtype = t.storage_of(a.type)
    if isinstance(dtype, t.DictionaryType):
        dtype = dtype.value_type
    if isinstance(dtype, (t.StringType, t.BinaryType)):
        _, la, da = _bytes_of(a)
        _, lb, db = _bytes_of(b)
        x, y = bytes(da[: int(la[0])]), bytes(db[: int(lb[0])])
        return (x > y) - (x < y)
    if isinstance(dtype, t.BoolType):
        x = bool(unpack_bits(a.buffers[1], a.offset, 1)[0])
        y = bool(unpack_bits(b.buffers[1], b.offset, 1)[0])
        return (x > y) - (x < y)
    if isinstance(dtype, t.DecimalType):
        x = to_ints(limbs(a.buffers[1], dtype.width, a.offset, 1))[0]
        y = to_ints(limbs(b.buffers[1], dtype.width, b.offset, 1))[0]
        return (x > y) - (x < y)
    x, y = _numbers(a, dtype)[0], _numbers(b, dtype)[0]
    return int(x > y) - int(x < y)


def _to_column_statistics(b: Bounds) -> ColumnStatistics:
    if b.low is None or b.high is None:
        return ColumnStatistics(b.null_count, nan_count=b.nan_count)
    try:
        low, high = b.low.to_pylist()[0], b.high.to_pylist()[0]
    except (ArrowError, ValueError, OverflowError):  # bounds Python cannot hold
        return ColumnStatistics(b.null_count, nan_count=b.nan_count)
    return ColumnStatistics(b.null_count, low, high, b.min_exact, b.max_exact, b.nan_count,
                            True)


def column_statistics(arr: Array) -> ColumnStatistics:
    """The statistics of one column of a batch, with Python values."""
    return _to_column_statistics(column_bounds(arr))


@dataclass(frozen=True, slots=True)
class WrittenBatch:
    """What the writer keeps of one batch: its index, rows and each column's bounds."""

    index: int
    row_count: int
    columns: tuple[Bounds, ...]

    def to_statistics(self) -> BatchStatistics:
        """With Python values."""
        return BatchStatistics(self.index, self.row_count,
                               tuple(_to_column_statistics(b) for b in self.columns))


def batch_statistics(batch: Any, index: int) -> BatchStatistics:
    """The statistics of one record batch (every top-level column)."""
    return columns_statistics(batch.columns, batch.num_rows, index).to_statistics()


def columns_statistics(columns: Any, num_rows: int, index: int) -> WrittenBatch:
    """What the writer keeps of a batch given as its columns and row count."""
    return WrittenBatch(index, num_rows, tuple(column_bounds(c) for c in columns))
