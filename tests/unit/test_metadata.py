"""Tests for quiver.ipc.metadata: IPC flatbuffer metadata <-> quiver dataclasses.

pyarrow is the oracle: gold files are decoded and compared with pyarrow's reading of the same
bytes, and everything quiver encodes is handed back to pyarrow.
"""

from __future__ import annotations

import contextlib
import random
import struct
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from quiver import types as qt
from quiver.errors import (
    ArrowError,
    ArrowInvalidArgument,
    CompressionError,
    FormatError,
    LimitExceeded,
    MetadataError,
    NotSupported,
)
from quiver.ipc import metadata as md
from quiver.ipc.flatbuf import Builder
from quiver.ipc.metadata import (
    Block,
    BodyCompression,
    Buffer,
    DictionaryBatch,
    Footer,
    Message,
    MetadataLimits,
    RecordBatch,
    SchemaMessage,
    SparseMatrixIndexCSX,
    SparseTensor,
    SparseTensorIndexCOO,
    SparseTensorIndexCSF,
    Tensor,
    decode_footer,
    decode_message,
    decode_schema,
    encode_footer,
    encode_message,
    encode_schema,
)
from quiver.ipc.metadata import decode as md_decode
from quiver.ipc.metadata import fields as md_fields
from tests.conftest import INTEGRATION, SUPPLEMENT, require_shared

pa = pytest.importorskip("pyarrow")
ipc = pytest.importorskip("pyarrow.ipc")

CPP21 = INTEGRATION / "cpp-21.0.0"
CONT = b"\xff\xff\xff\xff"


def _names(folder: Path, suffix: str) -> list[str]:
    if not folder.exists():
        return ["<missing>"]
    return sorted(p.name for p in folder.glob(f"*{suffix}"))


def _gold(folder: Path, name: str) -> bytes:
    require_shared(folder)
    return (folder / name).read_bytes()


# --------------------------------------------------------------------------------------
# helpers: framing, and pyarrow -> quiver types (the oracle's view in quiver's terms


def iter_messages(data: bytes, pos: int = 0) -> Iterator[tuple[int, int, Message, int]]:
    """(metadata start, metadata length, decoded message, body start) per framed message."""
    view = memoryview(data)
    while pos + 8 <= len(data):
        (marker,) = struct.unpack_from("<I", data, pos)
        if marker == 0xFFFFFFFF:
            (n,) = struct.unpack_from("<i", data, pos + 4)
            start = pos + 8
        else:  # pre-0.15 framing: no continuation marker
            n, start = marker, pos + 4
        if n == 0:
            return
        msg = decode_message(view[start : start + n], base_offset=start)
        yield start, n, msg, start + n
        pos = start + n + msg.body_length


def frame(meta: bytes, body: bytes = b"") -> bytes:
    """An encapsulated message: marker, length, metadata padded to 8, body."""
    meta = meta + b"\0" * (-len(meta) % 8)
    return CONT + struct.pack("<i", len(meta)) + meta + body


EOS = CONT + b"\0\0\0\0"
EXT_KEYS = (b"ARROW:extension:name", b"ARROW:extension:metadata")

_INTERVALS = {
    "month_interval": "year_month",
    "day_time_interval": "day_time",
    "month_day_nano_interval": "month_day_nano",
}


def q_type(pt) -> qt.DataType:
    """The quiver type equal to pyarrow type ``pt``."""
    T = pa.types
    if isinstance(pt, pa.BaseExtensionType):
        # canonical types built into pyarrow (arrow.uuid, ...) serialize to b"" here
        serialize = getattr(pt, "__arrow_ext_serialize__", lambda: b"")
        return qt.ExtensionType(pt.extension_name, q_type(pt.storage_type), serialize())
    if T.is_dictionary(pt):
        return qt.DictionaryType(q_type(pt.index_type), q_type(pt.value_type), pt.ordered)
    if T.is_null(pt):
        return qt.null()
    if T.is_boolean(pt):
        return qt.bool_()
    if T.is_integer(pt):
        return qt.IntegerType(pt.bit_width, T.is_signed_integer(pt))
    if T.is_floating(pt):
        return qt.FloatingPointType(pt.bit_width)
    if T.is_decimal(pt):
        return qt.DecimalType(pt.bit_width, pt.precision, pt.scale)
    if T.is_date32(pt):
        return qt.date32()
    if T.is_date64(pt):
        return qt.date64()
    if T.is_time32(pt):
        return qt.time32(pt.unit)
    if T.is_time64(pt):
        return qt.time64(pt.unit)
    if T.is_timestamp(pt):
        return qt.timestamp(pt.unit, pt.tz)
    if T.is_duration(pt):
        return qt.duration(pt.unit)
    if str(pt) in _INTERVALS:
        return qt.IntervalType(_INTERVALS[str(pt)])
    simple = {
        T.is_binary: qt.binary(),
        T.is_string: qt.string(),
        T.is_large_binary: qt.large_binary(),
        T.is_large_string: qt.large_string(),
        T.is_binary_view: qt.binary_view(),
        T.is_string_view: qt.string_view(),
    }
    for pred, value in simple.items():
        if pred(pt):
            return value
    if T.is_fixed_size_binary(pt):
        return qt.fixed_size_binary(pt.byte_width)
    if T.is_map(pt):
        return qt.MapType(q_field(pt.field(0)), pt.keys_sorted)
    lists = {
        T.is_list: qt.ListType,
        T.is_large_list: qt.LargeListType,
        T.is_list_view: qt.ListViewType,
        T.is_large_list_view: qt.LargeListViewType,
    }
    for pred, cls in lists.items():
        if pred(pt):
            return cls(q_field(pt.value_field))
    if T.is_fixed_size_list(pt):
        return qt.FixedSizeListType(q_field(pt.value_field), pt.list_size)
    children = tuple(q_field(pt.field(i)) for i in range(pt.num_fields))
    if T.is_struct(pt):
        return qt.StructType(children)
    if T.is_union(pt):
        return qt.UnionType(pt.mode, children, tuple(pt.type_codes))
    if T.is_run_end_encoded(pt):
        return qt.RunEndEncodedType(children[0], children[1])
    raise AssertionError(f"no quiver mapping for pyarrow type {pt}")


