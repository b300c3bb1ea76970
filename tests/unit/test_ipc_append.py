"""Appending to an IPC file (issue 26): ``new_file(path, schema, append=True)`` keeps the old
batches, adds new ones and a footer listing both; the schema must match; dictionaries grow
by deltas only; statistics are merged; a writer killed at any moment loses no old batch,
and ``quiver recover`` gives back every old batch and every complete new one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import quiver as qv
import quiver.ipc as ipc
from quiver import errors as E
from quiver.cli import main
from quiver.ipc.index import scan_messages

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("x", pa.float64())])


def _batch(start: int, rows: int = 5) -> pa.RecordBatch:
    ids = np.arange(start, start + rows)
    return pa.record_batch({
        "id": ids,
        "name": pa.array([f"n{i}" if i % 3 else None for i in ids.tolist()]),
        "x": ids * 0.5,
    }, schema=SCHEMA)


def _write(path: Path, batches: list[pa.RecordBatch], *, pyarrow: bool = False,
           **kw: object) -> None:
    if pyarrow:
        with pa.ipc.new_file(str(path), batches[0].schema) as w:
            for b in batches:
                w.write_batch(b)
        return
    with ipc.new_file(str(path), batches[0].schema, **kw) as w:
        for b in batches:
            w.write_batch(b)


def _append(path: Path, batches: list[pa.RecordBatch], **kw: object) -> None:
    with ipc.new_file(str(path), batches[0].schema, append=True, **kw) as w:
        for b in batches:
            w.write_batch(b)


def _rows(path: Path) -> list[dict]:
    return pa.ipc.open_file(str(path)).read_all().to_pylist()


@pytest.mark.parametrize("first", ["quiver", "pyarrow"])
@pytest.mark.parametrize("compression", [None, "zstd"])
def test_append_round_trips_and_other_readers_read_it(
        tmp_path: Path, first: str, compression: str | None) -> None:
    path = tmp_path / "a.arrow"
    old = [_batch(0), _batch(5)]
    new = [_batch(10), _batch(15, rows=3)]
    _write(path, old, pyarrow=first == "pyarrow")
    _append(path, new, compression=compression)
    _append(path, [_batch(100, rows=2)])  # and again, to a file quiver appended to
    expected = pa.Table.from_batches([*old, *new, _batch(100, rows=2)]).to_pylist()
    reader = pa.ipc.open_file(str(path))
    assert reader.num_record_batches == 5
    assert reader.read_all().to_pylist() == expected
    assert pa.table(ipc.open_file(str(path)).read_all()).to_pylist() == expected
    assert pa.table(ipc.open_stream(_stream_part(path)).read_all()
                    ).to_pylist() == expected  # the messages inside run as one stream
    pl = pytest.importorskip("polars")
    assert pl.read_ipc(str(path)).to_dicts() == expected
    duckdb = pytest.importorskip("duckdb")
    # (duckdb has no IPC file reader without its arrow extension: it scans the file
    # through pyarrow's dataset, which reads it by its footer)
    import pyarrow.dataset as ds

    relation = duckdb.connect().from_arrow(ds.dataset(str(path), format="ipc"))
    got = relation.order("id").fetchall()
    assert got == [(r["id"], r["name"], r["x"]) for r in expected]


def _stream_part(path: Path) -> bytes:
    """The stream inside a file: from the Schema message to the end of stream."""
    data = path.read_bytes()
    last = list(scan_messages(data, start=8))[-1]
    return data[8 : last.end + 8]


def test_a_missing_or_empty_file_is_written_afresh(tmp_path: Path) -> None:
    path = tmp_path / "new.arrow"
    _append(path, [_batch(0)])
    assert _rows(path) == _batch(0).to_pylist()
    path.write_bytes(b"")
    _append(path, [_batch(7)])
    assert _rows(path) == _batch(7).to_pylist()


def test_appending_to_a_file_without_batches(tmp_path: Path) -> None:
    path = tmp_path / "empty.arrow"
    with ipc.new_file(str(path), SCHEMA):
        pass
    _append(path, [_batch(0)])
    assert _rows(path) == _batch(0).to_pylist()


def test_a_schema_that_differs_names_the_first_differing_field(tmp_path: Path) -> None:
    path = tmp_path / "a.arrow"
    _write(path, [_batch(0)])
    before = path.read_bytes()
    other = pa.schema([("id", pa.int64()), ("name", pa.large_string()), ("x", pa.float64())])
    with pytest.raises(E.ArrowInvalidArgument,
                       match=r"expected field 1 as the file appended to has it, 'name': "
                             r"string, found 'name': large_string"):
        ipc.new_file(str(path), other, append=True)
    fewer = pa.schema([("id", pa.int64()), ("name", pa.string())])
    with pytest.raises(E.ArrowInvalidArgument, match=r"field 2 .*'x': double, found no field"):
        ipc.new_file(str(path), fewer, append=True)
    renamed = pa.schema([("id", pa.int64()), ("nom", pa.string()), ("x", pa.float64())])
    with pytest.raises(E.ArrowInvalidArgument, match=r"field 1 .*found 'nom'"):
        ipc.new_file(str(path), renamed, append=True)
    not_null = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string()),
                          ("x", pa.float64())])
    with pytest.raises(E.ArrowInvalidArgument, match=r"field 0 .*found 'id': int64 not null"):
        ipc.new_file(str(path), not_null, append=True)
    assert path.read_bytes() == before  # a refused append leaves the file untouched


def test_a_file_that_is_not_an_ipc_file_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "s.arrows"
    with pa.ipc.new_stream(str(path), SCHEMA) as w:
        w.write_batch(_batch(0))
    before = path.read_bytes()
    with pytest.raises(qv.FormatError, match=r"open_stream|stream"):
        ipc.new_file(str(path), SCHEMA, append=True)
    assert path.read_bytes() == before
    with pytest.raises(E.ArrowTypeError, match="expected a path to append to"):
        ipc.new_file(ipc.BufferOutputStream(), SCHEMA, append=True)


def test_the_footer_metadata_is_kept_unless_given(tmp_path: Path) -> None:
    path = tmp_path / "a.arrow"
    _write(path, [_batch(0)], metadata={"origin": "test"})
    _append(path, [_batch(5)])
    assert pa.ipc.open_file(str(path)).metadata == {b"origin": b"test"}
    _append(path, [_batch(9)], metadata={"origin": "again"})
    assert pa.ipc.open_file(str(path)).metadata == {b"origin": b"again"}


# -- dictionaries --------------------------------------------------------------------------

DSCHEMA = pa.schema([("k", pa.dictionary(pa.int32(), pa.string())), ("v", pa.int64())])


def _dbatch(keys: list[str | None], dictionary: list[str], start: int = 0) -> pa.RecordBatch:
    index = pa.array([None if k is None else dictionary.index(k) for k in keys], pa.int32())
    return pa.record_batch(
        [pa.DictionaryArray.from_arrays(index, pa.array(dictionary)),
         pa.array(range(start, start + len(keys)), pa.int64())], schema=DSCHEMA)


def test_dictionaries_are_unified_against_the_files_by_deltas(tmp_path: Path) -> None:
    path = tmp_path / "d.arrow"
    _write(path, [_dbatch(["a", "b", "a"], ["a", "b"])], pyarrow=True)
    _append(path, [_dbatch(["c", "a", None], ["c", "a"], 3),  # other values: re-encoded
                   _dbatch(["b"], ["a", "b"], 6)])  # the file's own: nothing new
    _append(path, [_dbatch(["d", "c"], ["a", "b", "c", "d"], 7)])  # an extension: a delta
    reader = pa.ipc.open_file(str(path))
    table = reader.read_all()
    assert table.column("k").to_pylist() == ["a", "b", "a", "c", "a", None, "b", "d", "c"]
    assert table.column("v").to_pylist() == list(range(9))
    # every dictionary message after the first is a delta of the values the file lacked
    kinds = [(m.kind, m.is_delta) for m in scan_messages(path.read_bytes(), start=8)
             if m.kind == "dictionary"]
    assert kinds == [("dictionary", False), ("dictionary", True), ("dictionary", True)]
    assert table.column("k").chunks[-1].dictionary.to_pylist() == ["a", "b", "c", "d"]
    assert pa.table(ipc.open_file(str(path)).read_all()).equals(table)


def test_a_replacement_is_refused_without_unification(tmp_path: Path) -> None:
    path = tmp_path / "d.arrow"
    _write(path, [_dbatch(["a", "b"], ["a", "b"])])
    with (pytest.raises(qv.DictionaryError, match="forbids dictionary replacement"),
          ipc.new_file(str(path), DSCHEMA, append=True, unify_dictionaries=False) as w):
        w.write_batch(_dbatch(["c"], ["c", "a"]))
    # the writer closed over what it had: the old batch and a good footer
    assert pa.ipc.open_file(str(path)).read_all().column("k").to_pylist() == ["a", "b"]
    with ipc.new_file(str(path), DSCHEMA, append=True, unify_dictionaries=False) as w:
        w.write_batch(_dbatch(["c"], ["a", "b", "c"]))  # an extension is a delta anyway
    assert _rows(path)[-1] == {"k": "c", "v": 0}


# -- statistics ----------------------------------------------------------------------------

def _stats(path: Path) -> list[tuple]:
    stats = ipc.open_file(str(path)).statistics
    return None if stats is None else [
        (s.row_count, *[(c.null_count, c.min, c.max) for c in s.columns]) for s in stats]


def _written_whole(path: Path, batches: list[pa.RecordBatch]) -> list[tuple]:
    whole = path.with_suffix(".whole")
    _write(whole, batches, statistics=True)
    return _stats(whole)


def test_statistics_are_merged_and_filters_use_them(tmp_path: Path) -> None:
    path = tmp_path / "s.arrow"
    old, new = [_batch(0), _batch(5)], [_batch(10), _batch(20, rows=400)]
    _write(path, old, statistics=True)
    _append(path, new)  # the defaults keep what the file has
    assert _stats(path) == _written_whole(path, old + new)
    reader = ipc.open_file(str(path), filters=[("id", ">=", 20)])
    assert pa.table(reader.read_all()).to_pylist() == new[1].to_pylist()
    assert reader.batches_skipped == 3


def test_statistics_of_strings_decimals_times_and_bools_carry_over(tmp_path: Path) -> None:
    import datetime as dt
    import decimal

    schema = pa.schema([("s", pa.string()), ("d", pa.decimal128(10, 2)),
                        ("t", pa.timestamp("ns")), ("b", pa.bool_()), ("f", pa.float32())])

    def batch(k: int) -> pa.RecordBatch:
        return pa.record_batch([
            pa.array([f"v{k}" * 30, None, "zz" * (k + 1)]),  # long bounds: cut, inexact
            pa.array([decimal.Decimal(k) / 4, None, decimal.Decimal("-1.25")],
                     pa.decimal128(10, 2)),
            pa.array([dt.datetime(2020, 1, 1 + k), None, dt.datetime(2001, 1, 1)],
                     pa.timestamp("ns")),
            pa.array([k % 2 == 0, None, True]),
            pa.array([float(k), float("nan"), -0.0], pa.float32()),
        ], schema=schema)

    path = tmp_path / "s.arrow"
    _write(path, [batch(0), batch(1)], statistics=True)
    _append(path, [batch(2)])
    assert _stats(path) == _written_whole(path, [batch(0), batch(1), batch(2)])


def test_statistics_true_on_a_file_without_them_computes_the_old_ones(tmp_path: Path) -> None:
    path = tmp_path / "s.arrow"
    old, new = [_batch(0)], [_batch(5)]
    _write(path, old, pyarrow=True)
    _append(path, new)
    assert _stats(path) is None  # the defaults: none, as the file had none
    _append(path, [_batch(9)], statistics=True)
    assert _stats(path) == _written_whole(path, [*old, *new, _batch(9)])
    _append(path, [_batch(30)], statistics=False)  # dropped when asked
    assert _stats(path) is None
    assert len(_rows(path)) == 20


def test_statistics_that_cannot_be_carried_over_are_dropped_with_a_warning(
        tmp_path: Path) -> None:
    path = tmp_path / "s.arrow"
    with pa.ipc.new_file(str(path), SCHEMA, metadata={"quiver:statistics": "#bad#"}) as w:
        w.write_batch(_batch(0))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        _append(path, [_batch(5)])
    assert any(issubclass(w.category, E.StatisticsWarning) for w in seen)
    assert _stats(path) is None
    assert len(_rows(path)) == 10


def test_a_second_appender_is_refused_while_the_first_writes(tmp_path: Path) -> None:
    path = tmp_path / "a.arrow"
    _write(path, [_batch(0)])
    with ipc.new_file(str(path), SCHEMA, append=True) as w:
        with pytest.raises(E.ArrowInvalidArgument, match="found the file locked"):
            ipc.new_file(str(path), SCHEMA, append=True)
        w.write_batch(_batch(5))
    assert len(_rows(path)) == 10


# -- crash safety --------------------------------------------------------------------------

def _recover(src: Path, out: Path, capsys: pytest.CaptureFixture) -> tuple[int, list[dict]]:
    code = main(["recover", "--json", str(src), str(out)])
    report = json.loads(capsys.readouterr().out)
    reader = pa.ipc.open_file(str(out))
    rows = [r for i in range(reader.num_record_batches) for r in reader.get_batch(i).to_pylist()]
    return code, rows if report["record_batches"] == reader.num_record_batches else None


@pytest.mark.parametrize("kind", ["plain", "dictionary"])
def test_a_crash_at_any_byte_of_an_append_loses_no_old_batch(
        tmp_path: Path, capsys: pytest.CaptureFixture, kind: str) -> None:
    """Every state the file passes through while appending: the old file whole (before
    the cut), then the old messages followed by any prefix of the new bytes (written in
    order; the footer last).  recover gives back the old batches and the complete new
    ones at every one of them."""
    path = tmp_path / "a.arrow"
    if kind == "plain":
        old, new = [_batch(0), _batch(5)], [_batch(10), _batch(15)]
    else:
        old = [_dbatch(["a", "b"], ["a", "b"]), _dbatch(["b"], ["a", "b"], 2)]
        new = [_dbatch(["c", "a"], ["c", "a"], 3), _dbatch(["d"], ["d"], 5)]
    _write(path, old, statistics=True)
    original = path.read_bytes()
    _append(path, new)
    final = path.read_bytes()
    cut = max(m.end for m in scan_messages(original, start=8) if m.kind != "schema")
    assert final[:cut] == original[:cut]  # the old messages are never rewritten
    new_messages = [m for m in scan_messages(final, start=cut)]
    ends = {m.end: m.kind for m in new_messages}
    expected_old = pa.Table.from_batches(old).to_pylist()
    src, out = tmp_path / "crashed.arrow", tmp_path / "saved.arrow"
    # (the new bytes, every 13th offset and each message's edges; then the footer's)
    points = sorted({*range(cut, len(final), 13), *ends, *(e - 1 for e in ends),
                     *(e + 1 for e in ends), len(final) - 1})
    states = [original] + [final[:p] for p in points]
    for state in states:
        src.write_bytes(state)
        code, rows = _recover(src, out, capsys)
        complete = sum(1 for e, k in ends.items() if k == "record_batch" and e <= len(state))
        if state is original:
            complete = 0
        expected = expected_old + [r for b in new[:complete] for r in b.to_pylist()]
        assert rows == expected, (len(state), code)
    assert len(states) > 30


_CHILD = """
import sys
import numpy as np
import quiver as qv
import quiver.ipc as ipc
path, rows = sys.argv[1], int(sys.argv[2])
schema = qv.schema([("id", qv.int64()), ("x", qv.float64())])
with ipc.new_file(path, schema, append=True) as w:
    k = 0
    while True:
        ids = np.arange(1_000_000 + k * rows, 1_000_000 + (k + 1) * rows)
        w.write_batch(qv.record_batch({"id": ids, "x": ids * 0.5}, schema=schema))
        k += 1
        print(k, flush=True)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="no SIGKILL here")
