"""The ```` ```python spark ```` blocks of README.md and docs/*.md run on the test session."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.docs.snippets import DOCS, ROOT, blocks, run_document

pytestmark = pytest.mark.xdist_group("spark")

SPARK_DOCS = [str(p.relative_to(ROOT)) for p in DOCS
              if any(b.runs and b.spark for b in blocks(p))]


@pytest.mark.parametrize("name", SPARK_DOCS)
def test_spark_blocks_run(name: str, spark, tmp_path: Path, monkeypatch) -> None:
    """Each document's Spark blocks run in order; their ``tempfile.mkdtemp()`` directories
    are made under the test's own, and nothing is left in the checkout (Spark resolves
    relative paths against its workers' directory, which is not the test's)."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    before = set(ROOT.iterdir())
    path = ROOT / name
    wanted = [b for b in blocks(path) if b.runs and b.spark]
    assert run_document(path, tmp_path, spark) == len(wanted)
    assert set(ROOT.iterdir()) == before
