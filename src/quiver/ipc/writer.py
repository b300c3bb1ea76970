"""Stream and file writers (Columnar spec, "IPC Streaming Format" and "IPC File Format").

The writers are I/O loops over the sans-IO encoders of :mod:`quiver.ipc.encoder`, which
turn the schema, the batches (with the dictionary batches they need) and the end into
framed messages and, for a file, count the Blocks of the footer.  A writer hands each
message's framed metadata and buffer views (never concatenated) to the sink: a small
message in one write, a large one piece by piece.  To a real file, a large compressed
batch is written as the pool compresses it (:class:`~quiver.ipc.encoder.PipelinedBatch`),
its metadata written last over a placeholder.
"""

from __future__ import annotations

import contextlib
import io
import mmap
import os
import stat
import sys
from typing import Any, Unpack

from .. import errors as E
from .. import types as t
from .._keywords import spell_out
from ..batch import RecordBatch
from ..buffers import nbytes_of
from .append import lock, read_for_append
from .encoder import (
    IpcWriteOptions,
    PipelinedBatch,
    StreamEncoder,
    WriteKeywords,
    WriteOptionKeywords,
    as_schema,
    is_arrow_data,
    write_options,
)
from .file_encoder import FileEncoder
from .fileobj import text_mode_error

_SMALL_WRITE = 64 * 1024


def _iov_max() -> int:
    """How many pieces one writev call may take (POSIX promises at least 16)."""
    try:
        return max(16, min(os.sysconf("SC_IOV_MAX"), 1024))
    except (AttributeError, ValueError, OSError):
        return 16


_IOV_MAX = _iov_max()
# compressed batches of at least this many raw bytes, to a real file with threads, are
# written as the pool compresses them (_Writer._write_pipelined)
_PIPELINE_FROM = 4 << 20
# BufferOutputStream's memory from _MAP_FROM bytes on: private (a shared anonymous map
# cannot grow: touching the grown part raises SIGBUS), grown in place only where
# mmap.resize is mremap (Linux)
_MAP_FROM = 1024 * 1024
_MAP_FLAGS = {"flags": mmap.MAP_PRIVATE} if hasattr(mmap, "MAP_PRIVATE") else {}
_GROW_IN_PLACE = sys.platform.startswith("linux") and bool(_MAP_FLAGS)
_MADV_HUGEPAGE = getattr(mmap, "MADV_HUGEPAGE", None)


def _anonymous_map(size: int) -> mmap.mmap:
    """Private anonymous memory of ``size`` bytes, with huge pages asked for."""
    try:
        m = mmap.mmap(-1, size, **_MAP_FLAGS)
    except OSError as exc:  # out of address space or memory: what bytes would raise
        raise MemoryError(
            f"expected {size} bytes of memory for a BufferOutputStream, found: {exc}"
        ) from exc
    _ask_huge_pages(m)
    return m


def _ask_huge_pages(m: mmap.mmap) -> None:
    if _MADV_HUGEPAGE is not None:
        with contextlib.suppress(OSError):  # no transparent huge pages: ordinary ones do
            m.madvise(_MADV_HUGEPAGE)


