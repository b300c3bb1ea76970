"""The structural rules of the physical layouts, written once as rule objects.

The rules that tie an array's numbers together (Columnar spec, "Physical Memory Layout"):
how many bytes each buffer needs for a number of slots, where the first and last offsets
of a binary, list or map array may lie, and how long the children must be.  They are
derived from the layout table (:func:`quiver.layout.layout_of`, one row per type class in
:mod:`quiver.registry`), one :class:`LayoutRules` per layout, and every reader of them
uses the same objects in one of two forms:

- **generated**: each rule states itself as a Python condition over names the caller
  chooses (``source`` methods); the IPC fast path (:mod:`quiver.ipc.plan`,
  :mod:`quiver.ipc.steady`) compiles those conditions into its straight-line checks;
- **interpreted**: each rule checks plain ints and words what it finds as "expected X,
  found Y" (``problem`` methods); the general IPC loader (:mod:`quiver.ipc.body`) and the
  structural level of :func:`quiver.array.validate.validate_array` raise those words with
  their own location (byte offset, message index, field path).

So a rule changed here (a size, a bound, a child length, a null count) changes every path
at once; the tables :data:`SIZE_RULES`, :data:`OFFSET_RULES` and :data:`CHILD_RULES` say
which rule a buffer kind or a layout's children rule gets, :data:`COUNT_RULE` is every
node's.  The C data interface import (:mod:`quiver.cdata`) sizes the buffers it views by
the size rules too.

>>> from quiver import types as t
>>> from quiver.layout import layout_of
>>> rules = rules_of(layout_of(t.string()))
>>> [r.need(10) for r in rules.sizes]
[2, 44, 0]
>>> rules.sizes[1].source("l1", "n", "z")
'l1 < (n + 1) * 4'
>>> rules.offsets.problem(0, 9, 3, 4, within_is="data size")
'offsets out of range: expected offsets[3] <= data size 4, found 9'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .layout import BufferSpec, Layout


@dataclass(frozen=True, slots=True)
class SizeRule:
    """Buffer ``index`` (of ``kind``) needs ``(n + extra) * per // div`` bytes for
    ``n > 0`` slots.

    ``optional``: the buffer may be absent when the array has no nulls (a validity
    bitmap).  ``empty_free``: an array of length 0 needs none of it, whatever its offset
    (offsets that delimit ranges: ``n + 1`` of them, none for an empty array).  A rule with
    ``per == 0`` (variable-size data) needs nothing of its own: its offsets bound it.
    """

    index: int
    kind: str
    per: int
    extra: int = 0
    div: int = 1
    optional: bool = False
    empty_free: bool = False

    @property
    def formula(self) -> tuple[int, int, int]:
        """``(per, extra, div)``: what the bytes needed depend on."""
        return self.per, self.extra, self.div

    def need(self, end: int, length: int | None = None) -> int:
        """Bytes needed for slots ``0 .. end`` (offset + length) of an array of ``length``
        (default ``end``)."""
        if not end or (self.empty_free and not (end if length is None else length)):
            return 0
        return (end + self.extra) * self.per // self.div

    def need_source(self, n: str) -> str:
        """:meth:`need` as Python text, for ``n`` (> 0) slots."""
        count = f"({n} + {self.extra})" if self.extra else n
        if self.div == 8 and self.per == 1:
            return f"{count} >> 3"
        return f"{count} * {self.per} // {self.div}" if self.div != 1 else f"{count} * {self.per}"

    def source(
        self, have: str, n: str, z: str, need: Callable[[SizeRule], str] | None = None
    ) -> str | None:
        """A Python condition, true when a buffer of ``have`` bytes is too small for ``n``
        (> 0) slots with null count ``z`` (``need(rule)``: the text of the bytes needed,
        default :meth:`need_source` of ``n``); None when the rule needs nothing (data)."""
        if not self.per:
            return None
        cond = f"{have} < {need(self) if need is not None else self.need_source(n)}"
        return f"({z} and {cond})" if self.optional else cond

    def problem(
        self, have: int | None, end: int, length: int | None = None, end_is: str = ""
    ) -> str | None:
        """What is wrong with a buffer of ``have`` bytes (None: absent) for slots
        ``0 .. end`` of an array of ``length``, worded; None when it is large enough.  An
        absent optional buffer is the caller's to allow (it depends on the null count)."""
        need = self.need(end, length)
        found = 0 if have is None else have
        if found >= need:
            return None
        return (f"buffer {self.index} ({self.kind}) too small: expected at least {need} "
                f"bytes for {end}{end_is} slots, found {found}")  # fmt: skip

    def absent(self, need: int, found: str = "none") -> str:
        """The words for this buffer missing where ``need`` bytes are needed (``found``:
        what stands in for it, ``none`` or ``NULL``)."""
        return f"expected buffer {self.index} ({self.kind}) of {need} bytes, found {found}"


