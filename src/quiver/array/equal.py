"""Logical equality of arrays (Columnar spec, "Physical Memory Layout": what a slot means).

Two arrays are equal when their types are equal, their lengths are equal, the same slots are
null, and the valid slots hold equal values.  Offsets are honoured, and the bytes behind null
slots, padding and unused parts of buffers never matter.  The semantics follow pyarrow's
``Array.equals``: floats compare by value (``NaN != NaN``, ``-0.0 == 0.0``), dictionary
arrays compare their indices and their dictionaries, run-end encoded arrays compare their
decoded values, extension arrays their type and storage.

Theory of operation: one recursive function, ``_slots_equal(a, ia, b, ib)``, answers per
pair of logical slot indices whether ``a[ia[k]]`` equals ``b[ib[k]]``, as a numpy bool array.
An index set is either a numpy int64 array or a Python ``range`` (a run of consecutive
slots, the common case: the top level, struct children, list children of a run of lists);
runs are read with slices, never gathered.
Nested layouts turn their slot pairs into child slot pairs with the layout table's children
rule (the same index for struct and sparse union children, offset ranges for lists, ``i *
list_size`` ranges for fixed-size lists, the chosen child for unions, the covering run for
run-end encoding) and fold the child answers back per slot, so the whole comparison is a
handful of vectorized numpy operations per type node, never a loop over rows.

>>> import numpy as np
>>> from quiver import types as t
>>> from quiver.array import make_array
>>> data = np.array([1, 2, 3, 4], dtype="<i4").view(np.uint8)
>>> a = make_array(t.int32(), 2, [None, data], offset=2)
>>> b = make_array(t.int32(), 2, [None, data[8:].copy()])
>>> array_equals(a, b), array_equals(a, b.slice(1))
(True, False)
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import types as t
from ..buffers import unpack_bits
from ..errors import ArrowError, ArrowInvalid
from ..layout import Layout, layout_of, storage_numpy_dtype
from .data import ArrayData
from .validate import ragged_indices

if TYPE_CHECKING:  # annotations only: Array sits above this module
    from .base import Array

__all__ = ["array_equals"]


# floats compared by their stored bits for the comparison under way (array_equals'
# ``floats_by_bits``; read where the float values are compared, at any depth)
_FLOATS_BY_BITS: ContextVar[bool] = ContextVar("quiver_floats_by_bits", default=False)


def array_equals(a: Array, b: Array, *, floats_by_bits: bool = False) -> bool:
    """Whether ``a`` and ``b`` hold the same logical values (types, nulls and values).

    ``floats_by_bits``: floats compare by their stored bits, not by value (a NaN equals
    the same NaN, ``-0.0`` differs from ``0.0``): whether one array may stand for the other
    without changing a value, as a writer asks of a dictionary it would not write again.

    Arrays that break the spec badly enough that they cannot be read raise ArrowInvalid;
    run ``validate(full=True)`` to find out why.

    >>> import numpy as np
    >>> from quiver import types as t
    >>> from quiver.array import make_array
    >>> x = make_array(t.int8(), 2, [np.array([1], np.uint8), np.array([7, 9], np.uint8)])
    >>> y = make_array(t.int8(), 2, [np.array([1], np.uint8), np.array([7, 0], np.uint8)])
    >>> array_equals(x, y)  # slot 1 is null in both: its bytes do not matter
    True
    """
    if not isinstance(a, ArrayData) or not isinstance(b, ArrayData):
        return False
    if not a.type.equals(b.type) or len(a) != len(b):
        return False
    if a is b and (floats_by_bits or not has_floats(a.type)):
        return True
    index = range(len(a))
    token = _FLOATS_BY_BITS.set(floats_by_bits)
    try:
        return bool(_slots_equal(a, index, b, index).all())
    except ArrowError:
        raise
    except (IndexError, ValueError, TypeError, OverflowError, MemoryError, RecursionError) as exc:
        raise ArrowInvalid(
            f"expected arrays that can be compared, found malformed data ({exc}); "
            "run validate(full=True) for details"
        ) from None
    finally:
        _FLOATS_BY_BITS.reset(token)


def has_floats(dtype: t.DataType) -> bool:
    """NaN != NaN means an array with floats may differ from itself."""
    st = t.storage_of(dtype)
    if isinstance(st, t.FloatingPointType):
        return True
    if isinstance(st, t.DictionaryType):
        return has_floats(st.value_type)
    return any(has_floats(f.type) for f in st.fields)


Index = np.ndarray | range


def _malformed(message: str) -> ArrowInvalid:
    return ArrowInvalid(f"{message}; run validate(full=True) for details")


def _size(index: Index) -> int:
    return len(index)


def _shift(index: Index, by: int) -> Index:
    if isinstance(index, range):
        return range(index.start + by, index.stop + by)
    return index + by


def _as_array(index: Index) -> np.ndarray:
    if isinstance(index, range):
        return np.arange(index.start, index.stop, dtype=np.int64)
    return index


def _subset(index: Index, positions: np.ndarray) -> Index:
    """``index[positions]`` (positions increasing); a run stays a run when nothing is left out."""
    if positions.size == len(index):
        return index
    if isinstance(index, range):
        return positions.astype(np.int64) + index.start
    return index[positions]


def _take(values: np.ndarray, index: Index) -> np.ndarray:
    if isinstance(index, range):
        out = values[index.start : index.stop]
        if out.shape[0] != len(index):
            raise _malformed(
                f"expected values for slots {index.start}..{index.stop - 1}, found only "
                f"{values.shape[0]} values"
            )
        return out
    return values[index]


def _bits(buf: np.ndarray, index: Index) -> np.ndarray:
    if isinstance(index, range):
        if (index.stop + 7) // 8 > buf.size:
            raise _malformed(
                f"expected a bitmap of {(index.stop + 7) // 8} bytes, found {buf.size}"
            )
        return unpack_bits(buf, index.start, len(index))
    return ((buf[index >> 3] >> (index & 7).astype(np.uint8)) & 1).astype(bool)


def _valid(arr: Array, index: Index) -> np.ndarray:
    validity = arr.buffers[0] if arr.buffers else None
    if validity is None:
        return np.ones(_size(index), dtype=bool)
    return _bits(validity, _shift(index, arr.offset))


def _typed(buf: np.ndarray, dtype: str | np.dtype) -> np.ndarray:
    width = np.dtype(dtype).itemsize
    return buf[: (buf.size // width) * width].view(dtype)


def _fold(lengths: np.ndarray, element_equal: np.ndarray) -> np.ndarray:
    """Per-slot AND of the element answers, the slots owning consecutive ``lengths``."""
    ok = np.ones(lengths.size, dtype=bool)
    bad = np.flatnonzero(~element_equal)
    if bad.size:
        ok[np.searchsorted(np.cumsum(lengths), bad, side="right")] = False
    return ok


def _as_run(index: Index) -> Index:
    """``index`` as a range when it is one (consecutive increasing slots)."""
    if isinstance(index, range) or index.size < 2:
        return index
    first, last = int(index[0]), int(index[-1])
    if last - first != index.size - 1 or not bool((np.diff(index) == 1).all()):
        return index
    return range(first, last + 1)


def _slots_equal(a: Array, ia: Index, b: Array, ib: Index) -> np.ndarray:
    """Per pair ``k``: is logical slot ``ia[k]`` of ``a`` equal to slot ``ib[k]`` of ``b``."""
    storage = t.storage_of(a.type)
    ia, ib = _as_run(ia), _as_run(ib)
    n = _size(ia)
    if isinstance(storage, t.NullType) or n == 0:
        return np.ones(n, dtype=bool)
    lay = layout_of(storage)
    if not lay.has_validity:  # unions and run-end encoding: nulls live in the children
        return _values_equal(storage, lay, a, ia, b, ib)
    va, vb = _valid(a, ia), _valid(b, ib)
    result = va == vb
    both_valid = va & vb
    if isinstance(ia, range) and isinstance(ib, range) and not lay.variadic:
        # runs stay runs: compare every slot as slices, then let null slots pass (their
        # offsets and values are in bounds by the spec, only their contents are arbitrary)
        result &= _values_equal(storage, lay, a, ia, b, ib) | ~both_valid
        return result
    both = np.flatnonzero(both_valid)
    if both.size:
        result[both] = _values_equal(
            storage, lay, a, _subset(ia, both), b, _subset(ib, both)
        )
    return result


def _values_equal(
    storage: t.DataType, lay: Layout, a: Array, ia: Index, b: Array, ib: Index
) -> np.ndarray:
    """Equality of the values at slot pairs that are valid on both sides."""
    pa_, pb = _shift(ia, a.offset), _shift(ib, b.offset)  # positions in the buffers
    n = _size(ia)
    rule = lay.children
    kinds = tuple(spec.kind for spec in lay.buffers)
    if isinstance(storage, t.DictionaryType):
        if not array_equals(a.dictionary, b.dictionary, floats_by_bits=_FLOATS_BY_BITS.get()):
            return np.zeros(n, dtype=bool)
        return _fixed_equal(storage.index_type, lay.buffers[1].byte_width, a, pa_, b, pb)
    if kinds == ("validity", "values"):
        return _fixed_equal(storage, lay.buffers[1].byte_width, a, pa_, b, pb)
    if kinds == ("validity", "bits"):
        return _bits(a.buffers[1], pa_) == _bits(b.buffers[1], pb)
    if lay.variadic:
        return _views_equal(a, pa_, b, pb)
    if rule == "none":  # binary and string: offsets and data
        return _ranges_equal(a, pa_, b, pb, _offset_ranges, child=False)
    if rule == "same" and isinstance(storage, t.StructType):
        result = np.ones(n, dtype=bool)
        for ca, cb in zip(a.children, b.children):
            result &= _slots_equal(ca, pa_, cb, pb)
        return result
    if rule in ("offsets", "views"):
        ranges = _offset_ranges if rule == "offsets" else _view_ranges
        return _ranges_equal(a, pa_, b, pb, ranges, child=True)
    if rule == "fixed":
        size = storage.list_size  # type: ignore[attr-defined]
        if isinstance(pa_, range) and isinstance(pb, range):
            ca: Index = range(pa_.start * size, pa_.stop * size)
            cb: Index = range(pb.start * size, pb.stop * size)
            lengths = np.full(n, size, dtype=np.int64)
        else:
            lengths = np.full(n, size, dtype=np.int64)
            ca = ragged_indices(_as_array(pa_) * size, lengths)
            cb = ragged_indices(_as_array(pb) * size, lengths)
        return _fold(lengths, _slots_equal(a.children[0], ca, b.children[0], cb))
    if isinstance(storage, t.UnionType):
        return _union_equal(storage, rule == "dense", a, _as_array(pa_), b, _as_array(pb))
    if rule == "run_end":
        if isinstance(pa_, range) and isinstance(pb, range):
            return _run_ranges_equal(a, pa_, b, pb)
        ra, rb = _physical_runs(a, _as_array(pa_)), _physical_runs(b, _as_array(pb))
        # consecutive slots mostly share their pair of runs: compare each pair once
        if ra.size > 1:
            new = np.ones(ra.size, dtype=bool)
            new[1:] = (ra[1:] != ra[:-1]) | (rb[1:] != rb[:-1])
            heads = np.flatnonzero(new)
            pair_equal = _slots_equal(a.children[1], ra[heads], b.children[1], rb[heads])
            return pair_equal[np.cumsum(new) - 1]
        return _slots_equal(a.children[1], ra, b.children[1], rb)
    raise ArrowInvalid(f"expected a type quiver can compare, found {storage}")


def _fixed_equal(
    storage: t.DataType, width: int, a: Array, pa_: Index, b: Array, pb: Index
) -> np.ndarray:
    dtype = storage_numpy_dtype(storage)
    if dtype is not None and dtype.kind == "f" and _FLOATS_BY_BITS.get():
        dtype = np.dtype(f"<u{dtype.itemsize}")
    if dtype is None:
        if width == 0:
            return np.ones(_size(pa_), dtype=bool)
        dtype = {1: "<u1", 2: "<u2", 4: "<u4", 8: "<u8"}.get(width)
    if dtype is not None:
        return _take(_typed(a.buffers[1], dtype), pa_) == _take(_typed(b.buffers[1], dtype), pb)
    # decimals, intervals, fixed-size binary wider than 8 bytes: compare rows of bytes
    rows_a = a.buffers[1][: (a.buffers[1].size // width) * width].reshape(-1, width)
    rows_b = b.buffers[1][: (b.buffers[1].size // width) * width].reshape(-1, width)
    return (_take(rows_a, pa_) == _take(rows_b, pb)).all(axis=1)


def _offset_ranges(arr: Array, pos: Index) -> tuple[np.ndarray, np.ndarray]:
    width = layout_of(arr.type).buffers[1].byte_width
    offsets = _typed(arr.buffers[1], f"<i{width}")
    if isinstance(pos, range):
        bounds = _take(offsets, range(pos.start, pos.stop + 1)).astype(np.int64)
        return bounds[:-1], np.diff(bounds)
    starts = offsets[pos].astype(np.int64)
    return starts, offsets[pos + 1].astype(np.int64) - starts


def _view_ranges(arr: Array, pos: Index) -> tuple[np.ndarray, np.ndarray]:
    width = layout_of(arr.type).buffers[1].byte_width
    starts = _take(_typed(arr.buffers[1], f"<i{width}"), pos).astype(np.int64)
    return starts, _take(_typed(arr.buffers[2], f"<i{width}"), pos).astype(np.int64)


def _ranges_equal(
    a: Array, pa_: Index, b: Array, pb: Index, ranges: Any, *, child: bool
) -> np.ndarray:
    """Slots given by (start, length) ranges into the data bytes or into the child."""
    sa, la = ranges(a, pa_)
    sb, lb = ranges(b, pb)
    result = la == lb
    same = np.flatnonzero(result)
    if not same.size:
        return result
    lengths = la[same]
    if lengths.min() < 0:
        raise _malformed("expected non-negative value lengths, found decreasing offsets")
    contiguous = (
        ranges is _offset_ranges
        and same.size == la.size
        and isinstance(pa_, range)
        and isinstance(pb, range)
    )
    if contiguous:
        # a run of slots with monotonic offsets covers one contiguous range on each side
        total = int(lengths.sum())
        ea: Index = range(int(sa[0]), int(sa[0]) + total)
        eb: Index = range(int(sb[0]), int(sb[0]) + total)
    else:
        ea = ragged_indices(sa[same], lengths)
        eb = ragged_indices(sb[same], lengths)
    if child:
        element_equal = _slots_equal(a.children[0], ea, b.children[0], eb)
    else:
        element_equal = _take(a.buffers[2], ea) == _take(b.buffers[2], eb)
    result[same] = _fold(lengths, element_equal)
    return result


_WORDS = 8  # 8-byte words compared per long view before falling back to a byte gather


def _low_bits(bits: np.ndarray) -> np.ndarray:
    """uint64 masks of the ``bits`` lowest bits (0..64 each); little-endian: first bytes."""
    bits = bits.astype(np.uint64)
    partial = (np.uint64(1) << np.minimum(bits, np.uint64(63))) - np.uint64(1)
    return np.where(bits >= 64, np.uint64(0xFFFFFFFFFFFFFFFF), partial)


def _view_data(arr: Array) -> tuple[np.ndarray, np.ndarray]:
    """All variadic buffers as one array padded by 8 zero bytes, and each buffer's base."""
    data = [b for b in arr.buffers[2:] if b is not None]
    sizes = np.array([b.size for b in data], dtype=np.int64)
    flat = np.concatenate([*data, np.zeros(8, dtype=np.uint8)])
    return flat, np.cumsum(sizes) - sizes


