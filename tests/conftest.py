"""Shared fixtures: where ../shared lives, and a clear skip when it is missing."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
GOLD = SHARED / "gold"
ARROW_TESTING = GOLD / "arrow-testing"
SUPPLEMENT = GOLD / "supplement"
INTEGRATION = ARROW_TESTING / "arrow-ipc-stream" / "integration"


def require_shared(path: Path) -> Path:
    """Return ``path`` or skip the test, naming what is missing."""
    if not path.exists():
        pytest.skip(f"shared test material missing: {path} (expected ../shared beside the repo)")
    return path


@pytest.fixture
def gold_dir() -> Path:
    """The arrow-testing gold folder (skips when absent)."""
    return require_shared(ARROW_TESTING)


@pytest.fixture
def supplement_dir() -> Path:
    """The supplement gold folder (skips when absent)."""
    return require_shared(SUPPLEMENT)
