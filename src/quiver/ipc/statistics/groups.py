"""Statistics of small batches, computed a group of batches at a time.

Computing one column of one batch costs a few dozen numpy calls whatever its length: ~4 us
for 100 integers, ~40 us for 100 strings, more than writing the batch.  A writer of small
batches therefore keeps, per batch and column, a copy of what its statistics need (the
values; of a string, its first :data:`KEPT_BYTES` bytes), checked as it is taken, so that
what can be wrong with a column is found before the batch is written and a caller may
reuse its buffers once ``write_batch`` returns.  The statistics of about
:data:`GROUP_ROWS` rows (or :data:`GROUP_BYTES` bytes) of batches are then computed at
once: the values concatenated, each batch a segment, reduced segment by segment
(``ufunc.reduceat``).  The results are those of :func:`~.compute.column_raw` on each
batch (the tests compare them, bit for bit).  Columns of other types, and batches of at
least :data:`ALONE_ROWS` rows, are computed one by one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import repeat
from typing import Any

import numpy as np

from ... import types as t
from ...array import make_array
from ...array.base import Array
from ...array.data import ranges, typed_view
from ...errors import ArrowInvalid
from ...layout import storage_numpy_dtype
from .compute import Raw, Words, finish_binary, signed_zero_bounds, value_offsets
from .model import PREFIX_BYTES

#: rows of small batches whose statistics are computed together (their values then stay
#: in the CPU's cache, as :data:`~.compute.BINARY_CHUNK`)
GROUP_ROWS = 32768
#: bytes kept for a group at most (a wide schema reaches it before GROUP_ROWS)
GROUP_BYTES = 8 << 20
#: a batch of at least this many rows is computed alone, as it comes
ALONE_ROWS = 8192
#: bytes of a string or binary value kept: what comparing PREFIX_BYTES bytes eight at a
#: time reads, and more than the PREFIX_BYTES + 1 a cut bound is made from
KEPT_BYTES = PREFIX_BYTES + 8

# what is kept of one column of one batch: (null count, rows kept, validity of those rows
# or None, the copied values; a batch all nulls keeps no rows)
Kept = tuple[int, int, "np.ndarray | None", Any]


class ColumnGroup:
    """How one column's batches are kept (``keep``: a copy of what the statistics need)
    and computed (``compute``: each batch's :data:`~.compute.Raw`, in order)."""

    def __init__(self, keep: Callable[[Array], Any],
                 compute: Callable[[list[Kept]], list[Raw]]) -> None:
        self.keep, self.compute = keep, compute


def group_for(dtype: t.DataType) -> ColumnGroup | None:
    """How a column of ``dtype`` is computed in groups, or None: one batch at a time."""
    if isinstance(dtype, (t.IntegerType, t.FloatingPointType, t.DateType, t.TimeType,
                          t.TimestampType, t.DurationType)):
        np_dtype = storage_numpy_dtype(dtype)

        def values(arr: Array) -> np.ndarray:
            buf = arr.buffers[1]
            if buf is None:  # (refused)
                return arr._fixed_values_view(np_dtype)
            return typed_view(buf, np_dtype, arr.offset, len(arr), "values").copy()

        return ColumnGroup(values, _fixed_group)
    if isinstance(dtype, t.BoolType):
        return ColumnGroup(_bitmap_bytes, _bool_group)
    if isinstance(dtype, (t.StringType, t.BinaryType)):
        is_text = isinstance(dtype, t.StringType)
        return ColumnGroup(_binary_prefixes, lambda kept: _binary_group(kept, is_text))
    return None


def keep_column(group: ColumnGroup, arr: Array) -> tuple[Kept, int]:
    """What a group keeps of one batch's column, and its size in bytes.  A column that
    is all nulls, as its null count says, keeps no rows (as batch by batch, where such a
    column is not looked at); otherwise the rows valid are those its bitmap says."""
    nulls, n = arr.null_count, len(arr)
    if nulls >= n:
        return (nulls, 0, None, None), 0
    valid = arr.is_valid_mask() if nulls else None
    kept = group.keep(arr)
    size = sum(a.nbytes for a in kept) if isinstance(kept, tuple) else kept.nbytes
    return (nulls, n, valid, kept), size + (n if nulls else 0)


class _Segments:
    """A group's batches as segments of their concatenated kept rows: each one's first
    row, the validity of all rows (None: all valid), which batches have a valid value
    (``bounded``, as the validity says) and those batches' first rows (``at``)."""

    def __init__(self, kept: list[Kept]) -> None:
        n = len(kept)
        self.nulls = [k[0] for k in kept]
        self.lengths = lengths = np.fromiter((k[1] for k in kept), np.int64, n)
        self.starts = np.zeros(n, np.int64)
        np.cumsum(lengths[:-1], out=self.starts[1:])
        self.total = int(lengths.sum())
        self.valid = None
        if any(k[2] is not None for k in kept):
            self.valid = np.concatenate([np.ones(k[1], bool) if k[2] is None else k[2]
                                         for k in kept])
        self.bounded = lengths > 0
        if self.valid is not None and self.total:
            some = np.zeros(n, np.int64)
            some[self.bounded] = np.add.reduceat(self.valid, self.starts[self.bounded])
            self.bounded = some > 0
        self.at = self.starts[self.bounded]

    def raws(self, found: Iterable[tuple[Any, ...]]) -> list[Raw]:
        """Each batch's :data:`Raw` from (NaN count, min, max, min exact, max exact),
        given for the bounded batches only, in order; a bound of None (every valid value
        NaN, or a maximum nothing bounds) means no bounds, as batch by batch."""
        it = iter(found)
        out: list[Raw] = []
        for nulls, bounded in zip(self.nulls, self.bounded.tolist()):
            f = next(it) if bounded else _NOTHING
            if f[1] is None or f[2] is None:
                out.append((nulls, f[0], None, None, True, True))
            else:
                out.append((nulls, *f))
        return out


_NOTHING = (0, None, None, True, True)


def _exact(nans: Iterable[int], lows: Iterable[Any], highs: Iterable[Any]
           ) -> Iterable[tuple[Any, ...]]:
    """Exact bounds for :meth:`_Segments.raws`."""
    return zip(nans, lows, highs, repeat(True), repeat(True))


def _fixed_group(kept: list[Kept]) -> list[Raw]:
    """Integers, floats and temporal values: min and max of the valid values (NaN left
    out and counted), per batch."""
    seg = _Segments(kept)
    at = seg.at
    if not len(at):
        return seg.raws(())
    values = np.concatenate([k[3] for k in kept if k[1]])
    valid = seg.valid
    nans: Any = [0] * len(at)
    is_float = values.dtype.kind == "f"
    if is_float:
        nan = np.isnan(values)
        if valid is not None:
            nan &= valid
        if nan.any():
            nans = np.add.reduceat(nan, at).tolist()
            valid = ~nan if valid is None else valid & ~nan
        low_fill, high_fill = np.inf, -np.inf
    else:
        info = np.iinfo(values.dtype)
        low_fill, high_fill = info.max, info.min
    if valid is None:
        lows = np.minimum.reduceat(values, at).tolist()
        highs = np.maximum.reduceat(values, at).tolist()
    else:  # invalid values (nulls, NaN) replaced by what loses
        usable = np.add.reduceat(valid, at) > 0
        lows = np.minimum.reduceat(np.where(valid, values, low_fill).astype(
            values.dtype, copy=False), at).tolist()
        highs = np.maximum.reduceat(np.where(valid, values, high_fill).astype(
            values.dtype, copy=False), at).tolist()
        if not usable.all():  # batches whose valid values are all NaN: no bounds
            for j in np.flatnonzero(~usable).tolist():
                lows[j] = highs[j] = None
    if is_float:  # (zeros as batch by batch: -0.0 below, +0.0 above)
        pairs = [(None, None) if low is None else signed_zero_bounds(low, high)
                 for low, high in zip(lows, highs)]
        lows, highs = [p[0] for p in pairs], [p[1] for p in pairs]
    return seg.raws(_exact(nans, lows, highs))


def _bitmap_bytes(arr: Array) -> tuple[np.ndarray, np.ndarray]:
    """A copy of the bytes of a boolean column's values bitmap that hold its bits, and
    the bit where its first value is (as a one-element array)."""
    n, offset, buf = len(arr), arr.offset, arr.buffers[1]
    stop = (offset + n + 7) // 8
    if buf is None or len(buf) < stop:
        raise ArrowInvalid(f"expected a values bitmap of at least {stop} bytes, found "
                           f"{0 if buf is None else len(buf)}")
    return buf[offset // 8 : stop].copy(), np.array([offset % 8])


def _bool_group(kept: list[Kept]) -> list[Raw]:
    """Booleans: min is "all true", max "any true", of the valid values."""
    seg = _Segments(kept)
    at = seg.at
    if not len(at):
        return seg.raws(())
    # every batch's bytes unpacked at once; batch i's bits start at its bytes' first bit
    # plus its skip
    rows = [k for k in kept if k[1]]
    sizes = np.fromiter((len(k[3][0]) for k in rows), np.int64, len(rows))
    skips = np.fromiter((int(k[3][1][0]) for k in rows), np.int64, len(rows))
    lengths = seg.lengths[seg.lengths > 0]
    first_bits = np.zeros(len(rows), np.int64)
    np.cumsum(sizes[:-1] * 8, out=first_bits[1:])
    every_bit = np.unpackbits(np.concatenate([k[3][0] for k in rows]), bitorder="little")
    bits = every_bit[np.repeat(first_bits + skips - seg.starts[seg.lengths > 0], lengths)
                     + np.arange(seg.total)].view(bool)
    valid = seg.valid
    every = np.logical_and.reduceat(bits if valid is None else bits | ~valid, at)
    some = np.logical_or.reduceat(bits if valid is None else bits & valid, at)
    return seg.raws(_exact(repeat(0), every.tolist(), some.tolist()))


def _binary_prefixes(arr: Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A string or binary column's value lengths, the bytes kept of each value (at most
    :data:`KEPT_BYTES`) and a copy of those bytes, end to end; the offsets checked so
    that every value lies within the data."""
    offsets, lengths, data, _ = value_offsets(arr)
    first, last = int(offsets[0]), int(offsets[-1])
    if not len(lengths) or int(lengths.max()) <= KEPT_BYTES:  # every value whole
        return lengths, lengths, data[first:last].copy()
    kept = np.minimum(lengths, KEPT_BYTES)
    return lengths, kept, data[ranges(offsets[:-1], kept)]


def _binary_group(kept: list[Kept], is_text: bool) -> list[Raw]:
    """Strings and binaries: the smallest and largest value per batch, compared over at
    most PREFIX_BYTES bytes as :func:`~.compute._extreme_bytes` does, batch by batch as
    segments of one array of all their kept bytes."""
    seg = _Segments(kept)
    if not len(seg.at):
        return seg.raws(())
    rows_kept = [k[3] for k in kept if k[1]]
    full_lengths = np.concatenate([r[0] for r in rows_kept])
    kept_lengths = np.concatenate([r[1] for r in rows_kept])
    data = np.concatenate([r[2] for r in rows_kept])
    offsets = np.zeros(seg.total + 1, np.int64)
    np.cumsum(kept_lengths, out=offsets[1:])
    whole = make_array(t.large_binary(), seg.total, [None, offsets.view(np.uint8), data],
                       (), 0)
    # (the rounds compare at most PREFIX_BYTES bytes and KEPT_BYTES are kept: a value
    # cut to KEPT_BYTES compares and ends as the whole value would)
    words = Words(whole, None)  # (rows: every row, valid or not)
    rows = np.arange(seg.total) if seg.valid is None else np.flatnonzero(seg.valid)
    owner = np.repeat(np.arange(len(kept)), seg.lengths)[rows]
    first = words.at(rows, 0)
    low_rows = _segment_extremes(words, rows, owner, False, first)
    high_rows = _segment_extremes(words, rows, owner, True, first)
    # the bounds' bytes, sliced from one bytes copy of the kept data (numpy's slices and
    # bytes() cost ~1 us a value)
    raw = data.tobytes()

    def value(row: int, n: int) -> bytes:
        start = int(offsets[row])
        return raw[start : start + min(int(kept_lengths[row]), n)]

    long_low = (full_lengths[low_rows] > PREFIX_BYTES).tolist()
    long_high = (full_lengths[high_rows] > PREFIX_BYTES).tolist()
    return seg.raws((0, *finish_binary(value, *rows_and_cuts, is_text)) for rows_and_cuts
                    in zip(low_rows.tolist(), high_rows.tolist(), long_low, long_high))


def _starts_of(seg: np.ndarray) -> np.ndarray:
    """Where each run of equal segment ids begins (ids ascending)."""
    return np.flatnonzero(np.concatenate([[True], seg[1:] != seg[:-1]]))


def _first_least(key: np.ndarray, seg: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Per segment (beginning at ``at``), the position of its first smallest ``key``."""
    counts = np.diff(np.append(at, len(key)))
    hit = np.flatnonzero(key == np.repeat(np.minimum.reduceat(key, at), counts))
    return hit[_starts_of(seg[hit])]


def _segment_extremes(words: Words, rows: np.ndarray, seg: np.ndarray, largest: bool,
                      first: np.ndarray) -> np.ndarray:
    """Per segment of ``rows`` (``seg``: ascending segment ids, one per row), the row
    whose value is smallest (largest), with the rules and tie-breaks of
    :func:`~.compute._extreme_bytes`; in segment order."""
    lengths = words.lengths
    reduce = np.maximum if largest else np.minimum
    picked = np.zeros(int(seg[-1]) + 1 if len(seg) else 0, np.int64)
    candidates, cseg = rows, seg
    for j in range(0, PREFIX_BYTES, 8):
        if not len(candidates):
            break
        found = first if j == 0 else words.at(candidates, j)
        at = _starts_of(cseg)
        best = reduce.reduceat(found, at)
        keep = found == np.repeat(best, np.diff(np.append(at, len(found))))
        candidates, cseg = candidates[keep], cseg[keep]
        at = _starts_of(cseg)
        counts = np.diff(np.append(at, len(cseg)))
        size = lengths[candidates]
        shorts = np.add.reduceat(size <= j + 8, at)
        # decided: one left, or all end here (the shortest is smallest, the longest
        # largest); for the minimum also when some end here (prefixes of the others)
        done = (counts == 1) | (shorts == counts) | (False if largest else shorts > 0)
        if done.any():
            picks = _first_least(-size if largest else size, cseg, at)[done]
            picked[cseg[picks]] = candidates[picks]
            stay = np.repeat(~done, counts)
            candidates, cseg = candidates[stay], cseg[stay]
    if len(candidates):  # equal over PREFIX_BYTES bytes: the longest, or the first
        at = _starts_of(cseg)
        picks = _first_least(-lengths[candidates], cseg, at) if largest else at
        picked[cseg[picks]] = candidates[picks]
    return picked[seg[_starts_of(seg)]] if len(seg) else picked