def _views_equal(a: Array, pa_: Index, b: Array, pb: Index) -> np.ndarray:
    """Views compared without materializing them: length and prefix as one 8-byte word,
    inline bytes as a masked row, out-of-line bytes as 8-byte words read in place."""
    rows_a = _take(_typed(a.buffers[1], "V16"), pa_).view(np.uint8).reshape(-1, 16)
    rows_b = _take(_typed(b.buffers[1], "V16"), pb).view(np.uint8).reshape(-1, 16)
    words_a = rows_a.view("<u8")  # (k, 2): length + prefix, then inline tail / index+offset
    words_b = rows_b.view("<u8")
    lengths = rows_a[:, 0:4].copy().view("<i4").reshape(-1).astype(np.int64)
    # same length and same first (up to) 4 bytes; bytes past a short value are padding
    head_bits = (4 + np.clip(lengths, 0, 4)) * 8
    result = ((words_a[:, 0] ^ words_b[:, 0]) & _low_bits(head_bits)) == 0
    inline = np.flatnonzero(result & (lengths <= 12))
    if inline.size:
        # inline bytes 4..12 sit in the second word; bytes past the length are padding
        keep = np.clip(lengths[inline] - 4, 0, 8) * 8
        result[inline] = ((words_a[inline, 1] ^ words_b[inline, 1]) & _low_bits(keep)) == 0
    outline = np.flatnonzero(result & (lengths > 12))
    if not outline.size:
        return result
    flat_a, base_a = _view_data(a)
    flat_b, base_b = _view_data(b)
    loc_a = rows_a[outline, 8:16].copy().view("<i4").astype(np.int64)  # (m, 2): index, offset
    loc_b = rows_b[outline, 8:16].copy().view("<i4").astype(np.int64)
    pos_a = base_a[loc_a[:, 0]] + loc_a[:, 1] + 4  # the prefix is already compared
    pos_b = base_b[loc_b[:, 0]] + loc_b[:, 1] + 4
    rest = lengths[outline] - 4
    win_a = np.lib.stride_tricks.sliding_window_view(flat_a, 8)
    win_b = np.lib.stride_tricks.sliding_window_view(flat_b, 8)
    ok = np.ones(outline.size, dtype=bool)
    for j in range(_WORDS):  # bounded: at most _WORDS rounds, each over every long view
        live = np.flatnonzero(ok & (rest > 8 * j))
        if not live.size:
            break
        wa = win_a[pos_a[live] + 8 * j].copy().view("<u8").reshape(-1)
        wb = win_b[pos_b[live] + 8 * j].copy().view("<u8").reshape(-1)
        left = np.minimum(rest[live] - 8 * j, 8) * 8
        ok[live] = ((wa ^ wb) & _low_bits(left)) == 0
    longer = np.flatnonzero(ok & (rest > 8 * _WORDS))
    if longer.size:
        skip = 8 * _WORDS
        tail = rest[longer] - skip
        ea = flat_a[ragged_indices(pos_a[longer] + skip, tail)]
        eb = flat_b[ragged_indices(pos_b[longer] + skip, tail)]
        ok[longer] = _fold(tail, ea == eb)
    result[outline] = ok
    return result


