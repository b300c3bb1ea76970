"""Planning a read on the driver: layouts, splits and partitions (an executor reads a
planned split with :mod:`quiver.spark.read`, which the driver never imports).

Theory of operation
-------------------
The driver lists the files (:mod:`quiver.spark.paths`) and reads each one's *layout*:
for the file format, the footer's record batch Blocks (and its statistics, left
undecoded until filters ask: :func:`layout_statistics`); for a stream, an index of its
messages read from headers only (:func:`quiver.ipc.index.scan_messages`), bodies never
touched.  Consecutive record batches of a file are grouped into splits of about
``maxPartitionBytes``; splits are packed, in order, into Spark partitions of about that
size, each file also costing ``openCostInBytes`` (Spark's rule, so that many small files
share a partition and one large file is spread over several).

This module imports nothing that reads rows: Spark plans each streaming query in a
fresh Python process, which pays for every module loaded here
(``tests/spark/test_planner_imports.py``).
"""

from __future__ import annotations

import itertools
import os
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import types as t
from ..errors import ArrowError, ArrowInvalid, ArrowInvalidArgument, StatisticsWarning
from ..fs.url import is_url
from ..ipc import index as ipc_index
from ..ipc.file_decoder import FileDecoder, block_ranges
from ..ipc.statistics.model import STATISTICS_KEY
from . import objstore
from .paths import DataFile
from .policy import ReadPolicy, spark_arrow_schema

if TYPE_CHECKING:
    from ..filters import Predicate


@dataclass(frozen=True, slots=True)
class Layout:
    """What the driver knows of one file: its schema and record batch positions.

    ``batches`` holds ``(offset, end)`` of each record batch message; for streams,
    ``dictionaries`` the ``(offset, end, before)`` of each dictionary message, ``before``
    being how many record batches precede it, and ``schema_range`` the schema message.
    """

    file: DataFile
    schema: t.Schema
    batches: tuple[tuple[int, int], ...]
    dictionaries: tuple[tuple[int, int, int], ...] = ()
    schema_range: tuple[int, int] = (0, 0)
    # the footer's statistics value (file format), decoded only when asked
    # (:func:`layout_statistics`): planning without filters never loads their decoder
    statistics_value: str | bytes | None = None
    # rows of each record batch when the driver read them free (stream headers); None
    # for the file format, whose rows are read from a batch's header only when needed
    rows: tuple[int, ...] | None = None
    decoded: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Split:
    """A run of consecutive record batches ``[start, stop)`` of one file, or with
    ``rows``, the rows ``[rows[0], rows[1])`` of the one batch ``start`` (a batch larger
    than a split, read by several tasks as zero-copy slices)."""

    path: str
    format: str
    start: int
    stop: int
    partition: tuple[tuple[str, str | None], ...]
    nbytes: int
    # streams: the byte ranges to replay before the batches, then the batches' range
    prelude: tuple[tuple[int, int], ...] = ()
    body: tuple[int, int] = (0, 0)
    # the columns to load from this file (None: all); a merged schema's columns that
    # the file lacks are left out here and read as nulls
    columns: tuple[str, ...] | None = None
    rows: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class ReadJob:
    """Everything an executor needs besides its splits (pickled with the reader)."""

    schema: t.Schema  # what Spark expects, partition columns included
    partition_fields: tuple[t.Field, ...]
    columns: tuple[str, ...] | None  # the data columns to load (None: all)
    policy: ReadPolicy = field(default_factory=ReadPolicy)
    validate: str = "structural"
    # the ``filters`` option, columns and values as Spark sees them: applied exactly to
    # every batch read (:mod:`quiver.spark.pushdown`)
    filters: list[list[Predicate]] = field(default_factory=list)
    # no batch handed to Spark holds more rows (spark.sql.execution.arrow.maxRecordsPerBatch)
    max_records: int = 10_000


# -- the driver: layouts, splits, partitions -------------------------------------------


def _pread(fd: int) -> Any:
    return lambda offset, n: os.pread(fd, n, offset)


def _file_layout(data_file: DataFile, fd: int) -> Layout:
    """An IPC file's layout from its header, trailer and footer alone, read with
    positional reads (:meth:`quiver.ipc.file_decoder.FileDecoder.open`).  Dictionary and
    record batch blocks are not read here: the executors read (and check) them, and their
    errors name the file too (:func:`quiver.spark.read.read_split`)."""
    dec = FileDecoder()
    footer = dec.open(_pread(fd), os.fstat(fd).st_size)
    return file_format_layout(data_file, footer)


