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
from ._common import _SNIFF, CliError, Input, describe_non_arrow


def open_url_input(url: str, *, whole: bool,
                   storage_options: Mapping[str, Any] | None) -> Input:
    """The :class:`~quiver.cli._common.Input` of ``url``: its format told by its bytes."""
    shown = redact(url)
    obj = RangedObject(url, storage_options)
    size = obj.size
    head = bytes(obj.get(0, min(size, 8))) if size else b""
    fmt = detect_format(head)
    if fmt is None:
        sniff = bytes(obj.get(0, min(size, _SNIFF))) if size else b""
        raise CliError(describe_non_arrow(sniff), subject=shown)
    if whole:
        data = obj.fetch([(0, size)])[0][2]
        return Input(shown, fmt, data)
    if fmt == "file":
        return Input(shown, fmt, ReadAheadBytes(obj))  # type: ignore[arg-type]
    return Input(shown, fmt, None, SequentialReader(obj))


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


__all__ = ["open_url_input", "url_output"]
