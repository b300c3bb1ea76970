"""The sans-IO encoder of the IPC file format: the stream encoder's messages between the
file magic and the Footer, whose Blocks it counts from the sizes it gives out, and
with ``statistics=True``, each batch's statistics in the footer
(:mod:`quiver.ipc.statistics`; off by default, as for :func:`~quiver.ipc.new_file`).

>>> import quiver as qv, quiver.ipc as ipc
>>> batch = qv.record_batch({"a": qv.array([1, 2, 3])})
>>> enc = FileEncoder(batch.schema, statistics=True)
>>> data = b"".join(enc.begin() + enc.write_batch(batch) + enc.end())
>>> reader = ipc.open_file(data)
>>> reader.get_batch(0).num_rows, reader.statistics[0].columns[0].max
(3, 3)
"""

from __future__ import annotations

from typing import Any, Unpack

from .. import types as t
from . import metadata as md
from .encoder import I32, Encoder, IpcWriteOptions, WriteOptionKeywords, write_options
from .framing import MAGIC
from .statistics.encode import StatisticsCollector
from .statistics.model import STATISTICS_KEY


class FileEncoder(Encoder):
    """Encodes the IPC file format; the Blocks of the footer (``dictionary_blocks``,
    ``record_batch_blocks``) are counted from the sizes given out (``position``).
    ``metadata`` becomes the footer's custom metadata; with ``statistics=True`` each
    batch's statistics go in the footer (:mod:`quiver.ipc.statistics`; off by default)."""

    file_format = True

    def __init__(
        self,
        schema: Any,
        *,
        options: IpcWriteOptions | None = None,
        metadata: Any = None,
        statistics: bool = False,
        **kw: Unpack[WriteOptionKeywords],
    ) -> None:
        super().__init__(schema, write_options(options, kw), metadata)
        if statistics:
            self._statistics = StatisticsCollector(self.schema)
        self._resumed = False

    @classmethod
    def resuming(
        cls,
        state: Any,
        *,
        options: IpcWriteOptions,
        metadata: Any = None,
        statistics: bool | None = None,
    ) -> FileEncoder:
        """An encoder that carries on a file (:class:`~quiver.ipc.append.AppendState`):
        its schema, dictionary ids and metadata version; the Blocks and the dictionaries
        it has; new messages from ``state.end``.  ``begin()`` gives nothing.  Statistics
        are kept when the state brings them (``state.statistics``), unless
        ``statistics=False``; ``metadata`` (else the file's) becomes the footer's."""
        keep = statistics is not False and state.statistics is not None
        enc = cls(state.schema_message.schema, options=options,
                  metadata=metadata if metadata is not None else state.metadata,
                  statistics=keep)
        enc.version = state.version
        enc._dicts.ids = dict(state.schema_message.dictionary_ids)
        enc._dicts.emit_deltas = True  # the only new dictionaries a file allows
        enc._dicts._last = dict(state.dictionaries)
        enc.dictionary_blocks = list(state.dictionary_blocks)
        enc.record_batch_blocks = list(state.record_batch_blocks)
        enc.position = state.end
        if keep:
            rows, raws = state.statistics
            collector = enc._statistics
            collector.row_counts.extend(rows)
            for log, old in zip(collector._raws, raws):
                log.extend(old)
        enc._resumed = True
        return enc

    def begin(self) -> list[Any]:
        """The file magic and the Schema message (nothing when carrying on a file)."""
        if self._resumed and self._state == "new":
            self._state = "open"
            return []
        return super().begin()

    def end(self) -> list[Any]:
        """End of stream, the Footer, its length and the magic."""
        parts = super().end()
        schema_msg = md.SchemaMessage(self.schema, self._dicts.ids, "little", ())
        footer = md.Footer(
            self.version,
            schema_msg,
            tuple(self.dictionary_blocks),
            tuple(self.record_batch_blocks),
            self._footer_with_statistics(),
        )
        data = md.encode_footer(footer)
        parts += [data, I32.pack(len(data)), MAGIC]
        self.position += len(data) + 4 + len(MAGIC)
        return parts

    def _footer_with_statistics(self) -> t.KeyValueMetadata | None:
        """The footer's custom metadata, with the batches' statistics when kept.  Any
        statistics carried over in the given metadata are dropped: they describe another
        file's batches, and a reader would skip batches by them."""
        meta = self._footer_metadata
        if meta is None and self._statistics is None:
            return None
        key = STATISTICS_KEY.encode()
        pairs = [(k, v) for k, v in (meta.items() if meta is not None else ()) if k != key]
        if self._statistics:
            pairs.append((key, self._statistics.encode().encode()))
        elif meta is not None and len(pairs) == len(meta.items()):
            return meta
        return t.KeyValueMetadata(pairs) if pairs else None


__all__ = ["FileEncoder"]
