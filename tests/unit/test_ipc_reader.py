"""The readers as a pyarrow user meets them (issue 14): projection order, limits on every
path, use after close, non-Arrow input named for what it is, no leaked files."""

from __future__ import annotations

import gc
import io
import os
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.ipc as pipc
import pytest

import quiver as qv
import quiver.ipc as ipc
from quiver import errors as E
from quiver.ipc import body, reader
from tests.unit._ipc_helpers import _table, _write_deferred


def _batch() -> qv.RecordBatch:
    return qv.record_batch({"a": [1, 2, 3], "s": ["x", None, "z"], "f": [0.5, 1.5, 2.5]})


def _file_bytes(batch: qv.RecordBatch | None = None, n: int = 2,
                statistics: bool = True) -> bytes:
    batch = batch or _batch()
    sink = ipc.BufferOutputStream()
    with ipc.new_file(sink, batch.schema, statistics=statistics) as w:
        for _ in range(n):
            w.write_batch(batch)
    return bytes(sink.getvalue())


def _stream_bytes(batch: qv.RecordBatch | None = None, n: int = 2) -> bytes:
    batch = batch or _batch()
    sink = ipc.BufferOutputStream()
    with ipc.new_stream(sink, batch.schema) as w:
        for _ in range(n):
            w.write_batch(batch)
    return bytes(sink.getvalue())


SOURCES = ["bytes", "path", "memory_map", "file object"]


def _source(kind: str, data: bytes, tmp_path: Path) -> tuple[object, dict]:
    if kind == "bytes":
        return data, {}
    path = tmp_path / "data.arrow"
    path.write_bytes(data)
    if kind == "path":
        return str(path), {}
    if kind == "memory_map":
        return str(path), {"memory_map": True}
    return io.BytesIO(data), {}


@pytest.mark.parametrize("fmt", ["stream", "file"])
def test_columns_come_back_in_the_order_asked(fmt: str) -> None:
    data = _stream_bytes() if fmt == "stream" else _file_bytes()
    opener = ipc.open_stream if fmt == "stream" else ipc.open_file
    table = opener(data, columns=["s", "a"]).read_all()
    assert table.column_names == ["s", "a"]
    assert table.column("s").to_pylist() == ["x", None, "z"] * 2
    ours = opener(data, columns=["f", 0]).read_all()
    theirs = pa.ipc.open_stream(_stream_bytes()).read_all().select(["f", "a"])
    assert ours.column_names == theirs.column_names
    assert ours.to_pydict() == theirs.to_pydict()


@pytest.mark.parametrize("fmt", ["stream", "file"])
def test_duplicate_and_unknown_columns_are_errors_listing_the_schema(fmt: str) -> None:
    data = _stream_bytes() if fmt == "stream" else _file_bytes()
    opener = ipc.open_stream if fmt == "stream" else ipc.open_file
    with pytest.raises(qv.ArrowInvalidArgument, match=r"'a' twice \(schema \['a', 's', 'f'\]\)"):
        opener(data, columns=["a", "a"])
    with pytest.raises(qv.ArrowInvalidArgument, match="twice"):
        opener(data, columns=["a", 0])
    with pytest.raises(qv.ArrowKeyError, match=r"'nope' in the schema \['a', 's', 'f'\]"):
        opener(data, columns=["nope"])
    with pytest.raises(qv.ArrowIndexError, match=r"below 3 in the schema"):
        opener(data, columns=[7])


@pytest.mark.parametrize("kind", SOURCES)
def test_file_reader_enforces_max_body_size_on_every_source(kind: str, tmp_path: Path) -> None:
    big = qv.record_batch({"x": np.arange(10_000, dtype=np.int64)})
    src, kw = _source(kind, _file_bytes(big), tmp_path)
    limits = ipc.IpcLimits(max_body_size=1000)
    reader = ipc.open_file(src, limits=limits, **kw)
    with pytest.raises(qv.LimitExceeded, match=r"max_body_size.*found bodyLength 80000"):
        reader.get_batch(0)
    with pytest.raises(qv.LimitExceeded):
        reader.read_all()
    reader.close()
    src, kw = _source(kind, _file_bytes(big), tmp_path)
    assert ipc.open_file(src, **kw).read_all().num_rows == 20_000


