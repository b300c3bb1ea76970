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
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import types as t
from ..array.base import Array
from ..buffers import unpack_bits

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


def _valid(arr: Array) -> np.ndarray | None:
    validity = arr.validity
    if validity is None or arr.null_count == 0:
        return None
    return unpack_bits(validity, arr.offset, len(arr))


def _numbers(arr: Array, dtype: t.DataType) -> np.ndarray:
    from ..layout import storage_numpy_dtype

    np_type = storage_numpy_dtype(dtype)
    return arr.buffers[1].view(np_type)[arr.offset : arr.offset + len(arr)]


def _pick(arr: Array, rows: list[int]) -> Array:
    from ..array.select import take

    return take(arr, np.asarray(rows, dtype=np.int64))


def _fixed_bounds(arr: Array, dtype: t.DataType, valid: np.ndarray | None
                  ) -> tuple[int | None, int | None, int] | None:
    """(row of the minimum, row of the maximum, NaN count) of a numeric column; the rows
    are None when every valid value is NaN."""
    values = _numbers(arr, dtype)
    if values.dtype.kind == "f":
        nan = np.isnan(values)
        nans = int(np.count_nonzero(nan & valid)) if valid is not None else int(
            np.count_nonzero(nan))
        usable = ~nan if valid is None else valid & ~nan
        if not usable.any():
            return None, None, nans
        if usable.all():
            return int(values.argmin()), int(values.argmax()), nans
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
    width = "<i8" if arr.type.large else "<i4"
    offsets = arr.buffers[1].view(width)[arr.offset : arr.offset + len(arr) + 1].astype(np.int64)
    return offsets[:-1], offsets[1:] - offsets[:-1], arr.buffers[2]


def _extreme_bytes(starts: np.ndarray, lengths: np.ndarray, data: np.ndarray,
                   rows: np.ndarray, largest: bool) -> tuple[int, bool]:
    """The row whose value is smallest (largest) among ``rows`` comparing at most
    PREFIX_BYTES bytes, and whether the comparison was cut short."""
    candidates = rows
    for j in range(PREFIX_BYTES):
        ended = lengths[candidates] <= j
        if not largest and ended.any():
            return int(candidates[np.argmax(ended)]), False  # a prefix of all the others
        alive = candidates[~ended]
        if len(alive) == 0:
            return int(candidates[0]), False
        byte = data[starts[alive] + j]
        best = byte.max() if largest else byte.min()
        candidates = alive[byte == best]
        if len(candidates) == 1 and lengths[candidates[0]] <= PREFIX_BYTES:
            return int(candidates[0]), False
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
                   ) -> tuple[Array, bool, bool] | None:
    from ..array.build import array as build

    starts, lengths, data = _bytes_of(arr)
    rows = np.arange(len(arr)) if valid is None else np.flatnonzero(valid)
    if len(rows) == 0:
        return None
    low, low_cut = _extreme_bytes(starts, lengths, data, rows, largest=False)
    high, high_cut = _extreme_bytes(starts, lengths, data, rows, largest=True)
    if not low_cut and not high_cut:
        return _pick(arr, [low, high]), True, True
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
    return build(values, dtype), not low_cut, not high_cut


def column_statistics(arr: Array) -> ColumnStatistics:
    """The statistics of one column of a batch."""
    dtype = t.storage_of(arr.type)
    nulls = arr.null_count
    if isinstance(dtype, t.DictionaryType):
        inner = column_statistics(arr.dictionary) if arr.dictionary is not None else None
        if inner is None or not inner.has_bounds or nulls == len(arr):
            return ColumnStatistics(nulls)
        return ColumnStatistics(nulls, inner.min, inner.max, False, False, 0, True)
    bounds = _bounds(arr, dtype)
    if bounds is None:
        return ColumnStatistics(nulls)
    pair, min_exact, max_exact, nans = bounds
    if pair is None:
        return ColumnStatistics(nulls, nan_count=nans)
    low, high = pair.to_pylist()
    return ColumnStatistics(nulls, low, high, min_exact, max_exact, nans, True)


