"""The full level of array validation: the O(rows) value checks, each one vectorized with
numpy (Columnar spec, "Physical Memory Layout").  :mod:`quiver.array.validate` runs them
after its structural checks have proved every buffer large enough to read.

Each check finds the first bad slot with one numpy pass and reports it through
:func:`raise_first_bad`, as an :class:`~quiver.errors.ArrowInvalid` naming the field path
and saying "expected X, found Y"; the message is only formatted when a slot is bad.

>>> import numpy as np
>>> raise_first_bad(np.array([False, True]), "col", lambda k: f"expected 0, found slot {k}")
Traceback (most recent call last):
...
quiver.errors.ArrowInvalid: expected 0, found slot 1 (at field 'col')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import types as t
from ..buffers import unpack_bits
from ..errors import ArrowInvalid
from ..layout import BufferSpec, Layout
from .decimal import beyond_digits, limbs, to_ints

if TYPE_CHECKING:  # annotations only: Array sits above this module
    from .base import Array

__all__ = [
    "fail",
    "full_decimal",
    "full_indices",
    "full_list_views",
    "full_offsets",
    "full_run_ends",
    "full_time_of_day",
    "full_union",
    "full_utf8_offsets",
    "full_views",
    "join_path",
    "ragged_indices",
    "raise_first_bad",
    "typed",
    "view_slices",
]

_VIEW_INLINE = 12
_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def join_path(path: str, name: str) -> str:
    """``path.name`` (just ``name`` at the top)."""
    return f"{path}.{name}" if path else name


def fail(message: str, path: str) -> ArrowInvalid:
    """The validation error for ``message`` at field ``path``."""
    return ArrowInvalid(message, field_path=path or None)


def raise_first_bad(bad_mask: np.ndarray, path: str, message: Callable[[int], str]) -> None:
    """Raise :func:`fail` with ``message(k)`` for the first ``k`` where ``bad_mask`` is True;
    return when there is none."""
    if bad_mask.any():  # one pass without allocating: the common, valid case
        raise fail(message(int(bad_mask.argmax())), path)


def typed(buf: np.ndarray, dtype: str | np.dtype, start: int, count: int) -> np.ndarray:
    """``count`` elements of ``dtype`` from element ``start`` of a uint8 buffer (a view)."""
    width = np.dtype(dtype).itemsize
    return buf[start * width : (start + count) * width].view(dtype)


def _validity_mask(array: Array, validity: np.ndarray | None) -> np.ndarray | None:
    """Valid-slot mask of ``array``'s own range, or None when every slot is valid."""
    if validity is None:
        return None
    return unpack_bits(validity, array.offset, len(array))


def _valid_only(bad_mask: np.ndarray, array: Array, validity: np.ndarray | None) -> np.ndarray:
    """``bad_mask`` with the null slots of ``array`` cleared (they may hold anything)."""
    mask = _validity_mask(array, validity)
    if mask is not None:
        bad_mask &= mask
    return bad_mask


