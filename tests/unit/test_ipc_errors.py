"""Malformed IPC input raises quiver's errors, located and worded "expected X, found Y"."""

from __future__ import annotations

import struct

import pyarrow as pa
import pyarrow.ipc as pipc
import pytest

import quiver as qv
import quiver.ipc as ipc
from quiver.ipc import metadata as md
from quiver.ipc.decoder import END, IpcLimits, MessageDecoder
from quiver.ipc.stream_decoder import StreamDecoder


def _stream(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue().to_pybytes()


def _file(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue().to_pybytes()


TABLE = pa.table({"a": [1, 2, 3], "s": ["x", None, "zzz"], "l": [[1], [], None]})


def test_truncated_stream_raises_truncated_error_with_offset() -> None:
    data = _stream(TABLE)
    with pytest.raises(qv.TruncatedError) as info:
        list(ipc.open_stream(data[:-20]))
    assert info.value.offset is not None and info.value.message_index == 1
    assert "expected" in str(info.value) and "found" in str(info.value)
    assert isinstance(info.value, EOFError)


def test_file_given_to_stream_reader_is_explained() -> None:
    with pytest.raises(qv.FramingError, match="open_file"):
        ipc.open_stream(_file(TABLE))


def test_stream_given_to_file_reader_is_explained() -> None:
    with pytest.raises(qv.FramingError, match="open_stream"):
        ipc.open_file(_stream(TABLE))


def test_empty_input_has_no_schema() -> None:
    with pytest.raises(qv.FormatError, match="expected a Schema message"):
        ipc.open_stream(b"")


def test_batch_before_schema_is_rejected() -> None:
    data = _stream(TABLE)
    (n,) = struct.unpack_from("<i", data, 4)
    with pytest.raises(qv.FormatError, match="expected a Schema message first"):
        ipc.open_stream(data[8 + n :])


def test_buffer_outside_body_is_a_body_error_with_field_path() -> None:
    batch = qv.record_batch({"a": qv.array([1, 2, 3], qv.int64())})
    sink = ipc.BufferOutputStream()
    with ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch)
    data = bytearray(sink.getvalue())
    # the body has one 24-byte buffer; claim a 4 GiB body-relative offset for it
    reader = ipc.open_stream(bytes(data))
    header_pos = data.find(struct.pack("<qq", 0, 24))
    assert header_pos > 0
    data[header_pos : header_pos + 8] = struct.pack("<q", 1 << 32)
    with pytest.raises(qv.BodyError) as info:
        list(ipc.open_stream(bytes(data)))
    assert info.value.field_path == "a" and "inside the body" in str(info.value)
    assert reader.schema.names == ["a"]


def test_unknown_dictionary_id_is_a_dictionary_error() -> None:
    table = pa.table({"d": pa.array(["a", "b"]).dictionary_encode()})
    data = bytearray(_stream(table))
    # drop the dictionary batch: schema message, then the record batch directly
    (n0,) = struct.unpack_from("<i", data, 4)
    first_end = 8 + n0
    (n1,) = struct.unpack_from("<i", data, first_end + 4)
    msg = pa.ipc.read_message(pa.py_buffer(bytes(data[first_end:])))
    second_end = first_end + 8 + n1 + msg.body.size
    without = bytes(data[:first_end] + data[second_end:])
    with pytest.raises(qv.DictionaryError, match="dictionary id 0"):
        list(ipc.open_stream(without))


def test_invalid_validate_level_is_caller_error() -> None:
    with pytest.raises(qv.ArrowInvalidArgument, match="validate"):
        ipc.open_stream(_stream(TABLE), validate="paranoid")


def test_validate_none_is_refused_not_taken_as_structural() -> None:
    # "none" used to be accepted and quietly meant "structural"
    with pytest.raises(qv.ArrowInvalidArgument, match=r"found 'none'.*use 'structural'"):
        ipc.open_stream(_stream(TABLE), validate="none")
    with pytest.raises(qv.ArrowInvalidArgument, match="found 'none'"):
        StreamDecoder(ipc.IpcReadOptions(validate="none"))
    assert len(list(ipc.open_stream(_stream(TABLE), validate="structural"))) >= 1


def test_full_validation_catches_non_monotonic_offsets() -> None:
    batch = qv.record_batch({"s": qv.array(["ab", "cd", "ef"])})
    sink = ipc.BufferOutputStream()
    with ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch)
    data = bytearray(sink.getvalue())
    pos = data.find(struct.pack("<iiii", 0, 2, 4, 6))
    data[pos + 4 : pos + 8] = struct.pack("<i", 5)
    data[pos + 8 : pos + 12] = struct.pack("<i", 1)
    with pytest.raises(qv.ArrowInvalid) as info:
        list(ipc.open_stream(bytes(data), validate="full"))
    assert info.value.field_path and info.value.field_path.startswith("s")
    assert info.value.message_index == 1


def test_string_offsets_past_the_data_are_a_body_error_naming_the_column() -> None:
    batch = qv.record_batch({"n": qv.array([1, 2, 3]), "s": qv.array(["ab", "cd", "ef"])})
    sink = ipc.BufferOutputStream()
    with ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch)
    data = bytearray(sink.getvalue())
    pos = data.find(struct.pack("<iiii", 0, 2, 4, 6))
    data[pos + 12 : pos + 16] = struct.pack("<i", 600)
    with pytest.raises(qv.BodyError) as info:
        list(ipc.open_stream(bytes(data)))
    assert info.value.field_path == "s" and "found first 0, last 600" in str(info.value)


