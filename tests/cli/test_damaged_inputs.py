"""Every command on damaged inputs: each either works or reports one line and exits 1 —
never a traceback (a traceback would mean a bug in quiver)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from quiver.cli import main

from .conftest import batches_of, dictionary_stream, gold, write_ipc

COMMANDS = [["schema"], ["schema", "--json"], ["inspect", "--buffers"], ["cat"],
            ["validate"], ["recover"], ["convert"]]


def _inputs() -> list[tuple[str, bytes]]:
    out = [("file", write_ipc(batches_of(3), stream=False, compression="lz4")),
           ("stream", write_ipc(batches_of(3), stream=True)),
           ("dictionaries", dictionary_stream([([0, 1], ["a", "b"]), ([1, 0], ["c", "d"])]))]
    for name in ("cpp-21.0.0/generated_nested.arrow_file",
                 "cpp-21.0.0/generated_union.stream",
                 "cpp-21.0.0/generated_binary_view.arrow_file"):
        path = gold(name)
        out.append((name, path.read_bytes()))
    return out


def _mutations(data: bytes, rng: random.Random, count: int) -> list[bytes]:
    out = []
    for _ in range(count):
        bad = bytearray(data)
        kind = rng.randrange(4)
        if kind == 0:  # flip a few bytes
            for _ in range(rng.randint(1, 4)):
                bad[rng.randrange(len(bad))] ^= 1 << rng.randrange(8)
        elif kind == 1:  # cut
            del bad[rng.randrange(len(bad)) :]
        elif kind == 2:  # overwrite a run with one value
            at = rng.randrange(len(bad))
            bad[at : at + rng.randint(1, 16)] = bytes([rng.choice([0, 0xFF, 0x7F])]) * 16
        else:  # a large int32 where a length or offset may be
            at = rng.randrange(max(len(bad) - 4, 1)) & ~3
            bad[at : at + 4] = rng.choice([b"\xff\xff\xff\x7f", b"\x00\x00\x00\x80",
                                          b"\xf8\xff\xff\xff"])
        out.append(bytes(bad))
    return out


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: "-".join(c))
def test_damaged_inputs_give_one_line_or_work(tmp_path: Path, command: list[str],
                                              capsys) -> None:
    rng = random.Random(f"quiver-cli-{command}")
    src = tmp_path / "damaged"
    out = tmp_path / "out.arrow"
    tried = 0
    for _, data in _inputs():
        for bad in _mutations(data, rng, 25):
            src.write_bytes(bad)
            args = [*command, str(src)] + ([str(out)] if command[0] in ("recover", "convert")
                                           else [])
            code = main(args)  # anything but quiver's errors and OSError propagates
            captured = capsys.readouterr()
            assert code in (0, 1), (args, code)
            if code == 1 and command[0] not in ("validate", "recover", "inspect"):
                lines = captured.err.splitlines()
                assert all(line.startswith(f"quiver: {src}: ") for line in lines), lines
                # one line; cat may say first that it reads a file without its footer
                assert len(lines) == 1 or (command == ["cat"] and len(lines) == 2), lines
            tried += 1
    assert tried == 25 * len(_inputs())
