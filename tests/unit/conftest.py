"""Fixtures shared by several unit-test files (the IPC reader and compression tests)."""

from __future__ import annotations

import numpy as np
import pytest

from quiver.ipc import compression as c
from quiver.ipc import file_decoder, reader


@pytest.fixture
def deferred(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """Defer bodies from 1 KiB, and record every deferred read as (offset, bytes)."""
    monkeypatch.setattr(file_decoder, "_DEFERRED_BODY", 1024)
    monkeypatch.setattr(file_decoder, "_DEFERRED_BUFFER", 0)
    reads: list[tuple[int, int]] = []
    real = reader._RandomAccess.read_into

    def spy(self: reader._RandomAccess, offset: int, out: np.ndarray) -> None:
        reads.append((offset, out.nbytes))
        real(self, offset, out)

    monkeypatch.setattr(reader._RandomAccess, "read_into", spy)
    return reads


@pytest.fixture
def in_pieces(monkeypatch):
    """Force the piecewise decoders on small buffers (pieces of 64 output / 16 input bytes)."""
    monkeypatch.setattr(c.codecs, "ONE_SHOT_MAX", 0)
    monkeypatch.setattr(c.codecs, "DECOMPRESS_CHUNK", 64)
    monkeypatch.setattr(c.codecs, "LZ4_INPUT_CHUNK", 16)


@pytest.fixture(params=["by ratio", "always"])
def walk(request, monkeypatch) -> str:
    """Run a test as configured, and again with the walk taking every linked frame."""
    if request.param == "always":
        monkeypatch.setattr(c.lz4frame, "LZ4_LINKED_COMPRESSED_RATIO", float("inf"))
    return request.param
