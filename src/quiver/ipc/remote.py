"""IPC files and streams at URLs (object storage, any fsspec filesystem).

The readers and writers of :mod:`quiver.ipc.reader` and :mod:`quiver.ipc.writer`, fed by
ranged reads (:mod:`quiver.fs.ranged`) instead of a memory map:

- A file: its first bytes and its tail (footer and trailer) in one concurrent round with a
  guessed tail size (:data:`TAIL_GUESS`; a second GET only for a larger footer), the
  dictionary blocks together, then the record batches a window at a time
  (:data:`WINDOW` bytes of blocks): their ranges coalesced and fetched concurrently
  before the first of them is decoded.  With ``columns=``, a window's batch metadata is
  fetched first, then only the selected columns' buffers; with ``filters=``, the
  batches the footer statistics rule out are never fetched.  Decoding is the file
  reader's, over the :class:`~quiver.ipc.file_decoder.FileDecoder`.
- A stream: sequential reads in large blocks, the next one in flight.
- Writers: :mod:`quiver.ipc.remote_write`.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..batch import Table
from ..fs.ranged import RangeCache, RangedObject, SequentialReader
from ..fs.url import wants_url
from . import reader
from .decoder import RawMessage
from .framing import MAGIC
from .plan import V5, PlanNode
from .reader import RecordBatchFileReader, RecordBatchStreamReader

#: bytes fetched from the end of a file before its footer length is known
TAIL_GUESS = 64 << 10
#: bytes fetched from the start (the magic, and what describes a foreign file)
HEAD = 64
#: bytes of record batch blocks fetched ahead in one concurrent round
WINDOW = 64 << 20


def _buffer_count(node: PlanNode, v4: bool, variadic: Any) -> int:
    """How many Buffers of a RecordBatch message ``node``'s array takes (as the body
    loader walks them: a V4 union's validity, the layout's, a view's variadic ones, the
    children's)."""
    n = node.nbuf + (1 if node.v4_validity and v4 else 0)
    if node.variadic:
        n += next(variadic)
    return n + sum(_buffer_count(c, v4, variadic) for c in node.children)


