"""Unit tests of quiver.array(): type inference like pyarrow, explicit types, numpy input,
and the errors for values that do not fit."""

from __future__ import annotations

import datetime as dt
import uuid
import zoneinfo
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

import quiver as qv
from quiver.errors import ArrowInvalid, ArrowTypeError, NotSupported
from tests.roundtrip.pa_types import from_pyarrow_type, to_pyarrow_type

NY = zoneinfo.ZoneInfo("America/New_York")

INFERENCE_CASES = [
    [1, 2, None],
    [1.5, None],
    [1, 2.5],
    ["a", None],
    [b"a"],
    [True, None],
    [None, None],
    [],
    [Decimal("1.23"), Decimal("-5")],
    [Decimal("0.001")],
    [Decimal("1E+3")],
    [Decimal("123.4500"), Decimal("0")],
    [dt.date(2020, 1, 1)],
    [dt.datetime(2020, 1, 1, 1, 2, 3, 4)],
    [dt.datetime(2020, 1, 1, tzinfo=dt.UTC)],
    [dt.datetime(2020, 1, 1, tzinfo=NY)],
    [dt.datetime(2020, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=-5, minutes=-30)))],
    [dt.time(1, 2)],
    [dt.timedelta(1, 2, 3)],
    [[1, 2], None, []],
    [[[1.5]], [[None]]],
    [{"a": 1}, {"a": 2, "b": "x"}],
    [{"a": [1]}, None],
    [uuid.UUID(int=5)],
    [(1, 2)],
]


@pytest.mark.parametrize("values", INFERENCE_CASES, ids=repr)
def test_inferred_type_matches_pyarrow(values: list) -> None:
    expected = pa.array(values)
    got = qv.array(values)
    assert got.type == from_pyarrow_type(expected.type)
    assert got.to_pylist() == expected.to_pylist()


def test_numpy_scalars_infer_their_width() -> None:
    assert qv.array([np.int32(5)]).type == qv.int32()
    assert qv.array([np.float32(5)]).type == qv.float32()


def test_mixed_kinds_are_rejected() -> None:
    with pytest.raises(ArrowInvalid, match="expected values of one kind"):
        qv.array([1, "a"])
    with pytest.raises(ArrowInvalid):
        qv.array([True, 1])


EXPLICIT_CASES = [
    (qv.int8(), [1, None, -128]),
    (qv.uint64(), [2**64 - 1, None]),
    (qv.int64(), [1.0, None]),
    (qv.float16(), [1.5, None]),
    (qv.float32(), [1, 2.5]),
    (qv.decimal32(5, 2), [Decimal("1.5"), 3, None]),
    (qv.decimal256(70, 5), [Decimal("1" * 60 + ".5"), None]),
    (qv.date64(), [dt.date(2020, 1, 1), None]),
    (qv.date32(), [5]),
    (qv.timestamp("s"), [dt.datetime(1969, 12, 31, 23, 59, 59, 999999), 1]),
    (qv.timestamp("ns", "America/New_York"), [dt.datetime(2020, 1, 1), None]),
    (qv.timestamp("us", "UTC"), [dt.datetime(2020, 1, 1, tzinfo=NY)]),
    (qv.time32("ms"), [dt.time(1, 2, 3, 4567), 1]),
    (qv.time64("ns"), [dt.time(23, 59, 59, 999999)]),
    (qv.duration("s"), [dt.timedelta(seconds=5), None, 7]),
    (qv.duration("ns"), [dt.timedelta(days=-1)]),
    (qv.month_day_nano_interval(), [(1, 2, 3), None]),
    (qv.binary(), ["text is encoded", b"\x00"]),
    (qv.string(), [b"bytes are decoded", "é"]),
    (qv.large_string(), ["a", None]),
    (qv.string_view(), ["short", None, "a string longer than twelve bytes", "é" * 20]),
    (qv.binary_view(), [b"x" * 13, b"", None]),
    (qv.binary(3), [b"abc", None]),
    (qv.list_(qv.int8(), 2), [[1, None], None]),
    (qv.large_list(qv.string()), [["a"], [], None]),
    (qv.list_view(qv.int8()), [[1], None, [2, 3]]),
    (qv.struct([("a", qv.int8()), ("b", qv.string())]), [{"a": 1, "b": "x"}, (2, "y"), None]),
    (qv.map_(qv.string(), qv.int64()), [{"a": 1}, [("b", 2), ("b", 3)], None]),
    (qv.dictionary(qv.int8(), qv.string()), ["a", "b", "a", None]),
    (qv.run_end_encoded(qv.int32(), qv.string()), ["a", "a", None, None, "b"]),
    (qv.uuid(), [uuid.UUID(int=7), None]),
]


