"""The compiled read plan (quiver.ipc.plan): a node's checks are written once
(node_checks), and the generated ``take`` of a plain leaf, list, map, struct or
fixed-size list accepts exactly what the body loader's interpreted checks accept."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from quiver import errors as E
from quiver import types as t
from quiver.ipc import assemble as assemble_module
from quiver.ipc import body as body_module
from quiver.ipc import metadata as md
from quiver.ipc import plan as plan_module
from quiver.ipc import steady
from quiver.ipc.body import BodyLoader, LoadContext
from quiver.ipc.plan import (
    PlanNode,
    compile_plan,
    leaf_program,
    node_checks,
    node_take,
    take_leaves,
)
from quiver.layout_rules import SizeRule

LEAVES = [
    t.int8(),
    t.int64(),
    t.float32(),
    t.bool_(),
    t.string(),
    t.large_binary(),
    t.binary(3),
    t.decimal128(5, 2),
    t.timestamp("ms"),
    t.date32(),
]
NOT_LEAVES = [
    t.null(),
    t.list_(t.int32()),
    t.struct([("a", t.int32())]),
    t.string_view(),
    t.run_end_encoded(t.int32(), t.int64()),
]


def _grid_offsets(present: bool, first: int, last: int, n: int, width: int
                  ) -> np.ndarray | None:
    """``n + 1`` offsets of ``width`` bytes from ``first`` to ``last`` (evenly between;
    None when the node has no offsets)."""
    if not present:
        return None
    offsets = np.linspace(first, last, n + 1).astype(f"<i{width}")
    offsets[0], offsets[-1] = first, last
    return offsets


def _body(offsets: np.ndarray | None, size: int = 160) -> np.ndarray:
    """A body of ``size`` bytes whose bytes from 8 hold ``offsets`` (when given)."""
    body = np.zeros(size, np.uint8)
    if offsets is not None:
        raw = offsets.view(np.uint8)
        body[8 : 8 + len(raw)] = raw
    return body


def _loader_accepts(node: PlanNode, body: np.ndarray, n: int, z: int, specs: list[int]) -> bool:
    """Whether the body loader's interpreted walk (no generated take) loads the column."""
    return _loader_loads(node, body, [n, z], specs)


def _loader_loads(node: PlanNode, body: np.ndarray, nodes: list[int], specs: list[int]) -> bool:
    """Whether the body loader's interpreted walk (no generated take) loads the column of
    FieldNode numbers ``nodes`` (length, null count, ... in pre-order)."""
    batch = md.RecordBatch(
        nodes[0],
        np.asarray(nodes, "<i8").reshape(-1, 2),
        np.asarray(specs, "<i8").reshape(-1, 2),
    )
    loader = BodyLoader(batch, memoryview(body.tobytes()), 0, LoadContext())
    loader.direct = False  # the interpreted checks only
    try:
        loader.load(node, True)
    except (E.BodyError, E.MetadataError):
        return False
    return True


@pytest.mark.parametrize("dtype", LEAVES, ids=str)
def test_take_accepts_what_the_loader_accepts(dtype: t.DataType) -> None:
    node = PlanNode(dtype, (0,), "c", {})
    assert node.leaf and node.take is not None
    binary = node.nbuf == 3
    width = node.sizes[1].per
    for n, z, l0, l1, first, last, l2 in itertools.product(
        (0, 1, 5, 9),
        (0, 2),
        (0, 1, 2),
        (0, 3, 5, 10, 24, 40),
        (0, -1, 2) if binary else (0,),
        (0, 3, 7) if binary else (0,),
        (0, 5) if binary else (0,),
    ):
        if z > n:
            continue
        body = _body(_grid_offsets(binary, first, last, n, width))
        specs = [0, l0, 8, l1] + ([128, l2] if binary else [])
        got = node.take(body, body.tobytes(), 0, len(body), n, z, specs, 0)
        expected = _loader_accepts(node, body, n, z, specs)
        assert (got is not None) == expected, (dtype, n, z, l0, l1, first, last, l2)
        if got is not None:
            assert got.type == dtype and len(got) == n and got.null_count == z


NESTED = [
    t.list_(t.int8()),
    t.large_list(t.int8()),
    t.map_(t.int8(), t.int8()),
    t.struct([("a", t.int8()), ("b", t.int8())]),
    t.fixed_size_list(t.int8(), 3),
]


