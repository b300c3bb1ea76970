"""Round trips between quiver's IPC readers/writers and pyarrow's, for every type.

Cross-module on purpose: each test goes through ipc.writer and ipc.reader (and the body,
metadata and framing modules under them), so it has no single module to live with."""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pyarrow.ipc as pipc
import pytest

import quiver as qv
import quiver.ipc as ipc
from tests.ipc_cases import all_type_arrays

CASES = all_type_arrays()
FORMATS = ["stream", "file"]
CODECS = [None, "lz4", "zstd"]


def _pa_bytes(table: pa.Table, fmt: str, compression: str | None = None) -> bytes:
    sink = pa.BufferOutputStream()
    opts = pipc.IpcWriteOptions(compression=compression)
    new = pipc.new_stream if fmt == "stream" else pipc.new_file
    with new(sink, table.schema, options=opts) as w:
        w.write_table(table)
    return sink.getvalue().to_pybytes()


def _open(data, fmt: str, **kw):
    return (ipc.open_stream if fmt == "stream" else ipc.open_file)(data, **kw)


def _pa_open(data, fmt: str) -> pa.Table:
    return (pipc.open_stream if fmt == "stream" else pipc.open_file)(pa.py_buffer(data)).read_all()


def _quiver_write(schema, batches, fmt: str, **kw) -> bytes:
    sink = ipc.BufferOutputStream()
    new = ipc.new_stream if fmt == "stream" else ipc.new_file
    with new(sink, schema, **kw) as w:
        for b in batches:
            w.write_batch(b)
    return sink.getvalue()


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_pyarrow_written_column_reads_with_pyarrow_values(name: str, fmt: str) -> None:
    arr = CASES[name]
    table = pa.table({name: arr, "after": pa.array(range(len(arr)), pa.int32())})
    reader = _open(_pa_bytes(table, fmt), fmt)
    batches = list(reader)
    assert len(batches) == 1
    assert batches[0].column(0).to_pylist() == arr.to_pylist()
    assert batches[0].column(1).to_pylist() == list(range(len(arr)))
    assert str(reader.schema.field(0).type) == str(arr.type) or name in {"uuid"}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_quiver_written_column_reads_equal_in_pyarrow(name: str, fmt: str) -> None:
    arr = CASES[name]
    table = pa.table({name: arr})
    back = list(_open(_pa_bytes(table, "stream"), "stream"))
    data = _quiver_write(back[0].schema, back, fmt)
    got = _pa_open(data, fmt)
    got.validate(full=True)
    assert got.column(0).combine_chunks().equals(arr)
    assert got.schema.field(0).type == arr.type


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_sliced_columns_write_only_their_window(name: str, fmt: str) -> None:
    arr = CASES[name]
    batch = next(iter(_open(_pa_bytes(pa.table({name: arr}), "stream"), "stream")))
    window = batch.slice(1, len(arr) - 2)
    got = _pa_open(_quiver_write(batch.schema, [window], fmt), fmt)
    got.validate(full=True)
    assert got.column(0).to_pylist() == arr.slice(1, len(arr) - 2).to_pylist()


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_type_survives_compression_both_ways(codec: str, fmt: str) -> None:
    table = pa.table(CASES)
    ours = list(_open(_pa_bytes(table, fmt, codec), fmt))
    assert [c.to_pylist() for c in ours[0].columns] == [c.to_pylist() for c in table.columns]
    got = _pa_open(_quiver_write(ours[0].schema, ours, fmt, compression=codec), fmt)
    assert got.equals(table)


def test_compressed_output_declares_its_codec_for_pyarrow() -> None:
    batch = qv.record_batch({"x": qv.array(list(range(10_000)) * 3, qv.int64())})
    plain = _quiver_write(batch.schema, [batch], "file")
    packed = _quiver_write(batch.schema, [batch], "file", compression="zstd")
    assert len(packed) < len(plain) / 4
    assert _pa_open(packed, "file").column(0).to_pylist() == batch.column(0).to_pylist()


@pytest.mark.parametrize("fmt", FORMATS)
def test_empty_and_zero_batch_streams_round_trip(fmt: str) -> None:
    schema = qv.schema([qv.field("a", qv.int32()), qv.field("s", qv.string())])
    data = _quiver_write(schema, [], fmt)
    got = _pa_open(data, fmt)
    assert got.num_rows == 0 and got.schema.names == ["a", "s"]
    reader = _open(data, fmt)
    assert list(reader) == [] and reader.schema == schema
    empty = qv.record_batch({"a": qv.array([], qv.int32()), "s": qv.array([], qv.string())})
    data = _quiver_write(schema, [empty, empty], fmt)
    assert [b.num_rows for b in _open(data, fmt)] == [0, 0]
    assert _pa_open(data, fmt).num_rows == 0