def _union_equal(
    storage: t.UnionType, dense: bool, a: Array, pa_: np.ndarray, b: Array, pb: np.ndarray
) -> np.ndarray:
    ids_a = _typed(a.buffers[0], "<i1")[pa_]
    ids_b = _typed(b.buffers[0], "<i1")[pb]
    result = ids_a == ids_b
    if dense:
        ca_all = _typed(a.buffers[1], "<i4")[pa_].astype(np.int64)
        cb_all = _typed(b.buffers[1], "<i4")[pb].astype(np.int64)
    else:
        ca_all, cb_all = pa_, pb
    for k, code in enumerate(storage.type_codes):
        sel = np.flatnonzero(result & (ids_a == code))
        if sel.size:
            result[sel] = _slots_equal(a.children[k], ca_all[sel], b.children[k], cb_all[sel])
    return result


def _run_ends(arr: Array) -> np.ndarray:
    run_ends = arr.children[0]
    width = run_ends.type.bit_width // 8
    ends = _typed(run_ends.buffers[1], f"<i{width}")
    return ends[run_ends.offset : run_ends.offset + len(run_ends)]


def _physical_runs(arr: Array, pos: np.ndarray) -> np.ndarray:
    """Index of the run (a logical slot of the run ends child) covering each position."""
    return np.searchsorted(_run_ends(arr), pos, side="right").astype(np.int64)


