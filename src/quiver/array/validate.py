"""Array validation in two levels (Columnar spec, "Physical Memory Layout").

One walk over the type tree, driven by :func:`quiver.layout.layout_of`: the number of
buffers, their element widths and the rule that sizes the children all come from the layout
table, and the buffer size, offsets and children rules are the rule objects that IPC
reading runs too (:func:`quiver.layout_rules.rules_of`), so this module only adds the
checks that differ per leaf (UTF-8, dictionary indices, union codes, run ends, views,
decimal precision).

Structural level (``full=False``), O(1) per array or O(children), never O(rows):

- the buffer count matches the layout (view types may carry any number of data buffers);
- each buffer is a 1-D uint8 numpy array long enough for ``offset + length`` slots;
- length and offset are >= 0, ``null_count`` is at most ``length`` and a validity bitmap
  is present when it is positive (the count rule, IPC reading's too);
- children match the type's fields and are long enough by the layout's children rule; the
  first and last offsets of binary and list arrays lie within the data or the child;
- dictionary arrays carry a dictionary of the value type; run-end encoded arrays have run
  ends and values of equal length, covering ``offset + length``.

Full level (``full=True``) adds the O(rows) checks, each one vectorized with numpy:
offsets non-decreasing, UTF-8 valid, dictionary indices in range, union type codes declared
and dense offsets inside their child, run ends positive and strictly increasing, views inside
their buffers with matching prefixes, list-view ranges inside the child, the stored
``null_count`` equal to the bitmap's count, and (opt-in) decimals within their precision.
This module holds the walk and the structural level; the full level's value checks live in
:mod:`quiver.array.validate_values` (``ragged_indices`` and ``view_slices`` are re-exported
here).

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

from typing import TYPE_CHECKING

import numpy as np

from .. import types as t
from ..buffers import count_set_bits
from ..errors import ArrowError, ArrowInvalid
from ..layout import Layout, layout_of
from ..layout_rules import LayoutRules, OffsetRule, SizeRule, rules_of
from ..types.checks import type_problems
from .data import ArrayData
from .validate_values import (
    fail,
    full_decimal,
    full_indices,
    full_list_views,
    full_offsets,
    full_run_ends,
    full_time_of_day,
    full_union,
    full_utf8_offsets,
    full_views,
    join_path,
    ragged_indices,
    typed,
    view_slices,
)

if TYPE_CHECKING:  # annotations only: Array sits above this module
    from .base import Array

__all__ = ["ragged_indices", "validate_array", "view_slices"]

# a view type's variadic data buffers: sized by the views, nothing needed of their own
_VARIADIC_DATA = SizeRule(-1, "data", 0)
_END_IS = " (offset + length)"


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
    quiver.errors.ArrowInvalid: buffer 1 (values) too small: expected at least 16 bytes \
for 4 slots, found 12
    """
    _Walk(full, check_decimal_precision, check_time_of_day).visit(array, path)


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
            raise fail(f"expected a quiver Array, found {type(array).__name__}", path)
        try:
            self._visit(array, path)
        except ArrowInvalid:
            raise
        except RecursionError:
            raise fail("expected a type tree of reasonable depth, found deeper nesting",
                        path) from None
        except (ArrowError, IndexError, ValueError, TypeError, OverflowError, MemoryError) as exc:
            # a safety net: whatever slipped past the checks above is still invalid data
            raise fail(f"expected a well-formed array, found: {exc!r}", path) from None

    def _visit(self, array: Array, path: str) -> None:
        dtype = array.type
        if not isinstance(dtype, t.DataType):
            raise fail(f"expected a DataType, found {type(dtype).__name__}", path)
        if isinstance(dtype, t.ExtensionType) or (self.full and isinstance(
                dtype, t.TimestampType)):
            # canonical extension storage (every level), time zones (full level): the type
            # rules that need no data; children report their own
            problems = type_problems(dtype, path, full=self.full)
            if problems and problems[0][0] == path:
                raise fail(problems[0][1], path)
        storage = t.storage_of(dtype)
        lay = layout_of(dtype)
        # the raw attribute: len() itself refuses a negative length
        length, offset = getattr(array, "_length", None), array.offset
        if not isinstance(length, (int, np.integer)):
            raise fail(f"expected an int length, found {length!r}", path)
        if not isinstance(offset, (int, np.integer)):
            raise fail(f"expected an int offset, found {offset!r}", path)
        rules = rules_of(lay)
        stored = getattr(array, "_null_count", -1)
        stored = -1 if stored is None else stored
        # the count rule (IPC reading runs it too): length, offset, null count
        problem = rules.counts.problem(int(length), stored, int(offset), unknown_ok=True)
        if problem is not None:
            raise fail(problem, path)
        bufs = self._check_buffers(array, lay, rules, path)
        self._check_null_count(array, storage, lay, rules, bufs, stored, path)
        self._check_children(array, storage, rules, bufs, path)
        # children first: the leaf checks below may read their lengths and null counts
        for child, fld in zip(array.children, storage.fields):
            self.visit(child, join_path(path, fld.name))
        if isinstance(storage, t.DictionaryType):
            self.visit(array.dictionary, join_path(path, "dictionary"))
        self._check_leaf(array, storage, lay, rules, bufs, path)

    # -- structural checks, driven by the layout table -----------------------------------

    def _check_buffers(
        self, array: Array, lay: Layout, rules: LayoutRules, path: str
    ) -> list[np.ndarray | None]:
        bufs = list(array.buffers)
        n = lay.num_buffers
        if len(bufs) != n and not (lay.variadic and len(bufs) > n):
            more = " or more" if lay.variadic else ""
            raise fail(
                f"expected {n}{more} buffers for {array.type}, found {len(bufs)}", path
            )
        length = len(array)
        end = array.offset + length
        sizes = rules.sizes
        for i, buf in enumerate(bufs):
            rule = sizes[i] if i < n else _VARIADIC_DATA
            if buf is None:
                need = rule.need(end, length)
                if rule.optional or need == 0:
                    continue
                raise fail(rule.absent(need), path)
            if not isinstance(buf, np.ndarray) or buf.dtype != np.uint8 or buf.ndim != 1:
                found = (
                    f"{buf.dtype} array of {buf.ndim} dimensions"
                    if isinstance(buf, np.ndarray)
                    else type(buf).__name__
                )
                raise fail(
                    f"expected buffer {i} ({rule.kind}) as a 1-D uint8 numpy array, "
                    f"found {found}",
                    path,
                )
            if buf.size < rule.need(end, length):  # worded by the rule only when it fails
                end_is = _END_IS if array.offset else ""
                raise fail(rule.problem(buf.size, end, length, end_is) or "", path)
        return bufs

    def _check_null_count(
        self, array: Array, storage: t.DataType, lay: Layout, rules: LayoutRules, bufs: list,
        stored: int, path: str,
    ) -> None:  # fmt: skip
        """What the null count says of the type and the bitmap (its bounds are the count
        rule's, checked before): a null array's is its length, a type without a bitmap
        has none, nulls need a bitmap (the count rule's words), and at the full level the
        bitmap counts as many."""
        length = len(array)
        found: object = stored
        if isinstance(storage, t.NullType):
            if stored < 0 or stored == length:
                return
            expected = f"null_count {length} for a null array"
        elif not lay.has_validity:
            if stored <= 0:
                return
            expected = f"null_count 0 for {array.type} (no validity bitmap)"
        elif bufs[0] is None:
            problem = rules.counts.bitmap_problem(stored)
            if problem is None:
                return
            raise fail(problem, path)
        else:
            if not self.full or stored < 0:
                return
            actual = length - count_set_bits(bufs[0], array.offset, length)
            if actual == stored:
                return
            expected = f"null_count {actual} (counted in the validity bitmap)"
        raise fail(f"expected {expected}, found {found}", path)

    def _check_children(
        self, array: Array, storage: t.DataType, rules: LayoutRules, bufs: list, path: str
    ) -> None:
        children = array.children
        fields = storage.fields
        if len(children) != len(fields):
            raise fail(
                f"expected {len(fields)} children for {array.type}, found {len(children)}", path
            )
        for i, (child, fld) in enumerate(zip(children, fields)):
            cpath = join_path(path, fld.name)
            if not isinstance(child, ArrayData):
                raise fail(f"expected child {i} as a quiver Array, found {child!r}", cpath)
            if not isinstance(child.type, t.DataType) or not child.type.equals(fld.type):
                raise fail(f"expected child type {fld.type}, found {child.type}", cpath)
        end = array.offset + len(array)
        if rules.offsets is not None and rules.offsets.within is None:  # lists, maps
            self._check_offset_ends(array, bufs, rules.offsets, len(children[0]), path)
        kids = rules.children
        if kids is not None:
            run_end = kids.kind == "run_end"
            last = None
            if run_end and len(array) and len(children[0]):
                last = self._last_run_end(children[0], path)
            # an empty run-end encoded array needs no runs, whatever its offset
            span = 0 if run_end and not len(array) else end
            problem = kids.problem(
                span, [len(c) for c in children],
                list_size=getattr(storage, "list_size", 0), last_run_end=last,
                end_is=_END_IS,
            )
            if problem is not None:
                i, message = problem
                name = "run_ends" if run_end else fields[i].name
                raise fail(message, join_path(path, name))
        if isinstance(storage, t.DictionaryType):
            dictionary = array.dictionary
            if not isinstance(dictionary, ArrayData):
                raise fail(f"expected a dictionary of {storage.value_type}, found none", path)
            if not isinstance(dictionary.type, t.DataType) or not dictionary.type.equals(
                storage.value_type
            ):
                raise fail(
                    f"expected a dictionary of {storage.value_type}, found {dictionary.type}",
                    path,
                )

    def _last_run_end(self, run_ends: Array, path: str) -> int:
        rpath = join_path(path, "run_ends")
        n = len(run_ends)
        if n == 0:
            raise fail("expected at least one run end for a non-empty array, found 0", rpath)
        bufs = run_ends.buffers
        if len(bufs) != 2 or not isinstance(bufs[1], np.ndarray):
            raise fail(f"expected a run ends values buffer, found {len(bufs)} buffers", rpath)
        width = run_ends.type.bit_width // 8
        pos = run_ends.offset + n - 1
        # read before the run ends' own visit: their values' size rule, checked first
        rule = rules_of(layout_of(run_ends.type)).sizes[1]
        if bufs[1].size < rule.need(pos + 1, n):
            end_is = _END_IS if run_ends.offset else ""
            raise fail(rule.problem(bufs[1].size, pos + 1, n, end_is) or "", rpath)
        return int(typed(bufs[1], f"<i{width}", pos, 1)[0])

    def _check_offset_ends(
        self, array: Array, bufs: list, rule: OffsetRule, limit: int, path: str
    ) -> None:
        """The layout's offsets rule, interpreted: the first and last offsets (O(1)
        reads) lie in order in ``0 .. limit``."""
        length = len(array)
        if not length:
            return
        offs = typed(bufs[rule.index], f"<i{rule.width}", array.offset, length + 1)
        problem = rule.problem(int(offs[0]), int(offs[-1]), array.offset + length, limit,
                               start=array.offset)  # fmt: skip
        if problem is not None:
            raise fail(problem, path)

    # -- leaf checks: the only per-type code ---------------------------------------------

    def _check_leaf(
        self, array: Array, storage: t.DataType, lay: Layout, rules: LayoutRules, bufs: list,
        path: str,
    ) -> None:  # fmt: skip
        off = rules.offsets
        if off is not None and off.within is not None:  # binary, string: offsets into data
            data = bufs[off.within]
            limit = 0 if data is None else data.size
            self._check_offset_ends(array, bufs, off, limit, path)
        if isinstance(storage, (t.BinaryType, t.StringType)):
            data = bufs[2]
            if self.full:
                offs = full_offsets(array, bufs[1], lay.buffers[1], path)
                if isinstance(storage, t.StringType):
                    full_utf8_offsets(array, bufs[0], data, offs, path)
        if not self.full:
            return
        rule = lay.children
        if rule == "offsets":
            full_offsets(array, bufs[1], lay.buffers[1], path)
        elif rule == "views":
            full_list_views(array, bufs, lay, path)
        elif rule == "dense":
            full_union(array, storage, bufs, dense=True, path=path)
        elif rule == "same" and isinstance(storage, t.UnionType):
            full_union(array, storage, bufs, dense=False, path=path)
        elif rule == "run_end":
            full_run_ends(array, path)
        if lay.variadic:
            full_views(array, storage, bufs, path)
        if isinstance(storage, t.DictionaryType):
            full_indices(array, storage, bufs, path)
        if isinstance(storage, t.MapType):
            keys = array.children[0].children[0] if array.children[0].children else None
            if keys is not None and keys.null_count:
                raise fail(
                    f"expected no null map keys, found {keys.null_count}",
                    join_path(join_path(path, storage.entries_field.name), storage.key_field.name),
                )
        if self.check_decimal and isinstance(storage, t.DecimalType):
            full_decimal(array, storage, bufs, path)
        if self.check_time and isinstance(storage, t.TimeType):
            full_time_of_day(array, storage, bufs, path)