class BufferOutputStream:
    """An in-memory sink, like pyarrow's; ``getvalue()`` returns what was written as a
    read-only ``memoryview``.

    Every write is copied once, as it comes (so the arrays written may change
    afterwards).  A small stream lives in a ``bytearray``; from ``_MAP_FROM`` bytes on, in
    one growing block of anonymous memory: on Linux it grows in place (``mremap``: neither
    a copy nor page faults for what is already written) and huge pages are asked for,
    which makes page faults far cheaper than filling a fresh ``bytes``; elsewhere it grows
    by doubling and copying.

    ``getvalue()`` is a read-only memoryview of the block (no copy), or of a ``bytes``
    copy of a small stream (so that small values pin no memory map), as
    ``io.BytesIO.getbuffer()`` gives (pyarrow's ``getvalue()`` returns a Buffer, not
    ``bytes`` either).  It supports ``len``, slicing, ``==`` with bytes and ``bytes()``,
    and every quiver reader and ``pyarrow.py_buffer`` accept it; ``bytes(value)`` makes a
    ``bytes``.  Writing after ``getvalue()`` leaves the value unchanged.

    >>> sink = BufferOutputStream()
    >>> sink.write(b"abc"), sink.write(b"de")
    (3, 2)
    >>> value = sink.getvalue()
    >>> len(value), value == b"abcde", bytes(value[1:3]), value.readonly
    (5, True, b'bc', True)
    """

    def __init__(self) -> None:
        self._small = bytearray()  # the stream while it is below _MAP_FROM bytes
        self._block: mmap.mmap | None = None  # the stream from then on
        self._size = 0
        self._value: memoryview | None = None  # the last getvalue(), while still current

    def write(self, data: Any) -> int:
        """Append (copy) a bytes-like object; returns how many bytes."""
        try:
            view = memoryview(data)
        except TypeError:
            raise E.ArrowTypeError(
                f"expected a bytes-like object to write, found {type(data).__name__}"
            ) from None
        n = view.nbytes
        if not n:
            return 0
        if not view.c_contiguous:
            view = memoryview(view.tobytes())
        elif view.format != "B" or view.ndim != 1:
            view = view.cast("B")
        pos = self._size
        block = self._block
        if block is None and pos + n <= _MAP_FROM:
            self._small += view
        else:
            if block is None or pos + n > len(block):
                block = self._grow(pos + n)
            block[pos : pos + n] = view
        self._size = pos + n
        return n

    def _grow(self, need: int) -> mmap.mmap:
        """A block of at least ``need`` bytes holding what was written so far."""
        old = self._block
        capacity = max(need, 2 * _MAP_FROM, 2 * len(old) if old is not None else 0)
        if old is not None and _GROW_IN_PLACE:
            self._value = None  # a value still held elsewhere makes resize refuse
            try:
                old.resize(capacity)
            except (BufferError, OSError, SystemError, ValueError):
                pass  # exported (a getvalue() still alive) or not supported: copy
            else:
                _ask_huge_pages(old)
                return old
        block = _anonymous_map(capacity)
        if old is None:
            block[: self._size] = self._small
            self._small = bytearray()
        elif self._size:
            with memoryview(old) as written:  # slicing the map itself would copy to bytes
                block[: self._size] = written[: self._size]
        self._block = block
        self._value = None
        return block

    def tell(self) -> int:
        """Bytes written so far."""
        return self._size

    def getvalue(self) -> memoryview:
        """Everything written, as a read-only memoryview (see the class)."""
        value = self._value
        if value is None or len(value) != self._size:
            if self._block is None:
                value = memoryview(bytes(self._small))
            else:
                value = memoryview(self._block)[: self._size].toreadonly()
            self._value = value
        return value

    def getbuffer(self) -> memoryview:
        """Everything written, as a memoryview (the same as ``getvalue()``)."""
        return self.getvalue()

    def close(self) -> None:
        """Nothing to release; present for file-object compatibility."""

    @property
    def closed(self) -> bool:
        """Always False: the data stays readable after the writer closes."""
        return False


def _appends(f: Any) -> bool:
    """Whether writes to ``f`` go to the end of the file whatever its position: a mode
    with 'a', or a descriptor opened with O_APPEND (a shell's ``>>`` gives stdout mode
    'wb' with O_APPEND; found in review)."""
    if "a" in getattr(f, "mode", "a"):
        return True
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: the mode is all there is
        return False
    return bool(fcntl.fcntl(f.fileno(), fcntl.F_GETFL) & os.O_APPEND)


def _has_data(path: Any) -> bool:
    """Whether ``path`` (to append to) names a file with bytes in it: a missing or empty
    file is written afresh, as ``open(path, "a")`` starts one."""
    if not isinstance(path, (str, os.PathLike)):
        raise E.ArrowTypeError(
            f"expected a path to append to, found {type(path).__name__}"
        )
    try:
        return os.stat(path).st_size > 0
    except FileNotFoundError:
        return False


