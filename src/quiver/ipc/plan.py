"""The compiled read plan of a schema: one :class:`PlanNode` per field, built once.

A node carries everything the per-batch walk asks of its field (layout, size rules, child
rule, dictionary id) and, for a plain leaf (fixed width, boolean, binary, string) and for a
list, large list, map, struct or fixed-size list, its structural checks written once:
:func:`node_checks` states them as Python conditions, from the node's layout, size rules
and child rule.  From that text come

- the node's ``take`` (:func:`node_take`): a small function generated per kind of node
  that checks one array's numbers (and a nested node's children's lengths) and builds
  the array (the body loader's fast branch and its all-leaves loop call a leaf's; both
  loops of the steady path call them all), and
- the steady path's straight-line code for a whole batch (:mod:`quiver.ipc.steady`),
  which inlines the same conditions for every node.

The general loader (:mod:`quiver.ipc.body`) interprets the same size rules one buffer at a
time and the child rules through :func:`quiver.layout.children_problem`, and words the
error; anything a ``take`` refuses goes there.
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Callable, Sequence
from typing import Any

from .. import errors as E
from .. import types as t
from ..array import Array
from ..array.base import array_class_for, unchecked_new_source
from ..layout import BufferSpec, Layout, layout_of, required_bytes

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
        # per buffer: (bytes per slot, extra slots, divisor, optional) so that the bytes a
        # buffer needs for n values are (n + extra) * per // divisor (see _size_rule)
        self.sizes, leaf_key = _size_rules(lay)
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


_SIZE_RULES: dict[int, tuple[Layout, tuple]] = {}


def _size_rules(lay: Layout) -> tuple[tuple[tuple[int, int, int, bool], ...], tuple | None]:
    """:func:`_size_rule` of each buffer of ``lay``, and for the buffer layout of a plain
    leaf (no children, no variadic buffers) its key ``(kinds, size rules)``, computed once
    per layout object (layout_of keeps one object per type, so a compiled plan reuses
    them)."""
    hit = _SIZE_RULES.get(id(lay))
    if hit is not None and hit[0] is lay:
        return hit[1]
    rules = tuple(_size_rule(spec, lay) for spec in lay.buffers)
    kinds = tuple(spec.kind for spec in lay.buffers)
    plain = kinds in _LEAF_KINDS and lay.children == "none" and not lay.variadic
    found = (rules, (kinds, rules) if plain else None)
    if len(_SIZE_RULES) >= 4096:  # many distinct types: start afresh, as _TAKES does
        _SIZE_RULES.clear()
    _SIZE_RULES[id(lay)] = (lay, found)  # the layout kept alive: its id stays its own
    return found


def _size_rule(spec: BufferSpec, lay: Layout) -> tuple[int, int, int, bool]:
    """``required_bytes`` as (per, extra, divisor, optional): a buffer needs
    ``(n + extra) * per // divisor`` bytes for ``n > 0`` values (none for 0), and an
    optional one (validity) may be absent."""
    kind = spec.kind
    if kind in ("validity", "bits"):
        rule = (1, 7, 8, kind == "validity")
    elif kind == "offsets" and required_bytes(spec, lay, 1) == 2 * spec.byte_width:
        rule = (spec.byte_width, 1, 1, False)  # length + 1 entries
    else:
        rule = (spec.byte_width, 0, 1, False)  # values, views, sizes, type ids; data: 0
    for n in (1, 2, 9, 17):  # the rule is the layout table's, restated for speed
        per, extra, div, _ = rule
        if (n + extra) * per // div != required_bytes(spec, lay, n):
            raise AssertionError(f"size rule for {kind} disagrees with the layout table")
    return rule


def compile_plan(
    schema: t.Schema, dictionary_ids: dict[tuple[int, ...], int]
) -> list[PlanNode]:
    """The compiled plan of every top-level field of ``schema``."""
    return [PlanNode(f.type, (i,), f.name, dictionary_ids) for i, f in enumerate(schema.fields)]


# -- a node's checks, written once as text ---------------------------------------------

# the nested layouts whose checks node_checks states: (rule, buffers) of lists, large
# lists and maps; structs; fixed-size lists.  Each has a validity bitmap.
_NESTED = {("offsets", 2), ("same", 1), ("fixed", 1)}


def has_checks(node: PlanNode) -> bool:
    """Whether :func:`node_checks` states all of ``node``'s own structural checks: a plain
    leaf, or a list, large list, map, struct or fixed-size list with children and nothing
    out of the ordinary (no union, dictionary, V4 slot, variadic buffers)."""
    if node.leaf:
        return True
    return (
        (node.rule, node.nbuf) in _NESTED
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
    rule, size rules, list size and number of children."""
    if node.leaf:
        return node.leaf_key  # type: ignore[return-value]
    return (node.rule, node.sizes, node.list_size, len(node.children))


