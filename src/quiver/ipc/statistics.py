"""Per-batch statistics of IPC files: computed on write, kept in the footer, used on read.

Arrow standardises how statistics look as Arrow data (StatisticsSchema.rst: a
``struct<column: int32, statistics: map<dictionary<int32, utf8>, dense_union<...>>>``
with keys such as ``ARROW:null_count:exact``) but not where an IPC file keeps them.
quiver keeps them in the footer's custom metadata, where every other reader ignores them:

- key ``quiver:statistics``; value: an Arrow IPC *stream*, base64-encoded (so that the
  value is a valid string), of one record batch per record batch of the file, in order;
- each statistics batch has the two columns of StatisticsSchema.rst, ``column: int32``
  and ``statistics: map<dictionary<int32, utf8>, dense_union<...>>``, and its message's
  custom metadata ``quiver:batch`` gives the index of the record batch it describes;
- the row with a null ``column`` holds ``ARROW:row_count:exact``; the row of column *i*
  (the depth-first field index, as in the RecordBatch message's FieldNodes; quiver
  writes top-level columns) holds ``ARROW:null_count:exact`` and, where computed,
  ``ARROW:min_value:exact|approximate`` and ``ARROW:max_value:exact|approximate`` as
  values of the column's own type (a dictionary column: of its value type), and
  ``quiver:nan_count:exact`` for floating-point columns;
- the union's first child is ``int64`` (the counts), then one child per value type.

Min and max ignore nulls and NaN (NaN is counted apart).  Strings and binaries keep at
most :data:`PREFIX_BYTES` bytes: a longer minimum is cut (still a lower bound), a longer
maximum is cut and rounded up (still an upper bound), and both are then marked
approximate, as Parquet does.  A dictionary column's bounds are its dictionary's range,
marked approximate (unused dictionary values may widen it).

Cost.  A writer keeps per batch only plain numbers (:class:`StatisticsCollector`, one
function per column type chosen from the schema) and
builds the statistics batches column-wise at close (:func:`_columnar`).  All statistics
messages of a file share one schema and one metadata layout, so their framed metadata is
handled as a matrix, one row per message (:class:`_Template`), both when writing
(:func:`_bulk_messages`) and when reading (:func:`_bulk_columns`, which also gathers the
bodies column by column); a stream laid out otherwise is read message by message.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import types as t
from ..array import make_array
from ..array.base import Array
from ..array.build import array as build
from ..array.concat import concat_arrays
from ..array.select import _null_mask, take
from ..batch import RecordBatch
from ..buffers import unpack_bits
from ..errors import ArrowError, ArrowInvalid, FormatError
from ..layout import layout_of, storage_numpy_dtype
from ..types import KeyValueMetadata
from . import metadata as md
from .framing import EOS, frame_message, read_frame
from .metadata import V5

STATISTICS_KEY = "quiver:statistics"
BATCH_KEY = "quiver:batch"
PREFIX_BYTES = 64

ROW_COUNT = "ARROW:row_count:exact"
NULL_COUNT = "ARROW:null_count:exact"
NAN_COUNT = "quiver:nan_count:exact"
MIN_EXACT, MIN_APPROX = "ARROW:min_value:exact", "ARROW:min_value:approximate"
MAX_EXACT, MAX_APPROX = "ARROW:max_value:exact", "ARROW:max_value:approximate"


@dataclass(frozen=True, slots=True)
class ColumnStatistics:
    """What one batch's column holds: null and NaN counts and bounds (None: unknown)."""

    null_count: int
    min: Any = None
    max: Any = None
    min_exact: bool = True
    max_exact: bool = True
    nan_count: int = 0
    has_bounds: bool = False


@dataclass(frozen=True, slots=True)
class BatchStatistics:
    """The statistics of one record batch: its index, rows and columns."""

    index: int
    row_count: int
    columns: tuple[ColumnStatistics, ...]


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
    low = values.argmin()  # argmin stops at a NaN: one pass tells whether there is any
    if not np.isnan(values[low]):
        return values[low], values[values.argmax()], 0
    nan = np.isnan(values)
    nans = int(np.count_nonzero(nan))
    if nans == len(values):
        return None, None, nans
    usable = values[~nan]
    return usable[usable.argmin()], usable[usable.argmax()], nans


def _decimal_bounds(arr: Array, dtype: t.DataType, valid: np.ndarray | None
                    ) -> tuple[int, int] | None:
    words = dtype.byte_width // 8 if dtype.byte_width >= 8 else 0
    if words == 0:  # decimal32: one int32 per value
        values = arr.buffers[1].view("<i4")[arr.offset : arr.offset + len(arr)].astype(np.int64)
        keys = [values]
    else:
        raw = arr.buffers[1].view("<u8")[arr.offset * words : (arr.offset + len(arr)) * words]
        raw = raw.reshape(-1, words)
        keys = [raw[:, i] for i in range(words - 1)] + [raw[:, words - 1].view(np.int64)]
    rows = np.arange(len(arr)) if valid is None else np.flatnonzero(valid)
    if len(rows) == 0:
        return None
    order = np.lexsort([k[rows] for k in keys])  # the last key (the sign word) is primary
    return int(rows[order[0]]), int(rows[order[-1]])


