"""Tests for quiver.integration.json_reader: Arrow integration JSON -> quiver."""

from __future__ import annotations

import decimal
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

import quiver.types as t
from quiver.errors import ArrowError, FormatError, MetadataError, NotSupported
from quiver.integration import (
    JsonBatch,
    array_values,
    compare,
    loads,
    parse_json,
    read_json,
    to_json,
    write_json,
)
from tests.unit._json_helpers import (
    INT32,
    INT64,
    UTF8,
    _dict_batch,
    _dict_field,
    _jints,
    doc,
    fld,
    one_column,
    roundtrip,
    values,
)

# --------------------------------------------------------------------------------------
# schema


@pytest.mark.parametrize(
    ("jtype", "expected"),
    [
        ({"name": "null"}, t.null()),
        ({"name": "bool"}, t.bool_()),
        ({"name": "int", "bitWidth": 16, "isSigned": False}, t.uint16()),
        ({"name": "floatingpoint", "precision": "HALF"}, t.float16()),
        ({"name": "floatingpoint", "precision": "DOUBLE"}, t.float64()),
        ({"name": "utf8"}, t.string()),
        ({"name": "largeutf8"}, t.large_string()),
        ({"name": "binary"}, t.binary()),
        ({"name": "largebinary"}, t.large_binary()),
        ({"name": "utf8view"}, t.string_view()),
        ({"name": "binaryview"}, t.binary_view()),
        ({"name": "fixedsizebinary", "byteWidth": 3}, t.fixed_size_binary(3)),
        ({"name": "decimal", "precision": 5, "scale": 2}, t.decimal128(5, 2)),
        ({"name": "decimal", "precision": 5, "scale": 2, "bitWidth": 32}, t.decimal32(5, 2)),
        ({"name": "decimal", "precision": 15, "scale": -2, "bitWidth": 64}, t.decimal64(15, -2)),
        ({"name": "decimal", "precision": 70, "scale": 0, "bitWidth": 256}, t.decimal256(70)),
        ({"name": "date", "unit": "DAY"}, t.date32()),
        ({"name": "date", "unit": "MILLISECOND"}, t.date64()),
        ({"name": "time", "unit": "SECOND", "bitWidth": 32}, t.time32("s")),
        ({"name": "time", "unit": "NANOSECOND", "bitWidth": 64}, t.time64("ns")),
        ({"name": "timestamp", "unit": "MICROSECOND", "timezone": "UTC"},
         t.timestamp("us", "UTC")),
        ({"name": "timestamp", "unit": "SECOND"}, t.timestamp("s")),
        ({"name": "duration", "unit": "MILLISECOND"}, t.duration("ms")),
        ({"name": "interval", "unit": "YEAR_MONTH"}, t.month_interval()),
        ({"name": "interval", "unit": "DAY_TIME"}, t.day_time_interval()),
        ({"name": "interval", "unit": "MONTH_DAY_NANO"}, t.month_day_nano_interval()),
    ],
)
def test_reads_every_primitive_type_and_writes_it_back(jtype: dict, expected: t.DataType) -> None:
    d = doc([fld("a", jtype)])
    jf = parse_json(d)
    assert jf.schema.field("a").type == expected
    assert roundtrip(d)["schema"]["fields"][0]["type"] == {
        **jtype, **({"bitWidth": 128} if jtype["name"] == "decimal" and "bitWidth" not in jtype
                    else {})
    }