def file_format_layout(data_file: DataFile, footer: Any) -> Layout:
    """The :class:`Layout` of a file format file from its decoded footer."""
    value = None if footer.custom_metadata is None else \
        footer.custom_metadata.get(STATISTICS_KEY)
    # the footer's schema as written (the decoder's own, checked against the batches'
    # types, needs the batch loader: the executors build it when they read)
    return Layout(data_file, footer.schema.schema, block_ranges(footer),
                  statistics_value=value)


def layout_statistics(layout: Layout) -> Any:
    """The footer statistics of a file format layout when they can decide which batches
    to skip, decoded on first use (the ``filters`` option, or a large batch's row
    count); None when the file has none, or when they cannot be used (said once by a
    :class:`~quiver.errors.StatisticsWarning`: the file's batches are all read)."""
    if layout.statistics_value is None:
        return None
    if "statistics" not in layout.decoded:
        # the decoder reads the statistics as arrays: loaded only by planning that uses them
        from ..ipc.statistics.decode import statistics_for_skipping

        stats, why = statistics_for_skipping(layout.statistics_value, layout.schema,
                                             len(layout.batches))
        if why is not None:
            warnings.warn(f"{layout.file.path}: the footer's statistics were not used to "
                          f"skip batches: {why}", StatisticsWarning, stacklevel=2)
        layout.decoded["statistics"] = stats
    return layout.decoded["statistics"]


def read_layout(data_file: DataFile) -> Layout:
    """The schema and record batch positions of one file, without reading its bodies."""
    if is_url(data_file.path):  # object storage (spark/objstore.py)
        return objstore.read_layout(data_file, Layout, file_format_layout)
    try:
        fd = os.open(data_file.path, os.O_RDONLY)
        try:
            if data_file.format == "file":
                return _file_layout(data_file, fd)
            infos = list(ipc_index.scan_messages(_pread(fd), os.fstat(fd).st_size))
        finally:
            os.close(fd)
    except ArrowError as exc:
        raise type(exc)(f"{data_file.path}: {exc}") from None
    if not infos or infos[0].kind != "schema":
        raise ArrowInvalid(f"{data_file.path}: expected a Schema message first")
    batches: list[tuple[int, int]] = []
    rows: list[int] = []
    dictionaries: list[tuple[int, int, int]] = []
    for info in infos[1:]:
        if info.kind == "record_batch":
            batches.append((info.offset, info.end))
            rows.append(int(info.num_rows or 0))
        elif info.kind == "dictionary":
            dictionaries.append((info.offset, info.end, len(batches)))
    return Layout(
        data_file, infos[0].message.header.schema, tuple(batches), tuple(dictionaries),
        (infos[0].offset, infos[0].end), rows=tuple(rows),
    )


def read_layouts(files: Sequence[DataFile]) -> list[Layout]:
    """:func:`read_layout` of every file, several at a time (it is mostly waiting on I/O)."""
    if len(files) <= 1:
        return [read_layout(f) for f in files]
    with ThreadPoolExecutor(max_workers=min(16, len(files))) as pool:
        return list(pool.map(read_layout, files))


# piece: a row range of one large record batch, read by one split as a zero-copy slice
# a batch is cut into row ranges of at least this many bytes: smaller pieces would cost
# Spark more in tasks than they save
MIN_PIECE_BYTES = 64 * 1024


def batch_rows(layout: Layout, i: int) -> int | None:
    """Rows of batch ``i`` of a file: from the stream's index or the footer statistics
    when they state it, else from the batch's message header (one small read)."""
    if layout.rows is not None:
        return layout.rows[i]
    stats = layout_statistics(layout)
    if stats is not None and bool(stats.row_known[i]):
        return int(stats.row_counts[i])
    offset, end = layout.batches[i]
    if is_url(layout.file.path):  # object storage: a ranged read of its header
        return objstore.batch_rows(layout.file.path, offset, end)
    try:
        fd = os.open(layout.file.path, os.O_RDONLY)
        try:
            info = next(iter(ipc_index.scan_messages(_pread(fd), end, start=offset)), None)
        finally:
            os.close(fd)
    except (OSError, ArrowError):
        return None  # the executor reads the batch whole, and reports any damage
    return info.num_rows if info is not None and info.kind == "record_batch" else None