@pytest.mark.parametrize("kind", SOURCES)
def test_stream_reader_enforces_max_body_size_on_every_source(kind: str, tmp_path: Path) -> None:
    big = qv.record_batch({"x": np.arange(10_000, dtype=np.int64)})
    src, kw = _source(kind, _stream_bytes(big), tmp_path)
    with pytest.raises(qv.LimitExceeded, match="max_body_size"):
        ipc.open_stream(src, limits=ipc.IpcLimits(max_body_size=1000), **kw).read_all()


def test_file_reader_enforces_max_metadata_size_on_blocks() -> None:
    data = _file_bytes(statistics=False)
    reader = ipc.open_file(data, limits=ipc.IpcLimits(max_metadata_size=1000))
    assert reader.read_all().num_rows == 6  # the real blocks are small
    # a footer over the limit is refused before it is decoded
    with pytest.raises(qv.LimitExceeded, match="footer of at most 16 bytes"):
        ipc.open_file(data, limits=ipc.IpcLimits(max_metadata_size=16))
    # the statistics a file keeps by default are in its footer, and count toward it
    with pytest.raises(qv.LimitExceeded, match="footer of at most 1000 bytes"):
        ipc.open_file(_file_bytes(), limits=ipc.IpcLimits(max_metadata_size=1000))


@pytest.mark.parametrize("fmt", ["stream", "file"])
def test_max_dictionary_size_holds_on_both_readers(fmt: str) -> None:
    table = pa.table({"d": pa.array(["v" * 100 + str(i) for i in range(50)]).dictionary_encode()})
    sink = pa.BufferOutputStream()
    make = pa.ipc.new_stream if fmt == "stream" else pa.ipc.new_file
    with make(sink, table.schema) as w:
        w.write_table(table)
    data = sink.getvalue().to_pybytes()
    opener = ipc.open_stream if fmt == "stream" else ipc.open_file
    with pytest.raises(qv.LimitExceeded, match="max_dictionary_size"):
        opener(data, limits=ipc.IpcLimits(max_dictionary_size=1000)).read_all()
    assert opener(data).read_all().column("d").to_pylist() == table.column("d").to_pylist()


@pytest.mark.parametrize("fmt", ["stream", "file"])
@pytest.mark.parametrize("kind", SOURCES)
def test_a_closed_reader_raises_quivers_error(fmt: str, kind: str, tmp_path: Path) -> None:
    data = _stream_bytes() if fmt == "stream" else _file_bytes()
    src, kw = _source(kind, data, tmp_path)
    reader = (ipc.open_stream if fmt == "stream" else ipc.open_file)(src, **kw)
    reader.close()
    with pytest.raises(qv.ArrowInvalidArgument, match="expected an open reader, found it closed"):
        reader.read_all()
    with pytest.raises(ValueError, match="closed"):
        reader.read_next_batch() if fmt == "stream" else reader.get_batch(0)


@pytest.mark.parametrize(
    ("head", "words"),
    [
        (b"PAR1\x15\x04\x15\x80\x01" + bytes(40) + b"PAR1", "Parquet"),
        (b"FEA1" + bytes(40) + b"FEA1", "Feather v1"),
        (b"id,name\n1,alice\n2,bob\n3,carol\n4,dave\n", "text"),
    ],
)
def test_non_arrow_input_is_named_for_what_it_is(head: bytes, words: str) -> None:
    with pytest.raises(qv.FormatError, match=words) as info:
        ipc.open_stream(head)
    assert "max_metadata_size" not in str(info.value)
    with pytest.raises(qv.FormatError, match=words):
        ipc.open_file(head)
    with pytest.raises(qv.FormatError, match=words):
        ipc.open_stream(io.BytesIO(head))