def _taken(node: PlanNode, body: np.ndarray, nodes: list[int], specs: list[int]) -> object:
    """The array of ``node`` from its nodes' generated takes, children first (as the
    steady loop walks them), or None at the first refusal."""
    places = [0, 0]
    raw = body.tobytes()

    def walk(node: PlanNode) -> object:
        i, j = places
        places[0] += 2
        places[1] += 2 * node.nbuf
        kids = tuple(walk(c) for c in node.children)
        if any(kid is None for kid in kids):
            return None
        take = node_take(node)
        args = (body, raw, 0, len(body), nodes[i], nodes[i + 1], specs, j)
        return take(*args, kids) if kids else take(*args)

    return walk(node)


@pytest.mark.parametrize("dtype", NESTED, ids=str)
def test_nested_take_accepts_what_the_loader_accepts(dtype: t.DataType) -> None:
    """Lists, large lists and maps (offsets into the child), structs (each child at least
    the length; the second child's length is 3) and fixed-size lists (child at least
    3 * length), with children whose own buffers hold what their lengths need."""
    node = PlanNode(dtype, (0,), "c", {})
    assert not node.leaf and node.take is None
    lists = node.rule == "offsets"
    width = node.sizes[1].per if lists else 0
    for n, z, l0, l1, first, last, c in itertools.product(
        (0, 1, 3, 9),
        (0, 2),
        (0, 1, 2),
        (0, 4, 16, 40, 80) if lists else (0,),
        (0, -1, 2) if lists else (0,),
        (0, 3, 7) if lists else (0,),
        (0, 3, 7, 27),
    ):
        if z > n:
            continue
        body = _body(_grid_offsets(lists, first, last, n, width))
        nodes, specs = [n, z], [0, l0] + ([8, l1] if lists else [])
        leaf = [0, 0, 128, 32]  # an int8 child: no nulls, 32 values
        if node.rule == "same":  # the struct: children of lengths c and 3
            nodes += [c, 0, 3, 0]
            specs += leaf * 2
        elif isinstance(dtype, t.MapType):  # entries, keys, items
            nodes += [c, 0, c, 0, c, 0]
            specs += [0, 0] + leaf * 2
        else:
            nodes += [c, 0]
            specs += leaf
        got = _taken(node, body, nodes, specs)
        expected = _loader_loads(node, body, nodes, specs)
        assert (got is not None) == expected, (dtype, n, z, l0, l1, first, last, c)
        if got is not None:
            assert got.type == dtype and len(got) == n and got.null_count == z
            assert [len(kid) for kid in got.children] == [c, 3][: len(node.children)]


def _formula(rule: SizeRule) -> str:
    """A size rule's formula as the text of the bytes it needs (what the tests read)."""
    return str(rule.formula)


def test_node_checks_state_the_child_rules() -> None:
    struct = PlanNode(t.struct([("a", t.int8()), ("b", t.int8())]), (0,), "s", {})
    bounds, sizes, offsets = node_checks(struct, "n", "z", ["o0"], ["l0"], _formula, "", ["p", "q"])
    assert bounds == ["o0 + l0 > body_len"] and offsets == []
    assert sizes == ["(z and l0 < (1, 7, 8))", "p < n", "q < n"]
    fixed = PlanNode(t.fixed_size_list(t.int8(), 4), (0,), "f", {})
    _, sizes, _ = node_checks(fixed, "n", "z", ["o0"], ["l0"], _formula, "", ["c"])
    assert sizes[-1] == "c < n * 4"
    lst = PlanNode(t.large_list(t.int8()), (0,), "l", {})
    _, sizes, offsets = node_checks(lst, "n", "z", ["a", "b"], ["x", "y"], _formula, "at", ["c"])
    assert sizes == ["(z and x < (1, 7, 8))", "y < (8, 1, 1)"]
    assert offsets[0] == "f = _r8(raw, at)[0]" and "g > c" in offsets[2]
    with pytest.raises(ValueError, match="expected a plain leaf or a list"):
        node_checks(PlanNode(t.list_view(t.int8()), (0,), "v", {}), "n", "z", [], [], str, "")


@pytest.mark.parametrize("dtype", LEAVES[:3], ids=str)
def test_take_refuses_buffers_outside_the_body(dtype: t.DataType) -> None:
    node = PlanNode(dtype, (0,), "c", {})
    body = _body(None, 64)
    assert node.take(body, body, 0, 64, 1, 0, [0, 0, 60, 8], 0) is None
    assert node.take(body, body, 0, 64, 1, 0, [0, 0, 56, 8], 0) is not None
    assert node.take(body, body, 0, 64, 1, 2, [0, 1, 56, 8], 0) is None  # nulls > length


@pytest.mark.parametrize("dtype", NOT_LEAVES, ids=str)
def test_only_plain_leaves_get_a_take(dtype: t.DataType) -> None:
    node = PlanNode(dtype, (0,), "c", {})
    assert not node.leaf and node.take is None and node.leaf_key is None


