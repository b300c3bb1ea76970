"""Stream and file readers (Columnar spec, "IPC Streaming Format" and "IPC File Format").

These and the writers are the only IPC modules that do I/O.  The stream reader is a loop
that reads exactly ``bytes_needed`` from its source and feeds the sans-IO
:class:`~quiver.ipc.stream_decoder.StreamDecoder`; over ``bytes`` or a memory map it feeds
the whole buffer once, so every uncompressed buffer of every batch is a view of the
source.  The file reader gives the :class:`~quiver.ipc.file_decoder.FileDecoder` its
positional reads (views of a buffer or memory map, reads of a file): the decoder reads
and checks the header, the trailer and the footer (:meth:`FileDecoder.open`), the
dictionary blocks in footer order, then record batch blocks on demand
(:meth:`FileDecoder.read_batch`, random access with :meth:`get_batch`), choosing how to
read each.  Filters go through :class:`~quiver.ipc.scan.Selection`, which the footer
statistics decide; the remote reader (:mod:`quiver.ipc.remote`) and the Spark source
share both.
"""

from __future__ import annotations

import contextlib
import io
import mmap
import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Unpack

import numpy as np

from .. import errors as E
from .. import types as t
from .._keywords import spell_out
from ..batch import RecordBatch, RecordBatchReader, Table
from ..filters import check_filters, filter_batch, normalize
from . import metadata as md
from .compression import run_pooled
from .decoder import END, NEED_DATA, RawMessage
from .file_decoder import FileDecoder
from .fileobj import text_mode_error
from .framing import MAGIC
from .options import IpcReadOptions, ReadOptionKeywords, read_options
from .scan import FilterColumns, Selection
from .statistics.decode import decode_statistics, footer_value, statistics_stream
from .stream_decoder import StreamDecoder

_READ_CHUNK = 1 << 20  # bytes per read() when a message step needs more than this
_BIG_READ = 1 << 20  # positional reads at least this large go into a numpy allocation
_READ_PIECE = 8 << 20  # and from twice this size, in pieces of this size on the pool


class ReadKeywords(ReadOptionKeywords, total=False):
    """The keywords of :func:`open_stream` and :func:`open_file`: each field of
    :class:`IpcReadOptions` on its own (:class:`ReadOptionKeywords`) or all of them as
    ``options`` (not both), and ``memory_map``: map a path instead of reading it."""

    memory_map: bool
    options: IpcReadOptions | None


def _as_memory(source: Any, memory_map: bool) -> tuple[memoryview | None, Any, bool]:
    """(whole-buffer view or None, file object for pulling, whether the reader opened
    the source: a file object it must close, or a map of a path it should let go of)."""
    if isinstance(source, (str, os.PathLike)):
        if memory_map:
            # no file object: the map keeps its own handle, and lives as long as the
            # arrays viewing it (closing the reader never unmapped it)
            fd = os.open(source, os.O_RDONLY | getattr(os, "O_BINARY", 0))
            try:
                return memoryview(mmap.mmap(fd, 0, access=mmap.ACCESS_READ)), None, True
            except ValueError:  # (an empty file cannot be mapped: it has no bytes to view)
                if os.fstat(fd).st_size == 0:
                    return memoryview(b""), None, True
                raise
            finally:
                os.close(fd)
        f = open(Path(source), "rb")  # noqa: SIM115 - owned by the reader, closed in close()
        return None, f, True
    if isinstance(source, (bytes, bytearray, memoryview, mmap.mmap, np.ndarray)):
        return _bytes_view(source), None, False
    if isinstance(source, io.TextIOBase):
        raise text_mode_error(
            source,
            "a binary file object",
            "read its bytes through its .buffer (sys.stdin.buffer for standard input)",
        )
    if hasattr(source, "read"):
        return None, source, False
    try:  # anything else with the buffer protocol (pyarrow.Buffer, array.array, ...)
        return _bytes_view(source), None, False
    except TypeError:
        pass
    raise E.ArrowTypeError(
        f"expected a path, a bytes-like object or a readable file object, found "
        f"{type(source).__name__}"
    )


