"""Compressed batches written to real files as the pool compresses them: a placeholder
for the metadata, the buffers in order, then the metadata (writer._Writer._write_pipelined)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.ipc as pipc
import pytest

import quiver as qv
import quiver.ipc as ipc
from quiver.ipc import compression, writer
from tests.ipc_cases import all_type_arrays


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


def _write(sink: Any, batches: list[Any], codec: str, **kw: Any) -> None:
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
    _write(path, batches, codec, metadata_version=version)
    assert pipelined == [5000, 2000]  # the empty batch: the general path
    memory = ipc.BufferOutputStream()
    _write(memory, batches, codec, metadata_version=version)
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
            _write(f, batches, "lz4")
        data = path.read_bytes()
    elif mode == "memory":
        sink = ipc.BufferOutputStream()
        _write(sink, batches, "lz4")
        data = bytes(sink.getvalue())
    else:
        _write(path, batches, "lz4", use_threads=False)
        data = path.read_bytes()
    assert pipelined == []
    got = ipc.open_file(data).read_all()
    assert got.to_pylist() == [r for b in batches for r in b.to_pylist()]


def test_a_failure_leaves_no_half_message(
    tmp_path: Path, pipelined: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    batches = _batches()
    path = tmp_path / "t.arrow"
    real = compression.pool._compress_one
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
        monkeypatch.setattr(compression.pool, "_compress_one", failing)
        with pytest.raises(MemoryError):
            w.write_batch(batches[0])
        w._sink._f.flush()
        assert path.stat().st_size == size  # cut back to where the message began
        monkeypatch.setattr(compression.pool, "_compress_one", real)
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
        _write(f, batches, "lz4")
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
        _write(f, batches, "lz4")
    memory = ipc.BufferOutputStream()
    _write(memory, batches, "lz4")
    assert path.read_bytes() == bytes(memory.getvalue())
