"""The sans-IO encoder (Columnar spec, "IPC Streaming Format" and "IPC File Format").

Theory of operation
-------------------
An encoder turns a schema, record batches and the end into the bytes of an IPC stream or
file, and writes nothing itself (as h11's ``send(event) -> bytes``): each call returns a
list of bytes-like parts (``bytes``, ``memoryview``, numpy arrays) to be written in order.
Joined, the parts of ``begin()``, every ``write_batch()`` and ``end()`` are exactly what
:class:`~quiver.ipc.writer.RecordBatchStreamWriter` and
:class:`~quiver.ipc.writer.RecordBatchFileWriter` write, which are loops over these
classes.  The parts are views of the batches' buffers, never concatenated: they are
valid while the batch is alive (``b"".join(parts)`` makes one ``bytes``).

The calls go in order: ``begin()`` (the file magic and the Schema message), any number
of ``write_batch()`` (the DictionaryBatch messages the batch needs, new, delta or
replacement, see :class:`~quiver.ipc.dictionaries.DictionaryWriter`, then the RecordBatch
message), then ``end()`` (end of stream; for a file the Footer, whose Blocks the encoder
has counted itself from the sizes it gave out, its length and the magic).  A call out of
order raises :class:`~quiver.errors.ArrowInvalidArgument` and changes nothing.

Per schema, the encoder compiles once what every batch needs
(:func:`~quiver.ipc.body.compile_write_plan`): a quiver RecordBatch of plain leaf columns
is laid out in one pass (:func:`~quiver.ipc.body.assemble_body`) and its metadata comes
from a :class:`~quiver.ipc.metadata.RecordBatchTemplate` with the framing prefix
included, filled by one ``struct.pack``.  Compression, custom metadata, view types,
empty bodies and objects that are not quiver RecordBatches take the general walk and
builder, which give the same bytes.

>>> import quiver as qv, quiver.ipc as ipc
>>> batch = qv.record_batch({"a": qv.array([1, 2, 3])})
>>> enc = ipc.FileEncoder(batch.schema)  # the file format's, in ipc.file_encoder
>>> parts = enc.begin() + enc.write_batch(batch) + enc.end()
>>> data = b"".join(parts)
>>> len(data) == enc.position, ipc.open_file(data).get_batch(0).to_pylist()[2]
(True, {'a': 3})
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict, Unpack

import numpy as np

from .. import errors as E
from .. import types as t
from .._keywords import options_from
from ..batch import RecordBatch
from . import metadata as md
from .body import V4, V5, Assembled, assemble, assemble_body, compile_write_plan, layout_body
from .dictionaries import DictionaryWriter
from .framing import EOS, FILE_HEADER, frame_message

_CODECS = md.CODEC_ALIASES  # the one codec-name table (quiver.ipc.metadata.model)
_ZEROS = bytes(8)
I32 = struct.Struct("<i")

#: one encoded message: the parts to write (``parts[0]`` the framed metadata, the rest
#: its body) and the body length
EncodedMessage = tuple[list[Any], int]


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


class WriteOptionKeywords(TypedDict, total=False):
    """The fields of :class:`IpcWriteOptions` as keywords (None: the field's default),
    which the encoders, the writers, ``new_stream`` and ``new_file`` take."""

    compression: str | None
    compression_level: int | None
    emit_dictionary_deltas: bool | None
    unify_dictionaries: bool | None
    use_threads: bool | None
    metadata_version: str | None


class WriteKeywords(WriteOptionKeywords, total=False):
    """The keywords of ``new_stream`` and ``new_file``: each field of
    :class:`IpcWriteOptions` on its own or all of them as ``options`` (not both)."""

    options: IpcWriteOptions | None


def write_options(options: IpcWriteOptions | None, kw: Mapping[str, Any]) -> IpcWriteOptions:
    """``options``, or options made of the keywords ``kw`` (not both; None values are
    left out, as not given)."""
    return options_from(options, kw, WriteKeywords, "a write keyword", IpcWriteOptions)


def as_schema(schema: Any) -> t.Schema:
    """A quiver Schema from a quiver Schema or any object speaking ``__arrow_c_schema__``
    (a pyarrow, polars or nanoarrow schema, or a batch or table whose schema is meant)."""
    if isinstance(schema, t.Schema):
        return schema
    if hasattr(schema, "__arrow_c_schema__") or type(schema).__name__ == "PyCapsule":
        from ..cdata.schema import import_schema

        return import_schema(schema)
    raise E.ArrowTypeError(
        f"expected a quiver Schema or an object with __arrow_c_schema__ (a pyarrow or polars "
        f"schema), found {type(schema).__name__}"
    )


def is_arrow_data(obj: Any, method: str) -> bool:
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
    are not quiver RecordBatches, whose columns' types the encoder cannot vouch for)."""
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


def _flatten(messages: list[EncodedMessage]) -> list[Any]:
    if len(messages) == 1:
        return messages[0][0]
    return [part for parts, _ in messages for part in parts]


class Encoder:
    """What the stream and file encoders share (see the module's theory of operation)."""

    file_format = False

    def __init__(self, schema: Any, options: IpcWriteOptions, metadata: Any = None) -> None:
        schema = as_schema(schema)
        self.schema = schema
        self.options = options
        self.version = V5 if options.metadata_version == "V5" else V4
        #: bytes given out so far (the offset of the next part in the output)
        self.position = 0
        self._dicts = DictionaryWriter(
            schema,
            file_format=self.file_format,
            emit_deltas=options.emit_dictionary_deltas,
            unify=options.unify_dictionaries,
        )
        self._codec = _CODECS[options.compression] if options.compression else None
        self._state = "new"  # -> "open" (begin) -> "ended" (end)
        self.dictionary_blocks: list[md.Block] = []
        self.record_batch_blocks: list[md.Block] = []
        self._footer_metadata = t.KeyValueMetadata(metadata) if metadata else None
        self._statistics: Any = None  # a StatisticsCollector (FileEncoder sets one)
        self._plan = compile_write_plan(schema)
        self._last_template: md.RecordBatchTemplate | None = None
        self._importer: Any = None  # interop.import_.BatchImporter, for producers' batches

    # -- the calls ------------------------------------------------------------------------

    def begin(self) -> list[Any]:
        """The start of the output: for a file its magic, then the Schema message."""
        if self._state != "new":
            raise E.ArrowInvalidArgument(
                f"expected begin() once, first, found the encoder {self._state}"
            )
        self._state = "open"
        parts: list[Any] = []
        if self.file_format:
            parts.append(FILE_HEADER)
            self.position = len(FILE_HEADER)
        schema_msg = md.SchemaMessage(self.schema, self._dicts.ids, "little", ())
        framed, _ = self._message(md.Message(self.version, schema_msg, 0, None), [None], 0)
        parts.append(framed[0])
        return parts

    def write_batch(self, batch: Any, custom_metadata: Any = None) -> list[Any]:
        """The messages of one record batch: the DictionaryBatch messages it needs first,
        then its RecordBatch message with ``custom_metadata``.  ``batch`` is a quiver
        RecordBatch or any object with ``__arrow_c_array__`` (a pyarrow RecordBatch, a
        struct array), taken zero-copy through the C data interface."""
        return _flatten(self.batch_messages(batch, custom_metadata))

    def end(self) -> list[Any]:
        """The end of the output: end of stream, and for a file the footer and magic."""
        self._check_open("end")
        self._state = "ended"
        self.position += len(EOS)
        return [EOS]

    def _check_open(self, call: str) -> None:
        if self._state != "open":
            state = "not begun" if self._state == "new" else "ended"
            raise E.ArrowInvalidArgument(
                f"expected {call}() between begin() and end(), found the encoder {state}"
            )

    # -- messages -------------------------------------------------------------------------

    def _message(self, message: md.Message, parts: list[Any], body_length: int) -> EncodedMessage:
        """Frame ``message`` into ``parts[0]`` (a placeholder) and count its bytes."""
        parts[0] = framed = frame_message(md.encode_message(message))
        self.position += len(framed) + body_length
        return parts, body_length

    def _template(self, num_nodes: int, num_buffers: int) -> md.RecordBatchTemplate:
        """The framed RecordBatch template for these counts (one per encoder, usually)."""
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

    def _columns(self, batch: Any) -> tuple[list[Any], Any, int]:
        """The columns of a batch of the encoder's schema, the write plan they take and
        the number of rows."""
        if type(batch) is not RecordBatch and is_arrow_data(batch, "__arrow_c_array__"):
            importer = self._importer
            if importer is None:
                from ..cdata.import_batch import BatchImporter

                importer = self._importer = BatchImporter(self.schema)
            batch = importer(batch)  # views of the producer's buffers, no copy
        if type(batch) is RecordBatch:
            # a quiver RecordBatch's columns have its schema's types, so the compiled plan
            # applies once the schemas agree
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
        return columns, plan, batch.num_rows

    def batch_messages(
        self, batch: Any, custom_metadata: Any = None, pipeline_from: int | None = None
    ) -> list[EncodedMessage | PipelinedBatch]:
        """The messages of one batch, each ``(parts, body_length)``: the dictionary batches
        it needs, then the record batch.  With ``pipeline_from`` (for an output that can
        go back and rewrite, such as a real file), a compressed record batch of at least
        that many raw bytes comes last as a :class:`PipelinedBatch` instead, whose body
        is compressed as it is written (with ``use_threads`` only)."""
        if self._state != "open":
            self._check_open("write_batch")
        if type(batch) is RecordBatch and batch.schema is self.schema:
            columns, plan, num_rows = batch.columns, self._plan, batch.num_rows
        else:
            columns, plan, num_rows = self._columns(batch)
        out: list[EncodedMessage | PipelinedBatch] = []
        if self._dicts.ids:
            out += self._dictionary_messages(columns)
        if self._statistics is not None:
            self._statistics.add(columns, num_rows)
        start = self.position
        md_custom = t.KeyValueMetadata(custom_metadata) if custom_metadata else None
        if self._codec is None:
            nodes, specs, parts, body_length, variadic = assemble_body(
                columns, plan or _general_plan(len(columns)), self.version
            )
            if body_length and not variadic and not custom_metadata:
                # the common case: the metadata from the template, in one pack
                tmpl = self._template(len(nodes) >> 1, len(specs) >> 1)
                parts[0] = head = tmpl.encode(body_length, num_rows, nodes, specs)
                self.position = start + len(head) + body_length
                if self.file_format:
                    self.record_batch_blocks.append(md.Block(start, len(head), body_length))
                out.append((parts, body_length))
                return out
            header = _plain_header(num_rows, nodes, specs, variadic)
        else:
            flat = assemble(columns, self.version)
            if (
                pipeline_from is not None
                and self.options.use_threads
                and num_rows > 0
                and sum(0 if b is None else b.nbytes for b in flat.buffers) >= pipeline_from
            ):
                out.append(PipelinedBatch(self, num_rows, flat, md_custom))
                return out
            header, parts, body_length = self._compressed_message(num_rows, flat)
        msg = md.Message(self.version, header, body_length, md_custom)
        out.append(self._message(msg, parts, body_length))
        if self.file_format:
            self.record_batch_blocks.append(md.Block(start, len(parts[0]), body_length))
        return out

    def _dictionary_messages(self, columns: list[Any]) -> list[EncodedMessage]:
        """The DictionaryBatch messages ``columns`` need first; unification may re-encode
        columns in place."""
        messages, recoded = self._dicts.batches_for(columns)
        for i, column in recoded.items():
            columns[i] = column
        out = []
        for did, values, is_delta in messages:
            start = self.position
            header, parts, body_length = self._record_batch_message(len(values), [values])
            msg = md.Message(self.version, md.DictionaryBatch(did, header, is_delta), body_length)
            out.append(self._message(msg, parts, body_length))
            if self.file_format:
                self.dictionary_blocks.append(md.Block(start, len(parts[0]), body_length))
        return out


class PipelinedBatch:
    """A large compressed record batch whose body is compressed as it is written.

    The metadata comes first in a message but holds every buffer's compressed offset and
    length, so it is known last: write :attr:`placeholder` (the real framing prefix, then
    zeros: if the writer dies before the metadata is written, a reader finds a broken
    message there, not an end of stream), then each part of :meth:`body` as it comes (the
    pool compresses the next buffers meanwhile), then :meth:`metadata` over the
    placeholder.  The bytes are the general path's.  The encoder counts the message (and
    its Block) only once :meth:`metadata` has returned, so a failed write leaves it as it
    was before the batch.
    """

    def __init__(
        self, encoder: Encoder, length: int, flat: Assembled, custom: t.KeyValueMetadata | None
    ) -> None:
        self._encoder = encoder
        self.length = length
        self._flat = flat
        self._custom = custom
        #: where the message starts in the output
        self.offset = encoder.position
        # non-zero numbers: the builder leaves zero scalars out, which changes the size
        framed = self._framed(np.ones((len(flat.buffers), 2), dtype="<i8"), 1)
        self.size = len(framed)
        self.placeholder = framed[:8] + bytes(self.size - 8)
        self._rows: list[tuple[int, int]] = []
        self._body_length = 0

    def _framed(self, specs: np.ndarray, body_length: int) -> bytes:
        enc = self._encoder
        header = enc._compressed_header(self.length, self._flat, specs)
        message = md.Message(enc.version, header, body_length, self._custom)
        return frame_message(md.encode_message(message))

    def body(self) -> Iterator[Any]:
        """The body's parts, each buffer compressed on the pool as the previous ones are
        written, and let go once written."""
        from .compression import compress_buffers_in_order, parts_length

        enc = self._encoder
        pos = 0
        for parts in compress_buffers_in_order(
            enc._codec,  # type: ignore[arg-type]
            self._flat.buffers,
            level=enc.options.compression_level,
            threads=enc.options.use_threads,
        ):
            n = parts_length(parts)  # no parts: an empty buffer
            self._rows.append((pos, n))
            yield from parts
            pad = -n % 8
            if pad:
                yield _ZEROS[:pad]
            pos += n + pad
        self._body_length = pos

    def metadata(self) -> bytes:
        """The framed metadata to write over the placeholder at :attr:`offset` (after the
        whole body); the encoder counts the message from here on."""
        meta = self._framed(np.array(self._rows, dtype="<i8").reshape(-1, 2), self._body_length)
        if len(meta) != self.size:
            raise AssertionError(
                f"expected the RecordBatch metadata to keep its size {self.size}, "
                f"found {len(meta)}"
            )
        enc = self._encoder
        enc.position = self.offset + self.size + self._body_length
        if enc.file_format:
            enc.record_batch_blocks.append(md.Block(self.offset, self.size, self._body_length))
        return meta


class StreamEncoder(Encoder):
    """Encodes the IPC stream format: ``begin()``, ``write_batch()``..., ``end()``, each
    returning the parts to write (see the module's theory of operation).

    >>> import quiver as qv, quiver.ipc as ipc
    >>> batch = qv.record_batch({"a": qv.array([1, 2])})
    >>> enc = StreamEncoder(batch.schema, compression="zstd")
    >>> data = b"".join(enc.begin() + enc.write_batch(batch) + enc.end())
    >>> ipc.open_stream(data).read_all().to_pydict()
    {'a': [1, 2]}
    """

    def __init__(
        self,
        schema: Any,
        *,
        options: IpcWriteOptions | None = None,
        **kw: Unpack[WriteOptionKeywords],
    ) -> None:
        super().__init__(schema, write_options(options, kw))


__all__ = [
    "IpcWriteOptions",
    "PipelinedBatch",
    "StreamEncoder",
]
