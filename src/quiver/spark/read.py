"""Reading one planned split on an executor (:mod:`quiver.spark.plan` plans them on the
driver).

A file-format split reads its record batch Blocks through the file reader, from a
memory map (or by ranged reads of an object, :mod:`quiver.spark.objstore`).  A stream
split replays, through quiver's stream decoder, the schema message and every dictionary
message before its first batch, then its own byte range (which holds any dictionary
deltas or replacements between its batches): the batches decode exactly as a reader of
the whole stream would see them.  Each batch is turned into the Arrow types Spark reads
(:mod:`quiver.spark.convert`), adapted to the schema Spark asked for, given its
partition columns, filtered by the ``filters`` option, cut to Spark's batch size and
handed to pyarrow through the Arrow PyCapsule protocol, without a copy.

This module is the executors' half of a read: the driver's planning (and Spark's
per-query planner process) never imports it.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from .. import types as t
from ..array import make_array
from ..array.base import Array
from ..array.build import array as build
from ..batch import RecordBatch
from ..errors import ArrowError, ArrowInvalid
from ..filters import filter_batch
from ..fs.ranged import RangedObject
from ..fs.url import is_url
from ..ipc.options import IpcReadOptions
from ..ipc.reader import open_file
from ..ipc.remote import RemoteFileReader
from ..ipc.scan import range_batches, stream_batches
from . import objstore
from .convert import Where, all_null, take, to_spark_array, valid_mask, validity_bitmap
from .paths import partition_value
from .plan import ReadJob, Split, can_widen, find_column


def _map(path: str) -> memoryview:
    fd = os.open(path, os.O_RDONLY)
    try:
        return memoryview(mmap.mmap(fd, 0, access=mmap.ACCESS_READ))
    finally:
        os.close(fd)


def file_reader(split: Any, columns: list[str] | None, validate: str) -> RemoteFileReader:
    """A reader of one file split's object, by coalesced concurrent ranges, that fetches
    no block past the split's."""
    reader = RemoteFileReader(RangedObject(split.path, objstore.options_for(split.path)),
                              columns=columns, validate=validate)
    reader.window_stop = split.stop
    return reader


def _raw_batches(split: Split, columns: list[str] | None, validate: str) -> Iterator[Any]:
    """The record batches of one split as the file holds them: a file's through its
    reader (memory-mapped, or ranged reads of an object, :mod:`quiver.spark.objstore`),
    a stream's prelude and body through a stream decoder (:mod:`quiver.ipc.scan`)."""
    remote = is_url(split.path)
    if split.format == "file":
        reader = (file_reader(split, columns, validate) if remote else
                  open_file(split.path, memory_map=True, columns=columns, validate=validate))
        yield from range_batches(reader, split.start, split.stop)
        return
    options = IpcReadOptions(columns=columns, validate=validate)
    if remote:
        yield from stream_batches(objstore.stream_pieces(split), options)
        return
    data = _map(split.path)
    yield from stream_batches([data[start:end] for start, end in [*split.prelude, split.body]],
                              options)


def _constant(dtype: t.DataType, value: Any, n: int) -> Array:
    """A column of ``n`` copies of one partition value."""
    if value is None:
        return all_null(dtype, n)
    return take(build([value], dtype), np.zeros(n, dtype=np.int64))




