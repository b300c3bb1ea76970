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
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import types as t
from ..array.base import Array
from ..buffers import unpack_bits
from ..errors import ArrowError

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
        from ..array.concat import concat_arrays

        return concat_arrays([self.low, self.high])


def _numbers(arr: Array, dtype: t.DataType) -> np.ndarray:
    from ..layout import storage_numpy_dtype

    return arr._fixed_values_view(storage_numpy_dtype(dtype))


def _two(arr: Array, low: int, high: int) -> tuple[Array, Array]:
    """Rows ``low`` and ``high`` of ``arr`` as one-value arrays, copied: a writer keeps
    them until it closes, and views would keep every batch's memory alive."""
    from ..array.select import take

    return _split(take(arr, np.array([low, high], dtype=np.int64)))


def _split(pair: Array) -> tuple[Array, Array]:
    return pair.slice(0, 1), pair.slice(1, 1)


def _fixed_bounds(arr: Array, dtype: t.DataType, valid: np.ndarray | None
                  ) -> tuple[int | None, int | None, int] | None:
    """(row of the minimum, row of the maximum, NaN count) of a numeric column; the rows
    are None when every valid value is NaN."""
    values = _numbers(arr, dtype)
    if values.dtype.kind == "f":
        nan = np.isnan(values)
        nans = int(np.count_nonzero(nan & valid)) if valid is not None else int(
            np.count_nonzero(nan))
        if nans == 0 and valid is None:
            return int(values.argmin()), int(values.argmax()), 0
        usable = ~nan if valid is None else valid & ~nan
        if not usable.any():
            return None, None, nans
        low = np.where(usable, values, np.inf)
        high = np.where(usable, values, -np.inf)
        return int(low.argmin()), int(high.argmax()), nans
    if valid is None:
        return int(values.argmin()), int(values.argmax()), 0
    if not valid.any():
        return None
    info = np.iinfo(values.dtype)
    low = np.where(valid, values, info.max)
    high = np.where(valid, values, info.min)
    return int(low.argmin()), int(high.argmax()), 0


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
    from ..errors import ArrowInvalid

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


def _word_at(starts: np.ndarray, lengths: np.ndarray, data: np.ndarray, rows: np.ndarray,
             j: int) -> np.ndarray:
    """Bytes ``j .. j+8`` of each row as one big-endian uint64 (missing bytes are 0)."""
    padded = np.concatenate([data, np.zeros(8, np.uint8)])
    windows = np.lib.stride_tricks.as_strided(padded, (len(data) + 1, 8), (1, 1),
                                              writeable=False)
    begin = np.minimum(starts[rows] + j, len(data))
    picked = windows[begin]  # a copy, one row of 8 bytes per value
    picked *= np.arange(8)[None, :] < (lengths[rows] - j)[:, None]
    return picked.view(">u8").reshape(-1)


def _extreme_bytes(starts: np.ndarray, lengths: np.ndarray, data: np.ndarray,
                   rows: np.ndarray, largest: bool, first: np.ndarray) -> tuple[int, bool]:
    """The row whose value is smallest (largest) among ``rows`` comparing at most
    PREFIX_BYTES bytes, eight at a time, and whether the comparison was cut short;
    ``first`` holds every row's first eight bytes (computed once for min and max)."""
    candidates = rows
    for j in range(0, PREFIX_BYTES, 8):
        words = first if j == 0 else _word_at(starts, lengths, data, candidates, j)
        best = words.max() if largest else words.min()
        candidates = candidates[words == best]
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


def _binary_bounds(arr: Array, dtype: t.DataType, valid: np.ndarray | None
                   ) -> tuple[tuple[Array, Array], bool, bool] | None:
    from ..array.build import array as build

    starts, lengths, data = _bytes_of(arr)
    rows = np.arange(len(arr)) if valid is None else np.flatnonzero(valid)
    if len(rows) == 0:
        return None
    first = _word_at(starts, lengths, data, rows, 0)
    low, low_cut = _extreme_bytes(starts, lengths, data, rows, False, first)
    high, high_cut = _extreme_bytes(starts, lengths, data, rows, True, first)
    if not low_cut and not high_cut:
        return _two(arr, low, high), True, True
    is_text = isinstance(dtype, t.StringType)

    def value(row: int, n: int) -> bytes:
        return bytes(data[starts[row] : starts[row] + min(int(lengths[row]), n)])

    low_value = value(low, PREFIX_BYTES)
    high_value: bytes | None = value(high, PREFIX_BYTES + 1)
    if high_cut:
        high_value = _round_up(high_value[:PREFIX_BYTES], is_text)
        if high_value is None:
            return None
    if is_text:
        low_value = low_value.decode("utf-8", errors="ignore").encode()
    values: list[Any] = [low_value, high_value]
    if is_text:
        values = [v.decode() for v in values]
    return _split(build(values, dtype)), not low_cut, not high_cut


