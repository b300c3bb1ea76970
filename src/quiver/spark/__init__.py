"""Arrow IPC as a Spark format, on quiver's own readers and writers.

>>> # spark.read.format("arrow").load("data/")          # a file, directory, glob or list
>>> # df.write.format("arrow").mode("overwrite").save("out/")

Spark finds the source by itself through the top-level module ``pyspark_quiver`` (Spark
registers any ``pyspark_*`` module with a ``DefaultSource``), under the name ``arrow``;
:func:`register` registers it explicitly, under ``arrow`` and ``quiver``.  The modules:
``policy`` (which Arrow type Spark reads for each Arrow type), ``convert`` (arrays into
those types, with numpy), ``paths`` (files and hive partitions), ``hive`` (partition values
as Spark spells, parses and infers them; session time zones), ``plan`` (splits on the
driver, reads on executors), ``pushdown`` (the ``filters`` read option: exact filtering,
and skipping by statistics and partition values), ``source`` (the data source, reader,
writer and commit protocol), ``sink`` (one task's files), ``streaming`` (the Structured
Streaming source and sink), ``objstore`` / ``objstore_sink`` (object storage).
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any


def register(spark: Any, *, filter_pushdown: bool | None = None) -> None:
    """Register the source with ``spark`` under the names ``arrow`` and ``quiver``.

    ``filter_pushdown`` is accepted for compatibility and does nothing: the source takes
    no filters from Spark (Spark shares one read plan between the queries of a
    DataFrame, so skipping by pushed filters loses rows; see :mod:`quiver.spark.pushdown`)
    and leaves ``spark.sql.python.filterPushdown.enabled`` as it is, since that setting
    applies to every Python data source of the session.  Skip data with the read option
    ``filters`` (:func:`filters_option`) instead.
    """
    from .source import ArrowDataSource, QuiverDataSource

    if filter_pushdown is not None:
        warnings.warn("register(filter_pushdown=...) has no effect: use the read option "
                      "'filters' to skip data", DeprecationWarning, stacklevel=2)
    spark.dataSource.register(ArrowDataSource)
    spark.dataSource.register(QuiverDataSource)


def filters_option(filters: Any) -> str:
    """The JSON of the read option ``filters`` for filters in the form of
    ``pyarrow.parquet.read_table(filters=...)``:
    ``spark.read.format("arrow").option("filters", filters_option([("id", "<", 10)]))``.

    >>> filters_option([("id", ">=", 10), ("id", "<", 20)])
    '[["id", ">=", 10], ["id", "<", 20]]'
    """
    from .pushdown import filters_option as build

    return build(filters)


def session(master: str = "local[*]", app: str = "quiver", **conf: str) -> Any:
    """A Spark session on ``master`` with the source registered: workers run this
    Python, Spark binds 127.0.0.1 unless told otherwise, the UI is off, the session
    zone is UTC and the log shows errors only.  ``conf`` adds Spark settings
    (``spark.sql.shuffle.partitions="8"``, ...)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    builder = (SparkSession.builder.master(master).appName(app)
               .config("spark.ui.enabled", "false")
               .config("spark.sql.session.timeZone", "UTC"))
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


__all__ = ["filters_option", "register", "session"]
