"""Finding messages again in damaged files, for ``quiver recover`` and ``quiver validate``:
the 8-byte aligned continuation markers, and the first offset after a point where a whole
message frames and decodes.  Kept apart from :mod:`quiver.cli._read` so that the commands
that only read (``schema``, ``cat``) do not import numpy for it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import errors as E
from ..ipc.index import scan_messages


def continuation_markers(data: Any) -> np.ndarray:
    """Absolute offsets of every 8-byte aligned continuation marker (0xFFFFFFFF) in
    ``data``: where messages written by any current writer may start."""
    count = len(data) // 8
    if count <= 0:
        return np.zeros(0, dtype=np.int64)
    words = np.frombuffer(data, dtype="<u4", count=count * 2)[::2]
    return np.flatnonzero(words == 0xFFFFFFFF).astype(np.int64) * 8


def resync(data: Any, after: int, end: int, markers: np.ndarray,
           hints: Sequence[int] = ()) -> int | None:
    """The offset of the first message after ``after`` that frames and decodes whole
    (trying the ``hints``, e.g. footer Block offsets, first), or None."""
    candidates = [o for o in hints if after < o < end]
    candidates += markers[(markers > after) & (markers < end)].tolist()
    read_at = lambda o, n: data[o : o + n]  # noqa: E731
    for offset in candidates:
        try:
            info = next(scan_messages(read_at, end, start=offset), None)
        except E.ArrowError:
            continue
        if info is not None and info.kind in ("record_batch", "dictionary", "schema"):
            return offset
    return None
