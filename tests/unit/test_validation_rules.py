"""The structural rules are written once (quiver.layout_rules): a rule changed in its table
changes the generated fast path (a node's ``take``, the steady path's code), the worded
IPC walk (read from an IPC stream, or from integration JSON through the same loader) and
``validate_array`` together."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pytest

import quiver as qv
from quiver import errors as E
from quiver import ipc
from quiver import layout_rules as lr
from quiver import types as t
from quiver.array import make_array
from quiver.array.validate import validate_array
from quiver.cdata.import_array import import_array
from quiver.cdata.import_batch import import_batch
from quiver.integration.json_columns import JsonColumnLoader, JsonDictionaries, dictionary_ids
from quiver.integration.json_reader import schema_from_json
from quiver.ipc import metadata as md
from quiver.ipc import plan as plan_module
from quiver.ipc import steady
from quiver.ipc.framing import read_frame
from quiver.ipc.plan import PlanNode, compile_plan, node_checks, preorder
from quiver.layout import BufferSpec, Layout

TIGHT = "buffer 1 (values) too small: expected at least 40 bytes for 4 slots, found 32"


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """A monkeypatch whose rule changes reach plans compiled afterwards, and are gone (with
    everything generated from them) after the test."""
    monkeypatch.setattr(steady, "_code_cache", {})
    plan_module.clear_generated()
    yield monkeypatch
    monkeypatch.undo()
    plan_module.clear_generated()


def _tighten_values(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fixed-width values buffer needs one value more than its slots (a made-up rule)."""
    def one_more(i: int, spec: BufferSpec, lay: Layout) -> lr.SizeRule:
        return lr.SizeRule(i, spec.kind, spec.byte_width, 1)

    monkeypatch.setitem(lr.SIZE_RULES, "values", one_more)
    plan_module.clear_generated()


def _stream(batches: int = 3) -> bytes:
    """A stream of int64 batches of 4 rows: values buffers of exactly 32 bytes."""
    batch = qv.record_batch({"c": qv.array([1, 2, 3, 4], type=t.int64())})
    sink = ipc.BufferOutputStream()
    with ipc.new_stream(sink, batch.schema) as w:
        for _ in range(batches):
            w.write_batch(batch)
    return bytes(sink.getvalue())


def _first_batch(data: bytes) -> tuple[memoryview, md.RecordBatchShape, memoryview]:
    """The first RecordBatch message of ``data``: (from its prefix on, its shape, body)."""
    mv = memoryview(data)
    pos = 0
    while True:
        metadata, body_start, _ = read_frame(mv, pos)
        message = md.decode_message(metadata)
        if isinstance(message.header, md.RecordBatch):
            shape = md.record_batch_shape(metadata)
            assert shape is not None
            return mv[pos:], shape, mv[body_start : body_start + message.body_length]
        pos = body_start + message.body_length


def _paths(data: bytes) -> dict[str, object]:
    """What each path makes of the first batch of ``data`` (a stream of one int64
    column): the leaf's generated take, the steady path's generated code, the worded IPC
    walk and validate_array (an array, or the words of the error)."""
    schema = t.schema([("c", t.int64())])
    chunk, shape, body = _first_batch(data)
    node = PlanNode(t.int64(), (0,), "c", {})
    raw = np.frombuffer(body, np.uint8)
    out: dict[str, object] = {}
    out["take"] = node.take(raw, body, 0, len(body), 4, 0, [0, 0, 0, 32], 0)
    setup = steady._Setup(shape, compile_plan(schema, {}), schema, 1 << 30, 1 << 24)
    code = steady._take_compiled(setup, steady._code_key(setup))
    out["steady"] = code(chunk)
    try:
        out["ipc"] = ipc.open_stream(data).read_all()
    except E.BodyError as exc:
        assert exc.field_path == "c" and exc.message_index == 1 and exc.offset is not None
        out["ipc"] = exc.reason
    out["validate"] = _validated(make_array(t.int64(), 4, [None, np.zeros(32, np.uint8)]))
    return out


def _validated(arr: object) -> object:
    """``arr`` when validate_array accepts it as column ``c``, else the words of its
    error (which must name the column)."""
    try:
        validate_array(arr, path="c")
    except E.ArrowInvalid as exc:
        assert exc.field_path == "c"
        return exc.reason
    return arr


def test_every_path_accepts_the_exact_buffer_under_the_real_rule(fresh) -> None:
    found = _paths(_stream())
    assert found["take"] is not None and found["steady"] is not None
    assert found["ipc"].num_rows == 12  # type: ignore[union-attr]
    assert found["validate"] is not None and not isinstance(found["validate"], str)


