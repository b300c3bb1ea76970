"""The steady-state fast path: batch after batch of one shape, each read in one step.

A stream of many small batches spends most of its time on per-message overhead: framing,
walking the flatbuffer, checking nodes and buffers, building the array objects.  Once a
RecordBatch message of a schema of plain leaf columns (fixed width, boolean, binary,
string), or of lists, large lists, maps, structs and fixed-size lists of them, has been
read the general way, :class:`SteadyBatches` remembers its metadata's
:class:`~quiver.ipc.metadata.RecordBatchShape`.  A later message whose prefix and
metadata bytes match that shape everywhere but the per-batch numbers is read here in one
function: the numbers come out of one ``struct`` call, the structural checks run on plain
ints, and the arrays are views of the body.  A plan gets a loop over each node's generated
``take`` (children before their parent) and then generated code for the whole batch, both
from the checks the plan nodes carry (:func:`quiver.ipc.plan.node_checks`).

Anything out of the ordinary (another size, other bytes, a negative number, a buffer
outside the body, a column too short, offsets out of range, a message split across
chunks) returns None, and the general path reads the message again and reports the problem
with its field path.  So this path never raises and never accepts what the general path
would refuse.
"""

from __future__ import annotations

import functools
import struct
import threading
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from .. import types as t
from ..array.base import unchecked_new_source
from ..batch import RecordBatch
from ..layout_rules import SizeRule
from . import metadata as md
from .framing import PREFIX_PAIR, expected_prefix
from .plan import (
    OFFSET_READERS,
    PlanNode,
    check_key,
    count_source,
    has_checks,
    node_checks,
    node_take,
    preorder,
    take_leaves,
)

_PREFIX = PREFIX_PAIR.unpack_from
# record batches a reader reads the general way that may set up the fast path
STEADY_TRIES = 4
# schemas of up to this many columns (counting nested ones' children) get generated
# straight-line code once the loop has taken COMPILE_AFTER batches (compiling costs about
# 0.1-0.2 ms per column, so short streams never pay it); a schema layout compiled before
# is reused at once
COMPILE_MAX_COLUMNS = 64
COMPILE_AFTER = 64
# schemas with nested columns: later, as the walk of their loop costs less beside the
# compiling (100-row batches of 6 columns, 13 nodes: 19 us per batch in the loop, 13 in
# the code, 2 ms to compile)
COMPILE_AFTER_NESTED = 256
_CODE_CACHE_SIZE = 32
_code_cache: dict[tuple, Any] = {}
_code_cache_lock = threading.Lock()


class SteadyBatches:
    """Reads RecordBatch messages of one known shape (see the module docstring).

    ``take(chunk)`` returns the batch at the start of ``chunk`` and the bytes its message
    spans, or None.  It starts as a loop over the plan; for schemas of up to
    :data:`COMPILE_MAX_COLUMNS` columns (counting nested ones' children) it becomes
    generated straight-line code after :data:`COMPILE_AFTER` batches
    (:data:`COMPILE_AFTER_NESTED` with nested columns), or at once when code for the
    same layout is cached.
    """

    # take: reads one message of this shape (a memoryview from its start) into a batch, or None
    __slots__ = ("head", "take")

    def __init__(
        self,
        shape: md.RecordBatchShape,
        plan: Sequence[PlanNode],
        schema: t.Schema,
        *,
        max_body_size: int,
        max_unbacked_rows: int,
    ) -> None:
        self.head = 8 + shape.size  # prefix and metadata: where the body starts
        setup = _Setup(shape, plan, schema, max_body_size, max_unbacked_rows)
        self.take: Callable[[memoryview], tuple[RecordBatch, int] | None]
        nodes = shape.slots[2]  # two numbers per node of the plan (build checked)
        if (nodes.stop - nodes.start) // 2 > COMPILE_MAX_COLUMNS:
            self.take = _take_loop(setup)
            return
        key = _code_key(setup)
        if key in _code_cache:
            self.take = _take_compiled(setup, key)
            return
        loop = _take_loop(setup)
        after = COMPILE_AFTER if all(node.leaf for node in plan) else COMPILE_AFTER_NESTED
        count = 0

        def take(chunk: memoryview) -> tuple[RecordBatch, int] | None:
            nonlocal count
            count += 1
            if count == after:  # later calls go to the compiled take directly
                self.take = _take_compiled(setup, key)
            return loop(chunk)

        self.take = take

    @classmethod
    def build(
        cls,
        metadata: Any,
        plan: Sequence[PlanNode],
        schema: t.Schema,
        *,
        max_body_size: int,
        max_unbacked_rows: int,
    ) -> SteadyBatches | None:
        """The fast path for messages shaped like ``metadata`` (bytes of a RecordBatch
        message just read the general way), or None when the plan or the message does not
        qualify: at least one column, each a plain leaf, or a list, large list, map,
        struct or fixed-size list of such columns (at any depth)."""
        if not plan or not all(_qualifies(n) for n in plan):
            return None
        shape = md.record_batch_shape(metadata)
        if shape is None:
            return None
        _, _, nodes, buffers = shape.slots
        # the vector counts are part of the fixed bytes: they hold for every match
        every = [node for node, _, _ in preorder(plan)]
        if nodes.stop - nodes.start != 2 * len(every) or (
            buffers.stop - buffers.start != 2 * sum(n.nbuf for n in every)
        ):
            return None
        return cls(
            shape,
            plan,
            schema,
            max_body_size=max_body_size,
            max_unbacked_rows=max_unbacked_rows,
        )


