"""The sans-IO decoder: bytes in, messages and record batches out.

Theory of operation
-------------------
:class:`MessageDecoder` never reads or writes anything itself.  The caller ``feed``\\ s it
bytes (any chunking) and asks ``next_message()``, which returns a :class:`RawMessage`,
:data:`NEED_DATA` or :data:`END`.  Its state machine is a table (``_STEPS``)::

    PREFIX --(0xFFFFFFFF)--> LENGTH --(n > 0)--> METADATA --> BODY --> PREFIX ...
    PREFIX --(legacy int32 n > 0)--> METADATA          (streams before Arrow 0.15)
    PREFIX / LENGTH --(0)--> FINISHED                  (end of stream)

``bytes_needed`` tells a pull reader exactly how many bytes complete the current step, so
a body that arrives in one read is sliced without a copy; a body split across feeds is
joined once.  Every length is checked against the configured :class:`IpcLimits` before it
is waited for, and byte offsets in errors are absolute positions in the fed input.

:class:`StreamDecoder` sits on top: the first message must be a schema; dictionary
batches update the :class:`~quiver.ipc.dictionaries.DictionaryMemo`; record batches are
loaded by :mod:`quiver.ipc.body`.  The stream reader, the Spark source's stream splits
(:mod:`quiver.spark.plan`) and the command line are loops over these classes; the file
reader and :class:`~quiver.ipc.file_decoder.FileDecoder` reuse the stream decoder's batch
loading block by block.  Property: feeding the same bytes whole or in pieces of any size
gives the same batches or the same error.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .. import errors as E
from . import metadata as md
from .framing import CONTINUATION_BYTES, MAGIC, describe_foreign, metadata_length, parse_prefix


@dataclass(frozen=True, slots=True)
class IpcLimits:
    """Safety limits for untrusted input; a trusted caller may raise them.

    ``max_metadata_size`` bounds one flatbuffer, ``max_body_size`` one message body,
    ``max_depth`` type nesting, ``max_fields`` the number of fields (all levels),
    ``max_buffers`` buffers per batch, ``max_decompressed_size`` one decompressed buffer.
    ``max_unbacked_rows``: a batch may claim at most 8 rows per body byte (x256 when
    compressed) plus this many,
    so that columns without buffers (null, run-end encoded) cannot claim rows that
    converting them would have to allocate.
    """

    max_metadata_size: int = 64 * 1024 * 1024
    max_body_size: int = 16 * 1024**3
    max_depth: int = 64
    max_fields: int = 100_000
    max_buffers: int = 1_000_000
    max_decompressed_size: int = 4 * 1024**3
    max_dictionary_size: int = 16 * 1024**3
    max_unbacked_rows: int = 1 << 24

    def metadata_limits(self) -> md.MetadataLimits:
        """The limits the flatbuffer metadata decoder applies, taken from these."""
        return _metadata_limits(self.max_depth, self.max_fields, self.max_buffers)


@functools.lru_cache(maxsize=64)
def _metadata_limits(max_depth: int, max_fields: int, max_buffers: int) -> md.MetadataLimits:
    # built once per distinct set of values (a reader opens with these every time)
    return md.MetadataLimits(
        max_depth=max_depth, max_fields=max_fields, max_nodes=max_buffers, max_buffers=max_buffers
    )


DEFAULT_LIMITS = IpcLimits()


class _Sentinel:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


NEED_DATA: Any = _Sentinel("NEED_DATA")
END: Any = _Sentinel("END")


@dataclass(frozen=True, slots=True)
class RawMessage:
    """One decoded message: its index and absolute offset, metadata (decoded and as
    bytes), and body bytes."""

    index: int
    offset: int
    message: md.Message
    body: Any  # memoryview; or a DeferredBody from the file reader (compressed, in a file)
    body_offset: int
    metadata: memoryview


_PREFIX, _LENGTH, _METADATA, _BODY, _FINISHED = range(5)


class MessageDecoder:
    """Sans-IO decoder of encapsulated messages (see the module docstring)."""

    def __init__(self, *, limits: IpcLimits = DEFAULT_LIMITS, base_offset: int = 0) -> None:
        self.limits = limits
        self._metadata_limits = limits.metadata_limits()
        self._chunks: deque[memoryview] = deque()
        self._avail = 0
        self._pos = base_offset  # absolute offset of the first unconsumed byte
        self._state = _PREFIX
        self._need = 4
        self._eof = False
        self._index = 0
        self._msg_start = base_offset
        self._meta_len = 0
        self._message: md.Message | None = None
        self._meta = memoryview(b"")
        self.legacy = False  # True once a message without continuation marker was seen

    # -- input -------------------------------------------------------------------------

    def feed(self, data: Any) -> None:
        """Give the decoder more bytes (kept by reference: do not mutate them after)."""
        mv = memoryview(data)
        if mv.ndim != 1 or mv.itemsize != 1:
            mv = mv.cast("B")
        if len(mv):
            self._chunks.append(mv)
            self._avail += len(mv)

    def feed_eof(self) -> None:
        """Say that no more bytes will come."""
        self._eof = True

    @property
    def bytes_needed(self) -> int:
        """How many more bytes complete the current step (0 when finished)."""
        if self._state == _FINISHED:
            return 0
        return max(self._need - self._avail, 0)

    @property
    def finished(self) -> bool:
        """True after end-of-stream was decoded."""
        return self._state == _FINISHED

    @property
    def position(self) -> int:
        """Absolute offset of the next byte the decoder will consume."""
        return self._pos

    # -- the steady-state fast path (quiver.ipc.steady) ------------------------------------

    def whole_messages(self, reader: Any) -> Iterator[Any]:
        """Yield ``reader.take(chunk)[0]`` for each message lying whole at the start of
        the first chunk, for as long as ``take`` accepts one (returns ``(item, message
        bytes)`` rather than None); used by the steady-state fast path (quiver.ipc.steady),
        whose ``take`` may change from one message to the next."""
        chunks = self._chunks
        while self._state == _PREFIX and chunks:
            first = chunks[0]
            got = reader.take(first)
            if got is None:
                return
            item, n = got
            if len(first) == n:
                chunks.popleft()
            else:
                chunks[0] = first[n:]
            self._avail -= n
            self._pos += n
            self._index += 1
            yield item

    # -- buffer management ---------------------------------------------------------------

    def _take(self, n: int) -> memoryview:
        first = self._chunks[0]
        if len(first) >= n:
            out = first[:n]
            if len(first) == n:
                self._chunks.popleft()
            else:
                self._chunks[0] = first[n:]
        else:
            joined = bytearray(n)
            filled = 0
            while filled < n:
                chunk = self._chunks[0]
                k = min(len(chunk), n - filled)
                joined[filled : filled + k] = chunk[:k]
                filled += k
                if k == len(chunk):
                    self._chunks.popleft()
                else:
                    self._chunks[0] = chunk[k:]
            out = memoryview(joined)
        self._avail -= n
        self._pos += n
        return out

    def _truncated(self, what: str) -> E.TruncatedError:
        return E.TruncatedError(
            f"expected {what} of {self._need} bytes, found {self._avail} before the end of input",
            offset=self._pos,
            message_index=self._index,
        )

    # -- the state machine ---------------------------------------------------------------

    def next_message(self) -> RawMessage | Any:
        """The next complete message, ``NEED_DATA``, or ``END``."""
        if self._state == _PREFIX and self._chunks:
            whole = self._whole_message()
            if whole is not None:
                return whole
        while True:
            if self._state == _FINISHED:
                return END
            if self._avail < self._need:
                if not self._eof:
                    return NEED_DATA
                if self._state == _PREFIX and self._avail == 0:
                    # a stream that stops without EOS is accepted, as other readers do
                    self._state = _FINISHED
                    return END
                raise self._truncated(_STEP_NAMES[self._state])
            result = _STEPS[self._state](self)
            if result is not None:
                return result

    def _whole_message(self) -> RawMessage | None:
        """The fast path: a message lying whole in the first chunk, taken in one step.

        Anything unusual (a legacy prefix, EOS, a length over a limit, metadata that does
        not decode) returns None, and the step-by-step machine handles it, errors included.
        """
        first = self._chunks[0]
        size = len(first)
        try:
            prefix = parse_prefix(first)
        except E.FramingError:
            return None
        if prefix is None or prefix[1] != 8:
            return None
        n = prefix[0]
        if n <= 0 or n > self.limits.max_metadata_size or size < 8 + n:
            return None
        start = self._pos
        meta = first[8 : 8 + n]
        try:
            message = md.decode_message(meta, base_offset=start + 8, limits=self._metadata_limits)
        except E.ArrowError:
            return None
        body_length = message.body_length
        end = 8 + n + body_length
        if body_length < 0 or body_length > self.limits.max_body_size or size < end:
            return None
        body = first[8 + n : end]
        if size == end:
            self._chunks.popleft()
        else:
            self._chunks[0] = first[end:]
        self._avail -= end
        self._pos = start + end
        out = RawMessage(self._index, start, message, body, start + 8 + n, meta)
        self._index += 1
        return out

    def _step_prefix(self) -> None:
        self._msg_start = self._pos
        raw = self._take(4)
        if bytes(raw) == CONTINUATION_BYTES:
            self._state, self._need = _LENGTH, 4
            return
        if self._index == 0 and self._pos == 4 + self._msg_start and bytes(raw) == MAGIC[:4]:
            raise E.FramingError(
                "expected an IPC stream (continuation marker 0xFFFFFFFF), found the "
                "'ARROW1' magic of the IPC file format; open it with quiver.ipc.open_file",
                offset=self._msg_start,
                message_index=0,
            )
        if self._index == 0:
            n = int.from_bytes(raw, "little", signed=True)
            # a legacy stream starts with a small positive length: only an impossible
            # one is taken for text; the four bytes alone decide, so that any chunking
            # gives the same error
            what = describe_foreign(
                bytes(raw), text_too=n <= 0 or n > self.limits.max_metadata_size
            )
            if what is not None:
                raise E.FormatError(
                    f"expected an Arrow IPC stream (continuation marker 0xFFFFFFFF), found "
                    f"{what}",
                    offset=self._msg_start,
                    message_index=0,
                )
        self.legacy = True
        self._length_known(raw)

    def _step_length(self) -> None:
        self._length_known(self._take(4))

    def _length_known(self, raw: memoryview) -> None:
        """The metadata length word ``raw`` (the last 4 bytes taken), read by framing."""
        try:
            n = metadata_length(raw, 0, base_offset=self._pos - 4)
        except E.FramingError as exc:
            raise exc.locate(message_index=self._index) from None
        if n == 0:
            self._state, self._need = _FINISHED, 0
            return
        if n > self.limits.max_metadata_size:
            raise E.LimitExceeded(
                f"expected metadata of at most {self.limits.max_metadata_size} bytes "
                f"(IpcLimits.max_metadata_size), found a length of {n}",
                offset=self._pos - 4,
                message_index=self._index,
            )
        self._state, self._need = _METADATA, n

    def _step_metadata(self) -> RawMessage | None:
        start = self._pos
        n = self._need
        meta = self._take(n)
        try:
            message = md.decode_message(meta, base_offset=start, limits=self._metadata_limits)
        except E.ArrowError as exc:
            exc.locate(message_index=self._index, offset=start)
            raise
        if message.body_length < 0:
            raise E.MetadataError(
                f"expected a non-negative bodyLength, found {message.body_length}",
                offset=start,
                message_index=self._index,
            )
        if message.body_length > self.limits.max_body_size:
            raise E.LimitExceeded(
                f"expected a body of at most {self.limits.max_body_size} bytes "
                f"(IpcLimits.max_body_size), found bodyLength {message.body_length}",
                offset=start,
                message_index=self._index,
            )
        self._meta_len = n
        self._meta = meta
        self._message = message
        self._state, self._need = _BODY, message.body_length
        if message.body_length == 0:
            return self._step_body()
        return None

    def _step_body(self) -> RawMessage:
        body_offset = self._pos
        body = self._take(self._need) if self._need else memoryview(b"")
        msg = self._message
        out = RawMessage(self._index, self._msg_start, msg, body, body_offset, self._meta)
        self._index += 1
        self._message = None
        self._state, self._need = _PREFIX, 4
        return out


_STEPS = {
    _PREFIX: MessageDecoder._step_prefix,
    _LENGTH: MessageDecoder._step_length,
    _METADATA: MessageDecoder._step_metadata,
    _BODY: MessageDecoder._step_body,
}
_STEP_NAMES = {
    _PREFIX: "a message prefix",
    _LENGTH: "a metadata length",
    _METADATA: "message metadata",
    _BODY: "a message body",
}