def q_field(pf) -> qt.Field:
    """The quiver field pyarrow's field stands for (unregistered extensions re-wrapped)."""
    typ = q_type(pf.type)
    meta = dict(pf.metadata or {})
    if EXT_KEYS[0] in meta:
        ext = (meta[EXT_KEYS[0]].decode(), meta.get(EXT_KEYS[1], b""))
        # like Arrow C++, a dictionary-encoded extension wraps the dictionary type
        typ = qt.ExtensionType(ext[0], typ, ext[1])
        meta = {k: v for k, v in meta.items() if k not in EXT_KEYS}
    return qt.Field(pf.name, typ, pf.nullable, list(meta.items()) or None)


def q_schema(ps) -> qt.Schema:
    """pyarrow schema -> quiver schema."""
    return qt.Schema(tuple(q_field(f) for f in ps), list((ps.metadata or {}).items()) or None)


def dict_paths(schema: qt.Schema) -> list[tuple[int, ...]]:
    """Paths (through flatbuffer children) of every dictionary-encoded field."""
    out: list[tuple[int, ...]] = []

    def walk(f: qt.Field, path: tuple[int, ...]) -> None:
        typ = qt.storage_of(f.type)
        if isinstance(typ, qt.DictionaryType):
            out.append(path)
            typ = qt.storage_of(typ.value_type)
        for k, c in enumerate(typ.fields):
            walk(c, (*path, k))

    for i, f in enumerate(schema.fields):
        walk(f, (i,))
    return out


# --------------------------------------------------------------------------------------
# gold files, compared with pyarrow


@pytest.mark.parametrize("name", _names(CPP21, ".stream"))
def test_gold_stream_schema_matches_pyarrow(name):
    data = _gold(CPP21, name)
    (_, _, msg, _) = next(iter_messages(data))
    assert msg.version == md.V5
    assert isinstance(msg.header, SchemaMessage)
    expected = q_schema(ipc.open_stream(data).schema)
    got = msg.header.schema
    assert got.names == expected.names
    for g, e in zip(got.fields, expected.fields):
        assert g == e, f"{g} != {e}"
    assert got.metadata == expected.metadata
    assert sorted(msg.header.dictionary_ids) == dict_paths(got)
    assert msg.header.endianness == "little"


@pytest.mark.parametrize("name", _names(CPP21, ".stream"))
def test_gold_stream_reencoded_message_by_message_is_read_back_by_pyarrow(name):
    data = _gold(CPP21, name)
    out = []
    kinds = set()
    for _, _, msg, body_start in iter_messages(data):
        kinds.add(type(msg.header).__name__)
        enc = encode_message(msg)
        assert decode_message(enc) == msg
        out.append(frame(enc, data[body_start : body_start + msg.body_length]))
    rebuilt = b"".join(out) + EOS
    expected = ipc.open_stream(data).read_all()
    got = ipc.open_stream(rebuilt).read_all()
    assert got.schema.equals(expected.schema, check_metadata=True)
    assert got.equals(expected)
    assert "SchemaMessage" in kinds


@pytest.mark.parametrize("name", _names(CPP21, ".arrow_file"))
def test_gold_file_footer_decodes_and_reencodes(name):
    data = _gold(CPP21, name)
    (flen,) = struct.unpack_from("<i", data, len(data) - 10)
    fstart = len(data) - 10 - flen
    footer = decode_footer(memoryview(data)[fstart : fstart + flen], base_offset=fstart)
    reader = ipc.open_file(data)
    assert footer.version == md.V5
    # str(): pyarrow renames non-canonical map entries (generated_map_non_canonical)
    expected = q_schema(reader.schema)
    assert str(footer.schema.schema) == str(expected)
    assert footer.schema.schema.metadata == expected.metadata
    assert len(footer.record_batches) == reader.num_record_batches
    for block in footer.record_batches + footer.dictionaries:
        assert block.meta_data_length % 8 == 0
        meta = data[block.offset + 8 : block.offset + block.meta_data_length]
        msg = decode_message(meta)
        assert isinstance(msg.header, (RecordBatch, DictionaryBatch))
        assert msg.body_length == block.body_length
    enc = encode_footer(footer)
    assert decode_footer(enc) == footer
    rebuilt = data[:fstart] + enc + struct.pack("<i", len(enc)) + b"ARROW1"
    again = ipc.open_file(rebuilt)
    assert again.read_all().equals(reader.read_all())
    assert again.schema.equals(reader.schema, check_metadata=True)


