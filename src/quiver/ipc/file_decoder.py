"""The sans-IO file decoder (Columnar spec, "IPC File Format").

Theory of operation
-------------------
An IPC file is ``ARROW1`` and two bytes of padding, a stream (schema, dictionaries,
record batches, end of stream), the Footer flatbuffer, its int32 length and ``ARROW1``
again.  The Footer repeats the schema and lists a Block (offset, metaDataLength,
bodyLength) for every dictionary and record batch message, which is what makes random
access possible.

:class:`FileDecoder` never reads anything itself (as arrow-rs's ``FileDecoder``): the
caller reads the bytes it asks for and hands them over::

    size = <the file's size>
    dec = FileDecoder()
    dec.check_header(read_at(0, 8))
    start, length = dec.footer_range(read_at(size - TRAILER_SIZE, TRAILER_SIZE), size)
    dec.read_footer(read_at(start, length), start)
    for i, block in enumerate(dec.dictionaries):
        dec.read_dictionary(i, read_at(*dec.block_range(block, i, "dictionary")))
    batch = dec.read_record_batch(i, read_at(*dec.block_range(dec.record_batches[i], i)))

Every range it gives out has been checked to lie inside the file's data (between the
header and the footer), and every error names the byte offset and the block.  A block's
:class:`RawMessage` carries its block index; :meth:`FileDecoder.message_index` gives the
index the stream inside the file numbers its message with (as ``quiver inspect``,
``validate`` and ``recover`` do): the Schema message is 0, and a block's message comes
after the Schema and every footer block before it in file order.

>>> import quiver as qv, quiver.ipc as ipc
>>> sink = ipc.BufferOutputStream()
>>> batch = qv.record_batch({"a": qv.array([1, 2, 3])})
>>> with ipc.new_file(sink, batch.schema) as w:
...     w.write_batch(batch)
>>> data = sink.getvalue()
>>> dec = FileDecoder()
>>> dec.check_header(data[:8])
>>> start, length = dec.footer_range(data[-TRAILER_SIZE:], len(data))
>>> footer = dec.read_footer(data[start : start + length], start)
>>> offset, n = dec.block_range(footer.record_batches[0], 0)
>>> dec.read_record_batch(0, data[offset : offset + n]).to_pylist()
[{'a': 1}, {'a': 2}, {'a': 3}]
"""

from __future__ import annotations

import struct
import threading
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Unpack

from .. import errors as E
from . import metadata as md
from .decoder import DEFAULT_LIMITS, RawMessage
from .framing import (
    FILE_HEADER,
    FILE_TRAILER_SIZE,
    MAGIC,
    describe_foreign,
    parse_prefix,
)

if TYPE_CHECKING:
    import numpy as np

    from .. import types as t
    from .batch_loader import BatchLoader
    from .options import IpcReadOptions, ReadOptionKeywords
    from .plan import PlanNode

#: ``read(offset, n)``: ``n`` bytes of the file from ``offset`` (a view or a copy)
ReadAt = Callable[[int, int], Any]
#: ``read_into(offset, out)``: fill the numpy array ``out`` from ``offset``, or raise
ReadInto = Callable[[int, "np.ndarray"], None]

#: bytes at the end of a file that locate the footer: its int32 length and ``ARROW1``
TRAILER_SIZE = FILE_TRAILER_SIZE
#: the smallest well-formed file: header, an empty stream's EOS, a footer byte, trailer
MIN_FILE_SIZE = len(MAGIC) * 2 + 2 + 4

_I32 = struct.Struct("<i")

# record batch blocks from this size, when the caller can read into an array
# (``read_into``), have their metadata read first, and a compressed body is left for the
# decoders to read buffer by buffer (body.DeferredBody) ...
_DEFERRED_BODY = 1 << 20
# ... when its buffers average at least this size: each costs two positional reads (a
# 4,000-column batch of small buffers read 1.5x slower deferred, found in review)
_DEFERRED_BUFFER = 64 << 10

# decoded footers, by their bytes (and where they lie, and the limits they were decoded
# with): reopening a file decodes nothing again.  A Footer is immutable, so readers share
# it; only footers up to _FOOTER_CACHED bytes are kept, _FOOTERS_KEPT of them.
_FOOTERS: OrderedDict[tuple, md.Footer] = OrderedDict()
_FOOTERS_LOCK = threading.Lock()
_FOOTER_CACHED = 64 << 10
_FOOTERS_KEPT = 32