@pytest.mark.parametrize(("dtype", "values"), EXPLICIT_CASES, ids=lambda x: str(x)[:40])
def test_explicit_types_build_what_pyarrow_builds(dtype: qv.DataType, values: list) -> None:
    got = qv.array(values, dtype)
    assert got.type == dtype
    got.validate(full=True)
    try:
        expected = pa.array(values, to_pyarrow_type(dtype)).to_pylist()
    except (pa.ArrowNotImplementedError, pa.ArrowTypeError, pa.ArrowInvalid):
        pytest.skip("pyarrow cannot build this from Python values")
    assert got.to_pylist() == expected


def test_dictionary_values_are_distinct_in_first_seen_order() -> None:
    d = qv.array([[1], [2], [1]], qv.dictionary(qv.int8(), qv.list_(qv.int64())))
    assert d.dictionary.to_pylist() == [[1], [2]]
    assert d.indices.to_pylist() == [0, 1, 0]
    mixed = qv.array([1, 1.0], qv.dictionary(qv.int8(), qv.float64()))
    assert mixed.indices.to_pylist() == [0, 1]  # 1 and 1.0 stay distinct values


def test_dictionary_index_overflow_is_reported() -> None:
    with pytest.raises(ArrowInvalid, match="distinct values"):
        qv.array(list(range(200)), qv.dictionary(qv.int8(), qv.int64()))


def test_run_end_encoding_makes_one_run_per_stretch() -> None:
    r = qv.array([1, 1, 1, None, None, 2, 1], qv.run_end_encoded(qv.int16(), qv.int64()))
    assert r.run_ends.to_pylist() == [3, 5, 6, 7]
    assert r.values.to_pylist() == [1, None, 2, 1]


def test_union_values_go_to_the_first_child_that_accepts_them() -> None:
    ut = qv.sparse_union([qv.field("small", qv.int8()), qv.field("big", qv.int64()),
                          qv.field("s", qv.string())])
    u = qv.array([1, 1000, "x", None], ut)
    assert u.type_codes.to_pylist() == [0, 1, 2, 0]
    assert u.to_pylist() == [1, 1000, "x", None]
    with pytest.raises(ArrowTypeError, match="expected a value convertible"):
        qv.array([1.5], ut)


def test_dense_union_children_are_compact() -> None:
    ut = qv.dense_union([qv.field("i", qv.int64()), qv.field("s", qv.string())])
    u = qv.array(["a", 1, "b"], ut)
    assert u.children[0].to_pylist() == [1]
    assert u.children[1].to_pylist() == ["a", "b"]
    assert u.offsets.to_pylist() == [0, 0, 1]


@pytest.mark.parametrize(
    ("dtype", "values", "words"),
    [
        (qv.int8(), [128], "fit int8"),
        (qv.uint8(), [-1], "fit uint8"),
        (qv.int64(), [2**63], "fit int64"),
        (qv.int64(), [1.5], "integral"),
        (qv.int64(), ["1"], "convertible to int64"),
        (qv.int64(), [True], "convertible to int64"),
        (qv.bool_(), [1], "convertible to bool"),
        (qv.decimal128(5, 2), [Decimal("1.234")], "scale 2"),
        (qv.decimal128(3, 0), [Decimal("1000")], "precision 3"),
        (qv.decimal128(5, 2), [1.5], "convertible"),
        (qv.binary(2), [b"abc"], "2 bytes"),
        (qv.list_(qv.int8(), 2), [[1]], "lists of 2"),
        (qv.list_(qv.int8()), ["ab"], "convertible"),
        (qv.map_(qv.string(), qv.int8()), [[(None, 1)]], "non-null map keys"),
        (qv.null(), [1], "convertible to null"),
        (qv.string(), [1], "convertible to string"),
        (qv.string(), ["\ud800"], "UTF-8"),
    ],
)
def test_values_that_do_not_fit_raise_quiver_errors(dtype, values, words) -> None:
    with pytest.raises((ArrowInvalid, ArrowTypeError), match=words):
        qv.array(values, dtype)


def test_struct_errors_name_the_field() -> None:
    with pytest.raises(ArrowInvalid, match="field 'a'"):
        qv.array([{"a": 300}], qv.struct([("a", qv.int8())]))
    nested = qv.struct([("a", qv.list_(qv.struct([("b", qv.int8())])))])
    with pytest.raises(ArrowInvalid, match=r"field 'a\.item\.b'") as info:
        qv.array([{"a": [{"b": 300}]}], nested)
    assert info.value.field_path == "a.item.b"


def test_mask_and_from_pandas_add_nulls() -> None:
    assert qv.array([1, 2, 3], mask=[False, True, False]).to_pylist() == [1, None, 3]
    assert qv.array([1.0, float("nan")], from_pandas=True).to_pylist() == [1.0, None]
    got = qv.array([1.0, float("nan")]).to_pylist()
    assert got[1] != got[1]  # NaN stays a value unless from_pandas


