"""Arrow IPC as a Spark format: ``spark.read.format("arrow")`` and ``df.write.format("arrow")``.

Built on PySpark's Python Data Source API (``pyspark.sql.datasource``, Spark 4).  The
reader plans on the driver and reads on the executors (:mod:`quiver.spark.plan`); the
writer streams each task's Arrow batches into quiver's IPC writer and commits through
the protocol below.

Commit protocol
---------------
A task attempt writes under ``<path>/_temporary/<job>/task-<task>-<attempt>-<id>/`` (hive
directories inside it when ``partitionBy`` is set; ``id`` is Spark's attempt id, unique
in the application) and reports its files in its commit message.  On the driver,
``commit`` moves the old data aside into the job's directory (overwrite only, at that
moment), moves the reported files into place, writes ``_SUCCESS`` and removes
``_temporary/<job>``, which takes with it the old data and the files of failed, retried
or speculative attempts that were never reported; if a step fails, the new files are
taken out and the old ones put back.  ``abort`` removes ``_temporary/<job>``; nothing of
the job was visible before, so nothing of it remains.  Readers skip ``_``-prefixed names,
so a job in progress is never half-visible.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    WriterCommitMessage,
)

from .. import types as t
from ..errors import ArrowError, ArrowInvalid, ArrowInvalidArgument
from . import objstore
from . import plan as P
from .options import (
    ArrowPartition,
    ReadOptions,
    WriteOptions,
    flag_option,
    job_overwrite_mode,
    parsed_filters,
    planned_partitions,
    session_max_records,
)
from .paths import (
    base_path_from_options,
    glob_filter,
    list_files,
    partition_schema,
    partition_value,
    paths_from_options,
)
from .policy import (
    from_spark_schema,
    to_spark_schema,
)
from .streaming import ArrowStreamReader, ArrowStreamWriter, infer_schema

if TYPE_CHECKING:
    from .sink import WrittenFile


class _Dataset:
    """The files of a read, their layouts and the schema they give (driver side)."""

    def __init__(self, options: Any) -> None:
        self.options = ReadOptions.parse(options)
        paths = paths_from_options(options)
        self.storage: tuple[list[str], dict[str, Any]] | None = None
        opts = self.options
        keep = None if opts.path_glob_filter is None else glob_filter(opts.path_glob_filter)
        partitions = not opts.recursive_file_lookup
        if objstore.any_url(paths):  # object storage (spark/objstore.py)
            self.storage = (paths, objstore.storage_options(options))
            objstore.register(*self.storage)
            self.files = objstore.list_files(paths, self.storage[1], keep=keep,
                                             partitions=partitions,
                                             base_path=options.get("basepath") or None)
        else:
            self.files = list_files(paths, base_path_from_options(options), keep=keep,
                                    partitions=partitions)
        self.partition_fields = tuple(
            partition_schema(self.files, self.options.infer_partition_types)
        )
        self._layouts: list[P.Layout] | None = None

    def layouts(self) -> list[P.Layout]:
        if self._layouts is None:
            self._layouts = P.read_layouts(self.files)
        return self._layouts

    def data_schema(self) -> t.Schema:
        """The Spark-facing data schema: merged over all files with mergeSchema, else
        the first file's (the reader checks the others against it)."""
        opts = self.options
        if not self.files:
            raise ArrowInvalidArgument("expected at least one Arrow IPC file, found none")
        if opts.merge_schema:
            fields: list[t.Field] = []
            for layout in self.layouts():
                schema = P.spark_schema_of(layout, opts.policy, None)
                try:
                    fields = P.merge_fields(fields, schema.fields)
                except Exception as exc:
                    raise type(exc)(f"{layout.file.path}: {exc}") from None
            schema = t.schema(fields)
            return P.select_columns(schema, opts.columns)
        return P.spark_schema_of(self.reference_layout(), opts.policy, opts.columns)

    def reference_layout(self) -> P.Layout:
        """The file whose schema the dataset takes without mergeSchema: the first that
        holds a record batch, else the first (a schema-only file, as an empty write
        leaves, may predate the partitioning; Spark's sources read the same rows)."""
        if self._layouts is not None:
            return next((lay for lay in self._layouts if lay.batches), self._layouts[0])
        for data_file in self.files:
            layout = P.read_layout(data_file)
            if layout.batches:
                return layout
        return P.read_layout(self.files[0])

    def schema(self) -> t.Schema:
        """Data columns, then the partition columns not already among them; a partition
        column also stored in the files keeps the files' position and takes the
        directory's name, type and values (Spark's ``mergeDataAndPartitionSchema``)."""
        data = self.data_schema()
        partitions = {f.name.lower(): f for f in self.partition_fields}
        fields = [partitions.pop(f.name.lower(), f) for f in data.fields]
        return t.schema(fields + list(partitions.values()))