def _bounds(arr: Array, dtype: t.DataType) -> tuple[Array | None, bool, bool, int] | None:
    """(a two-value array [min, max] of the column's type, min exact, max exact, NaNs)."""
    if len(arr) == 0 or arr.null_count == len(arr):
        return None
    valid = _valid(arr)
    if isinstance(dtype, (t.IntegerType, t.FloatingPointType, t.DateType, t.TimeType,
                          t.TimestampType, t.DurationType)):
        found = _fixed_bounds(arr, dtype, valid)
        if found is None:
            return None
        low, high, nans = found
        if low is None or high is None:
            return None, True, True, nans
        return _pick(arr, [low, high]), True, True, nans
    if isinstance(dtype, t.DecimalType):
        found2 = _decimal_bounds(arr, dtype, valid)
        return None if found2 is None else (_pick(arr, list(found2)), True, True, 0)
    if isinstance(dtype, t.BoolType):
        bits = unpack_bits(arr.buffers[1], arr.offset, len(arr))
        if valid is not None:
            bits = bits[valid]
        from ..array.build import array as build

        return build([bool(bits.all()), bool(bits.any())], t.bool_()), True, True, 0
    if isinstance(dtype, (t.StringType, t.BinaryType)):
        found3 = _binary_bounds(arr, dtype, valid)
        return None if found3 is None else (found3[0], found3[1], found3[2], 0)
    return None


def batch_statistics(batch: Any, index: int) -> BatchStatistics:
    """The statistics of one record batch (every top-level column)."""
    return columns_statistics(batch.columns, batch.num_rows, index)


def columns_statistics(columns: Any, num_rows: int, index: int) -> BatchStatistics:
    """The statistics of a batch given as its columns and row count."""
    return BatchStatistics(index, num_rows, tuple(column_statistics(c) for c in columns))


# -- the statistics array and its IPC encoding -----------------------------------------


def _value_type(dtype: t.DataType) -> t.DataType:
    dtype = t.storage_of(dtype) if isinstance(dtype, t.ExtensionType) else dtype
    return dtype.value_type if isinstance(dtype, t.DictionaryType) else dtype


_BOUNDED = (t.IntegerType, t.FloatingPointType, t.DateType, t.TimeType, t.TimestampType,
            t.DurationType, t.DecimalType, t.BoolType, t.StringType, t.BinaryType)


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


def statistics_batch(stats: BatchStatistics, schema: t.Schema) -> Any:
    """One batch's statistics as a quiver RecordBatch of StatisticsSchema.rst's columns."""
    from ..array import make_array
    from ..array.build import array as build
    from ..batch import RecordBatch

    value_types = union_value_types(schema)
    children_values: list[list[Any]] = [[] for _ in value_types]
    keys: list[str] = []
    codes: list[int] = []
    offsets: list[int] = []
    entry_counts: list[int] = []
    column_ids: list[int | None] = [None]

    def add(key: str, code: int, value: Any) -> None:
        keys.append(key)
        codes.append(code)
        offsets.append(len(children_values[code]))
        children_values[code].append(value)

    add(ROW_COUNT, 0, stats.row_count)
    entry_counts.append(1)
    for i, (f, col) in enumerate(zip(schema.fields, stats.columns)):
        column_ids.append(i)
        before = len(keys)
        add(NULL_COUNT, 0, col.null_count)
        vt = _value_type(f.type)
        if isinstance(t.storage_of(vt), t.FloatingPointType):
            add(NAN_COUNT, 0, col.nan_count)
        if col.has_bounds:
            code = value_types.index(vt)
            add(MIN_EXACT if col.min_exact else MIN_APPROX, code, col.min)
            add(MAX_EXACT if col.max_exact else MAX_APPROX, code, col.max)
        entry_counts.append(len(keys) - before)
    children = [build(vals, vt) for vals, vt in zip(children_values, value_types)]
    union_type = t.dense_union([t.field(str(vt), vt) for vt in value_types])
    values = make_array(
        union_type, len(keys),
        [np.asarray(codes, np.int8).view(np.uint8), np.asarray(offsets, np.int32).view(np.uint8)],
        children, 0,
    )
    names = sorted(set(keys))
    key_type = t.dictionary(t.int32(), t.string())
    key_array = make_array(
        key_type, len(keys),
        [None, np.asarray([names.index(k) for k in keys], np.int32).view(np.uint8)],
        (), 0, 0, build(names, t.string()),
    )
    map_type = t.map_(t.field("key", key_type, nullable=False), t.field("items", union_type))
    entries = make_array(map_type.entries_field.type, len(keys), [None], [key_array, values], 0)
    map_offsets = np.zeros(len(entry_counts) + 1, np.int32)
    np.cumsum(entry_counts, out=map_offsets[1:])
    statistics = make_array(map_type, len(entry_counts), [None, map_offsets.view(np.uint8)],
                            [entries], 0)
    column = build(column_ids, t.int32())
    out_schema = t.schema([t.field("column", t.int32()),
                           t.field("statistics", map_type, nullable=False)])
    return RecordBatch(out_schema, [column, statistics])