class RemoteFileReader(RecordBatchFileReader):
    """:class:`~quiver.ipc.reader.RecordBatchFileReader` over an object read by ranges.

    ``io_stats`` counts the requests and bytes fetched so far."""

    def __init__(self, obj: RangedObject, *, filters: Any = None, **kw: Any) -> None:
        self._object = obj
        self._cache = RangeCache(obj)
        self._metas: dict[int, tuple[RawMessage, list[tuple[int, int]] | None]] = {}
        #: batches from this index on are never fetched ahead (a Spark split's end)
        self.window_stop: int | None = None
        size = obj.size
        # the magic and the tail in one concurrent round (one GET when they are near)
        self._cache.prefetch([(0, min(size, HEAD)), (max(0, size - TAIL_GUESS), size)])
        try:
            super().__init__(self._cache, filters=filters, **kw)
        except BaseException:
            obj.close()
            raise

    @property
    def io_stats(self) -> dict[str, int]:
        """``{"requests": ..., "bytes": ...}`` sent and fetched for this reader so far."""
        return {"requests": self._object.requests, "bytes": self._object.bytes_fetched}

    def _before_dictionaries(self) -> None:
        # the dictionary blocks in one concurrent round, before the first is decoded
        dec = self._decoder
        ranges = [dec.block_range(b, i, "dictionary") for i, b in enumerate(dec.dictionaries)]
        self._cache.prefetch([(o, o + n) for o, n in ranges])

    def _load_batch(self, i: int) -> Any:
        n = self.num_record_batches
        if self._closed or not isinstance(i, int) or not -n <= i < n:
            return super()._load_batch(i)  # (its errors)
        i = i + n if i < 0 else i
        self._ensure_window(i)
        got = self._metas.get(i)
        if got is not None:
            raw = self._sparse(*got)
            return self._decoder.load_record_batch(raw), raw.message.custom_metadata
        return super()._load_batch(i)

    # -- fetching ahead -------------------------------------------------------------------
    def _window(self, i: int) -> list[int]:
        """Batch ``i`` and the batches read after it, up to :data:`WINDOW` bytes."""
        blocks = self._footer.record_batches
        keep = None if self._selection is None else self._selection.keep
        stop = len(blocks) if self.window_stop is None else max(self.window_stop, i + 1)
        order = (range(i, stop) if keep is None
                 else [i, *(np.flatnonzero(keep[i + 1 : stop]) + i + 1).tolist()])
        out: list[int] = []
        total = 0
        for j in order:
            out.append(j)
            b = blocks[j]
            total += b.meta_data_length + b.body_length
            if total >= WINDOW:
                break
        return out

    def _ensure_window(self, i: int) -> None:
        dec = self._decoder
        blocks = self._footer.record_batches
        start, length = dec.block_range(blocks[i], i)
        if i in self._metas or self._cache.has(start, start + length):
            return
        window = self._window(i)
        whole = []
        for j in window:
            s, n = dec.block_range(blocks[j], j)
            whole.append((s, s + n))
        self._cache.keep_only(whole)
        self._metas = {}
        if self._decoder.columns is None:
            self._cache.prefetch(whole)
            return
        # columns=: each batch's metadata first, then only the selected columns' buffers
        self._cache.prefetch([(blocks[j].offset, blocks[j].offset + blocks[j].meta_data_length)
                              for j in window])
        wanted: list[tuple[int, int]] = []
        for j in window:
            b = blocks[j]
            raw = dec.record_batch_message(j, self._cache.view(b.offset, b.meta_data_length),
                                           body=False)
            ranges = self._buffer_ranges(raw)
            self._metas[j] = (raw, ranges)
            if ranges is None:
                wanted.append((raw.body_offset, raw.body_offset + raw.message.body_length))
            else:
                wanted += [(raw.body_offset + a, raw.body_offset + z) for a, z in ranges]
        self._cache.prefetch(wanted)

    def _buffer_ranges(self, raw: RawMessage) -> list[tuple[int, int]] | None:
        """The body ranges of the selected columns' buffers, or None when the message is
        not one to pick from (then the whole body is read, and checked as always)."""
        header = raw.message.header
        wanted = set(self._decoder.columns or ())
        variadic = iter(header.variadic_buffer_counts)
        specs = header.buffers
        v4 = raw.message.version < V5
        body_length = raw.message.body_length
        out: list[tuple[int, int]] = []
        k = 0
        try:
            for c, node in enumerate(self._decoder.plan):
                count = _buffer_count(node, v4, variadic)
                if c in wanted:
                    for b in range(k, min(k + count, len(specs))):
                        off, n = int(specs[b][0]), int(specs[b][1])
                        if off < 0 or n < 0 or off + n > body_length:
                            return None
                        if n:
                            out.append((off, off + n))
                k += count
        except StopIteration:
            return None
        return out if k == len(specs) else None

    def _sparse(self, raw: RawMessage, ranges: list[tuple[int, int]] | None) -> RawMessage:
        """``raw`` with its body: the selected buffers in place, zeros elsewhere (never
        decoded: the body loader skips the columns not selected)."""
        length = raw.message.body_length
        if ranges is None:
            body = self._cache.view(raw.body_offset, length)
        else:
            out = np.zeros(length, dtype=np.uint8)  # untouched pages cost nothing
            for a, z in ranges:
                out[a:z] = np.frombuffer(self._cache.view(raw.body_offset + a, z - a),
                                         dtype=np.uint8)
            out.flags.writeable = False
            body = memoryview(out)
        return RawMessage(raw.index, raw.offset, raw.message, body, raw.body_offset,
                          raw.metadata)

    def close(self) -> None:
        super().close()
        cache = getattr(self, "_cache", None)
        if cache is not None:
            cache.close()
        obj = getattr(self, "_object", None)
        if obj is not None:
            obj.close()


class RemoteStreamReader(RecordBatchStreamReader):
    """:class:`~quiver.ipc.reader.RecordBatchStreamReader` over an object read in large
    blocks with read-ahead."""

    def __init__(self, obj: RangedObject, **kw: Any) -> None:
        self._object = obj
        self._sequential = SequentialReader(obj)
        try:
            super().__init__(self._sequential, **kw)
        except BaseException:
            self._sequential.close()
            obj.close()
            raise

    @property
    def io_stats(self) -> dict[str, int]:
        """``{"requests": ..., "bytes": ...}`` sent and fetched for this reader so far."""
        return {"requests": self._object.requests, "bytes": self._object.bytes_fetched}

    def close(self) -> None:
        super().close()
        seq = getattr(self, "_sequential", None)
        if seq is not None:
            seq.close()
        obj = getattr(self, "_object", None)
        if obj is not None:
            obj.close()


def _object(url: str, storage_options: Mapping[str, Any] | None) -> RangedObject:
    return RangedObject(url, storage_options)


