"""The commands' inputs and outputs at URLs (``s3://...``, any fsspec filesystem), with
``--storage-option KEY=VALUE``.

An input a command reads whole (``inspect``, ``validate``, ``recover``) is fetched whole,
by concurrent ranged GETs.  A file the others read (``schema``, ``cat``, ``head``,
``convert``) is read by ranges as the command asks: its head and tail first, then each
block with read-ahead, so that ``quiver schema`` of a large file fetches its footer, not
its batches.  A stream is read sequentially in large blocks.  An output is an upload that
appears only when the command succeeds (as a local output's temporary file is renamed
into place only then).  URLs are shown without credentials.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

from ..fs.ranged import RangedObject, ReadAheadBytes, SequentialReader
from ..fs.upload import Upload
from ..fs.url import redact
from ..ipc.index import detect_format

#: bytes read from the start: the format, or what a non-Arrow object looks like
SNIFF = 512


def open_url(url: str, *, whole: bool, storage_options: Mapping[str, Any] | None
             ) -> tuple[str, str | None, Any, Any, bytes]:
    """``(name shown, format or None, data, stream, first bytes)`` of ``url``: its format
    told by its bytes; ``data`` all of it (``whole``), or a file's bytes read by ranges;
    ``stream`` a stream's sequential reader."""
    shown = redact(url)
    obj = RangedObject(url, storage_options)
    size = obj.size
    head = bytes(obj.get(0, min(size, SNIFF))) if size else b""
    fmt = detect_format(head[:8])
    if fmt is None:
        return shown, None, None, None, head
    if whole:
        return shown, fmt, obj.fetch([(0, size)])[0][2], None, head
    if fmt == "file":
        return shown, fmt, ReadAheadBytes(obj), None, head
    return shown, fmt, None, SequentialReader(obj), head


@contextlib.contextmanager
def url_output(url: str, storage_options: Mapping[str, Any] | None) -> Iterator[Any]:
    """An upload to ``url`` that completes when the block ends normally and is aborted
    otherwise (no half object appears)."""
    upload = Upload(url, storage_options)
    try:
        yield upload
    except BaseException:
        upload.discard()
        raise
    upload.commit()


__all__ = ["SNIFF", "open_url", "url_output"]
