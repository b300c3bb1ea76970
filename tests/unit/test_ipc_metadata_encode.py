"""Tests for quiver.ipc.metadata.encode: quiver dataclasses -> IPC flatbuffer metadata."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.ipc as pipc
import pytest

import quiver as qv
from quiver import types as qt
from quiver.errors import ArrowInvalidArgument
from quiver.ipc import metadata as md
from quiver.ipc.body import V5
from quiver.ipc.metadata import (
    Block,
    BodyCompression,
    Buffer,
    DictionaryBatch,
    Footer,
    Message,
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
from tests.unit._ipc_helpers import VERSIONS
from tests.unit._metadata_helpers import EOS, dict_paths, frame, q_schema

# -- the template ---------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("num_nodes", [0, 1, 2, 3, 8, 57])
@pytest.mark.parametrize("num_buffers", [0, 1, 2, 5, 22, 131])
def test_template_bytes_equal_the_general_builder(
    version: int, num_nodes: int, num_buffers: int
) -> None:
    rng = np.random.default_rng(num_nodes * 1000 + num_buffers)
    for _ in range(3):
        nodes = rng.integers(0, 1 << 40, (num_nodes, 2))
        buffers = rng.integers(0, 1 << 40, (num_buffers, 2))
        header = md.RecordBatch(int(rng.integers(0, 1 << 50)), nodes, buffers)
        msg = md.Message(version, header, int(rng.integers(1, 1 << 50)))
        tmpl = md.record_batch_template(version, num_nodes, num_buffers)
        fast = tmpl.encode(
            msg.body_length, header.length, nodes.ravel().tolist(), buffers.ravel().tolist()
        )
        assert fast == md.encode_message_general(msg) == md.encode_message(msg)
        assert len(fast) == tmpl.size
        back = md.decode_message(fast)
        assert back.header == header and back.body_length == msg.body_length
        assert back.version == version


def test_template_prefix_goes_before_the_flatbuffer() -> None:
    tmpl = md.record_batch_template(V5, 1, 2).with_prefix(b"PREFIX!!")
    out = tmpl.encode(16, 2, [2, 0], [0, 0, 0, 16])
    assert out[:8] == b"PREFIX!!"
    assert out[8:] == md.encode_message_general(
        md.Message(V5, md.RecordBatch(2, [[2, 0]], [[0, 0], [0, 16]]), 16)
    )


def test_messages_the_template_cannot_express_use_the_general_builder() -> None:
    header = md.RecordBatch(0, [[0, 0]], [[0, 0], [0, 0]])
    zero_body = md.Message(V5, header, 0)  # bodyLength 0 is left out by the builder
    assert md.encode_message(zero_body) == md.encode_message_general(zero_body)
    assert md.decode_message(md.encode_message(zero_body)).body_length == 0
    header = md.RecordBatch(1, [[1, 0]], [[0, 8]])
    custom = md.Message(V5, header, 8, qv.KeyValueMetadata({"k": "v"}))
    assert md.encode_message(custom) == md.encode_message_general(custom)


def test_template_refuses_a_bad_version() -> None:
    with pytest.raises(qv.ArrowInvalidArgument, match="expected metadata version"):
        md.RecordBatchTemplate(2, 1, 1)


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
    ps = pipc.read_schema(pa.py_buffer(frame(enc)))
    assert pipc.open_stream(frame(enc) + EOS).schema.equals(ps)
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
    ps = pipc.read_schema(pa.py_buffer(frame(encode_schema_message(sm))))
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
    got = pipc.read_tensor(pa.py_buffer(data))
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


def test_encode_rejects_unsupported_versions_and_unknown_headers():
    with pytest.raises(ArrowInvalidArgument, match=r"expected metadata version V4 .* found 2"):
        encode_message(Message(2, None, 0))
    with pytest.raises(ArrowInvalidArgument, match="expected a message header object"):
        encode_message(Message(md.V5, "not a header", 0))  # type: ignore[arg-type]
