"""The compiled read plan of a schema: one :class:`PlanNode` per field, built once.

A node carries everything the per-batch walk asks of its field (layout, its structural
rules, dictionary id) and, for a plain leaf (fixed width, boolean, binary, string) and for
a node whose rules all have a generated form (a list, large list, map, struct or
fixed-size list), its structural checks as code: :func:`node_checks` and
:func:`count_source` have the node's rule objects (:func:`quiver.layout_rules.rules_of`:
buffer sizes, offsets, children, counts) state themselves as Python conditions, next to
the body bounds that are the IPC walk's own (:func:`count_checks` generates the body
loader's check of every FieldNode from the count rule too).  From that text come

- the node's ``take`` (:func:`node_take`): a small function generated per kind of node
  that checks one array's numbers (and a nested node's children's lengths) and builds
  the array (the body loader's fast branch and its all-leaves loop call a leaf's; both
  loops of the steady path call them all), and
- the steady path's straight-line code for a whole batch (:mod:`quiver.ipc.steady`),
  which inlines the same conditions for every node.

The general loader (:mod:`quiver.ipc.body`) runs the same rule objects interpreted and
words the error with them; anything a ``take`` refuses goes there.  :func:`preorder` is
the one walk that numbers a plan's nodes and buffers in the message's order.
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from .. import errors as E
from .. import types as t
from ..array import Array
from ..array.base import array_class_for, unchecked_new_source
from ..layout import Layout, layout_of
from ..layout_rules import CountRule, LayoutRules, SizeRule, clear_rule_cache, rules_of

V4 = 3
V5 = 4
MAX_DEPTH = 64

# the readers of one offset (int32 or int64, little-endian) at a byte position
OFFSET_READERS = {4: struct.Struct("<i").unpack_from, 8: struct.Struct("<q").unpack_from}


def join_path(path: str, name: str) -> str:
    """``path.name`` (or ``name`` at the top): a field path as errors name it."""
    return f"{path}.{name}" if path else name


class PlanNode:
    """One field of a schema, compiled once: everything the per-batch walk asks of it.

    Compiling the type tree up front keeps the per-batch loop free of layout lookups and
    type tests, which is what small batches and wide schemas pay for.
    """

    __slots__ = (
        "_leaves",
        "array_class",
        "children",
        "dictionary_id",
        "dtype",
        "has_validity",
        "is_union",
        "layout",
        "leaf",
        "leaf_key",
        "list_size",
        "name",
        "nbuf",
        "path",
        "rule",
        "rules",
        "sizes",
        "specs",
        "take",
        "unbacked",
        "v4_validity",
        "variadic",
    )

    def __init__(
        self,
        dtype: t.DataType,
        path: tuple[int, ...],
        name: str,
        dictionary_ids: dict[tuple[int, ...], int],
        depth: int = 0,
    ) -> None:
        if depth > MAX_DEPTH:
            raise E.LimitExceeded(
                f"expected type nesting of at most {MAX_DEPTH} levels, found more",
                field_path=name,
            )
        storage = t.storage_of(dtype)
        lay = layout_of(storage)
        self.dtype = dtype
        self.path = path
        self.name = name
        self.layout = lay
        self.specs = lay.buffers
        self.nbuf = lay.num_buffers
        self.has_validity = lay.has_validity
        self.variadic = lay.variadic
        self.rule = lay.children
        self.is_union = isinstance(storage, t.UnionType)
        # V4 gives every type but null a validity buffer; V5 dropped it for the types whose
        # layout has none (unions, run-end encoded)
        self.v4_validity = not lay.has_validity and not isinstance(storage, t.NullType)
        # types whose length no buffer of their own backs: their lengths share one budget
        self.unbacked = isinstance(storage, (t.NullType, t.RunEndEncodedType)) or (
            isinstance(storage, t.StructType) and not storage.fields
        )
        self.list_size = getattr(storage, "list_size", 0)
        self.array_class = array_class_for(dtype)
        # the layout's structural rules (quiver.layout_rules): a size rule per buffer,
        # the offsets rule and the children rule
        self.rules = rules = rules_of(lay)
        self.sizes = rules.sizes
        leaf_key = _leaf_key(lay, rules)
        self.dictionary_id: int | None = None
        self.children: list[PlanNode] = []
        self._leaves: Any = None  # leaf_program's cache, on a plan's first node
        if isinstance(storage, t.DictionaryType):
            self.dictionary_id = dictionary_ids.get(path)
            if self.dictionary_id is None:
                raise E.DictionaryError(
                    "expected a dictionary id for this dictionary-encoded field, found none",
                    field_path=name,
                )
        else:
            self.children = [
                PlanNode(f.type, (*path, i), join_path(name, f.name), dictionary_ids, depth + 1)
                for i, f in enumerate(storage.fields)
            ]
        # a plain leaf: validity and values or bits, or validity, offsets and data; no
        # children, no dictionary, no V4 union slot
        self.leaf = (
            not self.children
            and self.dictionary_id is None
            and not self.variadic
            and not self.v4_validity
            and not self.unbacked
            and leaf_key is not None
        )
        # what a leaf's generated code depends on (its class and type are bound, not text)
        self.leaf_key = leaf_key if self.leaf else None
        # the leaf's checks and array, generated from node_checks (None: not a leaf; a
        # nested node's take is made when the steady path asks for it)
        # (take: this node's generated reader, body buffers to Array; not Arrow's take kernel)
        self.take: Callable[..., Array | None] | None = node_take(self) if self.leaf else None


# the buffer layouts of plain leaves: fixed width, boolean, binary and string
_LEAF_KINDS = {("validity", "values"), ("validity", "bits"), ("validity", "offsets", "data")}


def _leaf_key(lay: Layout, rules: LayoutRules) -> tuple | None:
    """For the buffer layout of a plain leaf (no children, no variadic buffers): what its
    generated code depends on, ``(kinds, rules)``; else None."""
    kinds = tuple(spec.kind for spec in lay.buffers)
    if kinds in _LEAF_KINDS and lay.children == "none" and not lay.variadic:
        return kinds, rules
    return None


def preorder(
    plan: Sequence[PlanNode], buffer_index: int = 0
) -> Iterator[tuple[PlanNode, int, int]]:
    """Every node of ``plan`` in the message's order (depth-first pre-order), with the
    index of its FieldNode and of its first Buffer, counting its fixed buffers only and
    starting from buffer ``buffer_index`` (variadic buffers and V4 union slots vary per
    batch: where a plan has them, the indices after them are the walk's to find)."""
    stack = list(reversed(plan))
    i_node, i_buf = 0, buffer_index
    while stack:
        node = stack.pop()
        yield node, i_node, i_buf
        i_node += 1
        i_buf += node.nbuf
        stack.extend(reversed(node.children))


def compile_plan(
    schema: t.Schema, dictionary_ids: dict[tuple[int, ...], int]
) -> list[PlanNode]:
    """The compiled plan of every top-level field of ``schema``."""
    return [PlanNode(f.type, (i,), f.name, dictionary_ids) for i, f in enumerate(schema.fields)]


# -- a node's checks, written once as text ---------------------------------------------

def has_checks(node: PlanNode) -> bool:
    """Whether :func:`node_checks` states all of ``node``'s own structural checks: a plain
    leaf, or a node with children whose layout's rules all have a generated form
    (:attr:`quiver.layout_rules.LayoutRules.generated`: lists, large lists, maps, structs,
    fixed-size lists) and a validity bitmap, and nothing out of the ordinary (no union,
    dictionary, V4 slot, variadic buffers)."""
    if node.leaf:
        return True
    return (
        node.rules.generated
        and node.has_validity
        and not node.is_union
        and not node.unbacked
        and not node.v4_validity
        and node.dictionary_id is None
        and not node.variadic
        and bool(node.children)
    )


def check_key(node: PlanNode) -> tuple:
    """What the text of ``node``'s checks and array (:func:`node_checks`) depends on,
    for a node :func:`has_checks` accepts: a leaf's ``leaf_key``; a nested node's child
    rule, layout rules, list size and number of children."""
    if node.leaf:
        return node.leaf_key  # type: ignore[return-value]
    return (node.rule, node.rules, node.list_size, len(node.children))


def node_checks(
    node: PlanNode,
    n: str,
    z: str,
    offs: Sequence[str],
    lens: Sequence[str],
    need: Callable[[SizeRule], str],
    at: str,
    children: Sequence[str] = (),
) -> tuple[list[str], list[str], list[str]]:
    """The structural checks of ``node`` (one :func:`has_checks` accepts) as Python text,
    generated from its layout's rule objects (:func:`quiver.layout_rules.rules_of`):
    ``(bounds, sizes, offsets)``.

    The names are those of the generated code: ``n`` and ``z`` its length and null count
    (the count rule is the caller's to check: :func:`count_source`), ``offs`` / ``lens``
    its buffers' offsets and lengths (all >= 0) in a body of ``body_len`` bytes,
    ``need(rule)`` the text of the bytes a size rule needs for ``n`` values, ``at`` the
    text of the position of the offsets buffer in the bytes ``raw`` that the readers
    ``_r4`` / ``_r8`` read, and ``children`` the text of each child's length (a nested node's).

    ``bounds``: conditions, any true when a buffer ends outside the body (the IPC walk's
    own check).  ``sizes`` (for ``n > 0``): conditions, any true when a size rule or the
    children rule is broken.  ``offsets`` (for ``n > 0``): statements that return None
    when the offsets rule is broken.  The body loader and ``validate_array`` run the same
    rule objects interpreted, and word the error.
    """
    if not has_checks(node):
        raise ValueError(f"expected a plain leaf or a list, map, struct or fixed-size list "
                         f"node, found {node.dtype}")  # fmt: skip
    rules = node.rules
    bounds = [f"{o} + {ln} > body_len" for o, ln in zip(offs, lens)]
    sizes = [
        cond
        for rule, ln in zip(rules.sizes, lens)
        if (cond := rule.source(ln, n, z, need)) is not None
    ]
    if rules.children is not None:
        sizes += rules.children.source(n, children, node.list_size)
    offsets: list[str] = []
    off = rules.offsets
    if off is not None:
        limit = children[0] if off.within is None else lens[off.within]
        w = off.width
        offsets = [
            f"f = _r{w}(raw, {at})[0]",
            f"g = _r{w}(raw, {at} + {n} * {w})[0]",
            f"if {off.source('f', 'g', limit)}:",
            "  return None",
        ]
    return bounds, sizes, offsets


def count_source(node: PlanNode, n: str, z: str) -> str:
    """The count rule of ``node`` (:attr:`quiver.layout_rules.LayoutRules.counts`) as a
    Python condition over its length ``n`` and null count ``z``, true when broken; the
    signs are left out (the callers have every number >= 0)."""
    return node.rules.counts.source(n, z, signed=False)


_COUNT_CODE: dict[int, tuple[CountRule, Any, Any]] = {}


def count_checks(rule: CountRule) -> tuple[Callable[[Sequence[int], int], int], Any]:
    """The count rule ``rule`` generated for a message's FieldNodes: ``(first_bad,
    bad_rows)``.  ``first_bad(flat, count)``: the index of the first of ``count`` nodes
    (length, null count, ... flat) that breaks it, or -1; ``bad_rows(lengths, nulls)``:
    the same over numpy arrays, a boolean array (for wide batches)."""
    hit = _COUNT_CODE.get(id(rule))
    if hit is not None and hit[0] is rule:
        return hit[1], hit[2]
    text = (
        "def first_bad(flat, count):\n"
        "  for i in range(count):\n"
        "    n = flat[2 * i]\n"
        "    z = flat[2 * i + 1]\n"
        f"    if {rule.source('n', 'z')}:\n"
        "      return i\n"
        "  return -1\n"
        "def bad_rows(n, z):\n"
        f"  return {rule.vector_source('n', 'z')}\n"
    )
    names: dict[str, Any] = {}
    exec(compile(text, "<quiver.ipc.plan counts>", "exec"), names)
    _COUNT_CODE[id(rule)] = (rule, names["first_bad"], names["bad_rows"])
    return names["first_bad"], names["bad_rows"]


_TAKE_CODE: dict[tuple, Any] = {}
_TAKE_CODE_LOCK = threading.Lock()


def _take_source(node: PlanNode) -> str:
    """The text of ``make(C, T)``, which returns the ``take`` of a node like ``node``:
    ``take(body, raw, base, body_len, n, z, s, j)`` checks the array of length ``n``
    and null count ``z`` (``0 <= z``) whose buffers' offsets and lengths are
    ``s[j], s[j + 1], ...`` (all >= 0) in ``body`` (a uint8 array of ``body_len`` bytes,
    also at ``base`` in ``raw``) and returns it, or None.  A nested node's take has one
    more argument, ``kids``: the tuple of its children's arrays."""
    k = node.nbuf
    offs = [f"o{m}" for m in range(k)]
    lens = [f"l{m}" for m in range(k)]
    kids = [f"len(kids[{m}])" for m in range(len(node.children))]
    bounds, sizes, offsets = node_checks(
        node, "n", "z", offs, lens, lambda rule: f"({rule.need_source('n')})",
        f"base + {offs[1]}" if k > 1 else "", kids,
    )  # fmt: skip
    views = ["body[o0 : o0 + l0] if z else None"]
    views += [f"body[{o} : {o} + {ln}]" for o, ln in zip(offs[1:], lens[1:])]
    unpack = "".join(
        f"    {o} = s[j + {2 * m}]\n    {ln} = s[j + {2 * m + 1}]\n"
        for m, (o, ln) in enumerate(zip(offs, lens))
    )
    build = unchecked_new_source("a", "C", "T", "n", f"({', '.join(views)},)", "z",
                                 "kids" if kids else "()")  # fmt: skip
    return (
        "def make(C, T):\n"
        f"  def take(body, raw, base, body_len, n, z, s, j{', kids' if kids else ''}):\n"
        + unpack
        + f"    if {count_source(node, 'n', 'z')} or {' or '.join(bounds)}:\n"
        "      return None\n"
        "    if n:\n"
        f"      if {' or '.join(sizes)}:\n"
        "        return None\n"
        + "".join(f"      {line}\n" for line in offsets)
        + "".join(f"    {line}\n" for line in build.splitlines())
        + "    return a\n"
        "  return take\n"
    )


_TAKES: dict[int, tuple[t.DataType, Any]] = {}


def node_take(node: PlanNode) -> Callable[..., Array | None]:
    """The generated ``take`` of ``node`` (one :func:`has_checks` accepts; see
    :func:`_take_source`), bound once per type object (a leaf's is its ``take``)."""
    hit = _TAKES.get(id(node.dtype))
    return hit[1] if hit is not None and hit[0] is node.dtype else _make_take(node)


def clear_generated() -> None:
    """Forget every rule and generated ``take`` derived so far, so that a change to the
    rule tables of :mod:`quiver.layout_rules` reaches plans compiled afterwards (the
    steady path's code cache is keyed by these rules, so it follows)."""
    clear_rule_cache()
    _COUNT_CODE.clear()
    with _TAKE_CODE_LOCK:
        _TAKE_CODE.clear()
    _TAKES.clear()


def _make_take(node: PlanNode) -> Callable[..., Array | None]:
    """The generated ``take`` of ``node`` (see :func:`_take_source`); the code is
    compiled once per :func:`check_key` and bound to the node's class and type, once per
    type object (a decoded schema shares one object among fields of one type)."""
    dtype = node.dtype
    key = check_key(node)
    make = _TAKE_CODE.get(key)
    if make is None:
        names: dict[str, Any] = {
            "_object_new": object.__new__,
            "_r4": OFFSET_READERS[4],
            "_r8": OFFSET_READERS[8],
        }
        exec(compile(_take_source(node), "<quiver.ipc.plan take>", "exec"), names)
        make = names["make"]
        with _TAKE_CODE_LOCK:
            _TAKE_CODE[key] = make
    take = make(node.array_class, dtype)
    if len(_TAKES) >= 4096:
        _TAKES.clear()  # a long-lived process meets many schemas: keep the recent ones
    _TAKES[id(dtype)] = (dtype, take)  # the type kept alive: its id stays its own
    return take


def leaf_program(plan: Sequence[PlanNode]) -> tuple[tuple[tuple[Any, int], ...], int] | None:
    """For a plan of plain leaves only: each column's ``take`` with its count of Buffer
    numbers (two per buffer), and the count of all; None otherwise (cached on the plan's
    first node, for that plan object)."""
    if not plan:
        return None
    head = plan[0]
    cached = head._leaves
    if cached is not None and cached[0] is plan:  # the same plan object as last time
        return cached[1]
    found = None
    if all(node.leaf for node in plan):
        found = (tuple((n.take, 2 * n.nbuf) for n in plan), sum(n.nbuf for n in plan))
    head._leaves = (plan, found)
    return found


def take_leaves(
    takes: Sequence[tuple[Any, int]],
    length: int,
    nodes: Sequence[int],
    specs: Sequence[int],
    body: Any,
    raw: Any,
    base: int,
    body_len: int,
) -> list[Array] | None:
    """The columns of a batch of plain leaves of ``length`` rows, from its FieldNode and
    Buffer numbers flat (``nodes``: length, null count, ...; ``specs``: offset, length,
    ...; all >= 0 and as many as ``takes`` reads), or None at the first column that is
    not what its ``take`` accepts or not of the batch's length."""
    out: list[Array] = []
    append = out.append
    i = j = 0
    for take, step in takes:
        n = nodes[i]
        if n != length:
            return None
        column = take(body, raw, base, body_len, n, nodes[i + 1], specs, j)
        if column is None:
            return None
        append(column)
        i += 2
        j += step
    return out
