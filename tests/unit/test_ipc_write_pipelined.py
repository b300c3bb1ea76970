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
    elif mode == "memory":
        _write(ipc.BufferOutputStream(), batches, "lz4")
    else:
        _write(path, batches, "lz4", use_threads=False)
    assert pipelined == []
    if mode == "ab":
        assert ipc.open_file(path).num_record_batches == 3


def test_a_failure_leaves_no_half_message(
    tmp_path: Path, pipelined: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    batches = _batches()
    path = tmp_path / "t.arrow"
    real = compression._compress_one
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
        monkeypatch.setattr(compression, "_compress_one", failing)
        with pytest.raises(MemoryError):
            w.write_batch(batches[0])
        w._sink._f.flush()
        assert path.stat().st_size == size  # cut back to where the message began
        monkeypatch.setattr(compression, "_compress_one", real)
        w.write_batch(batches[0])
    got = ipc.open_file(path).read_all()
    assert got.to_pylist() == batches[1].to_pylist() + batches[0].to_pylist()
    with pa.memory_map(str(path)) as src:
        assert pipc.open_file(src).read_all().num_rows == 7000