def test_reads_nested_types_with_their_child_names() -> None:
    item = fld("item", INT32)
    d = doc([
        fld("l", {"name": "list"}, [item]),
        fld("ll", {"name": "largelist"}, [item]),
        fld("lv", {"name": "listview"}, [item]),
        fld("llv", {"name": "largelistview"}, [item]),
        fld("fl", {"name": "fixedsizelist", "listSize": 3}, [item]),
        fld("s", {"name": "struct"}, [fld("x", INT32), fld("y", UTF8, nullable=False)]),
        fld("u", {"name": "union", "mode": "DENSE", "typeIds": [5, 9]},
            [fld("i", INT32), fld("s", UTF8)]),
        fld("r", {"name": "runendencoded"},
            [fld("run_ends", {"name": "int", "bitWidth": 16, "isSigned": True},
                 nullable=False), fld("values", UTF8)]),
        fld("m", {"name": "map", "keysSorted": True},
            [fld("some_entries", {"name": "struct"},
                 [fld("some_key", UTF8, nullable=False), fld("some_value", INT32)],
                 nullable=False)]),
    ])
    s = parse_json(d).schema
    assert s.field("l").type == t.list_(t.int32())
    assert s.field("ll").type == t.large_list(t.int32())
    assert s.field("lv").type == t.list_view(t.int32())
    assert s.field("llv").type == t.large_list_view(t.int32())
    assert s.field("fl").type == t.fixed_size_list(t.int32(), 3)
    assert s.field("s").type == t.struct([t.field("x", t.int32()),
                                          t.field("y", t.string(), nullable=False)])
    assert s.field("u").type == t.dense_union([t.field("i", t.int32()),
                                               t.field("s", t.string())], [5, 9])
    assert s.field("r").type == t.run_end_encoded(t.int16(), t.string())
    m = s.field("m").type
    assert isinstance(m, t.MapType) and m.keys_sorted
    assert [m.entries_field.name, m.key_field.name, m.item_field.name] == [
        "some_entries", "some_key", "some_value"]
    assert roundtrip(d)["schema"] == json.loads(json.dumps(d["schema"]))


def test_metadata_keeps_order_and_duplicate_keys() -> None:
    md = [{"key": "b", "value": "1"}, {"key": "a", "value": "2"}, {"key": "b", "value": "3"}]
    d = doc([fld("a", INT32, metadata=md)], metadata=md)
    jf = parse_json(d)
    assert jf.schema.metadata.items() == [(b"b", b"1"), (b"a", b"2"), (b"b", b"3")]
    assert jf.schema.field("a").metadata.get_all("b") == [b"1", b"3"]
    back = roundtrip(d)["schema"]
    assert back["metadata"] == md and back["fields"][0]["metadata"] == md


def test_extension_metadata_becomes_an_extension_type_and_is_written_back() -> None:
    md = [{"key": "ARROW:extension:name", "value": "arrow.uuid"},
          {"key": "ARROW:extension:metadata", "value": ""},
          {"key": "other", "value": "x"}]
    d = doc([fld("u", {"name": "fixedsizebinary", "byteWidth": 16}, metadata=md)])
    f = parse_json(d).schema.field("u")
    assert f.type == t.uuid()
    assert f.metadata.items() == [(b"other", b"x")]
    assert roundtrip(d)["schema"]["fields"][0]["metadata"] == md


def test_rejects_unknown_type_name_with_the_field_path() -> None:
    d = doc([fld("s", {"name": "struct"}, [fld("x", {"name": "int128"})])])
    with pytest.raises(MetadataError, match=r"expected a known type name, found 'int128'.*s\.x"):
        parse_json(d)


def test_rejects_decimal_precision_beyond_its_width_as_metadata_error() -> None:
    d = doc([fld("d", {"name": "decimal", "precision": 12, "scale": 0, "bitWidth": 32})])
    with pytest.raises(MetadataError, match="precision"):
        parse_json(d)


@pytest.mark.parametrize(
    ("jtype", "key"),
    [
        ({"name": "decimal", "precision": 5, "scale": 2**63, "bitWidth": 64}, "scale"),
        ({"name": "decimal", "precision": 5, "scale": 2**31}, "scale"),
        ({"name": "decimal", "precision": 5, "scale": -(2**31) - 1}, "scale"),
        ({"name": "decimal", "precision": 2**64, "scale": 0}, "precision"),
        ({"name": "decimal", "precision": 5, "scale": 0, "bitWidth": 2**64}, "bitWidth"),
        ({"name": "fixedsizebinary", "byteWidth": 2**63}, "byteWidth"),
    ],
)
def test_type_parameters_beyond_int32_are_metadata_errors(jtype: dict, key: str) -> None:
    # Schema.fbs declares these as 32-bit ints; a huge decimal scale used to fail later,
    # in to_pylist, with decimal.InvalidOperation
    with pytest.raises(MetadataError, match=rf"expected .*'{key}' in -2\*\*31..2\*\*31-1"):
        parse_json(doc([fld("d", jtype)]))


