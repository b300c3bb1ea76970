"""The sans-IO stream decoder: bytes in, schema and record batches out.

:class:`StreamDecoder` wraps :class:`~quiver.ipc.decoder.MessageDecoder` and gives the
messages their meaning (Columnar spec, "IPC Streaming Format"): the first message is the
Schema; DictionaryBatch messages update the dictionaries (deltas append, a non-delta for a
known id replaces it); RecordBatch messages become :class:`quiver.RecordBatch` objects.
It never does I/O: the stream reader and the Spark source's stream splits
(:mod:`quiver.spark.plan`) drive it.  Batches are loaded by
:class:`~quiver.ipc.batch_loader.BatchLoader`, which
:class:`~quiver.ipc.file_decoder.FileDecoder` and the CLI use block by block; the options
are :mod:`quiver.ipc.options`.

>>> import quiver as qv, quiver.ipc as ipc
>>> sink = ipc.BufferOutputStream()
>>> with ipc.new_stream(sink, qv.schema([("x", qv.int64())])) as w:
...     w.write_batch(qv.record_batch({"x": qv.array([1, 2])}))
>>> data = sink.getvalue()
>>> dec = StreamDecoder()
>>> for i in range(0, len(data), 7):    # any chunking gives the same result
...     dec.feed(data[i : i + 7])
>>> dec.feed_eof()
>>> dec.next_batch().to_pylist()
[{'x': 1}, {'x': 2}]
>>> dec.next_batch() is END
True
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any, Unpack

from .. import errors as E
from .. import types as t
from . import metadata as md
from .batch_loader import (  # noqa: F401  (re-exported: their old home)
    BatchLoader,
    check_schema_types,
    resolve_columns,
)
from .decoder import END, NEED_DATA, MessageDecoder, RawMessage
from .options import (  # noqa: F401  (re-exported: their old home)
    VALIDATION_LEVELS,
    IpcReadOptions,
    ReadOptionKeywords,
    read_options,
)


class StreamDecoder:
    """Feed bytes, get the schema and record batches (see the module docstring)."""

    def __init__(
        self, options: IpcReadOptions | None = None, **kwargs: Unpack[ReadOptionKeywords]
    ) -> None:
        self.options = read_options(options, kwargs)
        self._messages = MessageDecoder(limits=self.options.limits)
        self._loader: BatchLoader | None = None
        self.custom_metadata: t.KeyValueMetadata | None = None
        self.num_messages = 0
        self.num_dictionary_batches = 0
        self.num_record_batches = 0

    def feed(self, data: Any) -> None:
        """Give the decoder more bytes."""
        self._messages.feed(data)

    def feed_eof(self) -> None:
        """Say that no more bytes will come."""
        self._messages.feed_eof()

    @property
    def bytes_needed(self) -> int:
        """How many more bytes complete the current message step."""
        return self._messages.bytes_needed

    @property
    def schema(self) -> t.Schema | None:
        """The (projected) schema once the Schema message has been decoded."""
        return None if self._loader is None else self._loader.schema

    @property
    def schema_message(self) -> md.SchemaMessage | None:
        """The decoded Schema message (with dictionary ids and endianness)."""
        return None if self._loader is None else self._loader.schema_msg

    def project(self, columns: Sequence[int | str] | None) -> None:
        """Read ``columns`` (names or indices of the stream's schema) instead of the
        options' columns: once the schema is decoded (:meth:`next_schema`), before any
        dictionary or batch (a reader with filters adds the filter's columns so)."""
        if self._loader is None or self.num_messages != 1:
            raise E.ArrowInvalidArgument(
                f"expected to project right after the schema, found {self.num_messages} "
                "messages decoded")
        self.options = replace(self.options, columns=columns)
        self._loader = BatchLoader(self._loader.schema_msg, self.options, file_format=False)

    def next_schema(self) -> t.Schema | Any:
        """Decode up to the schema: the schema, ``NEED_DATA`` or ``END`` (empty input)."""
        while self._loader is None:
            raw = self._messages.next_message()
            if raw is NEED_DATA or raw is END:
                if raw is END:
                    raise E.FormatError(
                        "expected a Schema message at the start of the stream, "
                        "found the end of the stream",
                        offset=self._messages.position,
                        message_index=0,
                    )
                return raw
            self._handle(raw)
        return self._loader.schema

    def next_batch(self) -> Any:
        """The next RecordBatch, ``NEED_DATA`` or ``END``."""
        for batch in self.steady_batches():
            return batch
        while True:
            raw = self._messages.next_message()
            if raw is NEED_DATA:
                return raw
            if raw is END:
                if self._loader is None:
                    self.next_schema()  # raises the "no schema" error
                return END
            batch = self._handle(raw)
            if batch is not None:
                return batch

    def steady_batches(self) -> Iterator[Any]:
        """The record batches the steady-state fast path reads from the bytes already fed
        (none until it is set up; it stops at the first message it does not take)."""
        if self._loader is None or self._loader.steady_path is None:
            return
        for batch in self._messages.whole_messages(self._loader.steady_path):
            self.num_messages += 1
            self.num_record_batches += 1
            self.custom_metadata = None
            yield batch

    def _handle(self, raw: RawMessage) -> Any:
        self.num_messages += 1
        msg = raw.message
        header = msg.header
        if self._loader is None:
            if not isinstance(header, md.SchemaMessage):
                raise E.FormatError(
                    f"expected a Schema message first, found {_kind(header)}",
                    offset=raw.offset,
                    message_index=raw.index,
                )
            self._loader = BatchLoader(header, self.options, file_format=False)
            return None
        if isinstance(header, md.DictionaryBatch):
            self._loader.dictionary(raw)
            self.num_dictionary_batches += 1
            return None
        if isinstance(header, md.RecordBatch):
            batch = self._loader.record_batch(raw)
            self.custom_metadata = msg.custom_metadata
            self.num_record_batches += 1
            return batch
        raise E.FormatError(
            f"expected a DictionaryBatch or RecordBatch message, found {_kind(header)}"
            + (
                "; tensors are read with quiver.ipc.read_tensor"
                if isinstance(header, (md.Tensor, md.SparseTensor))
                else ""
            ),
            offset=raw.offset,
            message_index=raw.index,
        )


def _kind(header: Any) -> str:
    """``a <name> message`` for a message header, as errors say it."""
    name = md.header_name(header)
    return "a message with no header" if name == "NONE" else f"a {name} message"