class ArrowDataSource(DataSource):
    """``spark.read.format("arrow")`` / ``df.write.format("arrow")`` (also ``"quiver"``)."""

    @classmethod
    def name(cls) -> str:
        """The format name."""
        return "arrow"

    def schema(self) -> Any:
        """The Spark schema of the dataset (first file, or merged with mergeSchema); with
        ``tail=true`` (streams only) the first stream's, read from its first message.  A
        ``filters`` option is checked against it here, when the DataFrame is made."""
        if flag_option(self.options, "tail", False):
            schema = infer_schema(self.options)
            parsed_filters(ReadOptions.parse(self.options).filters, schema)
            return to_spark_schema(schema)
        dataset = _Dataset(self.options)
        schema = dataset.schema()
        parsed_filters(dataset.options.filters, schema)
        return to_spark_schema(schema)

    def reader(self, schema: Any) -> DataSourceReader:
        """A reader for ``schema`` (the inferred one, or the user's)."""
        return ArrowReader(self.options, schema)

    def writer(self, schema: Any, overwrite: bool) -> Any:
        """A writer for this job (append, or overwrite when ``overwrite``)."""
        paths = paths_from_options(self.options)
        if len(paths) == 1 and objstore.any_url(paths):  # object storage: no rename
            from .objstore_sink import object_store_writer

            return object_store_writer(paths[0], WriteOptions.parse(self.options),
                                       from_spark_schema(schema), overwrite,
                                       objstore.storage_options(self.options),
                                       self.options.get("committer"))
        return ArrowWriter(self.options, schema, overwrite)

    def streamReader(self, schema: Any) -> Any:
        """``spark.readStream.format("arrow")``: new files, or growing streams with
        ``tail=true`` (:mod:`quiver.spark.streaming`)."""
        return ArrowStreamReader(self.options, schema)

    def streamWriter(self, schema: Any, overwrite: bool) -> Any:
        """``df.writeStream.format("arrow")``: each micro-batch committed exactly once
        (on object storage by :class:`~quiver.spark.objstore_sink.ObjectStoreStreamWriter`)."""
        if objstore.any_url(paths_from_options(self.options)):
            from .objstore_sink import ObjectStoreStreamWriter

            return ObjectStoreStreamWriter(self.options, schema, overwrite)
        return ArrowStreamWriter(self.options, schema, overwrite)


class QuiverDataSource(ArrowDataSource):
    """The same source under the name ``quiver``."""

    @classmethod
    def name(cls) -> str:
        """The format name."""
        return "quiver"