def test_fixed_size_list_size_beyond_int32_is_a_metadata_error() -> None:
    d = doc([fld("l", {"name": "fixedsizelist", "listSize": 2**63}, [fld("x", INT32)])])
    with pytest.raises(MetadataError, match="'listSize' in -2"):
        parse_json(d)


@pytest.mark.parametrize("scale", [2**31 - 1, -(2**31)])
def test_decimal_scale_at_the_int32_limits_reads(scale: int) -> None:
    d = one_column({"name": "decimal", "precision": 5, "scale": scale, "bitWidth": 64},
                   {"count": 1, "VALIDITY": [1], "DATA": ["12345"]})
    assert parse_json(d).batches[0].columns[0].to_pylist() == [
        decimal.Decimal(f"12345E{-scale}")
    ]


# --------------------------------------------------------------------------------------
# values


def test_64_bit_integers_are_read_from_strings_at_their_limits() -> None:
    u64 = {"name": "int", "bitWidth": 64, "isSigned": False}
    assert values(one_column(u64, {"count": 2, "VALIDITY": [1, 1],
                                   "DATA": ["18446744073709551615", "0"]})) == [2**64 - 1, 0]
    d = one_column(INT64, {"count": 2, "VALIDITY": [1, 1],
                           "DATA": ["-9223372036854775808", "5"]})
    assert values(d) == [-(2**63), 5]
    assert roundtrip(d)["batches"][0]["columns"][0]["DATA"] == ["-9223372036854775808", "5"]


def test_null_slots_read_as_none_whatever_their_placeholder() -> None:
    d = one_column(INT32, {"count": 3, "VALIDITY": [1, 0, 1], "DATA": [1, 999, 3]})
    assert values(d) == [1, None, 3]


def test_booleans_accept_true_false_and_one_zero() -> None:
    b = {"name": "bool"}
    assert values(one_column(b, {"count": 3, "VALIDITY": [1, 1, 1],
                                 "DATA": [True, False, True]})) == [True, False, True]
    assert values(one_column(b, {"count": 3, "VALIDITY": [1, 1, 1],
                                 "DATA": [1, 0, 1]})) == [True, False, True]


@pytest.mark.parametrize("width", [32, 64, 128, 256])
def test_decimals_of_every_width_read_unscaled_strings(width: int) -> None:
    prec = {32: 9, 64: 18, 128: 38, 256: 76}[width]
    big = str(-(10 ** prec - 1))
    d = one_column({"name": "decimal", "precision": prec, "scale": 2, "bitWidth": width},
                   {"count": 3, "VALIDITY": [1, 1, 0], "DATA": ["-11697", big, "0"]})
    got = values(d)
    assert got[0] == decimal.Decimal("-116.97")
    assert got[1] == decimal.Decimal(f"{big}E-2")  # exact, every digit kept
    assert roundtrip(d)["batches"][0]["columns"][0]["DATA"] == ["-11697", big, "0"]


def test_decimal_values_beyond_their_precision_are_kept_not_rejected() -> None:
    # archery's 0.14.1 / 1.0.0 gold files hold such values
    d = one_column({"name": "decimal", "precision": 3, "scale": 0},
                   {"count": 1, "VALIDITY": [1], "DATA": ["123456"]})
    assert values(d) == [decimal.Decimal(123456)]


def test_rejects_decimal_value_that_does_not_fit_its_width() -> None:
    d = one_column({"name": "decimal", "precision": 9, "scale": 0, "bitWidth": 32},
                   {"count": 1, "VALIDITY": [1], "DATA": [str(2**40)]})
    with pytest.raises(FormatError, match="fit in 32 bits"):
        parse_json(d)


