"""Logical equality of arrays (Columnar spec, "Physical Memory Layout": what a slot means).

Two arrays are equal when their types are equal, their lengths are equal, the same slots are
null, and the valid slots hold equal values.  Offsets are honoured, and the bytes behind null
slots, padding and unused parts of buffers never matter.  The semantics follow pyarrow's
``Array.equals``: floats compare by value (``NaN != NaN``, ``-0.0 == 0.0``), dictionary
arrays compare their indices and their dictionaries, run-end encoded arrays compare their
decoded values, extension arrays their type and storage.

Theory of operation: one recursive function, ``_slots_equal(a, ia, b, ib)``, answers per
pair of logical slot indices whether ``a[ia[k]]`` equals ``b[ib[k]]``, as a numpy bool array.
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

import numpy as np

from .. import types as t
from ..buffers import unpack_bits
from ..errors import ArrowError, ArrowInvalid
from ..layout import Layout, layout_of, storage_numpy_dtype
from .base import Array
from .validate import ragged_indices, view_slices

__all__ = ["array_equals"]


def array_equals(a: Array, b: Array) -> bool:
    """Whether ``a`` and ``b`` hold the same logical values (types, nulls and values).

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
    if not isinstance(a, Array) or not isinstance(b, Array):
        return False
    if not a.type.equals(b.type) or len(a) != len(b):
        return False
    if a is b and not _has_floats(a.type):
        return True
    n = len(a)
    index = np.arange(n, dtype=np.int64)
    try:
        return bool(_slots_equal(a, index, b, index).all())
    except ArrowError:
        raise
    except (IndexError, ValueError, TypeError, OverflowError) as exc:
        raise ArrowInvalid(
            f"expected arrays that can be compared, found malformed data ({exc}); "
            "run validate(full=True) for details"
        ) from None


def _has_floats(dtype: t.DataType) -> bool:
    """NaN != NaN means an array with floats may differ from itself."""
    st = t.storage_of(dtype)
    if isinstance(st, t.FloatingPointType):
        return True
    if isinstance(st, t.DictionaryType):
        return _has_floats(st.value_type)
    return any(_has_floats(f.type) for f in st.fields)