def _bytes_of(arr: Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Starts, lengths and the data bytes of this array's values only (a slice's data
    buffer may hold a whole column)."""

    width = "<i8" if arr.type.large else "<i4"
    offsets = arr.buffers[1].view(width)[arr.offset : arr.offset + len(arr) + 1].astype(np.int64)
    first, last = int(offsets[0]), int(offsets[-1])
    lengths = offsets[1:] - offsets[:-1]
    data = arr.buffers[2] if arr.buffers[2] is not None else np.zeros(0, np.uint8)
    if first < 0 or last > len(data) or (lengths < 0).any():
        # values the structural checks do not look at; statistics must not index by them
        raise ArrowInvalid(
            f"expected offsets that do not decrease, within the {len(data)} data bytes, "
            f"to compute statistics; found {first}..{last}"
        )
    return offsets[:-1] - first, lengths, data[first:last]


# the top k bytes of a big-endian word (k = 0..8): what is left of a value's 8 bytes
_KEEP = np.array([0] + [((1 << (8 * k)) - 1) << (8 * (8 - k)) for k in range(1, 9)],
                 dtype=np.uint64)


class _Words:
    """Reads bytes ``j .. j+8`` of a string or binary array's values as big-endian
    uint64s (bytes past a value's end are 0), so that comparing words compares the
    values' bytes eight at a time; ``starts`` index ``data``, ``lengths`` are the values'."""

    def __init__(self, arr: Array) -> None:

        width = "<i8" if arr.type.large else "<i4"
        offsets = arr.buffers[1].view(width)[arr.offset : arr.offset + len(arr) + 1]
        data = arr.buffers[2] if arr.buffers[2] is not None else np.zeros(0, np.uint8)
        first, last = int(offsets[0]), int(offsets[-1])
        self.lengths = np.diff(offsets)
        self.shortest = int(self.lengths.min()) if len(self.lengths) else 0
        if first < 0 or last > len(data) or self.shortest < 0:
            # values the structural checks do not look at; statistics must not index by them
            raise ArrowInvalid(
                f"expected offsets that do not decrease, within the {len(data)} data bytes, "
                f"to compute statistics; found {first}..{last}"
            )
        starts = offsets[:-1]
        if len(data) - last < 8:  # no room to read 8 bytes at every start: a padded copy
            padded = np.zeros(last - first + 8, np.uint8)
            padded[: last - first] = data[first:last]
            data, starts = padded, starts - first
        self.starts, self.data = starts, data
        self.end = len(data) - 8
        # an unaligned view: element i is bytes i .. i+8; as 8-byte voids, which numpy
        # gathers faster than unaligned integers
        self.view = np.ndarray((self.end + 1,), "V8", data, 0, (1,))

    def at(self, rows: np.ndarray | None, j: int) -> np.ndarray:
        if rows is None and j == 0:  # every start lies within the data: no clipping
            words = self.view[self.starts].view("<u8").byteswap()
            if self.shortest >= 8:
                return words
            lengths = self.lengths
        else:
            begin = np.minimum(self.starts[rows] + j, self.end)
            lengths = self.lengths[rows] - j
            words = self.view[begin].view("<u8").byteswap()
        short = np.flatnonzero(lengths < 8)  # bytes past their ends count as 0
        if len(short):
            words[short] &= _KEEP[np.maximum(lengths[short], 0)]
        return words

    def value(self, row: int, n: int) -> bytes:
        """The first ``n`` bytes (at most) of value ``row``."""
        start = int(self.starts[row])
        return bytes(self.data[start : start + min(int(self.lengths[row]), n)])


def _extreme_bytes(words: _Words, rows: np.ndarray, largest: bool, first: np.ndarray
                   ) -> tuple[int, bool]:
    """The row whose value is smallest (largest) among ``rows`` (None: all) comparing at
    most PREFIX_BYTES bytes, eight at a time, and whether the comparison was cut short;
    ``first`` holds those rows' first eight bytes (computed once for min and max)."""
    lengths = words.lengths
    candidates = rows
    for j in range(0, PREFIX_BYTES, 8):
        found = first if j == 0 else words.at(candidates, j)
        best = found.max() if largest else found.min()
        candidates = (np.flatnonzero(found == best) if candidates is None
                      else candidates[found == best])
        short = lengths[candidates] <= j + 8
        if len(candidates) == 1 or short.all():
            # the rest are equal up to their ends: the shortest is smallest, longest largest
            pick = np.argmax(lengths[candidates]) if largest else np.argmin(lengths[candidates])
            row = int(candidates[pick])
            return row, bool(lengths[row] > PREFIX_BYTES)
        if not largest and short.any():
            # those ending here are prefixes of the others, zero-padded: smaller
            return int(candidates[np.argmin(lengths[candidates])]), False
    longest = candidates[np.argmax(lengths[candidates])] if largest else candidates[0]
    return int(longest), bool(lengths[longest] > PREFIX_BYTES)


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


def _binary_extremes(arr: Array, dtype: t.DataType, valid: np.ndarray | None
                     ) -> tuple[bytes, bytes, bool, bool] | None:
    """(minimum, maximum, min exact, max exact) of a string or binary column as bytes,
    each at most PREFIX_BYTES long; None without valid values or without an upper bound."""
    words = _Words(arr)
    rows = None if valid is None else np.flatnonzero(valid)
    if len(arr) == 0 or (rows is not None and len(rows) == 0):
        return None
    first = words.at(rows, 0)
    low, low_cut = _extreme_bytes(words, rows, False, first)
    high, high_cut = _extreme_bytes(words, rows, True, first)
    value = words.value
    if not low_cut and not high_cut:
        return value(low, PREFIX_BYTES), value(high, PREFIX_BYTES), True, True
    is_text = isinstance(dtype, t.StringType)
    low_value = value(low, PREFIX_BYTES)
    high_value: bytes | None = value(high, PREFIX_BYTES + 1)
    if high_cut:
        high_value = _round_up(high_value[:PREFIX_BYTES], is_text)
        if high_value is None:
            return None
    if is_text:
        low_value = low_value.decode("utf-8", errors="ignore").encode()
    return low_value, high_value, not low_cut, not high_cut


# What a column's statistics are while a file is written: plain numbers, no arrays.
# (null_count, nan_count, min, max, min_exact, max_exact); min and max are None without
# bounds, else raw values of the column's value type (see _values_array).
Raw = tuple[int, int, Any, Any, bool, bool]


def _raw_function(dtype: t.DataType) -> Any:
    """The function computing a column's :data:`Raw` statistics, chosen once per type."""
    if isinstance(dtype, t.ExtensionType):  # bounds of the storage values

        storage = dtype.storage_type
        inner = _raw_function(storage)

        def extension(arr: Array) -> Raw:
            return inner(make_array(storage, len(arr), arr.buffers, arr.children,
                                    arr.null_count, arr.offset, arr.dictionary))

        return extension
    if isinstance(dtype, (t.DictionaryType, t.RunEndEncodedType, t.UnionType)):

        is_dict = isinstance(dtype, t.DictionaryType)

        def logical(arr: Array) -> Raw:
            # the logical null count (a null dictionary value, run or union child is a
            # null to every reader), which is what a filter's "is null" asks about
            nulls = int(np.count_nonzero(_null_mask(arr)))
            if not is_dict or arr.dictionary is None or nulls == len(arr):
                return (nulls, 0, None, None, True, True)
            inner = column_raw(arr.dictionary)
            return (nulls, 0, inner[2], inner[3], False, False)

        return logical
    if isinstance(dtype, (t.IntegerType, t.FloatingPointType, t.DateType, t.TimeType,
                          t.TimestampType, t.DurationType)):

        np_dtype = storage_numpy_dtype(dtype)

        def fixed(arr: Array) -> Raw:
            nulls = arr.null_count
            if nulls == len(arr):
                return (nulls, 0, None, None, True, True)
            found = _fixed_extremes(arr._fixed_values_view(np_dtype),
                                    arr.is_valid_mask() if nulls else None)
            if found is None:
                return (nulls, 0, None, None, True, True)
            return (nulls, found[2], found[0], found[1], True, True)

        return fixed
    if isinstance(dtype, t.DecimalType):
        width = dtype.byte_width

        def decimal(arr: Array) -> Raw:
            nulls = arr.null_count
            if nulls == len(arr):
                return (nulls, 0, None, None, True, True)
            rows = _decimal_bounds(arr, dtype, arr.is_valid_mask())
            if rows is None:
                return (nulls, 0, None, None, True, True)
            raw = arr.buffers[1]
            low, high = ((arr.offset + r) * width for r in rows)
            return (nulls, 0, bytes(raw[low : low + width]), bytes(raw[high : high + width]),
                    True, True)

        return decimal
    if isinstance(dtype, t.BoolType):

        def boolean(arr: Array) -> Raw:
            nulls = arr.null_count
            if nulls == len(arr):
                return (nulls, 0, None, None, True, True)
            bits = unpack_bits(arr.buffers[1], arr.offset, len(arr))
            valid = arr.is_valid_mask()
            if valid is not None:
                bits = bits[valid]
            return (nulls, 0, bool(bits.all()), bool(bits.any()), True, True)

        return boolean
    if isinstance(dtype, (t.StringType, t.BinaryType)):

        def binary(arr: Array) -> Raw:
            nulls = arr.null_count
            if nulls == len(arr):
                return (nulls, 0, None, None, True, True)
            found = _binary_extremes(arr, dtype, arr.is_valid_mask())
            if found is None:
                return (nulls, 0, None, None, True, True)
            return (nulls, 0, *found)

        return binary

    def other(arr: Array) -> Raw:
        return (arr.null_count, 0, None, None, True, True)

    return other


_RAW_FUNCTIONS: dict[t.DataType, Any] = {}


def column_raw(arr: Array) -> Raw:
    """A column's statistics as plain numbers (see :data:`Raw`)."""
    dtype = arr.type
    try:
        fn = _RAW_FUNCTIONS.get(dtype)
    except TypeError:  # an unhashable type (extension types may be)
        fn = None
    if fn is None:
        fn = _raw_function(dtype)
        try:
            if len(_RAW_FUNCTIONS) < 256:
                _RAW_FUNCTIONS[dtype] = fn
        except TypeError:
            pass
    return fn(arr)


def _values_array(values: Sequence[Any], dtype: t.DataType) -> Array:
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
    pair = _values_array([low, high], _value_type(arr.type))
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
        width = dtype.byte_width
        x = int.from_bytes(bytes(a.buffers[1][a.offset * width : (a.offset + 1) * width]),
                           "little", signed=True)
        y = int.from_bytes(bytes(b.buffers[1][b.offset * width : (b.offset + 1) * width]),
                           "little", signed=True)
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


# -- the statistics array and its IPC encoding -----------------------------------------

_BOUNDED = (t.IntegerType, t.FloatingPointType, t.DateType, t.TimeType, t.TimestampType,
            t.DurationType, t.DecimalType, t.BoolType, t.StringType, t.BinaryType)
_KEYS = sorted([ROW_COUNT, NULL_COUNT, NAN_COUNT, MIN_EXACT, MIN_APPROX, MAX_EXACT,
                MAX_APPROX])


def _value_type(dtype: t.DataType) -> t.DataType:
    dtype = t.storage_of(dtype) if isinstance(dtype, t.ExtensionType) else dtype
    return dtype.value_type if isinstance(dtype, t.DictionaryType) else dtype


def union_value_types(schema: t.Schema) -> list[t.DataType]:
    """The dense union's children for a file's schema: int64 (the counts) first, then
    each type whose min and max quiver computes, once (fixed per file, so that every
    statistics batch has one schema)."""
    out: list[t.DataType] = [t.int64()]
    for f in schema.fields:
        vt = _value_type(f.type)
        if isinstance(t.storage_of(vt), _BOUNDED) and vt not in out:
            out.append(vt)
    return out


def _is_float(dtype: t.DataType) -> bool:
    return isinstance(t.storage_of(_value_type(dtype)), t.FloatingPointType)


class StatisticsCollector:
    """What a file writer keeps of its batches' statistics: per column, the plain numbers
    of :func:`column_raw` (no arrays, no per-batch objects), turned into the footer value
    once, at close (:meth:`encode`).  The function for each column is chosen once, from
    the schema.

    (Computing on a worker thread while the batch is written was tried: on this shared
    2-core machine it made writes slower, the cores being busy anyway.)"""

    def __init__(self, schema: t.Schema) -> None:
        self.schema = schema
        self._functions = [_raw_function(f.type) for f in schema.fields]
        self.row_counts: list[int] = []
        self.raws: list[list[Raw]] = [[] for _ in schema.fields]

    def __len__(self) -> int:
        return len(self.row_counts)

    def add(self, columns: Sequence[Array], num_rows: int) -> None:
        """Compute and keep one batch's statistics; what computing them raises comes
        from here (before the writer writes the batch), and nothing is kept of it."""
        found = [fn(column) for fn, column in zip(self._functions, columns)]
        self.row_counts.append(num_rows)
        for log, raw in zip(self.raws, found):
            log.append(raw)

    def encode(self) -> str:
        """The footer value (see :func:`encode_statistics`)."""
        return encode_statistics(self)


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indices ``starts[i] .. starts[i] + lengths[i]`` for every i, in order."""
    lengths = np.asarray(lengths, np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    ends = np.cumsum(lengths)
    shift = np.asarray(starts, np.int64) - (ends - lengths)
    return np.repeat(shift, lengths) + np.arange(total, dtype=np.int64)


def _exclusive_cumsum(counts: np.ndarray, axis: int = 0) -> np.ndarray:
    out = np.cumsum(counts, axis=axis)
    return out - counts


@dataclass(frozen=True)
class _Columns:
    """A file's statistics batches as arrays over all batches (the StatisticsSchema
    batches are slices of these): entries in batch, row, key order."""

    rows: int  # 1 + number of columns: the rows of every statistics batch
    out_schema: t.Schema
    union_type: t.DataType
    key_type: t.DataType
    map_type: t.DataType
    key_names: Array  # the dictionary of statistics keys
    column_ids: Array  # one batch's ``column`` values (the same in every batch)
    keys: np.ndarray  # int32 per entry: index into key_names
    codes: np.ndarray  # int8 per entry: union child
    offsets: np.ndarray  # int32 per entry: index into its batch's part of the child
    entry_counts: np.ndarray  # per batch
    map_offsets: np.ndarray  # (batches, rows + 1) int32, each batch's own
    children: list[Array]  # one per union child, all batches' values in order
    child_counts: np.ndarray  # (batches, children): each batch's values per child

    def batch(self, k: int) -> Any:
        """Statistics batch ``k`` as a RecordBatch of StatisticsSchema.rst's columns."""

        e0 = int(self.entry_counts[:k].sum())
        e = int(self.entry_counts[k])
        starts = self.child_counts[:k].sum(axis=0)
        parts = [child.slice(int(s), int(c))
                 for child, s, c in zip(self.children, starts, self.child_counts[k])]
        values = make_array(self.union_type, e,
                            [self.codes[e0 : e0 + e].view(np.uint8),
                             self.offsets[e0 : e0 + e].view(np.uint8)], parts, 0)
        key_array = make_array(self.key_type, e, [None, self.keys[e0 : e0 + e].view(np.uint8)],
                               (), 0, 0, self.key_names)
        entries = make_array(self.map_type.entries_field.type, e, [None],
                             [key_array, values], 0)
        stats = make_array(self.map_type, self.rows,
                           [None, np.ascontiguousarray(self.map_offsets[k]).view(np.uint8)],
                           [entries], 0)
        return RecordBatch(self.out_schema, [self.column_ids, stats])


