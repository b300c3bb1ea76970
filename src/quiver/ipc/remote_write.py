"""IPC writers to URLs: the object is written through the filesystem's file object (a
multipart upload on S3, :class:`~quiver.fs.upload.Upload`), completed on ``close``; a
writer left by an exception aborts the upload, so that no half object appears.  The
upload has no ``seek``: the writers take their plain path (nothing is rewritten after
the fact).  Apart from the readers (:mod:`quiver.ipc.remote`) so that reading does not
load the writers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import errors as E
from ..fs.upload import Upload
from ..fs.url import redact, wants_url
from . import writer
from .remote import URL_DOC, entry
from .writer import RecordBatchFileWriter, RecordBatchStreamWriter


class _Uploading:
    """What the URL writers add: complete the upload on close, abort it when the
    ``with`` block ends by an exception (no half object is left, unlike a local file,
    which keeps the batches written)."""

    _upload: Upload
    _closed: bool

    def close(self) -> None:
        """Finish the stream or file, then complete the upload."""
        if self._closed:
            return
        try:
            super().close()  # type: ignore[misc]
        except BaseException:
            self._upload.discard()
            raise
        self._upload.commit()

    def abort(self) -> None:
        """Drop what was written: the upload is aborted, no object appears."""
        self._closed = True
        self._upload.discard()

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is not None:
            self.abort()
        else:
            self.close()


class RemoteFileWriter(_Uploading, RecordBatchFileWriter):
    """A :class:`~quiver.ipc.writer.RecordBatchFileWriter` to a URL."""

    def __init__(self, upload: Upload, schema: Any, **kw: Any) -> None:
        self._upload = upload
        super().__init__(upload, schema, **kw)


class RemoteStreamWriter(_Uploading, RecordBatchStreamWriter):
    """A :class:`~quiver.ipc.writer.RecordBatchStreamWriter` to a URL."""

    def __init__(self, upload: Upload, schema: Any, **kw: Any) -> None:
        self._upload = upload
        super().__init__(upload, schema, **kw)


def _opened(local: Any, cls: Any, sink: Any, schema: Any,
            storage_options: Mapping[str, Any] | None, kw: dict[str, Any]) -> Any:
    """``local(sink, schema, **kw)`` for a path or file, else a writer of class ``cls``
    over a new upload to the URL ``sink``; the upload is aborted when the writer cannot
    start (a bad schema or option leaves no object)."""
    if not wants_url(sink, storage_options):
        return local(sink, schema, **kw)
    upload = Upload(sink, storage_options)
    try:
        return cls(upload, schema, **kw)
    except BaseException:
        upload.discard()
        raise


@entry(writer.new_file, URL_DOC + """    A URL's object is written as a multipart upload,
    completed on ``close`` and aborted when the ``with`` block raises: no half object.""")
def new_file(sink: Any, schema: Any, *, storage_options: Mapping[str, Any] | None = None,
             **kw: Any) -> RecordBatchFileWriter:
    """A file writer (see :func:`quiver.ipc.writer.new_file`), also to a URL."""
    if kw.get("append") and wants_url(sink, storage_options):
        # an object is written whole (a multipart upload): it cannot be carried on in place
        raise E.ArrowInvalidArgument(
            f"expected a local path to append to, found the URL {redact(str(sink))}: an "
            "object cannot be appended to in place; write the new batches as a new object "
            "(another key beside it, read together as a dataset), or append to a local "
            "file and upload it")
    return _opened(writer.new_file, RemoteFileWriter, sink, schema, storage_options, kw)


@entry(writer.new_stream, URL_DOC + """    A URL's object is written as a multipart upload,
    completed on ``close`` and aborted when the ``with`` block raises: no half object.""")
def new_stream(sink: Any, schema: Any, *, storage_options: Mapping[str, Any] | None = None,
               **kw: Any) -> RecordBatchStreamWriter:
    """A stream writer (see :func:`quiver.ipc.writer.new_stream`), also to a URL."""
    return _opened(writer.new_stream, RemoteStreamWriter, sink, schema, storage_options, kw)


__all__ = ["RemoteFileWriter", "RemoteStreamWriter", "new_file", "new_stream"]
