"""The Spark source's and sink's options, read from Spark's case-insensitive option map
(shared by the batch source and sink, :mod:`quiver.spark.source`, and the streaming ones,
:mod:`quiver.spark.streaming`)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import InputPartition

from ..errors import ArrowInvalidArgument, NotSupported
from . import plan as P
from .policy import ReadPolicy

if TYPE_CHECKING:
    from .. import types as t

MiB = 1024 * 1024


def parsed_filters(text: str | None, schema: t.Schema) -> list[Any]:
    """The ``filters`` option read against ``schema`` (:func:`quiver.spark.pushdown.
    parse_filters`), ``[]`` without the option.  The parser, and the array code exact
    filtering needs, load only when the option is given: Spark's planner processes
    import nothing else for a read without filters."""
    if text is None:
        return []
    from .pushdown import parse_filters

    return parse_filters(text, schema)


def flag_option(options: Any, key: str, default: bool) -> bool:
    value = options.get(key.lower())
    if value is None:
        return default
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise ArrowInvalidArgument(f"expected option {key}=true or false, found {value!r}")
    return text == "true"


def size_option(options: Any, key: str, default: int) -> int:
    value = options.get(key.lower())
    if value is None:
        return default
    text = str(value).strip().lower()
    units = {"k": 1024, "m": MiB, "g": 1024 * MiB}
    scale = 1
    for suffix in ("kb", "mb", "gb", "k", "m", "g", "b"):
        if text.endswith(suffix):
            scale = units.get(suffix[0], 1)
            text = text[: -len(suffix)]
            break
    try:
        n = int(text) * scale
    except ValueError:
        raise ArrowInvalidArgument(f"expected option {key} as a size, found {value!r}") from None
    if n <= 0:
        raise ArrowInvalidArgument(f"expected a positive option {key}, found {value!r}")
    return n


def names_option(options: Any, key: str) -> tuple[str, ...] | None:
    value = options.get(key.lower())
    if value is None or not str(value).strip():
        return None
    return tuple(name.strip() for name in str(value).split(",") if name.strip())


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """The source's options (Spark lower-cases their keys)."""

    merge_schema: bool = False
    columns: tuple[str, ...] | None = None
    max_partition_bytes: int = 128 * MiB
    open_cost: int = 4 * MiB
    min_partitions: int = 1
    infer_partition_types: bool = True
    policy: ReadPolicy = field(default_factory=ReadPolicy)
    validate: str = "structural"
    filters: str | None = None  # JSON, read against the schema by the reader
    max_records: int | None = None  # None: the session's setting, else Spark's default
    path_glob_filter: str | None = None  # Spark's: files whose names match are read
    recursive_file_lookup: bool = False  # Spark's: no partition columns from directories

    @classmethod
    def parse(cls, options: Any) -> ReadOptions:
        """Options from Spark's case-insensitive option map."""
        validate = str(options.get("validate", "structural")).lower()
        if validate not in ("structural", "full"):
            raise ArrowInvalidArgument(f"expected validate=structural or full, found {validate!r}")
        for key in ("modifiedBefore", "modifiedAfter"):
            # Spark's file sources read these in the session time zone, which the
            # source cannot see when it lists files; ignoring them would read every file
            if options.get(key.lower()) is not None:
                raise NotSupported(
                    f"the read option {key} is not supported by the arrow source: name "
                    "the files to read (a list of paths or a glob) instead")
        return cls(
            merge_schema=flag_option(options, "mergeSchema", False),
            columns=names_option(options, "columns"),
            max_partition_bytes=size_option(options, "maxPartitionBytes", 128 * MiB),
            open_cost=size_option(options, "openCostInBytes", 4 * MiB),
            min_partitions=int(options.get("minpartitions", os.cpu_count() or 1)),
            infer_partition_types=flag_option(options, "partitionColumnTypeInference", True),
            policy=ReadPolicy(
                wide_decimals=str(options.get("widedecimals", "error")).lower(),
                invalid_values=str(options.get("invalidvalues", "error")).lower(),
            ),
            validate=validate,
            filters=options.get("filters"),
            max_records=count_option(options, "maxRecordsPerBatch"),
            path_glob_filter=options.get("pathglobfilter"),
            recursive_file_lookup=flag_option(options, "recursiveFileLookup", False),
        )


def count_option(options: Any, key: str) -> int | None:
    value = options.get(key.lower())
    if value is None:
        return None
    try:
        n = int(str(value).strip())
    except ValueError:
        n = 0
    if n <= 0:
        raise ArrowInvalidArgument(f"expected option {key} as a positive whole number, "
                                   f"found {value!r}")
    return n


SPARK_MAX_RECORDS = 10_000  # spark.sql.execution.arrow.maxRecordsPerBatch's default


