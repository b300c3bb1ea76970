"""An index of the encapsulated messages of a stream or file, read from headers only.

The Spark source splits a stream over several tasks without reading its bodies, and the
command line shows where every message lies; both need the same thing: each message's
absolute offset, metadata length, body length and decoded metadata.  :func:`scan_messages`
reads the 8-byte prefix and the flatbuffer metadata of each message through a
``read_at(offset, n)`` callable and steps over the body, so it never touches body bytes.
It does no I/O of its own: the caller's ``read_at`` does (a memory map slice, ``os.pread``,
a ``bytes`` slice).

Framing is the Columnar spec's "Encapsulated message format": a continuation marker
0xFFFFFFFF, an int32 metadata length (flatbuffer plus padding), the flatbuffer, the body.
Streams written before Arrow 0.15 have no continuation marker.  A zero length is end of
stream; a stream that simply stops at a message boundary is accepted, as every reader does.

>>> import quiver as qv, quiver.ipc as ipc
>>> sink = ipc.BufferOutputStream()
>>> batch = qv.record_batch({"a": qv.array([1, 2, 3])})
>>> with ipc.new_stream(sink, batch.schema) as w:
...     w.write_batch(batch); w.write_batch(batch)
>>> data = sink.getvalue()
>>> [(m.kind, m.offset, m.num_rows) for m in scan_messages(data)]
[('schema', 0, None), ('record_batch', 120, 3), ('record_batch', 296, 3)]
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .. import errors as E
from . import metadata as md
from .decoder import DEFAULT_LIMITS, IpcLimits
from .framing import FILE_HEADER, MAGIC, parse_prefix

_I32 = struct.Struct("<i")

ReadAt = Callable[[int, int], Any]

_KINDS: dict[type, str] = {
    md.SchemaMessage: "schema",
    md.RecordBatch: "record_batch",
    md.DictionaryBatch: "dictionary",
    md.Tensor: "tensor",
    md.SparseTensor: "sparse_tensor",
}


@dataclass(frozen=True, slots=True)
class MessageInfo:
    """Where one message lies and what its metadata says.

    ``metadata_length`` counts the prefix, the flatbuffer and its padding (a footer
    Block's ``metaDataLength``); the body follows at ``offset + metadata_length``.
    """

    index: int
    offset: int
    metadata_length: int
    body_length: int
    message: md.Message

    @property
    def kind(self) -> str:
        """``schema``, ``record_batch``, ``dictionary``, ``tensor`` or ``sparse_tensor``."""
        return _KINDS.get(type(self.message.header), "unknown")

    @property
    def body_offset(self) -> int:
        """Absolute offset of the first body byte."""
        return self.offset + self.metadata_length

    @property
    def end(self) -> int:
        """Absolute offset just past the body (where the next message starts)."""
        return self.offset + self.metadata_length + self.body_length

    @property
    def record_batch(self) -> md.RecordBatch | None:
        """The RecordBatch metadata of a record batch or dictionary message, else None."""
        header = self.message.header
        if isinstance(header, md.DictionaryBatch):
            return header.data
        return header if isinstance(header, md.RecordBatch) else None

    @property
    def num_rows(self) -> int | None:
        """Rows of a record batch or dictionary batch; None for other messages."""
        rb = self.record_batch
        return None if rb is None else rb.length

    @property
    def dictionary_id(self) -> int | None:
        """The id of a dictionary batch; None for other messages."""
        header = self.message.header
        return header.id if isinstance(header, md.DictionaryBatch) else None

    @property
    def is_delta(self) -> bool:
        """True for a dictionary batch that extends (rather than replaces) its dictionary."""
        header = self.message.header
        return isinstance(header, md.DictionaryBatch) and header.is_delta

    @property
    def compression(self) -> str | None:
        """The body codec (``lz4_frame`` or ``zstd``), None when uncompressed."""
        rb = self.record_batch
        return None if rb is None or rb.compression is None else rb.compression.codec


def detect_format(head: Any) -> str | None:
    """``"file"``, ``"stream"`` or None for the first bytes of an input (8 are enough).

    >>> detect_format(b"ARROW1\\x00\\x00")
    'file'
    >>> detect_format(b"\\xff\\xff\\xff\\xff\\x10\\x00\\x00\\x00")
    'stream'
    >>> detect_format(b"PAR1....") is None
    True
    """
    head = bytes(head[:8])
    if head[:6] == MAGIC:
        return "file"
    if len(head) >= 8 and head[:4] == b"\xff\xff\xff\xff":
        (n,) = _I32.unpack_from(head, 4)
        return "stream" if n >= 0 else None
    if len(head) >= 4:
        # a stream from before Arrow 0.15: a bare int32 metadata length (padded so that the
        # 4-byte prefix and the metadata end on an 8-byte boundary: n % 8 == 4 as written
        # by Arrow C++), then a flatbuffer; text or another format reads as a huge length
        (n,) = _I32.unpack_from(head, 0)
        if 0 < n < (1 << 24) and n % 4 == 0:
            return "stream"
    return None


def _bytes_reader(data: Any) -> tuple[ReadAt, int]:
    mv = memoryview(data)
    if mv.ndim != 1 or mv.itemsize != 1:
        mv = mv.cast("B")
    return (lambda offset, n: mv[offset : offset + n]), len(mv)


def scan_messages(
    source: Any,
    size: int | None = None,
    *,
    start: int | None = None,
    limits: IpcLimits = DEFAULT_LIMITS,
) -> Iterator[MessageInfo]:
    """Yield a :class:`MessageInfo` per message, reading only prefixes and metadata.

    ``source`` is a bytes-like object, or a ``read_at(offset, n)`` callable together with
    the input's ``size``.  ``start`` is where the first message begins: 8 for the file
    format (after ``ARROW1`` and its padding), which is the default when the input starts
    with the file magic, else 0.  Stops at end of stream or at the end of the input;
    anything that does not frame or decode raises quiver's error with its byte offset and
    message index.
    """
    if callable(source):
        if size is None:
            raise E.ArrowInvalidArgument("expected the input's size with a read_at callable")
        read_at = source
    else:
        read_at, size = _bytes_reader(source)
    if start is None:
        start = len(FILE_HEADER) if bytes(read_at(0, 6)) == MAGIC else 0
    metadata_limits = limits.metadata_limits()
    pos, index = start, 0
    while pos < size:
        head = bytes(read_at(pos, 8))
        try:
            found = parse_prefix(head, 0, base_offset=pos)
        except E.ArrowError as exc:
            raise exc.locate(message_index=index) from None
        if found is None:
            if len(head) < 4:
                raise E.TruncatedError(
                    f"expected a 4-byte message prefix, found {len(head)} bytes",
                    offset=pos, message_index=index,
                )
            raise E.TruncatedError(
                f"expected an int32 metadata length, found {len(head) - 4} bytes",
                offset=pos + 4, message_index=index,
            )
        length, prefix_size = found
        meta_start = pos + prefix_size
        if length == 0:
            return
        if length > limits.max_metadata_size:
            raise E.LimitExceeded(
                f"expected metadata of at most {limits.max_metadata_size} bytes "
                f"(IpcLimits.max_metadata_size), found a length of {length}",
                offset=meta_start - 4, message_index=index,
            )
        if meta_start + length > size:
            raise E.TruncatedError(
                f"expected {length} bytes of metadata, found {size - meta_start}",
                offset=meta_start, message_index=index,
            )
        try:
            message = md.decode_message(
                read_at(meta_start, length), base_offset=meta_start, limits=metadata_limits
            )
        except E.ArrowError as exc:
            exc.locate(message_index=index, offset=meta_start)
            raise
        body = message.body_length
        if body < 0 or body > limits.max_body_size:
            raise E.LimitExceeded(
                f"expected a body length from 0 to {limits.max_body_size} "
                f"(IpcLimits.max_body_size), found bodyLength {body}",
                offset=meta_start, message_index=index,
            )
        body_start = meta_start + length
        if body_start + body > size:
            raise E.TruncatedError(
                f"expected a body of {body} bytes, found {size - body_start}",
                offset=body_start, message_index=index,
            )
        yield MessageInfo(index, pos, body_start - pos, body, message)
        pos = body_start + body
        index += 1
