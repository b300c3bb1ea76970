"""Start-up: each command imports only what it needs.  ``quiver schema`` must cost no more
than ``import pyarrow`` (benchmarks/bench_cli.py measures it); here the imports it makes are
held to the few modules that read a schema, with a stand-in for a lazy ``import quiver``
(the package's eager re-exports are another issue's work)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .conftest import SRC, cli_env

_STAND_IN = """\
import os as _os
__path__.append(_os.path.join(_os.environ["QUIVER_SRC"], "quiver"{sub}))
__version__ = "0.1.0"
"""

_PROBE = """
import json, sys
from quiver.cli import main
code = main(sys.argv[1:])
print(json.dumps([code, sorted(m for m in sys.modules if m.startswith("quiver")),
                  sorted(m for m in ("rich", "pyarrow", "pandas", "lz4", "zstandard",
                                     "cramjam") if m in sys.modules)]))
"""


def _imports(tmp_path: Path, *args: str) -> tuple[int, list[str], list[str]]:
    lean = tmp_path / "lean"
    if not lean.exists():
        (lean / "quiver" / "ipc").mkdir(parents=True)
        (lean / "quiver" / "__init__.py").write_text(_STAND_IN.format(sub=""))
        (lean / "quiver" / "ipc" / "__init__.py").write_text(_STAND_IN.format(sub=', "ipc"'))
    env = dict(cli_env(), PYTHONPATH=str(lean), QUIVER_SRC=str(SRC))
    got = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True,
                         env=env, timeout=120, check=False, text=True)
    code, quiver, others = json.loads(got.stdout.splitlines()[-1])
    return code, quiver, others


def test_schema_imports_only_the_schema_readers(tmp_path: Path, sample_file: Path,
                                                sample_stream: Path) -> None:
    expected = {
        "quiver", "quiver.errors", "quiver.types", "quiver.cli", "quiver.cli._common",
        "quiver.cli._read", "quiver.cli.schema", "quiver.ipc", "quiver.ipc.index",
        "quiver.ipc.decoder", "quiver.ipc.metadata", "quiver.ipc.flatbuf",
        "quiver.ipc.framing", "quiver.ipc.file_decoder", "quiver.ipc.metadata.model",
        "quiver.ipc.metadata.decode", "quiver.ipc.metadata.fields",
    }
    for path in (sample_file, sample_stream):
        code, quiver, others = _imports(tmp_path, "schema", str(path))
        assert code == 0
        assert set(quiver) == expected
        assert others == []


def test_inspect_reads_headers_only_and_no_table_library(tmp_path: Path,
                                                         sample_file: Path) -> None:
    code, quiver, others = _imports(tmp_path, "inspect", "--buffers", str(sample_file))
    assert code == 0
    assert "quiver.ipc.body" not in quiver and "quiver.array" not in quiver
    assert "quiver.ipc.writer" not in quiver and others == []


def test_cat_as_json_lines_does_not_import_rich_or_writers(tmp_path: Path,
                                                          sample_file: Path) -> None:
    code, quiver, others = _imports(tmp_path, "cat", str(sample_file), "--format", "jsonl")
    assert code == 0
    assert "quiver.ipc.writer" not in quiver and "quiver.cli.convert" not in quiver
    assert others == []