def test_gold_v4_union_message_decodes_as_v4():
    data = _gold(SUPPLEMENT, "metadata_v4_union.stream")
    msgs = [m for _, _, m, _ in iter_messages(data)]
    assert {m.version for m in msgs} == {md.V4}
    expected = q_schema(ipc.open_stream(data).schema)
    assert msgs[0].header.schema == expected
    assert any(isinstance(m.header, RecordBatch) for m in msgs)


@pytest.mark.parametrize(
    "name", ["compressed_lz4_newtypes.stream", "compressed_zstd_newtypes.stream"]
)
def test_gold_compressed_batches_carry_codec_and_variadic_counts(name):
    data = _gold(SUPPLEMENT, name)
    batches = [m.header for _, _, m, _ in iter_messages(data)]
    batches = [b for b in batches if isinstance(b, RecordBatch)]
    codec = "lz4_frame" if "lz4" in name else "zstd"
    assert batches and all(b.compression == BodyCompression(codec) for b in batches)
    assert any(len(b.variadic_buffer_counts) for b in batches)
    out = []
    for _, _, msg, body_start in iter_messages(data):
        out.append(frame(encode_message(msg), data[body_start : body_start + msg.body_length]))
    rebuilt = b"".join(out) + EOS
    assert ipc.open_stream(rebuilt).read_all().equals(ipc.open_stream(data).read_all())


def test_gold_dictionary_deltas_keep_is_delta():
    data = _gold(SUPPLEMENT, "dict_delta.stream")
    dicts = [
        m.header for _, _, m, _ in iter_messages(data) if isinstance(m.header, DictionaryBatch)
    ]
    assert [d.is_delta for d in dicts] == [False, True, True]
    assert len({d.id for d in dicts}) == 1


def test_gold_schema_only_stream_keeps_schema_metadata():
    data = _gold(SUPPLEMENT, "schema_only.stream")
    (_, _, msg, _) = next(iter_messages(data))
    ps = ipc.open_stream(data).schema
    assert msg.header.schema.metadata.to_dict() == ps.metadata
    assert msg.header.schema == q_schema(ps)


@pytest.mark.parametrize("name", _names(SUPPLEMENT, ".tensor"))
def test_gold_tensor_messages_match_pyarrow(name):
    data = _gold(SUPPLEMENT, name)
    (_, _, msg, body_start) = next(iter_messages(data))
    tensor = ipc.read_tensor(pa.py_buffer(data))
    header = msg.header
    assert isinstance(header, Tensor)
    assert header.type == q_type(tensor.type)
    assert header.shape == tuple(tensor.shape)
    assert header.strides == tuple(tensor.strides)
    assert [x or "" for x in header.dim_names] == list(tensor.dim_names)
    assert header.data_offset + header.data_length <= msg.body_length
    # quiver's encoding of the same Tensor header, with the same body, reads back equal
    body = data[body_start : body_start + msg.body_length]
    again = ipc.read_tensor(pa.py_buffer(frame(encode_message(msg), body)))
    assert again.equals(tensor)
    assert list(again.dim_names) == list(tensor.dim_names)


# --------------------------------------------------------------------------------------
# schemas of every type: quiver -> bytes -> quiver, and pyarrow reads them


def _every_type() -> list[qt.DataType]:
    kv = qt.field("v", qt.int16(), metadata=[("a", "1"), ("a", "2")])
    return [
        qt.null(),
        qt.bool_(),
        *(qt.IntegerType(w, s) for w in (8, 16, 32, 64) for s in (True, False)),
        qt.float16(),
        qt.float32(),
        qt.float64(),
        qt.decimal32(9, 2),
        qt.decimal64(18, -3),
        qt.decimal128(38, 10),
        qt.decimal256(76, 0),
        qt.date32(),
        qt.date64(),
        qt.time32("s"),
        qt.time32("ms"),
        qt.time64("us"),
        qt.time64("ns"),
        qt.timestamp("s"),
        qt.timestamp("ns", "Europe/Paris"),
        qt.duration("s"),
        qt.duration("ms"),
        qt.duration("us"),
        qt.duration("ns"),
        qt.month_interval(),
        qt.day_time_interval(),
        qt.month_day_nano_interval(),
        qt.binary(),
        qt.string(),
        qt.large_binary(),
        qt.large_string(),
        qt.binary_view(),
        qt.string_view(),
        qt.fixed_size_binary(0),
        qt.fixed_size_binary(7),
        qt.list_(qt.int8()),
        qt.list_(qt.field("elem", qt.string(), nullable=False)),
        qt.large_list(qt.float64()),
        qt.list_view(qt.int32()),
        qt.large_list_view(qt.binary()),
        qt.fixed_size_list(qt.int64(), 3),
        qt.struct([]),
        qt.struct([("a", qt.int8()), kv, qt.field("", qt.null())]),
        qt.map_(qt.string(), qt.int32()),
        qt.map_(qt.int64(), qt.list_(qt.int8()), keys_sorted=True),
        qt.sparse_union([qt.field("i", qt.int32()), qt.field("s", qt.string())]),
        qt.dense_union([qt.field("i", qt.int32()), qt.field("s", qt.string())], [5, 2]),
        qt.run_end_encoded(qt.int16(), qt.string()),
        qt.run_end_encoded(qt.int64(), qt.list_(qt.int8())),
        qt.dictionary(qt.int8(), qt.string()),
        qt.dictionary(qt.uint32(), qt.large_string(), ordered=True),
        qt.list_(qt.dictionary(qt.int16(), qt.float64())),
        qt.uuid(),
        qt.extension("my.ext", qt.struct([("x", qt.int32())]), b"\x00params"),
        qt.extension("my.ext", qt.dictionary(qt.int32(), qt.string()), "meta"),
        qt.struct([("s", qt.struct([("d", qt.dictionary(qt.int8(), qt.utf8()))]))]),
    ]


