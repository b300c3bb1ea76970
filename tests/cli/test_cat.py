"""``quiver cat`` and ``quiver head``: JSON lines, CSV and tables, checked against pyarrow's
reading of the same input."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from quiver.cli import main
from quiver.cli.cat import cell_text, to_json

from .conftest import batches_of, gold, pa_write, write_ipc


def _jsonl(capsys) -> list[dict]:
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_cat_jsonl_gives_every_row_as_pyarrow_reads_it(sample_file: Path, capsys) -> None:
    pa = pytest.importorskip("pyarrow")
    assert main(["cat", str(sample_file), "--format", "jsonl"]) == 0
    assert _jsonl(capsys) == pa.ipc.open_file(sample_file).read_all().to_pylist()


def test_head_gives_ten_rows_and_head_n_any_number(sample_stream: Path, capsys) -> None:
    pa = pytest.importorskip("pyarrow")
    rows = pa.ipc.open_stream(sample_stream).read_all().to_pylist()
    assert main(["head", str(sample_stream), "--format", "jsonl"]) == 0
    assert _jsonl(capsys) == rows[:10]
    assert main(["head", "-n", "23", str(sample_stream), "--format", "jsonl"]) == 0
    assert _jsonl(capsys) == rows[:23]  # across batch boundaries (batches of 10)
    assert main(["cat", "--head", "0", str(sample_stream), "--format", "jsonl"]) == 0
    assert _jsonl(capsys) == []


def test_head_stops_reading_after_the_rows_it_needs(tmp_path: Path, capsys) -> None:
    data = write_ipc(batches_of(4), stream=True)
    p = tmp_path / "cut.arrows"
    p.write_bytes(data[:-60])  # the last batch is cut: head never gets there
    assert main(["head", "-n", "15", str(p), "--format", "jsonl"]) == 0
    assert [r["id"] for r in _jsonl(capsys)] == list(range(15))
    assert main(["cat", str(p), "--format", "jsonl"]) == 1  # cat does, and says so
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 30
    assert captured.err.startswith(f"quiver: {p}: expected a message body of")


def test_columns_are_printed_in_the_order_asked(sample_file: Path, capsys) -> None:
    assert main(["head", "-n", "2", str(sample_file), "--columns", "tags,id",
                 "--format", "csv"]) == 0
    assert capsys.readouterr().out == 'tags,id\n"[0,0]",0\n"[1,-1]",1\n'


def test_unknown_column_is_one_line_error(sample_file: Path, capsys) -> None:
    assert main(["cat", str(sample_file), "--columns", "nope"]) == 1
    err = capsys.readouterr().err
    assert "column named 'nope'" in err and err.count("\n") == 1


def test_csv_has_a_header_nulls_empty_and_nested_values_as_json(sample_stream: Path,
                                                                capsys) -> None:
    pa = pytest.importorskip("pyarrow")
    assert main(["cat", str(sample_stream), "--format", "csv"]) == 0
    got = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    rows = pa.ipc.open_stream(sample_stream).read_all().to_pylist()
    assert got[0] == ["id", "name", "tags"]
    assert len(got) == len(rows) + 1
    for line, row in zip(got[1:], rows):
        assert line == [str(row["id"]), row["name"] or "", json.dumps(row["tags"],
                                                                      separators=(",", ":"))]


@pytest.mark.parametrize("name", [
    "cpp-21.0.0/generated_nested.arrow_file", "cpp-21.0.0/generated_map.stream",
    "cpp-21.0.0/generated_union.arrow_file", "cpp-21.0.0/generated_dictionary.stream",
    "cpp-21.0.0/generated_run_end_encoded.arrow_file",
    "cpp-21.0.0/generated_primitive.arrow_file", "cpp-21.0.0/generated_binary_view.stream",
])
def test_nested_and_encoded_values_as_json_equal_pyarrows(name: str, capsys) -> None:
    pa = pytest.importorskip("pyarrow")
    path = gold(name)
    assert main(["cat", str(path), "--format", "jsonl"]) == 0
    ours = _jsonl(capsys)
    opener = pa.ipc.open_file if name.endswith(".arrow_file") else pa.ipc.open_stream
    theirs = json.loads(to_json(opener(path).read_all().to_pylist()))
    assert ours == theirs


def test_temporal_values_beyond_pythons_datetime_are_text_not_errors(capsys) -> None:
    path = gold("cpp-21.0.0/generated_duration.arrow_file")
    assert main(["cat", str(path), "--format", "jsonl"]) == 0
    rows = _jsonl(capsys)
    assert {"f1": "9223372036854775807 s", "f2": "9223372036854775807 ms",
            "f3": "9223372036854775807 us", "f4": None} in rows
    path = gold("cpp-21.0.0/generated_datetime.arrow_file")
    assert main(["head", "-n", "2", str(path), "--format", "jsonl"]) == 0
    rows = _jsonl(capsys)
    assert rows[1]["f9"] == "2262-04-11T23:47:16.854775807"
    assert rows[0]["f11"] == "0001-01-01T00:00:00Z"  # a timestamp with a time zone
    assert rows[0]["f2"] == "08:05:31"  # time32[s]


def test_times_of_day_keep_every_digit_of_their_unit(tmp_path: Path, capsys) -> None:
    # time64[ns] went through datetime.time, which keeps microseconds: 1 ns was "00:00:00"
    import quiver as qv

    batch = qv.record_batch({
        "ns": qv.array([1, 86_399_999_999_999, None], qv.time64("ns")),
        "us": qv.array([1, 86_399_999_999, None], qv.time64("us")),
        "ms": qv.array([1, 86_399_999, None], qv.time32("ms")),
        "s": qv.array([1, 86_399, None], qv.time32("s")),
    })
    path = tmp_path / "times.arrow"
    path.write_bytes(write_ipc([batch], stream=False))
    assert main(["cat", str(path), "--format", "jsonl"]) == 0
    assert _jsonl(capsys) == [
        {"ns": "00:00:00.000000001", "us": "00:00:00.000001", "ms": "00:00:00.001",
         "s": "00:00:01"},
        {"ns": "23:59:59.999999999", "us": "23:59:59.999999", "ms": "23:59:59.999",
         "s": "23:59:59"},
        {"ns": None, "us": None, "ms": None, "s": None},
    ]


def test_json_values_are_always_valid_json() -> None:
    import decimal

    assert to_json({"x": float("nan"), "y": [float("-inf")]}) == '{"x":"NaN","y":["-Infinity"]}'
    assert to_json(decimal.Decimal("1.50")) == '"1.50"'
    assert to_json(b"\x00\xff") == '"00ff"'
    assert cell_text(None) == "" and cell_text(True) == "true"
    assert cell_text({"a": [1, None]}) == '{"a":[1,null]}'


def test_table_is_sized_to_the_width_and_cuts_long_values(tmp_path: Path, monkeypatch,
                                                          capsys) -> None:
    import quiver as qv

    batch = qv.record_batch({
        "short": qv.array([1, 2]),
        "long": qv.array(["x" * 200, "y"]),
        **{f"col{i}": qv.array([i, i]) for i in range(30)},
    })
    p = tmp_path / "wide.arrow"
    p.write_bytes(write_ipc([batch], stream=False))
    monkeypatch.setenv("COLUMNS", "60")
    assert main(["cat", str(p), "--format", "table", "--width", "10"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert all(len(line) <= 60 for line in lines)
    assert "xxxxxxxxx…" in out and "x" * 11 not in out
    assert "more columns: " in out and "col29" in out
    assert "short" in lines[1] and "int64" in lines[2]


def test_table_is_the_default_on_a_terminal_and_jsonl_in_a_pipe(sample_file: Path,
                                                               monkeypatch, capsys) -> None:
    assert main(["head", "-n", "1", str(sample_file)]) == 0
    assert capsys.readouterr().out.startswith('{"id":0')
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    assert main(["head", "-n", "1", str(sample_file)]) == 0
    out = re.sub(r"\x1b\[[0-9;]*m", "", capsys.readouterr().out)  # colours on a terminal
    assert "┃ id" in out and "│ 0 " in out


def test_a_file_without_footer_is_read_through_its_stream_with_a_warning(
    tmp_path: Path, capsys
) -> None:
    data = write_ipc(batches_of(3), stream=False)
    from quiver.ipc.index import scan_messages

    last = list(scan_messages(data))[-1]
    p = tmp_path / "nofooter.arrow"
    p.write_bytes(data[: last.end + 8])  # the stream part with its EOS, no footer
    assert main(["cat", str(p), "--format", "jsonl"]) == 1
    captured = capsys.readouterr()
    assert [json.loads(line)["id"] for line in captured.out.splitlines()] == list(range(30))
    assert captured.err.startswith(f"quiver: {p}: the footer cannot be read (expected the "
                                   "file magic")
    assert "quiver recover IN OUT writes a valid file" in captured.err
    # convert stays strict: it names recover instead of writing from a damaged input
    assert main(["convert", str(p), str(tmp_path / "o.arrow")]) == 1
    assert "quiver recover IN OUT saves every complete record batch" in capsys.readouterr().err


@pytest.mark.parametrize("dictionary", [False, True])
def test_file_read_errors_use_the_message_index_inspect_shows(tmp_path: Path, capsys,
                                                             dictionary: bool) -> None:
    from quiver.ipc.index import scan_messages

    pa = pytest.importorskip("pyarrow")
    columns = {"a": pa.array([1, 2, 3, 4], pa.int64())}
    if dictionary:
        columns["d"] = pa.array(["x", "y", "x", "y"]).dictionary_encode()
    batches = [pa.record_batch(columns)] * 2
    data = bytearray(pa_write(batches, stream=False, compression="lz4"))
    msgs = list(scan_messages(bytes(data), start=8))
    first = next(m for m in msgs if m.kind == "record_batch")
    body = data.find(b"\x04\x22\x4d\x18", first.body_offset)  # its first lz4 frame
    data[body + 4] ^= 0xFF  # the frame descriptor
    src = tmp_path / "bad.arrow"
    src.write_bytes(bytes(data))
    assert main(["cat", str(src)]) == 1
    err = capsys.readouterr().err
    assert f"message {first.index}" in err, err
    main(["validate", "--json", str(src)])
    found = json.loads(capsys.readouterr().out)["findings"]
    assert found[0]["message_index"] == first.index


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "table"])
def test_cat_names_where_a_bad_value_is(tmp_path: Path, capsys, fmt: str) -> None:
    pa = pytest.importorskip("pyarrow")
    batch = pa.record_batch({"x": pa.array([1, 2], pa.int64()),
                             "s": pa.array(["hello", "world"])})
    data = bytearray(pa_write([batch, batch], stream=True))
    data[data.rfind(b"hello")] = 0xFF  # in the second batch: message 2
    src = tmp_path / "bad.arrows"
    src.write_bytes(bytes(data))
    assert main(["cat", "--format", fmt, str(src)]) == 1
    err = capsys.readouterr().err
    assert "message 2" in err and "'s'" in err and "UTF-8" in err, err


def test_cat_names_where_a_bad_dictionary_index_is(tmp_path: Path, capsys) -> None:
    pa = pytest.importorskip("pyarrow")
    d = pa.DictionaryArray.from_arrays(pa.array([0, 1, 2], pa.int8()), pa.array(["p", "q", "r"]))
    batch = pa.record_batch({"d": d})
    data = bytearray(pa_write([batch], stream=True, compression=None))
    from quiver.ipc.index import scan_messages

    rb = next(m for m in scan_messages(bytes(data)) if m.kind == "record_batch")
    at = data.find(b"\x00\x01\x02", rb.body_offset)
    data[at + 2] = 100
    src = tmp_path / "bad.arrows"
    src.write_bytes(bytes(data))
    assert main(["head", str(src)]) == 1
    err = capsys.readouterr().err
    assert f"message {rb.index}" in err and "'d'" in err and "below 3" in err, err


def test_csv_quotes_carriage_returns_newlines_quotes_and_commas(tmp_path: Path,
                                                                capsys) -> None:
    pa = pytest.importorskip("pyarrow")
    pa_csv = pytest.importorskip("pyarrow.csv")
    texts = ["a\rb", "c\nd", "e\r\nf", 'g"h', "i,j", "plain", "\r", "k;l"]
    table = pa.table({"t\rx": texts, "n": list(range(len(texts)))})
    path = tmp_path / "t.arrows"
    path.write_bytes(pa_write(table.to_batches(), stream=True))
    assert main(["cat", str(path), "--format", "csv"]) == 0
    out = capsys.readouterr().out
    rows = list(csv.reader(io.StringIO(out, newline="")))
    assert rows == [["t\rx", "n"]] + [[s, str(i)] for i, s in enumerate(texts)]
    back = pa_csv.read_csv(io.BytesIO(out.encode()),
                           read_options=pa_csv.ReadOptions(use_threads=False))
    assert back.column_names == ["t\rx", "n"]
    assert back.column(0).to_pylist() == texts


@pytest.mark.parametrize("others", [
    ["x", "y", "z", "w", "v"],  # no field needs quotes
    ["a,b", 'q"', "n\nl", "c\rr", ""],  # fields that need quotes beside them
])
def test_csv_tells_null_from_empty_as_pyarrow_writes_them(tmp_path: Path, capsys,
                                                          others: list[str]) -> None:
    # pyarrow.csv.write_csv writes an empty string as "" and a null as nothing
    pa = pytest.importorskip("pyarrow")
    pa_csv = pytest.importorskip("pyarrow.csv")
    table = pa.table({
        "s": pa.array(["", None, "a", "", None]),
        "ls": pa.array([None, "", "", "b", None], pa.large_string()),
        "b": pa.array([b"", None, b"\x01", None, b""]),
        "o": pa.array(others),
    })
    path = tmp_path / "t.arrows"
    path.write_bytes(pa_write(table.to_batches(), stream=True))
    assert main(["cat", str(path), "--format", "csv"]) == 0
    out = capsys.readouterr().out
    convert = pa_csv.ConvertOptions(
        strings_can_be_null=True, quoted_strings_can_be_null=False,
        column_types={name: pa.string() for name in table.column_names})
    back = pa_csv.read_csv(io.BytesIO(out.encode()), convert_options=convert)
    assert back.column("s").to_pylist() == table.column("s").to_pylist()
    assert back.column("ls").to_pylist() == table.column("ls").to_pylist()
    assert back.column("b").to_pylist() == [  # binary as hex: b"" is ""
        None if v is None else v.hex() for v in table.column("b").to_pylist()]
    assert back.column("o").to_pylist() == others
    # pyarrow's own CSV of the same strings reads back the same way
    sink = io.BytesIO()
    pa_csv.write_csv(table.select(["s", "ls", "o"]), sink)
    theirs = pa_csv.read_csv(io.BytesIO(sink.getvalue()), convert_options=convert)
    assert back.select(["s", "ls", "o"]).equals(theirs)
