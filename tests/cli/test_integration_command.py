"""``quiver integration``, ``file-to-stream`` and ``stream-to-file``: the entry points of
Arrow's integration harness (moved here from tests/unit/test_integration_json.py, with their
assertions)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from quiver.integration import compare, read_json

INT32 = {"name": "int", "bitWidth": 32, "isSigned": True}
INT64 = {"name": "int", "bitWidth": 64, "isSigned": True}
UTF8 = {"name": "utf8"}


def fld(name: str, type_: dict, children: list | None = None, **extra: object) -> dict:
    return {"name": name, "nullable": True, "type": type_, "children": children or [], **extra}


def _sample(tmp_path: Path) -> Path:
    """An integration JSON file: an int64, a dictionary-encoded string and a list column."""
    index_type = {"name": "int", "bitWidth": 8, "isSigned": True}
    d = {
        "schema": {"fields": [
            fld("a", INT64),
            fld("d", UTF8, dictionary={"id": 0, "indexType": index_type, "isOrdered": False}),
            fld("l", {"name": "list"}, [fld("item", INT32)]),
        ]},
        "batches": [{"count": 2, "columns": [
            {"name": "a", "count": 2, "VALIDITY": [1, 0], "DATA": ["1", "0"]},
            {"name": "d", "count": 2, "VALIDITY": [1, 1], "DATA": [1, 0]},
            {"name": "l", "count": 2, "VALIDITY": [1, 1], "OFFSET": [0, 2, 3],
             "children": [{"name": "item", "count": 3, "VALIDITY": [1, 1, 1],
                           "DATA": [1, 2, 3]}]},
        ]}],
        "dictionaries": [{"id": 0, "data": {"count": 2, "columns": [
            {"name": "DICT0", "count": 2, "VALIDITY": [1, 1], "OFFSET": [0, 1, 2],
             "DATA": ["x", "y"]}]}}],
    }
    p = tmp_path / "sample.json"
    p.write_text(json.dumps(d))
    return p


def test_cli_json_to_arrow_writes_a_file_pyarrow_reads(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    from quiver.cli import main

    j = _sample(tmp_path)
    a = tmp_path / "out.arrow"
    assert main(["integration", "--mode", "json-to-arrow", "--json", str(j),
                 "--arrow", str(a)]) == 0
    table = pa.ipc.open_file(a).read_all()
    assert table.to_pydict() == {"a": [1, None], "d": ["y", "x"], "l": [[1, 2], [3]]}


def test_cli_validate_exits_zero_when_equal_and_one_with_a_diff(tmp_path: Path, capsys) -> None:
    from quiver.cli import main

    j = _sample(tmp_path)
    a = tmp_path / "out.arrow"
    assert main(["integration", "--mode", "json-to-arrow", "--json", str(j),
                 "--arrow", str(a)]) == 0
    assert main(["integration", "--mode", "validate", "--json", str(j), "--arrow", str(a)]) == 0
    other = json.loads(j.read_text())
    other["batches"][0]["columns"][0]["DATA"] = ["7", "0"]
    j2 = tmp_path / "other.json"
    j2.write_text(json.dumps(other))
    assert main(["integration", "--mode", "validate", "--json", str(j2),
                 "--arrow", str(a)]) == 1
    assert "batch 0, column a, row 0: expected 7, found 1" in capsys.readouterr().err


def test_cli_arrow_to_json_and_file_stream_conversions_round_trip(tmp_path: Path) -> None:
    from quiver.cli import main

    j = _sample(tmp_path)
    a, s, a2, j2 = (tmp_path / n for n in ("a.arrow", "a.stream", "a2.arrow", "back.json"))
    assert main(["integration", "--mode", "json-to-arrow", "--json", str(j),
                 "--arrow", str(a)]) == 0
    assert main(["file-to-stream", str(a), str(s)]) == 0
    assert main(["stream-to-file", str(s), str(a2)]) == 0
    assert main(["integration", "--mode", "validate", "--json", str(j), "--arrow", str(s)]) == 0
    assert main(["integration", "--mode", "arrow-to-json", "--json", str(j2),
                 "--arrow", str(a2)]) == 0
    first, back = read_json(j), read_json(j2)
    assert compare(first.schema, first.batches, back.schema, back.batches) == []


def test_cli_reports_unreadable_input_in_one_line_and_exits_one(tmp_path: Path, capsys) -> None:
    from quiver.cli import main

    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert main(["integration", "--mode", "json-to-arrow", "--json", str(bad),
                 "--arrow", str(tmp_path / "x.arrow")]) == 1
    assert "does not parse" in capsys.readouterr().err
    assert main(["file-to-stream", str(tmp_path / "missing"), str(tmp_path / "y")]) == 1
    assert "No such file" in capsys.readouterr().err


def test_python_dash_m_quiver_runs_the_cli() -> None:
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "quiver", "--help"], capture_output=True,
                         text=True, check=False)
    assert out.returncode == 0
    assert "file-to-stream" in out.stdout and "integration" in out.stdout


def test_cli_accepts_arrow_cpp_mode_spellings(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    from quiver.cli import main

    j = _sample(tmp_path)
    a = tmp_path / "out.arrow"
    assert main(["integration", "--mode", "JSON_TO_ARROW", "--json", str(j),
                 "--arrow", str(a)]) == 0
    assert a.read_bytes()[:6] == b"ARROW1"