def test_intervals_read_their_object_encodings_with_large_nanoseconds() -> None:
    mdn = one_column({"name": "interval", "unit": "MONTH_DAY_NANO"},
                     {"count": 1, "VALIDITY": [1],
                      "DATA": [{"months": -3, "days": 2, "nanoseconds": 8901258854880139867}]})
    assert values(mdn) == [{"months": -3, "days": 2, "nanoseconds": 8901258854880139867}]
    assert roundtrip(mdn)["batches"][0]["columns"][0]["DATA"] == [
        {"months": -3, "days": 2, "nanoseconds": 8901258854880139867}]
    dt = one_column({"name": "interval", "unit": "DAY_TIME"},
                    {"count": 1, "VALIDITY": [1], "DATA": [{"days": 4, "milliseconds": -5}]})
    assert values(dt) == [{"days": 4, "milliseconds": -5}]


def test_binary_is_hex_and_strings_are_unicode() -> None:
    b = one_column({"name": "binary"}, {"count": 2, "VALIDITY": [1, 1],
                                        "OFFSET": [0, 2, 2], "DATA": ["F34D", ""]})
    assert values(b) == [b"\xf3\x4d", b""]
    s = one_column({"name": "largeutf8"}, {"count": 2, "VALIDITY": [1, 1],
                                           "OFFSET": ["0", "3", "6"], "DATA": ["€", "矢"]})
    assert values(s) == ["€", "矢"]
    assert roundtrip(s)["batches"][0]["columns"][0]["OFFSET"] == ["0", "3", "6"]
    assert roundtrip(b)["batches"][0]["columns"][0]["DATA"] == ["F34D", ""]


def test_rejects_offsets_that_disagree_with_the_values() -> None:
    d = one_column(UTF8, {"count": 2, "VALIDITY": [1, 1], "OFFSET": [0, 1, 2],
                          "DATA": ["ab", ""]})
    with pytest.raises(FormatError, match="slot 0 a length of 2 bytes, found 1"):
        parse_json(d)


def test_views_inline_short_values_and_reference_long_ones() -> None:
    long = "abcdefghijklmnop"
    d = one_column({"name": "utf8view"}, {
        "count": 3, "VALIDITY": [1, 1, 0],
        "VIEWS": [{"SIZE": 2, "INLINED": "hi"},
                  {"SIZE": 16, "PREFIX_HEX": long[:4].encode().hex().upper(),
                   "BUFFER_INDEX": 1, "OFFSET": 3},
                  {"SIZE": 0, "INLINED": ""}],
        "VARIADIC_DATA_BUFFERS": ["00", ("xyz" + long).encode().hex().upper()]})
    assert values(d) == ["hi", long, None]
    back = roundtrip(d)["batches"][0]["columns"][0]
    assert back["VIEWS"][1] == {"SIZE": 16, "PREFIX_HEX": "61626364", "BUFFER_INDEX": 1,
                                "OFFSET": 3}
    assert back["VIEWS"][0] == {"SIZE": 2, "INLINED": "hi"}


def test_lone_surrogate_in_strings_is_a_format_error() -> None:
    # "\\ud800" is valid JSON but no Unicode string; it used to escape as UnicodeEncodeError
    view = one_column({"name": "utf8view"}, {"count": 1, "VALIDITY": [1],
                                            "VIEWS": [{"SIZE": 1, "INLINED": "\ud800"}],
                                            "VARIADIC_DATA_BUFFERS": []})
    plain = one_column(UTF8, {"count": 1, "VALIDITY": [1], "OFFSET": [0, 1],
                              "DATA": ["\ud800"]})
    for d in (view, plain):
        with pytest.raises(FormatError, match="lone surrogate"):
            parse_json(d)
        with pytest.raises(FormatError, match="lone surrogate"):
            loads(json.dumps(d))


