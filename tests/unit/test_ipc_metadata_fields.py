"""Tests for quiver.ipc.metadata.fields: schema fields and types in IPC flatbuffer metadata."""

from __future__ import annotations

import pyarrow as pa
import pytest

import quiver as qv
import quiver.ipc as ipc
from quiver import types as qt
from quiver.errors import LimitExceeded, MetadataError, NotSupported
from quiver.ipc import metadata as md
from quiver.ipc.decoder import IpcLimits
from quiver.ipc.flatbuf import Builder
from quiver.ipc.metadata import (
    Footer,
    Message,
    MetadataLimits,
    SchemaMessage,
    decode_footer,
    decode_message,
    decode_schema,
    encode_footer,
    encode_message,
    encode_schema,
)
from quiver.ipc.metadata import fields as md_fields
from tests.unit._ipc_helpers import _file, _stream
from tests.unit._metadata_helpers import EXT_KEYS, _field_table, _schema_bytes


def test_nesting_and_field_limits_are_the_callers_to_raise() -> None:
    deep = pa.array([[[[1]]]])
    data = _stream(pa.table({"d": deep}))
    assert list(ipc.open_stream(data))
    with pytest.raises(qv.LimitExceeded, match="nested"):
        ipc.open_stream(data, limits=IpcLimits(max_depth=2))
    wide = _stream(pa.table({f"c{i}": [i] for i in range(50)}))
    with pytest.raises(qv.LimitExceeded, match="fields"):
        ipc.open_stream(wide, limits=IpcLimits(max_fields=10))
    with pytest.raises(qv.LimitExceeded):
        ipc.open_file(_file(pa.table({f"c{i}": [i] for i in range(50)})),
                      limits=IpcLimits(max_fields=10))


def test_unknown_type_union_member_is_not_supported_and_names_it():
    def fields(b: Builder) -> list[int]:
        return [
            b.table(
                [(0, "offset", b.create_string("col")), (2, "<B", 42), (3, "offset", b.table([]))]
            )
        ]

    with pytest.raises(NotSupported, match="Type union member 42") as info:
        decode_schema(_schema_bytes(fields))
    assert info.value.field_path == "col"


def test_missing_field_type_is_a_metadata_error_with_the_field_path():
    def fields(b: Builder) -> list[int]:
        kid = b.table([(0, "offset", b.create_string("inner"))])
        return [
            b.table(
                [
                    (0, "offset", b.create_string("outer")),
                    (2, "<B", 13),
                    (3, "offset", b.table([])),
                    (5, "offset", b.create_offset_vector([kid])),
                ]
            )
        ]

    with pytest.raises(MetadataError, match="expected a field type, found NONE") as info:
        decode_schema(_schema_bytes(fields))
    assert info.value.field_path == "outer.inner"


def test_bad_int_width_and_bad_union_are_metadata_errors():
    def bad_int(b: Builder) -> list[int]:
        return [_field_table(b, 2, b.table([(0, "<i", 12)]))]

    with pytest.raises(MetadataError, match="expected Int bitWidth 8/16/32/64, found 12"):
        decode_schema(_schema_bytes(bad_int))

    def bad_union(b: Builder) -> list[int]:
        ids = b.create_scalar_vector("i", [1, 1])
        kids = b.create_offset_vector([_field_table(b, 1, b.table([]))] * 2)
        return [_field_table(b, 14, b.table([(1, "offset", ids)]), f5=kids)]

    with pytest.raises(MetadataError, match="expected a valid Union"):
        decode_schema(_schema_bytes(bad_union))


def test_schema_wider_than_max_fields_raises_limit_exceeded():
    sm = SchemaMessage(qt.schema([(f"c{i}", qt.int8()) for i in range(50)]), {})
    data = encode_schema(sm)
    assert len(decode_schema(data).schema) == 50
    with pytest.raises(LimitExceeded, match="at most 10 fields"):
        decode_schema(data, limits=MetadataLimits(max_fields=10))


def test_nesting_deeper_than_max_depth_raises_limit_exceeded_not_recursion_error():
    typ: qt.DataType = qt.int8()
    for _ in range(100):
        typ = qt.list_(typ)
    data = encode_schema(SchemaMessage(qt.schema([("deep", typ)]), {}))
    with pytest.raises(LimitExceeded, match="nested at most 64 deep"):
        decode_schema(data)
    got = decode_schema(data, limits=MetadataLimits(max_depth=150))
    assert got.schema.field("deep").type == typ


def test_extension_name_that_is_not_utf8_is_a_metadata_error():
    def fields(b: Builder) -> list[int]:
        kv = b.table(
            [(0, "offset", b.create_string(EXT_KEYS[0])), (1, "offset", b.create_string(b"\xff"))]
        )
        return [_field_table(b, 5, b.table([]), f6=b.create_offset_vector([kv]))]

    with pytest.raises(MetadataError, match="expected a UTF-8 extension name"):
        decode_schema(_schema_bytes(fields))


def test_decoding_bugs_are_not_disguised_as_metadata_errors(monkeypatch: pytest.MonkeyPatch):
    # the flatbuffer reader reports every bounds problem itself (MetadataError with an
    # offset), so an IndexError while decoding is quiver's own bug and must surface as one
    def broken(*args):
        raise IndexError("a bug")

    monkeypatch.setattr(md_fields, "plain_field", broken)
    data = encode_schema(SchemaMessage(qt.schema([("a", qt.int32())]), {}))
    with pytest.raises(IndexError, match="a bug"):
        decode_schema(data)
    schema = SchemaMessage(qt.schema([("a", qt.int8())]), {})
    with pytest.raises(IndexError, match="a bug"):
        decode_message(encode_message(Message(md.V5, schema, 0)))
    with pytest.raises(IndexError, match="a bug"):
        decode_footer(encode_footer(Footer(md.V5, schema, (), ())))


def test_values_that_type_constructors_refuse_are_metadata_errors():
    # a Decimal table whose precision decimal128 refuses (an ArrowInvalidArgument from the
    # constructor) is bad metadata, reported as a MetadataError with the field's path
    def fields(b: Builder) -> list[int]:
        dec = b.table([(0, "<i", 99), (1, "<i", 2), (2, "<i", 128)])
        return [_field_table(b, 7, dec, f0=b.create_string("price"))]

    with pytest.raises(MetadataError) as info:
        decode_schema(_schema_bytes(fields))
    assert info.value.field_path == "price"