def column_bounds(arr: Array) -> Bounds:
    """The statistics of one column of a batch, as they are written."""
    if isinstance(arr.type, t.ExtensionType):  # bounds of the storage values
        from ..array import make_array

        arr = make_array(arr.type.storage_type, len(arr), arr.buffers, arr.children,
                         arr.null_count, arr.offset, arr.dictionary)
    dtype = t.storage_of(arr.type)
    nulls = arr.null_count
    if isinstance(dtype, (t.DictionaryType, t.RunEndEncodedType, t.UnionType)):
        # the logical null count (a null dictionary value, run or union child is a null
        # to every reader), which is what a filter's "is null" asks about
        from ..array.select import _null_mask

        nulls = int(np.count_nonzero(_null_mask(arr)))
    if isinstance(dtype, t.DictionaryType):
        if arr.dictionary is None or nulls == len(arr):
            return Bounds(None, null_count=nulls)
        inner = column_bounds(arr.dictionary)
        return Bounds(inner.low, inner.high, False, False, 0, nulls)
    if len(arr) == 0 or nulls == len(arr):
        return Bounds(None, null_count=nulls)
    valid = arr.is_valid_mask()
    if isinstance(dtype, (t.IntegerType, t.FloatingPointType, t.DateType, t.TimeType,
                          t.TimestampType, t.DurationType)):
        found = _fixed_bounds(arr, dtype, valid)
        if found is None or found[0] is None or found[1] is None:
            return Bounds(None, None, nan_count=0 if found is None else found[2],
                          null_count=nulls)
        return Bounds(*_two(arr, found[0], found[1]), True, True, found[2], nulls)
    if isinstance(dtype, t.DecimalType):
        rows = _decimal_bounds(arr, dtype, valid)
        if rows is None:
            return Bounds(None, null_count=nulls)
        return Bounds(*_two(arr, *rows), null_count=nulls)
    if isinstance(dtype, t.BoolType):
        from ..array.build import array as build

        bits = unpack_bits(arr.buffers[1], arr.offset, len(arr))
        if valid is not None:
            bits = bits[valid]
        return Bounds(*_split(build([bool(bits.all()), bool(bits.any())], t.bool_())),
                      null_count=nulls)
    if isinstance(dtype, (t.StringType, t.BinaryType)):
        found3 = _binary_bounds(arr, dtype, valid)
        if found3 is None:
            return Bounds(None, null_count=nulls)
        return Bounds(*found3[0], found3[1], found3[2], 0, nulls)
    return Bounds(None, null_count=nulls)


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