def _schema_of(types: list[qt.DataType]) -> SchemaMessage:
    fields = [
        qt.field(f"f{i}", typ, nullable=i % 3 != 0, metadata={"k": str(i)} if i % 4 == 0 else None)
        for i, typ in enumerate(types)
    ]
    schema = qt.schema(fields, metadata=[("m", "1"), ("m", "2"), ("z", "")])
    ids = {path: 100 + k for k, path in enumerate(dict_paths(schema))}
    return SchemaMessage(schema, ids)


def test_every_type_round_trips_through_schema_message():
    sm = _schema_of(_every_type())
    msg = decode_message(encode_message(Message(md.V5, sm, 0)))
    assert msg.header == sm
    assert decode_schema(encode_schema(sm)) == sm


def test_extension_inside_dictionary_values_reads_back_in_the_cpp_order():
    inner = qt.dictionary(qt.int8(), qt.extension("my.ext", qt.string(), "meta"))
    sm = _schema_of([inner])
    got = decode_message(encode_message(Message(md.V5, sm, 0))).header
    assert got.schema.field(0).type == qt.extension(
        "my.ext", qt.dictionary(qt.int8(), qt.string()), "meta"
    )


def test_every_type_encoded_by_quiver_is_read_by_pyarrow():
    # pyarrow keeps one value per metadata key: compare without duplicates
    types = _every_type()
    sm = _schema_of(types)
    enc = encode_message(Message(md.V5, sm, 0))
    ps = ipc.read_schema(pa.py_buffer(frame(enc)))
    assert ipc.open_stream(frame(enc) + EOS).schema.equals(ps)
    got = q_schema(ps)
    for g, e in zip(got.fields, sm.schema.fields):
        assert g.equals(e), f"{g} != {e}"
    assert [g.metadata for g in got.fields] == [
        (qt.KeyValueMetadata(e.metadata.to_dict()) if e.metadata else None)
        for e in sm.schema.fields
    ]
    assert ps.metadata in ({b"m": b"1", b"z": b""}, {b"m": b"2", b"z": b""})


def test_empty_timezone_is_kept_as_written():
    sm = SchemaMessage(qt.schema([("t", qt.timestamp("us", ""))]), {})
    assert decode_schema(encode_schema(sm)).schema.field("t").type.tz == ""


def test_schema_with_features_and_big_endian_round_trips():
    sm = SchemaMessage(qt.schema([("a", qt.int32())]), {}, "big", (1, 2))
    got = decode_message(encode_message(Message(md.V4, sm, 0)))
    assert got.version == md.V4
    assert got.header == sm


def test_extension_metadata_is_appended_after_field_metadata_on_the_wire():
    f = qt.field("u", qt.uuid(), metadata=[("first", "1")])
    sm = SchemaMessage(qt.schema([f]), {})
    ps = ipc.read_schema(pa.py_buffer(frame(encode_schema_message(sm))))
    assert str(ps.field("u").type) in ("extension<arrow.uuid>", "uuid")
    wire = decode_wire_field_metadata(encode_schema(sm))
    assert wire == [
        (b"first", b"1"),
        (b"ARROW:extension:name", b"arrow.uuid"),
        (b"ARROW:extension:metadata", b""),
    ]
    assert decode_schema(encode_schema(sm)).schema.field("u") == f


def encode_schema_message(sm: SchemaMessage) -> bytes:
    return encode_message(Message(md.V5, sm, 0))


def decode_wire_field_metadata(schema_bytes: bytes) -> list[tuple[bytes, bytes]]:
    """Field 0's raw key/value pairs, read with the generic flatbuffer reader."""
    from quiver.ipc.flatbuf import Reader

    field = Reader(schema_bytes).root().tables(1)[0]
    return [(kv.bytes(0), kv.bytes(1)) for kv in field.tables(6)]


def test_dictionary_field_without_id_is_rejected_on_encode():
    sm = SchemaMessage(qt.schema([("d", qt.dictionary(qt.int8(), qt.string()))]), {})
    with pytest.raises(ArrowInvalidArgument, match="expected a dictionary id"):
        encode_schema(sm)


def test_nested_dictionary_ids_use_child_index_paths():
    inner = qt.dictionary(qt.int8(), qt.string())
    outer = qt.dictionary(qt.int16(), qt.struct([("a", qt.int8()), ("b", inner)]))
    sm = SchemaMessage(qt.schema([("x", qt.int8()), ("y", outer)]), {(1,): 7, (1, 1): 8})
    got = decode_schema(encode_schema(sm))
    assert got.dictionary_ids == {(1,): 7, (1, 1): 8}
    assert got.schema == sm.schema


# --------------------------------------------------------------------------------------
# record batches, dictionary batches, tensors, footers