def test_rejects_view_pointing_outside_its_buffer() -> None:
    d = one_column({"name": "binaryview"}, {
        "count": 1, "VALIDITY": [1],
        "VIEWS": [{"SIZE": 13, "PREFIX_HEX": "00000000", "BUFFER_INDEX": 0, "OFFSET": 0}],
        "VARIADIC_DATA_BUFFERS": ["0000"]})
    with pytest.raises(FormatError, match="inside a data buffer"):
        parse_json(d)


def test_lists_list_views_and_fixed_size_lists_read_their_children() -> None:
    item = [fld("item", INT32)]
    child = {"name": "item", "count": 4, "VALIDITY": [1, 1, 0, 1], "DATA": [1, 2, 0, 4]}
    lst = one_column({"name": "list"}, {"count": 3, "VALIDITY": [1, 0, 1],
                                        "OFFSET": [0, 2, 2, 4], "children": [child]}, item)
    assert values(lst) == [[1, 2], None, [None, 4]]
    lv = one_column({"name": "largelistview"}, {
        "count": 2, "VALIDITY": [1, 1], "OFFSET": ["2", "0"], "SIZE": ["2", "1"],
        "children": [child]}, item)
    assert values(lv) == [[None, 4], [1]]
    fl = one_column({"name": "fixedsizelist", "listSize": 2},
                    {"count": 2, "VALIDITY": [1, 1], "children": [child]}, item)
    assert values(fl) == [[1, 2], [None, 4]]


def test_rejects_list_offsets_past_the_child() -> None:
    d = one_column({"name": "list"}, {"count": 1, "VALIDITY": [1], "OFFSET": [0, 5],
                                      "children": [{"name": "item", "count": 1,
                                                    "VALIDITY": [1], "DATA": [1]}]},
                   [fld("item", INT32)])
    with pytest.raises(FormatError,
                       match=r"expected offsets\[1\] <= child length 1, found 5 .*'a'"):
        parse_json(d)


def _union_doc(mode: str, validity: list[int] | None) -> dict:
    col: dict[str, Any] = {"count": 3, "TYPE_ID": [5, 7, 5], "children": [
        {"name": "i", "count": 3 if mode == "SPARSE" else 2, "VALIDITY": [1, 1, 1][:3 if
         mode == "SPARSE" else 2], "DATA": [10, 20, 30][:3 if mode == "SPARSE" else 2]},
        {"name": "s", "count": 3 if mode == "SPARSE" else 1,
         "VALIDITY": [1] * (3 if mode == "SPARSE" else 1),
         "OFFSET": [0, 1, 2, 3] if mode == "SPARSE" else [0, 1],
         "DATA": ["a", "b", "c"] if mode == "SPARSE" else ["b"]}]}
    if mode == "DENSE":
        col["OFFSET"] = [0, 0, 1]
    if validity is not None:
        col["VALIDITY"] = validity
    return one_column({"name": "union", "mode": mode, "typeIds": [5, 7]}, col,
                      [fld("i", INT32), fld("s", UTF8)])


@pytest.mark.parametrize("mode", ["SPARSE", "DENSE"])
def test_unions_read_v5_and_v4_shapes(mode: str) -> None:
    expected = [10, "b", 30] if mode == "SPARSE" else [10, "b", 20]
    assert values(_union_doc(mode, None)) == expected
    assert values(_union_doc(mode, [1, 1, 1])) == expected  # V4 (0.17.1 gold) shape
    assert "VALIDITY" not in roundtrip(_union_doc(mode, [1, 1, 1]))["batches"][0]["columns"][0]


def test_v4_union_with_null_slots_is_not_supported_and_says_why() -> None:
    with pytest.raises(NotSupported, match="V4"):
        parse_json(_union_doc("SPARSE", [1, 0, 1]))


def test_rejects_union_type_id_not_in_type_ids() -> None:
    d = _union_doc("SPARSE", None)
    d["batches"][0]["columns"][0]["TYPE_ID"] = [5, 6, 5]
    with pytest.raises(FormatError,
                       match=r"expected a declared union type code \[5, 7\] at slot 1, found 6"):
        parse_json(d)