def _qualifies(node: PlanNode) -> bool:
    """Whether the plan states every check of ``node`` and its descendants as text."""
    return node.leaf or (has_checks(node) and all(_qualifies(c) for c in node.children))


# -- the makers of ``take`` ------------------------------------------------------------
#
# All read the numbers of a message whose prefix and fixed bytes match the shape (all
# >= 0, counts fixed by the shape) and return None at the first thing the general path
# would refuse: a body beyond the chunk or the limits, a batch length beyond what the body
# can back, a column length other than the batch's, a null count above a length, a buffer
# outside the body, a buffer too small for the length, offsets of a binary column, list or
# map that do not start at >= 0 and end inside its data or child, a struct's or
# fixed-size list's child too short.


class _Setup(NamedTuple):
    """What every maker of ``take`` is given: the shape, the plan, its schema, limits."""

    shape: md.RecordBatchShape
    plan: Sequence[PlanNode]
    schema: t.Schema
    max_body: int
    max_unbacked: int


# the columns of one message: (length, nodes, specs, body, raw, base, body_len) -> the
# arrays, or None; nodes and specs are the FieldNode and Buffer numbers flat, the body is
# at base in raw
Columns = Callable[[int, tuple, tuple, np.ndarray, memoryview, int, int], list | None]


def _take_with(setup: _Setup, columns: Columns) -> Callable[[memoryview], Any]:
    """``take`` for the loops: a chunk whose message prefix and fixed bytes match the
    shape, with every number >= 0, a body inside the chunk and the limits and a batch
    length the body can back, gets its arrays from ``columns``; else None."""
    shape, _, schema, max_body, max_unbacked = setup
    fixed, fixed_bytes = shape.fixed.unpack_from, shape.fixed_bytes
    unpack = shape.numbers.unpack_from
    i_body, i_length, node_slice, buffer_slice = shape.slots
    head = 8 + shape.size
    prefix = expected_prefix(shape.size)

    def take(chunk: memoryview) -> tuple[RecordBatch, int] | None:
        size = len(chunk)
        if size < head or _PREFIX(chunk, 0) != prefix or fixed(chunk, 8) != fixed_bytes:
            return None
        values = unpack(chunk, 8)
        if min(values) < 0:
            return None
        body_len = values[i_body]
        length = values[i_length]
        end = head + body_len
        if size < end or body_len > max_body or length > 8 * body_len + max_unbacked:
            return None
        body = np.frombuffer(chunk, np.uint8, body_len, head)
        out = columns(length, values[node_slice], values[buffer_slice], body, chunk, head,
                      body_len)  # fmt: skip
        if out is None:
            return None
        return RecordBatch._trusted(schema, out, length), end

    return take