def _open_new(path: Any) -> Any:
    """``path`` opened for writing as a new file.  An existing regular file with one link
    (not a symlink) is unlinked and made afresh with its mode, not truncated: a memory map
    of it (``open_stream(path)`` maps a file; ``open_file(memory_map=True)``) keeps the old
    pages, where truncating them would make touching a batch read before fault (SIGBUS).
    Anything else (a symlink, a hard-linked file, a device, no right to unlink) is
    opened as ``open(path, "wb")`` does."""
    try:
        st = os.lstat(path)
    except OSError:
        st = None
    if st is not None and stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
        try:
            os.unlink(path)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                         0o600)
        except OSError:
            pass  # (a directory we may not write, a race: truncate as open() does)
        else:
            with contextlib.suppress(OSError, AttributeError):  # (no fchmod: Windows)
                os.fchmod(fd, stat.S_IMODE(st.st_mode))
            return os.fdopen(fd, "wb")
    return open(path, "wb")


def _writev_all(fd: int, parts: list[Any], size: int) -> None:
    """Write ``parts`` (``size`` bytes in all) to ``fd`` in order, with as few writev
    calls as the system takes (a call may write less than asked, or take at most
    ``IOV_MAX`` pieces)."""
    views = [memoryview(p).cast("B") for p in parts if nbytes_of(p)]
    done = 0
    while views:
        wrote = os.writev(fd, views[:_IOV_MAX])
        if wrote <= 0:
            raise OSError(f"expected the file to take {size - done} more bytes")
        done += wrote
        while views and wrote >= len(views[0]):
            wrote -= len(views.pop(0))
        if wrote:
            views[0] = views[0][wrote:]


class _Sink:
    def __init__(self, sink: Any) -> None:
        if isinstance(sink, (str, os.PathLike)):
            self._f = _open_new(sink)
            self._owns = True
        elif isinstance(sink, io.TextIOBase):
            raise text_mode_error(
                sink, "a binary file object as sink",
                "write to its .buffer (sys.stdout.buffer for standard output)",
            )
        elif hasattr(sink, "write"):
            self._f = sink
            self._owns = False
        else:
            raise E.ArrowTypeError(
                f"expected a path or a writable file object as sink, found {type(sink).__name__}"
            )
        self.position = 0
        # where this writer's first byte is in a real file, which lets a message's metadata
        # be written after its body (None for any other sink)
        self.origin = self._origin()
        # a file this writer opened (no one else holds it): a large message's parts go to
        # its descriptor in one writev call rather than one write call each
        self._fd = (self._f.fileno() if self._owns and self.origin is not None
                    and hasattr(os, "writev") else None)

    def _origin(self) -> int | None:
        f = self._f
        if not isinstance(f, (io.BufferedWriter, io.BufferedRandom, io.FileIO)):
            return None
        try:
            if not f.seekable() or _appends(f):  # appending: every write goes to the end
                return None
            f.flush()
            at = f.tell()
            # only at the end of the file: cut() after a failure must not drop bytes that
            # were there before this writer
            return at if at == os.fstat(f.fileno()).st_size else None
        except (OSError, ValueError):
            return None

    def rewrite(self, position: int, data: bytes) -> None:
        """Overwrite what was written at ``position`` (real files only), then carry on at
        the end."""
        assert self.origin is not None
        f = self._f
        f.seek(self.origin + position)
        self._write_all(data)
        f.seek(self.origin + self.position)

    def cut(self, position: int) -> None:
        """Drop what was written from ``position`` on (real files only)."""
        assert self.origin is not None
        f = self._f
        f.seek(self.origin + position)
        f.truncate()
        self.position = position

    def write(self, data: Any) -> None:
        """Write one piece now (bytes, or a 1-d uint8 array)."""
        n = nbytes_of(data)
        if n:
            self._write_all(data, n)
            self.position += n

    def _write_all(self, data: Any, n: int | None = None) -> None:
        # buffered files write everything or raise; a raw file (io.FileIO, buffering=0)
        # may write less, and says how much
        done = self._f.write(data)
        if done is not None and done < (nbytes_of(data) if n is None else n):
            view = memoryview(data).cast("B")
            while done < len(view):
                more = self._f.write(view[done:])
                if not more:
                    raise OSError(f"expected the sink to take {len(view) - done} more bytes")
                done += more

    def write_message(self, parts: list[Any], body_length: int) -> None:
        """Write one whole message, ``parts[0]`` the framed metadata and the rest its body:
        small ones in a single call, large ones piece by piece (the buffer views go to the
        sink as they are, never concatenated)."""
        size = len(parts[0]) + body_length
        if body_length < _SMALL_WRITE:
            self._write_all(b"".join(parts) if len(parts) > 1 else parts[0], size)
        elif self._fd is not None:
            # what the buffer holds goes first; after this the buffered file's tell() is
            # stale (it caches its position): rewrite() and cut() seek absolutely, which
            # flushes and reads the position back, and nothing here calls tell()
            self._f.flush()
            _writev_all(self._fd, parts, size)
        else:
            for p in parts:
                self._write_all(p)
        self.position += size

    def close(self) -> None:
        if self._owns:
            self._f.close()
        elif hasattr(self._f, "flush"):
            self._f.flush()


