"""Arrow IPC as a Spark format, on quiver's own readers and writers.

>>> # spark.read.format("arrow").load("data/")          # a file, directory, glob or list
>>> # df.write.format("arrow").mode("overwrite").save("out/")

Spark finds the source by itself through the top-level module ``pyspark_quiver`` (Spark
registers any ``pyspark_*`` module with a ``DefaultSource``), under the name ``arrow``;
:func:`register` registers it explicitly, under ``arrow`` and ``quiver``.  The modules:
``policy`` (which Arrow type Spark reads for each Arrow type), ``convert`` (arrays into
those types, with numpy), ``paths`` (files and hive partitions), ``plan`` (splits on the
driver, reads on executors), ``pushdown`` (Spark's filters against statistics and
partition values), ``source`` (the data source, reader, writer and commit protocol),
``sink`` (one task's files).
"""

from __future__ import annotations

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


__all__ = ["register"]
