"""``quiver file-to-stream`` and ``quiver stream-to-file`` through stdin and stdout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def test_cli_file_to_stream_and_back_through_stdout_and_stdin(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    table = pa.table({"x": [1, None, 3], "s": ["a", "bb", None]})
    src = tmp_path / "in.arrow"
    with pa.ipc.new_file(src, table.schema) as w:
        w.write_table(table)
    to_stream = subprocess.run([sys.executable, "-m", "quiver", "file-to-stream", str(src), "-"],
                               capture_output=True, check=True, timeout=120)
    assert pa.ipc.open_stream(to_stream.stdout).read_all().equals(table)
    out = tmp_path / "out.arrow"
    subprocess.run([sys.executable, "-m", "quiver", "stream-to-file", "-", str(out)],
                   input=to_stream.stdout, capture_output=True, check=True, timeout=120)
    assert pa.ipc.open_file(out).read_all().equals(table)