class ArrowReader(DataSourceReader):
    """Plans partitions on the driver; reads them on executors as Arrow batches.

    It takes no filters from Spark (no ``pushFilters``): Spark shares one read plan
    between the queries of a DataFrame, so a plan made for one query's filters would lose
    rows in the next (:mod:`quiver.spark.pushdown`).  Skipping comes from the ``filters``
    option, which every query of the DataFrame sees.
    """

    def __init__(self, options: Any, schema: Any) -> None:
        self.dataset = _Dataset(options)
        opts = self.dataset.options
        target = from_spark_schema(schema)
        partition_names = {p.name for p in self.dataset.partition_fields}
        data_names = [f.name for f in target.fields if f.name not in partition_names]
        # partition columns as Spark reads them: the user's schema's types, if given
        self.partition_fields = tuple(
            target.field(p.name) if p.name in target.names else p
            for p in self.dataset.partition_fields
        )
        self.job = P.ReadJob(
            schema=target,
            partition_fields=self.dataset.partition_fields,
            columns=tuple(data_names) if opts.columns is not None else None,
            policy=opts.policy,
            validate=opts.validate,
            filters=parsed_filters(opts.filters, target),
            max_records=opts.max_records or session_max_records(),
        )
        self._check_files(target)

    def _check_files(self, target: t.Schema) -> None:
        """Without mergeSchema every file must give the first file's Spark schema; in
        any case each file's columns must become the types Spark asked for."""
        opts = self.dataset.options
        partitions = {f.name.lower() for f in self.dataset.partition_fields}
        # a partition column is read from the directories, not from the files
        wanted = {f.name: f.type for f in target.fields if f.name.lower() not in partitions}
        layouts = self.dataset.layouts()
        def data_part(schema: t.Schema) -> t.Schema:
            # a column also named by key=value directories is read from them: a file
            # written before the data was partitioned may hold it, the others not
            return t.schema([f for f in schema.fields if f.name.lower() not in partitions])

        reference = None
        if not opts.merge_schema and layouts:
            first = self.dataset.reference_layout()
            reference = data_part(P.spark_schema_of(first, opts.policy, opts.columns))
        for layout in layouts:
            if reference is not None:
                schema = data_part(P.spark_schema_of(layout, opts.policy, opts.columns))
                if not schema.equals(reference):
                    raise ArrowInvalidArgument(
                        f"{layout.file.path}: its schema differs from "
                        f"{first.file.path}: {P.describe_difference(reference, schema)}"
                    )
            else:
                schema = P.spark_schema_of(layout, opts.policy, None)
            for f in schema.fields:
                if f.name in wanted and not P.can_widen(f.type, wanted[f.name]):
                    raise ArrowInvalidArgument(
                        f"{layout.file.path}: expected column {f.name} as {wanted[f.name]} "
                        f"(the schema Spark was given), found {f.type}, which does not "
                        "convert without loss"
                    )

    def partitions(self) -> list[ArrowPartition]:
        """Batches of every file grouped into splits (only those the ``filters`` option
        may keep, by partition values and footer statistics), packed into partitions."""
        opts = self.dataset.options
        job = self.job
        layouts = self.dataset.layouts()
        if job.filters and self.partition_fields:
            layouts = [layout for layout in layouts if self._directory_may_match(layout)]
        return planned_partitions(layouts, job, opts) or [ArrowPartition(0, [])]

    def _directory_may_match(self, layout: P.Layout) -> bool:
        raw = dict(layout.file.partition)
        # a timestamp directory names a time in the session's zone, which the driver's
        # Python worker cannot see: such columns never rule a directory out here (the
        # executors, which see the zone, filter their rows exactly)
        fields = [f for f in self.partition_fields
                  if not (isinstance(f.type, t.TimestampType) and f.type.tz)]
        try:
            values = {f.name: partition_value(raw.get(f.name), f.type) for f in fields}
        except (ArrowError, ValueError, TypeError):
            return True  # a value that does not read as its type: the executor says so
        from .pushdown import partition_matches  # (only with filters: see partitions)

        return partition_matches(self.job.filters, values, fields)

    def read(self, partition: ArrowPartition) -> Iterator[Any]:
        """The partition's rows as pyarrow RecordBatches (zero-copy, PyCapsule), only
        those the ``filters`` option keeps, at most ``maxRecordsPerBatch`` rows each."""
        import pyarrow as pa

        from .read import read_split

        if self.dataset.storage is not None:  # object storage: the options, on executors
            objstore.register(*self.dataset.storage)
        for split in partition.splits:
            for batch in read_split(split, self.job):
                yield pa.record_batch(batch)


# -- writing ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ArrowCommitMessage(WriterCommitMessage):
    """What a successful task attempt reports: its directory and its files."""

    attempt_dir: str
    files: tuple[WrittenFile, ...]
    # spark.sql.sources.partitionOverwriteMode as the task saw it (Spark passes session
    # settings to tasks, not to the Python process that plans and commits the write)
    overwrite_mode: str | None = None