def _take_loop(setup: _Setup) -> Callable[[memoryview], Any]:
    """``take`` as a loop over the plan (wide schemas, and the first batches): each
    node's generated ``take`` (:func:`quiver.ipc.plan.node_take`), in one loop over the
    columns for plans of leaves (:func:`quiver.ipc.plan.take_leaves`), else a walk."""
    if all(node.leaf for node in setup.plan):
        takes = tuple((node.take, 2 * node.nbuf) for node in setup.plan)
        return _take_with(setup, functools.partial(take_leaves, takes))
    # each column's nodes in post-order (children before their parent), with their
    # places among the FieldNode and Buffer numbers (fixed by the plan's pre-order)
    places = {id(node): (2 * i, 2 * j) for node, i, j in preorder(setup.plan)}

    def ops_of(node: PlanNode, ops: list) -> None:
        i, j = places[id(node)]
        for child in node.children:
            ops_of(child, ops)
        take = node.take if node.leaf else node_take(node)
        ops.append((take, i, j, len(node.children)))

    program = []
    for node in setup.plan:
        ops: list = []
        ops_of(node, ops)
        program.append((ops[-1][1], tuple(ops)))

    def columns(
        length: int, nodes: tuple, specs: tuple, body: np.ndarray, chunk: memoryview,
        head: int, body_len: int,
    ) -> list | None:  # fmt: skip
        out = []
        for top, ops in program:
            if nodes[top] != length:
                return None
            made: list = []
            for take, i, j, kids in ops:
                if kids:
                    args = tuple(made[-kids:])
                    del made[-kids:]
                    array = take(body, chunk, head, body_len, nodes[i], nodes[i + 1], specs, j,
                                 args)  # fmt: skip
                else:
                    array = take(body, chunk, head, body_len, nodes[i], nodes[i + 1], specs, j)
                if array is None:
                    return None
                made.append(array)
            out.append(made[0])
        return out

    return _take_with(setup, columns)


def _code_key(setup: _Setup) -> tuple:
    """Everything the generated text of :func:`_take_compiled` depends on (the classes,
    types and fixed bytes it uses are passed by name, so they are not part of it)."""
    shape, plan, _, max_body, max_unbacked = setup
    return (
        shape.size,
        shape.fixed.format,
        shape.numbers.format,
        shape.slots[:2],
        (shape.slots[2].start, shape.slots[3].start),
        tuple(_layout_key(node) for node in plan),
        _as_int(max_body),
        _as_int(max_unbacked),
    )


def _layout_key(node: PlanNode) -> tuple:
    """What the generated text of a column depends on: its nodes' check keys, nested."""
    if node.leaf:
        return node.leaf_key  # type: ignore[return-value]
    return (check_key(node), tuple(_layout_key(c) for c in node.children))


def _take_compiled(setup: _Setup, key: tuple) -> Callable[[memoryview], Any]:
    """``take`` as straight-line code generated for this plan and shape (see
    :func:`_source`), compiled once per :func:`_code_key` and bound to this plan's
    classes, types and fixed bytes."""
    shape, plan, schema, max_body, max_unbacked = setup
    code = _code_cache.get(key)
    if code is None:
        code = compile(
            _source(shape, plan, max_body, max_unbacked), "<quiver.ipc.steady take>", "exec"
        )
        with _code_cache_lock:  # readers on several threads may compile at once
            while len(_code_cache) >= _CODE_CACHE_SIZE:
                del _code_cache[next(iter(_code_cache))]  # the oldest
            _code_cache[key] = code
    # the message prefix (continuation marker and metadata size) joins the fixed bytes
    fixed = struct.Struct("<8s" + shape.fixed.format[1:])
    names: dict[str, Any] = {
        "_fixed": fixed.unpack_from,
        "FIXED": (PREFIX_PAIR.pack(*expected_prefix(shape.size)), *shape.fixed_bytes),
        "_numbers": shape.numbers.unpack_from,
        "_frombuffer": np.frombuffer,
        "_u8": np.uint8,
        "_batch": RecordBatch._trusted,
        "_object_new": object.__new__,
        "SCHEMA": schema,
        "_r4": OFFSET_READERS[4],
        "_r8": OFFSET_READERS[8],
    }
    for k, (node, _, _) in enumerate(preorder(plan)):
        names[f"C{k}"] = node.array_class
        names[f"D{k}"] = node.dtype
    exec(code, names)
    return names["take"]


def _as_int(limit: float) -> int:
    """A limit as an int literal for the generated text (``math.inf`` and other
    non-ints become a bound no real input reaches)."""
    return int(min(limit, 1 << 62))