def test_run_end_encoded_reads_runs_and_writes_sliced_runs() -> None:
    d = one_column({"name": "runendencoded"}, {"count": 5, "children": [
        {"name": "run_ends", "count": 3, "VALIDITY": [1, 1, 1], "DATA": [2, 3, 5]},
        {"name": "values", "count": 3, "VALIDITY": [1, 0, 1], "DATA": [7, 0, 9]}]},
        [fld("run_ends", {"name": "int", "bitWidth": 16, "isSigned": True}, nullable=False),
         fld("values", INT32)])
    jf = parse_json(d)
    arr = jf.batches[0].columns[0]
    assert array_values(arr) == [7, 7, None, 9, 9]
    sliced = arr.slice(1, 3)
    out = to_json(jf.schema, [JsonBatch(jf.schema, (sliced,), 3)])
    back = parse_json(json.loads(json.dumps(out)))
    assert array_values(back.batches[0].columns[0]) == [7, None, 9]
    assert out["batches"][0]["columns"][0]["children"][0]["DATA"] == [1, 2, 3]


def test_null_columns_have_no_buffers() -> None:
    d = one_column({"name": "null"}, {"count": 3})
    assert values(d) == [None, None, None]
    assert roundtrip(d)["batches"][0]["columns"][0] == {"name": "a", "count": 3}


def test_dictionary_columns_decode_through_their_dictionary() -> None:
    d = doc([_dict_field("d", 0, UTF8)],
            (3, [{"name": "d", "count": 3, "VALIDITY": [1, 0, 1], "DATA": [1, 0, 0]}]),
            dictionaries=[_dict_batch(0, 2, {"VALIDITY": [1, 1], "OFFSET": [0, 1, 3],
                                             "DATA": ["a", "bc"]})])
    jf = parse_json(d)
    arr = jf.batches[0].columns[0]
    assert arr.type == t.dictionary(t.int8(), t.string())
    assert array_values(arr) == ["bc", None, "a"]
    assert array_values(jf.dictionaries[0]) == ["a", "bc"]
    back = roundtrip(d)
    assert back["dictionaries"][0]["data"]["columns"][0]["DATA"] == ["a", "bc"]
    assert back["schema"]["fields"][0]["dictionary"]["id"] == 0


def test_nested_dictionaries_resolve_in_any_order_and_get_fresh_ids_on_write() -> None:
    inner = _dict_field("str_dict", 0, UTF8)
    d = doc([_dict_field("list_dict", 1, {"name": "list"}, [inner]),
             fld("s", {"name": "struct"}, [_dict_field("x", 0, UTF8)])],
            (2, [{"name": "list_dict", "count": 2, "VALIDITY": [1, 1], "DATA": [1, 0]},
                 {"name": "s", "count": 2, "VALIDITY": [1, 1], "children": [
                     {"name": "x", "count": 2, "VALIDITY": [1, 1], "DATA": [0, 1]}]}]),
            dictionaries=[
                _dict_batch(1, 2, {"VALIDITY": [1, 1], "OFFSET": [0, 1, 3], "children": [
                    {"name": "str_dict", "count": 3, "VALIDITY": [1, 1, 1],
                     "DATA": [1, 0, 1]}]}),
                _dict_batch(0, 2, {"VALIDITY": [1, 1], "OFFSET": [0, 1, 2],
                                   "DATA": ["p", "q"]}),
            ])
    jf = parse_json(d)
    assert array_values(jf.batches[0].columns[0]) == [["p", "q"], ["q"]]
    assert array_values(jf.batches[0].columns[1]) == [{"x": "p"}, {"x": "q"}]
    back = parse_json(roundtrip(d))
    assert compare(jf.schema, jf.batches, back.schema, back.batches) == []
    assert sorted(x["id"] for x in roundtrip(d)["dictionaries"]) == [0, 1, 2]


