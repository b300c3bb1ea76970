"""The footer value on read: bulk decoding of quiver-written streams, message by message
for any other, and :class:`FileStatistics` over the result."""

from __future__ import annotations

import base64
import dataclasses
import struct
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import zstandard

from ... import types as t
from ...array import make_array
from ...array.base import Array
from ...array.concat import concat_arrays
from ...array.data import ranges, typed_view
from ...array.select import take
from ...errors import ArrowError, ArrowInvalid, FormatError, LimitExceeded
from ...layout import layout_of
from .. import metadata as md
from ..compression.buffer import raw_decompress
from ..compression.codecs import ZSTD
from ..decoder import DEFAULT_LIMITS, END
from ..framing import EOS, read_frame
from ..stream_decoder import StreamDecoder
from .model import (
    BATCH_KEY,
    BOUND_CODES,
    KEY_INDEX,
    NAN_CODE,
    NULL_CODE,
    ROW_CODE,
    STATISTICS_KEY,
    ZSTD_MAGIC,
    BatchStatistics,
    ColumnStatistics,
    is_float,
    value_type,
)
from .templates import (
    Template,
    TemplateError,
    TemplateGroup,
    exclusive_cumsum,
    template_for,
    windows,
)


@dataclass(frozen=True)
class FileStatistics(Sequence[BatchStatistics]):
    """A file's statistics, column by column over its batches (for vectorized pruning),
    and as a sequence of :class:`BatchStatistics` (Python values, made on demand).

    ``mins[c]``/``maxs[c]`` are arrays of column ``c``'s value type, one value per batch
    (null where unknown), or None for columns without bounds.  A count the value does not
    state is 0 in ``row_counts``, ``null_counts`` and ``nan_counts``, and False in
    ``row_known``, ``null_known`` and ``nan_known``: pruning must not trust it.
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
    row_known: np.ndarray
    null_known: tuple[np.ndarray, ...]
    nan_known: tuple[np.ndarray, ...]

    def __len__(self) -> int:
        return len(self.row_counts)

    def __getitem__(self, i: Any) -> Any:
        return _item(self, i, "batch")

    def _get(self, i: int) -> BatchStatistics:
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
                int(self.null_counts[c][i]) if self.null_known[c][i] else None,
                low,
                high,
                bool(self.min_exact[c][i]) or not bounded,
                bool(self.max_exact[c][i]) or not bounded,
                int(self.nan_counts[c][i]),
                bounded,
            ))
        return BatchStatistics(int(self.indices[i]),
                               int(self.row_counts[i]) if self.row_known[i] else None,
                               tuple(columns))


def _item(seq: Any, i: Any, what: str) -> Any:
    """``seq[i]`` for the sequences here: a list for a slice, else ``seq._get`` of the
    index made non-negative (IndexError naming ``what`` when out of range)."""
    n = len(seq)
    if isinstance(i, slice):
        return [seq._get(j) for j in range(*i.indices(n))]
    if not -n <= i < n:
        raise IndexError(f"expected a {what} index below {n}, found {i}")
    return seq._get(i % n)


def footer_value(metadata: Any) -> str | bytes | None:
    """The statistics value of a footer's custom metadata, or None."""
    return metadata.get(STATISTICS_KEY) if metadata is not None else None


