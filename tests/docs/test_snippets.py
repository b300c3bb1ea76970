"""Every code block of README.md and docs/*.md runs (see :mod:`tests.docs.snippets`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .snippets import DOCS, ROOT, Block, blocks, run_document, run_python, run_shell

NAMES = [str(p.relative_to(ROOT)) for p in DOCS]


@pytest.mark.parametrize("name", NAMES)
def test_document_blocks_run(name: str, tmp_path: Path) -> None:
    path = ROOT / name
    wanted = [b for b in blocks(path) if b.runs and not b.spark]
    assert run_document(path, tmp_path) == len(wanted)


def test_every_skipped_block_is_marked() -> None:
    """A code block either runs or says ``no-test``: none is left out by a typo in its
    language, and the ones left out are few."""
    unmarked, skipped = [], []
    for path in DOCS:
        for b in blocks(path):
            if b.lang in ("py", "python3", "bash", "shell", "console", "pycon"):
                unmarked.append(b.where)
            if "no-test" in b.tags:
                skipped.append(b.where)
    assert not unmarked, f"blocks in a language the docs test does not run: {unmarked}"
    assert len(skipped) <= 3, f"too many blocks marked no-test: {skipped}"


def test_a_failing_block_fails(tmp_path: Path) -> None:
    """The runner is not a check that cannot fail: a raising block and a doctest whose
    output differs both raise."""
    raising = Block(ROOT / "README.md", 1, "python", (), "raise ValueError('boom')\n")
    with pytest.raises(ValueError, match="boom"):
        run_python(raising, {})
    wrong = Block(ROOT / "README.md", 1, "python", (), ">>> 1 + 1\n3\n")
    with pytest.raises(AssertionError, match="failed"):
        run_python(wrong, {})


def test_the_docs_have_code() -> None:
    """The documents the issue asks for exist and hold runnable blocks."""
    for name in ("README.md", "docs/python.md", "docs/cli.md", "docs/spark.md",
                 "docs/statistics-format.md"):
        assert any(b.runs for b in blocks(ROOT / name)), name


def test_a_failing_shell_block_fails(tmp_path: Path) -> None:
    """A shell block fails on a failing command, also inside a pipe."""
    for code in ("quiver schema missing.arrow\n", "quiver cat missing.arrow | cat\n"):
        block = Block(ROOT / "README.md", 1, "sh", (), code)
        with pytest.raises(AssertionError, match="exit status 1"):
            run_shell(block, tmp_path)


def test_relative_links_resolve() -> None:
    """Every relative Markdown link of the docs names a file that exists."""
    broken = []
    for path in DOCS:
        for target in re.findall(r"\]\(([^)\s]+)\)", path.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("#"):
                continue
            if not (path.parent / target.split("#")[0]).exists():
                broken.append(f"{path.relative_to(ROOT)}: {target}")
    assert not broken, broken
