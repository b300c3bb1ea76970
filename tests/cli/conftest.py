"""Helpers for the command-line tests: sample inputs, running ``main(argv)`` in-process and
the installed command in a subprocess."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

import quiver as qv
import quiver.ipc as ipc
from tests.conftest import INTEGRATION, require_shared

SRC = Path(__file__).resolve().parents[2] / "src"


def gold(name: str) -> Path:
    """A gold file of arrow-testing's integration folder (skips when ../shared is absent)."""
    return require_shared(INTEGRATION / name)


def cli_env() -> dict[str, str]:
    """The environment of a subprocess that imports this checkout's quiver."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), *filter(None, [env.get("PYTHONPATH")])])
    env.pop("COLUMNS", None)
    return env


def run_module(args: Sequence[str], *, stdin: bytes | None = None,
               timeout: float = 120) -> subprocess.CompletedProcess:
    """``python -m quiver ARGS`` in a subprocess (bytes in, bytes out)."""
    return subprocess.run([sys.executable, "-m", "quiver", *args], input=stdin,
                          capture_output=True, env=cli_env(), timeout=timeout, check=False)


def console_script() -> str | None:
    """The installed ``quiver`` entry point beside this interpreter, if there is one."""
    here = Path(sys.executable).parent / "quiver"
    if here.exists():
        return str(here)
    return shutil.which("quiver")


def batches_of(n: int, rows: int = 10) -> list[qv.RecordBatch]:
    """``n`` batches of ``rows`` rows each: int64, string and a list column, every value
    distinct so that a wrong batch cannot compare equal."""
    out = []
    for i in range(n):
        base = i * rows
        out.append(qv.record_batch({
            "id": qv.array(list(range(base, base + rows))),
            "name": qv.array([f"row {base + j}" if j % 4 else None for j in range(rows)]),
            "tags": qv.array([[base + j, -(base + j)] for j in range(rows)]),
        }))
    return out


def write_ipc(batches: list, *, stream: bool, compression: str | None = None,
              schema: qv.Schema | None = None, statistics: bool = True) -> bytes:
    """Bytes of a file (or stream) holding ``batches``."""
    sink = ipc.BufferOutputStream()
    schema = schema or batches[0].schema
    kw = {} if stream else {"statistics": statistics}
    opener = ipc.new_stream if stream else ipc.new_file
    with opener(sink, schema, compression=compression, **kw) as w:
        for b in batches:
            w.write_batch(b)
    return bytes(sink.getvalue())


def pa_write(batches: list, *, stream: bool, **options) -> bytes:
    """Bytes of a file (or stream) of pyarrow ``batches``, written by pyarrow."""
    pa = pytest.importorskip("pyarrow")
    sink = pa.BufferOutputStream()
    opener = pa.ipc.new_stream if stream else pa.ipc.new_file
    with opener(sink, batches[0].schema, options=pa.ipc.IpcWriteOptions(**options)) as w:
        for b in batches:
            w.write_batch(b)
    return sink.getvalue().to_pybytes()


DICT = qv.dictionary(qv.int32(), qv.string())


def dictionary_batch(indices: list[int], values: list[str]) -> qv.RecordBatch:
    """A batch with one dictionary column of exactly these indices and values, and an
    int64 column of the same numbers."""
    from quiver.array import make_array

    idx = qv.array(indices, qv.int32())
    col = make_array(DICT, len(idx), idx.buffers, (), -1, 0, qv.array(values, qv.string()))
    schema = qv.schema([qv.field("d", DICT), qv.field("n", qv.int64())])
    return qv.RecordBatch(schema, [col, qv.array(indices, qv.int64())])


def dictionary_stream(batches: list[tuple[list[int], list[str]]], *, deltas: bool = False,
                      file: bool = False) -> bytes:
    """A stream (or file) of dictionary batches: a new dictionary per batch is written as
    a replacement, or as a delta when it extends the last one and ``deltas``."""
    built = [dictionary_batch(i, v) for i, v in batches]
    sink = ipc.BufferOutputStream()
    opener = ipc.new_file if file else ipc.new_stream
    with opener(sink, built[0].schema, emit_dictionary_deltas=deltas) as w:
        for b in built:
            w.write_batch(b)
    return bytes(sink.getvalue())


@pytest.fixture
def sample_file(tmp_path: Path) -> Path:
    """A 5-batch IPC file."""
    p = tmp_path / "sample.arrow"
    p.write_bytes(write_ipc(batches_of(5), stream=False))
    return p


@pytest.fixture
def sample_stream(tmp_path: Path) -> Path:
    """A 5-batch IPC stream."""
    p = tmp_path / "sample.arrows"
    p.write_bytes(write_ipc(batches_of(5), stream=True))
    return p