def ragged_indices(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenated ``arange(s, s + n)`` for each (start, length) pair, vectorized.

    >>> ragged_indices(np.array([5, 0, 2]), np.array([2, 0, 3])).tolist()
    [5, 6, 2, 3, 4]
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    keep = lengths > 0
    lengths = lengths[keep]
    if lengths.size == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.asarray(starts, dtype=np.int64)[keep]
    # one cumulative sum: +1 inside a range, a jump to the next start at each range head
    steps = np.ones(int(lengths.sum()), dtype=np.int64)
    heads = np.cumsum(lengths) - lengths
    steps[0] = starts[0]
    steps[heads[1:]] = starts[1:] - (starts[:-1] + lengths[:-1] - 1)
    return np.cumsum(steps)


def _view_words(rows: np.ndarray, first: int) -> np.ndarray:
    """The int32 at bytes ``first .. first + 4`` of each 16-byte view row, as int64."""
    return rows[:, first : first + 4].copy().view("<i4").reshape(-1).astype(np.int64)


def view_slices(
    views: np.ndarray, data: list[np.ndarray], positions: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bytes of the binary views at ``positions``, gathered into one contiguous array.

    Returns ``(gathered, starts, lengths)``: slot ``k``'s bytes are
    ``gathered[starts[k] : starts[k] + lengths[k]]``.  Inline views (length <= 12) read from
    the views buffer itself; the others from ``data[buffer_index]``.  The caller has checked
    that every position, buffer index and range is in bounds.
    """
    rows = views[: (views.size // 16) * 16].reshape(-1, 16)[positions]
    lengths = _view_words(rows, 0)
    n = lengths.size
    if n == 0:
        return np.zeros(0, np.uint8), np.zeros(0, np.int64), lengths
    inline = lengths <= _VIEW_INLINE
    # one source array: the selected rows' inline bytes, then every data buffer
    sizes = np.array([0] + [b.size for b in data], dtype=np.int64)
    bases = rows.size + np.cumsum(sizes)[:-1]
    source = np.concatenate([rows.reshape(-1), *data]) if data else rows.reshape(-1)
    buf_index = _view_words(rows, 8)
    buf_offset = _view_words(rows, 12)
    src_start = np.where(inline, np.arange(n, dtype=np.int64) * 16 + 4, 0)
    outline = ~inline
    if outline.any():
        src_start[outline] = bases[buf_index[outline]] + buf_offset[outline]
    gathered = source[ragged_indices(src_start, lengths)]
    starts = np.cumsum(lengths) - lengths
    return gathered, starts, lengths


# -- UTF-8 ---------------------------------------------------------------------------------


def _utf8_error(data: np.ndarray) -> int | None:
    """Position of the first byte that breaks UTF-8 in ``data``, or None when it is valid."""
    if data.size == 0 or not (data >= 0x80).any():
        return None
    try:
        str(memoryview(np.ascontiguousarray(data)), "utf-8")
    except UnicodeDecodeError as exc:
        return int(exc.start)
    return None


def _raise_utf8(
    data: np.ndarray, pos: int, starts: np.ndarray, lengths: np.ndarray, slots: np.ndarray,
    path: str,
) -> None:
    k = int(np.searchsorted(starts, pos, side="right")) - 1
    # the slot that holds the bad byte (skipping empty slots that share its start)
    while k > 0 and lengths[k] == 0:
        k -= 1
    k = max(k, 0)
    raise fail(
        f"expected valid UTF-8 in slot {int(slots[k])}, found invalid byte "
        f"0x{int(data[pos]):02x} at byte {pos - int(starts[k])} of the value",
        path,
    )


def _is_continuation(byte: np.ndarray) -> np.ndarray:
    return (byte & 0xC0) == 0x80


def _check_boundaries(
    data: np.ndarray, starts: np.ndarray, lengths: np.ndarray, slots: np.ndarray, path: str
) -> None:
    """Within valid UTF-8 ``data``, each slice is valid iff it starts and ends on a character
    boundary (UTF-8 synchronizes on lead bytes: continuation bytes are 0b10xxxxxx)."""
    if data.size == 0 or not (data >= 0x80).any():
        return  # ASCII: every byte is a character boundary
    nonempty = np.flatnonzero(lengths > 0)
    if not nonempty.size:
        return
    heads = data[starts[nonempty]]
    raise_first_bad(
        _is_continuation(heads), path,
        lambda j: f"expected valid UTF-8 in slot {int(slots[nonempty[j]])}, found a value "
        f"starting with continuation byte 0x{int(heads[j]):02x}",
    )
    ends = starts[nonempty] + lengths[nonempty]
    inside = ends < data.size  # a mask: the slot is located only on failure
    raise_first_bad(
        _is_continuation(data[ends[inside]]), path,
        lambda j: f"expected valid UTF-8 in slot "
        f"{int(slots[nonempty[np.flatnonzero(inside)[j]]])}, found a value ending inside a "
        "multi-byte character",
    )


def _check_utf8(
    data: np.ndarray, starts: np.ndarray, lengths: np.ndarray, slots: np.ndarray, path: str
) -> None:
    """Each ``data[starts[k] : starts[k] + lengths[k]]`` is UTF-8, ``data`` holding only them.

    One decode of the whole range proves it valid; the slots are then checked to start and
    end on character boundaries.
    """
    pos = _utf8_error(data)
    if pos is not None:
        _raise_utf8(data, pos, starts, lengths, slots, path)
    _check_boundaries(data, starts, lengths, slots, path)


# -- the full checks, one per layout rule or leaf type ------------------------------------


def full_offsets(
    array: Array, offsets: np.ndarray | None, spec: BufferSpec, path: str
) -> np.ndarray:
    """Offsets non-decreasing; returns them (a view of this array's range)."""
    length = len(array)
    if not length:
        return np.zeros(0, np.int64)
    offs = typed(offsets, f"<i{spec.byte_width}", array.offset, length + 1)
    raise_first_bad(
        offs[1:] < offs[:-1], path,
        lambda k: "offsets must be non-decreasing: expected "
        f"offsets[{array.offset + k + 1}] >= {int(offs[k])}, found {int(offs[k + 1])}",
    )
    return offs


def full_utf8_offsets(
    array: Array, validity: Any, data: Any, offs: np.ndarray, path: str
) -> None:
    """The valid slots of a string array (``offs`` from :func:`full_offsets`) are UTF-8."""
    if not offs.size or data is None:
        return
    first, last = int(offs[0]), int(offs[-1])
    starts = offs[:-1].astype(np.int64)
    lengths = np.diff(offs).astype(np.int64)
    slots = np.arange(len(array), dtype=np.int64)
    mask = _validity_mask(array, validity)
    region = data[first:last]
    starts -= first
    if mask is None or mask.all():
        _check_utf8(region, starts, lengths, slots, path)
        return
    starts, lengths, slots = starts[mask], lengths[mask], slots[mask]
    if _utf8_error(region) is None:  # the common case: no need to skip the null slots
        _check_boundaries(region, starts, lengths, slots, path)
        return
    gathered = region[ragged_indices(starts, lengths)]
    _check_utf8(gathered, np.cumsum(lengths) - lengths, lengths, slots, path)


def full_list_views(array: Array, bufs: list, lay: Layout, path: str) -> None:
    """List-view sizes >= 0 and every range inside the child."""
    length = len(array)
    if not length:
        return
    width = lay.buffers[1].byte_width
    offs = typed(bufs[1], f"<i{width}", array.offset, length).astype(np.int64)
    sizes = typed(bufs[2], f"<i{width}", array.offset, length).astype(np.int64)
    limit = len(array.children[0])
    for name, bad_mask, expected, values in (
        ("sizes", sizes < 0, ">= 0", sizes),
        ("offsets", (offs < 0) | (offs > limit), f"in 0..{limit}", offs),
        ("offsets + sizes", offs > limit - sizes, f"<= child length {limit}", offs + sizes),
    ):
        raise_first_bad(
            bad_mask, path,
            lambda k, name=name, expected=expected, values=values: "list view out of range: "
            f"expected {name}[{array.offset + k}] {expected}, found {int(values[k])}",
        )


def full_union(array: Array, storage: t.UnionType, bufs: list, *, dense: bool, path: str) -> None:
    """Type codes declared by the union; dense offsets inside the selected child."""
    length = len(array)
    if not length:
        return
    ids = typed(bufs[0], "<i1", array.offset, length)
    lookup = np.full(256, -1, dtype=np.int64)  # indexed by code + 128
    lookup[np.asarray(storage.type_codes, dtype=np.int64) + 128] = np.arange(
        len(storage.type_codes)
    )
    child_index = lookup[ids.astype(np.int64) + 128]
    raise_first_bad(
        child_index < 0, path,
        lambda k: f"expected a declared union type code {list(storage.type_codes)} at slot "
        f"{k}, found {int(ids[k])}",
    )
    if not dense:
        return
    offs = typed(bufs[1], "<i4", array.offset, length).astype(np.int64)
    limits = np.array([len(c) for c in array.children], dtype=np.int64)

    def message(k: int) -> str:
        ci = int(child_index[k])
        return (
            f"dense union offset out of range: expected offsets[{array.offset + k}] in "
            f"0..{int(limits[ci]) - 1} (child {storage.fields[ci].name!r}), found {int(offs[k])}"
        )

    raise_first_bad((offs < 0) | (offs >= limits[child_index]), path, message)


def full_run_ends(array: Array, path: str) -> None:
    """Run ends without nulls, positive and strictly increasing."""
    run_ends = array.children[0]
    rpath = join_path(path, "run_ends")
    n = len(run_ends)
    if not n:
        return
    if run_ends.null_count:
        raise fail(f"expected no null run ends, found {run_ends.null_count}", rpath)
    width = run_ends.type.bit_width // 8
    ends = typed(run_ends.buffers[1], f"<i{width}", run_ends.offset, n)
    if int(ends[0]) <= 0:
        raise fail(f"expected run ends > 0, found run_ends[0] = {int(ends[0])}", rpath)
    raise_first_bad(
        ends[1:] <= ends[:-1], rpath,
        lambda k: f"run ends must be strictly increasing: expected run_ends[{k + 1}] > "
        f"{int(ends[k])}, found {int(ends[k + 1])}",
    )


def full_views(array: Array, storage: t.DataType, bufs: list, path: str) -> None:
    """Views of the valid slots: lengths >= 0, buffer indices and ranges in bounds, prefixes
    equal to the data's first bytes; UTF-8 for string views."""
    length = len(array)
    if not length:
        return
    views, data = bufs[1], bufs[2:]
    for i, buf in enumerate(data):
        if buf is None:
            raise fail(f"expected variadic data buffer {i}, found none", path)
    rows = views[array.offset * 16 : (array.offset + length) * 16].reshape(-1, 16)
    lengths = _view_words(rows, 0)
    slots = np.arange(length, dtype=np.int64)
    mask = _validity_mask(array, bufs[0])
    if mask is not None:
        slots = slots[mask]
        rows, lengths = rows[mask], lengths[mask]
    raise_first_bad(
        lengths < 0, path,
        lambda k: f"expected a view length >= 0 at slot {int(slots[k])}, found {int(lengths[k])}",
    )
    outline = np.flatnonzero(lengths > _VIEW_INLINE)
    if outline.size:
        orows = rows[outline]
        index = _view_words(orows, 8)
        start = _view_words(orows, 12)
        raise_first_bad(
            (index < 0) | (index >= len(data)), path,
            lambda j: f"view buffer index out of range: expected 0..{len(data) - 1} at slot "
            f"{int(slots[outline[j]])}, found {int(index[j])}",
        )
        sizes = np.array([b.size for b in data], dtype=np.int64)
        olen = lengths[outline]
        raise_first_bad(
            (start < 0) | (start > sizes[index] - olen), path,
            lambda j: f"view out of range: expected offset + length <= {int(sizes[index[j]])} "
            f"(size of data buffer {int(index[j])}) at slot {int(slots[outline[j]])}, "
            f"found {int(start[j])} + {int(olen[j])}",
        )
        bases = np.cumsum(sizes) - sizes
        flat = np.concatenate(data) if len(data) > 1 else data[0]
        # 4-byte windows read in place (every value here is longer than 12 bytes)
        found = np.lib.stride_tricks.sliding_window_view(flat, 4)[bases[index] + start]
        raise_first_bad(
            (found != orows[:, 4:8]).any(axis=1), path,
            lambda j: f"view prefix mismatch at slot {int(slots[outline[j]])}: expected "
            f"{bytes(found[j])!r} (the data's first 4 bytes), found {bytes(orows[j, 4:8])!r}",
        )
    if isinstance(storage, t.StringViewType):
        _full_view_utf8(list(data), rows, lengths, slots, path)


def _full_view_utf8(
    data: list[np.ndarray], rows: np.ndarray, lengths: np.ndarray, slots: np.ndarray, path: str
) -> None:
    """UTF-8 of string views (valid slots only), without gathering every byte."""
    inline = np.flatnonzero(lengths <= _VIEW_INLINE)
    if inline.size:
        # inline bytes as a (k, 12) matrix with the unused tail blanked to ASCII spaces:
        # one decode then catches a bad byte, a value cut short or a stray continuation
        block = rows[inline, 4:16].copy()
        block[np.arange(_VIEW_INLINE) >= lengths[inline][:, None]] = 0x20
        pos = _utf8_error(block.reshape(-1))
        if pos is not None:
            k = int(inline[pos // _VIEW_INLINE])
            raise fail(
                f"expected valid UTF-8 in slot {int(slots[k])}, found invalid byte "
                f"0x{int(block.reshape(-1)[pos]):02x} at byte {pos % _VIEW_INLINE} of the "
                "value",
                path,
            )
    outline = np.flatnonzero(lengths > _VIEW_INLINE)
    if not outline.size:
        return
    orows = rows[outline]
    index = _view_words(orows, 8)
    start = _view_words(orows, 12)
    used = np.unique(index)
    clean = np.zeros(len(data), dtype=bool)
    for j in used.tolist():  # one C decode per data buffer, not per value
        clean[j] = _utf8_error(data[j]) is None
    ok = clean[index]
    sizes = np.array([b.size for b in data], dtype=np.int64)
    bases = np.cumsum(sizes) - sizes
    flat = np.concatenate(data) if len(data) > 1 else data[0]
    if ok.any():
        # in a buffer that is valid UTF-8 as a whole, only the value boundaries matter;
        # check them in buffer-local coordinates so a value cannot run into the next one
        sel = np.flatnonzero(ok)
        heads = flat[bases[index[sel]] + start[sel]]
        ends = start[sel] + lengths[outline[sel]]
        inside = ends < sizes[index[sel]]
        tails = np.zeros(sel.size, dtype=np.uint8)
        tails[inside] = flat[(bases[index[sel]] + ends)[inside]]
        raise_first_bad(
            _is_continuation(heads) | _is_continuation(tails), path,
            lambda j: f"expected valid UTF-8 in slot {int(slots[outline[sel[j]]])}, found a "
            "value that starts or ends inside a multi-byte character",
        )
    if not ok.all():
        sel = np.flatnonzero(~ok)
        olen = lengths[outline[sel]]
        gathered = flat[ragged_indices(bases[index[sel]] + start[sel], olen)]
        _check_utf8(gathered, np.cumsum(olen) - olen, olen, slots[outline[sel]], path)


def full_indices(array: Array, storage: t.DictionaryType, bufs: list, path: str) -> None:
    """Dictionary indices of the valid slots inside the dictionary."""
    length = len(array)
    if not length:
        return
    index_type = storage.index_type
    code = "i" if index_type.signed else "u"
    indices = typed(bufs[1], f"<{code}{index_type.width // 8}", array.offset, length)
    size = len(array.dictionary)
    if index_type.signed:
        bad_mask = (indices < 0) | (indices >= size)
    else:
        bad_mask = indices >= size
    raise_first_bad(
        _valid_only(bad_mask, array, bufs[0]), path,
        lambda k: f"dictionary index out of range: expected 0..{size - 1} at slot {k}, "
        f"found {int(indices[k])}",
    )


def full_time_of_day(array: Array, storage: t.TimeType, bufs: list, path: str) -> None:
    """Times of the valid slots within one day (Schema.fbs, "Time")."""
    length = len(array)
    if not length or bufs[1] is None:
        return
    per_second = _PER_SECOND[storage.unit]
    values = typed(bufs[1], "<i4" if storage.bit_width == 32 else "<i8", array.offset, length)
    bad_mask = _valid_only((values < 0) | (values >= 86_400 * per_second), array, bufs[0])

    def message(k: int) -> str:
        count = int(np.count_nonzero(bad_mask))
        return (
            f"expected {storage} values from 0 to {86_400 * per_second - 1} (one day) at "
            f"slot {k}, found {int(values[k])} ({count} value"
            f"{'' if count == 1 else 's'} out of range)"
        )

    raise_first_bad(bad_mask, path, message)


def full_decimal(array: Array, storage: t.DecimalType, bufs: list, path: str) -> None:
    """Decimals of the valid slots within their declared precision."""
    length = len(array)
    if not length:
        return
    lmb = limbs(bufs[1], storage.width, array.offset, length)
    bad_mask = beyond_digits(lmb, storage.precision)
    raise_first_bad(
        _valid_only(bad_mask, array, bufs[0]), path,
        lambda k: f"expected {storage} values of at most {storage.precision} digits at slot "
        f"{k}, found unscaled value {to_ints(lmb[k : k + 1])[0]}",
    )