def test_one_tightened_rule_changes_every_path(fresh) -> None:
    _tighten_values(fresh)
    found = _paths(_stream())
    assert found["take"] is None  # the leaf's generated checks refuse it
    assert found["steady"] is None  # so does the steady path's generated code
    assert found["ipc"] == TIGHT  # the general walk words the same rule
    assert found["validate"] == TIGHT  # and validate_array runs it too


def test_the_generated_text_is_the_rules_own(fresh) -> None:
    node = PlanNode(t.int64(), (0,), "c", {})
    _, sizes, _ = node_checks(node, "n", "z", ["a", "b"], ["x", "y"],
                              lambda r: r.need_source("n"), "at")  # fmt: skip
    assert sizes[1] == "y < n * 8"
    _tighten_values(fresh)
    node = PlanNode(t.int64(), (0,), "c", {})
    _, sizes, _ = node_checks(node, "n", "z", ["a", "b"], ["x", "y"],
                              lambda r: r.need_source("n"), "at")  # fmt: skip
    assert sizes[1] == "y < (n + 1) * 8"


class _AnyLength(lr.ChildRule):
    """A made-up children rule: any child length will do."""

    __slots__ = ()

    def source(self, n: str, children: Sequence[str], list_size: int = 0) -> list[str]:
        return []

    def problem(self, end: int, child_lengths: Sequence[int], **kw: object) -> None:
        return None


def test_a_loosened_child_rule_is_loosened_everywhere(fresh) -> None:
    """A struct whose child is one value short: refused by the real rule on every path,
    accepted on every path once the rule is loosened to "any child length"."""
    struct_type = t.struct([("a", t.int8())])
    short = make_array(t.int8(), 2, [None, np.zeros(8, np.uint8)])
    arr = make_array(struct_type, 3, [None], children=[short])
    node = PlanNode(struct_type, (0,), "s", {})
    take = plan_module.node_take(node)
    body = np.zeros(8, np.uint8)

    # the same struct as integration JSON, read by the IPC body walk's interpreted checks
    jfield = {"name": "s", "nullable": True, "type": {"name": "struct"}, "children": [
        {"name": "a", "nullable": True, "children": [],
         "type": {"name": "int", "bitWidth": 8, "isSigned": True}}]}
    col = {"count": 3, "VALIDITY": [1, 1, 1],
           "children": [{"name": "a", "count": 2, "VALIDITY": [1, 1], "DATA": [0, 0]}]}
    jschema, jnodes = schema_from_json({"fields": [jfield]})

    def outcomes() -> tuple[bool, bool, bool]:
        taken = take(body, body.tobytes(), 0, 8, 3, 0, [0, 0], 0, (short,)) is not None
        jplan = compile_plan(jschema, dictionary_ids(jnodes))
        try:
            JsonColumnLoader(JsonDictionaries(jnodes, None, validate=False)).read(jplan[0], col)
            walked = True
        except E.BodyError as exc:
            assert exc.field_path == "s"
            assert exc.reason == "child too short: expected length >= 3, found 2"
            walked = False
        try:
            validate_array(arr)
            valid = True
        except E.ArrowInvalid as exc:
            assert "child too short: expected length >= 3" in exc.reason
            valid = False
        return taken, walked, valid

    assert outcomes() == (False, False, False)
    fresh.setitem(lr.CHILD_RULES, "same", _AnyLength("same"))
    plan_module.clear_generated()
    node = PlanNode(struct_type, (0,), "s", {})
    take = plan_module.node_take(node)
    assert outcomes() == (True, True, True)


def test_one_preorder_walk_numbers_nodes_and_buffers() -> None:
    schema = t.schema([("l", t.list_(t.string())), ("s", t.struct([("a", t.int8())]))])
    plan = compile_plan(schema, {})
    walked = [(node.name, i, j) for node, i, j in preorder(plan)]
    assert walked == [("l", 0, 0), ("l.item", 1, 2), ("s", 2, 5), ("s.a", 3, 6)]
    assert [j for _, _, j in preorder(plan[1:], 5)] == [5, 6]


# -- the count rule (length, offset, null count) ----------------------------------------

NO_NULLS = "expected null_count 0, found 1"


class _NoNulls(lr.CountRule):
    """A made-up count rule: no array may hold a null."""

    __slots__ = ()

    def conditions(self, n: str, z: str, signed: bool = True) -> list[str]:
        return [*lr.CountRule.conditions(self, n, z, signed), f"{z} > 0"]

    def problem(self, length: int, null_count: int, offset: int = 0, *, where: str = "",
                unknown_ok: bool = False) -> str | None:  # fmt: skip
        if null_count > 0:
            return f"expected null_count 0{where}, found {null_count}"
        return lr.CountRule.problem(self, length, null_count, offset, where=where,
                                    unknown_ok=unknown_ok)  # fmt: skip


