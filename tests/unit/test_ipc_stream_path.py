"""A stream read from a path (issue 26): a regular file is memory-mapped, so every batch
is a view of the map (no fresh memory per batch: the table holds nothing beyond the
file's pages), with the checks of any other source; pipes and ``memory_map=False`` read."""

from __future__ import annotations

import os
import threading
import tracemalloc
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.ipc as pipc
import pytest

import quiver as qv
import quiver.ipc as ipc


def _write_stream(path: Path, batches: int = 8, rows: int = 50_000) -> pa.Table:
    rng = np.random.default_rng(1)
    table = pa.table({
        "i": rng.integers(0, 1 << 40, batches * rows),
        "f": rng.random(batches * rows),
        "s": pa.array([f"w{k % 97}" for k in range(batches * rows)]),
        "n": pa.array([None if k % 5 == 0 else k for k in range(batches * rows)], pa.int32()),
    })
    with pipc.new_stream(str(path), table.schema) as w:
        w.write_table(table, max_chunksize=rows)
    return table


def _root(array: np.ndarray) -> object:
    base: object = array
    while getattr(base, "base", None) is not None:
        base = base.base  # type: ignore[attr-defined]
    return base.obj if isinstance(base, memoryview) else base


def test_read_all_from_a_path_holds_no_memory_beyond_the_file(tmp_path: Path) -> None:
    path = tmp_path / "s.arrows"
    expected = _write_stream(path)
    size = os.path.getsize(path)
    tracemalloc.start()
    try:
        table = ipc.open_stream(str(path)).read_all()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # numpy reports its allocations to tracemalloc: reading each body into fresh memory
    # (the old path) peaked at the file's size; views of the map allocate only objects
    assert peak < size // 10, (peak, size)
    assert pa.table(table).equals(expected)
    values = table.column("i").chunks[0].buffers[1]
    assert isinstance(_root(values), __import__("mmap").mmap)
    assert not values.flags.writeable


def test_iteration_from_a_path_gives_views_of_one_map(tmp_path: Path) -> None:
    path = tmp_path / "s.arrows"
    expected = _write_stream(path)
    with ipc.open_stream(path) as reader:  # a PathLike too
        batches = list(reader)
    roots = {id(_root(b.column("f").buffers[1])) for b in batches}
    assert len(roots) == 1
    assert pa.table(qv.Table.from_batches(batches)).equals(expected)


def test_memory_map_false_reads_a_path_into_memory(tmp_path: Path) -> None:
    path = tmp_path / "s.arrows"
    expected = _write_stream(path, batches=3)
    table = ipc.open_stream(str(path), memory_map=False).read_all()
    assert pa.table(table).equals(expected)
    assert isinstance(_root(table.column("i").chunks[0].buffers[1]), np.ndarray)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_is_read_as_it_comes(tmp_path: Path) -> None:
    data_path = tmp_path / "s.arrows"
    expected = _write_stream(data_path, batches=3, rows=1000)
    data = data_path.read_bytes()
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "wb") as f:
            for i in range(0, len(data), 4096):
                f.write(data[i : i + 4096])

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        table = ipc.open_stream(str(fifo)).read_all()
    finally:
        writer.join(timeout=30)
    assert pa.table(table).equals(expected)


def test_a_damaged_mapped_stream_fails_as_the_bytes_do(tmp_path: Path) -> None:
    path = tmp_path / "s.arrows"
    _write_stream(path, batches=2, rows=1000)
    data = path.read_bytes()
    cut = data[: len(data) - 100]
    path.write_bytes(cut)
    with pytest.raises(qv.TruncatedError) as mapped:
        ipc.open_stream(str(path)).read_all()
    with pytest.raises(qv.TruncatedError) as in_memory:
        ipc.open_stream(cut).read_all()
    assert str(mapped.value) == str(in_memory.value)


def test_an_empty_file_by_path_is_the_same_error_as_empty_bytes(tmp_path: Path) -> None:
    path = tmp_path / "empty.arrows"
    path.write_bytes(b"")
    with pytest.raises(qv.ArrowError) as mapped:
        ipc.open_stream(str(path))
    with pytest.raises(qv.ArrowError) as in_memory:
        ipc.open_stream(b"")
    assert type(mapped.value) is type(in_memory.value)
    assert str(mapped.value) == str(in_memory.value)


def test_a_missing_path_is_still_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        ipc.open_stream(str(tmp_path / "nope.arrows"))