def _closed_error() -> E.ArrowInvalidArgument:
    return E.ArrowInvalidArgument("expected an open reader, found it closed")


def _bytes_view(source: Any) -> memoryview:
    """``source``'s bytes as a flat memoryview, without a copy (C-contiguous memory only)."""
    if isinstance(source, np.ndarray):
        if source.dtype.hasobject:
            raise E.ArrowTypeError("expected an array of bytes to read, found Python objects")
        if not source.flags.c_contiguous:
            raise E.ArrowTypeError(
                "expected C-contiguous memory to read, found a strided or Fortran-ordered "
                "array (numpy.ascontiguousarray makes a copy that is)"
            )
        return memoryview(source.reshape(-1).view(np.uint8))
    view = memoryview(source)
    if not view.c_contiguous:
        raise E.ArrowTypeError("expected C-contiguous memory to read, found a strided buffer")
    if view.format == "B" and view.ndim == 1:
        return view
    try:
        return view.cast("B")
    except (TypeError, ValueError) as exc:
        raise E.ArrowTypeError(f"expected memory that can be read as bytes, found {exc}") from None


def _regular_file(source: Any) -> bool:
    """Whether ``source`` is a path naming a regular file (not a pipe, a device or
    ``/dev/stdin``), which a stream reader maps instead of reading."""
    if not isinstance(source, (str, os.PathLike)):
        return False
    try:
        return stat.S_ISREG(os.stat(source).st_mode)
    except (OSError, ValueError):
        return False  # (open() says what is wrong with it)