def test_iterables_are_accepted_and_scalars_refused() -> None:
    assert qv.array(range(3)).to_pylist() == [0, 1, 2]
    assert qv.array(x for x in "ab").to_pylist() == ["a", "b"]
    with pytest.raises(ArrowTypeError, match="sequence"):
        qv.array(5)
    with pytest.raises(ArrowTypeError, match="sequence"):
        qv.array("abc")


def test_existing_arrays_pass_through_and_casts_are_refused() -> None:
    a = qv.array([1])
    assert qv.array(a) is a
    with pytest.raises(NotSupported, match="casting"):
        qv.array(a, qv.int8())


# -- numpy -------------------------------------------------------------------------------


def test_numpy_numbers_are_zero_copy() -> None:
    for dtype in (np.int8, np.uint32, np.int64, np.float16, np.float64):
        src = np.arange(5, dtype=dtype)
        a = qv.array(src)
        assert np.shares_memory(a.buffers[1], src)
        assert a.to_pylist() == src.tolist()


def test_numpy_datetimes_are_zero_copy_and_nat_is_null() -> None:
    src = np.array(["2020-01-01", "NaT"], dtype="M8[ms]")
    a = qv.array(src)
    assert a.type == qv.timestamp("ms")
    assert np.shares_memory(a.buffers[1], src)
    assert a.to_pylist() == pa.array(src).to_pylist()
    d = qv.array(np.array(["2020-01-01"], dtype="M8[D]"))
    assert d.type == qv.date32() and d.to_pylist() == [dt.date(2020, 1, 1)]
    td = qv.array(np.array([5], dtype="m8[s]"))
    assert td.type == qv.duration("s") and td.to_pylist() == [dt.timedelta(seconds=5)]


def test_numpy_bools_are_packed_and_masks_give_validity() -> None:
    a = qv.array(np.array([True, False, True]))
    assert a.type == qv.bool_() and a.to_pylist() == [True, False, True]
    m = qv.array(np.ma.masked_array([1, 2, 3], mask=[0, 1, 0]))
    assert m.to_pylist() == [1, None, 3]
    k = qv.array(np.array([1, 2]), mask=np.array([True, False]))
    assert k.to_pylist() == [None, 2]


def test_numpy_strings_and_objects_convert() -> None:
    assert qv.array(np.array(["a", "bc"])).to_pylist() == ["a", "bc"]
    assert qv.array(np.array([b"a"])).type == qv.binary()
    assert qv.array(np.array([1, None], dtype=object)).to_pylist() == [1, None]


def test_numpy_with_an_explicit_type_converts_safely() -> None:
    assert qv.array(np.array([1, 2], np.int64), qv.int8()).to_pylist() == [1, 2]
    with pytest.raises(ArrowInvalid, match="fit"):
        qv.array(np.array([300]), qv.int8())
    with pytest.raises(ArrowInvalid, match="integral"):
        qv.array(np.array([1.5]), qv.int32())
    ts = qv.array(np.array([1000], np.int64), qv.timestamp("ms"))
    assert ts.to_pylist() == [dt.datetime(1970, 1, 1, 0, 0, 1)]
    with pytest.raises(ArrowTypeError, match="decimal128"):
        qv.array(np.array([1.5]), qv.decimal128(5, 1))


def test_numpy_strided_and_big_endian_inputs_are_copied() -> None:
    src = np.arange(10, dtype=np.int64)[::2]
    assert qv.array(src).to_pylist() == [0, 2, 4, 6, 8]
    be = np.array([1, 2], dtype=">i4")
    assert qv.array(be).to_pylist() == [1, 2]


def test_multidimensional_numpy_is_refused() -> None:
    with pytest.raises(ArrowInvalid, match="1-D"):
        qv.array(np.zeros((2, 2)))


def test_numpy_into_dictionary_and_narrower_float_types() -> None:
    d = qv.array(np.array(["a", "b", "a"]), qv.dictionary(qv.int8(), qv.string()))
    assert d.dictionary.to_pylist() == ["a", "b"]
    assert d.to_pylist() == ["a", "b", "a"]
    h = qv.array(np.array([1.1]), qv.float16())
    assert h.to_pylist() == pa.array(np.array([1.1], np.float16)).to_pylist()


def test_arrays_speaking_the_pycapsule_protocol_are_imported() -> None:
    src = pa.array([1, None, 3])
    a = qv.array(src)
    assert a.type == qv.int64() and a.to_pylist() == [1, None, 3]


def test_array_likes_go_through_numpy() -> None:
    class Wrapper:
        def __array__(self, dtype=None, copy=None):
            return np.array([1, 2], dtype=np.int16)

    assert qv.array(Wrapper()).type == qv.int16()


