"""Unit tests of quiver.types: factories, printing like pyarrow, value equality, fields,
schemas and key/value metadata."""

from __future__ import annotations

import pytest

import quiver as qv
from quiver import types as t
from quiver.errors import (
    ArrowIndexError,
    ArrowInvalidArgument,
    ArrowKeyError,
    ArrowTypeError,
)
from tests.roundtrip.pa_types import from_pyarrow_type, to_pyarrow_type
from tests.roundtrip.test_array_props import LEAF_TYPES

INTERVALS = [t.month_interval(), t.day_time_interval()]

NESTED = [
    t.list_(t.int32()), t.large_list(t.string()), t.list_view(t.int8()),
    t.large_list_view(t.int8()), t.list_(t.int8(), 3), t.fixed_size_list(t.int8(), 0),
    t.struct([("a", t.int8()), t.field("b", t.string(), False)]), t.struct([]),
    t.map_(t.string(), t.int32()), t.map_(t.string(), t.int32(), True),
    t.sparse_union([t.field("a", t.int8())]),
    t.dense_union([t.field("a", t.int8()), t.field("b", t.string())], [3, 5]),
    t.dictionary(t.int8(), t.string()), t.dictionary(t.uint16(), t.string(), True),
    t.run_end_encoded(t.int32(), t.string()),
]


@pytest.mark.parametrize(
    "qt",
    [q for q in LEAF_TYPES if not isinstance(q, t.ExtensionType) or q == t.uuid()]
    + INTERVALS + NESTED,
    ids=str,
)
def test_types_print_and_map_like_pyarrow(qt: t.DataType) -> None:
    pt = to_pyarrow_type(qt)
    assert str(qt) == str(pt)
    assert from_pyarrow_type(pt) == qt


def test_types_are_values() -> None:
    assert t.list_(t.int32()) == t.list_(t.int32())
    assert hash(t.timestamp("us", "UTC")) == hash(t.timestamp("us", "UTC"))
    assert t.timestamp("us") != t.timestamp("us", "UTC")
    assert len({t.int8(), t.int8(), t.uint8()}) == 2
    with pytest.raises(AttributeError):
        t.int8().width = 16  # type: ignore[misc]


def test_factory_arguments_are_checked() -> None:
    with pytest.raises(ArrowInvalidArgument, match="precision"):
        t.decimal32(10)
    with pytest.raises(ArrowInvalidArgument):
        t.time32("us")
    with pytest.raises(ArrowInvalidArgument, match="distinct type codes"):
        t.sparse_union([t.field("a", t.int8()), t.field("b", t.int8())], [1, 1])
    with pytest.raises(ArrowTypeError, match="integer dictionary index"):
        t.dictionary(t.string(), t.string())
    with pytest.raises(ArrowTypeError, match="run ends"):
        t.run_end_encoded(t.int8(), t.string())


def test_binary_with_a_length_is_fixed_size_like_pyarrow() -> None:
    assert t.binary(4) == t.fixed_size_binary(4)
    assert str(t.binary(4)) == "fixed_size_binary[4]"
    assert t.binary() == t.BinaryType(False)


def test_bit_and_byte_widths() -> None:
    assert t.bool_().bit_width == 1
    assert t.decimal256(40).byte_width == 32
    assert t.month_day_nano_interval().byte_width == 16
    with pytest.raises(ArrowTypeError):
        t.string().bit_width  # noqa: B018


def test_nested_field_access() -> None:
    s = t.struct([("a", t.int8()), ("b", t.string())])
    assert s.field("b").type == t.string()
    assert s.field(-1).name == "b"
    with pytest.raises(ArrowKeyError):
        s.field("zz")
    with pytest.raises(ArrowIndexError):
        s.field(2)
    m = t.map_(t.string(), t.int32())
    assert (m.key_type, m.item_type) == (t.string(), t.int32())
    assert not m.key_field.nullable


def test_equals_ignores_child_metadata_unless_asked() -> None:
    a = t.list_(t.field("item", t.int8(), metadata={"k": "v"}))
    b = t.list_(t.int8())
    assert a != b
    assert a.equals(b)
    assert not a.equals(b, check_metadata=True)



def test_schema_and_field_equals_with_and_without_metadata() -> None:
    plain = qv.schema([("a", t.int8()), ("b", t.list_(t.string()))])
    twin = qv.schema([("a", t.int8()), ("b", t.list_(t.string()))])  # another object
    tagged = qv.schema([qv.field("a", t.int8(), metadata={"k": "v"}),
                        ("b", t.list_(qv.field("item", t.string(), metadata={"x": "y"})))],
                       metadata={"s": "1"})
    other = qv.schema([("a", t.int16()), ("b", t.list_(t.string()))])
    assert twin is not plain and plain.equals(twin) and plain.equals(twin, check_metadata=True)
    assert plain.equals(tagged) and tagged.equals(plain)
    assert not plain.equals(tagged, check_metadata=True)
    assert tagged.equals(tagged, check_metadata=True)
    assert not plain.equals(other) and not plain.equals(other, check_metadata=True)
    assert not plain.equals("a") and not plain.field("a").equals(plain)
    assert plain.field("b").equals(tagged.field("b"))
    assert not plain.field("b").equals(tagged.field("b"), check_metadata=True)
    assert not plain.field("a").equals(other.field("a"))