class _Writer:
    """An I/O loop over an encoder: what it returns goes to the sink."""

    def __init__(self, sink: Any, encoder: StreamEncoder | FileEncoder) -> None:
        self._encoder = encoder
        self.schema = encoder.schema
        self.options = encoder.options
        self.file_format = encoder.file_format
        self._sink = _Sink(sink)
        self._closed = False
        for part in encoder.begin():
            self._sink.write(part)

    def write_batch(self, batch: Any, custom_metadata: Any = None) -> None:
        """Write one record batch (and the dictionary batches it needs first): a quiver
        RecordBatch, or any object with ``__arrow_c_array__`` (a pyarrow RecordBatch, a
        struct array), taken zero-copy through the C data interface."""
        if self._closed:
            raise E.ArrowInvalidArgument("expected an open writer, found it closed")
        sink = self._sink
        pipeline_from = None if sink.origin is None else _PIPELINE_FROM
        for message in self._encoder.batch_messages(batch, custom_metadata, pipeline_from):
            if type(message) is tuple:
                sink.write_message(message[0], message[1])
            else:
                self._write_pipelined(message.length, message)

    def _write_pipelined(self, length: int, batch: PipelinedBatch) -> None:
        """A large compressed batch of ``length`` rows to a real file, written as the pool
        compresses it: the placeholder, the body's parts, then the metadata over the
        placeholder (compressing and writing overlap; the benchmark's 5M-row batch: lz4
        and zstd writes 6-7% faster to tmpfs, 3-4% to an ext4 disk, on 2 cores)."""
        sink = self._sink
        start = sink.position
        sink.write(batch.placeholder)
        try:
            for part in batch.body():
                sink.write(part)
            sink.rewrite(start, batch.metadata())
        except BaseException:
            sink.cut(start)  # no half-written message stays in the file
            raise

    def write_table(self, table: Any, max_chunksize: int | None = None) -> None:
        """Write every batch of a table (split to ``max_chunksize`` rows if given): a quiver
        Table, or any object with ``__arrow_c_stream__`` (a pyarrow Table or
        RecordBatchReader, a polars DataFrame, a duckdb result), read batch by batch."""
        if max_chunksize is not None and (
            not isinstance(max_chunksize, int) or max_chunksize <= 0
        ):
            raise E.ArrowInvalidArgument(
                f"expected a positive max_chunksize, found {max_chunksize!r}"
            )
        for batch in self._batches_of(table):
            if max_chunksize is None or batch.num_rows <= max_chunksize:
                self.write_batch(batch)
                continue
            for start in range(0, batch.num_rows, max_chunksize):
                self.write_batch(batch.slice(start, max_chunksize))

    def _batches_of(self, table: Any) -> Any:
        """The record batches of a table-like object, lazily where it is a stream."""
        if isinstance(table, RecordBatch):
            return [table]
        to_batches = getattr(table, "to_batches", None)
        if not is_arrow_data(table, "__arrow_c_stream__") and to_batches is not None:
            return to_batches()
        if is_arrow_data(table, "__arrow_c_stream__"):
            from ..cdata.import_batch import import_stream

            return _stream_batches(import_stream(table))
        if hasattr(table, "read_next_batch") and isinstance(getattr(table, "schema", None),
                                                            t.Schema):
            return iter(table)  # a quiver reader
        if is_arrow_data(table, "__arrow_c_array__"):
            return [table]
        raise E.ArrowTypeError(
            f"expected a quiver Table or an object with __arrow_c_stream__ (a pyarrow Table, "
            f"a polars DataFrame, ...), found {type(table).__name__}"
        )

    def _conformed(self, batch: RecordBatch) -> RecordBatch:
        """A batch from pandas with the writer's column types (pandas 3 strings arrive as
        large_string, say, for a writer of string): safe casts, column by column."""
        if batch.schema.equals(self.schema):
            return batch
        if batch.schema.names != self.schema.names:
            raise E.ArrowInvalidArgument(
                f"expected a DataFrame with the writer's columns {self.schema.names}, found "
                f"{batch.schema.names}"
            )
        columns = [
            col if col.type == f.type else col.cast(f.type)  # type: ignore[attr-defined]
            for col, f in zip(batch.columns, self.schema.fields)
        ]
        return RecordBatch(self.schema, columns, batch.num_rows)

    def write(self, obj: Any) -> None:
        """Write any Arrow data: a record batch (quiver's, or with ``__arrow_c_array__``), a
        table or stream (quiver's, or with ``__arrow_c_stream__``: pyarrow, polars,
        duckdb, nanoarrow), a quiver reader, or a pandas DataFrame."""
        if type(obj) is RecordBatch or is_arrow_data(obj, "__arrow_c_array__"):
            self.write_batch(obj)
        elif type(obj).__name__ == "DataFrame" and type(obj).__module__.startswith("pandas"):
            self.write_batch(self._conformed(RecordBatch.from_pandas(obj, preserve_index=False)))
        else:
            self.write_table(obj)

    def close(self) -> None:
        """Finish the stream (EOS) or file (footer and magic) and flush the sink."""
        if self._closed:
            return
        self._closed = True
        for part in self._encoder.end():
            self._sink.write(part)
        self._sink.close()

    def __enter__(self) -> _Writer:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self.close()