def test_a_legacy_stream_is_still_read() -> None:
    # streams before Arrow 0.15 start with a bare length: not mistaken for foreign bytes
    sink = pa.BufferOutputStream()
    batch = pa.record_batch({"a": [1, 2]})
    opts = pa.ipc.IpcWriteOptions(use_legacy_format=True)
    with pa.ipc.new_stream(sink, batch.schema, options=opts) as w:
        w.write_batch(batch)
    assert ipc.open_stream(sink.getvalue().to_pybytes()).read_all().to_pydict() == {"a": [1, 2]}


def test_text_mode_standard_streams_say_to_use_buffer() -> None:
    text = io.TextIOWrapper(io.BytesIO(_stream_bytes()))
    with pytest.raises(qv.ArrowTypeError, match=r"text-mode .*\.buffer"):
        ipc.open_stream(text)
    with pytest.raises(qv.ArrowTypeError, match=r"sys.stdin.buffer"):
        ipc.open_file(sys.stdin if isinstance(sys.stdin, io.TextIOBase) else text)
    out = io.TextIOWrapper(io.BytesIO())
    with pytest.raises(qv.ArrowTypeError, match=r"sys.stdout.buffer"):
        ipc.new_stream(out, _batch().schema)


@pytest.mark.parametrize("fmt", ["stream", "file"])
def test_reading_a_path_whole_leaves_no_open_file(fmt: str, tmp_path: Path) -> None:
    path = tmp_path / "t.arrow"
    path.write_bytes(_stream_bytes() if fmt == "stream" else _file_bytes())
    opener = ipc.open_stream if fmt == "stream" else ipc.open_file
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        table = opener(str(path)).read_all()
        gc.collect()
    assert table.num_rows == 6
    assert not [w for w in seen if issubclass(w.category, ResourceWarning)]


def test_a_bad_file_opened_by_path_is_closed(tmp_path: Path) -> None:
    path = tmp_path / "bad.arrow"
    path.write_bytes(b"ARROW1\x00\x00" + bytes(64))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(qv.FormatError):
            ipc.open_file(str(path))
        gc.collect()
    assert not [w for w in seen if issubclass(w.category, ResourceWarning)]


def test_len_of_a_file_reader_is_its_batch_count() -> None:
    reader = ipc.open_file(_file_bytes(n=3))
    assert len(reader) == reader.num_record_batches == 3


def test_a_stream_read_from_a_path_reads_each_body_in_one_piece(tmp_path: Path) -> None:
    big = qv.record_batch({"x": np.arange(400_000, dtype=np.int64)})
    path = tmp_path / "s.arrows"
    path.write_bytes(_stream_bytes(big, n=3))
    with ipc.open_stream(str(path), memory_map=False) as reader:  # (a path is mapped)
        batches = list(reader)
    for b in batches:
        values = b.column(0).buffers[1]
        assert not values.flags.writeable
        # a view of one body-sized numpy read, not of a bytearray joining 1 MiB pieces
        base = values
        while getattr(base, "base", None) is not None:
            base = base.base
        assert isinstance(base, memoryview) and isinstance(base.obj, np.ndarray)
        assert base.obj.nbytes >= values.nbytes
    assert qv.Table.from_batches(batches).equals(qv.Table.from_batches([big] * 3))


def test_a_truncated_stream_file_is_a_truncation_error_not_a_big_allocation(
    tmp_path: Path,
) -> None:
    big = qv.record_batch({"x": np.arange(400_000, dtype=np.int64)})
    data = _stream_bytes(big, n=1)
    path = tmp_path / "cut.arrows"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(qv.TruncatedError, match="message body"):
        ipc.open_stream(str(path)).read_all()