def encode_statistics(all_stats: list[BatchStatistics], schema: t.Schema) -> str:
    """The footer value: an IPC stream of one statistics batch per record batch, base64."""
    from .writer import BufferOutputStream, new_stream

    if not all_stats:
        return ""
    batches = [statistics_batch(s, schema) for s in all_stats]
    sink = BufferOutputStream()
    with new_stream(sink, batches[0].schema) as writer:
        for stats, batch in zip(all_stats, batches):
            writer.write_batch(batch, custom_metadata={BATCH_KEY: str(stats.index)})
    return base64.b64encode(bytes(sink.getvalue())).decode("ascii")


def decode_statistics(value: str | bytes) -> list[BatchStatistics]:
    """The per-batch statistics of a footer value written by :func:`encode_statistics`.

    Raises quiver's FormatError for a value that is not such a stream.
    """
    from .. import errors as E
    from .reader import open_stream

    if isinstance(value, str):
        value = value.encode("ascii", errors="replace")
    try:
        raw = base64.b64decode(value, validate=True)
    except ValueError:
        raise E.FormatError(
            f"expected base64 text under the footer key {STATISTICS_KEY!r}, found other bytes"
        ) from None
    out: list[BatchStatistics] = []
    reader = open_stream(raw, validate="full")
    for position, batch in enumerate(reader):
        meta = reader.custom_metadata
        found = meta.get(BATCH_KEY) if meta is not None else None
        index = int(found) if found is not None else position
        out.append(_from_rows(batch.to_pylist(), index))
    return out


def _from_rows(rows: list[dict[str, Any]], index: int) -> BatchStatistics:
    row_count = 0
    columns: dict[int, ColumnStatistics] = {}
    for row in rows:
        entries = dict(row["statistics"])
        if row["column"] is None:
            row_count = int(entries.get(ROW_COUNT, 0))
            continue
        has_min = MIN_EXACT in entries or MIN_APPROX in entries
        columns[row["column"]] = ColumnStatistics(
            null_count=int(entries.get(NULL_COUNT, 0)),
            min=entries.get(MIN_EXACT, entries.get(MIN_APPROX)),
            max=entries.get(MAX_EXACT, entries.get(MAX_APPROX)),
            min_exact=MIN_APPROX not in entries,
            max_exact=MAX_APPROX not in entries,
            nan_count=int(entries.get(NAN_COUNT, 0)),
            has_bounds=has_min,
        )
    ordered = tuple(columns.get(i, ColumnStatistics(0)) for i in range(max(columns, default=-1)
                                                                       + 1))
    return BatchStatistics(index, row_count, ordered)