def test_record_batch_round_trips_with_lists_of_pairs():
    rb = RecordBatch(5, [[5, 1], [5, 0]], [(0, 8), (8, 0), (8, 40)])
    msg = decode_message(encode_message(Message(md.V5, rb, 48)))
    assert msg.body_length == 48
    assert msg.header.length == 5
    assert msg.header.nodes.tolist() == [[5, 1], [5, 0]]
    assert msg.header.buffers.tolist() == [[0, 8], [8, 0], [8, 40]]
    assert msg.header.nodes.dtype == np.dtype("<i8")
    assert msg.header.compression is None and msg.header.variadic_buffer_counts == ()


def test_record_batch_nodes_and_buffers_are_views_of_the_input():
    rb = RecordBatch(3, np.array([[3, 0]] * 4), np.arange(16).reshape(8, 2))
    data = bytearray(encode_message(Message(md.V5, rb, 100)))
    msg = decode_message(memoryview(data))
    source = np.frombuffer(data, np.uint8)
    assert np.shares_memory(msg.header.nodes, source)
    assert np.shares_memory(msg.header.buffers, source)


def test_empty_record_batch_has_zero_by_two_arrays():
    msg = decode_message(encode_message(Message(md.V5, RecordBatch(0, [], []), 0)))
    assert msg.header.nodes.shape == (0, 2) and msg.header.buffers.shape == (0, 2)


@pytest.mark.parametrize("codec", ["lz4_frame", "zstd"])
def test_record_batch_compression_variadic_counts_and_custom_metadata_round_trip(codec):
    rb = RecordBatch(2, [[2, 0]], [[0, 0], [0, 32], [32, 8]], BodyCompression(codec), (1,))
    msg = Message(md.V5, rb, 40, qt.KeyValueMetadata([("k", "v"), ("k", "w")]))
    assert decode_message(encode_message(msg)) == msg


def test_plain_and_general_record_batch_decoders_agree():
    for ncols in (0, 1, 3, 40, 2000):
        rb = RecordBatch(7, [[7, k % 3] for k in range(ncols)], [[8 * k, 8] for k in range(ncols)])
        enc = encode_message(Message(md.V4, rb, 8 * ncols))
        fast = md._fast_record_batch_message(enc, MetadataLimits())
        assert fast is not None
        assert fast == md._decode_message_general(enc, 0, MetadataLimits())
        # the generic builder's layout decodes the same, on the general path too
        b = Builder()
        nodes = b.create_struct_vector(np.asarray(rb.nodes, dtype="<i8").reshape(-1, 2))
        bufs = b.create_struct_vector(np.asarray(rb.buffers, dtype="<i8").reshape(-1, 2))
        hdr = b.table([(0, "<q", 7), (1, "offset", nodes), (2, "offset", bufs)])
        root = b.table([(0, "<h", md.V4), (1, "<B", 3), (2, "offset", hdr), (3, "<q", 8 * ncols)])
        assert decode_message(b.finish(root)) == fast


def test_dictionary_batch_round_trips():
    rb = RecordBatch(3, [[3, 0]], [[0, 0], [0, 16], [16, 8]])
    for delta in (False, True):
        msg = Message(md.V5, DictionaryBatch(42, rb, delta), 24)
        assert decode_message(encode_message(msg)) == msg


def test_tensor_round_trips():
    tensor = Tensor(qt.float32(), (2, 3), ("r", None), (12, 4), 0, 24)
    msg = Message(md.V5, tensor, 24)
    assert decode_message(encode_message(msg)) == msg


def test_tensor_written_by_quiver_is_read_by_pyarrow():
    values = np.arange(12, dtype="<i4").reshape(3, 4)
    tensor = Tensor(qt.int32(), (3, 4), ("a", "b"), (16, 4), 0, 48)
    data = frame(encode_message(Message(md.V5, tensor, 48)), values.tobytes())
    got = ipc.read_tensor(pa.py_buffer(data))
    assert got.to_numpy().tolist() == values.tolist()
    assert list(got.dim_names) == ["a", "b"]


@pytest.mark.parametrize(
    "index",
    [
        SparseTensorIndexCOO(qt.int64(), Buffer(0, 48), (8, 16), True),
        SparseMatrixIndexCSX("row", qt.int32(), Buffer(0, 16), qt.int64(), Buffer(16, 24)),
        SparseMatrixIndexCSX("column", qt.int64(), Buffer(0, 40), qt.int32(), Buffer(40, 12)),
        SparseTensorIndexCSF(
            qt.int32(),
            (Buffer(0, 8), Buffer(8, 16)),
            qt.int64(),
            (Buffer(24, 16), Buffer(40, 16), Buffer(56, 24)),
            (0, 2, 1),
        ),
    ],
)
def test_sparse_tensor_round_trips(index):
    st = SparseTensor(qt.float64(), (4, 5, 6), ("x", None, "z"), 3, index, Buffer(96, 24))
    msg = Message(md.V5, st, 120)
    assert decode_message(encode_message(msg)) == msg


def test_footer_round_trips():
    sm = _schema_of([qt.int32(), qt.dictionary(qt.int8(), qt.string())])
    footer = Footer(
        md.V5,
        sm,
        (Block(8, 200, 64),),
        (Block(272, 136, 1024), Block(1432, 136, 0)),
        qt.KeyValueMetadata([("footer", "yes")]),
    )
    assert decode_footer(encode_footer(footer)) == footer


