"""Tests for quiver.ipc.writer: the stream and file writers."""

from __future__ import annotations

import io
import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.ipc as pipc
import pytest

import quiver as qv
import quiver.ipc as ipc
from quiver.ipc import compression, writer
from quiver.ipc import metadata as md
from quiver.ipc import writer as writer_module
from quiver.ipc.body import assemble_body, compile_write_plan
from quiver.ipc.decoder import END, MessageDecoder
from quiver.ipc.framing import read_frame
from tests.ipc_cases import all_type_arrays
from tests.unit._ipc_helpers import CASES, _plain_table, _quiver_batch, _windows
from tests.unit._statistics_helpers import COLUMNS, _write_stats


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


def _record_batch_headers(data: bytes) -> list[md.RecordBatch]:
    dec = MessageDecoder()
    dec.feed(data)
    dec.feed_eof()
    out = []
    while (raw := dec.next_message()) is not END:
        if isinstance(raw.message.header, md.RecordBatch):
            out.append(raw.message.header)
    return out


def test_seeds_worked_example_has_nodes_and_buffers_in_pre_order() -> None:
    # col1: Struct<a: Int32, b: List<item: Int64>, c: Float64>, col2: Utf8
    col1 = qv.array(
        [{"a": 1, "b": [1, 2], "c": 0.5}, None, {"a": None, "b": None, "c": 1.5}],
        qv.struct([("a", qv.int32()), ("b", qv.list_(qv.int64())), ("c", qv.float64())]),
    )
    col2 = qv.array(["x", "yy", None])
    batch = qv.record_batch({"col1": col1, "col2": col2})
    sink = ipc.BufferOutputStream()
    with ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch)
    (header,) = _record_batch_headers(sink.getvalue())
    # FieldNodes (length, null_count): col1, col1.a, col1.b, col1.b.item, col1.c, col2;
    # the null struct row is null in every child too, as built from Python
    assert header.nodes.tolist() == [[3, 1], [3, 2], [3, 2], [2, 0], [3, 1], [3, 1]]
    lengths = header.buffers[:, 1].tolist()
    offsets = header.buffers[:, 0].tolist()
    # buffers: col1 validity; a validity, a values; b validity, b offsets;
    # b.item validity (absent: no nulls), b.item values; c validity, c values;
    # col2 validity, col2 offsets, col2 data
    assert len(lengths) == 12
    assert lengths == [1, 1, 12, 1, 16, 0, 16, 1, 24, 1, 16, 3]
    assert all(o % 8 == 0 for o in offsets)
    assert pipc.open_stream(pa.py_buffer(sink.getvalue())).read_all().to_pylist() == (
        batch.to_pylist()
    )


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