class RecordBatchStreamReader(RecordBatchReader):
    """Reads the IPC stream format one batch at a time; iterable, with ``read_all()`` and
    ``read_pandas()`` (a :class:`~quiver.batch.RecordBatchReader`).

    A regular file named by path is memory-mapped unless ``memory_map=False`` (as
    ``open_file(memory_map=True)`` maps one): every batch is a view of the map, with the
    same checks, and the table ``read_all()`` returns holds no memory beyond the file's
    pages; reading it into fresh memory batch by batch cost 3x pyarrow's ``OSFile``
    read in page faults.  Pipes, devices and file objects are read as they come.
    ``filters`` (as :func:`read_table` takes them) keeps only matching rows; a filter's
    columns missing from ``columns=`` are loaded too and dropped after filtering."""

    def __init__(
        self,
        source: Any,
        *,
        options: IpcReadOptions | None = None,
        memory_map: bool | None = None,
        filters: Any = None,
        **kwargs: Unpack[ReadOptionKeywords],
    ) -> None:
        self._decoder = StreamDecoder(read_options(options, kwargs, ReadKeywords))
        self._filters = normalize(filters)
        self._filter_columns: FilterColumns | None = None
        if memory_map is None:
            memory_map = _regular_file(source)
        self._whole, self._file, self._owns = _as_memory(source, memory_map)
        self._left = self._bytes_left()
        if self._whole is not None:
            self._decoder.feed(self._whole)
            self._decoder.feed_eof()
        self._closed = False
        try:
            self._schema = self._pull(self._decoder.next_schema)
            if self._filters:
                self._schema = self._add_filter_columns()
        except BaseException:
            self.close()  # a file this reader opened is not left open by bad input
            raise

    def _add_filter_columns(self) -> t.Schema:
        """Load the filter's columns too, if ``columns=`` lacks them (dropped after
        filtering); the schema the batches are returned with."""
        decoder = self._decoder
        extra = FilterColumns(decoder.schema_message.schema, decoder.options.columns,
                              self._filters)
        if extra.load is not None:
            decoder.project(extra.load)
            self._filter_columns = extra
        check_filters(self._filters, decoder.schema)
        return extra.narrow_schema(decoder.schema)

    def _filtered(self, batch: RecordBatch) -> RecordBatch:
        """``batch`` with only the rows the filters keep, without the columns loaded
        for them only."""
        if not self._filters:
            return batch
        batch = filter_batch(batch, self._filters)
        extra = self._filter_columns
        return batch if extra is None else extra.narrow(batch)

    def _pull(self, step: Any) -> Any:
        while True:
            out = step()
            if out is not NEED_DATA:
                return out
            need = max(self._decoder.bytes_needed, 1)
            if self._file is None:
                data: Any = b""
            elif need >= _BIG_READ and self._left is not None and need <= self._left:
                # a large step (a body) of a file that holds it: one read into a numpy
                # buffer, fed whole, so that the body's buffers are views of it (reading
                # it in pieces made the decoder join them: a copy of every body)
                data = self._read_exactly(need)
            else:
                data = self._file.read(min(need, _READ_CHUNK))
            if self._left is not None:
                self._left -= len(data)
            if not len(data):
                self._decoder.feed_eof()
            else:
                self._decoder.feed(data)

    def _read_exactly(self, n: int) -> memoryview:
        out = np.empty(n, dtype=np.uint8)
        view = memoryview(out)
        done = 0
        while done < n:
            got = self._file.readinto(view[done:]) or 0
            if got <= 0:
                break
            done += got
        out.flags.writeable = False  # like every buffer read from IPC
        return view[:done].toreadonly()

    def _bytes_left(self) -> int | None:
        """Bytes from the file's position to its end (None: not a regular file)."""
        f = self._file
        try:
            if f is None or not f.seekable() or not hasattr(f, "readinto"):
                return None
            return os.fstat(f.fileno()).st_size - f.tell()
        except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
            return None

    @property
    def schema(self) -> t.Schema:
        """The stream's (projected) schema."""
        return self._schema

    @property
    def schema_message(self) -> md.SchemaMessage | None:
        """The decoded Schema message (dictionary ids, endianness, features)."""
        return self._decoder.schema_message

    @property
    def custom_metadata(self) -> t.KeyValueMetadata | None:
        """Custom metadata of the most recently read batch's message."""
        return self._decoder.custom_metadata

    @property
    def stats(self) -> dict[str, int]:
        """Counts of messages, dictionary batches and record batches read so far."""
        d = self._decoder
        return {
            "num_messages": d.num_messages,
            "num_dictionary_batches": d.num_dictionary_batches,
            "num_record_batches": d.num_record_batches,
        }

    def read_next_batch(self) -> RecordBatch:
        """The next batch; StopIteration at the end of the stream."""
        if self._closed:
            raise _closed_error()
        batch = self._pull(self._decoder.next_batch)
        if batch is END:
            raise StopIteration
        return self._filtered(batch)

    def __iter__(self) -> Iterator[RecordBatch]:
        if self._closed:
            raise _closed_error()
        decoder = self._decoder
        while True:
            if self._closed:
                raise _closed_error()
            if self._filters:
                for batch in decoder.steady_batches():
                    yield self._filtered(batch)
            else:
                yield from decoder.steady_batches()  # batch after batch of one shape, fast
            batch = self._pull(decoder.next_batch)
            if batch is END:
                return
            yield self._filtered(batch)

    def read_all(self) -> Table:
        """All remaining batches as a Table."""
        return Table.from_batches(list(self), schema=self._schema)

    def close(self) -> None:
        """Close the source if this reader opened it; reading afterwards is an error."""
        if not getattr(self, "_closed", True) and self._owns and self._file is not None:
            self._file.close()
        self._closed = True
        self._whole = None

    def __del__(self) -> None:
        # a reader dropped unclosed lets go of the file it opened (no ResourceWarning)
        with contextlib.suppress(Exception):
            self.close()

    def __enter__(self) -> RecordBatchStreamReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _RandomAccess:
    """Positional reads: views of a whole buffer or map, or copies of just the bytes asked
    for from a seekable file (like pyarrow's readers, which never read a file whole)."""

    def __init__(self, whole: memoryview | None, f: Any, *, threads: bool | int = True) -> None:
        self._whole = whole
        self._file = f
        self._threads = threads
        self._fd: int | None = None
        if whole is not None:
            self.size = len(whole)
            return
        try:
            self._fd = f.fileno() if hasattr(os, "pread") else None
            if self._fd is None:
                raise AttributeError("no positional reads here")
            self.size = os.fstat(self._fd).st_size
        except (AttributeError, OSError, io.UnsupportedOperation):
            self._fd = None
            self.size = f.seek(0, os.SEEK_END)

    def read(self, offset: int, n: int) -> memoryview:
        """``n`` bytes from ``offset`` (bounds are the caller's; short reads raise)."""
        if self._whole is not None:
            return self._whole[offset : offset + n]
        if n >= _BIG_READ and (
            hasattr(os, "preadv") if self._fd is not None else hasattr(self._file, "readinto")
        ):
            return self._read_big(offset, n)
        if self._fd is not None:
            data = os.pread(self._fd, n, offset)
        else:
            self._file.seek(offset)
            data = self._file.read(n)
        if len(data) != n:
            raise self._short(offset, n, len(data))
        return memoryview(data)

    def _read_big(self, offset: int, n: int) -> memoryview:
        # into a numpy allocation: numpy asks for huge pages for big arrays, which halves
        # the page-fault cost of a fresh buffer (measured: 249 MB in 63 ms vs 110 ms for
        # the bytes that os.pread returns); the block size was checked against the file.
        # Positional reads of a file go in pieces on the thread pool: the copy and the
        # page faults of a fresh buffer then use every core (249 MB: 66 -> 33 ms, 2 cores)
        out = np.empty(n, dtype=np.uint8)
        if self._fd is None:
            self._file.seek(offset)
            self._fill(out, offset, 0, n)
        else:
            starts = range(0, n, _READ_PIECE)
            sizes = [min(_READ_PIECE, n - s) for s in starts]
            run_pooled(
                lambda i: self._fill(out, offset, starts[i], starts[i] + sizes[i]),
                sizes,
                threads=self._threads,
                min_bytes=_READ_PIECE // 2,
            )
        out.flags.writeable = False  # like every buffer read from IPC
        return memoryview(out)

    @property
    def positional(self) -> bool:
        """Whether reads are positional reads of a file (safe from several threads)."""
        return self._fd is not None and hasattr(os, "preadv")

    def read_into(self, offset: int, out: np.ndarray) -> None:
        """Fill ``out`` with the file's bytes from ``offset`` (positional sources only;
        a short read raises :class:`TruncatedError`)."""
        self._fill(out, offset, 0, out.nbytes)

    def _fill(self, out: np.ndarray, offset: int, start: int, end: int) -> None:
        """Read the file's bytes ``offset + start .. offset + end`` into ``out[start:end]``."""
        done = start
        while done < end:
            view = out[done:end]
            if self._fd is not None:
                got = os.preadv(self._fd, [view], offset + done)
            else:
                got = self._file.readinto(view) or 0
            if got <= 0:
                raise self._short(offset + start, end - start, done - start)
            done += got

    @staticmethod
    def _short(offset: int, n: int, got: int) -> E.TruncatedError:
        return E.TruncatedError(
            f"expected {n} bytes at this offset, found {got} (the file changed?)",
            offset=offset,
        )