@dataclass(frozen=True, slots=True)
class OffsetRule:
    """The first and last of the ``n + 1`` offsets in buffer ``index`` (``width`` bytes
    each, from slot ``offset``) lie in order inside ``0 .. limit``, where the limit is the
    size of buffer ``within`` (a binary array's data) or, when ``within`` is None, the
    length of child 0 (a list's or map's)."""

    index: int
    width: int
    within: int | None

    def source(self, first: str, last: str, limit: str) -> str:
        """A Python condition, true when the offsets ``first`` .. ``last`` break the rule
        for a limit of ``limit``."""
        return f"{first} < 0 or {last} < {first} or {last} > {limit}"

    def problem(
        self, first: int, last: int, end: int, limit: int, *, start: int = 0,
        within_is: str = "",
    ) -> str | None:  # fmt: skip
        """What is wrong with ``offsets[start] == first`` and ``offsets[end] == last``
        for a limit of ``limit`` (``within_is`` names it: ``data size``, ``child
        length``), worded; None when they keep the rule."""
        if first < 0:
            return f"expected offsets[{start}] >= 0, found {first}"
        if last < first:
            return (f"offsets must be non-decreasing: expected offsets[{end}] >= {first}, "
                    f"found {last}")  # fmt: skip
        if last > limit:
            what = within_is or ("child length" if self.within is None else "data size")
            return f"offsets out of range: expected offsets[{end}] <= {what} {limit}, found {last}"
        return None


@dataclass(frozen=True, slots=True)
class ChildRule:
    """How long the children of an array of ``end`` slots (offset + length) must be.

    ``kind`` is the layout's children rule it states: ``same`` (struct, sparse union:
    each child holds ``end`` values), ``fixed`` (fixed-size list: the child holds
    ``end * list_size``), ``run_end`` (run-end encoded: as many run ends as values, at
    least one when ``end > 0``, the last one ``>= end``).
    """

    kind: str

    @property
    def generated(self) -> bool:
        """Whether :meth:`source` states the rule (``run_end`` reads a value, which only
        the interpreted form does)."""
        return self.kind in ("same", "fixed")

    def source(self, n: str, children: Sequence[str], list_size: int = 0) -> list[str]:
        """Python conditions, any true when a child of length ``children[i]`` (text) is
        too short for ``n`` slots."""
        if self.kind == "same":
            return [f"{child} < {n}" for child in children]
        if self.kind == "fixed":
            return [f"{children[0]} < {n} * {list_size}"]
        raise ValueError(f"expected a children rule with a generated form, found {self.kind}")

    def problem(
        self,
        end: int,
        child_lengths: Sequence[int],
        *,
        list_size: int = 0,
        last_run_end: int | None = None,
        end_is: str = "",
    ) -> tuple[int, str] | None:
        """The first way ``end`` slots are not backed by the children: ``(child index,
        words)``, or None.  ``last_run_end`` is read by the caller (None when ``end`` is
        0); ``end_is`` says what ``end`` counts (`` (offset + length)``).

        >>> ChildRule("same").problem(3, [3, 2])
        (1, 'child too short: expected length >= 3, found 2')
        >>> ChildRule("fixed").problem(2, [6], list_size=3) is None
        True
        """
        if self.kind == "same":
            for i, n in enumerate(child_lengths):
                if n < end:
                    return i, f"child too short: expected length >= {end}{end_is}, found {n}"
        elif self.kind == "fixed":
            need = end * list_size
            if child_lengths[0] < need:
                return 0, (f"child too short: expected length >= {need} ({end}{end_is} x "
                           f"list_size {list_size}), found {child_lengths[0]}")  # fmt: skip
        elif self.kind == "run_end":
            runs, values = child_lengths
            if runs != values:
                return 0, f"expected as many run ends as values ({values}), found {runs}"
            if end and not runs:
                return 0, "expected at least one run end for a non-empty array, found 0"
            if end and last_run_end is not None and last_run_end < end:
                return 0, f"expected the last run end >= {end}{end_is}, found {last_run_end}"
        return None