def statistics_stream(value: str | bytes, max_size: int = DEFAULT_LIMITS.max_metadata_size
                      ) -> bytes:
    """The IPC stream a footer value encodes (the stream itself, or the one zstd frame
    quiver writes, which must state its content size, at most ``max_size``); quiver's
    FormatError for other text, LimitExceeded for a larger stream."""

    if isinstance(value, str):
        value = value.encode("ascii", errors="replace")
    try:
        raw = base64.b64decode(value, validate=True)
    except ValueError:
        raise FormatError(
            f"expected base64 text under the footer key {STATISTICS_KEY!r}, found other bytes"
        ) from None
    if not raw.startswith(ZSTD_MAGIC):
        return raw
    where = f"the footer's {STATISTICS_KEY!r} value"
    try:
        size = zstandard.frame_content_size(raw)
    except zstandard.ZstdError:
        size = -1
    if size < 0:  # unknown (-1) or a damaged header
        raise FormatError(f"expected a zstd frame stating its content size in {where}, "
                          f"found a frame header without one")
    if size > max_size:
        raise LimitExceeded(f"expected a statistics stream of at most {max_size} bytes "
                            f"(the metadata limit), found a zstd frame claiming {size} "
                            f"in {where}")
    # decoded as IPC buffers are: output allocated as it really comes out, past a ratio
    out = raw_decompress(ZSTD, np.frombuffer(raw, np.uint8), size, where)
    if len(out) != size:
        raise FormatError(f"expected {size} bytes out of the zstd frame in {where}, "
                          f"found {len(out)}")
    return bytes(out)


def decode_statistics(value: str | bytes,
                      max_size: int = DEFAULT_LIMITS.max_metadata_size,
                      columns: Collection[int] | None = None) -> FileStatistics:
    """The statistics of a footer value written by :func:`encode_statistics`.

    The statistics batches of a file share one schema and, as quiver writes them, one
    metadata layout: those are read all at once (:func:`_bulk_columns`); any other stream
    message by message.  Raises quiver's FormatError for a value that is not such a stream.
    ``columns``: the columns wanted (by index), when not all; the others may come
    without bounds or null counts (what a filter on those columns needs, sooner).
    """
    stream = statistics_stream(value, max_size)
    try:
        bulk = _bulk_columns(stream, columns)
    except (ArrowError, ValueError, IndexError, TypeError, OverflowError, struct.error):
        bulk = None  # the message-by-message path below says what is wrong
    if bulk is not None:
        return _from_columns(*bulk, checked=True)
    schema, read = _read_stream(stream)
    batches, indices = [], []
    for position, (batch, meta) in enumerate(read):
        found = meta.get(BATCH_KEY) if meta is not None else None
        indices.append(_batch_index(found, position))
        batches.append(batch)
    if schema.names != ["column", "statistics"] or not batches:
        raise _format_error(f"statistics batches (column, statistics), found "
                            f"{schema.names if batches else 'none'}")
    per_batch = [b.num_rows for b in batches]
    if len(set(per_batch)) != 1 or per_batch[0] < 1:
        raise _format_error(f"one row per column in every statistics batch, found "
                            f"{sorted(set(per_batch))} rows")
    column = concat_arrays([b.column(0) for b in batches])
    stats_map = concat_arrays([b.column(1) for b in batches])
    return _from_columns(column, stats_map, np.asarray(indices, np.int64), per_batch[0])


def statistics_for_skipping(value: str | bytes | None, schema: t.Schema, num_batches: int,
                            max_size: int = DEFAULT_LIMITS.max_metadata_size,
                            columns: Collection[int] | None = None,
                            decoded: FileStatistics | None = None
                            ) -> tuple[FileStatistics | None, str | None]:
    """A footer value's statistics (of ``columns``, as :func:`decode_statistics`; or
    ``decoded``, when they were) when they can decide which of the ``num_batches``
    batches of a file of ``schema`` to skip, else None and why (None, None: the file has
    none).  Statistics only spare reads, so a value that is damaged, over the metadata
    limit, not one entry per batch in order, or of other columns than the file's costs a
    full read instead of the read itself."""
    if value is None:
        return None, None
    try:
        stats = decoded if decoded is not None else decode_statistics(value, max_size,
                                                                      columns)
    except LimitExceeded as exc:
        return None, f"{exc}; raise IpcLimits.max_metadata_size to use them"
    except ArrowError as exc:
        return None, str(exc)
    if len(stats) != num_batches:
        return None, (f"expected statistics for each of the {num_batches} record batches, "
                      f"found {len(stats)}")
    out_of_place = np.flatnonzero(stats.indices != np.arange(num_batches))
    if len(out_of_place):
        k = int(out_of_place[0])
        return None, (f"expected the statistics of batch {k} in place {k}, found those of "
                      f"batch {int(stats.indices[k])} there")
    if len(stats.null_counts) != len(schema.fields):
        return None, (f"expected statistics of the file's {len(schema.fields)} columns, "
                      f"found {len(stats.null_counts)}")
    for c in range(len(schema.fields)) if columns is None else sorted(columns):
        want = value_type(schema.fields[c].type)
        for side in (stats.mins, stats.maxs):
            found = side[c]
            if found is not None and found.type != want:
                return None, (f"expected bounds of column {c} ({schema.fields[c].name!r}) "
                              f"of type {want}, found {found.type}")
    return _without_uncounted_nans(stats, schema), None


