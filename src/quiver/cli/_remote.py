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

from ..fs.ranged import RangeCache, RangedObject, SequentialReader
from ..fs.upload import Upload
from ..fs.url import redact
from ..ipc.index import detect_format
from ._common import _SNIFF, CliError, Input, describe_non_arrow

#: bytes fetched at the start and the end of a file before the command reads it
HEAD, TAIL = 64, 64 << 10
#: bytes fetched ahead when a command reads a block that has not been fetched
READ_AHEAD = 16 << 20


class RemoteBytes:
    """A file's bytes as the commands slice them (``data[a:b]``, ``len(data)``), fetched
    by ranges on demand with read-ahead; slices are read-only memoryviews."""

    def __init__(self, obj: RangedObject) -> None:
        self._obj = obj
        self._size = obj.size
        self._cache = RangeCache(obj)
        self._tail = (max(0, self._size - TAIL), self._size)
        self._cache.prefetch([(0, min(self._size, HEAD)), self._tail])

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, where: slice) -> memoryview:
        if not isinstance(where, slice):
            raise TypeError("RemoteBytes takes slices")
        start, stop, step = where.indices(self._size)
        if step != 1:
            raise TypeError("RemoteBytes takes contiguous slices")
        if stop <= start:
            return memoryview(b"")
        if not self._cache.has(start, stop):
            ahead = (start, min(self._size, max(stop, start + READ_AHEAD)))
            self._cache.keep_only([ahead, self._tail])
            self._cache.prefetch([ahead])
        return self._cache.view(start, stop - start)


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
        return Input(shown, fmt, RemoteBytes(obj))  # type: ignore[arg-type]
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


__all__ = ["RemoteBytes", "open_url_input", "url_output"]