def test_schema_and_fields() -> None:
    sch = qv.schema([("a", t.int8()), qv.field("a", t.string()), ("", t.null())],
                    metadata={"x": "1"})
    assert sch.names == ["a", "a", ""]
    assert sch.get_field_index("a") == -1
    assert sch.get_all_field_indices("a") == [0, 1]
    with pytest.raises(ArrowKeyError, match="2 fields"):
        sch.field("a")
    assert sch.field("").type == t.null()
    assert sch.metadata.get("x") == b"1"
    assert sch.equals(sch.remove_metadata())


def test_metadata_keeps_order_and_duplicates() -> None:
    md = t.KeyValueMetadata([("k", "1"), ("j", "2"), ("k", "3")])
    assert md.keys() == [b"k", b"j", b"k"]
    assert md.get_all("k") == [b"1", b"3"]
    assert md.to_dict() == {b"k": b"3", b"j": b"2"}
    with pytest.raises(ArrowTypeError):
        t.KeyValueMetadata([("k", 1)])


def test_extension_types_keep_name_and_metadata() -> None:
    e = t.extension("my.ext", t.int32(), b"payload")
    assert e.extension_name == "my.ext"
    assert e.serialized == b"payload"
    assert t.storage_of(e) == t.int32()
    assert t.uuid().storage_type == t.binary(16)


def test_schema_metadata_is_a_read_only_mapping_with_bytes_keys() -> None:
    import pyarrow as pa

    from quiver import types as qt

    sch = qt.schema([("a", qt.int8())], metadata={"k": "v", b"n": b"1"})
    md = sch.metadata
    assert md[b"k"] == b"v" and md["k"] == b"v"
    theirs = pa.schema([], metadata={"k": "v", "n": "1"}).metadata
    assert dict(md) == {b"k": b"v", b"n": b"1"} == theirs
    assert list(md) == [b"k", b"n"] and b"k" in md and "n" in md and b"x" not in md
    assert md.items() == [(b"k", b"v"), (b"n", b"1")]
    with pytest.raises(KeyError, match="b'x'"):
        md[b"x"]
    with pytest.raises(TypeError):
        md[b"k"] = b"w"  # type: ignore[index]
    dup = qt.KeyValueMetadata([("k", "1"), ("k", "2")])
    assert dup["k"] == b"1" and dup.get_all("k") == [b"1", b"2"] and len(dup) == 2


def test_schema_editing_helpers_and_to_string_match_pyarrow() -> None:
    import pyarrow as pa

    from quiver import types as qt

    ps = pa.schema(
        [pa.field("a", pa.int64(), metadata={"x": "y"}), pa.field("b", pa.string(), False)],
        metadata={"k": "v", "long": "z" * 100},
    )
    qs = qv.schema(ps)  # foreign schemas are taken by the top-level constructor
    assert qs.to_string() == ps.to_string()
    assert qs.to_string(show_schema_metadata=False) == ps.to_string(show_schema_metadata=False)
    new = pa.field("c", pa.float32())
    qnew = qt.field("c", qt.float32())
    assert qs.append(qnew).names == ps.append(new).names
    assert qs.insert(1, qnew).names == ps.insert(1, new).names
    assert qs.remove(0).names == ps.remove(0).names
    assert qs.set(1, qnew).names == ps.set(1, new).names
    assert qs.field("b").nullable is False and qs.remove(0).metadata == qs.metadata
    with pytest.raises(IndexError, match="below 2"):
        qs.remove(2)


def test_pickles_name_the_package_not_the_module_that_defines_the_class():
    # a driver and executors on different quiver versions exchange pickled schemas: the
    # names they hold must not depend on which module of the package defines a class
    import pickle

    import quiver as qv
    from quiver import types as t

    schema = t.schema([t.field("a", t.list_(t.timestamp("us", "UTC"))),
                       t.field("d", t.dictionary(t.int8(), t.string()))],
                      metadata={"k": "v"})
    batch = qv.record_batch({"a": [1, 2]})
    for obj in (schema, schema.field(0), schema.metadata, batch):
        data = pickle.dumps(obj)
        assert b"quiver.types." not in data and b"quiver.batch." not in data
        assert pickle.loads(data) == obj
