"""Seed inputs for the fuzzer: valid gold files, small enough to mutate quickly."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import INTEGRATION, SUPPLEMENT

MAX_SEED_BYTES = 64 * 1024


def seed_files() -> list[Path]:
    """Valid IPC streams and files from the gold folders (under MAX_SEED_BYTES)."""
    found: list[Path] = []
    for folder in (INTEGRATION, SUPPLEMENT):
        if not folder.exists():
            continue
        for p in sorted(folder.rglob("*")):
            if p.suffix in (".stream", ".arrow_file") and p.stat().st_size <= MAX_SEED_BYTES:
                found.append(p)
    return found
