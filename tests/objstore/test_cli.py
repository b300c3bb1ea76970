"""Every command on s3:// URLs, with ``--storage-option KEY=VALUE``: the output is the one
the same command gives for a local copy (names aside), outputs appear only on success,
and no message shows a secret."""

from __future__ import annotations

import json
from pathlib import Path

import fsspec
import pytest

import quiver.ipc as ipc
from quiver.cli import main
from tests.cli.conftest import batches_of, write_ipc

from .conftest import SECRET


def _options(s3) -> list[str]:
    out = []
    for key, value in (("key", s3.options["key"]), ("secret", SECRET),
                       ("endpoint_url", s3.endpoint),
                       ("client_kwargs.region_name", "us-east-1")):
        out += ["--storage-option", f"{key}={value}"]
    return out


def _run(capsys, args: list[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def inputs(s3, tmp_path) -> dict[str, tuple[str, Path]]:
    """A file and a stream, each at a URL and as a local copy."""
    found = {}
    for fmt, stream in (("file", False), ("stream", True)):
        data = write_ipc(batches_of(6, rows=50), stream=stream, compression="zstd")
        url = s3.url(f"in.{fmt}")
        s3.fs().pipe_file(url, data)
        local = tmp_path / f"in.{fmt}"
        local.write_bytes(data)
        found[fmt] = (url, local)
    return found


@pytest.mark.parametrize("fmt", ["file", "stream"])
@pytest.mark.parametrize("command", [
    ["schema"], ["schema", "--json"], ["inspect"], ["inspect", "--json", "--buffers"],
    ["cat", "--format", "jsonl"], ["head", "-n", "3"], ["cat", "--columns", "id,name"],
    ["validate", "--level", "full"],
])
def test_read_commands_match_a_local_copy(s3, inputs, capsys, fmt, command):
    url, local = inputs[fmt]
    code_l, out_l, _err_l = _run(capsys, [*command, str(local)])
    code_r, out_r, err_r = _run(capsys, [*command, url, *_options(s3)])
    assert code_r == code_l == 0, err_r
    assert out_r.replace(url, "X") == out_l.replace(str(local), "X")
    assert SECRET not in out_r + err_r


@pytest.mark.parametrize("fmt", ["file", "stream"])
@pytest.mark.parametrize("command", [["convert", "--to", "file"], ["convert", "--to", "stream"],
                                     ["file-to-stream"], ["stream-to-file"], ["recover"]])
def test_write_commands_both_ways(s3, inputs, tmp_path, capsys, fmt, command):
    url, local = inputs[fmt]
    if command[0] in ("file-to-stream", "stream-to-file") and (
            (command[0] == "file-to-stream") != (fmt == "file")):
        pytest.skip("the other direction")
    expected = ipc.read_table(str(local))
    # URL in, URL out
    out_url = s3.url("out.arrow")
    code, _, err = _run(capsys, [*command, url, out_url, *_options(s3)])
    assert code == 0, err
    assert ipc.read_table(out_url, storage_options=s3.options).equals(expected)
    # URL in, local out; local in, URL out
    out_local = tmp_path / f"out-{fmt}.arrow"
    code, _, err = _run(capsys, [*command, url, str(out_local), *_options(s3)])
    assert code == 0, err
    assert ipc.read_table(str(out_local)).equals(expected)
    out_url2 = s3.url("out2.arrow")
    code, _, err = _run(capsys, [*command, str(local), out_url2, *_options(s3)])
    assert code == 0, err
    assert ipc.read_table(out_url2, storage_options=s3.options).equals(expected)
    assert SECRET not in err


def test_schema_of_a_large_file_fetches_the_footer_not_the_batches(s3, capsys):
    data = write_ipc(batches_of(40, rows=20_000), stream=False)
    url = s3.url("big.arrow")
    s3.fs().pipe_file(url, data)
    s3.reset_counts()
    code, out, err = _run(capsys, ["schema", url, *_options(s3)])
    assert code == 0, err
    assert "id" in out
    assert s3.counts()["bytes"] < (128 << 10) < len(data)


def test_a_failed_convert_leaves_no_object(s3, tmp_path, capsys):
    bad = tmp_path / "bad.arrow"
    data = write_ipc(batches_of(3), stream=False)
    bad.write_bytes(data[: len(data) // 2] + b"\0" * 8 + data[len(data) // 2 + 8:])
    out_url = s3.url("never.arrow")
    code, _, err = _run(capsys, ["convert", str(bad), out_url, *_options(s3)])
    assert code == 1, err
    s3.fs().invalidate_cache()
    assert not s3.fs().exists(out_url)


def test_errors_name_the_url_without_secrets(s3, capsys):
    url = s3.url("missing.arrow")
    code, out, err = _run(capsys, ["inspect", url, *_options(s3)])
    assert code == 1
    assert url in err and "no such bucket or key" in err and SECRET not in err
    assert out == ""
    assert err.count("\n") == 1
    shown = url.replace("s3://", f"s3://someone:{SECRET}@")
    code, _out, err = _run(capsys, ["schema", shown, *_options(s3)])
    assert code == 1 and SECRET not in err


def test_not_arrow_at_a_url_is_named(s3, capsys):
    url = s3.url("data.parquet")
    s3.fs().pipe_file(url, b"PAR1\x15\x04\x15" + b"\0" * 100)
    code, _, err = _run(capsys, ["cat", url, *_options(s3)])
    assert code == 1 and "Parquet" in err


def test_environment_credentials_and_endpoint(s3, inputs, capsys, monkeypatch):
    url, _local = inputs["file"]
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", s3.options["key"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3.endpoint)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    code, out, err = _run(capsys, ["schema", "--json", url])
    assert code == 0, err
    assert json.loads(out)["fields"][0]["name"] == "id"


# -- credentials typed into URLs never come back out -----------------------------------------

TOKEN = "tok-Vq93xLm"  # a made-up query token the tests look for


def _memory(tmp_path, name: str, data: bytes | None = None) -> tuple[str, str]:
    """``(URL with credentials and a token, the same without them)`` in fsspec's
    in-process memory filesystem; ``data`` is put there first."""
    fs = fsspec.filesystem("memory")
    where = f"quiver-tests/{tmp_path.name}/{name}"
    url = f"memory://KEY:{SECRET}@{where}?token={TOKEN}"
    if data is not None:
        fs.pipe_file(url[len("memory://"):], data)
    return url, f"memory://***@{where}?token=***"


def _clean(text: str) -> None:
    assert SECRET not in text and TOKEN not in text, text


def test_convert_summary_shows_urls_without_credentials(tmp_path, capsys):
    src, _ = _memory(tmp_path, "in.arrows", write_ipc(batches_of(2), stream=True))
    out, shown_out = _memory(tmp_path, "out.arrow")
    code, stdout, err = _run(capsys, ["convert", src, out, "--storage-option",
                                      f"secret_thing={SECRET}"])
    assert code == 0, err
    _clean(stdout + err)
    assert f"to {shown_out}" in err
    assert ipc.read_table(out).num_rows == 2 * 10


@pytest.mark.parametrize("as_json", [False, True])
def test_recover_summary_and_report_show_urls_without_credentials(tmp_path, capsys, as_json):
    data = write_ipc(batches_of(3), stream=True)
    src, shown_src = _memory(tmp_path, "damaged.arrows", data[: len(data) - 40])
    out, shown_out = _memory(tmp_path, "saved.arrows")
    code, stdout, err = _run(capsys, ["recover", src, out, *(["--json"] if as_json else [])])
    assert code == 1, err  # the last batch was lost
    _clean(stdout + err)
    if as_json:
        report = json.loads(stdout)
        assert (report["input"], report["output"]) == (shown_src, shown_out)
    else:
        assert f"quiver: {shown_src}: recovered 2 record batches" in err
        assert f"into {shown_out}" in err


@pytest.mark.parametrize("command", [["inspect"], ["inspect", "--json"], ["validate"],
                                     ["validate", "--json"], ["cat"], ["schema"]])
def test_read_commands_name_urls_without_credentials(tmp_path, capsys, command):
    good, shown = _memory(tmp_path, "ok.arrow", write_ipc(batches_of(1), stream=False))
    code, stdout, err = _run(capsys, [*command, good])
    assert code == 0, err
    _clean(stdout + err)
    if command[0] != "cat":
        assert shown in stdout
    # errors: a missing object, and an object that is not Arrow
    missing, shown_missing = _memory(tmp_path, "missing.arrow")
    code, stdout, err = _run(capsys, [*command, missing])
    assert code == 1 and stdout == ""
    _clean(err)
    assert shown_missing in err
    parquet, shown_parquet = _memory(tmp_path, "x.parquet", b"PAR1" + b"\0" * 64)
    code, stdout, err = _run(capsys, [*command, parquet])
    assert code == 1 and "Parquet" in err
    _clean(stdout + err)
    assert shown_parquet in err


def test_an_error_quoting_a_url_or_a_storage_option_is_redacted(capsys, monkeypatch):
    from quiver.cli import _common

    def failing(name, whole=False):
        raise OSError(f"could not reach memory://KEY:{SECRET}@b/k?sig={TOKEN} "
                      f"with secret {SECRET}")

    monkeypatch.setattr(_common, "open_input", failing)
    monkeypatch.setattr("quiver.cli.cat.open_input", failing)
    code, _, err = _run(capsys, ["cat", "memory://b/k", "--storage-option",
                                      f"secret={SECRET}"])
    assert code == 1
    _clean(err)
    assert "memory://***@b/k?sig=***" in err and "with secret ***" in err