def _stream_batches(reader: Any) -> Any:
    """The batches of an imported C stream; the producer's stream is released at the end
    (or when the loop stops early)."""
    with reader:
        yield from reader


class RecordBatchStreamWriter(_Writer):
    """Writes the IPC stream format (a loop over :class:`~quiver.ipc.encoder.StreamEncoder`)."""

    def __init__(
        self,
        sink: Any,
        schema: Any,
        *,
        options: IpcWriteOptions | None = None,
        **kw: Unpack[WriteOptionKeywords],
    ) -> None:
        super().__init__(sink, StreamEncoder(schema, options=write_options(options, kw)))


class RecordBatchFileWriter(_Writer):
    """Writes the IPC file format (footer with Blocks for random access; a loop over
    :class:`~quiver.ipc.file_encoder.FileEncoder`); with ``statistics=True`` each batch's
    statistics go in the footer (:mod:`quiver.ipc.statistics`; off by default).  With
    ``append=True``, carries on the file at the path ``sink`` (see :func:`new_file`)."""

    def __init__(
        self,
        sink: Any,
        schema: Any,
        *,
        options: IpcWriteOptions | None = None,
        metadata: Any = None,
        statistics: bool | None = None,
        append: bool = False,
        **kw: Unpack[WriteOptionKeywords],
    ) -> None:
        if append and _has_data(sink):
            self._append(sink, schema, options, metadata, statistics, kw)
            return
        encoder = FileEncoder(
            schema, options=write_options(options, kw), metadata=metadata,
            statistics=bool(statistics),
        )
        super().__init__(sink, encoder)

    def _append(self, path: Any, schema: Any, options: IpcWriteOptions | None,
                metadata: Any, statistics: bool | None, kw: dict[str, Any]) -> None:
        """Open the file at ``path`` to carry it on (:mod:`quiver.ipc.append`): read and
        check it, cut it at the end of its last block, write from there."""
        if kw.get("unify_dictionaries") is None and options is None:
            kw = {**kw, "unify_dictionaries": True}  # against the file's dictionaries
        opts = write_options(options, kw)
        where = os.fspath(path)
        f = open(path, "r+b")  # noqa: SIM115 - owned by the sink, closed in close()
        try:
            fd = f.fileno()
            lock(fd, where)
            state = read_for_append(fd, as_schema(schema), where, statistics=statistics)
            encoder = FileEncoder.resuming(state, options=opts, metadata=metadata,
                                           statistics=statistics)
            # from here the old footer is gone: a crash leaves a file quiver recover reads
            f.truncate(state.end)
            f.seek(state.end)
            pad = -state.end % 8  # (every writer ends its blocks aligned; in case not)
            if pad:
                f.write(bytes(pad))
                f.flush()
                encoder.position += pad
        except BaseException:
            f.close()
            raise
        super().__init__(f, encoder)
        self._sink._owns = True


