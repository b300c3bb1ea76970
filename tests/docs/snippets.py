"""The code blocks of README.md, docs/*.md and benchmarks/RESULTS.md, and how to run them
(so the docs cannot rot).

A fenced block's info string says what it is: ```` ```python ```` runs in the docs test,
```` ```python spark ```` in a Spark test with ``spark`` bound to the test session, a block
whose first line starts with ``>>>`` as a doctest, ```` ```sh ```` through bash with
``quiver`` meaning this checkout's command.  ```` ```sh no-test ```` (and the other tags
after ``no-test``) marks a block that cannot run inside the test suite (``make test``
itself, a server that runs until stopped); each one names a test that covers it instead.
Every other language (``text``, tables) is not code.  The blocks of one document run in
order, in one namespace and one temporary directory holding :func:`make_inputs`' files.
"""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")),
        ROOT / "benchmarks" / "RESULTS.md"]
RUN = {"python", "sh"}
FENCE = re.compile(r"^```([A-Za-z]*)([^\n]*)\n(.*?)^```[ \t]*$", re.M | re.S)


@dataclass(frozen=True)
class Block:
    """One fenced code block: its file, first line, language, tags and text."""

    path: Path
    line: int
    lang: str
    tags: tuple[str, ...]
    code: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    @property
    def runs(self) -> bool:
        return self.lang in RUN and "no-test" not in self.tags

    @property
    def spark(self) -> bool:
        return "spark" in self.tags


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown file, in order."""
    text = path.read_text(encoding="utf-8")
    return [Block(path, text.count("\n", 0, m.start()) + 2, m.group(1),
                  tuple(m.group(2).split()), m.group(3))
            for m in FENCE.finditer(text)]


def make_inputs(where: Path) -> None:
    """The files the shell blocks name: ``data.arrow`` (a file of 4 batches with footer
    statistics), ``data.arrows`` (the same as a stream), ``broken.arrow`` (the file cut
    inside its last batch)."""
    import quiver as qv
    import quiver.ipc as ipc

    batches = [qv.record_batch({"id": qv.array(list(range(k * 5, k * 5 + 5))),
                                "name": qv.array(["a", None, "c", "d", "e"])})
               for k in range(4)]
    with ipc.new_file(where / "data.arrow", batches[0].schema, statistics=True) as w:
        for b in batches:
            w.write_batch(b)
    with ipc.new_stream(where / "data.arrows", batches[0].schema) as w:
        for b in batches:
            w.write_batch(b)
    with ipc.new_file(where / "whole.arrow", batches[0].schema) as w:
        for b in batches:
            w.write_batch(b)
    whole = (where / "whole.arrow").read_bytes()
    last = ipc.open_file(where / "whole.arrow").footer.record_batches[-1]
    (where / "broken.arrow").write_bytes(whole[: last.offset + last.meta_data_length + 8])
    (where / "whole.arrow").unlink()


def run_python(block: Block, namespace: dict) -> None:
    """Run a python block in ``namespace``: as a doctest when it starts with ``>>>``
    (failing on any differing output), else as a script (failing on any exception)."""
    if block.code.lstrip().startswith(">>>"):
        test = doctest.DocTestParser().get_doctest(block.code, namespace, block.where,
                                                    str(block.path), block.line - 1)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        runner.run(test, clear_globs=False)
        if runner.failures:
            raise AssertionError(f"{block.where}: {runner.failures} doctest example(s) failed")
        return
    exec(compile(block.code, block.where, "exec"), namespace)


def run_shell(block: Block, cwd: Path) -> None:
    """Run a sh block with bash (``set -eo pipefail``), ``quiver`` being
    ``python -m quiver`` of this checkout; fail on a non-zero exit status."""
    prelude = ('set -eo pipefail\nquiver() { "$QUIVER_PYTHON" -m quiver "$@"; }\n')
    env = dict(os.environ, QUIVER_PYTHON=sys.executable,
               PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT)]))
    done = subprocess.run(["bash", "-c", prelude + block.code], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)
    if done.returncode:
        raise AssertionError(f"{block.where}: exit status {done.returncode}\n"
                             f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}")


def run_document(path: Path, cwd: Path, spark: object | None = None) -> int:
    """Run the blocks of one document in order in ``cwd`` (the current directory for
    the while): the Spark blocks when ``spark`` is given, else the others.  Returns how
    many ran."""
    namespace: dict = {"__name__": "__docs__"}
    if spark is not None:
        namespace["spark"] = spark
    make_inputs(cwd)
    ran = 0
    before = Path.cwd()
    os.chdir(cwd)
    try:
        for block in blocks(path):
            if not block.runs or block.spark != (spark is not None):
                continue
            if block.lang == "sh":
                run_shell(block, cwd)
            else:
                run_python(block, namespace)
            ran += 1
    finally:
        os.chdir(before)
    return ran
