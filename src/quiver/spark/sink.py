"""One write task's files: batches in, Arrow IPC files out, rolled and hive-partitioned.

:class:`TaskFiles` takes the pyarrow batches Spark hands a task, wraps them as quiver
batches through the Arrow PyCapsule protocol (no copy) and writes them with quiver's
IPC writer: one open file per partition directory, rolled at ``maxRecordsPerFile``
rows or ``maxBytesPerFile`` bytes.  Rows are grouped by their ``partitionBy`` values
with numpy (each row's values as one fixed-width key, ``numpy.unique`` over the keys).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import types as t
from ..array.base import Array
from ..array.concat import concat_arrays
from ..array.select import take
from ..batch import RecordBatch
from ..buffers import unpack_bits
from ..errors import NotSupported
from ..interop import import_batch
from ..ipc.writer import new_file, new_stream
from .convert import valid_mask
from .hive import escape_partition_text, partition_text

MAX_OPEN_FILES = 64  # open writers per task (partitionBy with many values)
# maxBytesPerFile never cuts a batch into pieces of fewer rows than this (a limit below
# one row would otherwise write a file per row)
MIN_ROWS_PER_PIECE = 1024


def _extension(options: Any) -> str:
    return ".arrows" if options.format == "stream" else ".arrow"


def _make_dirs_below(root: str, directory: str) -> None:
    """Create ``directory`` and its parents up to ``root``, which must exist: a task whose
    attempt directory was removed (the job aborted under it) fails here instead of
    creating the job's directories again behind the driver's clean-up."""
    relative = os.path.relpath(directory, root)
    if relative == os.curdir:
        return
    current = root
    for part in relative.split(os.sep):
        current = os.path.join(current, part)
        with contextlib.suppress(FileExistsError):
            os.mkdir(current)


def _open(path: str, schema: t.Schema, options: Any, root: str | None = None
          ) -> tuple[Any, Any]:
    """A file and its writer at ``path``; its directories are created below ``root``
    only (see :func:`_make_dirs_below`), or all of them without a root."""
    if root is None:
        os.makedirs(os.path.dirname(path), exist_ok=True)
    else:
        _make_dirs_below(root, os.path.dirname(path))
    f = open(path, "wb")  # noqa: SIM115 - closed by _OpenFile.close
    return f, _writer_on(f, schema, options)


def _writer_on(f: Any, schema: t.Schema, options: Any) -> Any:
    """The IPC writer of ``options.format`` on the open sink ``f`` (closed, or discarded
    when it has ``discard``, if the writer cannot start)."""
    try:
        if options.format == "stream":  # streams have no footer: no statistics
            return new_stream(f, schema, compression=options.compression)
        return new_file(f, schema, compression=options.compression,
                        statistics=options.statistics)
    except BaseException:
        _drop(f)
        raise


def _drop(f: Any) -> None:
    """Give up an open sink: an upload is discarded (nothing appears), a file closed."""
    with contextlib.suppress(Exception):
        (getattr(f, "discard", None) or f.close)()


def write_empty(directory: str, base: str, schema: t.Schema, options: Any) -> str:
    """Write a file with ``schema`` and no batches (what an empty job leaves)."""
    path = os.path.join(directory, base + _extension(options))
    f, writer = _open(path, schema, options)
    writer.close()
    f.close()
    return path


@dataclass(frozen=True)
class WrittenFile:
    """One file a task wrote: its path relative to the attempt directory, rows, bytes."""

    relative: str
    rows: int
    nbytes: int


@dataclass
class _OpenFile:
    relative: str
    file: Any
    writer: Any
    rows: int = 0


@dataclass
class TaskFiles:
    """The files of one task attempt under ``directory`` (which must exist: directories are
    made below it only), named ``base[-cNNN].arrow``.

    With ``opener``, files are not made under ``directory``: ``opener(relative)`` gives
    each one's sink (``write``, ``tell``, ``close``, ``discard``; an object-store upload
    that sends parts as they fill), and a file's ``close`` is its sink's ``close``."""

    directory: str
    base: str
    options: Any
    opener: Callable[[str], Any] | None = None
    _open_files: dict[str, _OpenFile] = field(default_factory=dict)
    _counts: dict[str, int] = field(default_factory=dict)
    _done: list[WrittenFile] = field(default_factory=list)
    _schema: t.Schema | None = None
    _data_columns: list[int] | None = None
    _pending: dict[str, list[RecordBatch]] = field(default_factory=dict)
    _pending_rows: dict[str, int] = field(default_factory=dict)
    _warned: bool = False
    _key_columns: list[int] = field(default_factory=list)

    def write(self, pa_batch: Any) -> None:
        """Write one batch (pyarrow, or anything with ``__arrow_c_array__``)."""
        batch = pa_batch if isinstance(pa_batch, RecordBatch) else import_batch(pa_batch)
        if batch.num_rows == 0:
            return
        keys = self.options.partition_by
        if self._schema is None:
            names = batch.schema.names
            self._key_columns = [_column_index(names, k) for k in keys]
            self._data_columns = [i for i in range(len(names)) if i not in self._key_columns]
            self._schema = t.schema([batch.schema.field(i) for i in self._data_columns])
        data = RecordBatch._trusted(
            self._schema, [batch.column(i) for i in self._data_columns], batch.num_rows
        )
        if not keys:
            self._gather("", data)
            return
        key_columns = [batch.column(i) for i in self._key_columns]
        groups, firsts = group_rows(key_columns)
        if len(firsts) == 1:
            self._gather(_partition_dir(keys, key_columns, int(firsts[0])), data)
            return
        # the rows reordered by group once; each group is then a slice of them
        order = np.argsort(groups, kind="stable")
        bounds = np.searchsorted(groups[order], np.arange(len(firsts) + 1))
        grouped = RecordBatch._trusted(
            self._schema, [take(c, order) for c in data.columns], data.num_rows
        )
        for g, first in enumerate(firsts):
            start, stop = int(bounds[g]), int(bounds[g + 1])
            self._gather(_partition_dir(keys, key_columns, int(first)),
                         grouped.slice(start, stop - start))

    def _gather(self, directory: str, batch: RecordBatch) -> None:
        """Hold Spark's small batches (10,000 rows) until about ``batch_rows`` rows have
        come for ``directory``, then write them as one record batch: fewer, larger
        batches cost less per row to write, to read and to keep statistics for."""
        target = self.options.batch_rows
        if target <= batch.num_rows and not self._pending.get(directory):
            self._append(directory, batch)
            return
        self._pending.setdefault(directory, []).append(batch)
        rows = self._pending_rows.get(directory, 0) + batch.num_rows
        self._pending_rows[directory] = rows
        if rows >= target:
            self._flush(directory)

    def _flush(self, directory: str) -> None:
        parts = self._pending.pop(directory, [])
        self._pending_rows.pop(directory, None)
        if not parts:
            return
        if len(parts) == 1:
            self._append(directory, parts[0])
            return
        columns = [concat_arrays([p.column(i) for p in parts])
                   for i in range(len(self._schema))]
        self._append(directory, RecordBatch._trusted(
            self._schema, columns, sum(p.num_rows for p in parts)))

    def _append(self, directory: str, batch: RecordBatch) -> None:
        limit = self.options.max_records_per_file
        max_bytes = self.options.max_bytes_per_file
        per_row = batch.nbytes / max(batch.num_rows, 1)
        start = 0
        while start < batch.num_rows:
            current = self._current(directory)
            room = batch.num_rows - start
            if limit:
                room = min(room, limit - current.rows)
            cut = False
            if max_bytes:  # rows that fit in what is left of the file, by average row size
                fit = int((max_bytes - current.file.tell()) // max(per_row, 1))
                floor = min(MIN_ROWS_PER_PIECE, batch.num_rows - start)
                if fit < floor:
                    self._warn_small_limit(max_bytes, floor, per_row)
                    fit = floor if current.rows == 0 else max(fit, 1)
                cut = fit < room
                room = min(room, fit)
            piece = batch if room == batch.num_rows else batch.slice(start, room)
            current.writer.write_batch(piece)
            current.rows += room
            start += room
            full = bool(limit) and current.rows >= limit
            if full or cut or (max_bytes and current.file.tell() >= max_bytes):
                self._finish(directory)

    def _warn_small_limit(self, max_bytes: int, rows: int, per_row: float) -> None:
        if self._warned:
            return
        self._warned = True
        warnings.warn(
            f"maxBytesPerFile={max_bytes} is smaller than a batch of {rows} rows "
            f"(about {int(rows * per_row)} bytes); each file holds at least such a batch",
            UserWarning, stacklevel=4,
        )

    def _current(self, directory: str) -> _OpenFile:
        current = self._open_files.pop(directory, None)
        if current is not None:
            self._open_files[directory] = current  # the most recently used last
        else:
            if len(self._open_files) >= MAX_OPEN_FILES:
                # too many partition directories at once: finish the one used longest
                # ago (its next rows go to a new -cNNN file)
                self._finish(next(iter(self._open_files)))
            count = self._counts.get(directory, 0)
            self._counts[directory] = count + 1
            name = self.base + (f"-c{count:03d}" if count else "") + _extension(self.options)
            relative = os.path.join(directory, name) if directory else name
            if self.opener is not None:
                f = self.opener(relative.replace(os.sep, "/"))
                writer = _writer_on(f, self._schema, self.options)
            else:
                f, writer = _open(os.path.join(self.directory, relative), self._schema,
                                  self.options, root=self.directory)
            current = self._open_files[directory] = _OpenFile(relative, f, writer)
        return current

    def _finish(self, directory: str) -> None:
        current = self._open_files.pop(directory)
        current.writer.close()
        nbytes = current.file.tell()
        current.file.close()
        self._done.append(WrittenFile(current.relative, current.rows, nbytes))

    def close(self) -> list[Any]:
        """Write what is held, close every open file; the files written, in order."""
        for directory in list(self._pending):
            self._flush(directory)
        for directory in list(self._open_files):
            self._finish(directory)
        return self._done

    def abort(self) -> None:
        """Close the files without finishing them (the caller removes the directory)."""
        for current in self._open_files.values():
            _drop(current.file)
        self._open_files.clear()


def _column_index(names: list[str], name: str) -> int:
    """The column ``name`` names, compared as Spark does (case-insensitively)."""
    if name in names:
        return names.index(name)
    lowered = [n.lower() for n in names]
    if lowered.count(name.lower()) != 1:
        raise NotSupported(f"expected one column named {name!r} (any case), found {names}")
    return lowered.index(name.lower())


# -- grouping by partition values ----------------------------------------------------------


def _key_bytes(arr: Array) -> np.ndarray:
    """One fixed-width byte row per value (validity byte first), equal for equal values."""
    n = len(arr)
    mask = valid_mask(arr)
    valid = np.ones(n, np.uint8) if mask is None else mask.astype(np.uint8)
    dtype = arr.type
    if isinstance(dtype, (t.StringType, t.BinaryType)):
        width = "<i8" if dtype.large else "<i4"
        offsets = arr.buffers[1].view(width)[arr.offset : arr.offset + n + 1].astype(np.int64)
        lengths = (offsets[1:] - offsets[:-1]) * valid
        width = int(lengths.max()) if n else 0
        if width > 255:  # what a directory name can hold, before escaping
            raise NotSupported(
                f"expected partitionBy values of at most 255 bytes (they name directories), "
                f"found one of {width} bytes in a {dtype} column"
            )
        rows = np.zeros((n, 5 + width), dtype=np.uint8)
        rows[:, 1:5] = lengths.astype("<u4").view(np.uint8).reshape(n, 4)
        if width:
            column = np.arange(width)
            inside = column[None, :] < lengths[:, None]
            source = offsets[:-1, None] + column[None, :]
            rows[:, 5:][inside] = arr.buffers[2][source[inside]]
    elif isinstance(dtype, t.BoolType):
        rows = np.zeros((n, 2), dtype=np.uint8)
        rows[:, 1] = unpack_bits(arr.buffers[1], arr.offset, n) & valid.astype(bool)
    elif t.is_fixed_width(dtype) and not t.is_nested(dtype):
        width = dtype.byte_width
        values = arr.buffers[1][arr.offset * width : (arr.offset + n) * width].reshape(n, width)
        rows = np.zeros((n, 1 + width), dtype=np.uint8)
        rows[:, 1:] = values * valid[:, None]
    else:
        raise NotSupported(f"expected a partitionBy column of a plain type, found {dtype}")
    rows[:, 0] = valid
    return rows


def group_rows(columns: list[Array]) -> tuple[np.ndarray, np.ndarray]:
    """A group id per row by the values of ``columns``, and each group's first row."""
    rows = np.ascontiguousarray(np.concatenate([_key_bytes(c) for c in columns], axis=1))
    keys = rows.view(np.dtype((np.void, rows.shape[1]))).reshape(-1)
    _, firsts, groups = np.unique(keys, return_index=True, return_inverse=True)
    order = np.argsort(firsts, kind="stable")  # groups numbered in order of appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[groups.reshape(-1)], firsts[order]


