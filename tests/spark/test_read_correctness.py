"""Reads that must be right whatever Spark pushes: the pushdown leak (issue 24), the
``filters`` option, statistics in Spark's units, partition values under a user schema,
and one huge batch read in parallel."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed (pip install -e '.[spark]')")

from pyspark.sql import functions as F

pytestmark = pytest.mark.xdist_group("spark")

PUSHDOWN = "spark.sql.python.filterPushdown.enabled"


@pytest.fixture
def pushdown_on(spark):
    before = spark.conf.get(PUSHDOWN, "false")
    spark.conf.set(PUSHDOWN, "true")
    yield spark
    spark.conf.set(PUSHDOWN, before)


def _probe_source():
    """A Python data source whose partitions() depend on the filters pushed to it: 10
    rows when a filter was pushed, 100 otherwise (every filter is handed back to Spark,
    so a query's own results would be right if the plan were its own)."""
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    class ProbeReader(DataSourceReader):
        def __init__(self) -> None:
            self.pushed = False

        def pushFilters(self, filters):  # (Spark's hook name)
            self.pushed = bool(filters)
            return list(filters)

        def partitions(self):
            return [InputPartition(10 if self.pushed else 100)]

        def read(self, partition):
            for i in range(partition.value):
                yield (i,)

    class ProbeSource(DataSource):
        @classmethod
        def name(cls):
            return "quiver_pushdown_probe"

        def schema(self):
            return "id long"

        def reader(self, schema):
            return ProbeReader()

    return ProbeSource


def spark_shares_pushed_partitions(spark) -> bool:
    """Whether the installed Spark gives an unfiltered query over a DataFrame the
    partitions its reader planned for an earlier filtered query of the same DataFrame
    (the read plan stored on the shared PythonDataSourceV2)."""
    spark.dataSource.register(_probe_source())
    before = spark.conf.get(PUSHDOWN, "false")
    spark.conf.set(PUSHDOWN, "true")
    try:
        df = spark.read.format("quiver_pushdown_probe").load()
        assert df.filter(F.col("id") < 5).count() == 5
        return df.count() != 100
    finally:
        spark.conf.set(PUSHDOWN, before)


def test_spark_behaviour_probe_and_quiver_takes_no_pushed_filters(spark):
    """The installed Spark is probed, not its version string: when it shares a pushed
    read plan between queries, quiver's reader must not take Spark's filters at all
    (a reader that overrides pushFilters would be given the leaked plan)."""
    from pyspark.sql.datasource import DataSourceReader

    from quiver.spark.source import ArrowReader

    leaks = spark_shares_pushed_partitions(spark)
    takes_filters = ArrowReader.pushFilters is not DataSourceReader.pushFilters
    assert not (leaks and takes_filters)
    # and quiver never takes them anyway: results must not depend on the setting
    assert not takes_filters
