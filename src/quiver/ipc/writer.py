"""Stream and file writers (Columnar spec, "IPC Streaming Format" and "IPC File Format").

A writer emits the DictionaryBatch messages a batch needs (new, delta or replacement, see
:class:`~quiver.ipc.dictionaries.DictionaryWriter`), then the RecordBatch message, and
hands the framed metadata and the buffer views (never concatenated) to the sink: a small
message in one write, a large one piece by piece.  Data is always written in
little-endian order, metadata version V5 by default.

Per schema, the writer compiles once what every batch needs
(:func:`~quiver.ipc.body.compile_write_plan`): a quiver RecordBatch of plain leaf
columns is flattened and laid out in one pass (:func:`~quiver.ipc.body.assemble_body`),
and its metadata comes from a :class:`~quiver.ipc.metadata.RecordBatchTemplate` with the
framing prefix included, filled by one ``struct.pack``.  Compression, custom metadata,
view types, empty bodies and objects that are not quiver RecordBatches take the general
walk and builder, which write the same bytes.
"""

from __future__ import annotations

import contextlib
import io
import mmap
import os
import struct
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import errors as E
from .. import types as t
from ..batch import RecordBatch
from ..buffers import nbytes_of
from . import metadata as md
from .body import V4, V5, Assembled, assemble, assemble_body, compile_write_plan, layout_body
from .dictionaries import DictionaryWriter
from .framing import EOS, FILE_HEADER, MAGIC, frame_message

_CODECS = md.CODEC_ALIASES  # the one codec-name table (quiver.ipc.metadata.model)
_SMALL_WRITE = 64 * 1024
# compressed batches of at least this many raw bytes, to a real file with threads, are
# written as the pool compresses them (_Writer._write_pipelined)
_PIPELINE_FROM = 4 << 20
_ZEROS = bytes(8)
# BufferOutputStream's memory from _MAP_FROM bytes on: private (a shared anonymous map
# cannot grow: touching the grown part raises SIGBUS), grown in place only where
# mmap.resize is mremap (Linux)
_MAP_FROM = 1024 * 1024
_MAP_FLAGS = {"flags": mmap.MAP_PRIVATE} if hasattr(mmap, "MAP_PRIVATE") else {}
_GROW_IN_PLACE = sys.platform.startswith("linux") and bool(_MAP_FLAGS)
_MADV_HUGEPAGE = getattr(mmap, "MADV_HUGEPAGE", None)


@dataclass(frozen=True, slots=True)
class IpcWriteOptions:
    """Writer options.

    ``compression``: None, ``"lz4"`` (LZ4 frame) or ``"zstd"``; ``compression_level``: the
    codec's level (None: its default); ``emit_dictionary_deltas``: write a delta when a
    dictionary grows by appending (otherwise a replacement, streams only);
    ``unify_dictionaries``: in the file format, where a replacement would be needed,
    extend the dictionary with a delta instead and re-encode the batch's indices
    (dictionary columns, and dictionaries nested in lists, structs, maps or unions; not
    those inside another dictionary's values);
    ``use_threads``: compress buffers on a thread pool; ``metadata_version``: ``"V5"``
    (default) or ``"V4"``.
    """

    compression: str | None = None
    compression_level: int | None = None
    emit_dictionary_deltas: bool = False
    unify_dictionaries: bool = False
    use_threads: bool = True
    metadata_version: str = "V5"

    def __post_init__(self) -> None:
        if self.compression is not None:
            name = self.compression.lower() if isinstance(self.compression, str) else None
            if name not in _CODECS:
                raise E.ArrowInvalidArgument(
                    f"expected compression None, 'lz4' or 'zstd' (any case), found "
                    f"{self.compression!r}"
                )
            object.__setattr__(self, "compression", name)
        if self.metadata_version not in ("V4", "V5"):
            raise E.ArrowInvalidArgument(
                f"expected metadata_version 'V4' or 'V5', found {self.metadata_version!r}"
            )


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