def test_a_type_object_binds_one_take() -> None:
    shared = t.int32()
    schema = t.schema([("a", shared), ("b", shared), ("c", t.int32())])
    plan = compile_plan(schema, {})
    assert plan[0].take is plan[1].take
    assert plan[0].leaf_key == plan[2].leaf_key


def test_leaf_checks_are_generated_from_the_size_rules() -> None:
    node = PlanNode(t.string(), (0,), "s", {})
    bounds, sizes, offsets = node_checks(
        node, "n", "z", ["o0", "o1", "o2"], ["l0", "l1", "l2"], lambda r: f"need{r.formula}", "at"
    )
    assert bounds == ["o0 + l0 > body_len", "o1 + l1 > body_len", "o2 + l2 > body_len"]
    # validity only with nulls; the offsets buffer for n + 1 offsets; data: nothing
    assert sizes == ["(z and l0 < need(1, 7, 8))", "l1 < need(4, 1, 1)"]
    assert offsets[0] == "f = _r4(raw, at)[0]" and "g > l2" in offsets[2]
    fixed = PlanNode(t.int16(), (0,), "i", {})
    _, sizes, offsets = node_checks(fixed, "n", "z", ["a", "b"], ["x", "y"], _formula, "at")
    assert sizes == ["(z and x < (1, 7, 8))", "y < (2, 0, 1)"] and offsets == []


def test_the_steady_source_inlines_each_nodes_checks() -> None:
    schema = t.schema([("s", t.string()), ("i", t.int64())])
    plan = compile_plan(schema, {})
    shape = _shape_of(schema)
    text = steady._source(shape, plan, 1 << 30, 1 << 24)
    for k, node in enumerate(plan):
        bounds, _, _ = node_checks(
            node, "length", f"z{k}", [f"o{2 * k + m}" for m in range(node.nbuf)],
            [f"l{2 * k + m}" for m in range(node.nbuf)], _formula, "at",
        )  # fmt: skip
        for cond in bounds:
            assert cond in text
    assert "_r4(raw, " in text  # the string column's offsets, read as node_checks writes


def _shape_of(schema: t.Schema) -> md.RecordBatchShape:
    import quiver as qv
    from quiver.ipc import BufferOutputStream, new_stream
    from quiver.ipc.framing import read_frame

    sink = BufferOutputStream()
    batch = qv.record_batch({"s": qv.array(["a", None]), "i": qv.array([1, 2])})
    with new_stream(sink, schema) as w:
        w.write_batch(batch)
    data = memoryview(sink.getvalue())
    pos = 0
    while True:
        metadata, body_start, _ = read_frame(data, pos)
        message = md.decode_message(metadata)
        if isinstance(message.header, md.RecordBatch):
            shape = md.record_batch_shape(metadata)
            assert shape is not None
            return shape
        pos = body_start + message.body_length


def test_take_leaves_refuses_a_column_of_another_length() -> None:
    plan = compile_plan(t.schema([("a", t.int8()), ("b", t.int8())]), {})
    program = leaf_program(plan)
    assert program is not None
    takes, num_buffers = program
    assert num_buffers == 4
    body = _body(None, 64)
    specs = [0, 0, 8, 8, 0, 0, 16, 8]
    assert take_leaves(takes, 3, [3, 0, 3, 0], specs, body, body, 0, 64) is not None
    assert take_leaves(takes, 3, [3, 0, 2, 0], specs, body, body, 0, 64) is None
    assert leaf_program(compile_plan(t.schema([("l", t.list_(t.int8()))]), {})) is None


def test_the_old_import_paths_still_work() -> None:
    assert body_module.PlanNode is plan_module.PlanNode
    assert body_module.compile_plan is plan_module.compile_plan
    assert body_module.V4 == plan_module.V4 and body_module.V5 == plan_module.V5
    for name in ("Assembled", "assemble", "assemble_body", "compile_write_plan", "layout_body"):
        assert getattr(body_module, name) is getattr(assemble_module, name)


def test_leaf_program_is_cached_per_plan_object() -> None:
    plan = compile_plan(t.schema([("a", t.int8()), ("b", t.string())]), {})
    first = leaf_program(plan)
    assert first is not None and leaf_program(plan) is first
    shorter = plan[:1]  # another plan with the same first node
    found = leaf_program(shorter)
    assert found is not None and len(found[0]) == 1 and found[1] == 2
    assert leaf_program([plan[0], PlanNode(t.list_(t.int8()), (1,), "l", {})]) is None
