"""The writer's compiled path: the RecordBatch template and the one-pass body assembly
give the same bytes as the general builder and the general walk, for every type."""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pyarrow.ipc as pipc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import quiver as qv
import quiver.ipc as ipc
from quiver.ipc import body as body_module
from quiver.ipc import metadata as md
from quiver.ipc.body import (
    V4,
    V5,
    assemble,
    assemble_body,
    compile_write_plan,
    layout_body,
)
from quiver.ipc.framing import read_frame
from tests.ipc_cases import all_type_arrays

CASES = all_type_arrays()
VERSIONS = [V4, V5]


def _quiver_batch(table: pa.Table) -> qv.RecordBatch:
    sink = pa.BufferOutputStream()
    with pipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    (batch,) = list(ipc.open_stream(sink.getvalue().to_pybytes()))
    return batch


def _messages(data: bytes) -> list[tuple[bytes, md.Message]]:
    """Every message of a stream as (its metadata as framed, with padding; decoded)."""
    out = []
    pos = 0
    while True:
        meta, body_start, _ = read_frame(data, pos)
        if not len(meta):
            return out
        msg = md.decode_message(meta)
        out.append((bytes(meta), msg))
        pos = body_start + msg.body_length


def _write(schema: qv.Schema, batches: list, **kw) -> bytes:
    sink = ipc.BufferOutputStream()
    with ipc.new_stream(sink, schema, **kw) as w:
        for b in batches:
            w.write_batch(b)
    return bytes(sink.getvalue())


def _general_body(columns: list, version: int) -> tuple[list[int], list[int], bytes, int, list]:
    flat = assemble(columns, version)
    specs, parts, body_length = layout_body(flat.buffers)
    nodes = [x for node in flat.nodes for x in node]
    body = b"".join(bytes(memoryview(p)) for p in parts)
    return nodes, specs.ravel().tolist(), body, body_length, flat.variadic_buffer_counts


def _windows(n: int) -> list[tuple[int, int]]:
    """Whole, byte-aligned and unaligned slices (and an empty one) of an n-row batch."""
    return [(0, n), (8, n - 8), (3, n - 5), (1, 1), (n, 0), (16, n - 16)]


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


def _plain_table(rows: int, nulls: bool) -> pa.Table:
    """A batch of the kinds the compiled plan handles inline, with or without nulls."""
    rng = np.random.default_rng(rows)
    mask = rng.random(rows) < 0.3 if nulls else None
    words = np.array([f"w{i}" * (i % 4) for i in range(50)], dtype=object)[
        rng.integers(0, 50, rows)
    ]
    return pa.table(
        {
            "i8": pa.array(rng.integers(-100, 100, rows).astype(np.int8), mask=mask),
            "i64": pa.array(rng.integers(0, 1 << 40, rows), mask=mask),
            "f32": pa.array(rng.random(rows).astype(np.float32), mask=mask),
            "b": pa.array(rng.random(rows) > 0.5, mask=mask),
            "s": pa.array(words, pa.string(), mask=mask),
            "ls": pa.array(words, pa.large_string(), mask=mask),
            "bin": pa.array([w.encode() for w in words], pa.binary(), mask=mask),
            "d128": pa.array(rng.integers(0, 1000, rows), mask=mask).cast(pa.decimal128(21, 2)),
            "ts": pa.array(rng.integers(0, 1 << 50, rows), pa.timestamp("us"), mask=mask),
            "fsb": pa.array([b"abcd"] * rows, pa.binary(4), mask=mask),
            "dict": pa.array(words, pa.string()).dictionary_encode(),
        }
    )


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

    monkeypatch.setattr(body_module._Assembler, "add", refuse)
    for off, n in [(0, 41), (8, 33), (16, 0)]:
        assemble_body(batch.slice(off, n).columns, plan)
    with pytest.raises(AssertionError, match="general walk"):
        assemble_body(batch.slice(3, 30).columns, plan)  # unaligned: the general walk


def test_string_offsets_not_starting_at_zero_are_rebased() -> None:
    # a string column whose own offsets start past zero (not a slice of the array object)
    offsets = np.array([3, 5, 5, 9], dtype="<i4").view(np.uint8)
    data = np.frombuffer(b"xxxabcdefgh", dtype=np.uint8)
    col = qv.make_array(qv.string(), 3, [None, offsets, data])
    batch = qv.RecordBatch.from_arrays([col], names=["s"])
    plan = compile_write_plan(batch.schema)
    _, specs, parts, _, _ = assemble_body(batch.columns, plan)
    # no validity (no nulls), then the rebased offsets, the data window and its padding
    assert specs == [0, 0, 0, 16, 16, 6]
    assert np.frombuffer(bytes(memoryview(parts[1])), "<i4").tolist() == [0, 2, 2, 6]
    assert bytes(memoryview(parts[2])) == b"abcdef"
    data_out = _write(batch.schema, [batch])
    assert pipc.open_stream(pa.py_buffer(data_out)).read_all().column(0).to_pylist() == [
        "ab", "", "cdef"
    ]


# -- the writer -------------------------------------------------------------------------


def _assert_fast_metadata_is_the_general_builders(data: bytes) -> int:
    """Every RecordBatch message's metadata equals the general builder's encoding of
    what it decodes to; returns how many were checked."""
    checked = 0
    for meta, msg in _messages(data):
        if isinstance(msg.header, md.RecordBatch):
            general = md.encode_message_general(msg)
            # framed metadata is padded to 8 bytes after the prefix; the flatbuffer already is
            assert meta == general
            checked += 1
    return checked


