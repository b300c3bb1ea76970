"""Tests for quiver.cdata.schema: ArrowSchema structs both ways."""

from __future__ import annotations

import ctypes
import gc

import pyarrow as pa
import pytest

import quiver as qv
from quiver.errors import ArrowInvalid, NotSupported
from quiver.interop import cdata as c
from quiver.interop import export_schema, import_field, import_schema, import_type
from tests.unit._cdata_helpers import (
    KEEP,
    RELEASED,
    UuidLike,
    _registered_extension,  # noqa: F401 (autouse fixture)
    _reset,  # noqa: F401 (autouse fixture)
    schema_struct,
)

# --------------------------------------------------------------------------------------
# types and schemas


TYPES = [
    qv.null(), qv.bool_(), qv.int8(), qv.uint64(), qv.float16(), qv.decimal32(5, 2),
    qv.decimal64(10, 3), qv.decimal128(38, 10), qv.decimal256(76, -2), qv.date32(),
    qv.date64(), qv.time32("s"), qv.time64("ns"), qv.timestamp("s"),
    qv.timestamp("us", "America/New_York"), qv.duration("ns"), qv.month_interval(),
    qv.day_time_interval(), qv.month_day_nano_interval(), qv.binary(), qv.large_binary(),
    qv.string(), qv.large_string(), qv.string_view(), qv.binary_view(),
    qv.fixed_size_binary(7), qv.list_(qv.int32()), qv.large_list(qv.string()),
    qv.list_view(qv.int8()), qv.large_list_view(qv.int8()), qv.fixed_size_list(qv.int8(), 3),
    qv.struct([qv.field("a", qv.int8(), nullable=False, metadata={"m": "1"}),
               qv.field("b", qv.string())]),
    qv.map_(qv.string(), qv.int64()), qv.map_(qv.int32(), qv.string(), keys_sorted=True),
    qv.sparse_union([qv.field("a", qv.int8()), qv.field("b", qv.string())], [3, 9]),
    qv.dense_union([qv.field("a", qv.int8())]),
    qv.dictionary(qv.int32(), qv.string()), qv.dictionary(qv.uint8(), qv.int64(), True),
    qv.run_end_encoded(qv.int16(), qv.float64()), qv.uuid(),
    qv.extension("my.ext", qv.struct([("x", qv.int8())]), b"\x00\x01"),
]


@pytest.mark.parametrize("dtype", TYPES, ids=str)
def test_type_round_trips_through_capsule_unchanged(dtype):
    f = import_field(export_schema(dtype))
    assert f.type == dtype
    assert f.name == ""


@pytest.mark.parametrize("dtype", [d for d in TYPES if not isinstance(d, qv.ExtensionType)],
                         ids=str)
def test_type_round_trips_through_pyarrow(dtype):
    p = pa.field(qv.field("f", dtype, nullable=False, metadata={"a": "b"}))
    assert p.name == "f" and not p.nullable and p.metadata == {b"a": b"b"}
    assert import_field(p) == qv.field("f", dtype, nullable=False, metadata={"a": "b"})


def test_extension_travels_as_storage_plus_metadata():
    dtype = qv.extension("my.ext", qv.int32(), b"params")
    p = pa.field(qv.field("e", dtype, metadata={"own": "1"}))
    # pyarrow does not know my.ext, so it keeps the storage type and the metadata keys
    assert p.type == pa.int32()
    assert p.metadata == {
        b"own": b"1",
        b"ARROW:extension:name": b"my.ext",
        b"ARROW:extension:metadata": b"params",
    }
    back = import_field(p)
    assert back.type == dtype
    assert back.metadata == qv.KeyValueMetadata({"own": "1"})


def test_registered_pyarrow_extension_is_recognised_on_both_sides():
    q = import_type(UuidLike())
    assert q == qv.extension("test.quiver.tag", qv.binary(4), b"meta\x00data")
    assert pa.field(qv.field("t", q)).type == UuidLike()


def test_schema_metadata_and_flags_cross_both_ways():
    p = pa.schema(
        [pa.field("a", pa.int32(), nullable=False, metadata={"x": "y"}),
         pa.field("d", pa.dictionary(pa.int8(), pa.string(), ordered=True))],
        metadata={"k": "v", "empty": ""},
    )
    q = import_schema(p)
    assert q.names == ["a", "d"]
    assert q.field("a").nullable is False
    assert q.field("a").metadata == qv.KeyValueMetadata({"x": "y"})
    assert q.field("d").type == qv.dictionary(qv.int8(), qv.string(), ordered=True)
    assert q.metadata == qv.KeyValueMetadata([("k", "v"), ("empty", "")])
    assert pa.schema(q).equals(p, check_metadata=True)


def test_dunders_are_attached_to_types_fields_and_schemas():
    sch = qv.schema([qv.field("a", qv.list_(qv.int8()))])
    assert pa.schema(sch) == pa.schema([("a", pa.list_(pa.int8()))])
    assert pa.field(qv.field("z", qv.int8())) == pa.field("z", pa.int8())
    assert pa.DataType._import_from_c_capsule(qv.int64().__arrow_c_schema__()) == pa.int64()


def test_unknown_format_string_is_not_supported():
    with pytest.raises(NotSupported, match="'q'"):
        c.parse_format(b"q", [], "col")


def test_malformed_format_strings_raise_invalid_with_path():
    with pytest.raises(ArrowInvalid, match="d:precision"):
        c.parse_format(b"d:1", [], "col")
    with pytest.raises(ArrowInvalid, match="comma-separated integers"):
        c.parse_format(b"w:x", [], "col")
    with pytest.raises(ArrowInvalid, match="expected 1 child") as info:
        c.parse_format(b"+l", [], "a.b")
    assert info.value.field_path == "a.b"
    with pytest.raises(ArrowInvalid, match="precision"):
        c.parse_format(b"d:99,2,32", [], "col")


