"""Tests for quiver.ipc.metadata.decode: IPC flatbuffer metadata -> quiver dataclasses."""

from __future__ import annotations

import contextlib
import random
import struct
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.ipc as pipc
import pytest

from quiver import types as qt
from quiver.errors import ArrowError, FormatError, MetadataError, NotSupported
from quiver.ipc import metadata as md
from quiver.ipc.flatbuf import Builder
from quiver.ipc.metadata import (
    Block,
    BodyCompression,
    DictionaryBatch,
    Footer,
    Message,
    MetadataLimits,
    RecordBatch,
    SchemaMessage,
    Tensor,
    decode_footer,
    decode_message,
    decode_schema,
    encode_footer,
    encode_message,
)
from quiver.ipc.metadata import decode as md_decode
from quiver.ipc.metadata import fields as md_fields
from tests.conftest import INTEGRATION, SUPPLEMENT, require_shared
from tests.unit._metadata_helpers import (
    EOS,
    _field_table,
    _schema_bytes,
    dict_paths,
    frame,
    q_schema,
    q_type,
)

CPP21 = INTEGRATION / "cpp-21.0.0"


def names_option(folder: Path, suffix: str) -> list[str]:
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


# --------------------------------------------------------------------------------------
# gold files, compared with pyarrow


@pytest.mark.parametrize("name", names_option(CPP21, ".stream"))
def test_gold_stream_schema_matches_pyarrow(name):
    data = _gold(CPP21, name)
    (_, _, msg, _) = next(iter_messages(data))
    assert msg.version == md.V5
    assert isinstance(msg.header, SchemaMessage)
    expected = q_schema(pipc.open_stream(data).schema)
    got = msg.header.schema
    assert got.names == expected.names
    for g, e in zip(got.fields, expected.fields):
        assert g == e, f"{g} != {e}"
    assert got.metadata == expected.metadata
    assert sorted(msg.header.dictionary_ids) == dict_paths(got)
    assert msg.header.endianness == "little"


@pytest.mark.parametrize("name", names_option(CPP21, ".stream"))
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
    expected = pipc.open_stream(data).read_all()
    got = pipc.open_stream(rebuilt).read_all()
    assert got.schema.equals(expected.schema, check_metadata=True)
    assert got.equals(expected)
    assert "SchemaMessage" in kinds


@pytest.mark.parametrize("name", names_option(CPP21, ".arrow_file"))
def test_gold_file_footer_decodes_and_reencodes(name):
    data = _gold(CPP21, name)
    (flen,) = struct.unpack_from("<i", data, len(data) - 10)
    fstart = len(data) - 10 - flen
    footer = decode_footer(memoryview(data)[fstart : fstart + flen], base_offset=fstart)
    reader = pipc.open_file(data)
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
    again = pipc.open_file(rebuilt)
    assert again.read_all().equals(reader.read_all())
    assert again.schema.equals(reader.schema, check_metadata=True)


def test_gold_v4_union_message_decodes_as_v4():
    data = _gold(SUPPLEMENT, "metadata_v4_union.stream")
    msgs = [m for _, _, m, _ in iter_messages(data)]
    assert {m.version for m in msgs} == {md.V4}
    expected = q_schema(pipc.open_stream(data).schema)
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
    assert pipc.open_stream(rebuilt).read_all().equals(pipc.open_stream(data).read_all())


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
    ps = pipc.open_stream(data).schema
    assert msg.header.schema.metadata.to_dict() == ps.metadata
    assert msg.header.schema == q_schema(ps)


@pytest.mark.parametrize("name", names_option(SUPPLEMENT, ".tensor"))
def test_gold_tensor_messages_match_pyarrow(name):
    data = _gold(SUPPLEMENT, name)
    (_, _, msg, body_start) = next(iter_messages(data))
    tensor = pipc.read_tensor(pa.py_buffer(data))
    header = msg.header
    assert isinstance(header, Tensor)
    assert header.type == q_type(tensor.type)
    assert header.shape == tuple(tensor.shape)
    assert header.strides == tuple(tensor.strides)
    assert [x or "" for x in header.dim_names] == list(tensor.dim_names)
    assert header.data_offset + header.data_length <= msg.body_length
    # quiver's encoding of the same Tensor header, with the same body, reads back equal
    body = data[body_start : body_start + msg.body_length]
    again = pipc.read_tensor(pa.py_buffer(frame(encode_message(msg), body)))
    assert again.equals(tensor)
    assert list(again.dim_names) == list(tensor.dim_names)


