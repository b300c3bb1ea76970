"""Filter pushdown: Spark's filters skip batches (by footer statistics) and partition
directories; results are identical with pushdown on and off."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed (pip install -e '.[spark]')")

from pyspark.sql.datasource import (
    CaseInsensitiveDict,
    EqualTo,
    GreaterThan,
    In,
    IsNull,
    LessThan,
    Not,
    StringStartsWith,
)

import quiver.ipc as ipc

from .helpers import rows

pytestmark = pytest.mark.xdist_group("spark")


def _dataset(root, files: int = 4, rows_per_file: int = 4000, batch_rows: int = 500):
    """Files of sorted ids (so each batch covers a narrow id range), hive-partitioned."""
    for f in range(files):
        start = f * rows_per_file
        ids = np.arange(start, start + rows_per_file)
        table = pa.table({"id": ids, "x": ids * 0.5, "tag": [f"t{i % 5}" for i in ids]})
        path = root / f"part={f % 2}" / f"f{f}.arrow"
        path.parent.mkdir(parents=True, exist_ok=True)
        with ipc.new_file(str(path), table.schema, statistics=True) as writer:
            for batch in table.to_batches(max_chunksize=batch_rows):
                writer.write_batch(batch)
    return str(root)


def _reader(path, schema):
    from quiver.spark.source import ArrowReader

    return ArrowReader(CaseInsensitiveDict(path=path), schema)


def _batches(partitions) -> int:
    return sum(s.stop - s.start for p in partitions for s in p.splits)


def test_selective_filters_read_fewer_batches(tmp_path):
    from pyspark.sql.types import DoubleType, IntegerType, LongType, StringType, StructField
    from pyspark.sql.types import StructType as SparkStruct

    path = _dataset(tmp_path / "d")
    schema = SparkStruct([StructField("id", LongType()), StructField("x", DoubleType()),
                          StructField("tag", StringType()), StructField("part", IntegerType())])
    everything = _batches(_reader(path, schema).partitions())
    assert everything == 32
    reader = _reader(path, schema)
    filters = [GreaterThan(("id",), 14_000), StringStartsWith(("tag",), "t")]
    assert reader.pushFilters(filters) == filters  # every filter handed back to Spark
    assert _batches(reader.partitions()) == 4  # the last file's last 4 batches
    reader = _reader(path, schema)
    reader.pushFilters([EqualTo(("part",), 0), LessThan(("id",), 1000)])
    assert _batches(reader.partitions()) == 2
    reader = _reader(path, schema)
    reader.pushFilters([In(("id",), (5, 15_999)), Not(EqualTo(("tag",), "zz"))])
    assert _batches(reader.partitions()) == 2
    reader = _reader(path, schema)
    reader.pushFilters([IsNull(("id",))])
    assert _batches(reader.partitions()) == 0


QUERIES = [
    "id > 14000", "id = 77 or id = 12000", "part = 1 and id < 5000", "tag = 't3' and x >= 7000",
    "id in (1, 2, 3, 15999)", "id is null", "not (id <> 5)", "tag like 't1%' and id < 100",
]


@pytest.mark.parametrize("query", QUERIES)
def test_results_are_identical_with_pushdown_on_and_off(spark, tmp_path, query):
    path = _dataset(tmp_path / "q", files=3, rows_per_file=2000, batch_rows=250)
    results = []
    for enabled in ("false", "true"):
        spark.conf.set("spark.sql.python.filterPushdown.enabled", enabled)
        try:
            results.append(rows(spark.read.format("arrow").load(path).filter(query), "id"))
        finally:
            spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    assert results[0] == results[1]
    expected = rows(
        spark.createDataFrame(pa.concat_tables(
            pa.ipc.open_file(f).read_all().append_column(
                "part", pa.array([int(f.split("part=")[1][0])] * 2000, pa.int32()))
            for f in sorted(__import__("glob").glob(f"{path}/part=*/*.arrow"))
        ).to_pandas()).filter(query), "id")
    assert results[1] == expected


def test_nan_is_never_pruned_away(spark, tmp_path):
    values = np.array([1.0, 2.0, np.nan, 3.0])
    table = pa.table({"v": values})
    path = str(tmp_path / "nan.arrow")
    with ipc.new_file(path, table.schema, statistics=True) as writer:
        writer.write_table(table)
    got = spark.read.format("arrow").load(path).filter("v > 100").count()
    assert got == 1  # Spark orders NaN above every number


def test_spark_really_skips_the_batches_statistics_rule_out(spark, tmp_path):
    """The first batch's body is destroyed: a query whose filter rules that batch out
    succeeds only if it is never read (pushdown on), and fails when it is (off)."""
    table = pa.table({"id": np.arange(1000), "s": [f"v{i}" for i in range(1000)]})
    path = str(tmp_path / "damaged.arrow")
    with ipc.new_file(path, table.schema, statistics=True) as writer:
        for batch in table.to_batches(max_chunksize=100):
            writer.write_batch(batch)
    block = ipc.open_file(path).footer.record_batches[0]
    with open(path, "r+b") as f:
        f.seek(block.offset + block.meta_data_length)
        f.write(b"\xff" * block.body_length)
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    df = spark.read.format("arrow").load(path).filter("id >= 900")
    assert [r[0] for r in rows(df.select("id"), "id")] == list(range(900, 1000))
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "false")
    try:
        with pytest.raises(Exception, match=r"damaged\.arrow"):
            spark.read.format("arrow").load(path).filter("id >= 900").collect()
    finally:
        spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")


def test_the_sink_writes_statistics_that_the_source_prunes_with(spark, tmp_path):
    from pyspark.sql.types import LongType, StructField
    from pyspark.sql.types import StructType as SparkStruct

    out = str(tmp_path / "sunk")
    spark.range(0, 40_000, numPartitions=2).write.format("arrow").option(
        "batchRows", "5000").mode("overwrite").save(out)
    import os

    files = sorted(f for f in os.listdir(out) if f.endswith(".arrow"))
    stats = ipc.open_file(os.path.join(out, files[0])).statistics
    assert stats is not None and len(stats) >= 2
    assert stats[0].columns[0].min == 0
    reader = _reader(out, SparkStruct([StructField("id", LongType())]))
    total = _batches(reader.partitions())
    reader.pushFilters([GreaterThan(("id",), 39_990)])
    assert _batches(reader.partitions()) == 1 < total
    off = str(tmp_path / "no-stats")
    spark.range(0, 100).write.format("arrow").option("statistics", "false").mode(
        "overwrite").save(off)
    name = next(f for f in os.listdir(off) if f.endswith(".arrow"))
    assert ipc.open_file(os.path.join(off, name)).statistics is None


def test_nan_as_the_filter_value_follows_sparks_order(tmp_path):
    """Spark: every number is below NaN, NaN equals NaN; batches are kept accordingly."""
    from pyspark.sql.types import DoubleType, StructField
    from pyspark.sql.types import StructType as SparkStruct

    from quiver.spark.pushdown import _value_holds

    nan = float("nan")
    table = pa.table({"x": pa.array([1.0, 2.0, nan, 4.0])})
    path = str(tmp_path / "nanvalue.arrow")
    with ipc.new_file(path, table.schema, statistics=True) as writer:
        for batch in table.to_batches(max_chunksize=1):
            writer.write_batch(batch)
    schema = SparkStruct([StructField("x", DoubleType())])
    from pyspark.sql.datasource import GreaterThanOrEqual, LessThanOrEqual

    for spark_filter, batches in ((LessThan(("x",), nan), 3), (LessThanOrEqual(("x",), nan), 4),
                                  (GreaterThan(("x",), nan), 0),
                                  (GreaterThanOrEqual(("x",), nan), 1),
                                  (EqualTo(("x",), nan), 1), (GreaterThan(("x",), 3.0), 2)):
        reader = _reader(path, schema)
        reader.pushFilters([spark_filter])
        assert _batches(reader.partitions()) == batches, spark_filter
    from quiver.filters import Predicate

    assert _value_holds(Predicate(("p",), "<", nan), 1.0)
    assert _value_holds(Predicate(("p",), ">", 1.0), nan)
    assert _value_holds(Predicate(("p",), "==", nan), nan)