def _without_uncounted_nans(stats: FileStatistics, schema: t.Schema) -> FileStatistics:
    """``stats`` with the NaN counts of 0 of dictionary columns of floats taken as not
    stated: quiver wrote 0 there (until 2026-11-29) without counting the NaNs a column's slots
    select, and a filter that trusts such a 0 (``in [nan]``, ``!=``, Spark's order, where
    NaN is the largest value) loses rows.  A count above 0 was counted."""
    dictionary_floats = [
        c for c, f in enumerate(schema.fields)
        if isinstance(t.storage_of(f.type), t.DictionaryType) and is_float(f.type)]
    if not dictionary_floats:
        return stats
    known = list(stats.nan_known)
    for c in dictionary_floats:
        known[c] = known[c] & (stats.nan_counts[c] > 0)
    return dataclasses.replace(stats, nan_known=tuple(known))


def _read_stream(stream: bytes) -> tuple[t.Schema, Iterator[tuple[Any, Any]]]:
    """A whole statistics stream's schema, and its batches with their custom metadata."""
    decoder = StreamDecoder()
    decoder.feed(stream)
    decoder.feed_eof()
    schema = decoder.next_schema()

    def batches() -> Iterator[tuple[Any, Any]]:
        while (batch := decoder.next_batch()) is not END:
            yield batch, decoder.custom_metadata

    return schema, batches()


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


def _numbers(buffer: Any, dtype: str, start: int, count: int) -> np.ndarray:
    """``count`` numbers of ``dtype`` from ``start`` in a buffer (the arrays' checked
    :func:`typed_view`), or this module's FormatError for a buffer too short or absent."""
    try:
        return typed_view(buffer if buffer is not None else _NO_BYTES, dtype, start, count,
                          "statistics")
    except ArrowInvalid as exc:
        raise _format_error(str(exc).removeprefix("expected ")) from None


_NO_BYTES = np.zeros(0, np.uint8)