_PARTITION_TYPES = (t.BoolType, t.IntegerType, t.FloatingPointType, t.DecimalType,
                    t.StringType, t.BinaryType, t.DateType, t.TimestampType, t.TimeType)


def _job_dir(path: str, job: str) -> str:
    return os.path.join(path, "_temporary", job)


def _remove_job_dir(path: str, job: str) -> None:
    job_dir = _job_dir(path, job)
    for _ in range(3):  # a task still writing may add a file while the tree is removed
        shutil.rmtree(job_dir, ignore_errors=True)
        if not os.path.exists(job_dir):
            break
    # another job's attempt may still be there, or it is already gone
    with contextlib.suppress(OSError):
        os.rmdir(os.path.join(path, "_temporary"))


class ArrowWriter(DataSourceArrowWriter):
    """Each task streams its Arrow batches into quiver's IPC writer (see the module doc)."""

    def __init__(self, options: Any, schema: Any, overwrite: bool) -> None:
        paths = paths_from_options(options)
        if len(paths) != 1:
            raise ArrowInvalidArgument(f"expected one output path, found {len(paths)}")
        self.path = paths[0]
        self.overwrite = overwrite
        self.options = WriteOptions.parse(options)
        self.job = uuid.uuid4().hex[:16]
        self.arrow_schema = from_spark_schema(schema)
        names = self.arrow_schema.names
        self.options.check_columns(names)
        lowered = [n.lower() for n in names]
        keys = self.options.partition_by
        missing = [c for c in keys if c.lower() not in lowered]
        if missing:
            raise ArrowInvalidArgument(
                f"expected partitionBy columns among {names}, found {missing}"
            )
        if len({k.lower() for k in keys}) != len(keys):
            raise ArrowInvalidArgument(f"expected distinct partitionBy columns, found {keys}")
        for key in keys:
            dtype = self.arrow_schema.field(lowered.index(key.lower())).type
            if not isinstance(dtype, _PARTITION_TYPES):
                raise ArrowInvalidArgument(
                    f"expected partitionBy column {key} of a plain type (a number, string, "
                    f"binary, boolean, date, timestamp or time), found {dtype}"
                )
        if keys and len(keys) == len(names):
            raise ArrowInvalidArgument("expected at least one column outside partitionBy")
        # the job's directory is made here, on the driver, before any task runs: tasks
        # only make their attempt directories inside it, so a task still running when
        # the job is aborted cannot bring it back after abort() removed it
        os.makedirs(_job_dir(self.path, self.job), exist_ok=True)

    # executor side
    def write(self, iterator: Iterator[Any]) -> ArrowCommitMessage:
        """Write this task's batches under its attempt directory; report the files."""
        from pyspark import TaskContext

        ctx = TaskContext.get()
        task = ctx.partitionId() if ctx is not None else 0
        attempt = ctx.attemptNumber() if ctx is not None else 0
        # the directory is named by Spark's attempt id, unique in the application: a
        # stage retried starts attempt numbers at 0 again
        unique = ctx.taskAttemptId() if ctx is not None else 0
        attempt_dir = os.path.join(_job_dir(self.path, self.job),
                                   f"task-{task:05d}-{attempt}-{unique}")
        try:
            os.mkdir(attempt_dir)
        except FileNotFoundError:
            raise ArrowInvalid(
                f"expected the job directory {_job_dir(self.path, self.job)} to write into, "
                "found it gone (the job was aborted or has committed)"
            ) from None
        except FileExistsError:  # the same attempt twice: only without a TaskContext
            raise ArrowInvalid(
                f"expected a new attempt directory, found {attempt_dir} already written"
            ) from None
        options = self.options
        if options.max_records_per_file is None and ctx is not None:
            # as Spark's file sources: the session setting when the option is not given
            setting = ctx.getLocalProperty("spark.sql.files.maxRecordsPerFile")
            with contextlib.suppress(ValueError):
                options = replace(options, max_records_per_file=max(int(setting or 0), 0))
        from .sink import TaskFiles, write_all

        files = TaskFiles(attempt_dir, f"part-{task:05d}-{attempt}-{self.job}", options)
        written = write_all(files, iterator)
        mode = None
        if ctx is not None:
            mode = ctx.getLocalProperty("spark.sql.sources.partitionOverwriteMode")
        return ArrowCommitMessage(attempt_dir, tuple(written), mode)

    def overwrite_mode(self, messages: list[ArrowCommitMessage]) -> str:
        """``static`` or ``dynamic``: the write option, else the session setting the
        tasks saw, else ``static`` (Spark's default)."""
        return job_overwrite_mode(self.options.partition_overwrite_mode,
                                  (m.overwrite_mode for m in messages))

    # driver side
    def commit(self, messages: list[ArrowCommitMessage | None]) -> None:
        """Make the reported files visible, replacing the old data on overwrite: all of
        it, or with ``partitionOverwriteMode=dynamic`` (the option, else the session
        setting) and ``partitionBy`` only the partition directories this job writes.

        The old entries are first moved aside into the job's directory, then the new files
        are moved in; only when all of that worked is the old data deleted (with the job's
        directory).  If anything fails, the new files are taken out again and the old
        ones put back, so a failed commit loses nothing.  A job without rows leaves a
        file that carries its schema, unless it is partitioned: as Spark's file sources,
        it then writes no file (one at the root would sit beside ``key=value``
        directories).
        """
        from .sink import write_empty

        reported = [m for m in messages if m is not None]
        os.makedirs(self.path, exist_ok=True)
        aside = os.path.join(_job_dir(self.path, self.job), "_old")
        moved_aside: list[tuple[str, str]] = []  # (entry, its name in aside)
        placed: list[str] = []
        try:
            if self.overwrite:
                os.makedirs(aside, exist_ok=True)
                if self.options.partition_by and self.overwrite_mode(reported) == "dynamic":
                    replaced = sorted({os.path.dirname(w.relative)
                                       for m in reported for w in m.files})
                else:
                    replaced = [n for n in sorted(os.listdir(self.path)) if n != "_temporary"]
                for i, name in enumerate(replaced):
                    if os.path.lexists(os.path.join(self.path, name)):
                        os.replace(os.path.join(self.path, name), os.path.join(aside, str(i)))
                        moved_aside.append((name, str(i)))
            for message in reported:
                for written in message.files:
                    source = os.path.join(message.attempt_dir, written.relative)
                    target = os.path.join(self.path, written.relative)
                    os.makedirs(os.path.dirname(target), exist_ok=True)
                    os.replace(source, target)
                    placed.append(target)
            if not placed and not self.options.partition_by:
                # an empty DataFrame still leaves a file that carries its schema
                placed.append(write_empty(self.path, f"part-00000-0-{self.job}",
                                          self.arrow_schema, self.options))
            with open(os.path.join(self.path, "_SUCCESS"), "wb"):
                pass
        except BaseException:
            self._undo(placed, moved_aside, aside)
            raise
        _remove_job_dir(self.path, self.job)

    def _undo(self, placed: list[str], moved_aside: list[tuple[str, str]], aside: str
              ) -> None:
        """Take the new files out and put the old entries back (a failed commit)."""
        for target in placed:
            with contextlib.suppress(OSError):
                os.remove(target)
            parent = os.path.dirname(target)
            while parent != self.path and parent.startswith(self.path):
                try:
                    os.rmdir(parent)  # only directories the commit emptied again
                except OSError:
                    break
                parent = os.path.dirname(parent)
        for name, kept in moved_aside:
            with contextlib.suppress(OSError):
                os.makedirs(os.path.dirname(os.path.join(self.path, name)), exist_ok=True)
                os.replace(os.path.join(aside, kept), os.path.join(self.path, name))

    def abort(self, messages: list[ArrowCommitMessage | None]) -> None:
        """Remove everything this job wrote (reported or not)."""
        _remove_job_dir(self.path, self.job)


__all__ = [
    "ArrowDataSource",
    "ArrowReader",
    "ArrowWriter",
    "QuiverDataSource",
]