def test_a_writer_killed_while_appending_loses_no_old_batch(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A real appender killed with SIGKILL after 0..5 batches it reported written, at
    varying moments (inside a batch's write, between batches): recover gives back every
    old batch and every new batch up to the last one reported (and each new batch it
    gives back is whole and in order)."""
    schema = pa.schema([("id", pa.int64()), ("x", pa.float64())])
    old = [pa.record_batch({"id": np.arange(k * 100, k * 100 + 100),
                            "x": np.arange(k * 100, k * 100 + 100) * 0.5}, schema=schema)
           for k in range(3)]
    expected_old = pa.Table.from_batches(old).to_pylist()
    rows = 200_000
    env = {**os.environ, "PYTHONPATH": str(Path(ipc.__file__).parents[2])}
    for attempt, (after, delay) in enumerate([(0, 0.0), (1, 0.0), (2, 0.001), (3, 0.004),
                                              (5, 0.0005)]):
        path = tmp_path / f"k{attempt}.arrow"
        _write(path, old, statistics=True)
        child = subprocess.Popen([sys.executable, "-c", _CHILD, str(path), str(rows)],
                                 stdout=subprocess.PIPE, env=env)
        try:
            seen = 0
            while seen < after:
                line = child.stdout.readline()
                assert line, "the appender stopped before it was killed"
                seen = int(line)
            if after == 0:
                # kill while it starts (reading, checking, cutting, the first batch)
                time.sleep(0.3)
            time.sleep(delay)
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=30)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
            child.stdout.close()
        out = tmp_path / f"saved{attempt}.arrow"
        _, got = _recover(path, out, capsys)
        assert got is not None and got[: len(expected_old)] == expected_old, attempt
        new_rows = got[len(expected_old):]
        assert len(new_rows) % rows == 0 and len(new_rows) // rows >= seen, attempt
        ids = [r["id"] for r in new_rows]
        assert ids == list(range(1_000_000, 1_000_000 + len(ids))), attempt


def test_the_files_schema_metadata_is_kept_and_batches_without_it_accepted(
        tmp_path: Path) -> None:
    path = tmp_path / "m.arrow"
    schema = pa.schema([pa.field("a", pa.int64(), metadata={"k": "v"})], metadata={"top": "1"})
    with pa.ipc.new_file(str(path), schema) as w:
        w.write_batch(pa.record_batch({"a": [1]}, schema=schema))
    plain = pa.schema([("a", pa.int64())])
    with ipc.new_file(str(path), plain, append=True) as w:
        w.write_batch(pa.record_batch({"a": [2]}, schema=plain))
        w.write_batch(qv.record_batch({"a": qv.array([3])}))
    reader = pa.ipc.open_file(str(path))
    assert reader.schema.equals(schema, check_metadata=True)
    assert reader.read_all().column("a").to_pylist() == [1, 2, 3]
