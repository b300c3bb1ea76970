"""Statistics in the command line: ``inspect`` shows each batch's, ``validate --level
full`` checks them against the data, ``convert`` writes them for files only."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa

import quiver.ipc as ipc
from quiver.cli import main


def _file_with_statistics(path: Path) -> Path:
    table = pa.table({"a": pa.array([1, 2, 3, 4], pa.int64()), "s": ["p", "q", None, "r"]})
    with ipc.new_file(str(path), table.schema, statistics=True) as writer:
        for batch in table.to_batches(max_chunksize=2):
            writer.write_batch(batch)
    return path


def test_inspect_shows_each_batchs_statistics(tmp_path, capsys):
    path = _file_with_statistics(tmp_path / "s.arrow")
    assert main(["inspect", str(path)]) == 0
    text = capsys.readouterr().out
    assert "statistics a: 0 null, min 1, max 2" in text
    assert "statistics s: 1 null, min 'r', max 'r'" in text
    assert "(statistics of 2 batches, shown with them above)" in text
    assert main(["inspect", "--json", str(path)]) == 0
    stats = json.loads(capsys.readouterr().out)["statistics"]
    assert stats[1] == {"batch": 1, "rows": 2, "columns": [
        {"column": "a", "null_count": 0, "min": 3, "max": 4, "exact": True},
        {"column": "s", "null_count": 1, "min": "r", "max": "r", "exact": True}]}


def test_validate_full_checks_statistics_against_the_data(tmp_path, capsys):
    path = _file_with_statistics(tmp_path / "v.arrow")
    assert main(["validate", "--level", "full", str(path)]) == 0
    capsys.readouterr()
    block = ipc.open_file(str(path)).footer.record_batches[0]
    data = bytearray(path.read_bytes())
    body = block.offset + block.meta_data_length
    reader = ipc.open_file(bytes(data))
    first_values = reader.get_batch(0).column(0).buffers[1]
    # the first int64 value of column a, found by its bytes within the first body
    at = data.index((1).to_bytes(8, "little"), body)
    assert first_values.tobytes()[:8] == (1).to_bytes(8, "little")
    data[at : at + 8] = (100).to_bytes(8, "little")
    path.write_bytes(bytes(data))
    assert main(["validate", "--level", "full", "--json", str(path)]) == 1
    report = json.loads(capsys.readouterr().out)
    found = [f for f in report["findings"] if f["rule"] == "statistics"]
    assert len(found) == 1 and found[0]["field_path"] == "a"
    assert "min 1 and max 2" in found[0]["what"] and "1 and 100" not in found[0]["what"]
    assert "quiver convert" in found[0]["fix"]
    assert main(["validate", "--level", "structure", str(path)]) == 0


def test_convert_writes_statistics_for_files_only(tmp_path, capsys):
    source = _file_with_statistics(tmp_path / "in.arrow")
    assert main(["convert", str(source), str(tmp_path / "out.arrow"), "--columns", "s"]) == 0
    stats = ipc.open_file(str(tmp_path / "out.arrow")).statistics
    assert stats is not None and len(stats[0].columns) == 1
    assert main(["convert", str(source), str(tmp_path / "bare.arrow"), "--no-statistics"]) == 0
    assert ipc.open_file(str(tmp_path / "bare.arrow")).statistics is None
    assert main(["convert", str(source), str(tmp_path / "out.arrows"), "--to", "stream"]) == 0
    assert "a stream keeps no statistics" in capsys.readouterr().err


def test_gold_files_with_statistics_inspect_and_validate(tmp_path, capsys):
    """Every gold file, rewritten with statistics, inspects and validates at the full
    level (bounds Python cannot hold, such as nanoseconds past 2262, included)."""
    import pytest

    from .conftest import INTEGRATION

    files = sorted((INTEGRATION / "cpp-21.0.0").glob("*.arrow_file"))
    if not files:
        pytest.skip("shared test material missing: ../shared/gold (integration cases)")
    for path in files:
        out = tmp_path / f"{path.stem}.arrow"
        assert main(["convert", str(path), str(out), "-q"]) == 0, path.name
        assert main(["validate", "--level", "full", str(out)]) == 0, path.name
        assert main(["inspect", str(out)]) == 0, path.name
        capsys.readouterr()


def test_counts_another_writer_leaves_out_are_shown_as_unknown_and_not_checked(
        tmp_path, capsys):
    import base64

    from quiver.ipc.statistics import STATISTICS_KEY

    # one batch of [1, None, 3]: bounds 1..3 stated, row and null counts left out
    names = pa.array(["ARROW:min_value:exact", "ARROW:max_value:exact"])
    values = pa.UnionArray.from_dense(
        pa.array([0, 0], pa.int8()), pa.array([0, 1], pa.int32()), [pa.array([1, 3])])
    stats = pa.MapArray.from_arrays(
        pa.array([0, 0, 2], pa.int32()),
        pa.DictionaryArray.from_arrays(pa.array([0, 1], pa.int32()), names), values)
    batch = pa.record_batch({"column": pa.array([None, 0], pa.int32()), "statistics": stats})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    value = base64.b64encode(sink.getvalue().to_pybytes()).decode()
    table = pa.table({"a": pa.array([1, None, 3], pa.int64())})
    path = tmp_path / "foreign.arrow"
    with pa.OSFile(str(path), "wb") as f, pa.ipc.new_file(
            f, table.schema, metadata={STATISTICS_KEY: value}) as writer:
        writer.write_table(table)
    got = ipc.open_file(str(path)).statistics[0]
    assert got.row_count is None and got.columns[0].null_count is None
    assert (got.columns[0].min, got.columns[0].max) == (1, 3)
    assert main(["validate", "--level", "full", str(path)]) == 0
    capsys.readouterr()
    assert main(["inspect", str(path)]) == 0
    assert "statistics a: nulls not stated, min 1, max 3" in capsys.readouterr().out