def test_a_short_values_buffer_is_a_body_error_naming_the_column() -> None:
    batch = qv.record_batch({"a": qv.array([1, 2, 3], qv.int64()), "b": qv.array([1.0, 2.0, 3.0])})
    sink = ipc.BufferOutputStream()
    with ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch)
    data = bytearray(sink.getvalue())
    # the Buffer vector: a validity, a values, b validity, b values (offset 24, length 24)
    spec = struct.pack("<8q", 0, 0, 0, 24, 24, 0, 24, 24)
    pos = data.find(spec)
    assert pos > 0
    data[pos + 56 : pos + 64] = struct.pack("<q", 16)
    with pytest.raises(qv.BodyError) as info:
        list(ipc.open_stream(bytes(data)))
    assert info.value.field_path == "b" and "at least 24 bytes" in str(info.value)


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


def _rewrite_batch(data: bytes, fn) -> bytes:
    """``data`` with its first RecordBatch header replaced by ``fn(header)`` (same body)."""
    from quiver.ipc.framing import EOS, frame_message

    dec = MessageDecoder()
    dec.feed(data)
    dec.feed_eof()
    out, done = [], False
    while (raw := dec.next_message()) is not END:
        msg = raw.message
        if isinstance(msg.header, md.RecordBatch) and not done:
            msg = md.Message(msg.version, fn(msg.header), msg.body_length, msg.custom_metadata)
            done = True
        out.append(frame_message(md.encode_message(msg)) + bytes(raw.body))
    return b"".join(out) + EOS


def test_null_children_cannot_claim_rows_the_body_does_not_back() -> None:
    table = pa.table({"l": pa.array([[None, None], None], pa.list_(pa.null()))})
    big = 2**31 - 1

    def claim(rb):
        nodes = rb.nodes.copy()
        nodes[1] = (big, big)  # the null child claims 2**31 - 1 values
        return md.RecordBatch(rb.length, nodes, rb.buffers, rb.compression)

    data = bytearray(_rewrite_batch(_stream(table), claim))
    off = data.rfind(struct.pack("<iii", 0, 2, 2))  # the list's offsets, in the body
    data[off + 4 : off + 12] = struct.pack("<ii", big, big)
    with pytest.raises(qv.LimitExceeded, match="max_unbacked_rows") as info:
        list(ipc.open_stream(bytes(data)))
    assert info.value.field_path == "l.item"


def test_v4_run_end_encoded_columns_cross_with_pyarrow_both_ways() -> None:
    ree = pa.RunEndEncodedArray.from_arrays(pa.array([2, 3], pa.int32()), pa.array(["a", None]))
    table = pa.table({"r": ree})
    sink = pa.BufferOutputStream()
    opts = pipc.IpcWriteOptions(metadata_version=pipc.MetadataVersion.V4)
    with pipc.new_stream(sink, table.schema, options=opts) as w:
        w.write_table(table)
    batch = next(iter(ipc.open_stream(sink.getvalue().to_pybytes())))
    assert batch.column(0).to_pylist() == ["a", "a", None]
    out = ipc.BufferOutputStream()
    with ipc.new_stream(out, batch.schema, metadata_version="V4") as w:
        w.write_batch(batch)
    assert pipc.open_stream(pa.py_buffer(out.getvalue())).read_all().equals(table)


def test_v4_union_with_top_level_nulls_is_refused_like_arrow_cpp() -> None:
    union = pa.UnionArray.from_sparse(pa.array([0, 1], pa.int8()),
                                      [pa.array([1, 2]), pa.array(["a", "b"])])
    table = pa.table({"u": union})
    sink = pa.BufferOutputStream()
    opts = pipc.IpcWriteOptions(metadata_version=pipc.MetadataVersion.V4)
    with pipc.new_stream(sink, table.schema, options=opts) as w:
        w.write_table(table)

    def with_nulls(rb):
        nodes, buffers = rb.nodes.copy(), rb.buffers.copy()
        nodes[0] = (2, 1)  # one null in the union itself
        buffers[0] = (0, 1)  # and a 1-byte validity bitmap (V4's first union buffer)
        return md.RecordBatch(rb.length, nodes, buffers, rb.compression)

    data = _rewrite_batch(sink.getvalue().to_pybytes(), with_nulls)
    with pytest.raises(qv.NotSupported, match="top-level nulls in a V4"):
        list(ipc.open_stream(data))


def test_a_conversion_error_from_a_batch_names_the_column() -> None:
    batch = qv.record_batch({"ok": qv.array([1]), "s": qv.array(["x"])})
    sink = ipc.BufferOutputStream()
    with ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch)
    data = bytearray(sink.getvalue())
    pos = data.rfind(b"x")
    data[pos] = 0xFF  # invalid UTF-8, which only the full level or conversion sees
    got = next(iter(ipc.open_stream(bytes(data))))
    with pytest.raises(qv.ArrowInvalid) as info:
        got.to_pylist()
    assert info.value.field_path == "s"