def session_max_records() -> int:
    """``spark.sql.execution.arrow.maxRecordsPerBatch`` of the active session, where the
    reader is made in one (Spark plans Python reads in a worker without a session: then
    Spark's default; the read option ``maxRecordsPerBatch`` sets it explicitly)."""
    try:
        from pyspark.sql import SparkSession

        session = SparkSession.getActiveSession()
        if session is not None:
            value = int(session.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch",
                                         str(SPARK_MAX_RECORDS)))
            if value > 0:
                return value
    except Exception:  # (no session, no JVM: Spark's default)
        pass
    return SPARK_MAX_RECORDS


class ArrowPartition(InputPartition):
    """The splits one Spark task reads."""

    def __init__(self, index: int, splits: list[P.Split]) -> None:
        super().__init__(index)
        self.splits = splits


def planned_partitions(layouts: list[P.Layout], job: P.ReadJob, opts: ReadOptions
                       ) -> list[ArrowPartition]:
    """The Spark partitions of a read of ``layouts`` (the batch and the stream source
    plan alike): batches grouped into splits of Spark's ``maxSplitBytes``, only those the
    job's ``filters`` may keep (footer statistics, :func:`quiver.spark.pushdown.
    batches_to_read`, loaded only then), packed in order."""
    total = sum(layout.file.size for layout in layouts)
    limit = P.max_split_bytes(total, len(layouts), opts.max_partition_bytes, opts.open_cost,
                              opts.min_partitions)
    if job.filters:
        from .pushdown import batches_to_read

        names = {f.name for f in job.partition_fields}
        splits = [s for layout in layouts
                  for s in P.splits_of(layout, limit, batches_to_read(
                      job.filters, layout, job.schema, names, opts.policy), job.columns)]
    else:
        splits = [s for layout in layouts for s in P.splits_of(layout, limit, None, job.columns)]
    packed = P.pack(splits, limit, opts.open_cost)
    return [ArrowPartition(i, group) for i, group in enumerate(packed)]


@dataclass(frozen=True, slots=True)
class WriteOptions:
    """The sink's options."""

    format: str = "file"
    compression: str | None = None
    max_records_per_file: int | None = None  # None: spark.sql.files.maxRecordsPerFile
    max_bytes_per_file: int = 0
    partition_by: tuple[str, ...] = ()
    statistics: bool = True
    batch_rows: int = 131_072
    partition_overwrite_mode: str | None = None  # "static" or "dynamic"; None: session's

    @classmethod
    def parse(cls, options: Any) -> WriteOptions:
        """Options from Spark's case-insensitive option map."""
        mode = options.get("partitionoverwritemode")
        mode = None if mode is None else overwrite_mode(mode, "option partitionOverwriteMode")
        fmt = str(options.get("format", "file")).lower()
        if fmt not in ("file", "stream"):
            raise ArrowInvalidArgument(f"expected format=file or stream, found {fmt!r}")
        compression = str(options.get("compression", "none")).lower()
        if compression in ("lz4_frame", "lz4frame"):
            compression = "lz4"
        if compression not in ("none", "uncompressed", "lz4", "zstd"):
            raise ArrowInvalidArgument(
                f"expected compression=none, lz4 or zstd, found {compression!r}"
            )
        try:
            given = options.get("maxrecordsperfile")
            max_records = None if given is None else int(given or 0)
        except ValueError:
            raise ArrowInvalidArgument(
                f"expected maxRecordsPerFile as a whole number, found "
                f"{options.get('maxrecordsperfile')!r}"
            ) from None
        return cls(
            format=fmt,
            compression=None if compression in ("none", "uncompressed") else compression,
            max_records_per_file=None if max_records is None else max(max_records, 0),
            max_bytes_per_file=size_option(options, "maxBytesPerFile", 1) if options.get(
                "maxbytesperfile") else 0,
            partition_by=names_option(options, "partitionBy") or (),
            statistics=flag_option(options, "statistics", True),
            batch_rows=size_option(options, "batchRows", 131_072),
            partition_overwrite_mode=mode,
        )

    def check_columns(self, names: list[str]) -> None:
        """Refuse a schema without columns, as Spark's file sources do
        (``EMPTY_SCHEMA_NOT_SUPPORTED_FOR_DATASOURCE``): an IPC batch of no columns
        would carry only a row count that no reader gives back to Spark."""
        if not names:
            raise ArrowInvalidArgument(
                "expected at least one column to write, found none (a DataFrame "
                "without columns; Spark's Parquet writer refuses it too)")


def overwrite_mode(value: str, where: str) -> str:
    mode = str(value).strip().lower()
    if mode not in ("static", "dynamic"):
        raise ArrowInvalidArgument(f"expected {where}=static or dynamic, found {value!r}")
    return mode


def job_overwrite_mode(option: str | None, seen: Iterable[str | None]) -> str:
    """``static`` or ``dynamic`` for a job: the ``partitionOverwriteMode`` write option,
    else the session setting its tasks saw (``seen``; Spark passes session settings to
    tasks, not to the Python process that commits), else ``static`` (Spark's default)."""
    if option is not None:
        return option
    modes = sorted({m for m in seen if m})
    if modes:
        return overwrite_mode(modes[0], "spark.sql.sources.partitionOverwriteMode")
    return "static"


