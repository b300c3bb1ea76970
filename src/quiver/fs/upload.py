"""Writing one object: the filesystem's file object (a multipart upload on S3), made to
appear whole by :meth:`Upload.commit` or not at all by :meth:`Upload.discard`."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from .. import errors as E
from .errors import retrying, storage_error
from .url import filesystem


class Upload:
    """A write-only sink over the filesystem's file object for ``url`` (a multipart
    upload on S3): ``commit`` makes the object appear, ``discard`` aborts it.  It has no
    ``seek``, so the writers take their plain path (nothing rewritten after the fact)."""

    def __init__(self, url: str, storage_options: Mapping[str, Any] | None = None) -> None:
        self.url = url
        self._options = storage_options
        fs, path = filesystem(url, storage_options)
        self._f = retrying(lambda: fs.open(path, "wb"), url, doing="write",
                           options=storage_options)
        self.written = 0

    def write(self, data: Any) -> int:
        """Write ``data`` (parts are uploaded as the filesystem's buffer fills)."""
        n = memoryview(data).nbytes
        try:
            self._f.write(data)
        except E.ArrowError:
            raise
        except Exception as exc:
            self.discard()
            raise storage_error(exc, self.url, (self.written, self.written + n),
                                doing="write", options=self._options) from None
        self.written += n
        return n

    def flush(self) -> None:
        """Nothing: parts go up as the buffer fills, the rest at :meth:`commit`."""

    def commit(self) -> None:
        """Complete the upload: the object appears whole."""
        try:
            self._f.close()
        except Exception as exc:
            self.discard()
            raise storage_error(exc, self.url, doing="write",
                                options=self._options) from None

    def discard(self) -> None:
        """Abort the upload: no object appears, no part stays pending."""
        with contextlib.suppress(Exception):
            self._f.discard()
        with contextlib.suppress(Exception):
            self._f.closed = True


__all__ = ["Upload"]
