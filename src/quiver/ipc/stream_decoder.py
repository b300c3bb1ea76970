"""The sans-IO stream decoder: bytes in, schema and record batches out.

:class:`StreamDecoder` wraps :class:`~quiver.ipc.decoder.MessageDecoder` and gives the
messages their meaning (Columnar spec, "IPC Streaming Format"): the first message is the
Schema; DictionaryBatch messages update the dictionaries (deltas append, a non-delta for a
known id replaces it); RecordBatch messages become :class:`quiver.RecordBatch` objects.
It never does I/O: the stream reader and the Spark source's stream splits
(:mod:`quiver.spark.plan`) drive it; the file reader, :class:`~quiver.ipc.file_decoder.FileDecoder`
and the CLI reuse its :class:`BatchLoader` block by block.

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

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict, Unpack

from .. import errors as E
from .. import types as t
from .._keywords import options_from
from ..array import Array
from ..array.validate import validate_array
from ..batch import RecordBatch
from ..types.checks import type_problems
from . import metadata as md
from . import steady
from .body import LoadContext, compile_plan, load_record_batch
from .decoder import DEFAULT_LIMITS, END, NEED_DATA, IpcLimits, MessageDecoder, RawMessage
from .dictionaries import DictionaryMemo
from .steady import SteadyBatches

VALIDATION_LEVELS = ("structural", "full")


@dataclass(frozen=True, slots=True)
class IpcReadOptions:
    """Reader options.

    ``columns``: names or indices to load (others are skipped without decoding);
    ``validate``: ``"structural"`` (default: buffer bounds and sizes, first and last
    offsets, child lengths, O(1) per array) or ``"full"`` (also every offset, UTF-8 string,
    dictionary index, union code, run end, view: O(rows)).  There is no ``"none"`` (as
    nanoarrow has): the structural checks are what turn malformed bytes into a
    :class:`~quiver.errors.FormatError` rather than an IndexError or a wrong view, they
    cost O(1) per array, and the steady fast path already runs them on plain ints, so
    skipping them would save little and break the promise that bad input raises quiver's
    format error.  ``validate="none"`` is refused with an error that says so;
    ``ensure_native_endian``: swap big-endian data to native order (default) or keep
    it as written (such arrays are not validated and are meant for passing through, not
    for value conversion); ``use_threads``: decompress buffers on a thread pool;
    ``limits``: safety limits.
    """

    columns: Sequence[int | str] | None = None
    validate: str = "structural"
    ensure_native_endian: bool = True
    use_threads: bool = True
    limits: IpcLimits = DEFAULT_LIMITS

    def __post_init__(self) -> None:
        if self.validate == "none":
            raise E.ArrowInvalidArgument(
                "expected validate 'structural' or 'full', found 'none': the structural "
                "checks guard every buffer access and always run (O(1) per array); use "
                "'structural'"
            )
        if self.validate not in VALIDATION_LEVELS:
            raise E.ArrowInvalidArgument(
                f"expected validate in {VALIDATION_LEVELS}, found {self.validate!r}"
            )


_DEFAULT_OPTIONS = IpcReadOptions()  # frozen: one instance serves every default reader


class ReadOptionKeywords(TypedDict, total=False):
    """The fields of :class:`IpcReadOptions` as keywords (None: the field's default),
    which the decoders, the readers, ``open_stream`` and ``open_file`` take."""

    columns: Sequence[int | str] | None
    validate: str | None
    ensure_native_endian: bool | None
    use_threads: bool | None
    limits: IpcLimits | None


def read_options(
    options: IpcReadOptions | None, kw: Mapping[str, Any], keywords: type = ReadOptionKeywords
) -> IpcReadOptions:
    """``options``, or options made of the keywords ``kw`` (not both; None values are
    left out, as not given).  A key that the ``TypedDict`` ``keywords`` (the caller's
    whole keyword set) lacks is refused with the list."""
    return options_from(options, kw, keywords, "a read keyword", _read_options)


def _read_options(**kw: Any) -> IpcReadOptions:
    return IpcReadOptions(**kw) if kw else _DEFAULT_OPTIONS


def resolve_columns(schema: t.Schema, columns: Sequence[int | str] | None) -> list[int] | None:
    """Indices for a projection given by names or indices, in the order asked (None: all
    columns); a duplicate or unknown column is an error that lists the schema's names.

    >>> import quiver as qv
    >>> resolve_columns(qv.schema([("a", qv.int8()), ("s", qv.string())]), ["s", "a"])
    [1, 0]
    """
    if columns is None:
        return None
    if isinstance(columns, (str, int, bytes)):
        raise E.ArrowTypeError(f"expected a list of column names or indices, found {columns!r}")
    out: list[int] = []
    for c in columns:
        if isinstance(c, str):
            hits = schema.get_all_field_indices(c)
            if len(hits) != 1:
                found = "none" if not hits else f"{len(hits)} columns with that name"
                raise E.ArrowKeyError(
                    f"expected one column named {c!r} in the schema {schema.names}, "
                    f"found {found}"
                )
            idx = hits[0]
        elif isinstance(c, int) and not isinstance(c, bool):
            idx = c + len(schema) if c < 0 else c
            if not 0 <= idx < len(schema):
                raise E.ArrowIndexError(
                    f"expected a column index below {len(schema)} in the schema "
                    f"{schema.names}, found {c}"
                )
        else:
            raise E.ArrowTypeError(f"expected a column name or index, found {c!r}")
        if idx in out:
            raise E.ArrowInvalidArgument(
                f"expected each column once in columns={list(columns)!r}, found "
                f"{schema.names[idx]!r} twice (schema {schema.names})"
            )
        out.append(idx)
    return out


def check_schema_types(schema: t.Schema, *, full: bool) -> None:
    """Refuse a schema whose types break the format's rules that need no data (see
    :mod:`quiver.types.checks`: canonical extension storage at every level, time zones at
    the full one); the error names the field."""
    for f in schema.fields:
        problems = type_problems(f.type, f.name, full=full)
        if problems:
            path, message = problems[0]
            raise E.ArrowInvalid(message, field_path=path)


class BatchLoader:
    """Schema-aware message handling shared by the stream decoder and the file reader."""

    def __init__(self, schema_msg: md.SchemaMessage, options: IpcReadOptions, *, file_format: bool,
                 check_types: bool = True):
        self.schema_msg = schema_msg
        self.full_schema = schema_msg.schema
        self.options = options
        if check_types:  # (``quiver validate`` reports these itself, as findings)
            check_schema_types(self.full_schema, full=options.validate == "full")
        self.columns = resolve_columns(self.full_schema, options.columns)
        # the body loader yields projected columns in file order; ``_order`` puts them in
        # the order asked (None when that is file order already)
        self._order: list[int] | None = None
        if self.columns is not None and self.columns != sorted(self.columns):
            rank = {c: k for k, c in enumerate(sorted(self.columns))}
            self._order = [rank[c] for c in self.columns]
        if self.columns is None:
            self.schema = self.full_schema
        else:
            self.schema = t.Schema(
                tuple(self.full_schema.fields[i] for i in self.columns), self.full_schema.metadata
            )
        self.plan = compile_plan(self.full_schema, schema_msg.dictionary_ids)
        self.memo = DictionaryMemo(
            self.full_schema,
            schema_msg.dictionary_ids,
            file_format=file_format,
            max_size=options.limits.max_dictionary_size,
        )
        self._ctx: LoadContext | None = None
        self.swap = schema_msg.endianness == "big" and options.ensure_native_endian
        # data kept in big-endian order cannot be checked with native arithmetic: such
        # batches are for passing through (e.g. rewriting), not for value conversion
        self.kept_foreign = schema_msg.endianness == "big" and not options.ensure_native_endian
        # the steady-state fast path (quiver.ipc.steady): the first few record batches
        # read here may set it up; the readers then offer later messages to it first
        self.steady_path: SteadyBatches | None = None
        self.steady_tries = steady.STEADY_TRIES

    def context(self, raw: RawMessage) -> LoadContext:
        """The load context of one message (one object, reused while the version holds)."""
        ctx = self._ctx
        if ctx is not None and ctx.version == raw.message.version:
            ctx.message_index = raw.index
            return ctx
        ctx = self._ctx = LoadContext(
            version=raw.message.version,
            dictionaries=self.memo,
            dictionary_ids=self.schema_msg.dictionary_ids,
            max_decompressed_size=self.options.limits.max_decompressed_size,
            max_unbacked_rows=self.options.limits.max_unbacked_rows,
            big_endian=self.swap or self.kept_foreign,
            swap=self.swap,  # big-endian buffers become native as the loader slices them
            message_index=raw.index,
            threads=self.options.use_threads,
        )
        return ctx

    def dictionary(self, raw: RawMessage) -> None:
        """Apply one DictionaryBatch message."""
        self.memo.apply(raw.message.header, raw.body, raw.body_offset, self.context(raw))

    def _steady_for(self, raw: RawMessage) -> SteadyBatches | None:
        """The fast path for later messages shaped like ``raw`` (a RecordBatch message
        just loaded), or None when this reader's options or the message rule it out."""
        msg = raw.message
        if (
            self.options.validate == "full"
            or self.columns is not None
            or self.swap
            or self.kept_foreign
            or msg.custom_metadata is not None
            or msg.header.compression is not None
        ):
            return None
        limits = self.options.limits
        return SteadyBatches.build(
            raw.metadata,
            self.plan,
            self.schema,
            max_body_size=limits.max_body_size,
            max_unbacked_rows=limits.max_unbacked_rows,
        )

    def record_batch(self, raw: RawMessage) -> Any:
        """Build one RecordBatch from its message."""
        header = raw.message.header
        cols = load_record_batch(
            self.plan,
            header,
            raw.body,
            raw.body_offset,
            self.context(raw),
            columns=self.columns,
        )
        if self._order is not None:
            cols = [cols[k] for k in self._order]
        self._validate(cols, raw)
        if self.steady_tries:
            self.steady_tries -= 1
            self.steady_path = self._steady_for(raw) or self.steady_path
        return RecordBatch._trusted(self.schema, cols, header.length)

    def _validate(self, cols: list[Array], raw: RawMessage) -> None:
        # the structural level runs inside the body loader (O(1) checks per array)
        if self.options.validate != "full" or self.kept_foreign:
            return
        for f, c in zip(self.schema.fields, cols):
            try:
                validate_array(c, full=True, path=f.name)
            except E.ArrowError as exc:
                exc.locate(message_index=raw.index, offset=raw.offset)
                raise


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
