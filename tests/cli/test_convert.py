"""``quiver convert``, ``file-to-stream`` and ``stream-to-file``: round trips checked with
pyarrow, compression kept or changed, columns, batch sizes, pipes, and peak memory on an
input much larger than one batch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import quiver as qv
import quiver.ipc as ipc
from quiver.cli import main
from quiver.ipc.index import scan_messages

from .conftest import batches_of, cli_env, dictionary_stream, gold, run_module, write_ipc

pa = pytest.importorskip("pyarrow")


def _read(path: Path) -> pa.Table:
    data = path.read_bytes()
    if data[:6] == b"ARROW1":
        return pa.ipc.open_file(path).read_all()
    return pa.ipc.open_stream(path).read_all()


def _codecs(path: Path) -> set[str | None]:
    return {m.compression for m in scan_messages(path.read_bytes()) if m.kind == "record_batch"}


@pytest.mark.parametrize("compression", ["lz4", "zstd", "none"])
@pytest.mark.parametrize("to", ["file", "stream"])
@pytest.mark.parametrize("source", ["file", "stream"])
def test_round_trip_equals_the_input_read_by_pyarrow(tmp_path: Path, source: str, to: str,
                                                      compression: str) -> None:
    src = tmp_path / "in"
    src.write_bytes(write_ipc(batches_of(4), stream=source == "stream"))
    out = tmp_path / "out"
    assert main(["convert", str(src), str(out), "--to", to, "--compression", compression,
                 "-q"]) == 0
    assert out.read_bytes()[:6] == b"ARROW1" if to == "file" else True
    assert _read(out).equals(_read(src))
    codec = {"lz4": "lz4_frame", "zstd": "zstd", "none": None}[compression]
    assert _codecs(out) == {codec}


@pytest.mark.parametrize("name", [
    "cpp-21.0.0/generated_nested_dictionary.stream", "cpp-21.0.0/generated_union.arrow_file",
    "cpp-21.0.0/generated_run_end_encoded.stream", "1.0.0-bigendian/generated_primitive.stream",
    "2.0.0-compression/generated_lz4.arrow_file", "cpp-21.0.0/generated_custom_metadata.arrow_file",
])
def test_gold_files_convert_both_ways(tmp_path: Path, name: str) -> None:
    src = gold(name)
    for to in ("file", "stream"):
        out = tmp_path / f"out.{to}"
        assert main(["convert", str(src), str(out), "--to", to, "-q"]) == 0
        assert _read(out).equals(_read(src)), to


def test_file_to_stream_keeps_the_input_compression_unless_told(tmp_path: Path) -> None:
    src = gold("2.0.0-compression/generated_lz4.arrow_file")
    out = tmp_path / "out.arrows"
    assert main(["file-to-stream", str(src), str(out)]) == 0
    assert _codecs(out) == {"lz4_frame"} and _read(out).equals(_read(src))
    assert main(["file-to-stream", "--compression", "none", str(src), str(out)]) == 0
    assert _codecs(out) == {None}
    back = tmp_path / "back.arrow"
    assert main(["stream-to-file", "--compression", "zstd", str(out), str(back)]) == 0
    assert _codecs(back) == {"zstd"} and _read(back).equals(_read(src))


def test_columns_and_batch_size(tmp_path: Path) -> None:
    src = tmp_path / "in.arrow"
    src.write_bytes(write_ipc(batches_of(5, rows=7), stream=False))  # 35 rows in 7s
    out = tmp_path / "out.arrow"
    assert main(["convert", str(src), str(out), "--columns", "tags,id", "--batch-size", "10",
                 "-q"]) == 0
    table = pa.ipc.open_file(out).read_all()
    assert table.column_names == ["tags", "id"]  # in the order asked
    assert [b.num_rows for b in table.to_batches()] == [10, 10, 10, 5]
    assert table.equals(_read(src).select(["tags", "id"]))


def test_output_format_follows_the_output_name(tmp_path: Path, sample_file: Path) -> None:
    for name, magic in (("a.arrows", b"\xff\xff\xff\xff"), ("a.stream", b"\xff\xff\xff\xff"),
                        ("a.arrow", b"ARROW1"), ("a.feather", b"ARROW1")):
        assert main(["convert", str(sample_file), str(tmp_path / name), "-q"]) == 0
        assert (tmp_path / name).read_bytes()[: len(magic)] == magic


def test_footer_metadata_and_schema_metadata_are_kept(tmp_path: Path) -> None:
    src = gold("cpp-21.0.0/generated_custom_metadata.arrow_file")
    out = tmp_path / "out.arrow"
    assert main(["convert", str(src), str(out), "-q"]) == 0
    assert pa.ipc.open_file(out).schema.metadata == pa.ipc.open_file(src).schema.metadata
    table = _read(out)
    assert table.schema.equals(_read(src).schema, check_metadata=True)


def test_a_stream_with_dictionary_replacements_becomes_a_valid_file(tmp_path: Path) -> None:
    src = tmp_path / "r.arrows"
    src.write_bytes(dictionary_stream([([0, 1], ["a", "b"]), ([1, 0], ["c", "d"])]))
    out = tmp_path / "r.arrow"
    assert main(["convert", str(src), str(out), "-q"]) == 0
    assert _read(out).column("d").to_pylist() == ["a", "b", "d", "c"]


def test_summary_line_and_quiet(tmp_path: Path, sample_stream: Path, capsys) -> None:
    out = tmp_path / "o.arrow"
    assert main(["convert", str(sample_stream), str(out), "--compression", "zstd"]) == 0
    assert capsys.readouterr().err == (f"quiver: wrote 5 batches (50 rows) as an IPC file "
                                       f"compressed with zstd to {out}\n")
    assert main(["convert", str(sample_stream), str(out), "-q"]) == 0
    assert capsys.readouterr().err == ""


def test_pipe_in_pipe_out(sample_stream: Path) -> None:
    got = run_module(["convert", "-", "-", "--to", "file", "-q"],
                     stdin=sample_stream.read_bytes())
    assert got.returncode == 0, got.stderr
    assert pa.ipc.open_file(pa.py_buffer(got.stdout)).read_all().equals(_read(sample_stream))
    # and a stream read from a pipe as it comes, chained into another quiver
    first = subprocess.Popen([sys.executable, "-m", "quiver", "convert", str(sample_stream),
                              "-", "--compression", "lz4", "-q"], stdout=subprocess.PIPE,
                             env=cli_env())
    with first.stdout:  # (closed here: the second process has its own copy)
        second = subprocess.run([sys.executable, "-m", "quiver", "cat", "-", "--format",
                                 "csv"], stdin=first.stdout, capture_output=True,
                                env=cli_env(), timeout=120, check=False)
    assert first.wait(timeout=120) == 0 and second.returncode == 0
    assert second.stdout.decode().count("\n") == 51


_MEASURE = """
import sys, tracemalloc
tracemalloc.start()
from quiver.cli import main
# the modules the commands load, loaded first: their code is not what is measured
import concurrent.futures, lz4.frame, zstandard
import quiver.ipc, quiver.ipc.compression, quiver.ipc.reader, quiver.ipc.writer
import quiver.array.concat, quiver.cli._read, quiver.cli.convert, quiver.cli.recover
base = tracemalloc.get_traced_memory()[0]
tracemalloc.reset_peak()
code = main(sys.argv[1:])
print(code, tracemalloc.get_traced_memory()[1] - base)
"""


def _peak(args: list[str], code: str = "0") -> int:
    got = subprocess.run([sys.executable, "-c", _MEASURE, *args], capture_output=True,
                         env=cli_env(), timeout=300, check=False, text=True)
    status, peak = got.stdout.split()
    assert status == code, got.stderr
    return int(peak)


@pytest.mark.slow
def test_peak_memory_is_a_few_batches_on_an_input_of_forty_eight(tmp_path: Path) -> None:
    rows, count = 1 << 16, 48
    words = qv.array([f"value {j % 977}" for j in range(rows)])
    schema = qv.schema([("a", qv.int64()), ("b", qv.float64()), ("s", qv.string())])
    src = tmp_path / "big.arrow"
    with ipc.new_file(str(src), schema) as w:
        for i in range(count):
            a = np.arange(i * rows, (i + 1) * rows, dtype=np.int64)
            w.write_batch(qv.RecordBatch(schema, [qv.array(a), qv.array(a * 0.5), words]))
    size = src.stat().st_size  # about 90 MB
    batch_bytes = size // count  # about 1.9 MB
    zsrc = tmp_path / "big.arrows"
    assert main(["convert", str(src), str(zsrc), "--compression", "zstd", "-q"]) == 0
    cut = tmp_path / "cut.arrows"
    cut.write_bytes(zsrc.read_bytes()[:-1000])
    # (file outputs without statistics here: computing them takes temporary memory of
    # about two batches per batch, checked apart below)
    peaks = {
        "file -> stream": _peak(["convert", str(src), str(tmp_path / "o1.arrows"), "-q"]),
        "zstd stream -> file": _peak(["convert", str(zsrc), str(tmp_path / "o2.arrow"), "-q",
                                      "--no-statistics"]),
        "file -> zstd file": _peak(["convert", str(src), str(tmp_path / "o3.arrow"),
                                    "--compression", "zstd", "-q", "--no-statistics"]),
        "rebatched": _peak(["convert", str(src), str(tmp_path / "o4.arrow"), "--batch-size",
                            str(3 * rows // 2), "-q", "--no-statistics"]),
        # recover writes each batch as it is found (exit 1: the last batch was cut)
        "recover": _peak(["recover", str(cut), str(tmp_path / "o5.arrow"), "-q"], code="1"),
    }
    for what, peak in peaks.items():
        assert peak < 3 * batch_bytes and peak < size // 10, (what, peak, batch_bytes)
    # with statistics the peak is still a few batches, not the input
    with_statistics = _peak(["convert", str(zsrc), str(tmp_path / "o6.arrow"), "-q"])
    assert with_statistics < 5 * batch_bytes and with_statistics < size // 10
    assert _read(tmp_path / "o2.arrow").num_rows == rows * count


@pytest.mark.parametrize("bad", [7, -1])
@pytest.mark.parametrize("to", ["file", "stream"])
def test_convert_reports_dense_union_offsets_past_the_child(tmp_path: Path, capsys,
                                                            bad: int, to: str) -> None:
    import struct

    pa = pytest.importorskip("pyarrow")
    union = pa.UnionArray.from_dense(pa.array([0, 1, 0], pa.int8()),
                                     pa.array([0, 0, 1], pa.int32()),
                                     [pa.array([5, 6], pa.int64()), pa.array(["a"])])
    sink = pa.BufferOutputStream()
    batch = pa.record_batch({"u": union})
    with pa.ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch)
    data = bytearray(sink.getvalue().to_pybytes())
    at = data.find(struct.pack("<iii", 0, 0, 1), list(scan_messages(bytes(data)))[1].body_offset)
    struct.pack_into("<iii", data, at, 0, 0, bad)  # slot 2 -> child 0's value 7 (of 2)
    src, out = tmp_path / "union.arrows", tmp_path / f"out.{to}"
    src.write_bytes(bytes(data))
    code = main(["convert", "-q", "--to", to, str(src), str(out)])
    if to == "stream":  # a stream keeps no statistics: the values are copied as they are
        assert code == 0
        return
    assert code == 1
    err = capsys.readouterr().err
    assert "message 1" in err and "'u'" in err and "dense union offset" in err, err
    assert not out.exists()