def _no_memory_map(kw: dict[str, Any]) -> dict[str, Any]:
    kw = dict(kw)
    kw.pop("memory_map", None)  # (an object is never mapped; the keyword is accepted)
    return kw


def entry(local: Any, extra: str) -> Any:
    """Decorate a URL-aware entry point: ``local``'s docstring with ``extra`` added, and
    its signature with ``storage_options``."""
    def apply(fn: Any) -> Any:
        sig = inspect.signature(local)
        params = list(sig.parameters.values())
        at = next((k for k, p in enumerate(params) if p.kind is p.VAR_KEYWORD), len(params))
        params.insert(at, inspect.Parameter("storage_options", inspect.Parameter.KEYWORD_ONLY,
                                            default=None, annotation="dict | None"))
        fn.__signature__ = sig.replace(parameters=params)
        # the local function's text without its examples (they run as its own doctests)
        text = (local.__doc__ or "").split(">>>")[0].rstrip()
        where = f"{local.__module__}.{local.__name__}"
        fn.__doc__ = f"{text}\n\n{extra}\n\n    (Examples: ``{where}``.)"
        fn.__wrapped_local__ = local
        return fn
    return apply


URL_DOC = """    A URL (``s3://bucket/key``, ``gs://...``, any fsspec filesystem) is opened through
    fsspec with ``storage_options`` (as pandas and polars take them; ``pip install
    'quiver[s3]'`` for S3); local paths are unchanged (memory maps, no fsspec import).
"""


@entry(reader.open_file, URL_DOC + """    A URL's file is read by ranges: the tail in one GET,
    then batches a window at a time, coalesced and concurrent; with ``columns=`` only the
    selected columns' buffers, with ``filters=`` only the batches that can match.""")
def open_file(source: Any, *, filters: Any = None,
              storage_options: Mapping[str, Any] | None = None,
              **kw: Any) -> RecordBatchFileReader:
    """An IPC file (see :func:`quiver.ipc.reader.open_file`), also at a URL."""
    if not wants_url(source, storage_options):
        return reader.open_file(source, filters=filters, **kw)
    return RemoteFileReader(_object(source, storage_options), filters=filters,
                            **_no_memory_map(kw))


@entry(reader.open_stream, URL_DOC + """    A URL's stream is read sequentially in large blocks
    with read-ahead.""")
def open_stream(source: Any, *, storage_options: Mapping[str, Any] | None = None,
                **kw: Any) -> RecordBatchStreamReader:
    """An IPC stream (see :func:`quiver.ipc.reader.open_stream`), also at a URL."""
    if not wants_url(source, storage_options):
        return reader.open_stream(source, **kw)
    return RemoteStreamReader(_object(source, storage_options), **_no_memory_map(kw))


@entry(reader.read_table, URL_DOC)
def read_table(source: Any, *, columns: Sequence[int | str] | None = None,
               filters: Any = None, memory_map: bool = True, validate: str | None = None,
               storage_options: Mapping[str, Any] | None = None) -> Table:
    """A whole IPC file or stream (see :func:`quiver.ipc.reader.read_table`), also at a
    URL: its first bytes tell which."""
    if not wants_url(source, storage_options):
        return reader.read_table(source, columns=columns, filters=filters,
                                 memory_map=memory_map, validate=validate)
    obj = _object(source, storage_options)
    kw: dict[str, Any] = {"columns": columns, "validate": validate}
    if _is_file(obj):
        with RemoteFileReader(obj, filters=filters, **kw) as r:
            return r.read_all()
    with RemoteStreamReader(obj, filters=filters, **kw) as s:
        return s.read_all()


def _is_file(obj: RangedObject) -> bool:
    """Whether the object starts with the file magic (its first bytes, one GET)."""
    size = obj.size
    return size >= len(MAGIC) and bytes(obj.get(0, len(MAGIC))) == MAGIC


@entry(reader.read_schema, URL_DOC)
def read_schema(source: Any, *, storage_options: Mapping[str, Any] | None = None) -> Any:
    """The schema of an IPC file or stream, also at a URL."""
    if not wants_url(source, storage_options):
        return reader.read_schema(source)
    obj = _object(source, storage_options)
    if _is_file(obj):
        with RemoteFileReader(obj) as r:
            return r.schema
    with RemoteStreamReader(obj) as s:
        return s.schema


__all__ = ["HEAD", "TAIL_GUESS", "URL_DOC", "WINDOW", "RemoteFileReader",
           "RemoteStreamReader", "entry", "open_file", "open_stream", "read_schema",
           "read_table"]