def statistics_batches(written: list[WrittenBatch], schema: t.Schema) -> list[Any]:
    """Each batch's statistics as a RecordBatch of StatisticsSchema.rst's columns
    (``1 + num_columns`` rows: the batch, then each column), compact: every one holds
    only its own values."""
    from ..array import make_array
    from ..array.build import array as build
    from ..array.concat import concat_arrays
    from ..batch import RecordBatch

    value_types = union_value_types(schema)
    floats = [_is_float(f.type) for f in schema.fields]
    counts: list[int] = []
    pairs: list[list[Array]] = [[] for _ in value_types]
    taken = [0] * len(value_types)
    keys: list[int] = []
    codes: list[int] = []
    offsets: list[int] = []
    entries_per_row: list[int] = []
    key_index = {k: i for i, k in enumerate(_KEYS)}
    code_of = [value_types.index(_value_type(f.type))
               if _value_type(f.type) in value_types else 0 for f in schema.fields]
    # where each batch's entries and union child values start
    entry_starts: list[int] = []
    value_starts: list[list[int]] = []

    def count(key: str, value: int) -> None:
        keys.append(key_index[key])
        codes.append(0)
        offsets.append(len(counts))
        counts.append(value)

    for batch in written:
        entry_starts.append(len(keys))
        value_starts.append([len(counts), *taken[1:]])
        count(ROW_COUNT, batch.row_count)
        entries_per_row.append(1)
        for i, bounds in enumerate(batch.columns):
            before = len(keys)
            count(NULL_COUNT, bounds.null_count)
            if floats[i]:
                count(NAN_COUNT, bounds.nan_count)
            if bounds.low is not None and bounds.high is not None:
                code = code_of[i]
                names = (MIN_EXACT if bounds.min_exact else MIN_APPROX,
                         MAX_EXACT if bounds.max_exact else MAX_APPROX)
                if code == 0:  # int64 bounds share the counts' child
                    for key, one in zip(names, (bounds.low, bounds.high)):
                        count(key, one.to_pylist()[0])
                else:
                    for key in names:
                        keys.append(key_index[key])
                        codes.append(code)
                        offsets.append(taken[code])
                        taken[code] += 1
                    pairs[code].extend((bounds.low, bounds.high))
            entries_per_row.append(len(keys) - before)
    entry_starts.append(len(keys))
    value_starts.append([len(counts), *taken[1:]])
    children = [build(counts, t.int64())] + [
        concat_arrays(found) if found else build([], vt)
        for found, vt in zip(pairs[1:], value_types[1:])
    ]
    all_codes = np.asarray(codes, np.int8)
    all_offsets = np.asarray(offsets, np.int32)
    all_keys = np.asarray(keys, np.int32)
    per_row = np.asarray(entries_per_row, np.int32)
    union_type = t.dense_union([t.field(f"v{i}", vt) for i, vt in enumerate(value_types)])
    key_type = t.dictionary(t.int32(), t.string())
    key_names = build(_KEYS, t.string())  # one dictionary object: written once per stream
    map_type = t.map_(t.field("key", key_type, nullable=False), t.field("value", union_type))
    out_schema = t.schema([t.field("column", t.int32()),
                           t.field("statistics", map_type, nullable=False)])
    rows = 1 + len(schema.fields)
    column_ids = build([None, *range(len(schema.fields))], t.int32())
    out = []
    for k in range(len(written)):
        e0, e1 = entry_starts[k], entry_starts[k + 1]
        base = np.asarray(value_starts[k], np.int32)
        part_codes = all_codes[e0:e1]
        part_children = [
            child.slice(int(value_starts[k][c]),
                        int(value_starts[k + 1][c]) - int(value_starts[k][c]))
            for c, child in enumerate(children)
        ]
        values = make_array(
            union_type, e1 - e0,
            [part_codes.view(np.uint8),
             (all_offsets[e0:e1] - base[part_codes]).astype(np.int32).view(np.uint8)],
            part_children, 0,
        )
        key_array = make_array(key_type, e1 - e0, [None, all_keys[e0:e1].view(np.uint8)],
                               (), 0, 0, key_names)
        entries = make_array(map_type.entries_field.type, e1 - e0, [None],
                             [key_array, values], 0)
        map_offsets = np.zeros(rows + 1, np.int32)
        np.cumsum(per_row[k * rows : (k + 1) * rows], out=map_offsets[1:])
        stats = make_array(map_type, rows, [None, map_offsets.view(np.uint8)], [entries], 0)
        out.append(RecordBatch(out_schema, [column_ids, stats]))
    return out