def test_header_none_message_decodes():
    msg = decode_message(encode_message(Message(md.V5, None, 0)))
    assert msg.header is None and msg.body_length == 0


# --------------------------------------------------------------------------------------
# defaults of absent fields


def _field_table(b: Builder, type_code: int, type_table: int, **extra: int) -> int:
    entries = [(2, "<B", type_code), (3, "offset", type_table)]
    for index, value in extra.items():
        entries.append((int(index[1:]), "offset", value))
    return b.table(entries)


def _schema_bytes(build_fields) -> bytes:
    b = Builder()
    fields = b.create_offset_vector(build_fields(b))
    return b.finish(b.table([(1, "offset", fields)]))


def test_absent_name_union_type_ids_index_type_and_decimal_width_take_defaults():
    def fields(b: Builder) -> list[int]:
        kids = b.create_offset_vector([_field_table(b, 2, b.table([(0, "<i", 8)]))] * 2)
        union = _field_table(b, 14, b.table([(0, "<h", 1)]), f5=kids)
        dict_enc = b.table([(0, "<q", 3)])  # no indexType: int32
        dict_field = _field_table(b, 5, b.table([]), f4=dict_enc)
        dec = _field_table(b, 7, b.table([(0, "<i", 20), (1, "<i", 4)]))
        return [union, dict_field, dec]

    sm = decode_schema(_schema_bytes(fields))
    union, dictionary, decimal = sm.schema.fields
    assert union.name == "" and union.nullable is False
    # Int.is_signed absent means unsigned
    assert union.type == qt.dense_union([qt.field("", qt.uint8(), False)] * 2, [0, 1])
    assert dictionary.type == qt.dictionary(qt.int32(), qt.string())
    assert sm.dictionary_ids == {(1,): 3}
    assert decimal.type == qt.decimal128(20, 4)


# --------------------------------------------------------------------------------------
# errors


def _message_bytes(version: int, header_type: int = 3, body_length: int = 0) -> bytes:
    b = Builder()
    hdr = b.table([(0, "<q", 0)])
    return b.finish(
        b.table(
            [
                (0, "<h", version),
                (1, "<B", header_type),
                (2, "offset", hdr),
                (3, "<q", body_length),
            ]
        )
    )


@pytest.mark.parametrize("version", [0, 1, 2])
def test_old_metadata_versions_are_not_supported(version):
    with pytest.raises(NotSupported, match=f"metadata version V{version + 1} is not supported"):
        decode_message(_message_bytes(version))


def test_future_metadata_version_is_not_supported():
    with pytest.raises(NotSupported, match=r"metadata version V6 .*expected V4 or V5"):
        decode_message(_message_bytes(5))


def test_unknown_header_type_is_a_metadata_error():
    with pytest.raises(MetadataError, match=r"expected a MessageHeader type 0\.\.5, found 9"):
        decode_message(_message_bytes(md.V5, header_type=9))


def test_negative_body_length_is_a_metadata_error():
    with pytest.raises(MetadataError, match="non-negative bodyLength, found -8"):
        decode_message(_message_bytes(md.V5, body_length=-8))


def test_negative_field_node_is_a_metadata_error():
    rb = RecordBatch(1, [[1, 0], [1, -1]], [[0, 8]])
    with pytest.raises(MetadataError, match=r"non-negative FieldNode values, found \[1, -1\]"):
        decode_message(encode_message(Message(md.V5, rb, 8)))
    rb = RecordBatch(1, [[1, 0]] * 40, [[0, -8]] * 40)
    with pytest.raises(MetadataError, match="non-negative Buffer values"):
        decode_message(encode_message(Message(md.V5, rb, 8)))


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


def test_unknown_compression_codec_is_a_compression_error():
    b = Builder()
    comp = b.table([(0, "<b", 5)])
    hdr = b.table([(0, "<q", 0), (3, "offset", comp)])
    root = b.table([(0, "<h", md.V5), (1, "<B", 3), (2, "offset", hdr)])
    with pytest.raises(CompressionError, match="found 5"):
        decode_message(b.finish(root))


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


def test_too_many_buffers_raise_limit_exceeded():
    rb = RecordBatch(1, [[1, 0]], [[0, 0]] * 20)
    data = encode_message(Message(md.V5, rb, 0))
    with pytest.raises(LimitExceeded, match="at most 5 Buffers"):
        decode_message(data, limits=MetadataLimits(max_buffers=5))


def test_error_offsets_are_absolute():
    data = b"\0" * 16 + b"\x01\x02"
    with pytest.raises(MetadataError) as info:
        decode_message(memoryview(data)[16:], base_offset=16)
    assert info.value.offset == 16


def _gold_metadata_samples() -> list[bytes]:
    out = []
    for name in (
        "generated_nested.stream",
        "generated_union.stream",
        "generated_dictionary.stream",
    ):
        data = _gold(CPP21, name)
        for start, n, _, _ in iter_messages(data):
            out.append(data[start : start + n])
    return out