def test_schema_field_and_message_metadata_survive_both_ways() -> None:
    schema = pa.schema(
        [pa.field("a", pa.int64(), metadata={"k": "v", "k2": "v2"})], metadata={"top": "level"}
    )
    table = pa.table({"a": [1, 2]}, schema=schema)
    sink = pa.BufferOutputStream()
    with pipc.new_stream(sink, schema) as w:
        w.write_batch(table.to_batches()[0], custom_metadata={"batch": "one"})
    reader = ipc.open_stream(sink.getvalue().to_pybytes())
    assert reader.schema.metadata.get("top") == b"top"[:0] + b"level"
    assert reader.schema.field("a").metadata.get("k2") == b"v2"
    next(iter(reader))
    assert reader.custom_metadata.get("batch") == b"one"
    out = _quiver_write(reader.schema, [qv.record_batch({"a": qv.array([1, 2])})], "stream")
    back = pipc.open_stream(pa.py_buffer(out)).schema
    assert back.metadata == {b"top": b"level"}
    assert back.field("a").metadata == {b"k": b"v", b"k2": b"v2"}


def test_file_footer_metadata_and_random_access() -> None:
    schema = qv.schema([qv.field("i", qv.int64())])
    batches = [qv.record_batch({"i": qv.array([i, i + 1])}) for i in range(0, 10, 2)]
    sink = ipc.BufferOutputStream()
    with ipc.new_file(sink, schema, metadata={"written_by": "quiver"}) as w:
        for b in batches:
            w.write_batch(b)
    reader = ipc.open_file(sink.getvalue())
    assert reader.num_record_batches == 5
    assert reader.get_batch(3).column(0).to_pylist() == [6, 7]
    assert reader.get_batch(-1).column(0).to_pylist() == [8, 9]
    assert reader.metadata.get("written_by") == b"quiver"
    with pytest.raises(qv.ArrowIndexError, match="below 5"):
        reader.get_batch(5)
    pa_reader = pipc.open_file(pa.py_buffer(sink.getvalue()))
    assert pa_reader.num_record_batches == 5
    assert pa_reader.get_batch(2).column(0).to_pylist() == [4, 5]


def test_file_blocks_have_8_byte_multiple_metadata_lengths() -> None:
    batch = qv.record_batch({"name_of_odd_length_x": qv.array([1, 2, 3])})
    sink = ipc.BufferOutputStream()
    with ipc.new_file(sink, batch.schema) as w:
        w.write_batch(batch)
    footer = ipc.open_file(sink.getvalue()).footer
    for block in footer.record_batches:
        assert block.meta_data_length % 8 == 0 and block.offset % 8 == 0


def test_reading_from_bytes_is_zero_copy() -> None:
    values = np.arange(1000, dtype=np.int64)
    table = pa.table({"v": values, "s": pa.array([str(i) for i in range(1000)])})
    data = _pa_bytes(table, "file")
    src = np.frombuffer(data, np.uint8)
    lo = src.__array_interface__["data"][0]
    hi = lo + len(data)
    batch = ipc.open_file(data).get_batch(0)
    for col in batch.columns:
        for buf in col.buffers:
            if buf is not None and len(buf):
                addr = buf.__array_interface__["data"][0]
                assert lo <= addr and addr + len(buf) <= hi
    assert np.shares_memory(np.asarray(batch.column(0)), src)


def test_memory_mapped_file_reads_views_of_the_map(tmp_path) -> None:
    path = tmp_path / "data.arrow"
    path.write_bytes(_pa_bytes(pa.table({"v": np.arange(10_000, dtype=np.int64)}), "file"))
    with ipc.open_file(path, memory_map=True) as reader:
        col = reader.get_batch(0).column(0)
        assert int(np.asarray(col).sum()) == sum(range(10_000))
        assert not col.buffers[1].flags.owndata


