"""Reading an opened input for the commands: its schema message, and its record batches
one at a time (files through the sans-IO :class:`~quiver.ipc.file_decoder.FileDecoder` and
their footer, streams through :class:`~quiver.ipc.decoder.MessageDecoder` message by
message, so a pipe is read as it comes and the codec of the first batch is known)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .. import errors as E
from ..ipc import metadata as md
from ..ipc.decoder import END, NEED_DATA, MessageDecoder, RawMessage
from ..ipc.file_decoder import TRAILER_SIZE, FileDecoder
from ..ipc.framing import FILE_HEADER
from ._common import Input

_PIPE_READ = 1 << 16


class MessageReader:
    """The encapsulated messages of a stream (or of a file's stream part, from ``start``),
    read from an input's bytes or, for a pipe, as they arrive.  ``finished`` says whether
    the end-of-stream marker was seen."""

    def __init__(self, inp: Input, *, start: int = 0, limits: Any = None) -> None:
        kwargs = {} if limits is None else {"limits": limits}
        self._dec = MessageDecoder(base_offset=start, **kwargs)
        self._file = inp.stream
        # read1: whatever a pipe holds now (at least one byte), so that a batch is decoded
        # as soon as it has arrived rather than when 64 KiB have
        self._read = None if inp.stream is None else getattr(inp.stream, "read1", inp.stream.read)
        if inp.data is not None:
            self._dec.feed(inp.data[start:])
            self._dec.feed_eof()

    @property
    def finished(self) -> bool:
        """True once the end-of-stream marker was read."""
        return self._dec.finished

    @property
    def position(self) -> int:
        """The offset of the next byte to decode."""
        return self._dec.position

    def __iter__(self) -> Iterator[RawMessage]:
        dec = self._dec
        while True:
            raw = dec.next_message()
            if raw is END:
                return
            if raw is NEED_DATA:
                data = self._read(max(dec.bytes_needed, _PIPE_READ))
                if data:
                    dec.feed(data)
                else:
                    dec.feed_eof()
                continue
            yield raw


kind_of = md.header_name  # the spec's name of a message header


def open_file_decoder(data: Any, options: Any = None) -> FileDecoder:
    """A FileDecoder with its footer read from all of a file's bytes."""
    dec = FileDecoder(options)
    dec.check_header(data[:8])
    size = len(data)
    start, length = dec.footer_range(data[size - TRAILER_SIZE :] if size >= TRAILER_SIZE
                                     else b"", size)
    dec.read_footer(data[start : start + length], start)
    return dec


def block_bytes(dec: FileDecoder, data: Any, block: md.Block, index: int, what: str) -> Any:
    """The bytes of one footer block (a view of ``data``)."""
    offset, n = dec.block_range(block, index, what)
    return data[offset : offset + n]


@dataclass(frozen=True, slots=True)
class SchemaInfo:
    """The schema message of an input, where it was found, and the file footer if any."""

    message: md.SchemaMessage
    version: int
    footer: md.Footer | None = None
    warning: str | None = None


def _first_schema(messages: Iterator[RawMessage], reader: MessageReader
                  ) -> tuple[md.SchemaMessage, int]:
    for raw in messages:
        header = raw.message.header
        if not isinstance(header, md.SchemaMessage):
            raise E.FormatError(
                f"expected a Schema message first, found a {kind_of(header)} message",
                offset=raw.offset,
                message_index=raw.index,
            )
        return header, raw.message.version
    raise E.FormatError(
        "expected a Schema message at the start of the stream, found the end of the stream",
        offset=reader.position,
        message_index=0,
    )


def read_schema(inp: Input) -> SchemaInfo:
    """The schema message: from a file's footer (or, when the footer cannot be read, from
    the stream inside the file, with a warning), or from a stream's first message."""
    if inp.format == "stream":
        reader = MessageReader(inp)
        return SchemaInfo(*_first_schema(iter(reader), reader))
    data = inp.whole()
    try:
        footer = open_file_decoder(data).footer
        assert footer is not None
        return SchemaInfo(footer.schema, footer.version, footer)
    except E.ArrowError as exc:
        try:
            reader = MessageReader(inp, start=len(FILE_HEADER))
            schema_msg, version = _first_schema(iter(reader), reader)
        except E.ArrowError:
            raise exc from None
        return SchemaInfo(schema_msg, version, None,
                          f"the footer cannot be read ({exc}); schema from the first message "
                          "(quiver recover saves the batches)")


@dataclass
class Batches:
    """The record batches of an input, read one at a time as :meth:`__iter__` goes.

    ``compression`` is the codec of the first record batch (known once it is read, before
    it is yielded); ``footer_metadata`` the file footer's custom metadata.
    """

    schema: Any
    schema_message: md.SchemaMessage
    version: int
    batches: Iterator[Any]
    compression: str | None = None
    footer_metadata: Any = None
    position: int = 0  # the input offset read up to, for progress bars
    message_index: int | None = None  # that of the last batch read, for errors
    warning: str | None = None  # a file read without its footer says so here

    def __iter__(self) -> Iterator[Any]:
        return self.batches


def open_batches(
    inp: Input, *, columns: Sequence[str] | None = None, validate: str = "structural",
    without_footer: bool = False,
) -> Batches:
    """The record batches of a file (by its footer) or stream (as it comes).

    With ``without_footer``, a file whose footer cannot be read is read through the stream
    inside it (every file holds one), and ``warning`` says so."""
    from ..ipc.options import IpcReadOptions

    options = IpcReadOptions(columns=columns, validate=validate)
    if inp.format == "file":
        data = inp.whole()
        try:
            dec = open_file_decoder(data, options)
        except E.ArrowError as exc:
            if not without_footer:
                raise
            out = _stream_open(MessageReader(inp, start=len(FILE_HEADER)), options)
            out.warning = (f"the footer cannot be read ({exc}); read the stream inside the "
                           "file instead (quiver recover IN OUT writes a valid file)")
            return out
        footer = dec.footer
        assert footer is not None
        out = Batches(dec.schema, footer.schema, footer.version, iter(()),
                      footer_metadata=footer.custom_metadata)
        if dec.record_batches:
            first = dec.message(
                block_bytes(dec, data, dec.record_batches[0], 0, "record batch"),
                dec.record_batches[0], 0,
            )
            header = first.message.header
            if isinstance(header, md.RecordBatch) and header.compression is not None:
                out.compression = header.compression.codec
        out.batches = _file_batches(dec, data, out)
        return out
    return _stream_open(MessageReader(inp), options)


def _stream_open(reader: MessageReader, options: Any) -> Batches:
    from ..ipc.batch_loader import BatchLoader

    messages = iter(reader)
    schema_msg, version = _first_schema(messages, reader)
    loader = BatchLoader(schema_msg, options, file_format=False)
    out = Batches(loader.schema, schema_msg, version, iter(()))
    out.batches = _stream_batches(messages, loader, out)
    return out


def _renumbered(exc: E.ArrowError, block: int, message_index: int) -> E.ArrowError:
    """``exc`` with the message index the stream inside the file gives (as inspect,
    validate and recover say), where the decoder gave the block's index or none."""
    if exc.message_index in (None, block):
        exc.message_index = None
        exc.locate(message_index=message_index)
    return exc


def _file_batches(dec: FileDecoder, data: Any, out: Batches) -> Iterator[Any]:
    for i, block in enumerate(dec.dictionaries):
        try:
            dec.read_dictionary(i, block_bytes(dec, data, block, i, "dictionary"))
        except E.ArrowError as exc:
            raise _renumbered(exc, i, dec.message_index(block.offset)) from None
    for i, block in enumerate(dec.record_batches):
        out.position = block.offset + block.meta_data_length + block.body_length
        out.message_index = dec.message_index(block.offset)
        try:
            # yielded without a local name, so that this frame does not hold the batch
            # while the next one is read
            yield dec.read_record_batch(i, block_bytes(dec, data, block, i, "record batch"))
        except E.ArrowError as exc:
            raise _renumbered(exc, i, out.message_index) from None


def _stream_batches(messages: Iterator[RawMessage], loader: Any, out: Batches) -> Iterator[Any]:
    seen_batch = False
    for raw in messages:
        header = raw.message.header
        if isinstance(header, md.DictionaryBatch):
            loader.dictionary(raw)
        elif isinstance(header, md.RecordBatch):
            if not seen_batch:
                seen_batch = True
                out.compression = None if header.compression is None else header.compression.codec
            out.position = raw.body_offset + len(raw.body)
            out.message_index = raw.index
            yield loader.record_batch(raw)  # no local name: see _file_batches
        else:
            raise E.FormatError(
                f"expected a DictionaryBatch or RecordBatch message, found a "
                f"{kind_of(header)} message",
                offset=raw.offset,
                message_index=raw.index,
            )