@pytest.mark.parametrize("version", ["V4", "V5"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_written_batches_read_back_in_pyarrow_and_match_the_general_builder(
    name: str, version: str
) -> None:
    arr = CASES[name]
    batch = _quiver_batch(pa.table({name: arr, "after": pa.array(range(len(arr)), pa.int32())}))
    batches = [batch, batch.slice(1, len(arr) - 2), batch.slice(0, 0), batch]
    data = _write(batch.schema, batches, metadata_version=version)
    got = pipc.open_stream(pa.py_buffer(data)).read_all()
    got.validate(full=True)
    want = [r for b in batches for r in b.to_pylist()]
    assert got.to_pylist() == want
    assert _assert_fast_metadata_is_the_general_builders(data) == len(batches)
    assert [r for b in ipc.open_stream(data) for r in b.to_pylist()] == want


@pytest.mark.parametrize("version", ["V4", "V5"])
def test_many_plain_batches_equal_what_the_general_path_writes(version: str) -> None:
    batch = _quiver_batch(_plain_table(100, True))
    windows = [batch.slice(o, n) for o, n in _windows(100)]
    fast = _write(batch.schema, windows, metadata_version=version)

    class Duck:  # not a quiver RecordBatch: the writer takes the general walk
        def __init__(self, b: qv.RecordBatch) -> None:
            self.schema, self.columns, self.num_rows = b.schema, b.columns, b.num_rows

    general = _write(batch.schema, [Duck(w) for w in windows], metadata_version=version)
    assert fast == general
    got = pipc.open_stream(pa.py_buffer(fast)).read_all()
    assert got.to_pylist() == [r for w in windows for r in w.to_pylist()]


def test_file_blocks_of_fast_batches_point_at_their_messages() -> None:
    batch = _quiver_batch(_plain_table(30, True))
    sink = ipc.BufferOutputStream()
    with ipc.new_file(sink, batch.schema) as w:
        for off in range(0, 30, 10):
            w.write_batch(batch.slice(off, 10))
    data = bytes(sink.getvalue())
    reader = pipc.open_file(pa.py_buffer(data))
    assert reader.num_record_batches == 3
    assert reader.get_batch(2).to_pylist() == batch.slice(20, 10).to_pylist()
    footer = ipc.open_file(data).footer
    for block in footer.record_batches:
        assert data[block.offset : block.offset + 4] == b"\xff\xff\xff\xff"
        meta_len = int.from_bytes(data[block.offset + 4 : block.offset + 8], "little")
        assert block.meta_data_length == meta_len + 8


def test_custom_metadata_and_compression_still_take_the_general_builder() -> None:
    batch = _quiver_batch(_plain_table(20, True))
    sink = ipc.BufferOutputStream()
    with ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch, custom_metadata={"k": "v"})
        w.write_batch(batch)
    reader = pipc.open_stream(pa.py_buffer(bytes(sink.getvalue())))
    first, meta = reader.read_next_batch_with_custom_metadata()
    assert meta == {b"k": b"v"} and first.to_pylist() == batch.to_pylist()
    second, meta = reader.read_next_batch_with_custom_metadata()
    assert meta is None and second.to_pylist() == batch.to_pylist()
    packed = _write(batch.schema, [batch], compression="zstd")
    assert pipc.open_stream(pa.py_buffer(packed)).read_all().to_pylist() == batch.to_pylist()


def test_one_plan_serves_batches_whose_schema_is_equal_but_not_identical() -> None:
    a = qv.record_batch({"x": qv.array([1, 2, 3]), "s": qv.array(["a", None, "c"])})
    b = qv.record_batch({"x": qv.array([4]), "s": qv.array(["d"])})
    assert a.schema is not b.schema
    data = _write(a.schema, [a, b])
    assert pipc.open_stream(pa.py_buffer(data)).read_all().to_pylist() == (
        a.to_pylist() + b.to_pylist()
    )


def test_written_template_counts_follow_the_schema() -> None:
    # nested, dictionary and plain columns together: one template for all batches
    names = ["struct", "list", "dictionary", "string", "bool", "sparse_union", "null"]
    table = pa.table({n: CASES[n] for n in names})
    batch = _quiver_batch(table)
    data = _write(batch.schema, [batch, batch.slice(1, 2), batch])
    assert _assert_fast_metadata_is_the_general_builders(data) == 3
    got = pipc.open_stream(pa.py_buffer(data)).read_all()
    got.validate(full=True)
    assert got.to_pylist() == batch.to_pylist() + batch.slice(1, 2).to_pylist() + (
        batch.to_pylist()
    )


SIZES = list(itertools.product([1, 7, 64, 1000], [False, True]))


@pytest.mark.parametrize(("rows", "nulls"), SIZES)
def test_plain_batches_of_many_sizes_round_trip(rows: int, nulls: bool) -> None:
    batch = _quiver_batch(_plain_table(rows, nulls))
    data = _write(batch.schema, [batch, batch])
    assert _assert_fast_metadata_is_the_general_builders(data) == 2
    got = pipc.open_stream(pa.py_buffer(data)).read_all()
    got.validate(full=True)
    assert got.to_pylist() == batch.to_pylist() * 2


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