class RecordBatchFileReader(RecordBatchReader):
    """Reads the IPC file format: footer, dictionaries, random access to batches
    (:meth:`get_batch`, ``len(reader)``); also a :class:`~quiver.batch.RecordBatchReader`
    (iteration, ``read_next_batch``, ``read_all``, ``read_pandas``)."""

    def __init__(
        self,
        source: Any,
        *,
        options: IpcReadOptions | None = None,
        memory_map: bool = False,
        filters: Any = None,
        **kwargs: Unpack[ReadOptionKeywords],
    ) -> None:
        self.options = read_options(options, kwargs, ReadKeywords)
        self._closed = False
        self._filters = normalize(filters)
        self._statistics: Any = None
        self._selection: Selection | None = None  # the filters' batches (scan.Selection)
        self._filter_columns: FilterColumns | None = None  # columns loaded for filters only
        whole, f, owns = _as_memory(source, memory_map)
        self._file = f if owns else None
        self._owns = owns
        if whole is None and not (hasattr(f, "seekable") and f.seekable()):
            whole = memoryview(f.read())  # a pipe: the footer is at the end, read it all
        self._src = _RandomAccess(whole, f, threads=self.options.use_threads)
        self._decoder = FileDecoder(self.options)
        try:
            self._read_footer()
        except BaseException:
            self.close()  # a file this reader opened is not left open by a bad footer
            raise

    def _read_footer(self) -> None:
        """Hand the decoder the bytes it asks for: the header, the trailer, the footer,
        then the dictionary blocks in footer order."""
        src = self._src
        self._footer = self._decoder.open(src.read, src.size)
        if self._filters:
            extra = FilterColumns(self._footer.schema.schema, self.options.columns,
                                  self._filters)
            if extra.load is not None:  # the filter's columns loaded too, dropped after
                self._decoder.project(extra.load)
                self._filter_columns = extra
        self._decoder.schema  # noqa: B018  (the projection and the types checked now)
        self._before_dictionaries()
        self._decoder.read_dictionaries(src.read)
        self._next_index = 0

    def _before_dictionaries(self) -> None:
        """Called once the footer is read, before the dictionary blocks are (a remote
        reader fetches them together here)."""

    def _raw(self, block: md.Block, index: int, what: str) -> RawMessage:
        """One block's message, read and decoded (the decoder checks the block)."""
        dec = self._decoder
        return dec.message(self._src.read(*dec.block_range(block, index, what)), block,
                           index, what)

    @property
    def schema(self) -> t.Schema:
        """The file's (projected) schema."""
        extra = self._filter_columns
        return self._decoder.schema if extra is None else extra.narrow_schema(
            self._decoder.schema)

    @property
    def schema_message(self) -> md.SchemaMessage:
        """The footer's schema message (dictionary ids, endianness)."""
        return self._footer.schema

    @property
    def metadata(self) -> t.KeyValueMetadata | None:
        """The footer's custom metadata."""
        return self._footer.custom_metadata

    @property
    def footer(self) -> md.Footer:
        """The decoded footer (blocks, version)."""
        return self._footer

    @property
    def num_record_batches(self) -> int:
        """How many record batches the footer lists."""
        return len(self._footer.record_batches)

    def __len__(self) -> int:
        return len(self._footer.record_batches)

    def get_batch(self, i: int) -> RecordBatch:
        """The ``i``-th record batch (random access)."""
        return self.get_batch_with_custom_metadata(i)[0]

    get_record_batch = get_batch

    def get_batch_with_custom_metadata(
        self, i: int
    ) -> tuple[RecordBatch, t.KeyValueMetadata | None]:
        """The ``i``-th batch and its message's custom metadata (one read of the block)."""
        batch, metadata = self._load_batch(i)
        extra = self._filter_columns
        return (batch if extra is None else extra.narrow(batch)), metadata

    def _load_batch(self, i: int) -> tuple[RecordBatch, t.KeyValueMetadata | None]:
        """The ``i``-th batch as loaded (with any columns loaded for the filters only)
        and its message's custom metadata."""
        if self._closed:
            raise _closed_error()
        n = self.num_record_batches
        if not isinstance(i, int) or not -n <= i < n:
            raise E.ArrowIndexError(f"expected a batch index below {n}, found {i!r}")
        i = i + n if i < 0 else i
        src = self._src
        return self._decoder.read_batch(i, src.read, src.read_into if src.positional else None)

    @property
    def statistics(self) -> Any:
        """Each record batch's statistics from the footer (a
        :class:`~quiver.ipc.statistics.FileStatistics`: a sequence of
        :class:`~quiver.ipc.statistics.BatchStatistics`, and arrays per column), or None
        when the file has none.  ``statistics_array()`` gives them as Arrow data."""
        if self._statistics is None:
            value = footer_value(self._footer.custom_metadata)
            if value is None:
                return None
            limit = self.options.limits.max_metadata_size
            self._statistics = decode_statistics(value, limit)
        return self._statistics

    def statistics_array(self) -> Any:
        """The footer's statistics as the standard statistics batches (one per record
        batch, columns ``column`` and ``statistics``), or None."""
        value = footer_value(self._footer.custom_metadata)
        if value is None:
            return None
        stream = statistics_stream(value, self.options.limits.max_metadata_size)
        return list(open_stream(stream, limits=self.options.limits))

    @property
    def batches_skipped(self) -> int:
        """Batches the filters' footer statistics ruled out, passed over unread so far."""
        return 0 if self._selection is None else self._selection.skipped

    def _selected(self, start: int) -> Iterator[tuple[int, RecordBatch]]:
        """(index, batch) from ``start`` on; with filters, batches the statistics rule
        out are skipped unread, those they prove to match throughout kept whole, and the
        others filtered row by row (:class:`~quiver.ipc.scan.Selection`)."""
        n = self.num_record_batches
        if not self._filters:
            for i in range(start, n):
                yield i, self.get_batch(i)
            return
        if self._selection is None:
            self._selection = Selection(
                self._filters, self._footer, self._decoder.schema,
                max_size=self.options.limits.max_metadata_size, decoded=self._statistics,
                stacklevel=3)
        extra = self._filter_columns
        for i, batch in self._selection.batches(lambda i: self._load_batch(i)[0], start, n):
            yield i, (batch if extra is None else extra.narrow(batch))

    def __iter__(self) -> Iterator[RecordBatch]:
        for _, batch in self._selected(0):
            yield batch

    def read_next_batch(self) -> RecordBatch:
        """The batch after the last one this method returned; StopIteration at the end."""
        for i, batch in self._selected(self._next_index):
            self._next_index = i + 1
            return batch
        self._next_index = self.num_record_batches
        raise StopIteration

    def read_all(self) -> Table:
        """All batches as a Table."""
        return Table.from_batches(list(self), schema=self.schema)

    def __del__(self) -> None:
        # a reader dropped unclosed closes the file it opened (no ResourceWarning)
        with contextlib.suppress(Exception):
            self.close()

    def close(self) -> None:
        """Release the source (closes a file this reader opened); reading afterwards is
        an error."""
        self._closed = True
        # a path's map or file: let it go (batches keep their own views)
        if getattr(self, "_owns", False):
            self._src = _RandomAccess(memoryview(b""), None)
        if getattr(self, "_file", None) is not None:
            try:
                self._file.close()
            finally:
                self._file = None

    def __enter__(self) -> RecordBatchFileReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@spell_out(ReadKeywords, memory_map=None)