@dataclass(frozen=True, slots=True)
class CountRule:
    """The numbers of one array node: a length and an offset of at least 0, a null count
    in ``0 .. length`` (in memory, -1 stands for "not counted yet"), and a validity
    bitmap present whenever the null count is above 0.

    The last one is the validity size rule's ``optional`` (an IPC body's empty bitmap is
    too small for a node with nulls); :meth:`bitmap_problem` words it where a bitmap can
    be absent outright (in memory, through the C data interface).
    """

    def conditions(self, n: str, z: str, signed: bool = True) -> list[str]:
        """Python conditions, any true when a length ``n`` and null count ``z`` (text)
        break the rule; ``signed=False`` leaves out the signs (the caller has checked
        every number >= 0).  They are comparisons of two names, so that they hold for
        numpy arrays as well (see :meth:`vector_source`)."""
        out = [f"{z} > {n}"]
        return [f"{n} < 0", f"{z} < 0", *out] if signed else out

    def source(self, n: str, z: str, signed: bool = True) -> str:
        """:meth:`conditions` as one Python condition."""
        return " or ".join(self.conditions(n, z, signed))

    def vector_source(self, n: str, z: str) -> str:
        """:meth:`conditions` over numpy arrays ``n`` and ``z``: a boolean array, true
        where a node breaks the rule."""
        return " | ".join(f"({cond})" for cond in self.conditions(n, z))

    def problem(
        self, length: int, null_count: int, offset: int = 0, *, where: str = "",
        unknown_ok: bool = False,
    ) -> str | None:  # fmt: skip
        """What is wrong with these numbers, worded (``where`` follows the expectation:
        `` in FieldNode 3``); None when they keep the rule.  ``unknown_ok``: a null
        count below 0 means "not counted" (in memory).

        >>> CountRule().problem(2, 3)
        'expected 0 <= null_count <= length, found length 2, null_count 3'
        """
        if length < 0:
            return f"expected a non-negative length{where}, found {length}"
        if offset < 0:
            return f"expected a non-negative offset{where}, found {offset}"
        if null_count > length or (null_count < 0 and not unknown_ok):
            return (f"expected 0 <= null_count <= length{where}, found length {length}, "
                    f"null_count {null_count}")  # fmt: skip
        return None

    def bitmap_problem(self, null_count: int, found: str = "none") -> str | None:
        """What is wrong with an absent validity bitmap for ``null_count`` nulls, worded
        (``found``: what stands in for it, ``none`` or ``NULL``); None when nothing."""
        if null_count > 0:
            return f"expected a validity bitmap for null_count {null_count}, found {found}"
        return None


@dataclass(frozen=True, slots=True)
class LayoutRules:
    """The structural rules of one layout: a size rule per fixed buffer, the offsets rule
    (binary arrays, lists, maps) and the children rule (structs, sparse unions,
    fixed-size lists, run-end encoded), each None where the layout has none; the count
    rule of every node (:data:`COUNT_RULE`).

    ``generated``: every rule of the layout has a generated form (``source``) and its
    children, if any, are tied to it by one of them (an offsets rule or a children rule):
    plain leaves, lists, maps, structs, sparse unions, fixed-size lists.  List views
    (their views are checked at the value level) and dense unions have none; run-end
    encoded arrays' rule reads a value.
    """

    sizes: tuple[SizeRule, ...]
    offsets: OffsetRule | None
    children: ChildRule | None
    counts: CountRule
    generated: bool


