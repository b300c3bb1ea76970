"""Start-up: ``import quiver`` loads nothing but the package's lazy re-exports (and the
small table of :mod:`quiver.hooks`), and each
command imports only what it needs.  ``quiver schema`` must cost no more than
``import pyarrow`` (benchmarks/bench_cli.py measures it); here the imports it makes are held
to the few modules that read a schema."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .conftest import batches_of, cli_env, write_ipc

_HEAVY = ("numpy", "ctypes", "rich", "pyarrow", "pandas", "lz4", "zstandard", "cramjam")

_PROBE = """
import json, sys
from quiver.cli import main
code = main(sys.argv[1:])
print(json.dumps([code, sorted(m for m in sys.modules if m.startswith("quiver")),
                  sorted(m for m in ("rich", "pyarrow", "pandas", "lz4", "zstandard",
                                     "cramjam") if m in sys.modules)]))
"""


def _run(code: str, *args: str) -> str:
    got = subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                         env=cli_env(), timeout=120, check=False, text=True)
    assert got.returncode == 0, got.stderr
    return got.stdout.splitlines()[-1]


def _imports(tmp_path: Path, *args: str) -> tuple[int, list[str], list[str]]:
    code, quiver, others = json.loads(_run(_PROBE, *args))
    return code, quiver, others


def test_import_quiver_loads_no_numpy_and_no_submodule() -> None:
    probe = (
        "import json, sys; import quiver; "
        f"print(json.dumps([sorted(m for m in sys.modules if m.startswith('quiver')), "
        f"[m for m in {_HEAVY!r} if m in sys.modules]]))"
    )
    quiver, heavy = json.loads(_run(probe))
    # quiver.hooks: the package names the provider of each hook (stdlib only, no I/O)
    assert quiver == ["quiver", "quiver.hooks"]
    assert heavy == []


def test_types_and_errors_load_without_numpy() -> None:
    probe = (
        "import json, sys; import quiver.types, quiver.errors; "
        "t = quiver.types; t.schema([t.field('a', t.list_(t.int8()))]); "
        f"print(json.dumps([m for m in {_HEAVY!r} if m in sys.modules]))"
    )
    assert json.loads(_run(probe)) == []


def test_lazy_names_resolve_to_their_modules() -> None:
    probe = (
        "import json, quiver as qv, quiver.array.base; "  # binds the subpackage on quiver
        "print(json.dumps([qv.array.__module__, qv.schema.__module__, qv.int8.__module__, "
        "qv.RecordBatch.__module__, qv.ArrowError.__module__, qv.ipc.__name__, "
        "sorted(set(qv.__all__) - set(dir(qv)))]))"
    )
    assert json.loads(_run(probe)) == [
        "quiver.constructors", "quiver.constructors", "quiver.types", "quiver.batch",
        "quiver.errors", "quiver.ipc", [],
    ]


def test_schema_imports_only_the_schema_readers(tmp_path: Path, sample_file: Path,
                                                sample_stream: Path) -> None:
    expected = {
        "quiver", "quiver.errors", "quiver.types", "quiver.cli", "quiver.cli._common",
        "quiver.cli._read", "quiver.cli.schema", "quiver.ipc", "quiver.ipc.index",
        "quiver.ipc.decoder", "quiver.ipc.metadata", "quiver.ipc.flatbuf",
        "quiver.ipc.framing", "quiver.ipc.file_decoder", "quiver.ipc.metadata.model",
        "quiver.ipc.metadata.decode", "quiver.ipc.metadata.fields",
        "quiver.registry",  # the type decoders are looked up in the registry rows
        # the types package's modules, and the one-line attributes its classes use
        "quiver.types.metadata", "quiver.types.datatypes", "quiver.types.schema",
        "quiver.types.checks",  # the time zone and extension storage rules of the factories
        "quiver._readonly",
        "quiver._lazy",  # the PEP 562 hook of quiver.ipc and quiver.ipc.metadata
        "quiver.hooks",  # loaded by the package, which names each hook's provider
    }
    for path in (sample_file, sample_stream):
        code, quiver, others = _imports(tmp_path, "schema", str(path))
        assert code == 0
        assert set(quiver) == expected
        assert others == []


def test_inspect_reads_headers_only_and_no_table_library(tmp_path: Path,
                                                         sample_file: Path) -> None:
    bare = tmp_path / "bare.arrow"  # no footer statistics: nothing but headers to read
    bare.write_bytes(write_ipc(batches_of(5), stream=False, statistics=False))
    code, quiver, others = _imports(tmp_path, "inspect", "--buffers", str(bare))
    assert code == 0
    assert "quiver.ipc.body" not in quiver and "quiver.array" not in quiver
    assert "quiver.ipc.writer" not in quiver and others == []
    # footer statistics are Arrow data in a zstd frame: reading them takes the arrays
    # and the codecs, still no table library
    code, quiver, others = _imports(tmp_path, "inspect", "--buffers", str(sample_file))
    assert code == 0 and "quiver.ipc.writer" not in quiver
    assert "quiver.ipc.statistics.decode" in quiver
    assert not {"pyarrow", "pandas", "rich"} & set(others)


def test_cat_as_json_lines_does_not_import_rich_or_writers(tmp_path: Path,
                                                          sample_file: Path) -> None:
    code, quiver, others = _imports(tmp_path, "cat", str(sample_file), "--format", "jsonl")
    assert code == 0
    assert "quiver.ipc.writer" not in quiver and "quiver.cli.convert" not in quiver
    assert others == []
