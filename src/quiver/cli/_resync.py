"""Finding messages again in damaged files, for ``quiver recover`` and ``quiver validate``:
the first offset after a point where a whole message frames and decodes.  Kept apart from
:mod:`quiver.cli._read` so that the commands that only read (``schema``, ``cat``) do not
import numpy for it.

The search looks at the 8-byte aligned slots after the point a window at a time (memory
stays that of a window, whatever the input holds): a slot is a candidate when it holds the
continuation marker 0xFFFFFFFF followed by a metadata length that is positive, within the
metadata limit and within the input; only candidates are decoded."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .. import errors as E
from ..ipc.decoder import DEFAULT_LIMITS
from ..ipc.index import scan_messages

#: 8-byte slots looked at per step (8 MiB of input, 16 MiB of int32 pairs at most)
WINDOW_SLOTS = 1 << 20


def candidates(data: Any, after: int, end: int) -> Iterable[int]:
    """Offsets after ``after`` (8-byte aligned, before ``end``) holding a continuation
    marker and a plausible metadata length, in order, a window at a time."""
    slot = after // 8 + 1
    last = (end - 8) // 8  # the last slot whose 8 bytes lie before ``end``
    limit = DEFAULT_LIMITS.max_metadata_size
    while slot <= last:
        stop = min(slot + WINDOW_SLOTS, last + 1)
        pairs = np.frombuffer(data, dtype="<i4", count=(stop - slot) * 2,
                              offset=slot * 8).reshape(-1, 2)
        room = end - 8 - np.arange(slot, stop, dtype=np.int64) * 8
        lengths = pairs[:, 1].astype(np.int64)
        ok = (pairs[:, 0] == -1) & (lengths > 0) & (lengths <= room) & (lengths <= limit)
        for k in np.flatnonzero(ok).tolist():
            yield (slot + k) * 8
        slot = stop


def resync(data: Any, after: int, end: int, hints: Iterable[int] = ()) -> int | None:
    """The offset of the first message after ``after`` that frames and decodes whole
    (trying the ``hints``, e.g. footer Block offsets, first), or None."""
    read_at = lambda o, n: data[o : o + n]  # noqa: E731

    def decodes(offset: int) -> bool:
        try:
            info = next(scan_messages(read_at, end, start=offset), None)
        except E.ArrowError:
            return False
        return info is not None and info.kind in ("record_batch", "dictionary", "schema")

    for offset in sorted(o for o in hints if after < o < end):
        if decodes(offset):
            return offset
    return next((o for o in candidates(data, after, end) if decodes(o)), None)