def test_mutated_and_truncated_gold_metadata_raise_only_format_errors():
    samples = _gold_metadata_samples()
    rng = random.Random(20261122)
    outcomes = {"ok": 0, "error": 0}
    for trial in range(4000):
        src = samples[trial % len(samples)]
        if trial % 4 == 0:
            data = src[: rng.randrange(len(src))]
        else:
            buf = bytearray(src)
            for _ in range(rng.randrange(1, 5)):
                buf[rng.randrange(len(buf))] = rng.randrange(256)
            data = bytes(buf)
        try:
            decode_message(data)
            outcomes["ok"] += 1
        except (FormatError, NotSupported):
            outcomes["error"] += 1
        except ArrowError as exc:  # pragma: no cover - the assertion reports it
            raise AssertionError(f"trial {trial}: unexpected {type(exc).__name__}: {exc}") from exc
    assert outcomes["ok"] > 200 and outcomes["error"] > 1000


def test_random_bytes_raise_metadata_errors():
    rng = random.Random(7)
    for _ in range(2000):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 80)))
        for decode in (decode_message, decode_footer, decode_schema):
            with contextlib.suppress(FormatError, NotSupported):
                decode(data)


def rb_message(rb: RecordBatch) -> Message:
    return Message(md.V5, rb, 112)


@pytest.mark.parametrize("compressed", [False, True])
def test_mutated_record_batch_messages_decode_the_same_on_fast_and_general_paths(compressed):
    nodes, buffers = [[9, 1], [9, 0], [4, 0]], [[0, 8], [8, 72], [80, 0], [80, 32]]
    if compressed:
        rb = RecordBatch(9, nodes, buffers, BodyCompression("zstd"), (2, 0))
    else:
        rb = RecordBatch(9, nodes, buffers)
    good = encode_message(Message(md.V5, rb, 112))
    assert md._fast_record_batch_message(good, MetadataLimits()) == rb_message(rb)
    rng = random.Random(99)
    limits = MetadataLimits()
    fast_hits = 0
    for _ in range(3000):
        buf = bytearray(good)
        for _ in range(rng.randrange(1, 3)):
            buf[rng.randrange(len(buf))] = rng.randrange(256)
        data = bytes(buf)
        fast = md._fast_record_batch_message(data, limits)
        try:
            general = md._decode_message_general(data, 0, limits)
        except (FormatError, NotSupported):
            assert fast is None, "the fast path accepted bytes the general path rejects"
            continue
        if fast is not None:
            fast_hits += 1
            assert fast == general
    assert fast_hits > 100


def test_mutated_gold_schemas_and_footers_raise_only_format_errors():
    folder = require_shared(CPP21)
    samples = []
    for path in sorted(folder.glob("*.arrow_file")):
        data = path.read_bytes()
        (flen,) = struct.unpack_from("<i", data, len(data) - 10)
        samples.append((decode_footer, data[len(data) - 10 - flen : len(data) - 10]))
        (n,) = struct.unpack_from("<i", data, 12)
        samples.append((decode_message, data[16 : 16 + n]))
    rng = random.Random(5)
    outcomes = {"ok": 0, "error": 0}
    for trial in range(6000):
        decode, src = samples[trial % len(samples)]
        buf = bytearray(src)
        for _ in range(rng.randrange(1, 4)):
            pos = rng.randrange(len(buf))
            buf[pos] = rng.choice((0, 0xFF, rng.randrange(256), buf[pos] ^ 0x80))
        try:
            decode(bytes(buf))
            outcomes["ok"] += 1
        except (FormatError, NotSupported):
            outcomes["error"] += 1
    assert outcomes["ok"] > 500 and outcomes["error"] > 500


@pytest.mark.parametrize(
    ("folder", "version", "endianness"),
    [
        ("1.0.0-bigendian", md.V5, "big"),
        ("0.17.1", md.V4, "little"),
        ("2.0.0-compression", md.V5, "little"),
    ],
)
def test_older_gold_streams_decode_with_their_version_and_endianness(folder, version, endianness):
    base = require_shared(INTEGRATION / folder)
    paths = sorted(base.glob("*.stream"))
    assert paths
    for path in paths:
        data = path.read_bytes()
        msgs = [m for _, _, m, _ in iter_messages(data)]
        assert {m.version for m in msgs} == {version}
        assert msgs[0].header.endianness == endianness
        assert msgs[0].header.schema == q_schema(ipc.open_stream(data).schema)
        assert sum(isinstance(m.header, RecordBatch) for m in msgs) >= 1


def test_encode_rejects_unsupported_versions_and_unknown_headers():
    with pytest.raises(ArrowInvalidArgument, match=r"expected metadata version V4 .* found 2"):
        encode_message(Message(2, None, 0))
    with pytest.raises(ArrowInvalidArgument, match="expected a message header object"):
        encode_message(Message(md.V5, "not a header", 0))  # type: ignore[arg-type]


def test_extension_name_that_is_not_utf8_is_a_metadata_error():
    def fields(b: Builder) -> list[int]:
        kv = b.table(
            [(0, "offset", b.create_string(EXT_KEYS[0])), (1, "offset", b.create_string(b"\xff"))]
        )
        return [_field_table(b, 5, b.table([]), f6=b.create_offset_vector([kv]))]

    with pytest.raises(MetadataError, match="expected a UTF-8 extension name"):
        decode_schema(_schema_bytes(fields))


def test_non_contiguous_input_is_a_metadata_error():
    data = np.frombuffer(encode_message(Message(md.V5, None, 0)) * 2, np.uint8)[::2]
    with pytest.raises(MetadataError, match="expected a contiguous flatbuffer"):
        decode_message(data)