def open_stream(source: Any, **kw: Unpack[ReadKeywords]) -> RecordBatchStreamReader:
    """Open an IPC stream from a path, a bytes-like object or a binary file object.

    ``columns``: names or indices to read, in that order (others are skipped undecoded);
    ``validate``: ``"structural"`` (default) or ``"full"``; ``limits``: an
    :class:`IpcLimits` for untrusted input; ``memory_map``: map a path instead of reading
    it (by default a regular file is mapped, anything else read; False reads a file
    too); ``ensure_native_endian`` and ``use_threads`` as in :class:`IpcReadOptions`
    (or pass ``options``, not both).

    >>> import quiver as qv
    >>> from quiver.ipc import BufferOutputStream, new_stream
    >>> sink = BufferOutputStream()
    >>> with new_stream(sink, qv.schema([("a", qv.int8()), ("b", qv.string())])) as w:
    ...     w.write_batch(qv.record_batch({"a": qv.array([1], qv.int8()), "b": ["x"]}))
    >>> open_stream(sink.getvalue(), columns=["b", "a"]).read_all().to_pydict()
    {'b': ['x'], 'a': [1]}
    """
    return RecordBatchStreamReader(source, **kw)


@spell_out(ReadKeywords, memory_map=False)
def open_file(
    source: Any, *, filters: Any = None, **kw: Unpack[ReadKeywords]
) -> RecordBatchFileReader:
    """Open an IPC file from a path (optionally memory-mapped), bytes or a seekable file
    object; the keywords are those of :func:`open_stream`.  ``filters`` (as in
    ``pyarrow.parquet.read_table``, see :mod:`quiver.filters`) makes iteration and
    ``read_all`` return only matching rows, skipping unread the batches whose footer
    statistics rule them out.

    >>> import quiver as qv
    >>> from quiver.ipc import BufferOutputStream, IpcLimits, new_file
    >>> sink = BufferOutputStream()
    >>> with new_file(sink, qv.schema([("a", qv.int64())])) as w:
    ...     w.write_batch(qv.record_batch({"a": [1, 2]}))
    >>> reader = open_file(sink.getvalue(), limits=IpcLimits(max_body_size=1 << 20))
    >>> len(reader), reader.get_batch(0).num_rows
    (1, 2)
    """
    return RecordBatchFileReader(source, filters=filters, **kw)