def test_import_quiver_loads_the_core_only_and_the_rest_on_first_use() -> None:
    import subprocess

    code = (
        "import sys, quiver as qv\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('quiver.'))\n"
        "assert not any(m.startswith(('quiver.ipc', 'quiver.integration', 'quiver.interop',"
        " 'quiver.tensor', 'quiver.cli')) for m in loaded), loaded\n"
        "assert hasattr(qv.array([1]), '__arrow_c_array__')\n"
        "assert qv.ipc.open_stream and qv.Tensor and qv.concat_arrays and qv.interop\n"
        "import pyarrow as pa\n"
        "assert pa.array(qv.array([1, 2])).to_pylist() == [1, 2]\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("fmt", ["stream", "file"])
@pytest.mark.parametrize("kind", SOURCES)
def test_max_body_size_holds_after_the_steady_path_takes_over(
    fmt: str, kind: str, tmp_path: Path
) -> None:
    small = qv.record_batch({"x": np.arange(10, dtype=np.int64)})
    big = qv.record_batch({"x": np.arange(10_000, dtype=np.int64)})
    sink = ipc.BufferOutputStream()
    with (ipc.new_stream if fmt == "stream" else ipc.new_file)(sink, small.schema) as w:
        for b in (small, small, small, small, big):
            w.write_batch(b)
    src, kw = _source(kind, bytes(sink.getvalue()), tmp_path)
    opener = ipc.open_stream if fmt == "stream" else ipc.open_file
    reader = opener(src, limits=ipc.IpcLimits(max_body_size=1000), **kw)
    with pytest.raises(qv.LimitExceeded, match="max_body_size"):
        for _ in reader:
            pass


def test_help_shows_real_keywords_and_return_types() -> None:
    import inspect
    import pydoc

    for fn in (ipc.open_file, ipc.open_stream):
        params = inspect.signature(fn).parameters
        for name in ("columns", "validate", "limits", "memory_map"):
            assert name in params and params[name].kind is inspect.Parameter.KEYWORD_ONLY
        assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    for fn in (ipc.new_file, ipc.new_stream):
        assert "compression" in inspect.signature(fn).parameters
    returns = {
        ipc.RecordBatchFileReader.get_batch: "RecordBatch",
        ipc.RecordBatchFileReader.read_all: "Table",
        ipc.RecordBatchStreamReader.read_next_batch: "RecordBatch",
        qv.Table.to_pandas: "pd.DataFrame",
        qv.Table.from_pandas: "Self",
    }
    for fn, annotation in returns.items():
        assert inspect.signature(fn).return_annotation == annotation, fn
    assert "An Arrow array from Python values" in pydoc.render_doc(qv.array)


def test_keyword_sets_hold_in_step_with_the_options() -> None:
    import dataclasses

    from quiver.ipc.encoder import WriteKeywords, WriteOptionKeywords
    from quiver.ipc.reader import ReadKeywords
    from quiver.ipc.stream_decoder import ReadOptionKeywords

    read = {f.name for f in dataclasses.fields(ipc.IpcReadOptions)}
    assert set(ReadOptionKeywords.__annotations__) == read
    assert set(ReadKeywords.__annotations__) == read | {"memory_map", "options"}
    write = {f.name for f in dataclasses.fields(ipc.IpcWriteOptions)}
    assert set(WriteOptionKeywords.__annotations__) == write
    assert set(WriteKeywords.__annotations__) == write | {"options"}


@pytest.mark.parametrize("decoder", [ipc.StreamDecoder, ipc.FileDecoder])
def test_decoders_take_options_or_keywords_not_both(decoder: Any) -> None:
    with pytest.raises(qv.ArrowInvalidArgument, match=r"either options= or keyword options, "
                                                      r"found both \(\['validate'\]\)"):
        decoder(ipc.IpcReadOptions(), validate="full")
    with pytest.raises(qv.ArrowTypeError, match=r"expected a read keyword among .*'columns'.*"
                                                r"found 'colums'"):
        decoder(colums=["a"])
    assert decoder(validate=None, columns=None).options == ipc.IpcReadOptions()  # not given
    assert decoder(validate="full").options.validate == "full"


@pytest.mark.parametrize("opener", [ipc.open_stream, ipc.open_file, ipc.RecordBatchFileReader])
def test_misspelt_read_keyword_is_named(opener: Any) -> None:
    with pytest.raises(qv.ArrowTypeError, match=r"expected a read keyword among .*'validate'.*"
                                                r"found 'validat'"):
        opener(b"", validat="full")


@pytest.mark.parametrize("opener", [ipc.new_stream, ipc.new_file, ipc.RecordBatchStreamWriter])
def test_misspelt_write_keyword_is_named(opener: Any) -> None:
    with pytest.raises(qv.ArrowTypeError, match=r"expected a write keyword among "
                                                r".*'compression'.*found 'compresion'"):
        opener(ipc.BufferOutputStream(), qv.schema([("a", qv.int8())]), compresion="zstd")


def test_none_keywords_mean_the_default_for_readers_and_writers_too() -> None:
    sink = ipc.BufferOutputStream()
    schema = qv.schema([("a", qv.int8())])
    with ipc.RecordBatchFileWriter(sink, schema, options=ipc.IpcWriteOptions(),
                                   compression=None) as w:
        w.write_batch(qv.record_batch({"a": qv.array([1], qv.int8())}))
    reader = ipc.RecordBatchFileReader(sink.getvalue(), validate=None, columns=None)
    assert reader.options == ipc.IpcReadOptions()
    assert reader.read_all().to_pydict() == {"a": [1]}


def test_projection_never_decompresses_a_skipped_column() -> None:
    rng = np.random.default_rng(1)
    table = pa.table({"keep": rng.integers(0, 5, 100_000), "skip": rng.integers(0, 5, 100_000)})
    sink = pa.BufferOutputStream()
    with pipc.new_file(sink, table.schema, options=pipc.IpcWriteOptions(compression="zstd")) as w:
        w.write_table(table)
    data = bytearray(sink.getvalue().to_pybytes())
    reader = ipc.open_file(bytes(data))
    block = reader.footer.record_batches[0]
    raw = reader._raw(block, 0, "record batch")
    header = raw.message.header
    offset, length = header.buffers[3].tolist()  # the skipped column's values buffer
    start = raw.body_offset + offset + 8  # past the uncompressed-length prefix
    data[start : start + length - 8] = b"\x00" * (length - 8)
    broken = bytes(data)
    with pytest.raises(qv.CompressionError):
        ipc.open_file(broken).get_batch(0)
    kept = ipc.open_file(broken, columns=["keep"]).get_batch(0)
    assert kept.column(0).to_pylist() == table.column("keep").to_pylist()


def test_uncompressed_buffers_of_a_batch_are_views_of_one_body() -> None:
    table = pa.table({"a": np.arange(10), "b": np.arange(10.0)})
    sink = pa.BufferOutputStream()
    with pipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    data = sink.getvalue().to_pybytes()
    batch = next(iter(ipc.open_stream(data)))
    a, b = (np.asarray(c) for c in batch.columns)
    src = np.frombuffer(data, np.uint8)
    assert np.shares_memory(a, src) and np.shares_memory(b, src)


@pytest.fixture
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Big reads from 4 KiB, in 8 KiB pieces, so that small files exercise the pieces."""
    monkeypatch.setattr(reader, "_BIG_READ", 4096)
    monkeypatch.setattr(reader, "_READ_PIECE", 8192)
    monkeypatch.setattr("quiver.ipc.compression.pool.PARALLEL_THRESHOLD", 0)


def _write_pieces(path: Path, compression: str | None) -> pa.Table:
    rng = np.random.default_rng(5)
    table = pa.table(
        {
            "i": rng.integers(0, 1 << 40, 20_000),
            "s": pa.array([f"v{k % 97}" for k in range(20_000)]),
        }
    )
    opts = pipc.IpcWriteOptions(compression=compression)
    with pipc.new_file(path, table.schema, options=opts) as w:
        w.write_table(table, max_chunksize=7_000)
    return table


@pytest.mark.parametrize("compression", [None, "lz4", "zstd"])
@pytest.mark.parametrize("threads", [True, False])
def test_pieces_read_what_a_whole_read_reads(
    tmp_path: Path,
    small_pieces: None,
    compression: str | None,
    threads: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = tmp_path / "t.arrow"
    table = _write_pieces(path, compression)
    pieces = []
    pooled = reader.run_pooled

    def counting(fn, sizes, **kwargs):
        pieces.append(len(sizes))
        return pooled(fn, sizes, **kwargs)

    monkeypatch.setattr(reader, "run_pooled", counting)
    with ipc.open_file(path, use_threads=threads) as r:
        got = r.read_all()
    assert pieces and max(pieces) > 1
    assert got.to_pylist() == table.to_pylist()
    with ipc.open_file(path.read_bytes()) as r:
        assert r.read_all().to_pylist() == table.to_pylist()


def test_a_file_cut_short_after_opening_is_a_truncation_error(
    tmp_path: Path, small_pieces: None
) -> None:
    path = tmp_path / "t.arrow"
    _write_pieces(path, None)
    with ipc.open_file(path) as r:
        last = r.footer.record_batches[-1]
        os.truncate(path, last.offset + 100)
        with pytest.raises(E.TruncatedError, match="the file changed"):
            r.get_batch(r.num_record_batches - 1)


def _outcome(source: object, **kwargs: object) -> object:
    """Every batch's values, or the error (type and message) reading stopped at."""
    try:
        with ipc.open_file(source, **kwargs) as r:
            return [r.get_batch(i).to_pylist() for i in range(r.num_record_batches)]
    except E.ArrowError as exc:
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
@pytest.mark.parametrize("threads", [True, False])
def test_deferred_bodies_read_what_pyarrow_wrote(
    tmp_path: Path, deferred: list[tuple[int, int]], codec: str, threads: bool
) -> None:
    path = tmp_path / "t.arrow"
    table = _table()
    _write_deferred(path, table, codec)
    with ipc.open_file(path, use_threads=threads) as r:
        got = r.read_all()
    assert deferred, "the deferred path was not taken"
    assert got.to_pylist() == table.to_pylist()
    # the raw (-1) buffers are arrays of their own: later decodes did not overwrite them
    noise = np.concatenate([np.asarray(c) for c in got.column(0).chunks])
    assert (noise == table.column("noise").to_numpy()).all()


def test_only_the_projected_columns_are_read(
    tmp_path: Path, deferred: list[tuple[int, int]]
) -> None:
    path = tmp_path / "t.arrow"
    table = _table()
    _write_deferred(path, table, "zstd", chunk=None)
    with ipc.open_file(path, columns=["f"]) as r:
        got = r.read_all()
        block = r.footer.record_batches[0]
    assert got.column(0).to_pylist() == table.column("f").to_pylist()
    body_read = sum(n for _, n in deferred)
    # the prefixes of the f buffers and their payloads: a small part of the whole body
    assert 0 < body_read < block.body_length // 2
    assert all(block.offset <= o < block.offset + block.meta_data_length + block.body_length
               for o, _ in deferred)


def test_a_deferred_body_at_the_default_size(tmp_path: Path) -> None:
    path = tmp_path / "t.arrow"
    table = _table(300_000)  # bodies of several MB
    _write_deferred(path, table, "lz4", chunk=None)
    taken = []
    real = body.DeferredBody.__init__

    def spy(self: body.DeferredBody, *args: object) -> None:
        taken.append(args)
        real(self, *args)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(body.DeferredBody, "__init__", spy)
        with ipc.open_file(path) as r:
            got = r.read_all()
    assert taken
    assert got.to_pylist() == table.to_pylist()


def test_memory_mapped_and_in_memory_files_are_not_deferred(
    tmp_path: Path, deferred: list[tuple[int, int]]
) -> None:
    path = tmp_path / "t.arrow"
    table = _table()
    _write_deferred(path, table, "lz4")
    assert _outcome(path, memory_map=True) == _outcome(path.read_bytes())
    assert not deferred


def test_uncompressed_bodies_are_read_whole(
    tmp_path: Path, deferred: list[tuple[int, int]]
) -> None:
    path = tmp_path / "t.arrow"
    table = _table()
    with pipc.new_file(path, table.schema) as w:
        w.write_table(table)
    assert _outcome(path) == _outcome(path.read_bytes())
    assert not deferred  # no StoredRange reads: the body came in one read


def test_a_file_cut_short_is_a_truncation_error(
    tmp_path: Path, deferred: list[tuple[int, int]]
) -> None:
    path = tmp_path / "t.arrow"
    _write_deferred(path, _table(), "zstd")
    with ipc.open_file(path) as r:
        last = r.footer.record_batches[-1]
        os.truncate(path, last.offset + last.meta_data_length + 64)
        with pytest.raises(E.TruncatedError, match="the file changed"):
            r.get_batch(r.num_record_batches - 1)


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
def test_damaged_bodies_fail_as_whole_reads_fail(
    tmp_path: Path, deferred: list[tuple[int, int]], codec: str
) -> None:
    """Byte flips across the bodies: the deferred read gives the values or the error
    (type and message) that reading the same bytes from memory gives."""
    path = tmp_path / "t.arrow"
    _write_deferred(path, _table(3_000), codec, chunk=1_000)
    clean = path.read_bytes()
    with ipc.open_file(clean) as r:
        spans = [
            (b.offset + b.meta_data_length, b.offset + b.meta_data_length + b.body_length)
            for b in r.footer.record_batches
        ]
    rng = np.random.default_rng(3)
    positions = sorted({int(rng.integers(s, e)) for s, e in spans for _ in range(25)})
    differed = 0
    for pos in positions:
        data = bytearray(clean)
        data[pos] ^= 0x5A
        path.write_bytes(bytes(data))
        deferred.clear()
        got = _outcome(path)
        assert deferred
        want = _outcome(bytes(data))
        assert got == want, pos
        differed += want != _outcome(clean)
    assert differed > 0  # the flips did reach the decoders


def test_zero_length_buffers_of_a_default_size_body(tmp_path: Path) -> None:
    """An all-empty string column in a body deferred at the default sizes (found in
    review: its zero-length data buffer came back as a StoredRange)."""
    rows = 200_000
    table = pa.table(
        {
            "x": np.random.default_rng(0).integers(0, 1 << 60, rows),
            "s": pa.array([""] * rows),
        }
    )
    path = tmp_path / "t.arrow"
    _write_deferred(path, table, "zstd", chunk=None)
    for threads in (True, False):
        with ipc.open_file(path, use_threads=threads) as r:
            got = r.get_batch(0)
        assert got.to_pylist() == table.to_batches()[0].to_pylist()
        for column in got.columns:
            assert all(b is None or isinstance(b, np.ndarray) for b in column.buffers)


def test_an_unused_dense_union_child(tmp_path: Path, deferred: list[tuple[int, int]]) -> None:
    rows = 20_000
    union = pa.UnionArray.from_dense(
        pa.array(np.zeros(rows, np.int8)),
        pa.array(np.arange(rows, dtype=np.int32)),
        [pa.array(np.arange(rows) * 3), pa.array([], pa.float64())],
    )
    table = pa.table({"u": union})
    path = tmp_path / "t.arrow"
    _write_deferred(path, table, "lz4", chunk=None)
    with ipc.open_file(path) as r:
        got = r.get_batch(0)
    assert deferred
    unused = got.column(0).children[1]
    assert all(b is None or isinstance(b, np.ndarray) for b in unused.buffers)
    assert pa.record_batch(got).to_pylist() == table.to_batches()[0].to_pylist()


@pytest.mark.parametrize("threads", [True, False])
def test_the_decompressed_size_limit_is_per_buffer_on_every_path(
    tmp_path: Path, deferred: list[tuple[int, int]], threads: bool
) -> None:
    """IpcLimits.max_decompressed_size bounds one buffer: two buffers that each fit read
    from memory and from a file alike, with or without threads (found in review)."""
    rows = 300_000
    table = pa.table({"a": np.arange(rows), "b": np.arange(rows) * 2})  # 2.4 MB each
    path = tmp_path / "t.arrow"
    _write_deferred(path, table, "zstd", chunk=None)
    limits = ipc.IpcLimits(max_decompressed_size=2_400_100)
    want = table.to_pylist()
    assert _outcome(path.read_bytes(), limits=limits, use_threads=threads) == [want]
    assert _outcome(path, limits=limits, use_threads=threads) == [want]
    tight = ipc.IpcLimits(max_decompressed_size=2_000_000)
    got = _outcome(path, limits=tight, use_threads=threads)
    assert got == _outcome(path.read_bytes(), limits=tight, use_threads=threads)
    assert got[0] == "LimitExceeded"