def need_source(rule: tuple[int, ...], n: str) -> str:
    """The bytes a buffer of size rule ``rule`` needs for ``n`` (> 0) values, as text."""
    per, extra, div = rule[:3]
    count = f"({n} + {extra})" if extra else n
    if div == 8 and per == 1:
        return f"{count} >> 3"
    return f"{count} * {per} // {div}" if div != 1 else f"{count} * {per}"


def node_checks(
    node: PlanNode,
    n: str,
    z: str,
    offs: Sequence[str],
    lens: Sequence[str],
    need: Callable[[tuple[int, int, int]], str],
    at: str,
    children: Sequence[str] = (),
) -> tuple[list[str], list[str], list[str]]:
    """The structural checks of ``node`` (one :func:`has_checks` accepts) as Python text,
    from its layout, size rules and child rule: ``(bounds, sizes, offsets)``.

    The names are those of the generated code: ``n`` and ``z`` its length and null count
    (``0 <= z <= n`` is the caller's to check), ``offs`` / ``lens`` its buffers' offsets
    and lengths (all >= 0) in a body of ``body_len`` bytes, ``need(rule)`` the text of the
    bytes a size rule needs for ``n`` values, ``at`` the text of the position of the
    offsets buffer in the bytes ``raw`` that the readers ``_r4`` / ``_r8`` read, and
    ``children`` the text of each child's length (a nested node's).

    ``bounds``: conditions, any true when a buffer ends outside the body.  ``sizes``
    (for ``n > 0``): conditions, any true when a buffer is too small for ``n`` values (an
    optional validity bitmap only when there are nulls) or a child too short for them (a
    struct's children hold ``n`` values each, a fixed-size list's child ``n * list_size``).
    ``offsets`` (for ``n > 0``): statements that return None unless the first and last
    offsets of a binary leaf, list or map lie in order inside its data or its child.  The
    body loader's interpreted checks (``_check_sizes``, ``_check_offsets``,
    :func:`quiver.layout.children_problem`) are the same rules with the error worded.
    """
    if not has_checks(node):
        raise ValueError(f"expected a plain leaf or a list, map, struct or fixed-size list "
                         f"node, found {node.dtype}")  # fmt: skip
    bounds = [f"{o} + {ln} > body_len" for o, ln in zip(offs, lens)]
    sizes = []
    for (per, extra, div, optional), ln in zip(node.sizes, lens):
        if not per:
            continue  # data: nothing needed of its own (the offsets bound it below)
        cond = f"{ln} < {need((per, extra, div))}"
        sizes.append(f"({z} and {cond})" if optional else cond)
    rule = node.rule
    if rule == "same":  # a struct: each child holds n values
        sizes += [f"{child} < {n}" for child in children]
    elif rule == "fixed":  # a fixed-size list: its child holds n * list_size values
        sizes.append(f"{children[0]} < {n} * {node.list_size}")
    limit = None
    if rule == "offsets":
        limit = children[0]  # a list's or map's offsets index its child
    elif node.nbuf == 3:
        limit = lens[2]  # a binary leaf's index its data
    offsets: list[str] = []
    if limit is not None:
        per = node.sizes[1][0]
        offsets = [
            f"f = _r{per}(raw, {at})[0]",
            f"g = _r{per}(raw, {at} + {n} * {per})[0]",
            f"if f < 0 or g < f or g > {limit}:",
            "  return None",
        ]
    return bounds, sizes, offsets


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
        node, "n", "z", offs, lens, lambda rule: f"({need_source(rule, 'n')})",
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
        + f"    if z > n or {' or '.join(bounds)}:\n"
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
