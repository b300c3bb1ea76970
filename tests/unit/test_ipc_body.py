"""Tests for quiver.ipc.body: buffers and children of a message body, located and checked."""

from __future__ import annotations

import struct

import pyarrow as pa
import pyarrow.ipc as pipc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import quiver as qv
import quiver.ipc as ipc
from quiver.ipc import assemble as assemble_module
from quiver.ipc import metadata as md
from quiver.ipc.body import assemble, assemble_body, compile_write_plan, layout_body
from quiver.ipc.decoder import END, MessageDecoder
from tests.unit._ipc_helpers import CASES, VERSIONS, _plain_table, _quiver_batch, _stream, _windows


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
    assert info.value.field_path == "s"
    assert "expected offsets[3] <= data size 6, found 600" in str(info.value)


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


def _general_body(columns: list, version: int) -> tuple[list[int], list[int], bytes, int, list]:
    flat = assemble(columns, version)
    specs, parts, body_length = layout_body(flat.buffers)
    nodes = [x for node in flat.nodes for x in node]
    body = b"".join(bytes(memoryview(p)) for p in parts)
    return nodes, specs.ravel().tolist(), body, body_length, flat.variadic_buffer_counts


# -- the one-pass body assembly ---------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_assemble_body_equals_the_general_walk_for_every_type(name: str, version: int) -> None:
    arr = CASES[name]
    batch = _quiver_batch(pa.table({name: arr, "n": pa.array(range(len(arr)), pa.int64())}))
    plan = compile_write_plan(batch.schema)
    for off, n in [(0, len(arr)), (1, len(arr) - 2), (2, 1), (len(arr), 0)]:
        columns = batch.slice(off, n).columns
        nodes, specs, parts, body_length, variadic = assemble_body(columns, plan, version)
        assert parts[0] is None
        body = b"".join(bytes(memoryview(p)) for p in parts[1:])
        assert (nodes, specs, body, body_length, variadic) == _general_body(columns, version)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("nulls", [False, True])
def test_plain_columns_at_every_kind_of_offset_match_the_general_walk(
    nulls: bool, version: int
) -> None:
    batch = _quiver_batch(_plain_table(41, nulls))
    plan = compile_write_plan(batch.schema)
    assert [kind for kind, _ in plan].count(0) == 0  # all handled inline
    for off, n in _windows(41):
        columns = batch.slice(off, n).columns
        nodes, specs, parts, body_length, variadic = assemble_body(columns, plan, version)
        body = b"".join(bytes(memoryview(p)) for p in parts[1:])
        assert (nodes, specs, body, body_length, variadic) == _general_body(columns, version)


def test_plain_columns_at_byte_aligned_offsets_never_take_the_general_walk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    batch = _quiver_batch(_plain_table(41, True))
    plan = compile_write_plan(batch.schema)

    def refuse(self: object, arr: object) -> None:
        raise AssertionError("the general walk was taken")

    monkeypatch.setattr(assemble_module.Assembler, "add", refuse)
    for off, n in [(0, 41), (8, 33), (16, 0)]:
        assemble_body(batch.slice(off, n).columns, plan)
    with pytest.raises(AssertionError, match="general walk"):
        assemble_body(batch.slice(3, 30).columns, plan)  # unaligned: the general walk


PLAIN = _quiver_batch(_plain_table(77, True))


PLAIN_PLAN = compile_write_plan(PLAIN.schema)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(0, 77), st.integers(0, 77), st.sampled_from(VERSIONS), st.booleans()
)
def test_any_window_of_plain_columns_matches_the_general_walk(
    start: int, length: int, version: int, twice: bool
) -> None:
    window = PLAIN.slice(start, length)
    if twice:  # a slice of a slice: offsets add up
        window = window.slice(length // 3)
    columns = window.columns
    nodes, specs, parts, body_length, variadic = assemble_body(columns, PLAIN_PLAN, version)
    body = b"".join(bytes(memoryview(p)) for p in parts[1:])
    assert (nodes, specs, body, body_length, variadic) == _general_body(columns, version)
