"""The footer value on write: plain numbers per batch, statistics batches built
column-wise at close, framed in bulk (:mod:`.templates`) or message by message."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import types as t
from ...array import make_array
from ...array.base import Array
from ...array.build import array as build
from ...array.concat import concat_arrays
from ...array.select import take
from ...batch import RecordBatch
from ..compression.buffer import zstd_compressor
from ..encoder import StreamEncoder
from ..framing import EOS
from ..metadata import V5
from .compute import Raw, raw_function, values_array
from .groups import ALONE_ROWS, GROUP_BYTES, GROUP_ROWS, Kept, group_for, keep_column
from .model import (
    BATCH_KEY,
    BOUND_CODES,
    KEYS,
    NAN_CODE,
    NULL_CODE,
    ROW_CODE,
    ZSTD_LEVEL,
    is_float,
    union_value_types,
    value_type,
)
from .templates import bulk_messages, exclusive_cumsum


class StatisticsCollector:
    """What a file writer keeps of its batches' statistics: per column, the plain numbers
    of :func:`column_raw` (no arrays, no per-batch objects), turned into the footer value
    once, at close (:meth:`encode`).  The function for each column is chosen once, from
    the schema.  Batches under :data:`~.groups.ALONE_ROWS` rows leave a checked copy of
    what the statistics of their numeric, boolean, string and binary columns need,
    computed a group of about :data:`~.groups.GROUP_ROWS` rows at a time
    (:mod:`.groups`).

    (Computing on a worker thread while the batch is written was tried: with the GIL
    held by both, writes took as long; on this 2-core machine they were slower.)"""

    def __init__(self, schema: t.Schema) -> None:
        self.schema = schema
        self._functions = [raw_function(f.type, f.name) for f in schema.fields]
        self._groups = [group_for(f.type) for f in schema.fields]
        self.row_counts: list[int] = []
        self._raws: list[list[Raw]] = [[] for _ in schema.fields]
        self._pending: list[list[Kept]] = [[] for _ in schema.fields]
        self._pending_rows = 0
        self._pending_bytes = 0

    def __len__(self) -> int:
        return len(self.row_counts)

    @property
    def raws(self) -> list[list[Raw]]:
        """Per column, each batch's :data:`Raw` statistics."""
        self._flush()
        return self._raws

    def add(self, columns: Sequence[Array], num_rows: int) -> None:
        """Compute, or keep a copy of what computing needs of, one batch's statistics;
        what computing or checking them raises comes from here (before the writer
        writes the batch), and nothing is kept of it."""
        if num_rows >= ALONE_ROWS:
            found = [fn(column) for fn, column in zip(self._functions, columns)]
            self._flush()
            self.row_counts.append(num_rows)
            for log, raw in zip(self._raws, found):
                log.append(raw)
            return
        items: list[Raw | Kept] = []  # per column: its statistics, or what a group keeps
        size = 0
        for fn, g, column in zip(self._functions, self._groups, columns):
            if g is None:
                items.append(fn(column))
            else:
                kept, nbytes = keep_column(g, column)
                items.append(kept)
                size += nbytes
        if (self._pending_rows + num_rows > GROUP_ROWS
                or self._pending_bytes + size > GROUP_BYTES):
            self._flush()  # (the group so far, without this batch)
        self.row_counts.append(num_rows)
        for g, raws, pending, item in zip(self._groups, self._raws, self._pending, items):
            (raws if g is None else pending).append(item)
        self._pending_rows += num_rows
        self._pending_bytes += size

    def _flush(self) -> None:
        """Compute the kept columns' statistics (all of them, then keep the results)."""
        computed = [(c, g.compute(self._pending[c])) for c, g in enumerate(self._groups)
                    if g is not None and self._pending[c]]
        for c, raws in computed:
            self._raws[c].extend(raws)
            self._pending[c] = []
        self._pending_rows = self._pending_bytes = 0

    def encode(self) -> str:
        """The footer value (see :func:`encode_statistics`)."""
        return encode_statistics(self)