def test_missing_dictionary_and_out_of_range_index_are_format_errors() -> None:
    d = doc([_dict_field("d", 3, UTF8)],
            (1, [{"name": "d", "count": 1, "VALIDITY": [1], "DATA": [0]}]))
    with pytest.raises(FormatError, match="dictionary batch with id 3, found none"):
        parse_json(d)
    d["dictionaries"] = [_dict_batch(3, 1, {"VALIDITY": [1], "OFFSET": [0, 1], "DATA": ["z"]})]
    d["batches"][0]["columns"][0]["DATA"] = [4]
    with pytest.raises(FormatError,
                       match=r"index out of range: expected 0\.\.0 at slot 0, found 4"):
        parse_json(d)


def test_dictionary_whose_values_use_itself_is_rejected_as_a_cycle() -> None:
    inner = _dict_field("v", 0, UTF8)
    d = doc([_dict_field("d", 0, {"name": "list"}, [inner])],
            (1, [{"name": "d", "count": 1, "VALIDITY": [1], "DATA": [0]}]),
            dictionaries=[_dict_batch(0, 1, {"VALIDITY": [1], "OFFSET": [0, 1], "children": [
                {"name": "v", "count": 1, "VALIDITY": [1], "DATA": [0]}]})])
    with pytest.raises(FormatError, match="without cycles"):
        parse_json(d)


# --------------------------------------------------------------------------------------
# malformed input never leaks KeyError / IndexError / ValueError-from-numpy


@pytest.mark.parametrize(
    ("mutate", "words"),
    [
        (lambda d: d.pop("schema"), "expected key 'schema'"),
        (lambda d: d["batches"][0]["columns"][0].pop("DATA"), "expected key 'DATA'"),
        (lambda d: d["batches"][0]["columns"][0].__setitem__("VALIDITY", [1]),
         "expected 2 VALIDITY entries, found 1"),
        (lambda d: d["batches"][0]["columns"][0].__setitem__("DATA", ["x", "1"]),
         "values of int64"),
        (lambda d: d["batches"][0]["columns"][0].__setitem__("count", "2"),
         "'count' to be int"),
        (lambda d: d["batches"][0].__setitem__("count", 5), "expected 5 rows"),
        (lambda d: d["batches"][0]["columns"].append({}), "expected 1 columns"),
        (lambda d: d["schema"]["fields"][0].__setitem__("type", "int"), "JSON object"),
        (lambda d: d["batches"][0]["columns"][0].__setitem__("VALIDITY", [1, 2]),
         "0 or 1, found 2"),
    ],
)
def test_malformed_documents_raise_format_errors_naming_the_problem(mutate, words) -> None:
    d = one_column(INT64, {"count": 2, "VALIDITY": [1, 1], "DATA": ["1", "2"]})
    mutate(d)
    with pytest.raises(FormatError, match=words):
        parse_json(d)


def test_unparseable_text_and_broken_gzip_are_format_errors() -> None:
    with pytest.raises(FormatError, match="does not parse"):
        loads("{not json")
    with pytest.raises(FormatError, match="gzip"):
        loads(b"\x1f\x8b\x08\x00broken")
    with pytest.raises(FormatError, match="does not parse"):
        loads("[" * 100000)


def test_value_out_of_range_for_its_width_is_a_format_error() -> None:
    d = one_column({"name": "int", "bitWidth": 8, "isSigned": True},
                   {"count": 1, "VALIDITY": [1], "DATA": [300]})
    with pytest.raises(FormatError, match="int8"):
        parse_json(d)


# --------------------------------------------------------------------------------------
# files and the CLI


def test_write_json_and_read_json_round_trip_through_gzip(tmp_path: Path) -> None:
    jf = parse_json(_jints([1, 2, 3]))
    p = tmp_path / "x.json.gz"
    write_json(p, jf.schema, jf.batches)
    assert gzip.decompress(p.read_bytes()).startswith(b"{")
    back = read_json(p)
    assert compare(jf.schema, jf.batches, back.schema, back.batches) == []