def _from_columns(column: Array, stats_map: Array, indices: np.ndarray, rows: int,
                  ncols: int | None = None, names: list[str] | None = None,
                  checked: bool = False) -> FileStatistics:
    """:class:`FileStatistics` from the ``column`` and ``statistics`` columns of all
    statistics batches concatenated (``rows`` rows per batch), vectorized.  ``ncols``:
    the file's columns, when the rows are those of some only (the others then have no
    bounds and no nulls counted).  ``names``: the keys' dictionary's values, when known
    (the bulk reading keeps them with the dictionary).  ``checked``: the map offsets,
    union type codes and union offsets are known to be in range (the bulk reading
    checked them message by message)."""

    E = _format_error
    nb = len(column) // rows
    ncols = rows - 1 if ncols is None else ncols
    slots = ncols + 1  # the batch's row, then one per column
    if not isinstance(stats_map.type, t.MapType) or column.type != t.int32():
        raise E(f"statistics columns int32 and map, found {column.type} and {stats_map.type}")
    map_offsets = _numbers(stats_map.buffers[1], "<i4", stats_map.offset, len(stats_map) + 1)
    entries = stats_map.children[0]
    start, stop = int(map_offsets[0]), int(map_offsets[-1])
    per_row = np.diff(map_offsets.astype(np.int64))
    if not checked and ((per_row < 0).any() or start < 0 or stop > len(entries)):
        raise E(f"statistics map offsets that do not decrease, inside its {len(entries)} "
                "entries")
    key_array = entries.children[0].slice(start, stop - start)
    union = entries.children[1].slice(start, stop - start)
    if not isinstance(union.type, t.UnionType) or union.type.mode != "dense" or not isinstance(
            key_array.type, t.DictionaryType) or key_array.dictionary is None or (
            key_array.type.index_type != t.int32()
            or key_array.dictionary.type != t.string()):
        raise E(f"statistics keys as a dictionary<int32, utf8> and values as a dense "
                f"union, found {key_array.type} and {union.type}")
    if names is None:
        names = key_array.dictionary.to_pylist()
    key_index = _numbers(key_array.buffers[1], "<i4", key_array.offset, len(key_array))
    codes = union.buffers[0].view(np.int8)[union.offset : union.offset + len(union)]
    offs = _numbers(union.buffers[1], "<i4", union.offset, len(union))
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
        if not len(child):
            continue
        try:
            child.validate(full=True)
        except ArrowError as exc:
            raise E(f"valid values in the statistics union's child {k} ({child.type}), "
                    f"found: {exc}") from None
    # each entry's key as one of ours (7 kinds), len(KEY_INDEX) for keys quiver does not know
    nkeys = len(KEY_INDEX)
    kind = np.array([KEY_INDEX.get(n, nkeys) for n in names], np.int64)[key_index]
    counts_child = children[0]
    count_values = _numbers(counts_child.buffers[1], "<i8", counts_child.offset,
                            len(counts_child))
    row_of_entry = np.repeat(np.arange(len(stats_map)), per_row)
    batch_of_entry = row_of_entry // rows
    ids = _numbers(column.buffers[1], "<i4", column.offset, len(column))
    id_valid = column.is_valid_mask()
    column_of_row = ids.astype(np.int64) if id_valid is None else np.where(id_valid, ids, -1)
    if ((column_of_row < -1) | (column_of_row >= ncols)).any():
        raise E(f"statistics column ids below {ncols}")
    slot = column_of_row[row_of_entry] + 1  # 0: the batch's row, c + 1: column c

    # counts (code 0) by kind, slot and batch; later entries overwrite earlier ones, as
    # the message-by-message reading did
    # (indices into the flattened arrays: numpy assigns through one index array several
    # times faster than through three)
    counts = np.zeros(nkeys * slots * nb, np.int64)
    hit = (codes == 0) & (kind < nkeys)
    where_count = (kind[hit] * slots + slot[hit]) * nb + batch_of_entry[hit]
    counts[where_count] = count_values[offs[hit]]
    counts = counts.reshape(nkeys, slots, nb)
    stated = np.zeros(nkeys * slots * nb, bool)  # which counts the value states (0 if not)
    stated[where_count] = True
    stated = stated.reshape(nkeys, slots, nb)
    row_counts = counts[ROW_CODE, 0]
    null_counts = counts[NULL_CODE, 1:]
    nan_counts = counts[NAN_CODE, 1:]
    # bounds by side (0: min, 1: max), slot and batch: where in which child, how exact
    side_of_kind = np.full(nkeys + 1, -1, np.int64)  # the last: unknown keys (-1)
    exact_of_kind = np.zeros(nkeys + 1, bool)
    for side, (exact_code, approx_code) in enumerate(BOUND_CODES):
        side_of_kind[[exact_code, approx_code]] = side
        exact_of_kind[exact_code] = True
    side = side_of_kind[kind]
    hit = (side >= 0) & (slot > 0)
    pair = side[hit] * ncols + slot[hit] - 1  # (side, column), flattened
    where = pair * nb + batch_of_entry[hit]  # (side, column, batch), flattened
    present = np.zeros(2 * ncols * nb, bool)
    present[where] = True
    index = np.zeros(2 * ncols * nb, np.int64)
    index[where] = offs[hit]
    exact = np.ones(2 * ncols * nb, bool)
    exact[where] = exact_of_kind[kind[hit]]
    code_of = np.full(2 * ncols, -1, np.int64)  # each (side, column)'s union child
    hit_codes = codes[hit]
    code_of[pair] = hit_codes
    mixed = hit_codes != code_of[pair]
    if mixed.any():
        raise E(f"column {int(pair[np.argmax(mixed)] % ncols)}'s bounds in one union child")
    present, index, exact = (a.reshape(2, ncols, nb) for a in (present, index, exact))
    code_of = code_of.reshape(2, ncols)
    known = code_of >= 0  # (side, column): some batch has this bound
    has = present[0] & present[1] & known[0][:, None] & known[1][:, None]
    mins = _LazyBounds(children, code_of[0], index[0], present[0])
    maxs = _LazyBounds(children, code_of[1], index[1], present[1])
    return FileStatistics(row_counts, tuple(null_counts), tuple(nan_counts), mins, maxs,
                          tuple(exact[0]), tuple(exact[1]), tuple(has),
                          np.asarray(indices, np.int64), stated[ROW_CODE, 0],
                          tuple(stated[NULL_CODE, 1:]), tuple(stated[NAN_CODE, 1:]))


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
        return _item(self, c, "column")

    def _get(self, c: int) -> Array | None:
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


