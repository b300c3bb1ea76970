"""Arrow IPC as a Spark format, on quiver's own readers and writers.

>>> # spark.read.format("arrow").load("data/")          # a file, directory, glob or list
>>> # df.write.format("arrow").mode("overwrite").save("out/")

Spark finds the source by itself through the top-level module ``pyspark_quiver`` (Spark
registers any ``pyspark_*`` module with a ``DefaultSource``), under the name ``arrow``;
:func:`register` registers it explicitly, under ``arrow`` and ``quiver``.  The modules:
``policy`` (which Arrow type Spark reads for each Arrow type), ``convert`` (arrays into
those types, with numpy), ``paths`` (files and hive partitions), ``hive`` (partition values
as Spark spells, parses and infers them; session time zones), ``plan`` (splits on the
driver, reads on executors), ``pushdown`` (Spark's filters against statistics and
partition values), ``source`` (the data source, reader, writer and commit protocol),
``sink`` (one task's files).
"""

from __future__ import annotations

import os
import sys
from typing import Any


def register(spark: Any, *, filter_pushdown: bool = True) -> None:
    """Register the source with ``spark`` under the names ``arrow`` and ``quiver``.

    ``filter_pushdown`` turns on Spark's ``spark.sql.python.filterPushdown.enabled`` (off
    by default in Spark) so that the source hears a query's filters and skips the record
    batches and partition directories they rule out; results are the same either way.
    """
    from .source import ArrowDataSource, QuiverDataSource

    if filter_pushdown:
        spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    spark.dataSource.register(ArrowDataSource)
    spark.dataSource.register(QuiverDataSource)


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


__all__ = ["register", "session"]