def _counts_paths() -> dict[str, object]:
    """What each path makes of one int64 column of 4 rows with one null: the leaf's
    generated take, the steady path's generated code, the worded IPC walk, validate_array,
    and the C data interface import (an array or batch, None, or the words of the
    error)."""
    column = qv.array([1, None, 3, 4], type=t.int64())
    batch = qv.record_batch({"c": column})
    sink = ipc.BufferOutputStream()
    with ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch)
    data = bytes(sink.getvalue())
    schema = batch.schema
    chunk, shape, body = _first_batch(data)
    header = md.decode_message(read_frame(chunk, 0)[0]).header
    specs = header.buffers.ravel().tolist()
    node = PlanNode(t.int64(), (0,), "c", {})
    raw = np.frombuffer(body, np.uint8)
    out: dict[str, object] = {}
    out["take"] = node.take(raw, body, 0, len(body), 4, 1, specs, 0)
    setup = steady._Setup(shape, compile_plan(schema, {}), schema, 1 << 30, 1 << 24)
    out["steady"] = steady._take_compiled(setup, steady._code_key(setup))(chunk)
    try:
        out["ipc"] = ipc.open_stream(data).read_all()
    except E.MetadataError as exc:
        assert exc.message_index == 1 and exc.offset is not None
        out["ipc"] = exc.reason
    out["validate"] = _validated(column)
    for name, importer, source in (("c array", import_array, column),
                                   ("c batch", import_batch, batch)):  # fmt: skip
        try:
            out[name] = importer(source)
        except E.ArrowInvalid as exc:
            out[name] = exc.reason
    return out


def test_every_path_accepts_nulls_under_the_real_count_rule(fresh) -> None:
    found = _counts_paths()
    assert found["take"] is not None and found["steady"] is not None
    assert found["ipc"].num_rows == 4  # type: ignore[union-attr]
    assert found["validate"] is not None and not isinstance(found["validate"], str)
    assert found["c array"].null_count == 1  # type: ignore[union-attr]
    assert found["c batch"].num_rows == 4  # type: ignore[union-attr]


def test_one_count_rule_changes_every_path(fresh) -> None:
    fresh.setattr(lr, "COUNT_RULE", _NoNulls())
    plan_module.clear_generated()
    found = _counts_paths()
    assert found["take"] is None  # the leaf's generated checks refuse it
    assert found["steady"] is None  # so does the steady path's generated code
    assert found["ipc"] == "expected null_count 0 in FieldNode 0, found 1"  # the IPC walk
    assert found["validate"] == NO_NULLS  # validate_array runs it too
    assert found["c array"] == NO_NULLS  # and the C data interface import
    assert found["c batch"] == NO_NULLS  # (its generated flat path refuses, the walk words)


def test_the_c_import_views_buffers_by_the_size_rules(fresh) -> None:
    """A made-up size rule (a values buffer needs one value more) reaches the C import:
    its flat path's generated code and its general walk both view buffers by it (the
    exported memory holds a fifth value, so the longer view stays inside it)."""
    column = qv.array([1, 2, 3, 4, 5], type=t.int64()).slice(0, 4)
    batch = qv.record_batch({"c": column})
    assert len(import_array(column).buffers[1]) == 32
    assert len(import_batch(batch).column(0).buffers[1]) == 32
    _tighten_values(fresh)
    assert len(import_array(column).buffers[1]) == 40
    assert len(import_batch(batch).column(0).buffers[1]) == 40


def test_has_checks_asks_the_rules(fresh) -> None:
    """Which nested nodes get generated code follows their rules' generated form: a
    struct's children rule made interpreted-only takes structs off the generated path."""
    struct_type = t.struct([("a", t.int8())])
    assert plan_module.has_checks(PlanNode(struct_type, (0,), "s", {}))
    assert not plan_module.has_checks(PlanNode(t.list_view(t.int8()), (0,), "v", {}))
    fresh.setitem(lr.CHILD_RULES, "same", lr.ChildRule("run_end"))
    plan_module.clear_generated()
    assert not plan_module.has_checks(PlanNode(struct_type, (0,), "s", {}))


def test_a_rule_change_reaches_a_file_read_again(tmp_path):
    """Plans kept for a file read again (quiver.ipc.batch_loader) are dropped with the
    rules: a changed rule reaches the next read of the same file."""
    import quiver.ipc as ipc
    from quiver.ipc import batch_loader
    from quiver.ipc.plan import clear_generated

    batch = qv.record_batch({"c": qv.array(list(range(8)), qv.int64())})
    path = str(tmp_path / "again.arrow")
    with ipc.new_file(path, batch.schema) as w:
        w.write_batch(batch)
    for _ in range(3):
        assert ipc.open_file(path).read_all().num_rows == 8
    assert batch_loader._PLANS  # kept for the next open
    clear_generated()
    assert not batch_loader._PLANS
