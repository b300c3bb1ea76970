"""Where statistics are written by default (issue 26): not by ``ipc.new_file`` (they cost
1.5-3x of a plain write; pyarrow writes none), but by the Spark sink and the commands
whose file outputs are read with filters (``convert``, ``stream-to-file``, ``recover``)."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest

import quiver.ipc as ipc


def _table() -> pa.Table:
    return pa.table({"a": list(range(10)), "s": [f"v{k}" for k in range(10)]})


def test_the_spark_sinks_task_files_keep_statistics_by_default(tmp_path: Path) -> None:
    from quiver.spark.sink import TaskFiles
    from quiver.spark.source import WriteOptions

    for given, kept in (({}, True), ({"statistics": "false"}, False)):
        directory = tmp_path / ("on" if kept else "off")
        directory.mkdir()
        files = TaskFiles(str(directory), "part", WriteOptions.parse(given))
        for batch in _table().to_batches(max_chunksize=4):
            files.write(batch)
        (written,) = files.close()
        stats = ipc.open_file(str(directory / written.relative)).statistics
        if kept:
            assert [s.row_count for s in stats] == [10]  # (gathered into one batch)
            assert (stats[0].columns[0].min, stats[0].columns[0].max) == (0, 9)
        else:
            assert stats is None


@pytest.mark.parametrize("command", ["convert", "stream-to-file"])
def test_file_outputs_of_the_commands_keep_statistics_unless_told(
        command: str, tmp_path: Path) -> None:
    from quiver.cli import main

    src = tmp_path / "in.arrows"
    with pa.ipc.new_stream(str(src), _table().schema) as w:
        w.write_table(_table(), max_chunksize=5)
    out = tmp_path / "out.arrow"
    assert main([command, str(src), str(out), "-q"]) == 0
    stats = ipc.open_file(str(out)).statistics
    assert [(s.columns[0].min, s.columns[0].max) for s in stats] == [(0, 4), (5, 9)]
    bare = tmp_path / "bare.arrow"
    assert main([command, str(src), str(bare), "-q", "--no-statistics"]) == 0
    assert ipc.open_file(str(bare)).statistics is None
    assert pa.ipc.open_file(str(bare)).read_all().equals(_table())


def test_recover_writes_statistics_as_convert_does(tmp_path: Path) -> None:
    from quiver.cli import main

    src = tmp_path / "cut.arrow"
    with ipc.new_file(str(src), _table().schema) as w:
        for batch in _table().to_batches(max_chunksize=5):
            w.write_batch(batch)
    data = src.read_bytes()
    src.write_bytes(data[: len(data) - 20])  # the footer cut: recover walks the messages
    out = tmp_path / "fixed.arrow"
    main(["recover", str(src), str(out), "-q"])
    assert os.path.exists(out)
    stats = ipc.open_file(str(out)).statistics
    assert [s.row_count for s in stats] == [5, 5]