def _columnar(row_counts: Sequence[int], raws: Sequence[Sequence[Raw]],
              schema: t.Schema) -> _Columns:
    """The statistics batches of a file as :class:`_Columns`, built column by column with
    numpy (no loop over batches).  Each batch's ``1 + num_columns`` rows are the batch
    (``ARROW:row_count:exact``), then each column: ``ARROW:null_count:exact``,
    ``quiver:nan_count:exact`` (floating point) and, where known, min and max."""

    value_types = union_value_types(schema)
    nb = len(row_counts)
    key_index = {k: i for i, k in enumerate(_KEYS)}
    # one "slot" per possible entry of a batch, in entry order; a slot is present or not
    slot_key: list[np.ndarray] = []
    slot_present: list[np.ndarray] = []
    slot_code: list[int] = []
    slot_value: list[np.ndarray] = []  # int64 values of code-0 slots (else zeros)
    slot_source: list[np.ndarray] = []  # index into the code's source values (else zeros)
    slots_per_row: list[int] = []
    sources: list[list[Array]] = [[] for _ in value_types]
    source_sizes = [0] * len(value_types)
    everywhere = np.ones(nb, bool)
    zeros = np.zeros(nb, np.int64)

    def slot(key: Any, present: np.ndarray, code: int, value: np.ndarray = zeros,
             source: np.ndarray = zeros) -> None:
        slot_key.append(np.full(nb, key_index[key], np.int32) if isinstance(key, str)
                        else key)
        slot_present.append(present)
        slot_code.append(code)
        slot_value.append(value)
        slot_source.append(source)

    slot(ROW_COUNT, everywhere, 0, np.asarray(row_counts, np.int64))
    slots_per_row.append(1)
    for field, log in zip(schema.fields, raws):
        before = len(slot_code)
        nulls, nans, lows, highs, min_exact, max_exact = (
            zip(*log) if nb else ((),) * 6)
        slot(NULL_COUNT, everywhere, 0, np.asarray(nulls, np.int64))
        if _is_float(field.type):
            slot(NAN_COUNT, everywhere, 0, np.asarray(nans, np.int64))
        vt = _value_type(field.type)
        has = np.fromiter((v is not None for v in lows), bool, nb)
        if vt in value_types and has.any():
            code = value_types.index(vt)
            where = np.flatnonzero(has)
            rank = np.cumsum(has) - 1
            exact_min = np.asarray(min_exact, bool)
            exact_max = np.asarray(max_exact, bool)
            bounds = [(lows, exact_min, MIN_EXACT, MIN_APPROX),
                      (highs, exact_max, MAX_EXACT, MAX_APPROX)]
            for values, exact, exact_key, approx_key in bounds:
                present_values = [values[i] for i in where]
                keys = np.where(exact, key_index[exact_key], key_index[approx_key])
                keys = keys.astype(np.int32)
                if code == 0:  # int64 bounds share the counts' child
                    numbers = np.zeros(nb, np.int64)
                    numbers[where] = np.asarray(present_values, np.int64)
                    slot(keys, has, 0, numbers)
                else:
                    sources[code].append(_values_array(present_values, vt))
                    slot(keys, has, code, source=source_sizes[code] + rank)
                    source_sizes[code] += len(where)
        slots_per_row.append(len(slot_code) - before)
    rows = len(slots_per_row)
    present = np.stack(slot_present, axis=1) if nb else np.zeros((0, len(slot_code)), bool)
    key_matrix = np.stack(slot_key, axis=1) if nb else np.zeros((0, len(slot_code)), np.int32)
    code_matrix = np.broadcast_to(np.asarray(slot_code, np.int8), present.shape)
    keys = key_matrix[present]
    codes = code_matrix[present]
    per_row = np.add.reduceat(present.astype(np.int32), _exclusive_cumsum(
        np.asarray(slots_per_row)), axis=1) if nb else np.zeros((0, rows), np.int32)
    map_offsets = np.zeros((nb, rows + 1), np.int32)
    np.cumsum(per_row, axis=1, out=map_offsets[:, 1:])
    entry_counts = map_offsets[:, -1].astype(np.int64)
    batch_of_entry = np.repeat(np.arange(nb), entry_counts)
    # each entry's position in its batch's part of its union child
    offsets = np.zeros(len(codes), np.int32)
    child_counts = np.zeros((nb, len(value_types)), np.int64)
    children: list[Array] = []
    for code, vt in enumerate(value_types):
        where = np.flatnonzero(codes == code)
        counts = np.bincount(batch_of_entry[where], minlength=nb)
        child_counts[:, code] = counts
        offsets[where] = np.arange(len(where)) - _exclusive_cumsum(counts)[
            batch_of_entry[where]]
        if code == 0:
            values = np.stack(slot_value, axis=1)[present & (code_matrix == 0)]
            children.append(make_array(vt, len(values),
                                       [None, values.astype(np.int64).view(np.uint8)], (), 0))
        elif sources[code]:
            source_index = np.stack(slot_source, axis=1)[present & (code_matrix == code)]
            found = sources[code][0] if len(sources[code]) == 1 else concat_arrays(
                sources[code])
            children.append(take(found, source_index))
        else:
            children.append(_values_array([], vt))
    union_type = t.dense_union([t.field(f"v{i}", vt) for i, vt in enumerate(value_types)])
    key_type = t.dictionary(t.int32(), t.string())
    map_type = t.map_(t.field("key", key_type, nullable=False), t.field("value", union_type))
    out_schema = t.schema([t.field("column", t.int32()),
                           t.field("statistics", map_type, nullable=False)])
    return _Columns(
        rows, out_schema, union_type, key_type, map_type, build(_KEYS, t.string()),
        build([None, *range(len(schema.fields))], t.int32()), keys.astype(np.int32),
        codes.astype(np.int8), offsets, entry_counts, map_offsets, children, child_counts,
    )