@spell_out(WriteKeywords)
def new_stream(sink: Any, schema: Any, **kw: Unpack[WriteKeywords]) -> RecordBatchStreamWriter:
    """A stream writer to a path or binary file object.

    ``schema`` is a quiver Schema or any object with ``__arrow_c_schema__`` (a pyarrow
    schema...).  The keywords are those of :class:`IpcWriteOptions` (``compression``:
    ``"lz4"`` or ``"zstd"``, any case); give them or ``options``, not both.

    >>> import pyarrow as pa
    >>> sink = BufferOutputStream()
    >>> with new_stream(sink, pa.schema([("a", pa.int64())]), compression="ZSTD") as w:
    ...     w.write(pa.table({"a": [1, 2]}))
    >>> pa.ipc.open_stream(sink.getvalue()).read_all().column("a").to_pylist()
    [1, 2]
    """
    return RecordBatchStreamWriter(sink, schema, **kw)


@spell_out(WriteKeywords)
def new_file(
    sink: Any,
    schema: Any,
    *,
    metadata: Any = None,
    statistics: bool | None = None,
    append: bool = False,
    **kw: Unpack[WriteKeywords],
) -> RecordBatchFileWriter:
    """A file writer to a path or binary file object; ``metadata`` becomes the footer's
    custom metadata.  ``schema`` and the other keywords are as for :func:`new_stream`.

    ``statistics=True`` keeps each batch's statistics (row and null counts, bounds) in the
    footer, so that filtered reads (``open_file(filters=...)``, the Spark source) skip
    batches (:mod:`quiver.ipc.statistics`; other readers ignore them).  They are off by
    default, as pyarrow writes none: computing them costs 1.5-3x of a plain write.  The
    Spark sink and ``quiver convert`` keep them by default.

    ``append=True`` carries on the IPC file at the local path ``sink`` (a URL is
    refused; a missing or empty file is written afresh): ``schema`` must have the file's
    fields (the error names the first that differs); the new batches go after the file's
    last block and ``close()`` writes
    a footer listing the old batches and the new.  Dictionaries grow by deltas, the only
    kind a file allows: a batch whose dictionary holds other values is re-encoded against
    the file's (``unify_dictionaries`` defaults to True when appending; with False, or an
    ``options`` object that leaves it False, such a batch is refused).  Statistics: a file that
    has them keeps them, the new batches' added (``statistics=False`` drops them); on a
    file without them, ``statistics=True`` computes those of the old batches from their
    data.  ``metadata`` replaces the footer's custom metadata (else it is kept).  The
    file is locked against a second appender.  Until ``close()`` the file has no footer;
    a writer killed before then leaves every old batch in place, and ``quiver recover``
    gives back those and every complete new one (:mod:`quiver.ipc.append`).

    >>> import pyarrow as pa
    >>> sink = BufferOutputStream()
    >>> batch = pa.record_batch({"a": [1, 2]})
    >>> with new_file(sink, batch.schema) as w:
    ...     w.write_batch(batch)
    >>> pa.ipc.open_file(sink.getvalue()).read_all().num_rows
    2
    """
    return RecordBatchFileWriter(sink, schema, metadata=metadata, statistics=statistics,
                                 append=append, **kw)