def adapt(arr: Array, target: t.DataType, where: Where) -> Array:
    """A Spark-compatible array as ``target`` (equal, or a widening by :func:`can_widen`)."""
    source = arr.type
    if source == target:
        return arr
    n = len(arr)
    if isinstance(source, t.NullType):
        return all_null(target, n)
    if isinstance(target, (t.IntegerType, t.FloatingPointType)) and can_widen(source, target):
        width = source.width // 8
        kind = "f" if isinstance(source, t.FloatingPointType) else "i"
        values = arr.buffers[1].view(f"<{kind}{width}")[arr.offset : arr.offset + n]
        out_kind = "f" if isinstance(target, t.FloatingPointType) else "i"
        wide = values.astype(f"<{out_kind}{target.width // 8}")
        return make_array(target, n, [_validity_at_zero(arr), wide.view(np.uint8)], (), -1)
    if isinstance(target, t.DecimalType) and can_widen(source, target):
        return make_array(target, n, arr.buffers, (), arr.null_count, arr.offset)
    if isinstance(target, (t.ListType, t.MapType)) and can_widen(source, target):
        child = adapt(arr.children[0], target.fields[0].type, where)
        return make_array(target, n, arr.buffers, [child], arr.null_count, arr.offset)
    if isinstance(target, t.StructType) and isinstance(source, t.StructType):
        by_name = {f.name: i for i, f in enumerate(source.fields)}
        children = []
        for f in target.fields:
            if f.name in by_name:
                child = arr.children[by_name[f.name]].slice(arr.offset, n)
                children.append(adapt(child, f.type, where.child(f.name)))
            else:
                children.append(all_null(f.type, n))
        return make_array(target, n, [_validity_at_zero(arr)], children, -1)
    raise ArrowInvalid(
        f"{where.file}: expected column {where.path} of type {target}, found {source}"
    )


def _validity_at_zero(arr: Array) -> np.ndarray | None:
    return validity_bitmap(valid_mask(arr))


def read_split(split: Split, job: ReadJob) -> Iterator[RecordBatch]:
    """The batches of one split as quiver batches of ``job.schema``'s Arrow types; a
    damaged file's error names it."""
    try:
        yield from _read_split(split, job)
    except ArrowError as exc:
        if split.path in str(exc):
            raise
        raise type(exc)(f"{split.path}: {exc}") from None


def _read_split(split: Split, job: ReadJob) -> Iterator[RecordBatch]:
    for batch in _converted(split, job):
        if job.filters:
            batch = filter_batch(batch, job.filters)
        n = batch.num_rows
        if n <= job.max_records:
            if n:
                yield batch
            continue
        for lo in range(0, n, job.max_records):  # zero-copy pieces Spark takes as they are
            yield batch.slice(lo, min(job.max_records, n - lo))


def _converted(split: Split, job: ReadJob) -> Iterator[RecordBatch]:
    """The split's batches (or its batch's row range) in the types Spark reads."""
    partition_names = {f.name for f in job.partition_fields}
    raw_values = dict(split.partition)
    wanted = [f.name for f in job.schema.fields if f.name not in partition_names]
    columns = None
    wanted_columns = None if split.columns is None else list(split.columns)
    first_row = 0
    for batch_index, batch in enumerate(
        _raw_batches(split, wanted_columns, job.validate), start=split.start,
    ):
        if split.rows is not None:
            first_row, stop = split.rows
            if stop > batch.num_rows:
                raise ArrowInvalid(
                    f"batch {batch_index}: expected at least {stop} rows (as planned), "
                    f"found {batch.num_rows}"
                )
            batch = batch.slice(first_row, stop - first_row)  # zero-copy
        if columns is None:
            columns = [find_column(batch.schema, name) for name in wanted]
        n = batch.num_rows
        out: list[Array] = []
        names = iter(columns)
        for f in job.schema.fields:
            if f.name in partition_names:
                # the directory's text read as the type Spark asked for (a user schema
                # may name another type than the inferred one)
                value = partition_value(raw_values.get(f.name), f.type)
                out.append(_constant(f.type, value, n))
                continue
            i = next(names)
            if i is None:
                out.append(all_null(f.type, n))
                continue
            where = Where(f"{split.path}, batch {batch_index}", f.name, first_row)
            arr = to_spark_array(batch.column(i), job.policy, where)
            out.append(adapt(arr, f.type, where))
        yield RecordBatch._trusted(job.schema, out, n)


def partition_batch(fields: Sequence[t.Field], values: dict[str, Any]) -> RecordBatch:
    """One row of partition values (already of the fields' types)."""
    schema = t.schema([t.field(f.name, f.type, nullable=True) for f in fields])
    return RecordBatch._trusted(
        schema, [_constant(f.type, values.get(f.name), 1) for f in fields], 1)


__all__ = ["adapt", "partition_batch", "read_split"]