STRING_EDGE_CASES = [
    ["a", None, "bc", None],
    [None, "a"],
    ["a", None],
    [None],
    [""],
    ["", None, ""],
    ["\x01", None, "\x01"],  # a value that looks like the marker of a None
    [None, "\x01", "a\x01b", "\x01\x01", None],
    ["a\x00b", None, "\x00"],  # NUL bytes inside values
    ["é", None, "日本語", "", "\U0001f600"],
    ["x" * 20, None, "y"],
]


@pytest.mark.parametrize("values", STRING_EDGE_CASES, ids=repr)
@pytest.mark.parametrize("kind", ["string", "large_string", "binary", "large_binary",
                                  "string_view", "binary_view"])
def test_string_and_binary_buffers_match_pyarrow(values: list, kind: str) -> None:
    if "binary" in kind:
        values = [None if v is None else v.encode("utf-8") for v in values]
    dtype = getattr(qv, kind)()
    got = qv.array(values, dtype)
    got.validate(full=True)
    expected = pa.array(values, getattr(pa, kind)())
    assert got.to_pylist() == expected.to_pylist() == values
    assert got.null_count == expected.null_count
    if "view" not in kind:  # offsets and data are canonical, byte for byte
        offs = np.frombuffer(expected.buffers()[1], got.value_offsets().dtype)
        assert got.value_offsets().tolist() == offs[: len(values) + 1].tolist()
        data = expected.buffers()[2]
        assert got.buffers[2].tobytes() == (b"" if data is None else data.to_pybytes())
    if kind == "string" and any(v is not None for v in values):
        inferred = qv.array(values)
        assert inferred.type == qv.string()
        assert inferred.to_pylist() == values


def test_string_building_keeps_its_errors_and_mixed_kinds() -> None:
    with pytest.raises(ArrowInvalid, match="UTF-8"):
        qv.array(["a", None, "\ud800"])
    with pytest.raises(ArrowInvalid, match="UTF-8"):
        qv.array([None, "\ud800"], qv.string())
    with pytest.raises(ArrowTypeError, match="convertible to string"):
        qv.array(["a", None, 1], qv.string())
    with pytest.raises(ArrowInvalid, match="expected values of one kind"):
        qv.array(["a", None, 1])
    # bytes-like values in binary, text in binary, bytes in strings
    assert qv.array([bytearray(b"ab"), None, memoryview(b"c")], qv.binary()).to_pylist() == [
        b"ab", None, b"c"]
    assert qv.array(["é", None, b"x"], qv.binary()).to_pylist() == [b"\xc3\xa9", None, b"x"]
    assert qv.array([b"x", None, "y"], qv.string()).to_pylist() == ["x", None, "y"]
    # None late in a long list, and a str subclass
    many = [f"v{i}" for i in range(1000)] + [None]
    assert qv.array(many).to_pylist() == many

    class S(str):
        pass

    assert qv.array([S("ab"), None]).to_pylist() == ["ab", None]


@pytest.mark.parametrize("kind", ["string", "binary"])
def test_long_string_and_binary_lists_match_pyarrow(kind: str) -> None:
    values = [None if i % 7 == 0 else f"v{i}" * (i % 5) for i in range(10_000)]
    values[-1] = None
    values[5000] = "\x01"
    if kind == "binary":
        values = [None if v is None else v.encode() for v in values]
        values[4097] = bytearray(b"ba")
    got = qv.array(values)
    expected = pa.array(values)
    assert got.type == from_pyarrow_type(expected.type)
    assert got.to_pylist() == expected.to_pylist()
    assert got.buffers[0].tobytes() == expected.buffers()[0].to_pybytes()
    assert got.buffers[2].tobytes() == expected.buffers()[2].to_pybytes()


def test_from_pandas_takes_nat_as_null() -> None:
    pd = pytest.importorskip("pandas")
    for dtype in (qv.timestamp("us"), qv.timestamp("ns", "UTC"), qv.date32(), qv.date64(),
                  qv.duration("ns"), qv.duration("s")):
        got = qv.array([pd.NaT, None], dtype, from_pandas=True)
        assert got.type == dtype and got.to_pylist() == [None, None]
    assert qv.array([pd.NaT], from_pandas=True).type == qv.null()
    ts = pd.Timestamp("2020-01-01 00:00:00.000000001")
    got = qv.array([pd.NaT, ts, float("nan")], qv.timestamp("ns"), from_pandas=True)
    assert got.to_pylist() == [None, ts, None]
    assert qv.array([pd.NaT, ts], from_pandas=True).type == qv.timestamp("us")
    with pytest.raises(ArrowTypeError, match="found NaT"):
        qv.array([pd.NaT, ts])
