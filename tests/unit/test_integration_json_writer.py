"""Tests for quiver.integration.json_writer: quiver -> Arrow integration JSON."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

import quiver.types as t
from quiver.integration import JsonBatch, compare, compare_schemas, parse_json, to_json
from tests.unit._json_helpers import INT32, _jints, fld, one_column, roundtrip, values


def test_fixed_size_binary_round_trips_as_uppercase_hex() -> None:
    d = one_column({"name": "fixedsizebinary", "byteWidth": 2},
                   {"count": 2, "VALIDITY": [1, 0], "DATA": ["ABCD", "0000"]})
    assert values(d) == [b"\xab\xcd", None]
    assert roundtrip(d)["batches"][0]["columns"][0]["DATA"] == ["ABCD", "0000"]


def test_struct_slices_write_only_the_reached_child_slots() -> None:
    d = one_column({"name": "struct"}, {"count": 3, "VALIDITY": [1, 1, 0], "children": [
        {"name": "x", "count": 3, "VALIDITY": [1, 1, 1], "DATA": [1, 2, 3]}]},
        [fld("x", INT32)])
    jf = parse_json(d)
    sliced = jf.batches[0].columns[0].slice(1, 2)
    out = to_json(jf.schema, [JsonBatch(jf.schema, (sliced,), 2)])
    col = out["batches"][0]["columns"][0]
    assert col["VALIDITY"] == [1, 0]
    assert col["children"][0]["DATA"] == [2, 3]


def test_extension_over_dictionary_values_is_written_as_field_metadata() -> None:
    ext = t.extension("dict-extension", t.string(), b"ser")
    schema = t.schema([t.field("d", t.dictionary(t.int8(), ext))])
    from quiver.integration import schema_to_json

    jfield = schema_to_json(schema)["fields"][0]
    assert jfield["type"] == {"name": "utf8"}
    assert jfield["dictionary"]["indexType"] == {"name": "int", "isSigned": True, "bitWidth": 8}
    assert jfield["metadata"] == [{"key": "ARROW:extension:name", "value": "dict-extension"},
                                  {"key": "ARROW:extension:metadata", "value": "ser"}]
    back = parse_json({"schema": {"fields": [jfield]}, "batches": []}).schema
    assert compare_schemas(schema, back) == []


def test_single_floats_are_written_as_their_shortest_decimal() -> None:
    f32 = {"name": "floatingpoint", "precision": "SINGLE"}
    d = _jints([362.493, -0.1], type_=f32)
    assert roundtrip(d)["batches"][0]["columns"][0]["DATA"] == [362.493, -0.1]


def _every_type_case_names() -> list[str]:
    try:
        from tests.ipc_cases import all_type_arrays
    except ImportError:
        return []
    return sorted(all_type_arrays())


@pytest.mark.parametrize("name", _every_type_case_names() or ["<cases missing>"])
@pytest.mark.parametrize("slice_it", [False, True], ids=["whole", "sliced"])
def test_every_type_written_as_json_reads_back_to_pyarrows_values(
    name: str, slice_it: bool
) -> None:
    pytest.importorskip("pyarrow")
    try:
        from tests.ipc_cases import all_type_arrays, sliced
        from tests.roundtrip.pa_types import from_pyarrow
    except ImportError as exc:
        pytest.skip(f"the shared pyarrow test cases are not importable: {exc}")
    parr = all_type_arrays()[name]
    if slice_it:
        parr = sliced(parr)
    arr = from_pyarrow(parr)
    schema = t.schema([t.field("c", arr.type)])
    batch = JsonBatch(schema, (arr,), len(arr))
    back = parse_json(json.loads(json.dumps(to_json(schema, [batch]))))
    got = back.batches[0].columns[0]
    assert compare(schema, [batch], back.schema, back.batches) == []
    # and independently of quiver's comparison: pyarrow's values of the same data
    expected = parr.to_pylist()
    assert got.to_pylist() == expected


def _random_typed_values() -> Any:
    try:
        from tests.roundtrip.test_array_props import typed_values
    except ImportError:
        return None
    return typed_values()


_TYPED_VALUES = _random_typed_values()


@pytest.mark.skipif(_TYPED_VALUES is None, reason="tests.roundtrip strategies not importable")
def test_random_arrays_of_every_type_survive_json_sliced_or_whole() -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    import quiver as qv

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(_TYPED_VALUES, st.data())
    def check(case: Any, data: Any) -> None:
        qt, vals = case
        arr = qv.array(vals, qt)
        off = data.draw(st.integers(0, len(vals)))
        arr = arr.slice(off, data.draw(st.integers(0, len(vals) - off)))
        schema = t.schema([t.field("c", qt)])
        batch = JsonBatch(schema, (arr,), len(arr))
        back = parse_json(json.loads(json.dumps(to_json(schema, [batch]))))
        assert compare(schema, [batch], back.schema, back.batches) == []
        assert back.batches[0].columns[0].to_pylist() == arr.to_pylist()

    check()


def test_empty_arrays_with_empty_offset_buffers_write_one_zero_offset() -> None:
    from quiver.array import make_array

    empty = np.zeros(0, np.uint8)
    child = make_array(t.int32(), 0, [None, empty])
    lst = make_array(t.list_(t.int32()), 0, [None, empty], [child])
    s = make_array(t.string(), 0, [None, empty, empty])
    schema = t.schema([t.field("l", lst.type), t.field("s", s.type)])
    out = to_json(schema, [JsonBatch(schema, (lst, s), 0)])
    cols = out["batches"][0]["columns"]
    assert cols[0]["OFFSET"] == [0] and cols[1]["OFFSET"] == [0]
    back = parse_json(json.loads(json.dumps(out)))
    assert back.batches[0].num_rows == 0