def _run_ranges_equal(a: Array, pa_: range, b: Array, pb: range) -> np.ndarray:
    """Two runs of run-end encoded slots, compared segment by segment: O(runs), not O(rows).

    The segments are cut where either side's run ends; each is one pair of values.
    """
    n = len(pa_)
    cuts = []
    for arr, pos in ((a, pa_), (b, pb)):
        ends = _run_ends(arr)
        lo = int(np.searchsorted(ends, pos.start, side="right"))
        hi = int(np.searchsorted(ends, pos.stop - 1, side="right"))
        cuts.append(np.minimum(ends[lo : hi + 1].astype(np.int64) - pos.start, n))
    merged = np.sort(np.concatenate([cuts[0], cuts[1], [n]]), kind="stable")
    keep = np.ones(merged.size, dtype=bool)
    keep[1:] = merged[1:] != merged[:-1]
    bounds = merged[keep & (merged > 0)]
    seg_starts = np.concatenate([[0], bounds[:-1]]).astype(np.int64)
    ra = _physical_runs(a, seg_starts + pa_.start)
    rb = _physical_runs(b, seg_starts + pb.start)
    seg_equal = _slots_equal(a.children[1], ra, b.children[1], rb)
    return np.repeat(seg_equal, np.diff(np.concatenate([[0], bounds])))