def test_plain_and_general_record_batch_decoders_agree():
    for ncols in (0, 1, 3, 40, 2000):
        rb = RecordBatch(7, [[7, k % 3] for k in range(ncols)], [[8 * k, 8] for k in range(ncols)])
        enc = encode_message(Message(md.V4, rb, 8 * ncols))
        fast = md.fast_record_batch_message(enc, MetadataLimits())
        assert fast is not None
        assert fast == md.decode_message_general(enc, 0, MetadataLimits())
        # the generic builder's layout decodes the same, on the general path too
        b = Builder()
        nodes = b.create_struct_vector(np.asarray(rb.nodes, dtype="<i8").reshape(-1, 2))
        bufs = b.create_struct_vector(np.asarray(rb.buffers, dtype="<i8").reshape(-1, 2))
        hdr = b.table([(0, "<q", 7), (1, "offset", nodes), (2, "offset", bufs)])
        root = b.table([(0, "<h", md.V4), (1, "<B", 3), (2, "offset", hdr), (3, "<q", 8 * ncols)])
        assert decode_message(b.finish(root)) == fast


def test_header_none_message_decodes():
    msg = decode_message(encode_message(Message(md.V5, None, 0)))
    assert msg.header is None and msg.body_length == 0


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
    assert md.fast_record_batch_message(good, MetadataLimits()) == rb_message(rb)
    rng = random.Random(99)
    limits = MetadataLimits()
    fast_hits = 0
    for _ in range(3000):
        buf = bytearray(good)
        for _ in range(rng.randrange(1, 3)):
            buf[rng.randrange(len(buf))] = rng.randrange(256)
        data = bytes(buf)
        fast = md.fast_record_batch_message(data, limits)
        try:
            general = md.decode_message_general(data, 0, limits)
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
        assert msgs[0].header.schema == q_schema(pipc.open_stream(data).schema)
        assert sum(isinstance(m.header, RecordBatch) for m in msgs) >= 1


def test_footer_without_a_version_field_reads_as_v4():
    from quiver.ipc.flatbuf import Builder

    sm = SchemaMessage(qt.schema([("a", qt.int64())]), {})
    full = decode_footer(encode_footer(Footer(md.V5, sm, (), ())))
    assert full.version == md.V5
    # rebuild the footer table with only its schema (field 1), no version (field 0)
    b = Builder()
    schema_handle = md.encode_schema_table(b, sm)
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
            m.setattr(md_fields, "plain_field", lambda *args: None)
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
    plain_field = md.plain_field

    def counting(*args):
        got = plain_field(*args)
        taken.append(got is not None)
        return got

    monkeypatch.setattr(md_fields, "plain_field", counting)
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


def test_decoded_footer_blocks_behave_as_the_tuple_they_were_encoded_from():
    blocks = tuple(md.Block(8 + 200 * i, 120, 64 + 8 * i) for i in range(5))
    sm = md.SchemaMessage(qt.schema([("a", qt.int64())]), {})
    footer = decode_footer(md.encode_footer(md.Footer(md.V5, sm, blocks[:1], blocks)))
    found = footer.record_batches
    assert isinstance(found, md.Blocks)  # (made one by one, when asked for)
    assert found == blocks and blocks == found and found != blocks[:4] and found != "x"
    assert hash(found) == hash(blocks) and repr(found) == repr(blocks)
    assert len(found) == 5 and found[-1] == blocks[-1] and found[1:3] == blocks[1:3]
    assert list(found) == list(blocks) and found.index(blocks[2]) == 2
    assert footer.dictionaries + found == blocks[:1] + blocks
    assert blocks[:1] + found == blocks[:1] + blocks
    assert found.offsets == [b.offset for b in blocks]
    assert found != list(blocks)  # (as a tuple is not equal to a list)
    for other in ([1], "x"):
        with pytest.raises(TypeError):
            found + other
        with pytest.raises(TypeError):
            other + found
    with pytest.raises(IndexError):
        found[5]
    assert footer == md.Footer(md.V5, sm, blocks[:1], blocks)
    none = decode_footer(md.encode_footer(md.Footer(md.V5, sm, (), blocks))).dictionaries
    assert isinstance(none, md.Blocks) and none == () and none.offsets == []