def test_footer_without_a_version_field_reads_as_v4():
    from quiver.ipc.flatbuf import Builder

    sm = SchemaMessage(qt.schema([("a", qt.int64())]), {})
    full = decode_footer(encode_footer(Footer(md.V5, sm, (), ())))
    assert full.version == md.V5
    # rebuild the footer table with only its schema (field 1), no version (field 0)
    b = Builder()
    schema_handle = md._encode_schema_table(b, sm)
    root = b.table([(1, "offset", schema_handle)])
    footer = decode_footer(b.finish(root))
    assert footer.version == md.V4
    assert footer.schema.schema.names == ["a"]


# -- the plain-field fast path of schema decoding -------------------------------------


def _every_type_schema_message() -> bytes:
    """A Schema message (pyarrow) with fields of every type, plain and not."""
    import pyarrow as pa

    from tests.ipc_cases import all_type_arrays

    fields = [
        pa.field(f"{name}-ü", arr.type, nullable=k % 2 == 0)
        for k, (name, arr) in enumerate(all_type_arrays().items())
    ]
    fields += [
        pa.field("tz", pa.timestamp("ns", "Europe/Paris")),
        pa.field("meta", pa.int8(), metadata={"k": "v"}),
        pa.field("", pa.float16()),
        pa.field("d32", pa.date32(), nullable=False),
    ]
    return pa.schema(fields).serialize().to_pybytes()


def _decoded(data: bytes, *, plain: bool, monkeypatch: pytest.MonkeyPatch) -> object:
    with monkeypatch.context() as m:
        if not plain:
            m.setattr(md_fields, "_plain_field", lambda *args: None)
        try:
            n = struct.unpack_from("<i", data, 4)[0]
            msg = md.decode_message(data[8 : 8 + n])
            return msg.version, msg.header, msg.body_length, msg.custom_metadata
        except ArrowError as exc:
            return type(exc), str(exc), exc.offset, exc.field_path


def test_plain_fields_decode_as_the_general_decoder_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = _every_type_schema_message()
    taken = []
    plain_field = md._plain_field

    def counting(*args):
        got = plain_field(*args)
        taken.append(got is not None)
        return got

    monkeypatch.setattr(md_fields, "_plain_field", counting)
    fast = _decoded(data, plain=True, monkeypatch=monkeypatch)
    assert any(taken) and not all(taken)  # both paths ran
    general = _decoded(data, plain=False, monkeypatch=monkeypatch)
    assert fast == general
    schema = fast[1].schema  # type: ignore[index]
    assert [f.metadata for f in schema] == [f.metadata for f in general[1].schema]  # type: ignore[index]
    assert schema.field("tz").type == qt.timestamp("ns", "Europe/Paris")


def test_every_byte_flip_of_a_schema_decodes_as_the_general_decoder_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import pyarrow as pa

    data = pa.schema(
        [
            pa.field("a", pa.int32()),
            pa.field("b", pa.float64(), nullable=False),
            pa.field("c", pa.timestamp("us", "UTC")),
            pa.field("d", pa.string()),
            pa.field("e", pa.date64()),
        ]
    ).serialize().to_pybytes()
    for pos in range(8, len(data)):
        for flip in (0x01, 0x80, 0xFF):
            bad = bytearray(data)
            bad[pos] ^= flip
            bad = bytes(bad)
            assert _decoded(bad, plain=True, monkeypatch=monkeypatch) == _decoded(
                bad, plain=False, monkeypatch=monkeypatch
            ), (pos, flip)


def test_decoding_bugs_are_not_disguised_as_metadata_errors(monkeypatch: pytest.MonkeyPatch):
    # the flatbuffer reader reports every bounds problem itself (MetadataError with an
    # offset), so an IndexError while decoding is quiver's own bug and must surface as one
    def broken(*args):
        raise IndexError("a bug")

    monkeypatch.setattr(md_fields, "_plain_field", broken)
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


@pytest.mark.parametrize("little_host", [True, False])
@pytest.mark.parametrize("n", [1, 40, 3000])
def test_footer_blocks_read_without_numpy_match_and_refuse_negatives(
    monkeypatch: pytest.MonkeyPatch, little_host: bool, n: int
) -> None:
    # the Blocks are read with struct / memoryview (no numpy); a big-endian host takes the
    # struct path
    monkeypatch.setattr(md_decode, "_LITTLE_HOST", little_host)
    sm = SchemaMessage(qt.schema([("a", qt.int8())]), {})
    blocks = tuple(Block(8 + 100 * i, 64 + i % 5, i) for i in range(n))
    data = encode_footer(Footer(md.V5, sm, blocks[:2], blocks))
    footer = decode_footer(data)
    assert footer.record_batches == blocks and footer.dictionaries == blocks[:2]
    # a negative metaDataLength in the last Block: found, with its index and offset
    at = data.rindex(struct.pack("<qi", blocks[-1].offset, blocks[-1].meta_data_length))
    bad = bytearray(data)
    bad[at + 8 : at + 12] = struct.pack("<i", -3)
    message = rf"expected non-negative Block values, found .*-3.* at Block {n - 1}"
    with pytest.raises(MetadataError, match=message) as e:
        decode_footer(bytes(bad), base_offset=1000)
    assert e.value.offset == 1000 + at
