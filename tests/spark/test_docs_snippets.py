"""The ```` ```python spark ```` blocks of README.md and docs/*.md run on the test session."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.snippets import DOCS, ROOT, blocks, run_document

pytestmark = pytest.mark.xdist_group("spark")

SPARK_DOCS = [str(p.relative_to(ROOT)) for p in DOCS
              if any(b.runs and b.spark for b in blocks(p))]


@pytest.mark.parametrize("name", SPARK_DOCS)
def test_spark_blocks_run(name: str, spark, tmp_path: Path) -> None:
    path = ROOT / name
    wanted = [b for b in blocks(path) if b.runs and b.spark]
    assert run_document(path, tmp_path, spark) == len(wanted)