def _bulk_columns(stream: bytes, columns: Collection[int] | None = None
                  ) -> tuple[Array, Array, np.ndarray, int, int, list[str]] | None:
    """The ``column`` and ``statistics`` columns of every statistics batch of ``stream``
    concatenated, their ``quiver:batch`` indices and rows per batch, read as a matrix of
    messages (see :class:`Template`); None when the stream is not laid out so (another
    writer, a damaged value), for the message-by-message path to read or refuse.  With
    ``columns``, only the rows of those columns (and each batch's own row) are taken;
    the last number is the file's column count, then come the statistics keys' names."""

    n = len(stream)
    if n % 8 or n < 16:
        return None
    meta, schema_end, _ = read_frame(stream, 0)
    plan = _stream_plan(stream, bytes(meta), schema_end)
    if plan is None:
        return None
    union_type, map_type, key_type, child_types, child_specs = plan[:5]
    groups: dict[int, TemplateGroup] = plan[5]
    empties: list[Array] = plan[6]  # each union child's empty array
    # the record batch messages: wherever a word holds a template's prefix (continuation
    # and metadata size), a message may start; the chain of body lengths from the first
    # one after the head must run through such words to the end-of-stream marker
    words = np.frombuffer(stream, "<i8")
    prefixes = {struct.unpack("<q", struct.pack("<Ii", 0xFFFFFFFF, size - 8))[0]: g.first
                for size, g in groups.items()}
    prefix_words = np.array(list(prefixes), np.int64)
    is_prefix = words == prefix_words[0]
    for other in prefix_words[1:]:  # (a few message sizes: faster than np.isin)
        is_prefix |= words == other
    candidates = np.flatnonzero(is_prefix)
    candidates = candidates[np.searchsorted(candidates, -(-schema_end // 8)):]  # (after)
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
    nexts = candidates + (size_of + body_of) // 8
    if usable.all() and (nexts[:-1] == candidates[1:]).all():
        # every candidate is a message and each one's end the next one's start (what
        # quiver writes): the chain is the candidates
        chain, sizes, at = candidates, size_of, int(nexts[-1])
    else:  # follow it from the first, past words that only look like a prefix
        following = dict(zip(candidates[usable].tolist(), nexts[usable].tolist()))
        at = int(candidates[0])
        chain = []
        step = following.get
        after = step(at)
        while after is not None:
            chain.append(at)
            at, after = after, step(after)
        chain = np.asarray(chain, np.int64)
        sizes = size_of[np.searchsorted(candidates, chain)]
    if at != len(words) - 1 or int(words[at]) != struct.unpack("<q", EOS)[0] or not len(
            chain):
        return None
    starts_a = chain * 8
    m = len(starts_a)
    size = int(sizes[0])
    if (sizes != size).any():
        return None
    matrix = windows(words, starts_a // 8, size // 8)
    found = groups[size].decode(matrix)
    if found is None:
        return None
    body_lengths, lengths, nodes, buffers, indices = found
    rows = int(lengths[0])
    ncols = rows - 1
    keys_found = _key_dictionary(stream, int(starts_a[0]))
    if keys_found is None or rows < 1:
        return None
    key_dictionary, key_names = keys_found
    if (lengths != rows).any() or (nodes < 0).any() or (
            buffers < 0).any():
        return None
    # (offset + length may overflow: each is compared with the body on its own)
    if ((buffers[:, :, 1] > body_lengths[:, None])
            | (buffers[:, :, 0] > body_lengths[:, None] - buffers[:, :, 1])).any():
        return None
    e = nodes[:, 2, 0]
    if ((nodes[:, 1, 0] != rows) | (nodes[:, 0, 0] != rows) | (nodes[:, 3, 0] != e)
            | (nodes[:, 4, 0] != e)).any() or (nodes[:, 1:, 1] != 0).any():
        return None
    body = np.frombuffer(stream, np.uint8)
    body_starts = starts_a + size
    spans = buffers[:, :, 1]

    def take_bytes(j: int, count: np.ndarray | int, width: int = 1) -> np.ndarray | None:
        """Buffer ``j``'s first ``count`` bytes of every message (one count for all, or
        one per message), concatenated (gathered ``width`` bytes at a time where the
        buffers allow)."""
        if (spans[:, j] < count).any():
            return None
        at = body_starts + buffers[:, j, 0]
        whole = count % width == 0 if isinstance(count, int) else not (count % width).any()
        if width > 1 and whole and not (at % width).any():
            view = np.frombuffer(stream, f"V{width}", len(stream) // width)
            if isinstance(count, int):
                return windows(view, at // width, count // width).view(np.uint8).reshape(-1)
            return view[ranges(at // width, count // width)].view(np.uint8)
        if isinstance(count, int):
            return windows(body, at, count).reshape(-1)
        return body[ranges(at, count)]

    # column: int32 ids with a validity bitmap
    ids = take_bytes(1, rows * 4, 4)
    if ids is None:
        return None
    column_nulls = nodes[:, 0, 1]
    validity = None
    if column_nulls.any():
        nbytes = (rows + 7) // 8
        with_nulls = column_nulls > 0
        if with_nulls.all():  # (as quiver writes them: each batch's own row is null)
            raw = take_bytes(0, nbytes)
        else:
            raw = take_bytes(0, np.where(with_nulls, nbytes, 0))
        if raw is None:
            return None
        found = np.unpackbits(raw.reshape(-1, nbytes), axis=1, count=rows,
                              bitorder="little").view(bool)
        if with_nulls.all():
            bits = found
        else:
            bits = np.ones((m, rows), bool)
            bits[with_nulls] = found
        if (rows - np.count_nonzero(bits, axis=1) != column_nulls).any():
            return None
        validity = np.packbits(bits.reshape(-1), bitorder="little")
    keep_row = None  # (m, rows): the rows taken, when not all
    if columns is not None:
        id_matrix = ids.view("<i4").reshape(m, rows)
        keep_row = np.zeros((m, rows), bool)
        for c in columns:  # (a filter's few columns: faster than np.isin)
            keep_row |= id_matrix == c
        if validity is not None:
            keep_row |= ~bits  # each batch's own row
        taken = keep_row.sum(axis=1)
        if (taken != taken[0]).any() or not taken[0]:
            keep_row = None  # (not as quiver writes them: take every row)
    if keep_row is None:
        column = make_array(t.int32(), m * rows, [validity, ids], (), int(column_nulls.sum()))
    else:
        kept_valid = None if validity is None else bits[keep_row]
        column = make_array(t.int32(), int(taken.sum()), [
            None if kept_valid is None else np.packbits(kept_valid, bitorder="little"),
            np.ascontiguousarray(id_matrix[keep_row]).view(np.uint8)],
            (), 0 if kept_valid is None else int(np.count_nonzero(~kept_valid)))
    # the map's offsets, each message's from 0 to its entry count
    own = take_bytes(3, (rows + 1) * 4, 4)
    if own is None:
        return None
    own = own.view("<i4").reshape(m, rows + 1).astype(np.int64)
    if (own[:, 0] != 0).any() or (own[:, -1] != e).any() or (np.diff(own, axis=1) < 0).any():
        return None
    if keep_row is None:
        entry_starts = exclusive_cumsum(e)
        map_offsets = np.concatenate([(own[:, :-1] + entry_starts[:, None]).reshape(-1),
                                      [int(e.sum())]]).astype(np.int32)
        keys = take_bytes(6, e * 4, 4)
        codes = take_bytes(7, e)
        offsets = take_bytes(8, e * 4, 4)
        message_of_entry = np.repeat(np.arange(m), e)
    else:  # the taken rows' entries only
        counts = (own[:, 1:] - own[:, :-1])[keep_row]
        message_of_entry = np.repeat(np.repeat(np.arange(m), taken), counts)
        within = ranges(own[:, :-1][keep_row], counts)  # each entry's index in its message
        map_offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)

        entry_body = body_starts[message_of_entry]

        def take_entries(j: int, width: int) -> np.ndarray | None:
            """Buffer ``j``'s ``width`` bytes of each taken entry, concatenated."""
            if (spans[:, j] < e * width).any():
                return None
            at = buffers[:, j, 0][message_of_entry]
            at += entry_body
            at += within * width if width > 1 else within
            if width == 1:
                return body[at]
            if not (at % width).any():
                view = np.frombuffer(stream, f"V{width}", len(stream) // width)
                return view[at // width].view(np.uint8)
            return body[(at[:, None] + np.arange(width)).reshape(-1)]

        keys, codes, offsets = take_entries(6, 4), take_entries(7, 1), take_entries(8, 4)
        rows = int(taken[0])
    if keys is None or codes is None or offsets is None:
        return None
    codes = codes.view(np.int8)
    offsets = offsets.view("<i4").astype(np.int64)
    child_counts = nodes[:, 5:, 0]
    if len(codes) and (codes.min() < 0 or codes.max() >= len(child_types)):
        return None
    code_index = codes.astype(np.int64)
    if ((offsets < 0) | (offsets >= child_counts[message_of_entry, code_index])).any():
        return None  # (the message-by-message path says which)
    child_starts = exclusive_cumsum(child_counts)
    offsets = offsets + child_starts[message_of_entry, code_index]
    children = []
    j = 9
    # (with some columns only, the union children none of their entries use are left
    # empty, unread)
    used = None if keep_row is None else np.bincount(
        codes.view(np.uint8), minlength=len(child_types)) > 0
    for k, (vt, specs) in enumerate(zip(child_types, child_specs)):
        if used is not None and not used[k]:
            children.append(empties[k])
            j += len(specs)
            continue
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
                parts.append(np.packbits(bits[ranges(exclusive_cumsum(nbytes) * 8, counts)],
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
                group_starts = exclusive_cumsum(g + 1)
                within = ranges(group_starts + 1, g)
                if (values[within] < values[within - 1]).any() or (
                        values[group_starts] < 0).any():
                    return None
                firsts = np.zeros(m, np.int64)
                lasts = np.zeros(m, np.int64)
                firsts[nonempty] = values[group_starts]
                lasts[nonempty] = values[group_starts + g]
                data_lengths = lasts - firsts
                shift = firsts - exclusive_cumsum(data_lengths)
                rebased = values[within] - np.repeat(shift[nonempty], g)
                out = np.concatenate([np.zeros(1, np.int64), rebased]).astype(f"<i{w}")
                parts.append(out.view(np.uint8))
            else:  # data, spanning each message's offsets
                if (spans[:, j] < lasts).any():
                    return None
                parts.append(body[ranges(body_starts + buffers[:, j, 0] + firsts,
                                          data_lengths)])
            j += 1
        children.append(make_array(vt, total, parts, (), 0))
    union = make_array(union_type, len(codes), [codes.view(np.uint8),
                                                offsets.astype(np.int32).view(np.uint8)],
                       children, 0)
    key_array = make_array(key_type, len(keys), [None, keys], (), 0, 0, key_dictionary)
    entries = make_array(map_type.entries_field.type, len(keys), [None], [key_array, union], 0)
    stats_map = make_array(map_type, m * rows, [None, map_offsets.view(np.uint8)], [entries], 0)
    return column, stats_map, indices, rows, ncols, key_names


def _empty_child(vt: t.DataType, specs: Sequence[Any]) -> Array:
    """An empty array of a union child's type ``vt`` (buffers as its ``specs`` say)."""
    parts = [None if spec.kind == "validity"
             else np.zeros(spec.byte_width if spec.kind == "offsets" else 0, np.uint8)
             for spec in specs]
    return make_array(vt, 0, parts, (), 0)


_PLANS: dict[bytes, tuple] = {}



def _stream_plan(stream: bytes, schema_meta: bytes, schema_end: int) -> tuple | None:
    """What reading a statistics stream in bulk needs from its schema message (cached by
    those bytes: every file of one schema has the same): the union, map and key types,
    the union children's types and layouts, the templates of its record batch messages
    by size, and an empty array of each union child; None when the stream is not one
    quiver writes (the message-by-message path reads it)."""
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
            templates = [template_for(md.V5, num_nodes, num_buffers, d) for d in range(1, 10)]
            if (all(s.kind in kinds for specs in child_specs for s in specs)
                    and all(tm is not None for tm in templates)
                    and message.header.nodes.shape[0] == num_nodes
                    and message.header.buffers.shape[0] == num_buffers):
                by_size: dict[int, list[Template]] = {}
                for tm in templates:
                    by_size.setdefault(tm.size, []).append(tm)  # type: ignore[union-attr]
                try:
                    groups = {size: TemplateGroup(g) for size, g in by_size.items()}
                except TemplateError:
                    groups = None
                if groups is not None:
                    empties = [_empty_child(vt, specs)
                               for vt, specs in zip(child_types, child_specs)]
                    found = (union_type, map_type, key_type, child_types, child_specs,
                             groups, empties)
    if found is not None and len(_PLANS) < 64:  # (a refusal may be this stream's damage)
        _PLANS[schema_meta] = found
    return found


_DICTIONARIES: dict[bytes, tuple[Array, list[str]] | None] = {}


def _key_dictionary(stream: bytes, first: int) -> tuple[Array, list[str]] | None:
    """The statistics keys' dictionary of a stream whose first record batch message
    starts at ``first`` and its values (cached by the bytes before it: the schema and
    dictionary messages), or None."""
    head_bytes = stream[:first]
    if head_bytes in _DICTIONARIES:
        return _DICTIONARIES[head_bytes]
    _, body_start, _ = read_frame(stream, first)
    message = md.decode_message(read_frame(stream, first)[0])
    schema, read = _read_stream(stream[: body_start + message.body_length] + EOS)
    batch0 = next(iter(read), (None, None))[0]
    found = None
    if batch0 is not None and schema.names == ["column", "statistics"]:
        dictionary = batch0.column(1).children[0].children[0].dictionary
        if dictionary is not None and dictionary.type == t.string():
            found = dictionary, dictionary.to_pylist()
    if len(_DICTIONARIES) < 64:
        _DICTIONARIES[head_bytes] = found
    return found
