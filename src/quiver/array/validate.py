"""Array validation in two levels (Columnar spec, "Physical Memory Layout").

One walk over the type tree, driven by :func:`quiver.layout.layout_of`: the number of
buffers, their element widths and the rule that sizes the children all come from the layout
table, so this module only adds the checks that differ per leaf (UTF-8, dictionary indices,
union codes, run ends, views, decimal precision).

Structural level (``full=False``), O(1) per array or O(children), never O(rows):

- the buffer count matches the layout (view types may carry any number of data buffers);
- each buffer is a 1-D uint8 numpy array long enough for ``offset + length`` slots;
- ``null_count`` is at most ``length`` and a validity bitmap is present when it is positive;
- children match the type's fields and are long enough by the layout's children rule; the
  first and last offsets of binary and list arrays lie within the data or the child;
- dictionary arrays carry a dictionary of the value type; run-end encoded arrays have run
  ends and values of equal length, covering ``offset + length``.

Full level (``full=True``) adds the O(rows) checks, each one vectorized with numpy:
offsets non-decreasing, UTF-8 valid, dictionary indices in range, union type codes declared
and dense offsets inside their child, run ends positive and strictly increasing, views inside
their buffers with matching prefixes, list-view ranges inside the child, the stored
``null_count`` equal to the bitmap's count, and (opt-in) decimals within their precision.

Every failure is an :class:`~quiver.errors.ArrowInvalid` naming the field path and saying
"expected X, found Y":

>>> import numpy as np
>>> from quiver import types as t
>>> from quiver.array import make_array
>>> offsets = np.array([0, 3, 1], dtype="<i4").view(np.uint8)
>>> bad = make_array(t.string(), 2, [None, offsets, np.frombuffer(b"abc", np.uint8)])
>>> validate_array(bad, path="name")
>>> validate_array(bad, full=True, path="name")
Traceback (most recent call last):
...
quiver.errors.ArrowInvalid: offsets must be non-decreasing: expected offsets[2] >= 3, \
found 1 (at field 'name')
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .. import types as t
from ..buffers import count_set_bits, unpack_bits
from ..errors import ArrowError, ArrowInvalid
from ..layout import BufferSpec, Layout, children_problem, layout_of, required_bytes
from .data import ArrayData

if TYPE_CHECKING:  # annotations only: Array sits above this module
    from .base import Array

__all__ = ["ragged_indices", "validate_array", "view_slices"]

_VIEW_INLINE = 12
_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def validate_array(
    array: Array,
    *,
    full: bool = False,
    check_decimal_precision: bool = False,
    check_time_of_day: bool = False,
    path: str = "",
) -> None:
    """Check ``array`` against the columnar spec; raise ArrowInvalid on the first problem.

    ``full=False`` runs the cheap structural checks only; ``full=True`` also checks every
    value (offsets, UTF-8, indices, codes, run ends, views).  ``check_decimal_precision``
    (full level) checks that decimals fit their declared precision, ``check_time_of_day``
    (full level) that times lie in a day (Schema.fbs, "Time": from 0 inclusive to 86400
    seconds exclusive, in the type's unit).  ``path`` names the array in error messages
    (children extend it: ``col.item.a``).

    >>> import numpy as np
    >>> from quiver import types as t
    >>> from quiver.array import make_array
    >>> arr = make_array(t.int32(), 3, [None, np.zeros(12, np.uint8)])
    >>> validate_array(arr, full=True)
    >>> validate_array(make_array(t.int32(), 4, [None, np.zeros(12, np.uint8)]))
    Traceback (most recent call last):
    ...
    quiver.errors.ArrowInvalid: buffer 1 (values) too small: expected at least 16 bytes, found 12
    """
    _Walk(full, check_decimal_precision, check_time_of_day).visit(array, path)


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _fail(message: str, path: str) -> ArrowInvalid:
    return ArrowInvalid(message, field_path=path or None)


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


def _typed(buf: np.ndarray, dtype: str | np.dtype, start: int, count: int) -> np.ndarray:
    """``count`` elements of ``dtype`` from element ``start`` of a uint8 buffer (a view)."""
    width = np.dtype(dtype).itemsize
    return buf[start * width : (start + count) * width].view(dtype)


def _validity_mask(array: Array, validity: np.ndarray | None) -> np.ndarray | None:
    """Valid-slot mask of ``array``'s own range, or None when every slot is valid."""
    if validity is None:
        return None
    return unpack_bits(validity, array.offset, len(array))


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
    lengths = rows[:, 0:4].copy().view("<i4").reshape(-1).astype(np.int64)
    n = lengths.size
    if n == 0:
        return np.zeros(0, np.uint8), np.zeros(0, np.int64), lengths
    inline = lengths <= _VIEW_INLINE
    # one source array: the selected rows' inline bytes, then every data buffer
    sizes = np.array([0] + [b.size for b in data], dtype=np.int64)
    bases = rows.size + np.cumsum(sizes)[:-1]
    source = np.concatenate([rows.reshape(-1), *data]) if data else rows.reshape(-1)
    buf_index = rows[:, 8:12].copy().view("<i4").reshape(-1).astype(np.int64)
    buf_offset = rows[:, 12:16].copy().view("<i4").reshape(-1).astype(np.int64)
    src_start = np.where(inline, np.arange(n, dtype=np.int64) * 16 + 4, 0)
    outline = ~inline
    if outline.any():
        src_start[outline] = bases[buf_index[outline]] + buf_offset[outline]
    gathered = source[ragged_indices(src_start, lengths)]
    starts = np.cumsum(lengths) - lengths
    return gathered, starts, lengths


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
    raise _fail(
        f"expected valid UTF-8 in slot {int(slots[k])}, found invalid byte "
        f"0x{int(data[pos]):02x} at byte {pos - int(starts[k])} of the value",
        path,
    )


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
    bad = np.flatnonzero((heads & 0xC0) == 0x80)
    if bad.size:
        k = nonempty[bad[0]]
        raise _fail(
            f"expected valid UTF-8 in slot {int(slots[k])}, found a value starting with "
            f"continuation byte 0x{int(heads[bad[0]]):02x}",
            path,
        )
    ends = starts[nonempty] + lengths[nonempty]
    inside = ends < data.size
    tails = data[ends[inside]]
    bad = np.flatnonzero((tails & 0xC0) == 0x80)
    if bad.size:
        k = nonempty[np.flatnonzero(inside)[bad[0]]]
        raise _fail(
            f"expected valid UTF-8 in slot {int(slots[k])}, found a value ending inside a "
            "multi-byte character",
            path,
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


class _Walk:
    """One validation pass; ``visit`` checks an array and recurses into its children."""

    def __init__(
        self, full: bool, check_decimal_precision: bool, check_time_of_day: bool = False
    ) -> None:
        self.full = full
        self.check_decimal = check_decimal_precision
        self.check_time = check_time_of_day

    # -- the walk ------------------------------------------------------------------------

    def visit(self, array: Array, path: str) -> None:
        """Validate ``array`` (named ``path``) and everything below it."""
        if not isinstance(array, ArrayData):
            raise _fail(f"expected a quiver Array, found {type(array).__name__}", path)
        try:
            self._visit(array, path)
        except ArrowInvalid:
            raise
        except RecursionError:
            raise _fail("expected a type tree of reasonable depth, found deeper nesting",
                        path) from None
        except (ArrowError, IndexError, ValueError, TypeError, OverflowError, MemoryError) as exc:
            # a safety net: whatever slipped past the checks above is still invalid data
            raise _fail(f"expected a well-formed array, found: {exc!r}", path) from None

    def _visit(self, array: Array, path: str) -> None:
        dtype = array.type
        if not isinstance(dtype, t.DataType):
            raise _fail(f"expected a DataType, found {type(dtype).__name__}", path)
        storage = t.storage_of(dtype)
        lay = layout_of(dtype)
        # the raw attribute: len() itself refuses a negative length
        length, offset = getattr(array, "_length", None), array.offset
        if not isinstance(length, (int, np.integer)) or length < 0:
            raise _fail(f"expected a non-negative length, found {length!r}", path)
        if not isinstance(offset, (int, np.integer)) or offset < 0:
            raise _fail(f"expected a non-negative offset, found {offset!r}", path)
        bufs = self._check_buffers(array, lay, path)
        self._check_null_count(array, storage, lay, bufs, path)
        self._check_children(array, storage, lay, bufs, path)
        # children first: the leaf checks below may read their lengths and null counts
        for child, fld in zip(array.children, storage.fields):
            self.visit(child, _join(path, fld.name))
        if isinstance(storage, t.DictionaryType):
            self.visit(array.dictionary, _join(path, "dictionary"))
        self._check_leaf(array, storage, lay, bufs, path)

    # -- structural checks, driven by the layout table -----------------------------------

    def _check_buffers(self, array: Array, lay: Layout, path: str) -> list[np.ndarray | None]:
        bufs = list(array.buffers)
        n = lay.num_buffers
        if len(bufs) != n and not (lay.variadic and len(bufs) > n):
            more = " or more" if lay.variadic else ""
            raise _fail(
                f"expected {n}{more} buffers for {array.type}, found {len(bufs)}", path
            )
        end = array.offset + len(array)
        for i, buf in enumerate(bufs):
            spec = lay.buffers[i] if i < n else BufferSpec("data")
            if buf is None:
                if spec.kind == "validity" or required_bytes(spec, lay, end, len(array)) == 0:
                    continue
                raise _fail(f"expected buffer {i} ({spec.kind}), found none", path)
            if not isinstance(buf, np.ndarray) or buf.dtype != np.uint8 or buf.ndim != 1:
                found = (
                    f"{buf.dtype} array of {buf.ndim} dimensions"
                    if isinstance(buf, np.ndarray)
                    else type(buf).__name__
                )
                raise _fail(
                    f"expected buffer {i} ({spec.kind}) as a 1-D uint8 numpy array, "
                    f"found {found}",
                    path,
                )
            need = required_bytes(spec, lay, end, len(array))
            if buf.size < need:
                raise _fail(
                    f"buffer {i} ({spec.kind}) too small: expected at least {need} bytes, "
                    f"found {buf.size}",
                    path,
                )
        return bufs

    def _check_null_count(
        self, array: Array, storage: t.DataType, lay: Layout, bufs: list, path: str
    ) -> None:
        stored = getattr(array, "_null_count", -1)
        length = len(array)
        if stored is None:
            stored = -1
        if stored > length:
            raise _fail(f"expected null_count <= length {length}, found {stored}", path)
        if isinstance(storage, t.NullType):
            if stored >= 0 and stored != length:
                raise _fail(
                    f"expected null_count {length} for a null array, found {stored}", path
                )
            return
        if not lay.has_validity:
            if stored > 0:
                raise _fail(
                    f"expected null_count 0 for {array.type} (no validity bitmap), "
                    f"found {stored}",
                    path,
                )
            return
        validity = bufs[0]
        if validity is None:
            if stored > 0:
                raise _fail(
                    f"expected a validity bitmap for null_count {stored}, found none", path
                )
            return
        if self.full and stored >= 0:
            actual = length - count_set_bits(validity, array.offset, length)
            if actual != stored:
                raise _fail(
                    f"expected null_count {actual} (counted in the validity bitmap), "
                    f"found {stored}",
                    path,
                )

    def _check_children(
        self, array: Array, storage: t.DataType, lay: Layout, bufs: list, path: str
    ) -> None:
        children = array.children
        fields = storage.fields
        if len(children) != len(fields):
            raise _fail(
                f"expected {len(fields)} children for {array.type}, found {len(children)}", path
            )
        for i, (child, fld) in enumerate(zip(children, fields)):
            cpath = _join(path, fld.name)
            if not isinstance(child, ArrayData):
                raise _fail(f"expected child {i} as a quiver Array, found {child!r}", cpath)
            if not isinstance(child.type, t.DataType) or not child.type.equals(fld.type):
                raise _fail(f"expected child type {fld.type}, found {child.type}", cpath)
        end = array.offset + len(array)
        rule = lay.children
        if rule == "offsets":
            self._check_offset_ends(
                array, bufs[1], lay.buffers[1], len(children[0]), "child length", path
            )
        elif rule in ("same", "fixed", "run_end"):
            last = None
            if rule == "run_end" and len(array) and len(children[0]):
                last = self._last_run_end(children[0], path)
            # an empty run-end encoded array needs no runs, whatever its offset
            span = 0 if rule == "run_end" and not len(array) else end
            problem = children_problem(
                rule, span, [len(c) for c in children],
                list_size=getattr(storage, "list_size", 0), last_run_end=last,
                end_is=" (offset + length)",
            )
            if problem is not None:
                i, message = problem
                name = "run_ends" if rule == "run_end" else fields[i].name
                raise _fail(message, _join(path, name))
        if isinstance(storage, t.DictionaryType):
            dictionary = array.dictionary
            if not isinstance(dictionary, ArrayData):
                raise _fail(f"expected a dictionary of {storage.value_type}, found none", path)
            if not isinstance(dictionary.type, t.DataType) or not dictionary.type.equals(
                storage.value_type
            ):
                raise _fail(
                    f"expected a dictionary of {storage.value_type}, found {dictionary.type}",
                    path,
                )

    def _last_run_end(self, run_ends: Array, path: str) -> int:
        rpath = _join(path, "run_ends")
        n = len(run_ends)
        if n == 0:
            raise _fail("expected at least one run end for a non-empty array, found 0", rpath)
        bufs = run_ends.buffers
        if len(bufs) != 2 or not isinstance(bufs[1], np.ndarray):
            raise _fail(f"expected a run ends values buffer, found {len(bufs)} buffers", rpath)
        width = run_ends.type.bit_width // 8
        pos = run_ends.offset + n - 1
        if bufs[1].size < (pos + 1) * width:
            raise _fail(
                f"buffer 1 (values) too small: expected at least {(pos + 1) * width} bytes, "
                f"found {bufs[1].size}",
                rpath,
            )
        return int(_typed(bufs[1], f"<i{width}", pos, 1)[0])

    def _check_offset_ends(
        self,
        array: Array,
        offsets: np.ndarray | None,
        spec: BufferSpec,
        limit: int,
        what: str,
        path: str,
    ) -> None:
        """First and last offsets (O(1) reads) lie in ``0 .. limit``."""
        length = len(array)
        if not length:
            return
        offs = _typed(offsets, f"<i{spec.byte_width}", array.offset, length + 1)
        first, last = int(offs[0]), int(offs[-1])
        if first < 0:
            raise _fail(
                f"expected offsets[{array.offset}] >= 0, found {first}", path
            )
        if last < first:
            raise _fail(
                f"offsets must be non-decreasing: expected offsets[{array.offset + length}] "
                f">= {first}, found {last}",
                path,
            )
        if last > limit:
            raise _fail(
                f"offsets out of range: expected offsets[{array.offset + length}] <= "
                f"{what} {limit}, found {last}",
                path,
            )

    # -- leaf checks: the only per-type code ---------------------------------------------

    def _check_leaf(
        self, array: Array, storage: t.DataType, lay: Layout, bufs: list, path: str
    ) -> None:
        if isinstance(storage, (t.BinaryType, t.StringType)):
            data = bufs[2]
            limit = 0 if data is None else data.size
            self._check_offset_ends(array, bufs[1], lay.buffers[1], limit, "data size", path)
            if self.full:
                offs = self._full_offsets(array, bufs[1], lay.buffers[1], path)
                if isinstance(storage, t.StringType):
                    self._full_utf8_offsets(array, bufs[0], data, offs, path)
        if not self.full:
            return
        rule = lay.children
        if rule == "offsets":
            self._full_offsets(array, bufs[1], lay.buffers[1], path)
        elif rule == "views":
            self._full_list_views(array, bufs, lay, path)
        elif rule == "dense":
            self._full_union(array, storage, bufs, dense=True, path=path)
        elif rule == "same" and isinstance(storage, t.UnionType):
            self._full_union(array, storage, bufs, dense=False, path=path)
        elif rule == "run_end":
            self._full_run_ends(array, path)
        if lay.variadic:
            self._full_views(array, storage, bufs, path)
        if isinstance(storage, t.DictionaryType):
            self._full_indices(array, storage, bufs, path)
        if isinstance(storage, t.MapType):
            keys = array.children[0].children[0] if array.children[0].children else None
            if keys is not None and keys.null_count:
                raise _fail(
                    f"expected no null map keys, found {keys.null_count}",
                    _join(_join(path, storage.entries_field.name), storage.key_field.name),
                )
        if self.check_decimal and isinstance(storage, t.DecimalType):
            self._full_decimal(array, storage, bufs, path)
        if self.check_time and isinstance(storage, t.TimeType):
            self._full_time_of_day(array, storage, bufs, path)

    def _full_time_of_day(
        self, array: Array, storage: t.TimeType, bufs: list, path: str
    ) -> None:
        length = len(array)
        if not length or bufs[1] is None:
            return
        per_second = _PER_SECOND[storage.unit]
        values = _typed(bufs[1], "<i4" if storage.bit_width == 32 else "<i8", array.offset,
                        length)
        bad_mask = (values < 0) | (values >= 86_400 * per_second)
        mask = _validity_mask(array, bufs[0])
        if mask is not None:
            bad_mask &= mask
        bad = np.flatnonzero(bad_mask)
        if bad.size:
            k = int(bad[0])
            raise _fail(
                f"expected {storage} values from 0 to {86_400 * per_second - 1} (one day) at "
                f"slot {k}, found {int(values[k])} ({bad.size} value"
                f"{'' if bad.size == 1 else 's'} out of range)",
                path,
            )

    def _full_offsets(
        self, array: Array, offsets: np.ndarray | None, spec: BufferSpec, path: str
    ) -> np.ndarray:
        length = len(array)
        if not length:
            return np.zeros(0, np.int64)
        offs = _typed(offsets, f"<i{spec.byte_width}", array.offset, length + 1)
        bad = np.flatnonzero(offs[1:] < offs[:-1])
        if bad.size:
            k = int(bad[0])
            raise _fail(
                f"offsets must be non-decreasing: expected offsets[{array.offset + k + 1}] "
                f">= {int(offs[k])}, found {int(offs[k + 1])}",
                path,
            )
        return offs

    def _full_utf8_offsets(
        self, array: Array, validity: Any, data: Any, offs: np.ndarray, path: str
    ) -> None:
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

    def _full_list_views(self, array: Array, bufs: list, lay: Layout, path: str) -> None:
        length = len(array)
        if not length:
            return
        width = lay.buffers[1].byte_width
        offs = _typed(bufs[1], f"<i{width}", array.offset, length).astype(np.int64)
        sizes = _typed(bufs[2], f"<i{width}", array.offset, length).astype(np.int64)
        limit = len(array.children[0])
        for name, bad_mask, expected, values in (
            ("sizes", sizes < 0, ">= 0", sizes),
            ("offsets", (offs < 0) | (offs > limit), f"in 0..{limit}", offs),
            ("offsets + sizes", offs > limit - sizes, f"<= child length {limit}", offs + sizes),
        ):
            bad = np.flatnonzero(bad_mask)
            if bad.size:
                k = int(bad[0])
                raise _fail(
                    f"list view out of range: expected {name}[{array.offset + k}] {expected}, "
                    f"found {int(values[k])}",
                    path,
                )

    def _full_union(
        self, array: Array, storage: t.UnionType, bufs: list, *, dense: bool, path: str
    ) -> None:
        length = len(array)
        if not length:
            return
        ids = _typed(bufs[0], "<i1", array.offset, length)
        lookup = np.full(256, -1, dtype=np.int64)  # indexed by code + 128
        lookup[np.asarray(storage.type_codes, dtype=np.int64) + 128] = np.arange(
            len(storage.type_codes)
        )
        child_index = lookup[ids.astype(np.int64) + 128]
        bad = np.flatnonzero(child_index < 0)
        if bad.size:
            k = int(bad[0])
            raise _fail(
                f"expected a declared union type code {list(storage.type_codes)} at slot "
                f"{k}, found {int(ids[k])}",
                path,
            )
        if not dense:
            return
        offs = _typed(bufs[1], "<i4", array.offset, length).astype(np.int64)
        limits = np.array([len(c) for c in array.children], dtype=np.int64)
        bad = np.flatnonzero((offs < 0) | (offs >= limits[child_index]))
        if bad.size:
            k = int(bad[0])
            ci = int(child_index[k])
            raise _fail(
                f"dense union offset out of range: expected offsets[{array.offset + k}] in "
                f"0..{int(limits[ci]) - 1} (child {storage.fields[ci].name!r}), "
                f"found {int(offs[k])}",
                path,
            )

    def _full_run_ends(self, array: Array, path: str) -> None:
        run_ends = array.children[0]
        rpath = _join(path, "run_ends")
        n = len(run_ends)
        if not n:
            return
        if run_ends.null_count:
            raise _fail(f"expected no null run ends, found {run_ends.null_count}", rpath)
        width = run_ends.type.bit_width // 8
        ends = _typed(run_ends.buffers[1], f"<i{width}", run_ends.offset, n)
        if int(ends[0]) <= 0:
            raise _fail(f"expected run ends > 0, found run_ends[0] = {int(ends[0])}", rpath)
        bad = np.flatnonzero(ends[1:] <= ends[:-1])
        if bad.size:
            k = int(bad[0])
            raise _fail(
                f"run ends must be strictly increasing: expected run_ends[{k + 1}] > "
                f"{int(ends[k])}, found {int(ends[k + 1])}",
                rpath,
            )

    def _full_views(self, array: Array, storage: t.DataType, bufs: list, path: str) -> None:
        length = len(array)
        if not length:
            return
        views, data = bufs[1], bufs[2:]
        for i, buf in enumerate(data):
            if buf is None:
                raise _fail(f"expected variadic data buffer {i}, found none", path)
        rows = views[array.offset * 16 : (array.offset + length) * 16].reshape(-1, 16)
        lengths = rows[:, 0:4].copy().view("<i4").reshape(-1).astype(np.int64)
        slots = np.arange(length, dtype=np.int64)
        mask = _validity_mask(array, bufs[0])
        if mask is not None:
            slots = slots[mask]
            rows, lengths = rows[mask], lengths[mask]
        bad = np.flatnonzero(lengths < 0)
        if bad.size:
            k = int(bad[0])
            raise _fail(
                f"expected a view length >= 0 at slot {int(slots[k])}, found {int(lengths[k])}",
                path,
            )
        outline = np.flatnonzero(lengths > _VIEW_INLINE)
        if outline.size:
            index = rows[outline, 8:12].copy().view("<i4").reshape(-1).astype(np.int64)
            start = rows[outline, 12:16].copy().view("<i4").reshape(-1).astype(np.int64)
            bad = np.flatnonzero((index < 0) | (index >= len(data)))
            if bad.size:
                k = int(outline[bad[0]])
                raise _fail(
                    f"view buffer index out of range: expected 0..{len(data) - 1} at slot "
                    f"{int(slots[k])}, found {int(index[bad[0]])}",
                    path,
                )
            sizes = np.array([b.size for b in data], dtype=np.int64)
            olen = lengths[outline]
            bad = np.flatnonzero((start < 0) | (start > sizes[index] - olen))
            if bad.size:
                j = int(bad[0])
                k = int(outline[j])
                raise _fail(
                    f"view out of range: expected offset + length <= {int(sizes[index[j]])} "
                    f"(size of data buffer {int(index[j])}) at slot {int(slots[k])}, "
                    f"found {int(start[j])} + {int(olen[j])}",
                    path,
                )
            bases = np.cumsum(sizes) - sizes
            flat = np.concatenate(data) if len(data) > 1 else data[0]
            # 4-byte windows read in place (every value here is longer than 12 bytes)
            found = np.lib.stride_tricks.sliding_window_view(flat, 4)[bases[index] + start]
            bad = np.flatnonzero((found != rows[outline, 4:8]).any(axis=1))
            if bad.size:
                k = int(outline[bad[0]])
                raise _fail(
                    f"view prefix mismatch at slot {int(slots[k])}: expected "
                    f"{bytes(found[bad[0]])!r} (the data's first 4 bytes), "
                    f"found {bytes(rows[k, 4:8])!r}",
                    path,
                )
        if isinstance(storage, t.StringViewType):
            self._full_view_utf8(views, list(data), rows, lengths, slots, path)

    def _full_view_utf8(
        self,
        views: np.ndarray,
        data: list[np.ndarray],
        rows: np.ndarray,
        lengths: np.ndarray,
        slots: np.ndarray,
        path: str,
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
                raise _fail(
                    f"expected valid UTF-8 in slot {int(slots[k])}, found invalid byte "
                    f"0x{int(block.reshape(-1)[pos]):02x} at byte {pos % _VIEW_INLINE} of the "
                    "value",
                    path,
                )
        outline = np.flatnonzero(lengths > _VIEW_INLINE)
        if not outline.size:
            return
        index = rows[outline, 8:12].copy().view("<i4").reshape(-1).astype(np.int64)
        start = rows[outline, 12:16].copy().view("<i4").reshape(-1).astype(np.int64)
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
            bad = np.flatnonzero(((heads & 0xC0) == 0x80) | ((tails & 0xC0) == 0x80))
            if bad.size:
                k = int(outline[sel[bad[0]]])
                raise _fail(
                    f"expected valid UTF-8 in slot {int(slots[k])}, found a value that starts "
                    "or ends inside a multi-byte character",
                    path,
                )
        if not ok.all():
            sel = np.flatnonzero(~ok)
            olen = lengths[outline[sel]]
            gathered = flat[ragged_indices(bases[index[sel]] + start[sel], olen)]
            _check_utf8(gathered, np.cumsum(olen) - olen, olen, slots[outline[sel]], path)

    def _full_indices(
        self, array: Array, storage: t.DictionaryType, bufs: list, path: str
    ) -> None:
        length = len(array)
        if not length:
            return
        index_type = storage.index_type
        code = "i" if index_type.signed else "u"
        indices = _typed(bufs[1], f"<{code}{index_type.width // 8}", array.offset, length)
        mask = _validity_mask(array, bufs[0])
        size = len(array.dictionary)
        if index_type.signed:
            bad_mask = (indices < 0) | (indices >= size)
        else:
            bad_mask = indices >= size
        if mask is not None:
            bad_mask &= mask
        bad = np.flatnonzero(bad_mask)
        if bad.size:
            k = int(bad[0])
            raise _fail(
                f"dictionary index out of range: expected 0..{size - 1} at slot {k}, "
                f"found {int(indices[k])}",
                path,
            )

    def _full_decimal(
        self, array: Array, storage: t.DecimalType, bufs: list, path: str
    ) -> None:
        length = len(array)
        if not length:
            return
        bound = 10**storage.precision - 1
        mask = _validity_mask(array, bufs[0])
        if storage.width == 32:
            values = _typed(bufs[1], "<i4", array.offset, length).astype(np.int64)
            bad_mask = np.abs(values) > bound
        else:
            words = storage.width // 64
            raw = _typed(bufs[1], "<u8", array.offset * words, length * words)
            raw = raw.reshape(length, words)
            negative = (raw[:, -1] >> np.uint64(63)).astype(bool)
            magnitude = raw.copy()
            if negative.any():
                neg = ~raw[negative]
                carry = np.ones(neg.shape[0], dtype=bool)
                for j in range(words):  # two's complement, word by word (at most 4)
                    neg[:, j] += carry.astype(np.uint64)
                    carry &= neg[:, j] == 0
                magnitude[negative] = neg
            limit = [np.uint64((bound >> (64 * j)) & 0xFFFFFFFFFFFFFFFF) for j in range(words)]
            bad_mask = np.zeros(length, dtype=bool)
            equal = np.ones(length, dtype=bool)
            for j in reversed(range(words)):
                bad_mask |= equal & (magnitude[:, j] > limit[j])
                equal &= magnitude[:, j] == limit[j]
        if mask is not None:
            bad_mask &= mask
        bad = np.flatnonzero(bad_mask)
        if bad.size:
            k = int(bad[0])
            value = _decimal_int(bufs[1], storage.width, array.offset + k)
            raise _fail(
                f"expected {storage} values of at most {storage.precision} digits at slot "
                f"{k}, found unscaled value {value}",
                path,
            )


def _decimal_int(buf: np.ndarray, width: int, position: int) -> int:
    nbytes = width // 8
    raw = bytes(buf[position * nbytes : (position + 1) * nbytes])
    return int.from_bytes(raw, "little", signed=True)