@dataclass(frozen=True)
class Columns:
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
              schema: t.Schema) -> Columns:
    """The statistics batches of a file as :class:`Columns`, built column by column with
    numpy (no loop over batches).  Each batch's ``1 + num_columns`` rows are the batch
    (``ARROW:row_count:exact``), then each column: ``ARROW:null_count:exact``,
    ``quiver:nan_count:exact`` (floating point) and, where known, min and max."""

    value_types = union_value_types(schema)
    nb = len(row_counts)
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
        slot_key.append(np.full(nb, key, np.int32) if isinstance(key, int) else key)
        slot_present.append(present)
        slot_code.append(code)
        slot_value.append(value)
        slot_source.append(source)

    slot(ROW_CODE, everywhere, 0, np.asarray(row_counts, np.int64))
    slots_per_row.append(1)
    for field, log in zip(schema.fields, raws):
        before = len(slot_code)
        nulls, nans, lows, highs, min_exact, max_exact = (
            zip(*log) if nb else ((),) * 6)
        slot(NULL_CODE, everywhere, 0, np.asarray(nulls, np.int64))
        if is_float(field.type):
            slot(NAN_CODE, everywhere, 0, np.asarray(nans, np.int64))
        vt = value_type(field.type)
        has = np.fromiter((v is not None for v in lows), bool, nb)
        if vt in value_types and has.any():
            code = value_types.index(vt)
            where = np.flatnonzero(has)
            rank = np.cumsum(has) - 1
            exact_min = np.asarray(min_exact, bool)
            exact_max = np.asarray(max_exact, bool)
            for values, exact, (exact_code, approx_code) in zip(
                (lows, highs), (exact_min, exact_max), BOUND_CODES
            ):
                present_values = [values[i] for i in where]
                keys = np.where(exact, exact_code, approx_code)
                keys = keys.astype(np.int32)
                if code == 0:  # int64 bounds share the counts' child
                    numbers = np.zeros(nb, np.int64)
                    numbers[where] = np.asarray(present_values, np.int64)
                    slot(keys, has, 0, numbers)
                else:
                    sources[code].append(values_array(present_values, vt))
                    slot(keys, has, code, source=source_sizes[code] + rank)
                    source_sizes[code] += len(where)
        slots_per_row.append(len(slot_code) - before)
    rows = len(slots_per_row)
    present = np.stack(slot_present, axis=1) if nb else np.zeros((0, len(slot_code)), bool)
    key_matrix = np.stack(slot_key, axis=1) if nb else np.zeros((0, len(slot_code)), np.int32)
    code_matrix = np.broadcast_to(np.asarray(slot_code, np.int8), present.shape)
    keys = key_matrix[present]
    codes = code_matrix[present]
    per_row = np.add.reduceat(present.astype(np.int32), exclusive_cumsum(
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
        offsets[where] = np.arange(len(where)) - exclusive_cumsum(counts)[
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
            children.append(values_array([], vt))
    union_type = t.dense_union([t.field(f"v{i}", vt) for i, vt in enumerate(value_types)])
    key_type = t.dictionary(t.int32(), t.string())
    map_type = t.map_(t.field("key", key_type, nullable=False), t.field("value", union_type))
    out_schema = t.schema([t.field("column", t.int32()),
                           t.field("statistics", map_type, nullable=False)])
    return Columns(
        rows, out_schema, union_type, key_type, map_type, build(KEYS, t.string()),
        build([None, *range(len(schema.fields))], t.int32()), keys.astype(np.int32),
        codes.astype(np.int8), offsets, entry_counts, map_offsets, children, child_counts,
    )


def statistics_batches(collector: StatisticsCollector) -> list[Any]:
    """Each batch's statistics as a RecordBatch of StatisticsSchema.rst's columns
    (``1 + num_columns`` rows: the batch, then each column), compact: every one holds
    only its own values."""
    cols = _columnar(collector.row_counts, collector.raws, collector.schema)
    return [cols.batch(k) for k in range(len(collector))]



def encode_statistics(collector: StatisticsCollector) -> str:
    """The footer value: an IPC stream of one statistics batch per record batch, in one
    zstd frame, base64.

    The schema, the keys' dictionary and the first batch go through the stream encoder;
    the other batches are laid out all at once (:func:`bulk_messages`), as the writer
    would write them but for the body's layout."""
    if not len(collector):
        return ""
    cols = _columnar(collector.row_counts, collector.raws, collector.schema)
    encoder = StreamEncoder(cols.out_schema)
    parts = encoder.begin()
    parts += encoder.write_batch(cols.batch(0), custom_metadata={BATCH_KEY: "0"})
    first = 1
    rest = bulk_messages(cols, first, V5)
    if rest is None:  # no template: the encoder encodes every batch
        for k in range(1, len(collector)):
            parts += encoder.write_batch(cols.batch(k), custom_metadata={BATCH_KEY: str(k)})
        rest = b""
    parts += encoder.end()
    stream = b"".join(parts)
    if not stream.endswith(EOS):
        raise AssertionError("expected the statistics stream to end with EOS")
    stream = stream[: -len(EOS)] + rest + EOS
    # one zstd frame (with its content size): the statistics' messages repeat one layout,
    # so the value is ~20x smaller, and a reader decodes ~0.6 MB less base64 per 500 batches
    return base64.b64encode(zstd_compressor(ZSTD_LEVEL).compress(stream)).decode("ascii")