def _bitmap(i: int, spec: BufferSpec, lay: Layout) -> SizeRule:
    return SizeRule(i, spec.kind, 1, 7, 8, optional=spec.kind == "validity")


def _per_slot(i: int, spec: BufferSpec, lay: Layout) -> SizeRule:
    return SizeRule(i, spec.kind, spec.byte_width)


def _offsets(i: int, spec: BufferSpec, lay: Layout) -> SizeRule:
    if lay.children in ("views", "dense"):  # one offset per slot, not per range end
        return _per_slot(i, spec, lay)
    return SizeRule(i, spec.kind, spec.byte_width, 1, empty_free=True)


#: buffer kind -> its size rule (from its place, spec and layout)
SIZE_RULES: dict[str, Callable[[int, BufferSpec, Layout], SizeRule]] = {
    "validity": _bitmap,
    "bits": _bitmap,
    "offsets": _offsets,
    "values": _per_slot,
    "sizes": _per_slot,
    "views": _per_slot,
    "type_ids": _per_slot,
    "data": lambda i, spec, lay: SizeRule(i, spec.kind, 0),
}


def _binary_offsets(lay: Layout) -> OffsetRule | None:
    kinds = tuple(spec.kind for spec in lay.buffers)
    if kinds == ("validity", "offsets", "data") and not lay.variadic:
        return OffsetRule(1, lay.buffers[1].byte_width, 2)
    return None


#: a layout's children rule -> its offsets rule, if any
OFFSET_RULES: dict[str, Callable[[Layout], OffsetRule | None]] = {
    "none": _binary_offsets,
    "offsets": lambda lay: OffsetRule(1, lay.buffers[1].byte_width, None),
}

#: a layout's children rule -> its children rule object, if any
CHILD_RULES: dict[str, ChildRule] = {kind: ChildRule(kind) for kind in ("same", "fixed", "run_end")}

#: the count rule of every node (length, offset, null count)
COUNT_RULE = CountRule()


_RULES: dict[int, tuple[Layout, LayoutRules]] = {}


def rules_of(lay: Layout) -> LayoutRules:
    """The rules of layout ``lay`` (cached per layout object: :func:`layout_of` keeps
    one per type)."""
    hit = _RULES.get(id(lay))
    if hit is not None and hit[0] is lay:
        return hit[1]
    offsets = OFFSET_RULES.get(lay.children, lambda lay: None)(lay)
    children = CHILD_RULES.get(lay.children)
    tied = lay.children == "none" or offsets is not None or children is not None
    found = LayoutRules(
        tuple(SIZE_RULES[spec.kind](i, spec, lay) for i, spec in enumerate(lay.buffers)),
        offsets,
        children,
        COUNT_RULE,
        tied and (children is None or children.generated),
    )
    if len(_RULES) >= 4096:
        _RULES.clear()
    _RULES[id(lay)] = (lay, found)  # the layout kept alive: its id stays its own
    return found


_DERIVED: list[Callable[[], None]] = []


def on_clear(forget: Callable[[], None]) -> Callable[[], None]:
    """Have :func:`clear_rule_cache` call ``forget`` too: the layers above that cache
    what they derive from these rules (generated code, per-type specs) register it, so
    that a change to the tables reaches them; returns ``forget``."""
    _DERIVED.append(forget)
    return forget


def clear_rule_cache() -> None:
    """Forget the rules derived so far and everything registered with :func:`on_clear`
    (after a change to the tables above; :func:`quiver.ipc.plan.clear_generated` also
    forgets the IPC plan's generated code)."""
    _RULES.clear()
    for forget in _DERIVED:
        forget()