@pytest.mark.parametrize("fmt", FORMATS)
def test_projection_loads_only_the_requested_columns(fmt: str) -> None:
    table = pa.table(
        {"a": [1, 2], "nested": pa.array([[{"x": 1}], []]), "s": ["p", "q"], "d": ["u", "v"]}
    )
    table = table.set_column(3, "d", table.column("d").dictionary_encode())
    data = _pa_bytes(table, fmt)
    reader = _open(data, fmt, columns=["s", 0])
    assert reader.schema.names == ["s", "a"]  # the order asked (issue 14), as pyarrow's feather
    batch = next(iter(reader))
    assert batch.num_columns == 2
    assert batch.column_names == ["s", "a"]
    assert {f.name: c.to_pylist() for f, c in zip(batch.schema, batch.columns)} == {
        "a": [1, 2], "s": ["p", "q"]
    }
    with pytest.raises(qv.ArrowKeyError, match="missing"):
        _open(data, fmt, columns=["missing"])
    with pytest.raises(qv.ArrowInvalidArgument, match=r"'s' twice .*\['a', 'nested', 's', 'd'\]"):
        _open(data, fmt, columns=["s", 2])


def test_stream_reader_pulls_from_a_non_seekable_pipe() -> None:
    import io

    class Pipe(io.RawIOBase):
        def __init__(self, data: bytes) -> None:
            self._data, self.reads = data, 0

        def readable(self) -> bool:
            return True

        def read(self, n: int = -1) -> bytes:
            self.reads += 1
            chunk, self._data = self._data[: min(n, 5)], self._data[min(n, 5):]
            return chunk

    table = pa.table({"a": list(range(100)), "s": [str(i) for i in range(100)]})
    pipe = Pipe(_pa_bytes(table, "stream"))
    rows = [r for b in ipc.open_stream(pipe) for r in b.to_pylist()]
    assert rows == table.to_pylist()
    assert pipe.reads > 10


def test_stream_reader_yields_batches_before_the_stream_ends() -> None:
    import io

    t1 = pa.table({"a": [1]})
    data = _pa_bytes(pa.concat_tables([t1, t1]), "stream")

    class Trickle(io.RawIOBase):
        def __init__(self) -> None:
            self.pos = 0

        def readable(self) -> bool:
            return True

        def read(self, n: int = -1) -> bytes:
            out = data[self.pos : self.pos + n]
            self.pos += len(out)
            return out

    src = Trickle()
    it = iter(ipc.open_stream(src))
    next(it)
    assert src.pos < len(data)


def test_v4_metadata_version_writes_union_validity_for_pyarrow() -> None:
    arr = CASES["sparse_union"]
    back = list(_open(_pa_bytes(pa.table({"u": arr}), "stream"), "stream"))
    data = _quiver_write(back[0].schema, back, "stream", metadata_version="V4")
    assert _pa_open(data, "stream").column(0).combine_chunks().equals(arr)
    assert next(iter(ipc.open_stream(data))).column(0).to_pylist() == arr.to_pylist()


def test_writer_rejects_a_batch_of_another_schema() -> None:
    schema = qv.schema([qv.field("a", qv.int64())])
    with (
        ipc.new_stream(ipc.BufferOutputStream(), schema) as w,
        pytest.raises(qv.ArrowInvalidArgument, match="writer's schema"),
    ):
        w.write_batch(qv.record_batch({"b": qv.array([1])}))


def test_write_table_splits_into_max_chunksize_batches(tmp_path) -> None:
    table = qv.table({"a": qv.array(list(range(10)))})
    path = tmp_path / "t.arrows"
    with ipc.new_stream(path, table.schema) as w:
        w.write_table(table, max_chunksize=3)
    assert [b.num_rows for b in ipc.open_stream(path)] == [3, 3, 3, 1]
    assert ipc.open_stream(path).read_all().to_pydict() == {"a": list(range(10))}


@pytest.mark.parametrize("fmt", FORMATS)
def test_batches_without_columns_keep_their_row_count(fmt: str) -> None:
    batch = pa.record_batch([pa.array([1, 2, 3])], names=["a"]).select([])
    sink = pa.BufferOutputStream()
    new = pipc.new_stream if fmt == "stream" else pipc.new_file
    with new(sink, batch.schema) as w:
        w.write_batch(batch)
    got = list(_open(sink.getvalue().to_pybytes(), fmt))
    assert [b.num_rows for b in got] == [3]


def test_stream_writer_hands_each_message_to_the_sink_at_once() -> None:
    class Pipe:
        def __init__(self) -> None:
            self.received = bytearray()

        def write(self, data) -> int:
            self.received += bytes(data)
            return len(data)

    pipe = Pipe()
    batch = qv.record_batch({"a": qv.array([1, 2, 3])})
    w = ipc.new_stream(pipe, batch.schema)
    w.write_batch(batch)
    # before close (no EOS yet), the reader on the other end already has the batch
    dec = ipc.StreamDecoder()
    dec.feed(bytes(pipe.received))
    assert dec.next_batch().to_pylist() == batch.to_pylist()
    w.close()
    assert bytes(pipe.received).endswith(b"\xff\xff\xff\xff\x00\x00\x00\x00")


