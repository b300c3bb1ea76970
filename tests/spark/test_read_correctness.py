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


# -- the reproduction of issue 24, on a multi-batch dataset with statistics ----------------

N = 200_000


@pytest.fixture(scope="module")
def sunk(spark, tmp_path_factory):
    """N ids written by quiver's sink in 10,000-row batches, footer statistics on."""
    out = str(tmp_path_factory.mktemp("sunk") / "ids")
    (spark.range(0, N, numPartitions=2).withColumn("v", F.col("id") % 7)
     .write.format("arrow").option("batchRows", "10000").mode("overwrite").save(out))
    return out


@pytest.mark.parametrize("pushdown", ["true", "false"])
def test_a_dataframe_reused_joined_and_unioned_loses_no_rows(spark, sunk, pushdown):
    before = spark.conf.get(PUSHDOWN, "false")
    spark.conf.set(PUSHDOWN, pushdown)
    try:
        df = spark.read.format("arrow").load(sunk)
        assert df.filter(F.col("id") < 1000).count() == 1000
        assert df.count() == N  # the issue: 10,000 (one batch) after the filtered count
        a = df.filter(F.col("id") < 1000).select("id")
        b = df.filter(F.col("id") >= N - 1000).select((F.col("id") - (N - 1000)).alias("id"))
        assert a.join(b, "id").count() == 1000
        assert a.union(b).count() == 2000
        assert df.filter(F.col("id") >= N - 5).count() == 5
        assert df.agg(F.sum("v")).first()[0] == sum(i % 7 for i in range(N))
    finally:
        spark.conf.set(PUSHDOWN, before)


def test_register_leaves_the_pushdown_setting_alone(spark):
    from quiver.spark import register

    before = spark.conf.get(PUSHDOWN, "false")
    spark.conf.set(PUSHDOWN, "false")
    try:
        register(spark)
        assert spark.conf.get(PUSHDOWN) == "false"
        with pytest.warns(DeprecationWarning, match="no effect"):
            register(spark, filter_pushdown=True)
        assert spark.conf.get(PUSHDOWN) == "false"
    finally:
        spark.conf.set(PUSHDOWN, before)