class _Sink:
    def __init__(self, sink: Any) -> None:
        if isinstance(sink, (str, os.PathLike)):
            self._f = open(sink, "wb")  # noqa: SIM115 - closed in close()
            self._owns = True
        elif isinstance(sink, io.TextIOBase):
            raise E.ArrowTypeError(
                f"expected a binary file object as sink, found a text-mode "
                f"{type(sink).__name__} ({getattr(sink, 'name', '?')!r}); write to its "
                ".buffer (sys.stdout.buffer for standard output)"
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
            self._write_all(data)
            self.position += n

    def _write_all(self, data: Any) -> None:
        # buffered files write everything or raise; a raw file (io.FileIO, buffering=0)
        # may write less, and says how much
        done = self._f.write(data)
        if done is not None and done < nbytes_of(data):
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
        if body_length < _SMALL_WRITE:
            self._write_all(b"".join(parts) if len(parts) > 1 else parts[0])
        else:
            for p in parts:
                self._write_all(p)
        self.position += len(parts[0]) + body_length

    def close(self) -> None:
        if self._owns:
            self._f.close()
        elif hasattr(self._f, "flush"):
            self._f.flush()


def _as_schema(schema: Any) -> t.Schema:
    """A quiver Schema from a quiver Schema or any object speaking ``__arrow_c_schema__``
    (a pyarrow, polars or nanoarrow schema, or a batch or table whose schema is meant)."""
    if isinstance(schema, t.Schema):
        return schema
    if hasattr(schema, "__arrow_c_schema__") or type(schema).__name__ == "PyCapsule":
        from ..interop import import_schema

        return import_schema(schema)
    raise E.ArrowTypeError(
        f"expected a quiver Schema or an object with __arrow_c_schema__ (a pyarrow or polars "
        f"schema), found {type(schema).__name__}"
    )


def _is_arrow_data(obj: Any, method: str) -> bool:
    """Whether ``obj`` speaks the PyCapsule protocol method ``method`` and is not one of
    quiver's own objects (which are written directly, without a round trip through C)."""
    return hasattr(obj, method) and not type(obj).__module__.startswith("quiver.")


def _columns_of(batch: Any) -> tuple[t.Schema, list[Any]]:
    schema = getattr(batch, "schema", None)
    columns = getattr(batch, "columns", None)
    if schema is None or columns is None:
        raise E.ArrowTypeError(
            f"expected a quiver RecordBatch, found {type(batch).__name__}"
        )
    return schema, list(columns)


def _general_plan(num_columns: int) -> tuple[tuple[int, int], ...]:
    """A write plan that sends every column through the general walk (for objects that
    are not quiver RecordBatches, whose columns' types the writer cannot vouch for)."""
    return ((0, 0),) * num_columns


def _plain_header(
    length: int, nodes: list[int], specs: list[int], variadic: list[int]
) -> md.RecordBatch:
    """An uncompressed RecordBatch header from :func:`assemble_body`'s flat lists."""
    return md.RecordBatch(
        length,
        np.array(nodes, dtype="<i8").reshape(-1, 2),
        np.array(specs, dtype="<i8").reshape(-1, 2),
        None,
        tuple(variadic),
    )


class _Writer:
    def __init__(
        self,
        sink: Any,
        schema: Any,
        options: IpcWriteOptions,
        *,
        file_format: bool,
        metadata: Any = None,
    ) -> None:
        schema = _as_schema(schema)
        self.schema = schema
        self.options = options
        self.file_format = file_format
        self.version = V5 if options.metadata_version == "V5" else V4
        self._sink = _Sink(sink)
        self._dicts = DictionaryWriter(
            schema,
            file_format=file_format,
            emit_deltas=options.emit_dictionary_deltas,
            unify=options.unify_dictionaries,
        )
        self._codec = _CODECS[options.compression] if options.compression else None
        self._closed = False
        self._dict_blocks: list[md.Block] = []
        self._batch_blocks: list[md.Block] = []
        self._footer_metadata = t.KeyValueMetadata(metadata) if metadata else None
        self._statistics: Any = None  # a StatisticsCollector (files only)
        self._plan = compile_write_plan(schema)
        self._last_template: md.RecordBatchTemplate | None = None
        self._importer: Any = None  # interop.import_.BatchImporter, for producers' batches
        if file_format:
            self._sink.write(FILE_HEADER)
        schema_msg = md.SchemaMessage(schema, self._dicts.ids, "little", ())
        self._write_message(md.Message(self.version, schema_msg, 0, None), [None], 0)

    # -- message output --------------------------------------------------------------

    def _write_message(self, message: md.Message, parts: list[Any], body_length: int) -> md.Block:
        """Frame and write ``message``; ``parts[0]`` is a placeholder for its metadata."""
        start = self._sink.position
        framed = frame_message(md.encode_message(message))
        parts[0] = framed
        self._sink.write_message(parts, body_length)
        return md.Block(start, len(framed), body_length)

    def _template(self, num_nodes: int, num_buffers: int) -> md.RecordBatchTemplate:
        """The framed RecordBatch template for these counts (one per writer, usually)."""
        tmpl = self._last_template
        if tmpl is None or tmpl.num_nodes != num_nodes or tmpl.num_buffers != num_buffers:
            base = md.record_batch_template(self.version, num_nodes, num_buffers)
            # the flatbuffer is a multiple of 8 bytes, so the framing adds no padding after
            # it and its prefix depends on the size only
            framed = frame_message(bytes(base.size))
            tmpl = self._last_template = base.with_prefix(framed[: len(framed) - base.size])
        return tmpl

    def _record_batch_message(
        self, length: int, columns: list[Any]
    ) -> tuple[md.RecordBatch, list[Any], int]:
        """The RecordBatch header of ``columns`` (the general walk), the parts to write
        (``parts[0]`` a placeholder for the framed metadata) and the body length."""
        if self._codec is None:
            nodes, specs, parts, body_length, variadic = assemble_body(
                columns, _general_plan(len(columns)), self.version
            )
            return _plain_header(length, nodes, specs, variadic), parts, body_length
        return self._compressed_message(length, assemble(columns, self.version))

    def _compressed_message(
        self, length: int, flat: Assembled
    ) -> tuple[md.RecordBatch, list[Any], int]:
        """The RecordBatch header of an assembled batch, compressed, the parts to write
        (``parts[0]`` a placeholder for the framed metadata) and the body length."""
        from .compression import compress_buffers

        compressed = compress_buffers(
            self._codec,
            flat.buffers,
            level=self.options.compression_level,
            threads=self.options.use_threads,
        )
        specs, parts, body_length = layout_body(flat.buffers, compressed)
        return self._compressed_header(length, flat, specs), [None, *parts], body_length

    def _compressed_header(
        self, length: int, flat: Assembled, specs: np.ndarray
    ) -> md.RecordBatch:
        """The RecordBatch header of an assembled batch whose compressed buffers lie at
        ``specs`` (offset, length pairs)."""
        nodes = np.asarray(flat.nodes, dtype="<i8").reshape(-1, 2)
        return md.RecordBatch(
            length,
            nodes,
            specs,
            md.BodyCompression(self._codec),  # type: ignore[arg-type]
            tuple(flat.variadic_buffer_counts),
        )

    # -- public API ------------------------------------------------------------------

    def write_batch(self, batch: Any, custom_metadata: Any = None) -> None:
        """Write one record batch (and the dictionary batches it needs first): a quiver
        RecordBatch, or any object with ``__arrow_c_array__`` (a pyarrow RecordBatch, a
        struct array), taken zero-copy through the C data interface."""
        if self._closed:
            raise E.ArrowInvalidArgument("expected an open writer, found it closed")
        if type(batch) is not RecordBatch and _is_arrow_data(batch, "__arrow_c_array__"):
            importer = self._importer
            if importer is None:
                from ..interop.import_ import BatchImporter

                importer = self._importer = BatchImporter(self.schema)
            batch = importer(batch)  # views of the producer's buffers, no copy
        if type(batch) is RecordBatch:
            # a quiver RecordBatch's columns have its schema's types, so the writer's
            # compiled plan applies once the schemas agree
            schema = batch.schema
            columns = batch.columns
            plan = self._plan
        else:
            schema, columns = _columns_of(batch)
            plan = None
        if schema is not self.schema and not schema.equals(self.schema):
            raise E.ArrowInvalidArgument(
                f"expected batches of the writer's schema\n{self.schema}\nfound\n{schema}"
            )
        if self._dicts.ids:
            self._write_dictionaries(columns)
        num_rows = batch.num_rows
        if self._statistics is not None:
            self._statistics.add(columns, num_rows)
        md_custom = t.KeyValueMetadata(custom_metadata) if custom_metadata else None
        if self._codec is None:
            nodes, specs, parts, body_length, variadic = assemble_body(
                columns, plan or _general_plan(len(columns)), self.version
            )
            if body_length and not variadic and not custom_metadata:
                # the common case: the metadata from the template, in one pack
                sink = self._sink
                start = sink.position
                tmpl = self._template(len(nodes) >> 1, len(specs) >> 1)
                parts[0] = tmpl.encode(body_length, num_rows, nodes, specs)
                sink.write_message(parts, body_length)
                if self.file_format:
                    self._batch_blocks.append(md.Block(start, len(parts[0]), body_length))
                return
            header = _plain_header(num_rows, nodes, specs, variadic)
        else:
            flat = assemble(columns, self.version)
            if (
                self._sink.origin is not None
                and self.options.use_threads
                and num_rows > 0
                and sum(0 if b is None else b.nbytes for b in flat.buffers) >= _PIPELINE_FROM
            ):
                self._batch_blocks.append(self._write_pipelined(num_rows, flat, md_custom))
                return
            header, parts, body_length = self._compressed_message(num_rows, flat)
        msg = md.Message(self.version, header, body_length, md_custom)
        self._batch_blocks.append(self._write_message(msg, parts, body_length))

    def _write_pipelined(
        self, length: int, flat: Assembled, custom: t.KeyValueMetadata | None
    ) -> md.Block:
        """A large compressed batch to a real file, written as the pool compresses it.

        The metadata comes first in a message but holds every buffer's compressed offset
        and length, so it is written last: a placeholder of its size goes first (the size
        does not depend on those numbers: they are fixed-width structs), then each buffer
        as soon as it is compressed, while the pool compresses the next ones, then the
        metadata over the placeholder.  The bytes are the general path's.  Compressing and
        writing overlap, and each compressed buffer is let go once written (the
        benchmark's 5M-row batch: lz4 and zstd writes 6-7% faster to tmpfs, 3-4% to an
        ext4 disk, on 2 cores).
        """
        from .compression import compress_buffers_in_order, parts_length

        def framed(specs: np.ndarray, body_length: int) -> bytes:
            header = self._compressed_header(length, flat, specs)
            message = md.Message(self.version, header, body_length, custom)
            return frame_message(md.encode_message(message))

        # non-zero numbers: the builder leaves zero scalars out, which changes the size
        placeholder = framed(np.ones((len(flat.buffers), 2), dtype="<i8"), 1)
        size = len(placeholder)
        sink = self._sink
        start = sink.position
        # the real framing prefix, then zeros: if the writer dies before the metadata is
        # written, a reader finds a broken message there, not an end of stream (zeros)
        sink.write(placeholder[:8] + bytes(size - 8))
        rows: list[tuple[int, int]] = []
        pos = 0
        try:
            for parts in compress_buffers_in_order(
                self._codec,  # type: ignore[arg-type]
                flat.buffers,
                level=self.options.compression_level,
                threads=self.options.use_threads,
            ):
                n = parts_length(parts)  # no parts: an empty buffer
                rows.append((pos, n))
                for part in parts:
                    sink.write(part)
                pad = -n % 8
                sink.write(_ZEROS[:pad])
                pos += n + pad
            meta = framed(np.array(rows, dtype="<i8").reshape(-1, 2), pos)
            if len(meta) != size:
                raise AssertionError(
                    f"expected the RecordBatch metadata to keep its size {size}, found {len(meta)}"
                )
            sink.rewrite(start, meta)
        except BaseException:
            sink.cut(start)  # no half-written message stays in the file
            raise
        return md.Block(start, size, pos)

    def _write_dictionaries(self, columns: list[Any]) -> None:
        """The DictionaryBatch messages ``columns`` need first; unification may re-encode
        columns in place."""
        messages, recoded = self._dicts.batches_for(columns)
        for i, column in recoded.items():
            columns[i] = column
        for did, values, is_delta in messages:
            header, parts, body_length = self._record_batch_message(len(values), [values])
            msg = md.Message(self.version, md.DictionaryBatch(did, header, is_delta), body_length)
            self._dict_blocks.append(self._write_message(msg, parts, body_length))

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
        if not _is_arrow_data(table, "__arrow_c_stream__") and to_batches is not None:
            return to_batches()
        if _is_arrow_data(table, "__arrow_c_stream__"):
            from ..interop import import_stream

            return _stream_batches(import_stream(table))
        if hasattr(table, "read_next_batch") and isinstance(getattr(table, "schema", None),
                                                            t.Schema):
            return iter(table)  # a quiver reader
        if _is_arrow_data(table, "__arrow_c_array__"):
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
        if type(obj) is RecordBatch or _is_arrow_data(obj, "__arrow_c_array__"):
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
        self._sink.write(EOS)
        if self.file_format:
            schema_msg = md.SchemaMessage(self.schema, self._dicts.ids, "little", ())
            footer = md.Footer(
                self.version,
                schema_msg,
                tuple(self._dict_blocks),
                tuple(self._batch_blocks),
                self._footer_with_statistics(),
            )
            data = md.encode_footer(footer)
            self._sink.write(data)
            self._sink.write(struct.pack("<i", len(data)))
            self._sink.write(MAGIC)
        self._sink.close()

    def _footer_with_statistics(self) -> t.KeyValueMetadata | None:
        """The footer's custom metadata, with the batches' statistics when kept.  Any
        statistics carried over in the given metadata are dropped: they describe another
        file's batches, and a reader would skip batches by them."""
        meta = self._footer_metadata
        if meta is None and self._statistics is None:
            return None  # (without loading the statistics module)
        from .statistics import STATISTICS_KEY

        key = STATISTICS_KEY.encode()
        pairs = [(k, v) for k, v in (meta.items() if meta is not None else ()) if k != key]
        if self._statistics:
            pairs.append((key, self._statistics.encode().encode()))
        elif meta is not None and len(pairs) == len(meta.items()):
            return meta
        return t.KeyValueMetadata(pairs) if pairs else None

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
    """Writes the IPC stream format."""

    def __init__(
        self, sink: Any, schema: Any, *, options: IpcWriteOptions | None = None, **kw: Any
    ) -> None:
        super().__init__(sink, schema, _write_options(options, kw), file_format=False)


class RecordBatchFileWriter(_Writer):
    """Writes the IPC file format (footer with Blocks for random access); with
    ``statistics=True``, each batch's statistics go in the footer
    (:mod:`quiver.ipc.statistics`)."""

    def __init__(
        self,
        sink: Any,
        schema: Any,
        *,
        options: IpcWriteOptions | None = None,
        metadata: Any = None,
        statistics: bool = False,
        **kw: Any,
    ) -> None:
        super().__init__(
            sink, schema, _write_options(options, kw), file_format=True, metadata=metadata
        )
        if statistics:
            from .statistics import StatisticsCollector

            self._statistics = StatisticsCollector(self.schema)


def _write_options(options: IpcWriteOptions | None, kw: dict[str, Any]) -> IpcWriteOptions:
    if options is not None and kw:
        raise E.ArrowInvalidArgument(
            f"expected either options= or keyword options, found both ({sorted(kw)})"
        )
    return options if options is not None else IpcWriteOptions(**kw)


def _given(**kw: Any) -> dict[str, Any]:
    """The IpcWriteOptions keywords a caller gave (None means "not given")."""
    return {k: v for k, v in kw.items() if v is not None}


def new_stream(
    sink: Any,
    schema: Any,
    *,
    options: IpcWriteOptions | None = None,
    compression: str | None = None,
    compression_level: int | None = None,
    emit_dictionary_deltas: bool | None = None,
    unify_dictionaries: bool | None = None,
    use_threads: bool | None = None,
    metadata_version: str | None = None,
) -> RecordBatchStreamWriter:
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
    kw = _given(
        compression=compression,
        compression_level=compression_level,
        emit_dictionary_deltas=emit_dictionary_deltas,
        unify_dictionaries=unify_dictionaries,
        use_threads=use_threads,
        metadata_version=metadata_version,
    )
    return RecordBatchStreamWriter(sink, schema, options=options, **kw)


def new_file(
    sink: Any,
    schema: Any,
    *,
    options: IpcWriteOptions | None = None,
    metadata: Any = None,
    compression: str | None = None,
    compression_level: int | None = None,
    emit_dictionary_deltas: bool | None = None,
    unify_dictionaries: bool | None = None,
    use_threads: bool | None = None,
    metadata_version: str | None = None,
    statistics: bool = False,
) -> RecordBatchFileWriter:
    """A file writer to a path or binary file object; ``metadata`` becomes the footer's
    custom metadata.  ``schema`` and the other keywords are as for :func:`new_stream`;
    ``statistics=True`` keeps each batch's statistics in the footer, so that filtered
    reads skip batches (quiver.ipc.statistics; off by default while computing them costs
    more than a few percent of a write of small batches).

    >>> import pyarrow as pa
    >>> sink = BufferOutputStream()
    >>> batch = pa.record_batch({"a": [1, 2]})
    >>> with new_file(sink, batch.schema) as w:
    ...     w.write_batch(batch)
    >>> pa.ipc.open_file(sink.getvalue()).read_all().num_rows
    2
    """
    kw = _given(
        compression=compression,
        compression_level=compression_level,
        emit_dictionary_deltas=emit_dictionary_deltas,
        unify_dictionaries=unify_dictionaries,
        use_threads=use_threads,
        metadata_version=metadata_version,
    )
    return RecordBatchFileWriter(
        sink, schema, options=options, metadata=metadata, statistics=statistics, **kw
    )