def test_file_reader_reads_only_the_blocks_it_needs(tmp_path) -> None:
    schema = qv.schema([qv.field("i", qv.int64())])
    path = tmp_path / "many.arrow"
    with ipc.new_file(path, schema) as w:
        for i in range(50):
            w.write_batch(qv.record_batch({"i": qv.array(list(range(i, i + 1000)))}))
    data = path.read_bytes()

    class Counting(io.RawIOBase):
        """A seekable source without a file descriptor, counting the bytes handed out."""

        def __init__(self) -> None:
            self.pos, self.handed = 0, 0

        def readable(self) -> bool:
            return True

        def seekable(self) -> bool:
            return True

        def seek(self, pos: int, whence: int = 0) -> int:
            self.pos = pos if whence == 0 else len(data) + pos
            return self.pos

        def read(self, n: int = -1) -> bytes:
            out = data[self.pos :] if n < 0 else data[self.pos : self.pos + n]
            self.pos += len(out)
            self.handed += len(out)
            return out

    src = Counting()
    reader = ipc.open_file(src)
    assert reader.get_batch(42).column(0).to_pylist()[:2] == [42, 43]
    assert 0 < src.handed < len(data) / 10


def test_file_reader_over_an_unseekable_source_reads_it_whole() -> None:
    import io as _io

    batch = qv.record_batch({"i": qv.array([1, 2])})
    sink = ipc.BufferOutputStream()
    with ipc.new_file(sink, batch.schema) as w:
        w.write_batch(batch)

    class Pipe(_io.RawIOBase):
        def __init__(self, data: bytes) -> None:
            self._data = data

        def readable(self) -> bool:
            return True

        def read(self, n: int = -1) -> bytes:
            n = len(self._data) if n < 0 else n
            out, self._data = self._data[:n], self._data[n:]
            return out

    assert ipc.open_file(Pipe(sink.getvalue())).get_batch(0).to_pylist() == batch.to_pylist()


def test_file_batches_come_with_their_message_metadata() -> None:
    table = pa.table({"a": [1, 2]})
    sink = pa.BufferOutputStream()
    with pipc.new_file(sink, table.schema) as w:
        w.write_batch(table.to_batches()[0], custom_metadata={"part": "one"})
        w.write_batch(table.to_batches()[0])
    reader = ipc.open_file(sink.getvalue().to_pybytes())
    batch, meta = reader.get_batch_with_custom_metadata(0)
    assert batch.column(0).to_pylist() == [1, 2] and meta.get("part") == b"one"
    assert reader.get_batch_with_custom_metadata(-1)[1] is None


def test_buffer_output_stream_takes_bytes_like_objects_only() -> None:
    sink = ipc.BufferOutputStream()
    assert sink.write(b"ab") == 2 and sink.write(np.arange(2, dtype="<i4")) == 8
    assert sink.tell() == 10 and sink.getvalue()[:2] == b"ab"
    with pytest.raises(qv.ArrowTypeError, match="bytes-like"):
        sink.write(5)


def test_readers_take_any_buffer_protocol_source_without_a_copy() -> None:
    """pyarrow Buffers (what pyarrow's sinks return) and typed numpy arrays work as
    sources, as views; strided memory is refused with a clear error."""
    import array as _array

    table = pa.table({"i": np.arange(1000, dtype=np.int64)})
    sink = pa.BufferOutputStream()
    with pipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    data = sink.getvalue()
    got = ipc.open_stream(data).read_all()
    assert got.to_pylist() == table.to_pylist()
    column = np.asarray(got.column(0).chunks[0])
    assert np.shares_memory(column, np.frombuffer(data, np.uint8))
    fsink = pa.BufferOutputStream()
    with pipc.new_file(fsink, table.schema) as w:
        w.write_table(table)
    fdata = fsink.getvalue()
    assert ipc.open_file(fdata).read_all().to_pylist() == table.to_pylist()
    words = np.frombuffer(fdata, np.uint8).view(np.int16)  # a typed view: cast to bytes
    assert ipc.open_file(words).read_all().to_pylist() == table.to_pylist()
    assert ipc.open_stream(_array.array("b", data.to_pybytes())).read_all().num_rows == 1000
    with pytest.raises(qv.errors.ArrowTypeError, match="contiguous"):
        ipc.open_stream(np.frombuffer(data, np.uint8)[::2])