def statistics_batches(collector: StatisticsCollector) -> list[Any]:
    """Each batch's statistics as a RecordBatch of StatisticsSchema.rst's columns
    (``1 + num_columns`` rows: the batch, then each column), compact: every one holds
    only its own values."""
    cols = _columnar(collector.row_counts, collector.raws, collector.schema)
    return [cols.batch(k) for k in range(len(collector))]


# -- many statistics messages at once ----------------------------------------------------
#
# A file of n batches has n statistics messages of one schema: the same FieldNode and
# Buffer counts and one custom metadata pair (quiver:batch = the index in decimal).  Their
# framed metadata is the same bytes but for the numbers and the index's digits, so both
# directions handle them as a matrix: one row per message, numbers in known columns.
# Where the numbers sit is learned from metadata.py's own encoder (sentinel numbers,
# located once and checked on a real message), so no flatbuffer field is known here.

_SENTINEL = 0x5C00_0000_0000_0011  # with a counter in its second byte: found only once
_DIGIT = ord("~")


class _TemplateError(Exception):
    """The encoder's layout is not the one the matrix handling expects."""


class _Template:
    """The framed metadata of a RecordBatch message with ``num_nodes`` FieldNodes,
    ``num_buffers`` Buffers and custom metadata ``quiver:batch`` of ``digits`` digits."""

    def __init__(self, version: int, num_nodes: int, num_buffers: int, digits: int) -> None:
        self.version, self.num_nodes, self.num_buffers = version, num_nodes, num_buffers
        self.digits = digits
        count = 2 + 2 * num_nodes + 2 * num_buffers
        numbers = np.array([_SENTINEL | (k << 8) for k in range(count)], np.int64)
        nodes = numbers[2 : 2 + 2 * num_nodes].reshape(-1, 2)
        buffers = numbers[2 + 2 * num_nodes :].reshape(-1, 2)
        framed = frame_message(md.encode_message_general(md.Message(
            version, md.RecordBatch(int(numbers[0]), nodes, buffers, None, ()),
            int(numbers[1]), KeyValueMetadata([(BATCH_KEY.encode(), b"~" * digits)]))))
        if len(framed) % 8:
            raise _TemplateError("a message size that is not a multiple of 8")
        words = np.frombuffer(framed, "<i8")
        where = {int(v): i for i, v in enumerate(words)}
        found = [where.get(int(v), -1) for v in numbers]
        if min(found) < 0 or len(set(found)) != count:
            raise _TemplateError("numbers not at 8-byte boundaries")
        self.length_at, self.body_at = found[0], found[1]
        self.nodes_at, self.buffers_at = found[2], found[2 + 2 * num_nodes]
        if (found[2 : 2 + 2 * num_nodes] != list(range(self.nodes_at, self.nodes_at
                                                        + 2 * num_nodes))
                or found[2 + 2 * num_nodes :] != list(range(self.buffers_at, self.buffers_at
                                                            + 2 * num_buffers))):
            raise _TemplateError("FieldNodes or Buffers not contiguous")
        value = struct.pack("<I", digits) + b"~" * digits + b"\x00"
        at = framed.find(value)
        if at < 0 or framed.find(value, at + 1) >= 0:
            raise _TemplateError("the index's digits not found once")
        self.value_at = at + 4
        self.size = len(framed)
        self.bytes = np.frombuffer(framed, np.uint8)
        fixed = np.ones(self.size // 8, bool)
        fixed[found] = False
        fixed[self.value_at // 8 : (self.value_at + digits - 1) // 8 + 1] = False
        self.fixed_words = np.flatnonzero(fixed)
        self.words = words
        # the words around the digits, which hold other bytes too
        self.digit_words = np.arange(self.value_at // 8, (self.value_at + digits - 1) // 8 + 1)
        # check on a message of ordinary numbers against the general encoder
        nodes = np.arange(2 * num_nodes, dtype=np.int64).reshape(1, -1, 2)
        buffers = np.arange(2 * num_buffers, dtype=np.int64).reshape(1, -1, 2) * 8
        index = np.array([10 ** (digits - 1)], np.int64)
        mine = self.encode(np.array([64]), 3, nodes, buffers, index)
        theirs = frame_message(md.encode_message_general(md.Message(
            version, md.RecordBatch(3, nodes[0], buffers[0], None, ()), 64,
            KeyValueMetadata([(BATCH_KEY.encode(), str(int(index[0])).encode())]))))
        if mine.tobytes() != theirs:
            raise _TemplateError("the template does not reproduce the encoder's bytes")

    def encode(self, body_lengths: np.ndarray, length: int, nodes: np.ndarray,
               buffers: np.ndarray, indices: np.ndarray) -> np.ndarray:
        """The framed metadata of ``len(indices)`` messages (all of ``digits`` digits) as
        an (m, size) uint8 matrix."""
        m = len(indices)
        out = np.tile(self.words, (m, 1))
        out[:, self.length_at] = length
        out[:, self.body_at] = body_lengths
        out[:, self.nodes_at : self.nodes_at + 2 * self.num_nodes] = nodes.reshape(m, -1)
        out[:, self.buffers_at : self.buffers_at + 2 * self.num_buffers] = buffers.reshape(
            m, -1)
        raw = out.view(np.uint8)
        for j in range(self.digits):
            raw[:, self.value_at + j] = ord("0") + indices // 10 ** (self.digits - 1 - j) % 10
        return raw

    def decode(self, words: np.ndarray) -> tuple[np.ndarray, ...]:
        """(rows of this template, body lengths, lengths, nodes, buffers, indices) of an
        (m, size // 8) int64 matrix of framed metadata; the numbers of other rows are
        meaningless."""
        m = len(words)
        ok = (words[:, self.fixed_words] == self.words[self.fixed_words]).all(axis=1)
        raw = np.ascontiguousarray(words[:, self.digit_words]).view(np.uint8).reshape(m, -1)
        at = self.value_at - 8 * int(self.digit_words[0])
        digits = raw[:, at : at + self.digits].astype(np.int64) - ord("0")
        mask = np.ones(raw.shape[1], bool)
        mask[at : at + self.digits] = False
        own = self.words[self.digit_words].view(np.uint8)
        ok &= ((digits >= 0) & (digits <= 9)).all(axis=1) & (raw[:, mask] == own[mask]).all(
            axis=1)
        indices = digits @ (10 ** np.arange(self.digits - 1, -1, -1, dtype=np.int64))
        nodes = words[:, self.nodes_at : self.nodes_at + 2 * self.num_nodes]
        buffers = words[:, self.buffers_at : self.buffers_at + 2 * self.num_buffers]
        return (ok, words[:, self.body_at], words[:, self.length_at],
                nodes.reshape(m, -1, 2), buffers.reshape(m, -1, 2), indices)


_TEMPLATES: dict[tuple[int, int, int, int], _Template | None] = {}


def _template(version: int, num_nodes: int, num_buffers: int, digits: int) -> _Template | None:
    """The (cached) template, or None when the encoder's layout does not allow one."""
    key = (version, num_nodes, num_buffers, digits)
    if key not in _TEMPLATES:
        try:
            found: _Template | None = _Template(*key)
        except _TemplateError:
            found = None
        if len(_TEMPLATES) < 256:
            _TEMPLATES[key] = found
        return found
    return _TEMPLATES[key]


class _TemplateGroup:
    """The templates of one message size (indices of different digit counts), which put
    the numbers at the same places and differ only in a few words around the digits:
    a matrix of messages is checked against the shared words once, then each row's
    digits words against the template of its digit count."""

    def __init__(self, templates: Sequence[_Template]) -> None:
        first = templates[0]
        self.templates = list(templates)
        self.size = first.size
        self.first = first
        for tm in templates:
            if (tm.size, tm.length_at, tm.body_at, tm.nodes_at, tm.buffers_at) != (
                    first.size, first.length_at, first.body_at, first.nodes_at,
                    first.buffers_at):
                raise _TemplateError("templates of one size with numbers elsewhere")
        differ = np.zeros(first.size // 8, bool)
        for tm in templates:
            differ |= first.words != tm.words
            differ[tm.digit_words] = True
        self.own = np.flatnonzero(differ)  # the words each template checks itself
        shared = np.ones(first.size // 8, bool)
        shared[self.own] = False
        shared[np.setdiff1d(np.arange(first.size // 8), first.fixed_words)] = False
        # all ones over the words every template has the same, zero elsewhere
        self.shared = np.where(shared & ~differ, -1, 0).astype(np.int64)
        self.positions = []  # per template: (digit byte positions in its own words, rest)
        for tm in templates:
            at = np.arange(tm.value_at, tm.value_at + tm.digits)
            starts = self.own * 8
            where = np.concatenate([np.flatnonzero(starts == (a // 8) * 8) * 8 + a % 8
                                    for a in at])
            rest = np.setdiff1d(np.arange(8 * len(self.own)), where)
            self.positions.append((where, rest, tm.words[self.own].view(np.uint8)))

    def decode(self, matrix: np.ndarray) -> tuple[np.ndarray, ...] | None:
        """(body lengths, lengths, nodes, buffers, indices) of an (m, size // 8) int64
        matrix of framed metadata, or None when a row is not one of the group's."""
        m = len(matrix)
        first = self.first
        if ((matrix ^ first.words) & self.shared).any():
            return None
        raw = np.ascontiguousarray(matrix[:, self.own]).view(np.uint8).reshape(m, -1)
        indices = np.full(m, -1, np.int64)
        for tm, (where, rest, own) in zip(self.templates, self.positions):
            ok = (raw[:, rest] == own[rest]).all(axis=1) & (indices < 0)
            if not ok.any():
                continue
            digits = raw[ok][:, where].astype(np.int64) - ord("0")
            if ((digits < 0) | (digits > 9)).any():
                return None
            indices[ok] = digits @ (10 ** np.arange(tm.digits - 1, -1, -1, dtype=np.int64))
        if (indices < 0).any():
            return None
        nodes = matrix[:, first.nodes_at : first.nodes_at + 2 * first.num_nodes]
        buffers = matrix[:, first.buffers_at : first.buffers_at + 2 * first.num_buffers]
        return (matrix[:, first.body_at], matrix[:, first.length_at],
                nodes.reshape(m, -1, 2), buffers.reshape(m, -1, 2), indices)


def _pad8(n: np.ndarray) -> np.ndarray:
    return (n + 7) & ~7


def _body_parts(cols: _Columns) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray,
                                                               np.ndarray]]]:
    """Every batch's FieldNodes, as a (batches, nodes, 2) array, and its buffers in IPC
    order, each as (source bytes, start in them per batch, length per batch)."""

    nb = len(cols.entry_counts)
    rows = cols.rows
    e = cols.entry_counts
    e0 = _exclusive_cumsum(e)
    zero = np.zeros(nb, np.int64)
    column = cols.column_ids
    validity = column.buffers[0][: (rows + 7) // 8]
    parts = [
        (validity, zero, np.full(nb, len(validity), np.int64)),
        (column.buffers[1][: rows * 4], zero, np.full(nb, rows * 4, np.int64)),
        (np.zeros(0, np.uint8), zero, zero),  # the map's validity: none
        (cols.map_offsets.view(np.uint8).reshape(-1), np.arange(nb) * (rows + 1) * 4,
         np.full(nb, (rows + 1) * 4, np.int64)),
        (np.zeros(0, np.uint8), zero, zero),  # the entries' validity
        (np.zeros(0, np.uint8), zero, zero),  # the keys' validity
        (cols.keys.view(np.uint8), e0 * 4, e * 4),
        (cols.codes.view(np.uint8), e0, e),
        (cols.offsets.view(np.uint8), e0 * 4, e * 4),
    ]
    nodes = [np.stack([np.full(nb, rows), np.ones(nb, np.int64)], axis=1),
             np.stack([np.full(nb, rows), zero], axis=1)]
    nodes += [np.stack([e, zero], axis=1)] * 3
    for code, child in enumerate(cols.children):
        counts = cols.child_counts[:, code]
        starts = _exclusive_cumsum(counts)
        nodes.append(np.stack([counts, zero], axis=1))
        for spec in layout_of(child.type).buffers:
            if spec.kind == "validity":
                parts.append((np.zeros(0, np.uint8), zero, zero))
            elif spec.kind == "values":
                w = spec.byte_width
                data = child.buffers[1][child.offset * w : (child.offset + len(child)) * w]
                parts.append((data, starts * w, counts * w))
            elif spec.kind == "bits":
                bits = unpack_bits(child.buffers[1], child.offset, len(child))
                width = int(counts.max(initial=0))
                padded = np.zeros((nb, max(width, 1)), bool)
                padded[np.repeat(np.arange(nb), counts),
                       np.arange(len(child)) - np.repeat(starts, counts)] = bits
                packed = np.packbits(padded, axis=1, bitorder="little")
                parts.append((packed.reshape(-1), np.arange(nb) * packed.shape[1],
                              (counts + 7) // 8))
            elif spec.kind == "offsets":
                w = spec.byte_width
                all_offsets = child.buffers[1].view(f"<i{w}")[
                    child.offset : child.offset + len(child) + 1].astype(np.int64)
                index = _ranges(starts, counts + 1)
                first = np.repeat(all_offsets[starts], counts + 1)
                own = (all_offsets[index] - first).astype(f"<i{w}")
                parts.append((own.view(np.uint8), _exclusive_cumsum(counts + 1) * w,
                              (counts + 1) * w))
                data_start = all_offsets[starts]
                data_end = all_offsets[starts + counts]
            else:  # data, after its offsets
                parts.append((child.buffers[2], data_start, data_end - data_start))
    return np.stack(nodes, axis=1), parts


def _bulk_messages(cols: _Columns, first: int, version: int) -> bytes | None:
    """The framed messages of statistics batches ``first ..`` (bodies included), or None
    when the encoder's layout allows no template."""
    nb = len(cols.entry_counts)
    nodes, parts = _body_parts(cols)
    lengths = np.stack([p[2] for p in parts], axis=1)  # (batches, buffers)
    padded = _pad8(lengths)
    body_offsets = _exclusive_cumsum(padded, axis=1)
    body_lengths = padded.sum(axis=1)
    buffers = np.stack([body_offsets, lengths], axis=2)
    batches = np.arange(first, nb)
    if len(batches) == 0:
        return b""
    digits = np.array([len(str(int(k))) for k in (batches[0], batches[-1])])
    templates = {}
    for d in range(int(digits[0]), int(digits[1]) + 1):
        found = _template(version, nodes.shape[1], len(parts), d)
        if found is None:
            return None
        templates[d] = found
    number_digits = np.ones(len(batches), np.int64)
    for d in range(2, int(digits[1]) + 1):
        number_digits[batches >= 10 ** (d - 1)] = d
    sizes = np.array([templates[int(d)].size for d in number_digits], np.int64)
    message_lengths = sizes + body_lengths[batches]
    starts = _exclusive_cumsum(message_lengths)
    out = np.zeros(int(message_lengths.sum()), np.uint8)
    for d, tmpl in templates.items():
        mine = np.flatnonzero(number_digits == d)
        k = batches[mine]
        meta = tmpl.encode(body_lengths[k], cols.rows, nodes[k], buffers[k], k)
        out[_ranges(starts[mine], np.full(len(mine), tmpl.size))] = meta.reshape(-1)
    body_starts = starts + sizes
    for j, (source, at, n) in enumerate(parts):
        n = n[batches]
        if not n.any():
            continue
        out[_ranges(body_starts + body_offsets[batches, j], n)] = source[
            _ranges(at[batches], n)]
    return out.tobytes()


def encode_statistics(collector: StatisticsCollector) -> str:
    """The footer value: an IPC stream of one statistics batch per record batch, base64.

    The schema, the keys' dictionary and the first batch go through the stream writer;
    the other batches are laid out all at once (:func:`_bulk_messages`), as the writer
    would write them but for the body's layout."""
    from .writer import BufferOutputStream, new_stream

    if not len(collector):
        return ""
    cols = _columnar(collector.row_counts, collector.raws, collector.schema)
    sink = BufferOutputStream()
    writer = new_stream(sink, cols.out_schema)
    writer.write_batch(cols.batch(0), custom_metadata={BATCH_KEY: "0"})
    first = 1
    rest = _bulk_messages(cols, first, V5)
    if rest is None:  # no template: the writer writes every batch
        for k in range(1, len(collector)):
            writer.write_batch(cols.batch(k), custom_metadata={BATCH_KEY: str(k)})
        rest = b""
    writer.close()
    stream = bytes(sink.getvalue())
    if not stream.endswith(EOS):
        raise AssertionError("expected the statistics stream to end with EOS")
    stream = stream[: -len(EOS)] + rest + EOS
    return base64.b64encode(stream).decode("ascii")


@dataclass(frozen=True)
class FileStatistics(Sequence[BatchStatistics]):
    """A file's statistics, column by column over its batches (for vectorized pruning),
    and as a sequence of :class:`BatchStatistics` (Python values, made on demand).

    ``mins[c]``/``maxs[c]`` are arrays of column ``c``'s value type, one value per batch
    (null where unknown), or None for columns without bounds.
    """

    row_counts: np.ndarray
    null_counts: tuple[np.ndarray, ...]
    nan_counts: tuple[np.ndarray, ...]
    mins: Sequence[Array | None]
    maxs: Sequence[Array | None]
    min_exact: tuple[np.ndarray, ...]
    max_exact: tuple[np.ndarray, ...]
    has_bounds: tuple[np.ndarray, ...]
    indices: np.ndarray

    def __len__(self) -> int:
        return len(self.row_counts)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"expected a batch index below {n}, found {i}")
        i %= n
        columns = []
        for c in range(len(self.null_counts)):
            bounded = bool(self.has_bounds[c][i])
            low = high = None
            if bounded:
                try:
                    low = self.mins[c].slice(i, 1).to_pylist()[0]
                    high = self.maxs[c].slice(i, 1).to_pylist()[0]
                except (ArrowError, ValueError, OverflowError):
                    bounded = False  # bounds Python cannot hold (years past 9999, ...)
            columns.append(ColumnStatistics(
                int(self.null_counts[c][i]),
                low,
                high,
                bool(self.min_exact[c][i]) or not bounded,
                bool(self.max_exact[c][i]) or not bounded,
                int(self.nan_counts[c][i]),
                bounded,
            ))
        return BatchStatistics(int(self.indices[i]), int(self.row_counts[i]), tuple(columns))


def footer_value(metadata: Any) -> str | bytes | None:
    """The statistics value of a footer's custom metadata, or None."""
    return metadata.get(STATISTICS_KEY) if metadata is not None else None


def statistics_stream(value: str | bytes) -> bytes:
    """The IPC stream a footer value encodes; quiver's FormatError for other text."""

    if isinstance(value, str):
        value = value.encode("ascii", errors="replace")
    try:
        return base64.b64decode(value, validate=True)
    except ValueError:
        raise FormatError(
            f"expected base64 text under the footer key {STATISTICS_KEY!r}, found other bytes"
        ) from None


def decode_statistics(value: str | bytes) -> FileStatistics:
    """The statistics of a footer value written by :func:`encode_statistics`.

    The statistics batches of a file share one schema and, as quiver writes them, one
    metadata layout: those are read all at once (:func:`_bulk_columns`); any other stream
    message by message.  Raises quiver's FormatError for a value that is not such a stream.
    """
    from .reader import open_stream

    stream = statistics_stream(value)
    try:
        bulk = _bulk_columns(stream)
    except (ArrowError, ValueError, IndexError, TypeError, OverflowError, struct.error):
        bulk = None  # the message-by-message path below says what is wrong
    if bulk is not None:
        return _from_columns(*bulk, checked=True)
    reader = open_stream(stream)
    batches, indices = [], []
    for position, batch in enumerate(reader):
        meta = reader.custom_metadata
        found = meta.get(BATCH_KEY) if meta is not None else None
        indices.append(_batch_index(found, position))
        batches.append(batch)
    if reader.schema.names != ["column", "statistics"] or not batches:
        raise _format_error(f"statistics batches (column, statistics), found "
                            f"{reader.schema.names if batches else 'none'}")
    per_batch = [b.num_rows for b in batches]
    if len(set(per_batch)) != 1 or per_batch[0] < 1:
        raise _format_error(f"one row per column in every statistics batch, found "
                            f"{sorted(set(per_batch))} rows")
    column = concat_arrays([b.column(0) for b in batches])
    stats_map = concat_arrays([b.column(1) for b in batches])
    return _from_columns(column, stats_map, np.asarray(indices, np.int64), per_batch[0])


def _format_error(expected: str) -> ArrowError:

    return FormatError(f"expected {expected}")


def _batch_index(found: Any, position: int) -> int:
    if found is None:
        return position
    try:
        return int(found)
    except ValueError:
        raise _format_error(f"a decimal {BATCH_KEY!r} in statistics batch {position}'s "
                            f"metadata, found {found!r}") from None


def _from_columns(column: Array, stats_map: Array, indices: np.ndarray, rows: int,
                  checked: bool = False) -> FileStatistics:
    """:class:`FileStatistics` from the ``column`` and ``statistics`` columns of all
    statistics batches concatenated (``rows`` rows per batch), vectorized.  ``checked``:
    the map offsets, union type codes and union offsets are known to be in range (the
    bulk reading checked them message by message)."""

    E = _format_error
    nb = len(column) // rows
    ncols = rows - 1
    map_offsets = stats_map.buffers[1].view("<i4")[stats_map.offset :
                                                   stats_map.offset + len(stats_map) + 1]
    entries = stats_map.children[0]
    start, stop = int(map_offsets[0]), int(map_offsets[-1])
    per_row = np.diff(map_offsets.astype(np.int64))
    if not checked and ((per_row < 0).any() or start < 0 or stop > len(entries)):
        raise E(f"statistics map offsets that do not decrease, inside its {len(entries)} "
                "entries")
    key_array = entries.children[0].slice(start, stop - start)
    union = entries.children[1].slice(start, stop - start)
    if not isinstance(union.type, t.UnionType) or union.type.mode != "dense" or not isinstance(
            key_array.type, t.DictionaryType) or key_array.dictionary is None:
        raise E(f"statistics keys as a dictionary and values as a dense union, found "
                f"{key_array.type} and {union.type}")
    names = key_array.dictionary.to_pylist()
    key_index = key_array.buffers[1].view("<i4")[key_array.offset :
                                                  key_array.offset + len(key_array)]
    codes = union.buffers[0].view(np.int8)[union.offset : union.offset + len(union)]
    offs = union.buffers[1].view("<i4")[union.offset : union.offset + len(union)]
    children = union.children
    if len(key_index) and (key_index.min() < 0 or key_index.max() >= len(names)):
        raise E(f"statistics key indices below {len(names)}")
    if not checked and len(codes) and (codes.min() < 0 or codes.max() >= len(children)):
        raise E(f"statistics value type codes below {len(children)}")
    sizes = np.array([len(c) for c in children], dtype=np.int64)
    if not checked and len(offs) and ((offs < 0) | (offs >= sizes[codes])).any():
        raise E("statistics value offsets inside their union children")
    if not isinstance(children[0].type, t.IntegerType) or children[0].type.width != 64:
        raise E(f"the statistics union's first child as int64, found {children[0].type}")
    for k, child in enumerate(children):  # (bounds are taken from them later, on demand)
        try:
            child.validate(full=True)
        except ArrowError as exc:
            raise E(f"valid values in the statistics union's child {k} ({child.type}), "
                    f"found: {exc}") from None
    # each entry's key as one of ours (7 kinds), len(_KEYS) for keys quiver does not know
    ours = {k: i for i, k in enumerate(_KEYS)}
    kind = np.array([ours.get(n, len(_KEYS)) for n in names], np.int64)[key_index]
    counts_child = children[0]
    count_values = counts_child.buffers[1].view("<i8")[counts_child.offset :
                                                        counts_child.offset + len(counts_child)]
    row_of_entry = np.repeat(np.arange(len(stats_map)), per_row)
    batch_of_entry = row_of_entry // rows
    ids = column.buffers[1].view("<i4")[column.offset : column.offset + len(column)]
    id_valid = column.is_valid_mask()
    column_of_row = ids.astype(np.int64) if id_valid is None else np.where(id_valid, ids, -1)
    if ((column_of_row < -1) | (column_of_row >= ncols)).any():
        raise E(f"statistics column ids below {ncols}")
    slot = column_of_row[row_of_entry] + 1  # 0: the batch's row, c + 1: column c

    # counts (code 0) by kind, slot and batch; later entries overwrite earlier ones, as
    # the message-by-message reading did
    counts = np.zeros((len(_KEYS), rows, nb), np.int64)
    hit = (codes == 0) & (kind < len(_KEYS))
    counts[kind[hit], slot[hit], batch_of_entry[hit]] = count_values[offs[hit]]
    row_counts = counts[_KEYS.index(ROW_COUNT), 0]
    null_counts = counts[_KEYS.index(NULL_COUNT), 1:]
    nan_counts = counts[_KEYS.index(NAN_COUNT), 1:]
    # bounds by side (0: min, 1: max), slot and batch: where in which child, how exact
    side_of_kind = np.full(len(_KEYS) + 1, -1, np.int64)  # the last: unknown keys (-1)
    exact_of_kind = np.zeros(len(_KEYS) + 1, bool)
    for key, side, exact in ((MIN_EXACT, 0, True), (MIN_APPROX, 0, False),
                             (MAX_EXACT, 1, True), (MAX_APPROX, 1, False)):
        side_of_kind[ours[key]] = side
        exact_of_kind[ours[key]] = exact
    side = side_of_kind[kind]
    hit = (side >= 0) & (slot > 0)
    where = (side[hit], slot[hit] - 1, batch_of_entry[hit])
    present = np.zeros((2, ncols, nb), bool)
    present[where] = True
    index = np.zeros((2, ncols, nb), np.int64)
    index[where] = offs[hit]
    exact = np.ones((2, ncols, nb), bool)
    exact[where] = exact_of_kind[kind[hit]]
    code_of = np.full((2, ncols), -1, np.int64)  # each (side, column)'s union child
    code_of[where[:2]] = codes[hit]
    mixed = codes[hit] != code_of[where[:2]]
    if mixed.any():
        raise E(f"column {int(where[1][np.argmax(mixed)])}'s bounds in one union child")
    known = code_of >= 0  # (side, column): some batch has this bound
    has = present[0] & present[1] & known[0][:, None] & known[1][:, None]
    mins = _LazyBounds(children, code_of[0], index[0], present[0])
    maxs = _LazyBounds(children, code_of[1], index[1], present[1])
    return FileStatistics(row_counts, tuple(null_counts), tuple(nan_counts), mins, maxs,
                          tuple(exact[0]), tuple(exact[1]), tuple(has),
                          np.asarray(indices, np.int64))


class _LazyBounds(Sequence[Any]):
    """One side of every column's bounds (mins or maxs): per column an array of its
    value type over the batches (null where unknown), or None for a column without
    bounds; each array is made on first use, as a filter needs only its own columns."""

    def __init__(self, children: Sequence[Array], codes: np.ndarray, index: np.ndarray,
                 present: np.ndarray) -> None:
        self._children, self._codes, self._index, self._present = (
            children, codes, index, present)
        self._made: dict[int, Array | None] = {}

    def __len__(self) -> int:
        return len(self._codes)

    def __getitem__(self, c: Any) -> Any:
        if isinstance(c, slice):
            return [self[i] for i in range(*c.indices(len(self)))]
        n = len(self)
        if not -n <= c < n:
            raise IndexError(f"expected a column index below {n}, found {c}")
        c %= n
        if c not in self._made:
            self._made[c] = self._make(c)
        return self._made[c]

    def _make(self, c: int) -> Array | None:

        code = int(self._codes[c])
        if code < 0:
            return None
        present = self._present[c]
        nb = len(present)
        if present.all():
            return take(self._children[code], self._index[c])
        nullable = make_array(t.int64(), nb, [np.packbits(present, bitorder="little"),
                                              self._index[c].view(np.uint8)], (), -1)
        return take(self._children[code], nullable)


def _bulk_columns(stream: bytes) -> tuple[Array, Array, np.ndarray, int] | None:
    """The ``column`` and ``statistics`` columns of every statistics batch of ``stream``
    concatenated, their ``quiver:batch`` indices and rows per batch, read as a matrix of
    messages (see :class:`_Template`); None when the stream is not laid out so (another
    writer, a damaged value), for the message-by-message path to read or refuse."""

    n = len(stream)
    if n % 8 or n < 16:
        return None
    meta, schema_end, _ = read_frame(stream, 0)
    plan = _stream_plan(stream, bytes(meta), schema_end)
    if plan is None:
        return None
    union_type, map_type, key_type, child_types, child_specs = plan[:5]
    groups: dict[int, _TemplateGroup] = plan[5]
    # the record batch messages: wherever a word holds a template's prefix (continuation
    # and metadata size), a message may start; the chain of body lengths from the first
    # one after the head must run through such words to the end-of-stream marker
    words = np.frombuffer(stream, "<i8")
    prefixes = {struct.unpack("<q", struct.pack("<Ii", 0xFFFFFFFF, size - 8))[0]: g.first
                for size, g in groups.items()}
    prefix_words = np.array(list(prefixes), np.int64)
    candidates = np.flatnonzero(np.isin(words, prefix_words))
    candidates = candidates[candidates * 8 >= schema_end]
    if not len(candidates):
        return None
    size_of = np.zeros(len(candidates), np.int64)
    body_of = np.zeros(len(candidates), np.int64)
    for prefix, tm in prefixes.items():
        mine = words[candidates] == prefix
        size_of[mine] = tm.size
        at = np.minimum(candidates[mine] + tm.body_at, len(words) - 1)
        body_of[mine] = words[at]
    usable = (body_of >= 0) & (body_of % 8 == 0) & (body_of <= 8 * len(words))
    following = dict(zip(candidates[usable].tolist(),
                         (candidates[usable] + (size_of[usable] + body_of[usable]) // 8).tolist()))
    at = int(candidates[0])
    chain = []
    step = following.get
    after = step(at)
    while after is not None:
        chain.append(at)
        at, after = after, step(after)
    if at != len(words) - 1 or int(words[at]) != struct.unpack("<q", EOS)[0] or not chain:
        return None
    starts_a = np.asarray(chain, np.int64) * 8
    m = len(starts_a)
    sizes = size_of[np.searchsorted(candidates, chain)]
    size = int(sizes[0])
    if (sizes != size).any():
        return None
    matrix = words[(starts_a // 8)[:, None] + np.arange(size // 8)]
    found = groups[size].decode(matrix)
    if found is None:
        return None
    body_lengths, lengths, nodes, buffers, indices = found
    rows = int(lengths[0])
    key_dictionary = _key_dictionary(stream, int(starts_a[0]))
    if key_dictionary is None or rows < 1:
        return None
    if (lengths != rows).any() or (nodes < 0).any() or (
            buffers < 0).any():
        return None
    if ((buffers[:, :, 0] + buffers[:, :, 1]) > body_lengths[:, None]).any():
        return None
    e = nodes[:, 2, 0]
    if ((nodes[:, 1, 0] != rows) | (nodes[:, 0, 0] != rows) | (nodes[:, 3, 0] != e)
            | (nodes[:, 4, 0] != e)).any() or (nodes[:, 1:, 1] != 0).any():
        return None
    body = np.frombuffer(stream, np.uint8)
    body_starts = starts_a + size
    spans = buffers[:, :, 1]

    def take_bytes(j: int, count: np.ndarray, width: int = 1) -> np.ndarray | None:
        """Buffer ``j``'s first ``count`` bytes of every message, concatenated (gathered
        ``width`` bytes at a time where the buffers allow)."""
        if (spans[:, j] < count).any():
            return None
        at = body_starts + buffers[:, j, 0]
        if width > 1 and not (at % width).any() and not (count % width).any():
            view = np.frombuffer(stream, f"V{width}", len(stream) // width)
            return view[_ranges(at // width, count // width)].view(np.uint8)
        return body[_ranges(at, count)]

    # column: int32 ids with a validity bitmap
    ids = take_bytes(1, np.full(m, rows * 4), 4)
    if ids is None:
        return None
    column_nulls = nodes[:, 0, 1]
    validity = None
    if column_nulls.any():
        nbytes = (rows + 7) // 8
        raw = take_bytes(0, np.where(column_nulls > 0, nbytes, 0))
        if raw is None:
            return None
        bits = np.ones((m, nbytes * 8), bool)
        bits[column_nulls > 0] = np.unpackbits(raw.reshape(-1, nbytes), axis=1,
                                               bitorder="little").astype(bool)
        bits = bits[:, :rows]
        if (np.count_nonzero(~bits, axis=1) != column_nulls).any():
            return None
        validity = np.packbits(bits.reshape(-1), bitorder="little")
    column = make_array(t.int32(), m * rows, [validity, ids], (), int(column_nulls.sum()))
    # the map's offsets, each message's from 0 to its entry count
    own = take_bytes(3, np.full(m, (rows + 1) * 4), 4)
    if own is None:
        return None
    own = own.view("<i4").reshape(m, rows + 1).astype(np.int64)
    if (own[:, 0] != 0).any() or (own[:, -1] != e).any() or (np.diff(own, axis=1) < 0).any():
        return None
    entry_starts = _exclusive_cumsum(e)
    map_offsets = np.concatenate([(own[:, :-1] + entry_starts[:, None]).reshape(-1),
                                  [int(e.sum())]]).astype(np.int32)
    keys = take_bytes(6, e * 4, 4)
    codes = take_bytes(7, e)
    offsets = take_bytes(8, e * 4, 4)
    if keys is None or codes is None or offsets is None:
        return None
    codes = codes.view(np.int8)
    offsets = offsets.view("<i4").astype(np.int64)
    child_counts = nodes[:, 5:, 0]
    if len(codes) and (codes.min() < 0 or codes.max() >= len(child_types)):
        return None
    code_index = codes.astype(np.int64)
    message_of_entry = np.repeat(np.arange(m), e)
    if (offsets >= child_counts[message_of_entry, code_index]).any():
        return None
    child_starts = _exclusive_cumsum(child_counts)
    offsets = offsets + child_starts[message_of_entry, code_index]
    children = []
    j = 9
    for k, (vt, specs) in enumerate(zip(child_types, child_specs)):
        counts = child_counts[:, k]
        total = int(counts.sum())
        parts: list[np.ndarray | None] = []
        for spec in specs:
            if spec.kind == "validity":  # no nulls (checked): no bitmap needed
                parts.append(None)
            elif spec.kind == "values":
                found = take_bytes(j, counts * spec.byte_width, spec.byte_width)
                if found is None:
                    return None
                parts.append(found)
            elif spec.kind == "bits":
                nbytes = (counts + 7) // 8
                found = take_bytes(j, nbytes)
                if found is None:
                    return None
                bits = np.unpackbits(found, bitorder="little").astype(bool)
                parts.append(np.packbits(bits[_ranges(_exclusive_cumsum(nbytes) * 8, counts)],
                                         bitorder="little"))
            elif spec.kind == "offsets":
                # each non-empty message's counts + 1 offsets (an empty one may have none)
                w = spec.byte_width
                found = take_bytes(j, np.where(counts > 0, (counts + 1) * w, 0), w)
                if found is None:
                    return None
                values = found.view(f"<i{w}").astype(np.int64)
                nonempty = counts > 0
                g = counts[nonempty]
                group_starts = _exclusive_cumsum(g + 1)
                within = _ranges(group_starts + 1, g)
                if (values[within] < values[within - 1]).any() or (
                        values[group_starts] < 0).any():
                    return None
                firsts = np.zeros(m, np.int64)
                lasts = np.zeros(m, np.int64)
                firsts[nonempty] = values[group_starts]
                lasts[nonempty] = values[group_starts + g]
                data_lengths = lasts - firsts
                shift = firsts - _exclusive_cumsum(data_lengths)
                rebased = values[within] - np.repeat(shift[nonempty], g)
                out = np.concatenate([np.zeros(1, np.int64), rebased]).astype(f"<i{w}")
                parts.append(out.view(np.uint8))
            else:  # data, spanning each message's offsets
                if (spans[:, j] < lasts).any():
                    return None
                parts.append(body[_ranges(body_starts + buffers[:, j, 0] + firsts,
                                          data_lengths)])
            j += 1
        children.append(make_array(vt, total, parts, (), 0))
    union = make_array(union_type, len(codes), [codes.view(np.uint8),
                                                offsets.astype(np.int32).view(np.uint8)],
                       children, 0)
    key_array = make_array(key_type, len(keys), [None, keys], (), 0, 0, key_dictionary)
    entries = make_array(map_type.entries_field.type, len(keys), [None], [key_array, union], 0)
    stats_map = make_array(map_type, m * rows, [None, map_offsets.view(np.uint8)], [entries], 0)
    return column, stats_map, indices, rows


_PLANS: dict[bytes, tuple] = {}



def _stream_plan(stream: bytes, schema_meta: bytes, schema_end: int) -> tuple | None:
    """What reading a statistics stream in bulk needs from its schema message (cached by
    those bytes: every file of one schema has the same): rows per batch, the map, key and
    union types, the union children's types and layouts, the keys' dictionary and the
    templates of its record batch messages; None when the stream is not one quiver
    writes (the message-by-message path reads it)."""
    if schema_meta in _PLANS:
        return _PLANS[schema_meta]

    found = None
    first = md.decode_message(schema_meta).header
    if not isinstance(first, md.SchemaMessage) or len(first.schema.fields) != 2:
        return None
    schema = first.schema
    # the first record batch message, for its FieldNode and Buffer counts
    pos = schema_end
    while True:
        meta, body_start, _ = read_frame(stream, pos)
        if not len(meta):
            return None
        message = md.decode_message(meta)
        pos = body_start + message.body_length
        if isinstance(message.header, md.RecordBatch):
            break
    column_type, map_type = schema.field(0).type, schema.field(1).type
    if (schema.names == ["column", "statistics"] and message.version == md.V5
            and isinstance(map_type, t.MapType) and column_type == t.int32()):
        key_type = map_type.entries_field.type.field(0).type
        union_type = map_type.entries_field.type.field(1).type
        if (isinstance(key_type, t.DictionaryType) and key_type.index_type == t.int32()
                and isinstance(union_type, t.UnionType) and union_type.mode == "dense"
                and tuple(union_type.type_codes) == tuple(range(len(union_type.children)))):
            child_types = [f.type for f in union_type.children]
            child_specs = [layout_of(vt).buffers for vt in child_types]
            kinds = {"validity", "values", "bits", "offsets", "data"}
            num_nodes = 5 + len(child_types)
            num_buffers = 9 + sum(len(s) for s in child_specs)
            # enough digits for as many batches as the longest stream could hold
            templates = [_template(md.V5, num_nodes, num_buffers, d) for d in range(1, 10)]
            if (all(s.kind in kinds for specs in child_specs for s in specs)
                    and all(tm is not None for tm in templates)
                    and message.header.nodes.shape[0] == num_nodes
                    and message.header.buffers.shape[0] == num_buffers):
                by_size: dict[int, list[_Template]] = {}
                for tm in templates:
                    by_size.setdefault(tm.size, []).append(tm)  # type: ignore[union-attr]
                try:
                    groups = {size: _TemplateGroup(g) for size, g in by_size.items()}
                except _TemplateError:
                    groups = None
                if groups is not None:
                    found = (union_type, map_type, key_type, child_types, child_specs,
                             groups)
    if found is not None and len(_PLANS) < 64:  # (a refusal may be this stream's damage)
        _PLANS[schema_meta] = found
    return found


_DICTIONARIES: dict[bytes, Array | None] = {}


def _key_dictionary(stream: bytes, first: int) -> Array | None:
    """The statistics keys' dictionary of a stream whose first record batch message
    starts at ``first`` (cached by the bytes before it: the schema and dictionary
    messages), or None."""
    head_bytes = stream[:first]
    if head_bytes in _DICTIONARIES:
        return _DICTIONARIES[head_bytes]
    from .reader import open_stream

    _, body_start, _ = read_frame(stream, first)
    message = md.decode_message(read_frame(stream, first)[0])
    head = open_stream(stream[: body_start + message.body_length] + EOS)
    batch0 = next(iter(head), None)
    found = None
    if batch0 is not None and head.schema.names == ["column", "statistics"]:
        found = batch0.column(1).children[0].children[0].dictionary
    if len(_DICTIONARIES) < 64:
        _DICTIONARIES[head_bytes] = found
    return found