def forget_footers() -> None:
    """Drop the decoded footers kept for files read again: the next open decodes afresh
    (the schema plans kept for the old footers' schemas are never found again, and leave
    :func:`quiver.ipc.batch_loader.forget_plans`'s bounded table as newer ones come)."""
    with _FOOTERS_LOCK:
        _FOOTERS.clear()


def _decode_footer(data: Any, offset: int, limits: md.MetadataLimits) -> md.Footer:
    """:func:`metadata.decode_footer`, kept by the footer's bytes (see _FOOTERS)."""
    if len(data) > _FOOTER_CACHED:
        return md.decode_footer(data, base_offset=offset, limits=limits)
    key = (bytes(data), offset, limits)
    with _FOOTERS_LOCK:
        hit = _FOOTERS.get(key)
        if hit is not None:
            _FOOTERS.move_to_end(key)
            return hit
    footer = md.decode_footer(data, base_offset=offset, limits=limits)
    with _FOOTERS_LOCK:
        _FOOTERS[key] = footer
        while len(_FOOTERS) > _FOOTERS_KEPT:
            _FOOTERS.popitem(last=False)
    return footer


class FileDecoder:
    """Footer, blocks and messages of an IPC file, from bytes the caller reads."""

    def __init__(
        self, options: IpcReadOptions | None = None, **kwargs: Unpack[ReadOptionKeywords]
    ) -> None:
        if kwargs:
            from .options import read_options

            options = read_options(options, kwargs)
        # the options, the loader and the modules they need come when a batch is read: the
        # footer alone (``quiver schema``) needs only the metadata decoder
        self._options = options
        self.limits = DEFAULT_LIMITS if options is None else options.limits
        self._metadata_limits = self.limits.metadata_limits()
        self.footer: md.Footer | None = None
        self.data_end = 0
        self._batch_loader: BatchLoader | None = None
        self._block_order: list[int] | None = None  # every block's offset, sorted

    @property
    def options(self) -> IpcReadOptions:
        """The read options (columns, validation level, limits)."""
        if self._options is None:
            from .options import DEFAULT_OPTIONS

            self._options = DEFAULT_OPTIONS
        return self._options

    @property
    def _loader(self) -> BatchLoader:
        if self._batch_loader is None:
            from .batch_loader import BatchLoader, schema_plan

            footer = self._ready()
            options = self.options
            loader = BatchLoader(footer.schema, options, file_format=True,
                                 plan=schema_plan(footer.schema, options))
            if len(footer.record_batches) < 2:
                # the fast path pays off only over several batches, or over files of the
                # same footer read again (set up once, for the next reader)
                loader.steady_tries = 1 if loader.plan_reused else 0
            self._batch_loader = loader
        return self._batch_loader

    # -- the footer -----------------------------------------------------------------------

    @staticmethod
    def check_header(head: Any, *, hint_reader: bool = False) -> None:
        """Check the first bytes (at least 6) for the file magic ``ARROW1``.

        With ``hint_reader`` (the file reader), the error names ``open_stream`` for a
        stream and says what other bytes look like (from up to 32 bytes of ``head``, by
        :func:`~quiver.ipc.framing.describe_foreign`).

        >>> FileDecoder.check_header(b"\\xff\\xff\\xff\\xff\\x08\\x00\\x00\\x00")
        Traceback (most recent call last):
        ...
        quiver.errors.FramingError: expected the file magic b'ARROW1' at the start, \
found b'\\xff\\xff\\xff\\xff\\x08\\x00'; this looks like an IPC stream (at byte offset 0)
        """
        magic = bytes(head[: len(MAGIC)])
        if magic == MAGIC:
            return
        hint = ""
        if magic[:4] == b"\xff\xff\xff\xff":
            hint = "; this looks like an IPC stream"
            if hint_reader:
                hint += ": open it with quiver.ipc.open_stream"
        elif hint_reader:
            what = describe_foreign(bytes(head[:32]))
            if what is not None:
                hint = f": {what}"
        raise E.FramingError(
            f"expected the file magic b'ARROW1' at the start, found {magic!r}{hint}", offset=0
        )

    @staticmethod
    def check_size(size: int) -> None:
        """Refuse a file too short to hold a header, a footer and a trailer."""
        if size < MIN_FILE_SIZE:
            raise E.TruncatedError(
                f"expected an IPC file of at least {MIN_FILE_SIZE} bytes, found {size}",
                offset=0,
            )

    def footer_range(self, trailer: Any, size: int) -> tuple[int, int]:
        """``(offset, length)`` of the footer, from the file's last :data:`TRAILER_SIZE`
        bytes and its size."""
        self.check_size(size)
        trailer = bytes(trailer)
        if len(trailer) != TRAILER_SIZE:
            raise E.ArrowInvalidArgument(
                f"expected the last {TRAILER_SIZE} bytes of the file, found {len(trailer)}"
            )
        if trailer[4:] != MAGIC:
            raise E.FramingError(
                f"expected the file magic b'ARROW1' at the end, found {trailer[4:]!r} "
                "(truncated file, or a stream with a file header)",
                offset=size - len(MAGIC),
            )
        (length,) = _I32.unpack_from(trailer, 0)
        end = size - TRAILER_SIZE
        start = end - length
        if length <= 0 or start < len(FILE_HEADER):
            raise E.FramingError(
                f"expected a footer length between 1 and {end - len(FILE_HEADER)}, "
                f"found {length}",
                offset=end,
            )
        if length > self.limits.max_metadata_size:
            raise E.LimitExceeded(
                f"expected a footer of at most {self.limits.max_metadata_size} bytes "
                f"(IpcLimits.max_metadata_size), found {length}",
                offset=end,
            )
        return start, length

    def read_footer(self, data: Any, offset: int) -> md.Footer:
        """Decode the footer bytes found at ``offset`` (see :meth:`footer_range`)."""
        footer = _decode_footer(data, offset, self._metadata_limits)
        self.footer = footer
        self.data_end = offset
        self._batch_loader = None
        self._block_order = None
        return footer

    def open(self, read: ReadAt, size: int) -> md.Footer:
        """Check the header and the trailer and decode the footer of a file of ``size``
        bytes, reading through ``read(offset, n)``: three reads (32 bytes at the start,
        the trailer, the footer), each checked before the next is asked for."""
        self.check_size(size)
        self.check_header(read(0, min(size, 32)), hint_reader=True)
        start, length = self.footer_range(read(size - TRAILER_SIZE, TRAILER_SIZE), size)
        return self.read_footer(read(start, length), start)

    def read_dictionaries(self, read: ReadAt) -> None:
        """Read and apply every dictionary block, in footer order, through
        ``read(offset, n)`` (each range checked to lie in the file data first)."""
        for i, block in enumerate(self._ready().dictionaries):
            self.read_dictionary(i, read(*self.block_range(block, i, "dictionary")))

    def read_batch(self, index: int, read: ReadAt, read_into: ReadInto | None = None
                   ) -> tuple[Any, t.KeyValueMetadata | None]:
        """Record batch ``index`` (0 <= index < the footer's count) and its message's
        custom metadata, read through ``read(offset, n)``: the one path every file read
        takes.  A block shaped like the batches before it goes to the steady fast path
        (:mod:`quiver.ipc.steady`); with ``read_into`` (positional reads into an array)
        a large compressed body stays in the file for the decoders to read buffer by
        buffer; any other block is read whole.  The dictionaries must have been read."""
        footer = self._ready()
        block = footer.record_batches[index]
        loader = self._loader
        steady = loader.steady_path
        if steady is not None and block.meta_data_length == steady.head:
            buf = read(*self.block_range(block, index))
            got = steady.take(buf)
            if got is not None:
                return got[0], None
            raw = self.record_batch_message(index, buf)
        elif read_into is not None and block.body_length >= _DEFERRED_BODY:
            raw = self._deferred(block, index, read, read_into)
        else:
            raw = self.record_batch_message(index, read(*self.block_range(block, index)))
        return loader.record_batch(raw), raw.message.custom_metadata

    def _deferred(self, block: md.Block, index: int, read: ReadAt, read_into: ReadInto
                  ) -> RawMessage:
        """A large record batch block: the metadata is read now; a compressed body with
        large buffers is left in the file (:class:`~quiver.ipc.body.DeferredBody`), any
        other body is read whole."""
        from .batch_loader import DeferredBody

        self.block_range(block, index)
        raw = self.record_batch_message(index, read(block.offset, block.meta_data_length),
                                        body=False)
        header = raw.message.header
        length = raw.message.body_length
        if header.compression is not None and length >= _DEFERRED_BUFFER * len(header.buffers):
            body: Any = DeferredBody(read_into, raw.body_offset, length)
        else:
            body = read(raw.body_offset, length)
        return RawMessage(raw.index, raw.offset, raw.message, body, raw.body_offset, raw.metadata)

    def project(self, columns: Sequence[int | str] | None) -> None:
        """Read ``columns`` (names or indices of the footer's schema) instead of the
        options' columns; only before the dictionaries and batches are read (a reader
        with filters adds the filter's columns so)."""
        self._options = replace(self.options, columns=columns)
        self._batch_loader = None

    @property
    def columns(self) -> list[int] | None:
        """The indices of the columns read, in the order asked (None: all)."""
        return self._loader.columns

    @property
    def plan(self) -> list[PlanNode]:
        """The compiled read plan of the file's whole schema, one node per column."""
        return self._loader.plan

    @property
    def memo(self) -> Any:
        """The dictionaries read so far (a :class:`~quiver.ipc.dictionaries.DictionaryMemo`)."""
        return self._loader.memo

    def message_index(self, offset: int) -> int:
        """The index of the message of the block at ``offset`` in the stream inside the
        file: after the Schema message (0) and the footer's blocks before it."""
        order = self._block_order
        if order is None:
            footer = self._ready()
            order = []
            for blocks in (footer.dictionaries, footer.record_batches):
                offsets = getattr(blocks, "offsets", None)
                order += [b.offset for b in blocks] if offsets is None else offsets
            order.sort()
            self._block_order = order
        return 1 + bisect_left(order, offset)

    def _ready(self) -> md.Footer:
        if self.footer is None:
            raise E.ArrowInvalidArgument("expected read_footer() first, found no footer yet")
        return self.footer

    @property
    def schema(self) -> t.Schema:
        """The (projected) schema the batches are read with."""
        return self._loader.schema

    @property
    def dictionaries(self) -> tuple[md.Block, ...]:
        """The footer's dictionary Blocks, in file order."""
        return self._ready().dictionaries

    @property
    def record_batches(self) -> tuple[md.Block, ...]:
        """The footer's record batch Blocks."""
        return self._ready().record_batches

    # -- blocks ---------------------------------------------------------------------------

    def block_range(
        self, block: md.Block, index: int, what: str = "record batch"
    ) -> tuple[int, int]:
        """``(offset, length)`` of one block's message, checked to lie in the file data."""
        start = block.offset
        end = start + block.meta_data_length + block.body_length
        if (
            start < len(FILE_HEADER)
            or block.meta_data_length < 8
            or block.body_length < 0
            or end > self.data_end
        ):
            raise E.FramingError(
                f"expected {what} block {index} inside the file data "
                f"({len(FILE_HEADER)}..{self.data_end}), found offset {start}, "
                f"metaDataLength {block.meta_data_length}, bodyLength {block.body_length}",
                offset=start,
            )
        limits = self.limits
        if block.meta_data_length > limits.max_metadata_size + 8:
            raise E.LimitExceeded(
                f"expected metadata of at most {limits.max_metadata_size} bytes "
                f"(IpcLimits.max_metadata_size) in {what} block {index}, found "
                f"metaDataLength {block.meta_data_length}",
                offset=start,
            )
        if block.body_length > limits.max_body_size:
            raise E.LimitExceeded(
                f"expected a body of at most {limits.max_body_size} bytes "
                f"(IpcLimits.max_body_size) in {what} block {index}, found bodyLength "
                f"{block.body_length}",
                offset=start,
            )
        return start, block.meta_data_length + block.body_length

    def message(
        self,
        buf: Any,
        block: md.Block,
        index: int,
        what: str = "record batch",
        *,
        body: bool = True,
    ) -> RawMessage:
        """The message of one block from its bytes (``block_range`` long): framing and
        metadata checked against the block.  With ``body`` false, ``buf`` may hold just
        the block's metadata (``metaDataLength`` bytes) and the message's body is empty:
        the caller reads it from ``body_offset`` (``message.body_length`` bytes)."""
        if type(buf) is not memoryview:
            buf = memoryview(buf)
        if buf.ndim != 1 or buf.itemsize != 1:
            buf = buf.cast("B")
        start = block.offset
        meta_end = block.meta_data_length
        size = len(buf)
        if meta_end < 8 or size < 8:
            raise E.TruncatedError(
                f"expected {meta_end} bytes of metadata for {what} block {index}, "
                f"found {size}",
                offset=start,
            )
        # the prefix is parsed once and its claimed length checked against the block
        # before the metadata is sliced, so that a buffer of the block's metadata alone
        # (body=False) and one of the whole block fail alike
        try:
            prefix = parse_prefix(buf, 0)
        except E.ArrowError as exc:
            raise self._framing(exc, meta_end, what, index, start) from None
        length, prefix_size = prefix  # never None: ``buf`` holds at least 8 bytes
        stop = prefix_size + length
        if stop > meta_end:
            raise E.FramingError(
                f"expected the message prefix and metadata within the metaDataLength "
                f"{meta_end} of {what} block {index}, found a metadata length of {length}",
                offset=start + prefix_size - 4,
            )
        if stop > size:
            short = E.TruncatedError(
                f"expected {length} bytes of metadata, found {size - prefix_size}",
                offset=prefix_size,
            )
            raise self._framing(short, meta_end, what, index, start)
        meta = buf[prefix_size:stop]
        meta_start = start + prefix_size
        try:
            message = md.decode_message(
                meta, base_offset=meta_start, limits=self._metadata_limits
            )
        except E.ArrowError as exc:
            exc.locate(offset=meta_start)
            raise
        if message.body_length < 0 or message.body_length > block.body_length:
            raise E.FramingError(
                f"expected a message bodyLength of at most the block's {block.body_length}, "
                f"found {message.body_length}",
                offset=meta_start,
            )
        if not body:
            # metadata.decode_message has already refused versions other than V4 and V5
            return RawMessage(index, start, message, _EMPTY, start + meta_end, meta)
        if meta_end + message.body_length > size:
            raise E.TruncatedError(
                f"expected a body of {message.body_length} bytes in {what} block {index}, "
                f"found {max(size - meta_end, 0)}",
                offset=start + meta_end,
            )
        data = buf[meta_end : meta_end + message.body_length]
        return RawMessage(index, start, message, data, start + meta_end, meta)

    @staticmethod
    def _framing(exc: E.ArrowError, meta_end: int, what: str, index: int,
                 start: int) -> E.FramingError:
        return E.FramingError(
            f"expected the message prefix and metadata within the metaDataLength "
            f"{meta_end} of {what} block {index}, found: {exc.reason}",
            offset=start + (exc.offset or 0),
        )

    def read_dictionary(self, index: int, buf: Any) -> None:
        """Apply dictionary block ``index`` (its bytes, ``block_range`` long)."""
        block = self._ready().dictionaries[index]
        raw = self.message(buf, block, index, "dictionary")
        if not isinstance(raw.message.header, md.DictionaryBatch):
            raise _wrong_kind(raw, "dictionary")
        self._loader.dictionary(raw)

    def record_batch_message(self, index: int, buf: Any, *, body: bool = True) -> RawMessage:
        """Record batch block ``index``'s message, checked (its bytes, ``block_range``
        long; with ``body`` false just its metadata, see :meth:`message`)."""
        footer = self.footer
        if footer is None:
            footer = self._ready()
        raw = self.message(buf, footer.record_batches[index], index, "record batch", body=body)
        if not isinstance(raw.message.header, md.RecordBatch):
            raise _wrong_kind(raw, "record batch")
        return raw

    def load_record_batch(self, raw: RawMessage) -> Any:
        """The :class:`quiver.RecordBatch` of a message from :meth:`record_batch_message`
        (the dictionaries must have been read)."""
        return self._loader.record_batch(raw)

    def read_record_batch(self, index: int, buf: Any) -> Any:
        """Record batch block ``index`` as a :class:`quiver.RecordBatch` (its bytes,
        ``block_range`` long; the dictionaries must have been read)."""
        return self._loader.record_batch(self.record_batch_message(index, buf))


def _wrong_kind(raw: RawMessage, what: str) -> E.FormatError:
    kind = "DictionaryBatch" if what == "dictionary" else "RecordBatch"
    return E.FormatError(
        f"expected a {kind} message at {what} block {raw.index}, "
        f"found {type(raw.message.header).__name__}",
        offset=raw.offset,
    )


_EMPTY = memoryview(b"")


def block_ranges(footer: md.Footer) -> tuple[tuple[int, int], ...]:
    """Each record batch block's ``(start, end)`` byte range, in footer order (as the
    footer states them: a reader checks them against the file)."""
    found = footer.record_batches  # (decoded: Blocks, read here by its columns)
    return tuple((offset, offset + meta + body) for offset, meta, body in zip(
        found.offsets, found.meta_data_lengths, found.body_lengths))


__all__ = ["MIN_FILE_SIZE", "TRAILER_SIZE", "FileDecoder", "block_ranges", "forget_footers"]