def _source(
    shape: md.RecordBatchShape, plan: Sequence[PlanNode], max_body: int, max_unbacked: int
) -> str:
    """The text of the generated ``take``.

    Each node's checks are its plan node's (:func:`quiver.ipc.plan.node_checks`, the
    text the loop's per-node ``take`` is generated from), unrolled: one tuple unpack of
    the numbers into named locals, the nodes' conditions of one kind joined into one test
    (for the columns, the bytes each size rule needs computed once; a nested node's size,
    child and offsets checks under a test of its own length), the arrays built without a
    call frame each, children before their parent.  The text holds only local names and
    ints (positions, limits, the layout's size rules); classes (``C0``...), types
    (``D0``...), readers and the fixed bytes are names bound by :func:`_take_compiled`,
    never text; node ``k`` in the message's order has ``n{k}``, ``z{k}``, ``C{k}``,
    ``D{k}`` and array ``a{k}``.
    """
    i_body, i_length, node_slice, buffer_slice = shape.slots
    head = 8 + shape.size
    count = 2 + (node_slice.stop - node_slice.start) + (buffer_slice.stop - buffer_slice.start)
    targets = [""] * count  # local names of the numbers, in their byte order
    targets[i_body] = "body_len"
    targets[i_length] = "length"
    counts, bounds, sizes, offsets, arrays = [], [], [], [], []
    inner: list[str] = []  # the nested nodes' checks for n > 0, each under its own test
    # one local per distinct size formula: its name and a rule that has it
    needs: dict[tuple[int, int, int], tuple[str, SizeRule]] = {}

    def need(rule: SizeRule) -> str:
        return needs.setdefault(rule.formula, (f"w{len(needs)}", rule))[0]

    places = {id(node): (k, j) for node, k, j in preorder(plan)}  # node, first buffer

    def visit(node: PlanNode, top: bool) -> int:
        """Name node ``k``'s numbers, gather its checks and build its array after its
        children's; returns ``k``."""
        k, j = places[id(node)]
        n, z = f"n{k}", f"z{k}"
        targets[node_slice.start + 2 * k] = n
        targets[node_slice.start + 2 * k + 1] = z
        o = [f"o{j + m}" for m in range(node.nbuf)]
        ln = [f"l{j + m}" for m in range(node.nbuf)]
        for m, (a, b) in enumerate(zip(o, ln)):
            targets[buffer_slice.start + 2 * (j + m)] = a
            targets[buffer_slice.start + 2 * (j + m) + 1] = b
        kids = [visit(child, False) for child in node.children]
        at = f"{head} + {o[1]}" if node.nbuf > 1 else ""
        kid_lengths = [f"n{c}" for c in kids]
        if top:
            # n{k} == length once the first test passes: the checks are written for length
            counts.append(f"{n} != length or {count_source(node, 'length', z)}")
            n = "length"
            found = node_checks(node, n, z, o, ln, need, at, kid_lengths)
            sizes.extend(found[1])
            offsets.extend(found[2])
        else:
            counts.append(count_source(node, n, z))
            found = node_checks(
                node, n, z, o, ln, lambda rule: f"({rule.need_source(n)})", at, kid_lengths
            )
            inner.append(f"if {n}:\n  if {' or '.join(found[1])}:\n    return None\n")
            inner.extend(f"  {line}\n" for line in found[2])
        bounds.extend(found[0])
        views = [f"body[{o[0]} : {o[0]} + {ln[0]}] if {z} else None"]
        views += [f"body[{a} : {a} + {b}]" for a, b in zip(o[1:], ln[1:])]
        children = f"({''.join(f'a{c}, ' for c in kids)})"
        arrays.append(unchecked_new_source(
            f"a{k}", f"C{k}", f"D{k}", n, f"({', '.join(views)},)", z, children
        ))  # fmt: skip
        return k

    columns = ", ".join(f"a{visit(node, True)}" for node in plan)
    return (
        "def take(raw):\n"
        "  size = len(raw)\n"
        f"  if size < {head} or _fixed(raw, 0) != FIXED:\n"
        "    return None\n"
        "  values = _numbers(raw, 8)\n"
        "  if min(values) < 0:\n"
        "    return None\n"
        f"  ({', '.join(targets)},) = values\n"
        f"  end = {head} + body_len\n"
        f"  if size < end or body_len > {_as_int(max_body)} "
        f"or length > 8 * body_len + {_as_int(max_unbacked)}:\n"
        "    return None\n"
        f"  if {' or '.join(counts)}:\n"
        "    return None\n"
        f"  if {' or '.join(bounds)}:\n"
        "    return None\n"
        "  if length:\n"
        + "".join(
            f"    {name} = {rule.need_source('length')}\n" for name, rule in needs.values()
        )
        + f"    if {' or '.join(sizes)}:\n"
        "      return None\n"
        + "".join(f"    {line}\n" for line in offsets)
        + "".join(f"  {line}\n" for text in inner for line in text.splitlines())
        + f"  body = _frombuffer(raw, _u8, body_len, {head})\n"
        + "".join(f"  {line}\n" for text in arrays for line in text.splitlines())
        + f"  return _batch(SCHEMA, ({columns},), length), end\n"
    )