@pytest.fixture
def pipelined(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Pipeline every compressed batch, and count the batches that took the path."""
    monkeypatch.setattr(writer, "_PIPELINE_FROM", 0)
    taken: list[int] = []
    real = writer._Writer._write_pipelined

    def spy(self: Any, length: int, *args: Any) -> Any:
        taken.append(length)
        return real(self, length, *args)

    monkeypatch.setattr(writer._Writer, "_write_pipelined", spy)
    return taken


def _batches() -> list[Any]:
    rng = np.random.default_rng(2)
    plain = qv.record_batch(
        {
            "noise": qv.array(rng.integers(0, 1 << 62, 5000)),  # stored raw (-1)
            "small": qv.array(rng.integers(0, 5, 5000)),
            "s": qv.array([f"v{k % 31}" if k % 5 else None for k in range(5000)]),
        }
    )
    return [plain, plain.slice(100, 2000), plain.slice(0, 0)]


def _write_compressed(sink: Any, batches: list[Any], codec: str, **kw: Any) -> None:
    with ipc.new_file(sink, batches[0].schema, compression=codec, **kw) as w:
        for i, b in enumerate(batches):
            w.write_batch(b, custom_metadata={"i": str(i)} if i == 1 else None)


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
@pytest.mark.parametrize("version", ["V5", "V4"])
def test_the_bytes_are_the_general_paths(
    tmp_path: Path, pipelined: list[int], codec: str, version: str
) -> None:
    batches = _batches()
    path = tmp_path / "t.arrow"
    _write_compressed(path, batches, codec, metadata_version=version)
    assert pipelined == [5000, 2000]  # the empty batch: the general path
    memory = ipc.BufferOutputStream()
    _write_compressed(memory, batches, codec, metadata_version=version)
    assert path.read_bytes() == bytes(memory.getvalue())
    rows = [r for b in batches for r in b.to_pylist()]
    assert ipc.open_file(path).read_all().to_pylist() == rows
    if version == "V5":  # Arrow C++ refuses V4 compressed batches with custom metadata
        with pa.memory_map(str(path)) as src:
            assert pipc.open_file(src).read_all().to_pylist() == rows


def test_every_type(tmp_path: Path, pipelined: list[int]) -> None:
    sink = pa.BufferOutputStream()
    table = pa.table(all_type_arrays())
    with pipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    (batch,) = list(ipc.open_stream(sink.getvalue()))
    path = tmp_path / "t.arrow"
    with ipc.new_file(path, batch.schema, compression="zstd") as w:
        w.write_batch(batch)
    assert pipelined
    memory = ipc.BufferOutputStream()
    with ipc.new_file(memory, batch.schema, compression="zstd") as w:
        w.write_batch(batch)
    assert path.read_bytes() == bytes(memory.getvalue())
    assert ipc.open_file(path).get_batch(0).to_pylist() == batch.to_pylist()


def test_a_file_object_that_already_holds_bytes(tmp_path: Path, pipelined: list[int]) -> None:
    batches = _batches()
    path = tmp_path / "t.bin"
    with open(path, "wb") as f:
        f.write(b"header!")
        with ipc.new_stream(f, batches[0].schema, compression="lz4") as w:
            for b in batches:
                w.write_batch(b)
    assert pipelined
    data = path.read_bytes()
    assert data[:7] == b"header!"
    got = ipc.open_stream(data[7:]).read_all()
    assert got.to_pylist() == [r for b in batches for r in b.to_pylist()]


@pytest.mark.parametrize("mode", ["ab", "memory", "no threads"])
def test_other_sinks_take_the_general_path(
    tmp_path: Path, pipelined: list[int], mode: str
) -> None:
    batches = _batches()
    path = tmp_path / "t.arrow"
    if mode == "ab":
        with open(path, "ab") as f:
            _write_compressed(f, batches, "lz4")
        data = path.read_bytes()
    elif mode == "memory":
        sink = ipc.BufferOutputStream()
        _write_compressed(sink, batches, "lz4")
        data = bytes(sink.getvalue())
    else:
        _write_compressed(path, batches, "lz4", use_threads=False)
        data = path.read_bytes()
    assert pipelined == []
    got = ipc.open_file(data).read_all()
    assert got.to_pylist() == [r for b in batches for r in b.to_pylist()]


def test_a_failure_leaves_no_half_message(
    tmp_path: Path, pipelined: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    batches = _batches()
    path = tmp_path / "t.arrow"
    real = compression.pool.compress_one
    calls = []

    def failing(name: str, raw: np.ndarray, level: int) -> list[Any]:
        calls.append(raw.nbytes)
        if len(calls) == 3:
            raise MemoryError("out of memory, says the test")
        return real(name, raw, level)

    with ipc.new_file(path, batches[0].schema, compression="lz4") as w:
        w.write_batch(batches[1])
        w._sink._f.flush()  # the buffered writer may still hold the small messages
        size = path.stat().st_size
        monkeypatch.setattr(compression.pool, "compress_one", failing)
        with pytest.raises(MemoryError):
            w.write_batch(batches[0])
        w._sink._f.flush()
        assert path.stat().st_size == size  # cut back to where the message began
        monkeypatch.setattr(compression.pool, "compress_one", real)
        w.write_batch(batches[0])
    got = ipc.open_file(path).read_all()
    assert got.to_pylist() == batches[1].to_pylist() + batches[0].to_pylist()
    with pa.memory_map(str(path)) as src:
        assert pipc.open_file(src).read_all().num_rows == 7000


def test_a_descriptor_opened_to_append_takes_the_general_path(
    tmp_path: Path, pipelined: list[int]
) -> None:
    """A shell's ``>>`` gives a file whose mode says 'wb' but whose descriptor appends:
    seeking back to write the metadata would append it instead (found in review)."""
    import os

    batches = _batches()
    path = tmp_path / "t.arrow"
    path.write_bytes(b"older bytes")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    with os.fdopen(fd, "wb") as f:
        assert f.mode == "wb"
        with ipc.new_stream(f, batches[0].schema, compression="zstd") as w:
            for b in batches:
                w.write_batch(b)
    assert pipelined == []
    data = path.read_bytes()
    assert data.startswith(b"older bytes")
    got = ipc.open_stream(data[len(b"older bytes") :]).read_all()
    assert got.to_pylist() == [r for b in batches for r in b.to_pylist()]


def test_a_file_written_in_the_middle_takes_the_general_path(
    tmp_path: Path, pipelined: list[int]
) -> None:
    """Writing over the start of a longer file: a failed batch must not cut off the
    bytes after it, so only a writer at the end of its file pipelines."""
    path = tmp_path / "t.bin"
    path.write_bytes(bytes(1 << 20))
    batches = _batches()
    with open(path, "r+b") as f:
        f.seek(100)
        _write_compressed(f, batches, "lz4")
        end = f.tell()
    assert pipelined == []
    data = path.read_bytes()
    assert len(data) == 1 << 20 and end < len(data)  # the rest of the file is still there
    got = ipc.open_file(data[100:end]).read_all()
    assert got.to_pylist() == [r for b in batches for r in b.to_pylist()]


def test_an_interrupted_batch_does_not_read_as_the_end_of_the_stream(
    tmp_path: Path, pipelined: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a killed writer leaves (placeholder written, metadata not yet): a reader must
    report a broken message, not a clean end of stream (zeros read as one)."""
    batches = _batches()
    path = tmp_path / "t.arrow"

    class Killed(BaseException):
        pass

    def die(self: Any, position: int, data: bytes) -> None:
        raise Killed

    monkeypatch.setattr(writer._Sink, "rewrite", die)
    monkeypatch.setattr(writer._Sink, "cut", lambda self, position: None)  # no clean-up
    w = ipc.new_stream(path, batches[0].schema, compression="zstd")
    with pytest.raises(Killed):
        w.write_batch(batches[0])
    w._sink._f.close()
    with pytest.raises(qv.errors.ArrowError):
        ipc.open_stream(path).read_all()


def test_a_raw_file_that_takes_part_of_each_write(tmp_path: Path) -> None:
    """io.FileIO may write less than asked and say so: the sink writes the rest."""
    import io

    class Stingy(io.FileIO):
        def write(self, data: Any) -> int:
            return super().write(memoryview(data).cast("B")[:1000])

    batches = _batches()
    path = tmp_path / "t.arrow"
    with Stingy(path, "wb") as f:
        _write_compressed(f, batches, "lz4")
    memory = ipc.BufferOutputStream()
    _write_compressed(memory, batches, "lz4")
    assert path.read_bytes() == bytes(memory.getvalue())


def test_interleaved_small_and_large_writes_keep_their_order() -> None:
    rng = np.random.default_rng(0)
    sink = ipc.BufferOutputStream()
    expected = bytearray()
    for size in [3, 70_000, 1, 0, 65_535, 65_536, 5, 200_000, 17, 9]:
        piece = rng.integers(0, 256, size, dtype=np.uint8)
        assert sink.write(piece if size % 2 else piece.tobytes()) == size
        expected += piece.tobytes()
        assert sink.tell() == len(expected)
    value = sink.getvalue()
    assert isinstance(value, memoryview) and value.readonly
    assert value == bytes(expected) and bytes(value) == bytes(expected)
    assert len(value) == len(expected) and value[3:8] == expected[3:8]


@pytest.mark.parametrize("in_place", [True, False])
def test_many_small_writes_grow_the_block(in_place: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # in place: mremap on Linux; otherwise (and on other systems) a new block and a copy
    monkeypatch.setattr(writer_module, "_GROW_IN_PLACE", in_place and writer_module._GROW_IN_PLACE)
    sink = ipc.BufferOutputStream()
    pieces = [bytes([i % 251]) * (1 + i % 4000) for i in range(4000)]
    for p in pieces:
        sink.write(p)
    expected = b"".join(pieces)
    assert len(expected) > 4 * writer_module._MAP_FROM  # the block grew several times
    assert sink.getvalue() == expected


def test_a_small_stream_is_bytes_and_maps_no_memory() -> None:
    sink = ipc.BufferOutputStream()
    sink.write(b"x" * 1000)
    value = sink.getvalue()
    assert sink._block is None and isinstance(value.obj, bytes) and value == b"x" * 1000
    sink.write(b"y" * writer_module._MAP_FROM)  # past the threshold: into a block
    assert sink._block is not None
    assert value == b"x" * 1000
    assert sink.getvalue() == b"x" * 1000 + b"y" * writer_module._MAP_FROM


def test_a_value_held_while_the_block_grows_keeps_its_bytes() -> None:
    size = writer_module._MAP_FROM
    sink = ipc.BufferOutputStream()
    sink.write(b"a" * (size + 1))
    held = sink.getvalue()  # an export of the block: it cannot be resized under it
    first = sink._block
    sink.write(b"b" * (4 * size))
    assert sink._block is not first  # a new block, the old one kept alive by the value
    assert held == b"a" * (size + 1)
    assert sink.getvalue() == b"a" * (size + 1) + b"b" * (4 * size)
    del held
    second = sink._block
    sink.write(b"c" * (16 * size))
    if writer_module._GROW_IN_PLACE:  # nothing exported any more: grown in place
        assert sink._block is second
    assert sink.getvalue()[-3:] == b"ccc" and sink.tell() == 21 * size + 1


def test_written_arrays_may_change_after_the_write() -> None:
    values = np.arange(100_000, dtype=np.uint8)
    sink = ipc.BufferOutputStream()
    sink.write(values)
    values[:] = 0
    assert sink.getvalue()[:3] == bytes([0, 1, 2])


def test_getvalue_is_cached_until_the_next_write() -> None:
    sink = ipc.BufferOutputStream()
    sink.write(b"abc")
    first = sink.getvalue()
    assert sink.getvalue() is first
    sink.write(b"de")
    second = sink.getvalue()
    assert first == b"abc" and second == b"abcde"  # the first value is not changed
    sink.write(np.zeros(100_000, np.uint8))
    third = sink.getvalue()
    assert third[:5] == b"abcde" and len(third) == 100_005 and first == b"abc"


def test_values_of_other_formats_and_layouts_are_written_as_their_bytes() -> None:
    sink = ipc.BufferOutputStream()
    ints = np.arange(6, dtype="<i4")
    assert sink.write(ints) == 24
    strided = memoryview(np.arange(10, dtype=np.uint8))[::2]  # not contiguous
    assert sink.write(strided) == 5
    grid = np.arange(200_000, dtype="<i2").reshape(2, -1)  # 2-D and large
    assert sink.write(grid) == 400_000
    assert sink.getvalue() == ints.tobytes() + bytes([0, 2, 4, 6, 8]) + grid.tobytes()


def test_getbuffer_and_empty_stream() -> None:
    sink = ipc.BufferOutputStream()
    assert sink.getvalue() == b"" and len(sink.getbuffer()) == 0
    sink.write(b"12")
    assert sink.getbuffer() == b"12"


def test_value_goes_to_every_reader() -> None:
    batch = qv.record_batch({"a": qv.array([1, 2, 3]), "s": qv.array(["x", None, "zz"])})
    for new, open_, pa_open in [
        (ipc.new_stream, ipc.open_stream, pipc.open_stream),
        (ipc.new_file, ipc.open_file, pipc.open_file),
    ]:
        sink = ipc.BufferOutputStream()
        with new(sink, batch.schema) as w:
            w.write_batch(batch)
        value = sink.getvalue()
        assert open_(value).read_all().to_pylist() == batch.to_pylist()
        assert pa_open(pa.py_buffer(value)).read_all().to_pylist() == batch.to_pylist()
        assert open_(bytes(value)).read_all().to_pylist() == batch.to_pylist()


def test_refuses_what_is_not_bytes_like() -> None:
    with pytest.raises(qv.ArrowTypeError, match="expected a bytes-like object"):
        ipc.BufferOutputStream().write("text")


def test_running_out_of_memory_is_a_memory_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_memory(*args: object, **kw: object) -> None:
        raise OSError(12, "Cannot allocate memory")

    monkeypatch.setattr(writer_module.mmap, "mmap", no_memory)
    with pytest.raises(MemoryError, match=r"expected \d+ bytes of memory"):
        ipc.BufferOutputStream().write(bytes(writer_module._MAP_FROM + 1))


def test_arrays_read_from_a_value_survive_later_writes() -> None:
    batch = qv.record_batch({"a": qv.array(np.arange(writer_module._MAP_FROM // 4))})
    sink = ipc.BufferOutputStream()
    with ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch)
    (read,) = list(ipc.open_stream(sink.getvalue()))  # zero-copy views of the block
    with memoryview(sink._block) as block:
        assert np.shares_memory(read.column(0).buffers[1], np.frombuffer(block, np.uint8))
    for _ in range(4):  # grow the block well past its size while the views live
        sink.write(np.full(1 << 20, 0xAB, np.uint8))
    assert read.column(0).to_pylist() == list(range(writer_module._MAP_FROM // 4))


def _pa_table() -> pa.Table:
    return pa.table(
        {
            "i": pa.array([1, None, 3], pa.int32()),
            "s": ["a", "bb", None],
            "d": pa.array(["x", "y", "x"]).dictionary_encode(),
            "l": pa.array([[1], [], None], pa.list_(pa.int64())),
        }
    )


def _read_back(data: object, fmt: str) -> pa.Table:
    opener = pa.ipc.open_stream if fmt == "stream" else pa.ipc.open_file
    return opener(pa.py_buffer(bytes(data))).read_all()  # type: ignore[arg-type]


FORMATS = ["stream", "file"]


def _writer(sink: object, schema: object, fmt: str) -> object:
    return (ipc.new_stream if fmt == "stream" else ipc.new_file)(sink, schema)


@pytest.mark.parametrize("fmt", FORMATS)
def test_writer_takes_a_pyarrow_schema_and_pyarrow_batches(fmt: str) -> None:
    table = _pa_table()
    sink = ipc.BufferOutputStream()
    with _writer(sink, table.schema, fmt) as w:
        for batch in table.to_batches():
            w.write_batch(batch)
        w.write_batch(table.slice(1).to_batches()[0])
    back = _read_back(sink.getvalue(), fmt)
    assert back.equals(pa.concat_tables([table, table.slice(1)]))


@pytest.mark.parametrize("fmt", FORMATS)
def test_write_table_and_write_take_pyarrow_tables_and_readers(fmt: str) -> None:
    table = _pa_table()
    sink = ipc.BufferOutputStream()
    with _writer(sink, table.schema, fmt) as w:
        w.write_table(table)
        w.write(table)
        w.write(pa.RecordBatchReader.from_batches(table.schema, table.to_batches()))
        w.write(table.to_batches()[0])
        w.write_table(table, max_chunksize=2)
    back = _read_back(sink.getvalue(), fmt)
    assert back.equals(pa.concat_tables([table] * 5))


def test_writer_takes_polars_and_duckdb_data() -> None:
    pl = pytest.importorskip("polars")
    duckdb = pytest.importorskip("duckdb")
    df = pl.DataFrame({"a": [1, 2, 3], "s": ["x", None, "z"]})
    sink = ipc.BufferOutputStream()
    with ipc.new_stream(sink, df.schema) as w:  # a polars Schema speaks __arrow_c_schema__
        w.write(df)
        w.write_table(df)
    back = pl.read_ipc_stream(bytes(sink.getvalue()))
    assert back.to_dict(as_series=False) == {"a": [1, 2, 3] * 2, "s": ["x", None, "z"] * 2}

    rel = duckdb.sql("select range::BIGINT as n from range(5)")
    sink = ipc.BufferOutputStream()
    with ipc.new_file(sink, qv.schema([("n", qv.int64())])) as w:
        w.write(rel)
    assert _read_back(sink.getvalue(), "file").column("n").to_pylist() == list(range(5))


def test_pyarrow_batches_are_written_without_a_copy_of_their_buffers(monkeypatch) -> None:
    # the writer hands the sink views of the producer's buffers: catch the write of the
    # values buffer and check that it shares pyarrow's memory
    values = np.arange(100_000, dtype=np.int64)
    batch = pa.record_batch({"x": values})
    pa_values = np.frombuffer(batch.column(0).buffers()[1], dtype=np.int64)
    seen: list[bool] = []

    class Sink:
        def write(self, data: object) -> int:
            arr = np.asarray(memoryview(data))  # type: ignore[arg-type]
            seen.append(np.shares_memory(arr, pa_values))
            return arr.nbytes

        def flush(self) -> None:
            pass

    with ipc.new_stream(Sink(), batch.schema) as w:
        w.write_batch(batch)
    assert any(seen)


def test_write_takes_a_pandas_dataframe() -> None:
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
    sink = ipc.BufferOutputStream()
    with ipc.new_stream(sink, qv.schema([("a", qv.int64()), ("b", qv.string())])) as w:
        w.write(df)
    assert _read_back(sink.getvalue(), "stream").to_pydict() == {"a": [1, 2], "b": ["x", "y"]}


def test_defaults_write_no_statistics_and_true_writes_them():
    # issue 26: statistics cost 1.5-3x of a write; like pyarrow, a file written with the
    # defaults carries none (no footer metadata at all), on every writer entry point
    table = pa.table({"a": [1, 2]})
    assert ipc.open_file(_write_stats(table, 10, statistics=False)).statistics is None
    assert pa.ipc.open_file(_write_stats(table, 10, statistics=False)).metadata is None
    sink = ipc.BufferOutputStream()
    with ipc.new_file(sink, table.schema) as writer:  # the defaults
        writer.write_table(table)
    assert ipc.open_file(sink.getvalue()).statistics is None
    assert pa.ipc.open_file(sink.getvalue()).metadata is None
    sink = ipc.BufferOutputStream()
    with ipc.RecordBatchFileWriter(sink, table.schema) as writer:
        writer.write_table(table)
    assert pa.ipc.open_file(sink.getvalue()).metadata is None
    schema = ipc.open_file(sink.getvalue()).schema
    batch = ipc.open_file(sink.getvalue()).get_batch(0)
    encoder = ipc.FileEncoder(schema)  # the sans-IO one too
    data = b"".join(encoder.begin() + encoder.write_batch(batch) + encoder.end())
    assert pa.ipc.open_file(data).metadata is None
    sink = ipc.BufferOutputStream()
    with ipc.new_file(sink, table.schema, statistics=True) as writer:
        writer.write_table(table)
    (stats,) = ipc.open_file(sink.getvalue()).statistics
    assert (stats.row_count, stats.columns[0].min, stats.columns[0].max) == (2, 1, 2)
    encoder = ipc.FileEncoder(schema, statistics=True)
    data = b"".join(encoder.begin() + encoder.write_batch(batch) + encoder.end())
    assert ipc.open_file(data).statistics[0].columns[0].max == 2


def test_other_readers_read_files_with_statistics_unchanged():
    # (no NaN here: NaN != NaN would hide what is compared)
    table = pa.table({k: v for k, v in COLUMNS.items() if k not in ("dec256", "f64", "f32")})
    data = _write_stats(table, 2, compression="zstd")
    assert pa.ipc.open_file(data).read_all().to_pylist() == table.to_pylist()
    polars = pytest.importorskip("polars")
    frame = polars.read_ipc(io.BytesIO(data))
    assert frame.height == 5
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    con.register("t", pa.ipc.open_file(data).read_all())
    assert con.sql("select count(*) from t").fetchall() == [(5,)]


def test_a_large_message_to_an_owned_file_survives_short_writev(tmp_path, monkeypatch):
    """A file the writer opened takes a large message's parts in writev calls; a call
    that writes less than asked (as the system may) is carried on where it stopped."""
    import os

    import numpy as np

    import quiver as qv
    import quiver.ipc as ipc

    real = os.writev
    calls = []

    def short(fd, views):
        calls.append(len(views))
        first = memoryview(views[0]).cast("B")
        return real(fd, [first[: max(1, len(first) // 3)]])  # a third of the first piece

    monkeypatch.setattr(os, "writev", short)
    batch = qv.record_batch({"a": qv.array(np.arange(100_000, dtype=np.int64)),
                             "s": qv.array([f"v{i}" for i in range(100_000)])})
    path = tmp_path / "big.arrow"
    with ipc.new_file(str(path), batch.schema) as w:
        w.write_batch(batch)
        w.write_batch(batch)
    assert len(calls) > 4  # the writev path ran, and was carried on after short writes
    back = ipc.open_file(str(path)).read_all()
    assert back.num_rows == 200_000
    assert back.column("s").to_pylist()[-1] == "v99999"
    assert back.column("a").to_pylist()[:3] == [0, 1, 2]