def read_table(
    source: Any,
    *,
    columns: Sequence[int | str] | None = None,
    filters: Any = None,
    memory_map: bool = True,
    validate: str | None = None,
) -> Table:
    """A whole IPC file or stream (told apart by its bytes) as a Table, optionally
    projected and filtered as ``pyarrow.parquet.read_table(columns=, filters=)`` does.

    >>> import quiver as qv
    >>> from quiver.ipc import BufferOutputStream, new_file
    >>> sink = BufferOutputStream()
    >>> with new_file(sink, qv.schema([("a", qv.int64())])) as w:
    ...     w.write_batch(qv.record_batch({"a": [1, 5, 9]}))
    >>> read_table(sink.getvalue(), filters=[("a", ">", 2)]).column("a").to_pylist()
    [5, 9]
    """
    if isinstance(source, (str, os.PathLike)) and hasattr(os, "pread"):  # (one call)
        fd = os.open(source, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        try:
            head = os.pread(fd, len(MAGIC), 0)
        except OSError as exc:  # (a directory: name it, as open() would)
            raise type(exc)(exc.errno, exc.strerror, os.fspath(source)) from None
        finally:
            os.close(fd)
    else:
        whole, f, owns = _as_memory(source, False)
        try:
            head = bytes(whole[: len(MAGIC)]) if whole is not None else f.read(len(MAGIC))
            if whole is None and hasattr(f, "seek"):
                f.seek(0)
        finally:
            if owns and f is not None:  # (a path, where os.pread is missing)
                f.close()
    kw: ReadKeywords = {"columns": columns, "validate": validate, "memory_map": memory_map}
    if head == MAGIC:
        with open_file(source, filters=filters, **kw) as reader:
            return reader.read_all()
    with RecordBatchStreamReader(source, filters=filters, **kw) as reader:
        return reader.read_all()


def read_schema(source: Any) -> t.Schema:
    """The schema of an IPC stream or file."""
    whole, f, owns = _as_memory(source, False)
    try:
        if whole is None:
            whole = memoryview(f.read())
        if bytes(whole[:6]) == MAGIC:
            return RecordBatchFileReader(whole).schema
        return RecordBatchStreamReader(whole).schema
    finally:
        if owns and f is not None:
            f.close()