def splits_of(layout: Layout, max_bytes: int, keep: Sequence[bool] | None = None,
              columns: Sequence[str] | None = None) -> list[Split]:
    """Consecutive batches of one file grouped into splits of about ``max_bytes``; with
    ``keep``, only the batches it marks, in runs of consecutive kept batches.  A batch
    larger than ``max_bytes`` is cut into row ranges of about that size (each a split;
    never below ``MIN_PIECE_BYTES``)."""
    out: list[Split] = []
    f = layout.file
    batches = layout.batches
    present = None
    if columns is not None:
        present = tuple(name for c in columns
                        if (i := find_column(layout.schema, c)) is not None
                        for name in (layout.schema.names[i],))

    def split(start: int, stop: int, nbytes: int, rows: tuple[int, int] | None = None
              ) -> Split:
        if f.format == "file":
            return Split(f.path, "file", start, stop, f.partition, nbytes, columns=present,
                         rows=rows)
        # every dictionary message before the first batch, in stream order
        prelude = (
            layout.schema_range,
            *((offset, end) for offset, end, before in layout.dictionaries
              if before <= start),
        )
        return Split(f.path, "stream", start, stop, f.partition, nbytes, prelude,
                     (batches[start][0], batches[stop - 1][1]), present, rows)

    start = 0
    while start < len(batches):
        if keep is not None and not keep[start]:
            start += 1
            continue
        size = batches[start][1] - batches[start][0]
        if size > max_bytes and size >= 2 * MIN_PIECE_BYTES:
            n = batch_rows(layout, start)
            pieces = min(n or 1, -(-size // max(max_bytes, MIN_PIECE_BYTES)))
            if n is not None and pieces > 1:
                cuts = [n * j // pieces for j in range(pieces + 1)]
                out.extend(split(start, start + 1, size * (b - a) // n, (a, b))
                           for a, b in itertools.pairwise(cuts))
                start += 1
                continue
        stop = start + 1
        while (stop < len(batches) and batches[stop][1] - batches[start][0] <= max_bytes
               and (keep is None or keep[stop])):
            stop += 1
        out.append(split(start, stop, batches[stop - 1][1] - batches[start][0]))
        start = stop
    return out


def pack(splits: Sequence[Split], max_bytes: int, open_cost: int) -> list[list[Split]]:
    """Splits packed in order into partitions of about ``max_bytes`` (Spark's rule: each
    split also costs ``open_cost``)."""
    partitions: list[list[Split]] = []
    current: list[Split] = []
    size = 0
    for split in splits:
        cost = split.nbytes + open_cost
        if current and size + cost > max_bytes:
            partitions.append(current)
            current, size = [], 0
        current.append(split)
        size += cost
    if current:
        partitions.append(current)
    return partitions


def max_split_bytes(total: int, count: int, max_bytes: int, open_cost: int, cores: int) -> int:
    """Spark's ``maxSplitBytes``: no more than ``max_bytes``, and small enough that the
    data spreads over ``cores`` tasks."""
    per_core = (total + count * open_cost) // max(cores, 1)
    return max(1, min(max_bytes, max(open_cost, per_core)))


def can_widen(source: t.DataType, target: t.DataType) -> bool:
    """Whether values of ``source`` become ``target`` without loss (the merge rule)."""
    if source == target or isinstance(source, t.NullType):
        return True
    if isinstance(source, t.IntegerType) and isinstance(target, t.IntegerType):
        return source.width <= target.width
    if isinstance(source, t.IntegerType) and isinstance(target, t.FloatingPointType):
        return target.width == 64 and source.width <= 32
    if isinstance(source, t.FloatingPointType) and isinstance(target, t.FloatingPointType):
        return source.width <= target.width
    if isinstance(source, t.DecimalType) and isinstance(target, t.DecimalType):
        return source.scale == target.scale and source.precision <= target.precision
    if type(source) is type(target) and isinstance(source, (t.ListType, t.MapType)):
        return all(can_widen(a.type, b.type) for a, b in zip(source.fields, target.fields))
    if isinstance(source, t.StructType) and isinstance(target, t.StructType):
        names = {f.name: f.type for f in target.fields}
        return all(f.name in names and can_widen(f.type, names[f.name]) for f in source.fields)
    return False


def find_column(schema: t.Schema, name: str) -> int | None:
    """The index of column ``name`` (exact, else the one case-insensitive match)."""
    names = schema.names
    if name in names:
        return names.index(name)
    lowered = [n.lower() for n in names]
    return lowered.index(name.lower()) if name.lower() in lowered else None


# -- schemas ---------------------------------------------------------------------------


def spark_schema_of(layout: Layout, policy: ReadPolicy, columns: Sequence[str] | None) -> t.Schema:
    """The Spark-facing Arrow schema of one file (projected to ``columns``)."""
    schema = spark_arrow_schema(layout.schema, policy)
    return select_columns(schema, columns, f"{layout.file.path}: ")


def select_columns(schema: t.Schema, columns: Sequence[str] | None, where: str = "") -> t.Schema:
    """``schema`` projected to ``columns``, matched as Spark matches names (exactly, else
    ignoring case, as ``spark.sql.caseSensitive=false``); the fields keep the file's
    spelling.  A name that matches no column is an error (``where`` prefixes it)."""
    if columns is None:
        return schema
    found = [find_column(schema, c) for c in columns]
    missing = [c for c, i in zip(columns, found) if i is None]
    if missing:
        raise ArrowInvalidArgument(
            f"{where}expected columns {missing} in the schema, found only {schema.names}"
        )
    return t.schema([schema.field(i) for i in found])


def merge_types(a: t.DataType, b: t.DataType, path: str) -> t.DataType:
    """The narrowest type both ``a`` and ``b`` widen to; an error naming ``path``."""
    if can_widen(a, b):
        return b
    if can_widen(b, a):
        return a
    if isinstance(a, t.IntegerType) and isinstance(b, t.FloatingPointType) and a.width <= 32:
        return t.float64()
    if isinstance(b, t.IntegerType) and isinstance(a, t.FloatingPointType) and b.width <= 32:
        return t.float64()
    if isinstance(a, t.DecimalType) and isinstance(b, t.DecimalType) and a.scale == b.scale:
        return t.decimal128(max(a.precision, b.precision), a.scale)
    if isinstance(a, t.StructType) and isinstance(b, t.StructType):
        return t.struct(merge_fields(a.fields, b.fields, path))
    if type(a) is type(b) and isinstance(a, (t.ListType, t.MapType)):
        if isinstance(a, t.ListType):
            item = merge_types(a.value_field.type, b.value_field.type, path + ".element")
            return t.list_(t.field("element", item, nullable=True))
        (ka, va), (kb, vb) = a.entries_field.type.fields, b.entries_field.type.fields
        return t.map_(
            t.field("key", merge_types(ka.type, kb.type, path + ".key"), nullable=False),
            t.field("value", merge_types(va.type, vb.type, path + ".value"), nullable=True),
        )
    raise ArrowInvalid(f"expected field {path} of type {a}, found {b}")


def merge_fields(
    a: Sequence[t.Field], b: Sequence[t.Field], path: str = ""
) -> list[t.Field]:
    """Fields of ``a`` then new ones of ``b``, types merged by :func:`merge_types`."""
    out = list(a)
    index = {f.name: i for i, f in enumerate(out)}
    for f in b:
        where = f"{path}.{f.name}" if path else f.name
        if f.name in index:
            i = index[f.name]
            out[i] = t.field(f.name, merge_types(out[i].type, f.type, where), nullable=True)
        else:
            index[f.name] = len(out)
            out.append(f)
    return out


def describe_difference(expected: t.Schema, found: t.Schema) -> str:
    """The first field where two schemas differ, as "expected X, found Y"."""
    for e, f in zip(expected.fields, found.fields):
        if e.name != f.name:
            return f"expected field {e.name!r}, found {f.name!r}"
        if not e.type.equals(f.type):
            return f"expected field {e.name!r} of type {e.type}, found {f.type}"
    if len(expected) != len(found):
        extra = [f.name for f in (expected if len(expected) > len(found) else found)][
            min(len(expected), len(found)) :
        ]
        return (f"expected {len(expected)} fields, found {len(found)} (differing: {extra}); "
                "read with .option('mergeSchema', 'true') to unify them")
    return "schemas differ in metadata only"
