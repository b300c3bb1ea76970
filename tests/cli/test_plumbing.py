"""What every command shares: inputs recognised by their bytes, non-Arrow inputs named,
exit codes, one-line errors, standard input and output, closed pipes, progress bars, help."""

from __future__ import annotations

import gc
import gzip
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from quiver.cli import COMMANDS, main
from quiver.cli._common import Progress, describe_non_arrow, progress

from .conftest import cli_env, console_script, run_module


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"PAR1\x15\x04\x15\x10\x15\x14L\x15", "is a Parquet file"),
        (b"FEA1\x00\x00\x00\x00" + b"\x01" * 40, "is a Feather version 1 file"),
        (b"id,name,score\n1,ann,3.5\n2,bob,4\n", "looks like CSV text"),
        (b"", "is empty (0 bytes)"),
        (b'{"schema": {"fields": []}, "batches": []}', "looks like JSON text"),
        # mtime=0: the same bytes (and test id) on every xdist worker
        (gzip.compress(b"ARROW1\x00\x00", mtime=0), "is gzip-compressed"),
        (b"ARROW", "is too short (5 bytes)"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "is not Arrow IPC: expected the file magic"),
    ],
)
@pytest.mark.parametrize("command", ["schema", "inspect", "cat", "validate"])
def test_non_arrow_input_is_named_in_one_line_and_exits_one(
    tmp_path: Path, capsys, content: bytes, words: str, command: str
) -> None:
    p = tmp_path / "input.bin"
    p.write_bytes(content)
    assert main([command, str(p)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"quiver: {p}: ")
    assert words in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_describe_names_csv_with_semicolons_and_plain_text() -> None:
    assert describe_non_arrow(b"a;b;c\n1;2;3\n") == "looks like CSV text, not Arrow IPC"
    assert describe_non_arrow(b"hello there\n") == "looks like text, not Arrow IPC"


def test_missing_file_and_directory_are_one_line_errors(tmp_path: Path, capsys) -> None:
    assert main(["schema", str(tmp_path / "nope.arrow")]) == 1
    err = capsys.readouterr().err
    assert err == f"quiver: {tmp_path / 'nope.arrow'}: No such file or directory\n"
    assert main(["inspect", str(tmp_path)]) == 1
    assert "Is a directory" in capsys.readouterr().err


def test_usage_errors_exit_two(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["cat", "x.arrow", "--format", "yaml"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        main(["no-such-command"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        main(["head", "x.arrow", "-n", "-3"])
    assert exc.value.code == 2
    assert "expected a number >= 0" in capsys.readouterr().err


def test_a_file_where_a_stream_was_expected_and_back_is_handled(
    sample_file: Path, sample_stream: Path, tmp_path: Path
) -> None:
    # stream-to-file given a file, file-to-stream given a stream: both by their bytes
    assert main(["stream-to-file", str(sample_file), str(tmp_path / "a.arrow")]) == 0
    assert main(["file-to-stream", str(sample_stream), str(tmp_path / "b.arrows")]) == 0
    assert (tmp_path / "a.arrow").read_bytes()[:6] == b"ARROW1"
    assert (tmp_path / "b.arrows").read_bytes()[:4] == b"\xff\xff\xff\xff"


def test_every_command_has_help_with_an_example(capsys) -> None:
    for cmd in COMMANDS:
        with pytest.raises(SystemExit) as exc:
            main([cmd.name, "--help"])
        assert exc.value.code == 0
        out = capsys.readouterr().out
        assert f"example: {cmd.example}" in " ".join(out.split())
        assert cmd.example.startswith("quiver ") or "| quiver " in cmd.example


def test_stdin_stream_and_file_subprocess(sample_stream: Path, sample_file: Path) -> None:
    for path in (sample_stream, sample_file):
        out = run_module(["cat", "-", "--format", "jsonl"], stdin=path.read_bytes())
        assert out.returncode == 0, out.stderr
        lines = out.stdout.decode().splitlines()
        assert len(lines) == 50 and lines[0].startswith('{"id":0,')


def test_stdin_non_arrow_is_named_as_stdin() -> None:
    out = run_module(["schema", "-"], stdin=b"PAR1garbage")
    assert out.returncode == 1
    assert out.stderr.decode() == (
        "quiver: <stdin>: is a Parquet file (it starts with PAR1), not Arrow IPC; read it "
        "with a Parquet reader (pyarrow.parquet, duckdb, polars) and write Arrow from there\n"
    )


def test_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    from .conftest import batches_of, write_ipc

    big = tmp_path / "big.arrows"
    big.write_bytes(write_ipc(batches_of(400, rows=500), stream=True))
    cmd = [sys.executable, "-m", "quiver", "cat", str(big), "--format", "csv"]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=cli_env()) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        first = proc.stdout.readline()
        proc.stdout.close()  # what `| head -1` does
        err = proc.stderr.read()
        code = proc.wait(timeout=120)
    assert first == b"id,name,tags\n"
    assert err == b"" and code == 0


def test_quiver_error_in_subprocess_is_one_line_without_traceback(tmp_path: Path) -> None:
    p = tmp_path / "cut.arrow"
    from .conftest import batches_of, write_ipc

    p.write_bytes(write_ipc(batches_of(3), stream=False)[:300])
    out = run_module(["convert", str(p), str(tmp_path / "out.arrow")])
    assert out.returncode == 1
    err = out.stderr.decode()
    assert err.count("\n") == 1 and err.startswith(f"quiver: {p}: expected the file magic")


def test_python_dash_m_and_console_script_run_this_checkout(sample_file: Path) -> None:
    out = run_module(["schema", str(sample_file)])
    assert out.returncode == 0 and b"id: int64" in out.stdout
    script = console_script()
    if script is None:
        pytest.skip("no installed quiver console script beside this interpreter")
    got = subprocess.run([script, "schema", "--json", str(sample_file)], capture_output=True,
                         env=cli_env(), check=False, timeout=120)
    assert got.returncode == 0, got.stderr
    assert b'"name": "id"' in got.stdout
    version = subprocess.run([script, "--version"], capture_output=True, env=cli_env(),
                             check=False, timeout=120)
    assert version.stdout.strip() == b"quiver 0.1.0"


def test_output_to_a_terminal_is_refused(sample_file: Path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(["convert", str(sample_file), "-"]) == 2
    assert "refusing to write binary Arrow data to a terminal" in capsys.readouterr().err


def test_failed_conversion_leaves_no_output_behind(tmp_path: Path) -> None:
    from .conftest import batches_of, write_ipc

    data = write_ipc(batches_of(4), stream=True)
    src = tmp_path / "cut.arrows"
    src.write_bytes(data[: len(data) - 100])  # the last batch is cut
    out = tmp_path / "out.arrow"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        assert main(["convert", str(src), str(out), "-q"]) == 1
        gc.collect()  # (a file left open says so when it is collected)
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [src]
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]


def test_progress_bar_only_on_a_terminal_and_not_when_quiet(monkeypatch) -> None:
    class NS:
        quiet = False

    big = 64 << 20
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    assert not progress(NS(), big, "x").enabled
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert progress(NS(), big, "x").enabled
    assert not progress(NS(), 1000, "x").enabled  # too small to be worth a bar
    quiet = NS()
    quiet.quiet = True
    assert not progress(quiet, big, "x").enabled
    with Progress(big, "x", enabled=True) as bar:  # draws with rich, then goes away
        bar.update(big // 2)
        assert bar._bar is not None
    assert bar._bar is None


def test_no_progress_output_in_a_pipe(sample_file: Path) -> None:
    out = run_module(["validate", str(sample_file)])
    assert out.returncode == 0 and out.stderr == b""


def test_damage_that_recover_gets_past_names_it(tmp_path: Path, capsys) -> None:
    from .conftest import batches_of, write_ipc

    data = write_ipc(batches_of(3), stream=False)
    p = tmp_path / "cut.arrow"
    p.write_bytes(data[:-30])
    for command in (["cat"], ["head"], ["convert"], ["file-to-stream"]):
        args = [*command, str(p)] + ([str(tmp_path / "o")] if command[0] in (
            "convert", "file-to-stream") else [])
        assert main(args) == 1
        err = capsys.readouterr().err
        if command[0] in ("cat", "head"):  # they read the stream inside, and say so
            assert err.rstrip().endswith("(quiver recover IN OUT writes a valid file)")
        else:
            assert err.rstrip().endswith("; quiver recover IN OUT saves every complete "
                                         "record batch")
    assert main(["schema", str(tmp_path / "nothing")]) == 1
    assert "quiver recover" not in capsys.readouterr().err


def test_head_of_a_live_stream_answers_before_the_writer_is_done(sample_stream: Path) -> None:
    data = sample_stream.read_bytes()
    first_two = data[: len(data) // 2]  # the schema and the first batches; no EOS yet
    cmd = [sys.executable, "-m", "quiver", "head", "-n", "3", "-", "--format", "jsonl"]
    with subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=cli_env()) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(first_two)
        proc.stdin.flush()  # the pipe stays open, as a writer still at work would keep it
        code = proc.wait(timeout=60)
        out = proc.stdout.read()
        proc.stdin.close()
    assert code == 0
    assert [line[:8] for line in out.decode().splitlines()] == ['{"id":0,', '{"id":1,',
                                                               '{"id":2,']


@pytest.mark.parametrize("command", [["validate"], ["inspect"], ["schema"]])
def test_other_commands_read_standard_input(sample_file: Path, command: list[str]) -> None:
    out = run_module([*command, "-"], stdin=sample_file.read_bytes())
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(b"<stdin>: ")


def test_unwritable_output_is_named_as_given(sample_file: Path, tmp_path: Path,
                                             capsys) -> None:
    out = tmp_path / "no-such-dir" / "out.arrow"
    assert main(["convert", str(sample_file), str(out)]) == 1
    assert capsys.readouterr().err == f"quiver: {out}: No such file or directory\n"


def test_version(capsys) -> None:
    import quiver

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out == f"quiver {quiver.__version__}\n"


def test_empty_standard_input_is_named() -> None:
    out = run_module(["cat", "-"], stdin=b"")
    assert out.returncode == 1
    assert out.stderr == b"quiver: <stdin>: is empty (0 bytes), not an Arrow IPC file or stream\n"


def _on_a_terminal(args: list[str]) -> bytes:
    """What a command writes to a terminal (stdout and stderr on a pseudo-terminal)."""
    pty = pytest.importorskip("pty")
    import os

    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "quiver", *args], stdout=slave,
                            stderr=slave, stdin=subprocess.DEVNULL, env=cli_env())
    os.close(slave)
    out = b""
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the terminal closed with the process
            break
        if not data:
            break
        out += data
    os.close(master)
    assert proc.wait(timeout=120) == 0
    return out


def test_progress_bar_on_a_terminal_for_long_work(tmp_path: Path) -> None:
    import numpy as np

    import quiver as qv
    import quiver.ipc as ipc

    src = tmp_path / "big.arrow"
    schema = qv.schema([("a", qv.int64())])
    with ipc.new_file(str(src), schema) as w:
        for i in range(12):
            w.write_batch(qv.RecordBatch(schema, [qv.array(np.arange(1 << 17) + i)]))
    assert src.stat().st_size > 8 << 20
    shown = _on_a_terminal(["convert", str(src), str(tmp_path / "o.arrows")])
    assert b"convert" in shown and b"MB" in shown and b"\x1b[" in shown
    quiet = _on_a_terminal(["convert", "-q", str(src), str(tmp_path / "o.arrows")])
    assert quiet == b""


def test_an_output_that_cannot_replace_its_target_leaves_nothing_and_names_the_target(
        tmp_path: Path, capsys) -> None:
    from .conftest import batches_of, write_ipc

    src = tmp_path / "in.arrows"
    src.write_bytes(write_ipc(batches_of(2), stream=True))
    target = tmp_path / "out.arrow"
    target.mkdir()  # a directory: the finished temporary file cannot replace it
    assert main(["convert", str(src), str(target), "-q"]) != 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.arrows", "out.arrow"]
    said = capsys.readouterr().err
    assert "out.arrow" in said and ".tmp" not in said
