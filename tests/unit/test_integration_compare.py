"""quiver.integration.compare: differences between two integration documents, reported by
batch, column, row and child path (as ``arrow-json-integration-test`` does)."""

from __future__ import annotations

from typing import Any

import numpy as np

import quiver.types as t
from quiver.integration import compare, compare_arrays, compare_batches, compare_schemas, parse_json
from tests.unit._json_helpers import (
    INT32,
    INT64,
    UTF8,
    _dict_batch,
    _dict_field,
    doc,
    fld,
    one_column,
)
from tests.unit._json_helpers import _jints as _ints


def _diffs(a: dict, b: dict, **kw: Any) -> list[str]:
    ja, jb = parse_json(a), parse_json(b)
    return [str(x) for x in compare(ja.schema, ja.batches, jb.schema, jb.batches, **kw)]


def test_equal_data_compares_equal_and_ignores_null_placeholders() -> None:
    assert _diffs(_ints([1, 5, 3], [1, 0, 1]), _ints([1, 99, 3], [1, 0, 1])) == []


def test_value_and_null_differences_are_reported_by_batch_column_and_row() -> None:
    assert _diffs(_ints([1, 2, 3]), _ints([1, 4, 3], [1, 1, 0])) == [
        "batch 0, column a, row 1: expected 2, found 4",
        "batch 0, column a, row 2: expected 3, found null",
    ]


def test_nested_differences_name_the_child_path_and_top_level_row() -> None:
    def lst(data: list) -> dict:
        return one_column({"name": "list"}, {
            "count": 2, "VALIDITY": [1, 1], "OFFSET": [0, 1, 3],
            "children": [{"name": "item", "count": 3, "VALIDITY": [1, 1, 1], "DATA": data}]},
            [fld("item", INT32)])
    assert _diffs(lst([1, 2, 3]), lst([1, 2, 7])) == [
        "batch 0, column a.item, row 1: expected 3, found 7"]


def test_list_length_difference_is_reported_on_the_list() -> None:
    def lst(offsets: list) -> dict:
        return one_column({"name": "list"}, {
            "count": 2, "VALIDITY": [1, 1], "OFFSET": offsets,
            "children": [{"name": "item", "count": 3, "VALIDITY": [1, 1, 1],
                          "DATA": [1, 2, 3]}]}, [fld("item", INT32)])
    assert _diffs(lst([0, 1, 3]), lst([0, 2, 3])) == [
        "batch 0, column a, row 0: expected [1], found [1, 2]",
        "batch 0, column a, row 1: expected [2, 3], found [3]",
    ]


def test_floats_compare_with_a_tolerance_and_nan_equals_nan() -> None:
    f64 = {"name": "floatingpoint", "precision": "DOUBLE"}
    assert _diffs(_ints([1.0, float("nan")], type_=f64),
                  _ints([1.0 + 1e-9, float("nan")], type_=f64)) == []
    assert _diffs(_ints([1.0], type_=f64), _ints([1.5], type_=f64)) == [
        "batch 0, column a, row 0: expected 1.0, found 1.5"]


def test_out_of_range_temporal_values_are_compared_as_stored() -> None:
    date64 = {"name": "date", "unit": "MILLISECOND"}
    not_whole_day = ["86400001"]
    assert _diffs(_ints(not_whole_day, type_=date64), _ints(not_whole_day, type_=date64)) == []
    time32 = {"name": "time", "unit": "SECOND", "bitWidth": 32}
    assert _diffs(_ints([90000], type_=time32), _ints([90001], type_=time32)) == [
        "batch 0, column a, row 0: expected 90000, found 90001"]


def test_dictionaries_compare_by_decoded_value_not_by_index() -> None:
    def dcol(indices: list, words: list) -> dict:
        offs = np.cumsum([0] + [len(w) for w in words]).tolist()
        return doc([_dict_field("d", 0, UTF8)],
                   (len(indices), [{"name": "d", "count": len(indices),
                                    "VALIDITY": [1] * len(indices), "DATA": indices}]),
                   dictionaries=[_dict_batch(0, len(words), {"VALIDITY": [1] * len(words),
                                                             "OFFSET": offs, "DATA": words})])
    assert _diffs(dcol([0, 1], ["x", "y"]), dcol([1, 0], ["y", "x"])) == []
    assert _diffs(dcol([0, 1], ["x", "y"]), dcol([0, 0], ["x", "y"])) == [
        "batch 0, column d, row 1: expected 'y', found 'x'"]


def test_schema_differences_are_reported_before_data() -> None:
    a = _ints([1])
    b = _ints([1])
    b["schema"]["fields"][0]["nullable"] = False
    b["schema"]["fields"][0]["metadata"] = [{"key": "k", "value": "v"}]
    assert _diffs(a, b) == [
        "column a: expected nullable=True, found nullable=False",
        "column a: expected field metadata no metadata, found {'k': 'v'}",
    ]


def test_schema_type_difference_inside_a_struct_names_the_child() -> None:
    a = doc([fld("s", {"name": "struct"}, [fld("x", INT32)])])
    b = doc([fld("s", {"name": "struct"}, [fld("x", INT64)])])
    ja, jb = parse_json(a), parse_json(b)
    assert [str(d) for d in compare_schemas(ja.schema, jb.schema)] == [
        "column s.x: expected type int32, found type int64"]


def test_extension_spelled_as_metadata_equals_extension_type() -> None:
    s1 = t.schema([t.field("u", t.uuid())])
    s2 = t.schema([t.field("u", t.fixed_size_binary(16), metadata={
        "ARROW:extension:name": "arrow.uuid", "ARROW:extension:metadata": ""})])
    assert compare_schemas(s1, s2) == []


def test_batch_and_row_count_differences_are_reported() -> None:
    a, b = parse_json(_ints([1, 2])), parse_json(_ints([1]))
    assert [str(d) for d in compare_batches(a.batches, b.batches)] == [
        "batch 0: expected 2 rows, found 1"]
    assert [str(d) for d in compare_batches(a.batches, [])] == [
        "data: expected 1 record batches, found 0"]


def test_diff_output_is_limited() -> None:
    a, b = parse_json(_ints(list(range(100)))), parse_json(_ints(list(range(1, 101))))
    assert len(compare_arrays(a.batches[0].columns[0], b.batches[0].columns[0], limit=5)) == 5


def test_map_child_names_are_not_significant_when_comparing_schemas() -> None:
    canonical = t.schema([t.field("m", t.map_(t.string(), t.int32()))])
    entries = t.field("some_entries", t.struct([t.field("some_key", t.string(), False),
                                                t.field("some_value", t.int32())]), False)
    other = t.schema([t.field("m", t.MapType(entries))])
    assert compare_schemas(canonical, other) == []
    assert [str(d) for d in compare_schemas(canonical, t.schema(
        [t.field("m", t.map_(t.string(), t.int64()))]))] == [
        "column m.entries.value: expected type int32, found type int64"]


def test_field_count_difference_reads_as_a_schema_difference() -> None:
    one, two = t.schema([t.field("a", t.int8())]), t.schema([t.field("a", t.int8()),
                                                             t.field("b", t.int8())])
    assert [str(d) for d in compare_schemas(one, two)] == ["schema: expected 1 fields, found 2"]
