"""Writing one object as it is written, never spooled to disk.

- :class:`Upload`: the filesystem's own file object (a multipart upload on S3, a
  resumable upload on GCS, staged blocks on Azure): the object appears whole at
  :meth:`Upload.commit` (or ``close``), or not at all after :meth:`Upload.discard`.
- :class:`PartUpload`: an S3 multipart upload driven part by part: a part goes up as
  soon as the buffer holds ``part_size`` bytes (at most two in flight, so a task holds a
  few parts, not its file), and ``close`` uploads the last part **without completing
  the upload**: no object exists until whoever holds ``(key, upload id, parts)``
  completes it (the Spark sink's driver), and :meth:`PartUpload.discard` aborts it.

Neither has ``seek``: the IPC writers take their plain path on them (nothing is
rewritten after the fact).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from .. import errors as E
from .errors import retrying, storage_error
from .url import filesystem

#: the size of each part of a :class:`PartUpload` but the last (S3's minimum is 5 MiB)
PART_SIZE = 8 << 20
#: parts uploading at once (each holds its bytes until it is done)
PARTS_IN_FLIGHT = 2


def s3_call(fs: Any, op: str, key: str, *, url: str,
            options: Mapping[str, Any] | None = None, **kw: Any) -> Any:
    """One S3 request ``op`` on ``key`` (``bucket/name``) through s3fs, retried when it
    fails transiently; a failure is the storage error naming ``url``."""
    bucket, _, name = key.partition("/")
    return retrying(lambda: fs.call_s3(op, Bucket=bucket, Key=name, **kw), url,
                    doing="write", options=options)


class Upload:
    """A write-only sink over the filesystem's file object for ``url`` (a multipart
    upload on S3): ``commit`` (or ``close``) makes the object appear, ``discard`` drops
    it.  ``block_size`` is the filesystem's write buffer (its default when None)."""

    def __init__(self, url: str, storage_options: Mapping[str, Any] | None = None, *,
                 block_size: int | None = None) -> None:
        self.url = url
        self._options = storage_options
        fs, path = filesystem(url, storage_options)
        kw = {} if block_size is None else {"block_size": block_size}
        self._f = retrying(lambda: fs.open(path, "wb", **kw), url, doing="write",
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

    def tell(self) -> int:
        """Bytes written so far."""
        return self.written

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

    close = commit

    def discard(self) -> None:
        """Abort the upload: no object appears, no part stays pending."""
        with contextlib.suppress(Exception):
            self._f.discard()
        with contextlib.suppress(Exception):
            self._f.closed = True


class PartUpload:
    """An S3 multipart upload to ``key`` (``bucket/name`` in the s3fs filesystem
    ``fs``) sent part by part as it is written and left uncompleted by ``close``
    (see the module doc).  ``parts`` is ``((number, ETag), ...)`` after ``close``."""

    def __init__(self, fs: Any, key: str, *, url: str,
                 options: Mapping[str, Any] | None = None,
                 part_size: int = PART_SIZE) -> None:
        self.fs, self.key, self.url, self._options = fs, key, url, options
        self.part_size = part_size
        self.upload_id: str = self._call("create_multipart_upload")["UploadId"]
        self.parts: tuple[tuple[int, str], ...] = ()
        self.written = 0
        self._buffer = bytearray()
        self._inflight: list[tuple[int, Future[Any]]] = []
        self._done: list[tuple[int, str]] = []
        self._pool: ThreadPoolExecutor | None = None
        self._closed = False

    def _call(self, op: str, **kw: Any) -> Any:
        return s3_call(self.fs, op, self.key, url=self.url, options=self._options, **kw)

    def write(self, data: Any) -> int:
        """Buffer ``data``; every full part goes up (waiting while two are in flight)."""
        if self._closed:
            raise E.ArrowInvalidArgument(f"expected an open upload, found "
                                         f"{self.url} closed")
        view = memoryview(data).cast("B")
        self._buffer += view
        self.written += len(view)
        try:
            while len(self._buffer) >= self.part_size:
                with memoryview(self._buffer) as whole:
                    part = whole[: self.part_size].tobytes()  # (one copy, no slice first)
                del self._buffer[: self.part_size]
                self._send(part)
        except BaseException:
            self.discard()
            raise
        return len(view)

    def _send(self, part: bytes) -> None:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(PARTS_IN_FLIGHT, thread_name_prefix="quiver-part")
        while len(self._inflight) >= PARTS_IN_FLIGHT:
            self._settle_oldest()
        number = len(self._done) + len(self._inflight) + 1
        self._inflight.append((number, self._pool.submit(
            self._call, "upload_part", UploadId=self.upload_id, PartNumber=number,
            Body=part)))

    def _settle_oldest(self) -> None:
        number, future = self._inflight.pop(0)
        self._done.append((number, future.result()["ETag"]))

    def tell(self) -> int:
        """Bytes written so far."""
        return self.written

    def flush(self) -> None:
        """Nothing: parts go up as they fill."""

    def close(self) -> None:
        """Send the last part and wait for every part; the upload stays uncompleted."""
        if self._closed:
            return
        try:
            if self._buffer or not (self._done or self._inflight):
                self._send(bytes(self._buffer))  # (an empty object is one empty part)
                self._buffer = bytearray()
            while self._inflight:
                self._settle_oldest()
        except BaseException:
            self.discard()
            raise
        self._closed = True
        self._shutdown()
        self.parts = tuple(sorted(self._done))

    def discard(self) -> None:
        """Abort the upload: its parts are dropped, nothing appears."""
        self._closed = True
        self._buffer = bytearray()
        for _, future in self._inflight:
            future.cancel()
        for _, future in self._inflight:  # (a part still going would outlive the abort)
            with contextlib.suppress(Exception):
                future.result()
        self._inflight = []
        self._shutdown()
        with contextlib.suppress(E.ArrowError):
            self._call("abort_multipart_upload", UploadId=self.upload_id)

    def _shutdown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None


__all__ = ["PARTS_IN_FLIGHT", "PART_SIZE", "PartUpload", "Upload", "s3_call"]
