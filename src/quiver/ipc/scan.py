"""Scans: which batches of a file a filter reads, and the batches of a range of one.

What every reader of many batches shares, whatever fetches the bytes (a memory map or a
file for :class:`~quiver.ipc.reader.RecordBatchFileReader`, ranged requests for
:mod:`quiver.ipc.remote`, the Spark source's executors):

- :func:`footer_statistics`: the footer statistics that can skip batches, or why not;
- :class:`Selection`: for filters in disjunctive normal form (:mod:`quiver.filters`),
  the batches the footer statistics rule out (never read), those they prove to match
  throughout (kept whole when their counts agree) and the others (filtered row by row);
- :class:`FilterColumns`: the columns a read with filters loads (those asked for, then
  the filter's columns not among them, dropped again after filtering, as
  ``pyarrow.parquet.read_table(columns=, filters=)`` does);
- :func:`range_batches` and :func:`stream_batches`: the batches of a split, a range of a
  file's batches or a stream's prelude and body.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from .. import errors as E
from .. import types as t
from ..batch import RecordBatch
from ..filters import DNF, batches_all_match, batches_may_match, check_filters, filter_batch
from . import metadata as md
from .batch_loader import resolve_columns
from .decoder import DEFAULT_LIMITS, END
from .framing import EOS
from .options import IpcReadOptions
from .statistics.decode import footer_value, statistics_for_skipping
from .stream_decoder import StreamDecoder


def footer_statistics(footer: md.Footer, *, max_size: int = DEFAULT_LIMITS.max_metadata_size,
                      columns: set[int] | None = None, decoded: Any = None
                      ) -> tuple[Any, str | None]:
    """The footer's statistics when they can decide which batches to skip (of
    ``columns``, or ``decoded`` when they were), else None and why (None, None: the file
    has none); see :func:`~quiver.ipc.statistics.statistics_for_skipping`."""
    return statistics_for_skipping(footer_value(footer.custom_metadata), footer.schema.schema,
                                   len(footer.record_batches), max_size, columns,
                                   decoded=decoded)


class Selection:
    """Which of a file's batches filters read, from its footer statistics.

    ``keep[i]``: batch ``i`` may hold matching rows (the others are never read);
    ``whole[i]``: the statistics prove every row matches (kept whole when the batch's
    row count and null counts agree with them).  A footer whose statistics cannot decide
    warns once (:class:`~quiver.errors.StatisticsWarning`) and every batch is read."""

    def __init__(self, dnf: DNF, footer: md.Footer, schema: t.Schema, *,
                 max_size: int = DEFAULT_LIMITS.max_metadata_size, decoded: Any = None,
                 stacklevel: int = 2) -> None:
        missing = sorted({p.path[0] for group in dnf for p in group} - set(schema.names))
        if missing:
            raise E.ArrowInvalidArgument(
                f"expected the filter's columns {missing} among the file's columns "
                f"{footer.schema.schema.names} (a filter may name any of them, whether "
                "in columns= or not)"
            )
        check_filters(dnf, schema)
        self.dnf = dnf
        file_schema = footer.schema.schema
        names = file_schema.names
        n = len(footer.record_batches)
        stats, why = footer_statistics(  # (the filter's columns, if not decoded)
            footer, max_size=max_size, decoded=decoded,
            columns={names.index(p.path[0]) for g in dnf for p in g if p.path[0] in names})
        if why is not None:
            warnings.warn(f"the footer's statistics were not used to skip batches "
                          f"(every batch is read and filtered): {why}",
                          E.StatisticsWarning, stacklevel=stacklevel + 1)
        self.keep: np.ndarray = (np.ones(n, bool) if stats is None
                                 else batches_may_match(dnf, stats, file_schema))
        self.whole: np.ndarray = (np.zeros(n, bool) if stats is None
                                  else batches_all_match(dnf, stats, file_schema))
        self.statistics = stats
        # the filter's columns whose null counts are checked, by index in the file
        self._counted = [(name, names.index(name)) for name in {p.path[0] for g in dnf
                                                                for p in g}]
        self.skipped = 0  # batches passed over unread so far

    def batches(self, get_batch: Callable[[int], RecordBatch], start: int, stop: int
                ) -> Iterator[tuple[int, RecordBatch]]:
        """(index, batch) of the batches from ``start`` to ``stop`` the statistics keep,
        each whole or filtered; ``skipped`` counts the others as they are passed."""
        passed = start  # batches from here on not yet passed over
        for i in (np.flatnonzero(self.keep[start:stop]) + start).tolist():
            self.skipped += i - passed
            passed = i + 1
            batch = get_batch(i)
            if self.whole[i] and self._counts_agree(batch, i):
                yield i, batch
            else:
                yield i, filter_batch(batch, self.dnf)
        self.skipped += stop - passed

    def _counts_agree(self, batch: RecordBatch, i: int) -> bool:
        """Whether batch ``i``'s row count and its filter columns' null counts are those
        its statistics state (a batch the statistics prove to match throughout is kept
        whole only then: counts are cheap to check, unlike bounds)."""
        stats = self.statistics
        if stats.row_known[i] and batch.num_rows != int(stats.row_counts[i]):
            return False
        for name, c in self._counted:
            if c < len(stats.null_counts) and stats.null_known[c][i] and (
                    batch.column(name).null_count != int(stats.null_counts[c][i])):
                return False
        return True


class FilterColumns:
    """The columns a read with filters loads: those asked for (``columns``, resolved in
    the file's or stream's whole ``schema``), then the filter's columns not among them,
    which :meth:`narrow` drops again once the rows are filtered (as
    ``pyarrow.parquet.read_table(columns=, filters=)`` does).  Only the added columns'
    buffers are read beside the asked ones.

    ``load``: the columns to load instead of those asked (None: those asked, which hold
    the filter's columns already, or every column is read)."""

    def __init__(self, schema: t.Schema, columns: Sequence[int | str] | None,
                 dnf: DNF) -> None:
        self.load: list[int] | None = None
        self._keep = 0  # the leading columns of a loaded batch that were asked for
        if columns is None or not dnf:
            return
        asked = resolve_columns(schema, columns) or []
        names = schema.names
        extra: list[int] = []
        for name in dict.fromkeys(p.path[0] for group in dnf for p in group):
            # (a name the schema lacks or holds twice is left to check_filters' error)
            if names.count(name) == 1 and (i := names.index(name)) not in asked:
                extra.append(i)
        if extra:
            self.load = asked + extra
            self._keep = len(asked)

    def narrow_schema(self, schema: t.Schema) -> t.Schema:
        """The loaded ``schema`` without the columns added for the filter."""
        if self.load is None:
            return schema
        return t.Schema(schema.fields[: self._keep], schema.metadata)

    def narrow(self, batch: RecordBatch) -> RecordBatch:
        """A loaded (and filtered) batch without the columns added for the filter."""
        if self.load is None:
            return batch
        return RecordBatch._trusted(self.narrow_schema(batch.schema),
                                    batch.columns[: self._keep], batch.num_rows)


def range_batches(reader: Any, start: int, stop: int) -> Iterator[RecordBatch]:
    """Batches ``start`` to ``stop`` of an open file reader (any of them: local, mapped,
    remote), which is closed after the last one, or on an error."""
    try:
        for i in range(start, stop):
            yield reader.get_batch(i)
    finally:
        reader.close()


def stream_batches(pieces: Iterable[Any], options: IpcReadOptions) -> Iterator[RecordBatch]:
    """The record batches of a stream's pieces (a schema message, dictionaries, then
    record batch messages: a split's prelude and body), ended by end-of-stream."""
    decoder = StreamDecoder(options)
    for piece in pieces:
        decoder.feed(piece)
    decoder.feed(EOS)
    decoder.feed_eof()
    while (batch := decoder.next_batch()) is not END:
        yield batch


__all__ = [
    "FilterColumns",
    "Selection",
    "footer_statistics",
    "range_batches",
    "stream_batches",
]