def encode_statistics(written: list[WrittenBatch], schema: t.Schema) -> str:
    """The footer value: an IPC stream of one statistics batch per record batch, base64."""
    from .writer import BufferOutputStream, new_stream

    if not written:
        return ""
    batches = statistics_batches(written, schema)
    sink = BufferOutputStream()
    with new_stream(sink, batches[0].schema) as writer:
        for stats, batch in zip(written, batches):
            writer.write_batch(batch, custom_metadata={BATCH_KEY: str(stats.index)})
    return base64.b64encode(bytes(sink.getvalue())).decode("ascii")


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
    mins: tuple[Array | None, ...]
    maxs: tuple[Array | None, ...]
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
    from ..errors import FormatError

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

    Raises quiver's FormatError for a value that is not such a stream.
    """
    from .. import errors as E
    from ..array.concat import concat_arrays
    from ..array.select import take
    from .reader import open_stream

    reader = open_stream(statistics_stream(value))
    batches, indices = [], []
    for position, batch in enumerate(reader):
        meta = reader.custom_metadata
        found = meta.get(BATCH_KEY) if meta is not None else None
        indices.append(int(found) if found is not None else position)
        batches.append(batch)
    schema = reader.schema
    if schema.names != ["column", "statistics"] or not batches:
        raise E.FormatError(f"expected statistics batches (column, statistics), found "
                            f"{schema.names if batches else 'none'}")
    per_batch = [b.num_rows for b in batches]
    if len(set(per_batch)) != 1 or per_batch[0] < 1:
        raise E.FormatError(f"expected one row per column in every statistics batch, found "
                            f"{sorted(set(per_batch))} rows")
    rows = per_batch[0]
    ncols = rows - 1
    column = concat_arrays([b.column(0) for b in batches])
    stats_map = concat_arrays([b.column(1) for b in batches])
    map_offsets = stats_map.buffers[1].view("<i4")[stats_map.offset :
                                                   stats_map.offset + len(stats_map) + 1]
    entries = stats_map.children[0]
    start, stop = int(map_offsets[0]), int(map_offsets[-1])
    if (np.diff(map_offsets.astype(np.int64)) < 0).any() or start < 0 or stop > len(entries):
        raise E.FormatError("expected statistics map offsets that do not decrease, inside "
                            f"its {len(entries)} entries")
    key_array = entries.children[0].slice(start, stop - start)
    union = entries.children[1].slice(start, stop - start)
    if not isinstance(union.type, t.UnionType) or union.type.mode != "dense" or not isinstance(
            key_array.type, t.DictionaryType) or key_array.dictionary is None:
        raise E.FormatError(f"expected statistics keys as a dictionary and values as a dense "
                            f"union, found {key_array.type} and {union.type}")
    names = key_array.dictionary.to_pylist()
    key_index = key_array.buffers[1].view("<i4")[key_array.offset :
                                                  key_array.offset + len(key_array)]
    codes = union.buffers[0].view(np.int8)[union.offset : union.offset + len(union)]
    offs = union.buffers[1].view("<i4")[union.offset : union.offset + len(union)]
    children = union.children
    if len(key_index) and (key_index.min() < 0 or key_index.max() >= len(names)):
        raise E.FormatError(f"expected statistics key indices below {len(names)}")
    if len(codes) and (codes.min() < 0 or codes.max() >= len(children)):
        raise E.FormatError(f"expected statistics value type codes below {len(children)}")
    sizes = np.array([len(c) for c in children], dtype=np.int64)
    if len(offs) and ((offs < 0) | (offs >= sizes[codes.astype(np.int64)])).any():
        raise E.FormatError("expected statistics value offsets inside their union children")
    if not isinstance(children[0].type, t.IntegerType) or children[0].type.width != 64:
        raise E.FormatError(f"expected the statistics union's first child as int64, found "
                            f"{children[0].type}")
    key_names = np.asarray(names, dtype=object)[key_index]
    counts_child = union.children[0]
    count_values = counts_child.buffers[1].view("<i8")[counts_child.offset :
                                                        counts_child.offset + len(counts_child)]
    row_of_entry = np.repeat(np.arange(len(stats_map)), np.diff(map_offsets))
    batch_of_entry = row_of_entry // rows
    ids = column.buffers[1].view("<i4")[column.offset : column.offset + len(column)]
    id_valid = column.is_valid_mask()
    column_of_row = ids.astype(np.int64) if id_valid is None else np.where(id_valid, ids, -1)
    if ((column_of_row < -1) | (column_of_row >= ncols)).any():
        raise E.FormatError(f"expected statistics column ids below {ncols}")
    column_of_entry = column_of_row[row_of_entry]
    nb = len(batches)

    def counts_for(key: str, col: int) -> np.ndarray:
        out = np.zeros(nb, np.int64)
        hit = (key_names == key) & (column_of_entry == col) & (codes == 0)
        out[batch_of_entry[hit]] = count_values[offs[hit]]
        return out

    row_counts = counts_for(ROW_COUNT, -1)
    null_counts, nan_counts, mins, maxs, min_exact, max_exact, has = [], [], [], [], [], [], []
    for c in range(ncols):
        null_counts.append(counts_for(NULL_COUNT, c))
        nan_counts.append(counts_for(NAN_COUNT, c))
        bounds = []
        exact = []
        present = np.zeros(nb, bool)
        for exact_key, approx_key in ((MIN_EXACT, MIN_APPROX), (MAX_EXACT, MAX_APPROX)):
            hit = ((key_names == exact_key) | (key_names == approx_key)) & (column_of_entry == c)
            where = np.flatnonzero(hit)
            if len(where) == 0:
                bounds.append(None)
                exact.append(np.ones(nb, bool))
                continue
            code = int(codes[where[0]])
            if (codes[where] != code).any():
                raise E.FormatError(f"expected column {c}'s bounds in one union child")
            index = np.zeros(nb, np.int64)
            valid = np.zeros(nb, bool)
            index[batch_of_entry[where]] = offs[where]
            valid[batch_of_entry[where]] = True
            present |= valid
            from ..array import make_array

            nullable = make_array(t.int64(), nb, [np.packbits(valid, bitorder="little"),
                                                  index.view(np.uint8)], (), -1)
            bounds.append(take(union.children[code], nullable))
            flags = np.ones(nb, bool)
            flags[batch_of_entry[where]] = key_names[where] == exact_key
            exact.append(flags)
        mins.append(bounds[0])
        maxs.append(bounds[1])
        min_exact.append(exact[0])
        max_exact.append(exact[1])
        has.append(present if bounds[0] is not None and bounds[1] is not None
                   else np.zeros(nb, bool))
    return FileStatistics(row_counts, tuple(null_counts), tuple(nan_counts), tuple(mins),
                          tuple(maxs), tuple(min_exact), tuple(max_exact), tuple(has),
                          np.asarray(indices, np.int64))
