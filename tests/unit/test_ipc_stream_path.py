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


_OVERWRITE = """
import sys
import numpy as np
import quiver as qv
import quiver.ipc as ipc
path = sys.argv[1]
for fmt in ("stream", "file"):
    with (ipc.new_stream if fmt == "stream" else ipc.new_file)(
            path, qv.schema([("x", qv.int64())])) as w:
        w.write_batch(qv.record_batch({"x": np.arange(300_000, dtype=np.int64)}))
    if fmt == "stream":
        table = ipc.open_stream(path).read_all()  # mapped
    else:
        table = ipc.open_file(path, memory_map=True).read_all()
    with ipc.new_stream(path, qv.schema([("y", qv.int8())])) as w:  # the same path again
        w.write_batch(qv.record_batch({"y": qv.array([1], qv.int8())}))
    assert int(np.asarray(table.column("x").chunks[0]).sum()) == 299_999 * 300_000 // 2
print("ok")
"""


@pytest.mark.skipif(os.name != "posix", reason="unlinking an open file is POSIX")
def test_writing_a_path_that_is_mapped_leaves_the_mapped_batches_whole(tmp_path: Path) -> None:
    # the writer replaces the file rather than truncating it: a table mapped from it
    # keeps its pages (truncated, touching them raised SIGBUS: run in a child process)
    import subprocess
    import sys

    path = tmp_path / "same.arrow"
    done = subprocess.run([sys.executable, "-c", _OVERWRITE, str(path)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", (done.returncode, done.stderr)
    assert ipc.open_stream(str(path)).read_all().column("y").to_pylist() == [1]


@pytest.mark.skipif(os.name != "posix", reason="file modes and links are POSIX")
def test_rewriting_a_path_keeps_its_mode_and_writes_through_links(tmp_path: Path) -> None:
    path = tmp_path / "m.arrow"
    schema = qv.schema([("x", qv.int64())])
    for _ in range(2):
        with ipc.new_file(path, schema) as w:
            w.write_batch(qv.record_batch({"x": [1, 2]}))
        os.chmod(path, 0o640)
    assert (os.stat(path).st_mode & 0o777) == 0o640
    target = tmp_path / "target.arrow"
    link = tmp_path / "link.arrow"
    target.write_bytes(b"old")
    link.symlink_to(target)
    with ipc.new_file(link, schema) as w:
        w.write_batch(qv.record_batch({"x": [3]}))
    assert link.is_symlink()
    assert ipc.open_file(str(target)).read_all().column("x").to_pylist() == [3]