def _partition_text(arr: Array, row: int) -> str:
    """The directory text of one value, as Spark spells it (:func:`partition_text`)."""
    dtype = arr.type
    if isinstance(dtype, t.TimestampType):  # ticks: the zone may be one Python lacks
        mask = valid_mask(arr)
        if mask is not None and not mask[row]:
            return partition_text(None, dtype)
        ticks = int(arr.buffers[1].view("<i8")[arr.offset + row])
        return partition_text(ticks, dtype)
    return partition_text(arr.slice(row, 1).to_pylist()[0], dtype)


def _partition_dir(keys: tuple[str, ...], columns: list[Array], row: int) -> str:
    return os.path.join(*(
        f"{escape_partition_text(k)}={escape_partition_text(_partition_text(c, row))}"
        for k, c in zip(keys, columns)
    ))


def write_all(files: TaskFiles, batches: Iterator[Any]) -> list[WrittenFile]:
    """Write every batch into ``files`` and close them; on any failure the files are
    aborted and their directory (the task attempt's) removed, so nothing half-written
    stays, and the error goes on (with an ``opener``, the open sinks are discarded; the
    caller drops the closed ones)."""
    try:
        for batch in batches:
            files.write(batch)
        return files.close()
    except BaseException:
        files.abort()
        if files.opener is None:  # (an opener's sinks are dropped by abort)
            shutil.rmtree(files.directory, ignore_errors=True)
        raise
