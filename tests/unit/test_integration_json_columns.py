"""quiver.integration.json_columns: the IPC body walk reading integration JSON columns."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import quiver.types as t
from quiver.array import make_array
from quiver.errors import BodyError, FormatError, NotSupported
from quiver.integration.json_columns import (
    FieldNode,
    JsonColumnLoader,
    JsonDictionaries,
    dictionary_ids,
    validate_json_array,
)
from quiver.integration.json_reader import parse_json, schema_from_json
from quiver.ipc.body import BodyLoader, compile_plan

INT32 = {"name": "int", "bitWidth": 32, "isSigned": True}


def _read(jfield: dict, col: dict, jdicts: Any = None) -> Any:
    """The array of one JSON column of the field ``jfield`` (no validation)."""
    schema, nodes = schema_from_json({"fields": [jfield]})
    plan = compile_plan(schema, dictionary_ids(nodes))
    loader = JsonColumnLoader(JsonDictionaries(nodes, jdicts, validate=False))
    return loader.read(plan[0], col)


def _fld(name: str, type_: dict, children: list | None = None, **extra: Any) -> dict:
    return {"name": name, "nullable": True, "type": type_, "children": children or [], **extra}


def test_the_loader_is_the_ipc_walk() -> None:
    assert issubclass(JsonColumnLoader, BodyLoader)
    for name in ("next_node", "next_buffer", "next_variadic", "load"):
        assert getattr(JsonColumnLoader, name) is not getattr(BodyLoader, name), name
    # the checks are the walk's own: none is overridden
    for name in ("_check", "_check_sizes"):
        assert getattr(JsonColumnLoader, name) is getattr(BodyLoader, name), name


def test_reads_a_nested_column_through_the_walk() -> None:
    item = {"name": "item", "count": 3, "VALIDITY": [1, 0, 1], "DATA": [1, 0, 3]}
    arr = _read(_fld("l", {"name": "list"}, [_fld("item", INT32)]),
                {"count": 2, "VALIDITY": [1, 1], "OFFSET": [0, 1, 3], "children": [item]})
    assert arr.to_pylist() == [[1], [None, 3]]
    assert arr.null_count == 0 and arr.buffers[0] is None


def test_struct_child_shorter_than_the_parent_is_the_walks_child_rule() -> None:
    jfield = _fld("s", {"name": "struct"}, [_fld("x", INT32)])
    col = {"count": 3, "VALIDITY": [1, 1, 1],
           "children": [{"name": "x", "count": 2, "VALIDITY": [1, 1], "DATA": [1, 2]}]}
    with pytest.raises(BodyError, match="child too short: expected length >= 3, found 2") as info:
        _read(jfield, col)
    assert info.value.field_path == "s" and info.value.offset is None


def test_run_ends_that_do_not_reach_the_length_are_a_body_error() -> None:
    jfield = _fld("r", {"name": "runendencoded"}, [
        _fld("run_ends", {"name": "int", "bitWidth": 32, "isSigned": True}),
        _fld("values", INT32)])
    col = {"count": 5, "children": [
        {"name": "run_ends", "count": 1, "VALIDITY": [1], "DATA": [3]},
        {"name": "values", "count": 1, "VALIDITY": [1], "DATA": [7]}]}
    with pytest.raises(BodyError, match="last run end >= 5, found 3"):
        _read(jfield, col)


def test_v4_union_validity_goes_through_the_walks_v4_rule() -> None:
    jfield = _fld("u", {"name": "union", "mode": "SPARSE", "typeIds": [0]}, [_fld("i", INT32)])
    child = {"name": "i", "count": 2, "VALIDITY": [1, 1], "DATA": [1, 2]}
    ok = _read(jfield, {"count": 2, "VALIDITY": [1, 1], "TYPE_ID": [0, 0], "children": [child]})
    assert ok.to_pylist() == [1, 2] and len(ok.buffers) == 1
    with pytest.raises(NotSupported, match="V4"):
        _read(jfield, {"count": 2, "VALIDITY": [1, 0], "TYPE_ID": [0, 0], "children": [child]})


def test_views_bring_their_data_buffers_as_variadic_buffers() -> None:
    long = "abcdefghijklmnopq"
    arr = _read(_fld("v", {"name": "utf8view"}), {
        "count": 2, "VALIDITY": [1, 1],
        "VIEWS": [{"SIZE": 1, "INLINED": "a"},
                  {"SIZE": 17, "PREFIX_HEX": long[:4].encode().hex(), "BUFFER_INDEX": 0,
                   "OFFSET": 0}],
        "VARIADIC_DATA_BUFFERS": [long.encode().hex()]})
    assert arr.to_pylist() == ["a", long]
    assert len(arr.buffers) == 3  # validity (none), views, one data buffer


def test_wrong_number_of_children_names_the_field() -> None:
    jfield = _fld("s", {"name": "struct"}, [_fld("x", INT32)])
    with pytest.raises(FormatError, match="expected 1 children, found 0"):
        _read(jfield, {"count": 0, "VALIDITY": [], "children": []})


def test_dictionary_ids_are_keyed_by_index_path() -> None:
    node = FieldNode(t.field("x", t.int8()), 4, ())
    inner = FieldNode(t.field("s", t.struct([t.field("x", t.int8())])), None, (node,))
    assert dictionary_ids((inner, node)) == {(0, 0): 4, (1,): 4}


def test_dictionaries_are_validated_when_decoded_and_findings_are_format_errors() -> None:
    dict_field = _fld("d", {"name": "list"}, [_fld("item", INT32)], dictionary={
        "id": 0, "indexType": {"name": "int", "bitWidth": 8, "isSigned": True},
        "isOrdered": False})
    # the dictionary's list offsets decrease in the middle: only full validation sees it
    bad = {"id": 0, "data": {"count": 2, "columns": [{
        "name": "DICT0", "count": 2, "VALIDITY": [1, 1], "OFFSET": [0, 2, 1],
        "children": [{"name": "item", "count": 2, "VALIDITY": [1, 1], "DATA": [1, 2]}]}]}}
    doc = {"schema": {"fields": [dict_field]}, "batches": [], "dictionaries": [bad]}
    with pytest.raises(FormatError, match="non-decreasing") as info:
        parse_json(doc)
    assert info.value.field_path == "<dictionary 0>"
    assert len(parse_json(doc, validate=False).dictionaries[0]) == 2


def test_validate_json_array_raises_format_error_with_the_path() -> None:
    short = make_array(t.int32(), 4, [None, np.zeros(8, np.uint8)])
    with pytest.raises(FormatError, match="too small") as info:
        validate_json_array(short, "c")
    assert info.value.field_path == "c"