def _mutate(doc_: Any, rng: Any) -> None:
    """One random edit somewhere in a JSON document: delete, replace or duplicate."""
    containers: list[Any] = []
    stack = [doc_]
    while stack:
        node = stack.pop()
        if isinstance(node, (dict, list)) and node:
            containers.append(node)
            stack.extend(node.values() if isinstance(node, dict) else node)
    target = containers[rng.randrange(len(containers))]
    odd = [None, -1, 0, 1, 2**31, 2**63, -(2**70), "x", "", "ZZ", [], {}, [1], True, 1.5, "-5"]
    key = rng.choice(list(target)) if isinstance(target, dict) else rng.randrange(len(target))
    r = rng.random()
    if r < 0.3:
        del target[key]
    elif r < 0.4 and isinstance(target, list):
        target.append(target[key])
    elif r < 0.7 and isinstance(target[key], int) and not isinstance(target[key], bool):
        target[key] += rng.choice([1, -1, 1000])
    else:
        target[key] = rng.choice(odd)


def test_mutated_gold_documents_decode_or_raise_arrow_errors_only() -> None:
    import copy
    import random
    import time

    from tests.conftest import INTEGRATION, require_shared

    paths = sorted(require_shared(INTEGRATION).glob("*/*.json.gz"))
    if not paths:
        pytest.skip(f"no gold JSON under {INTEGRATION}")
    docs = [json.loads(gzip.decompress(p.read_bytes())) for p in paths]
    rng = random.Random(20261122)
    tried = decoded = 0
    deadline = time.monotonic() + 8.0
    while time.monotonic() < deadline:
        d = copy.deepcopy(docs[rng.randrange(len(docs))])
        for _ in range(rng.randint(1, 3)):
            _mutate(d, rng)
        tried += 1
        try:
            jf = parse_json(d)
        except ArrowError:
            continue
        # what decodes must also write and compare without surprises
        back = parse_json(json.loads(json.dumps(to_json(jf.schema, jf.batches))))
        assert compare(jf.schema, jf.batches, back.schema, back.batches) == []
        decoded += 1
    assert tried > 500 and decoded > 0


def test_one_dictionary_id_for_two_value_types_is_a_format_error() -> None:
    d = doc([_dict_field("a", 0, UTF8), _dict_field("b", 0, INT32)],
            (1, [{"name": "a", "count": 1, "VALIDITY": [1], "DATA": [0]},
                 {"name": "b", "count": 1, "VALIDITY": [1], "DATA": [0]}]),
            dictionaries=[_dict_batch(0, 1, {"VALIDITY": [1], "OFFSET": [0, 1],
                                             "DATA": ["z"]})])
    with pytest.raises(FormatError, match="one id used for two value types"):
        parse_json(d)


def test_type_nesting_deeper_than_the_limit_is_a_metadata_error() -> None:
    field: dict[str, Any] = fld("leaf", INT32)
    for i in range(100):
        field = fld(f"l{i}", {"name": "list"}, [field])
    with pytest.raises(MetadataError, match="at most 64 levels"):
        parse_json(doc([field]))
    shallow: dict[str, Any] = fld("leaf", INT32)
    for i in range(30):
        shallow = fld(f"l{i}", {"name": "struct"}, [shallow])
    assert parse_json(doc([shallow])).schema.field("l29").type.num_fields == 1


def test_validate_false_still_checks_values_that_point_into_other_memory():
    # a list view reaching past its child: accepted as it is, any later reader (pyarrow's
    # export included) would index outside the child
    doc = {
        "schema": {"fields": [{"name": "lv", "nullable": True, "type": {"name": "listview"},
                               "children": [{"name": "item", "nullable": True, "children": [],
                                             "type": {"name": "int", "isSigned": True,
                                                      "bitWidth": 32}}]}]},
        "batches": [{"count": 2, "columns": [{
            "name": "lv", "count": 2, "VALIDITY": [1, 1], "OFFSET": [0, 100000000],
            "SIZE": [1, 3],
            "children": [{"name": "item", "count": 2, "VALIDITY": [1, 1], "DATA": [1, 2]}],
        }]}],
    }
    for validate in (True, False):
        with pytest.raises(FormatError, match=r"list view out of range: .*found 100000000"):
            parse_json(doc, validate=validate)
