"""Reading a schema or a footer does not import numpy (issue 13's start-up target for
``quiver schema``: numpy alone is most of what ``import pyarrow`` costs).

Cross-module on purpose: the import hygiene of ipc.metadata, flatbuf and framing together.

Each check runs in a fresh interpreter with a stand-in ``quiver`` package whose ``__path__``
is the source tree, so that ``quiver/__init__`` (which imports numpy today) does not run and
only the modules named here are measured.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"

_PROBE = """
import json, sys, types
stub = types.ModuleType("quiver")
stub.__path__ = [sys.argv[1] + "/quiver"]
sys.modules["quiver"] = stub
import importlib
for name in sys.argv[3:]:
    importlib.import_module(name)
data = bytes.fromhex(sys.argv[2]) if sys.argv[2] else b""
out = []
if data:
    from quiver.ipc import metadata as md
    footer = md.decode_footer(data[:-10][-int.from_bytes(data[-10:-6], "little"):])
    first = md.decode_message(data[16 : 16 + int.from_bytes(data[12:16], "little")])
    out = [footer.schema.schema.names, first.header.schema.names, len(footer.record_batches)]
print(json.dumps(["numpy" in sys.modules, out]))
"""


def _probe(*modules: str, data: bytes = b"") -> tuple[bool, list]:
    got = subprocess.run(
        [sys.executable, "-c", _PROBE, str(SRC), data.hex(), *modules],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    numpy_loaded, out = json.loads(got.stdout.splitlines()[-1])
    return numpy_loaded, out


@pytest.mark.parametrize(
    "module",
    [
        "quiver.ipc.flatbuf",
        "quiver.ipc.metadata",
        "quiver.ipc.metadata.model",
        "quiver.ipc.metadata.decode",
        "quiver.ipc.metadata.fields",
        "quiver.ipc.framing",
        "quiver.ipc.decoder",
        "quiver.ipc.file_decoder",
        "quiver.ipc.index",
    ],
)
def test_metadata_modules_do_not_import_numpy(module: str) -> None:
    numpy_loaded, _ = _probe(module)
    assert not numpy_loaded, f"importing {module} imports numpy"


def test_reading_a_footer_and_a_schema_message_does_not_import_numpy() -> None:
    from quiver import types as qt
    from quiver.ipc import metadata as md
    from quiver.ipc.framing import FILE_HEADER, frame_message

    sm = md.SchemaMessage(qt.schema([("a", qt.int64()), ("b", qt.string())]), {})
    blocks = tuple(md.Block(8 + 64 * i, 48, 16) for i in range(40))  # past the few-Blocks size
    footer = md.encode_footer(md.Footer(md.V5, sm, (), blocks))
    data = (
        FILE_HEADER
        + frame_message(md.encode_message(md.Message(md.V5, sm, 0)))
        + footer
        + len(footer).to_bytes(4, "little")
        + b"ARROW1"
    )
    numpy_loaded, out = _probe("quiver.ipc.metadata", data=data)
    assert out == [["a", "b"], ["a", "b"], 40]
    assert not numpy_loaded


def test_the_first_record_batch_header_brings_numpy_in() -> None:
    # the counter-check: the probe does see numpy when a module needs it
    numpy_loaded, _ = _probe("quiver.ipc.metadata.fast")
    assert numpy_loaded