def test_released_capsule_struct_is_refused():
    s = schema_struct(b"l")
    s.release = c.SchemaRelease()
    with pytest.raises(ArrowInvalid, match="released"):
        import_field(c.new_capsule(s, c.SCHEMA_CAPSULE))


@pytest.mark.parametrize(
    ("build", "error", "words"),
    [
        (lambda: schema_struct(None), ArrowInvalid, "format string, found NULL"),
        (lambda: schema_struct(b"+l"), ArrowInvalid, "expected 1 child"),
        (lambda: schema_struct(b"+l", children=[None]), ArrowInvalid, "non-NULL"),
        (lambda: schema_struct(b"+us:1,300", children=[schema_struct(b"c"),
                                                      schema_struct(b"c")]),
         ArrowInvalid, "type codes"),
        (lambda: schema_struct(b"+ud:1", children=[]), ArrowInvalid, "union type codes"),
        (lambda: schema_struct(b"u", dictionary=schema_struct(b"u")), ArrowInvalid,
         "integer dictionary index"),
        (lambda: schema_struct(b"+m", children=[schema_struct(b"l")]), ArrowInvalid,
         "map child struct"),
        (lambda: schema_struct(b"l", metadata=(-1).to_bytes(4, "little", signed=True)),
         ArrowInvalid, "metadata pair count"),
        (lambda: schema_struct(b"tsx:"), NotSupported, "tsx:"),
        (lambda: schema_struct(b"w:-1"), ArrowInvalid, "fixed_size_binary"),
    ],
)
def test_malformed_schema_raises_and_releases_once(build, error, words):
    capsule = c.new_capsule(build(), c.SCHEMA_CAPSULE)
    with pytest.raises(error, match=words):
        import_field(capsule)
    del capsule
    gc.collect()
    assert RELEASED.count("schema") >= 1
    assert RELEASED[0] == "schema"


def test_cyclic_schema_is_rejected_without_recursion_error():
    s = schema_struct(b"+l", children=[schema_struct(b"l")])
    # point the child table at the parent itself: an endless type
    table = (ctypes.POINTER(c.ArrowSchema) * 1)(ctypes.pointer(s))
    KEEP.append(table)
    s.children = ctypes.cast(table, ctypes.POINTER(ctypes.POINTER(c.ArrowSchema)))
    with pytest.raises(ArrowInvalid, match="nesting"):
        import_field(c.new_capsule(s, c.SCHEMA_CAPSULE))


def test_exported_schema_capsule_reads_back_through_raw_struct():
    capsule = export_schema(qv.field("n", qv.dictionary(qv.int8(), qv.string(), True)))
    address = c.capsule_address(capsule, c.SCHEMA_CAPSULE)
    s = c.ArrowSchema.from_address(address)
    assert c.c_string(s.format) == b"c"
    assert c.c_string(s.name) == b"n"
    assert s.flags == c.ARROW_FLAG_NULLABLE | c.ARROW_FLAG_DICTIONARY_ORDERED
    assert c.c_string(s.dictionary.contents.format) == b"u"
    assert import_field(capsule).type == qv.dictionary(qv.int8(), qv.string(), True)


def test_schema_check_matches_its_digest_and_nothing_else() -> None:
    import pyarrow as pa

    from quiver.cdata import capsule as c
    from quiver.cdata.schema import schema_check, schema_digest

    dict_field = ("p", pa.dictionary(pa.int32(), pa.large_string()))
    base = [("a", pa.int64()), ("b", pa.dictionary(pa.int8(), pa.string())),
            ("l", pa.list_(pa.field("x", pa.int8(), metadata={"k": "v"}))),
            ("s", pa.struct([dict_field, ("q", pa.float16())]))]
    schema = pa.schema(base, metadata={"m": "1"})
    held = []  # the capsules stay alive while their addresses are read

    def address(obj: object) -> int:
        held.append(obj.__arrow_c_schema__())  # type: ignore[attr-defined]
        return c.capsule_address(held[-1], c.SCHEMA_CAPSULE)

    key = schema_digest(address(schema))
    assert key is not None
    same = schema_check(key)
    assert same(address(schema))
    meta = {"m": "1"}
    others = [
        schema.remove_metadata(),
        pa.schema(base, metadata={"m": "2"}),
        pa.schema([("A", pa.int64()), *base[1:]], metadata=meta),
        pa.schema(base[:3], metadata=meta),
        pa.schema([*base[:3], ("s", pa.struct([("p", pa.dictionary(pa.int32(), pa.string())),
                                               ("q", pa.float16())]))], metadata=meta),
        pa.schema([*base[:3], ("s", pa.struct([
            ("p", pa.dictionary(pa.int32(), pa.large_string(), ordered=True)),
            ("q", pa.float16())]))], metadata=meta),
        pa.schema([*base[:3], ("s", pa.struct([dict_field, ("Q", pa.float16())]))],
                  metadata=meta),
        pa.schema([*base[:3], pa.field("s", pa.struct([dict_field, ("q", pa.float16())]),
                                       nullable=False)], metadata=meta),
        pa.schema([*base[:2], ("l", pa.list_(pa.field("x", pa.int8(), metadata={"k": "w"}))),
                   base[3]], metadata=meta),
        pa.schema([*base[:2], ("l", pa.list_(pa.field("x", pa.int8()))), base[3]],
                  metadata=meta),
        pa.schema([*base[:3], ("s", pa.struct([("p", pa.int32()), ("q", pa.float16())]))],
                  metadata=meta),
    ]
    for other in others:
        at = address(other)
        assert schema_digest(at) != key
        assert not same(at), other