def _bits_at(buf: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Bits of an LSB-first bitmap at absolute bit ``positions``."""
    return ((buf[positions >> 3] >> (positions & 7).astype(np.uint8)) & 1).astype(bool)


def _start_of_run(index: np.ndarray) -> int | None:
    """``index[0]`` when ``index`` is ``arange(index[0], index[0] + n)``, else None.

    Top-level comparisons and list children of monotonic offsets give such runs; they are
    then read as slices instead of gathered element by element.
    """
    n = index.size
    if n == 0:
        return None
    first = int(index[0])
    if int(index[-1]) - first != n - 1:
        return None
    if n > 2 and not bool((np.diff(index) == 1).all()):
        return None
    return first


def _bits(buf: np.ndarray, positions: np.ndarray) -> np.ndarray:
    start = _start_of_run(positions)
    if start is not None:
        return unpack_bits(buf, start, positions.size)
    return _bits_at(buf, positions)


def _valid(arr: Array, index: np.ndarray) -> np.ndarray:
    validity = arr.buffers[0] if arr.buffers else None
    if validity is None:
        return np.ones(index.size, dtype=bool)
    return _bits(validity, index + arr.offset)


def _take(values: np.ndarray, positions: np.ndarray) -> np.ndarray:
    start = _start_of_run(positions)
    if start is not None:
        return values[start : start + positions.size]
    return values[positions]


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


def _slots_equal(a: Array, ia: np.ndarray, b: Array, ib: np.ndarray) -> np.ndarray:
    """Per pair ``k``: is logical slot ``ia[k]`` of ``a`` equal to slot ``ib[k]`` of ``b``."""
    storage = t.storage_of(a.type)
    if isinstance(storage, t.NullType) or ia.size == 0:
        return np.ones(ia.size, dtype=bool)
    lay = layout_of(storage)
    if not lay.has_validity:  # unions and run-end encoding: nulls live in the children
        return _values_equal(storage, lay, a, ia, b, ib)
    va, vb = _valid(a, ia), _valid(b, ib)
    result = va == vb
    both = np.flatnonzero(va & vb)
    if both.size:
        result[both] = _values_equal(storage, lay, a, ia[both], b, ib[both])
    return result


def _values_equal(
    storage: t.DataType, lay: Layout, a: Array, ia: np.ndarray, b: Array, ib: np.ndarray
) -> np.ndarray:
    """Equality of the values at slot pairs that are valid on both sides."""
    pa_, pb = ia + a.offset, ib + b.offset  # positions in the buffers
    rule = lay.children
    kinds = tuple(spec.kind for spec in lay.buffers)
    if isinstance(storage, t.DictionaryType):
        if not array_equals(a.dictionary, b.dictionary):
            return np.zeros(ia.size, dtype=bool)
        return _fixed_equal(storage.index_type, lay.buffers[1].byte_width, a, pa_, b, pb)
    if kinds == ("validity", "values"):
        return _fixed_equal(storage, lay.buffers[1].byte_width, a, pa_, b, pb)
    if kinds == ("validity", "bits"):
        return _bits(a.buffers[1], pa_) == _bits(b.buffers[1], pb)
    if lay.variadic:
        return _views_equal(a, pa_, b, pb)
    if rule == "none":  # binary and string: offsets and data
        return _ranges_equal(a, pa_, b, pb, _offset_ranges)
    if rule == "same" and isinstance(storage, t.StructType):
        result = np.ones(ia.size, dtype=bool)
        for ca, cb in zip(a.children, b.children):
            result &= _slots_equal(ca, pa_, cb, pb)
        return result
    if rule in ("offsets", "views"):
        ranges = _offset_ranges if rule == "offsets" else _view_ranges
        return _ranges_equal(a, pa_, b, pb, ranges, child=True)
    if rule == "fixed":
        size = storage.list_size  # type: ignore[attr-defined]
        lengths = np.full(ia.size, size, dtype=np.int64)
        ca = ragged_indices(pa_ * size, lengths)
        cb = ragged_indices(pb * size, lengths)
        return _fold(lengths, _slots_equal(a.children[0], ca, b.children[0], cb))
    if isinstance(storage, t.UnionType):
        return _union_equal(storage, rule == "dense", a, pa_, b, pb)
    if rule == "run_end":
        ra, rb = _physical_runs(a, pa_), _physical_runs(b, pb)
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
    storage: t.DataType, width: int, a: Array, pa_: np.ndarray, b: Array, pb: np.ndarray
) -> np.ndarray:
    dtype = storage_numpy_dtype(storage)
    if dtype is None:
        if width == 0:
            return np.ones(pa_.size, dtype=bool)
        dtype = {1: "<u1", 2: "<u2", 4: "<u4", 8: "<u8"}.get(width)
    if dtype is not None:
        return _take(_typed(a.buffers[1], dtype), pa_) == _take(_typed(b.buffers[1], dtype), pb)
    # decimals, intervals, fixed-size binary wider than 8 bytes: compare rows of bytes
    rows_a = a.buffers[1][: (a.buffers[1].size // width) * width].reshape(-1, width)
    rows_b = b.buffers[1][: (b.buffers[1].size // width) * width].reshape(-1, width)
    return (_take(rows_a, pa_) == _take(rows_b, pb)).all(axis=1)


def _offset_ranges(arr: Array, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    width = layout_of(arr.type).buffers[1].byte_width
    offsets = _typed(arr.buffers[1], f"<i{width}")
    starts = _take(offsets, pos).astype(np.int64)
    return starts, _take(offsets, pos + 1).astype(np.int64) - starts


def _view_ranges(arr: Array, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    width = layout_of(arr.type).buffers[1].byte_width
    starts = _take(_typed(arr.buffers[1], f"<i{width}"), pos).astype(np.int64)
    return starts, _take(_typed(arr.buffers[2], f"<i{width}"), pos).astype(np.int64)


def _ranges_equal(
    a: Array, pa_: np.ndarray, b: Array, pb: np.ndarray, ranges: object, child: bool = False
) -> np.ndarray:
    """Slots given by (start, length) ranges into the data bytes or into the child."""
    sa, la = ranges(a, pa_)  # type: ignore[operator]
    sb, lb = ranges(b, pb)  # type: ignore[operator]
    result = la == lb
    same = np.flatnonzero(result)
    lengths = la[same]
    if not child and same.size == la.size and _start_of_run(pa_) is not None and (
        _start_of_run(pb) is not None
    ):
        # a run of slots with monotonic offsets covers one contiguous byte range per side
        total = int(lengths.sum())
        first_a, first_b = int(sa[0]), int(sb[0])
        element_equal = (
            a.buffers[2][first_a : first_a + total] == b.buffers[2][first_b : first_b + total]
        )
        result[same] = _fold(lengths, element_equal)
        return result
    ea = ragged_indices(sa[same], lengths)
    eb = ragged_indices(sb[same], lengths)
    if child:
        element_equal = _slots_equal(a.children[0], ea, b.children[0], eb)
    else:
        element_equal = a.buffers[2][ea] == b.buffers[2][eb]
    result[same] = _fold(lengths, element_equal)
    return result


def _views_equal(a: Array, pa_: np.ndarray, b: Array, pb: np.ndarray) -> np.ndarray:
    ga, sa, la = view_slices(a.buffers[1], list(a.buffers[2:]), pa_)
    gb, sb, lb = view_slices(b.buffers[1], list(b.buffers[2:]), pb)
    result = la == lb
    same = np.flatnonzero(result)
    lengths = la[same]
    element_equal = ga[ragged_indices(sa[same], lengths)] == gb[ragged_indices(sb[same], lengths)]
    result[same] = _fold(lengths, element_equal)
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


def _physical_runs(arr: Array, pos: np.ndarray) -> np.ndarray:
    """Index of the run (a logical slot of the run ends child) covering each position."""
    run_ends = arr.children[0]
    width = run_ends.type.bit_width // 8
    ends = _typed(run_ends.buffers[1], f"<i{width}")
    ends = ends[run_ends.offset : run_ends.offset + len(run_ends)]
    return np.searchsorted(ends, pos, side="right").astype(np.int64)
