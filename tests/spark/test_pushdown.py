"""Skipping: the ``filters`` option skips batches (by footer statistics) and partition
directories; Spark's pushed filters skip nothing (Spark shares one pushed read plan
between the queries of a DataFrame), so results are identical with pushdown on and off."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed (pip install -e '.[spark]')")

from pyspark.sql.datasource import CaseInsensitiveDict

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


def _reader(path, schema, filters=None):
    from quiver.spark.source import ArrowReader

    options = {"path": path} if filters is None else {"path": path, "filters": filters}
    return ArrowReader(CaseInsensitiveDict(**options), schema)


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
    for filters, batches in (
        ('[["id", ">", 14000], ["tag", "!=", "zz"]]', 4),  # the last file's last 4 batches
        ('[["part", "==", 0], ["id", "<", 1000]]', 2),
        ('[["id", "in", [5, 15999]], ["tag", "!=", "zz"]]', 2),
        ('[["id", "is null"]]', 0),
        ('[["part", "in", [1]]]', 16),
    ):
        assert _batches(_reader(path, schema, filters).partitions()) == batches, filters


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


def test_spark_pushed_filters_skip_nothing(spark, tmp_path):
    """The first batch's body is destroyed: with pushdown on, a Spark filter that rules
    it out still reads it (and fails), as the source takes no pushed filters; the
    ``filters`` option skips it."""
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
    try:
        with pytest.raises(Exception, match=r"damaged\.arrow"):
            spark.read.format("arrow").load(path).filter("id >= 900").collect()
    finally:
        spark.conf.unset("spark.sql.python.filterPushdown.enabled")
    df = spark.read.format("arrow").option("filters", '[["id", ">=", 900]]').load(path)
    assert [r[0] for r in rows(df.select("id"), "id")] == list(range(900, 1000))


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
    schema = SparkStruct([StructField("id", LongType())])
    total = _batches(_reader(out, schema).partitions())
    assert _batches(_reader(out, schema, '[["id", ">", 39990]]').partitions()) == 1 < total
    off = str(tmp_path / "no-stats")
    spark.range(0, 100).write.format("arrow").option("statistics", "false").mode(
        "overwrite").save(off)
    name = next(f for f in os.listdir(off) if f.endswith(".arrow"))
    assert ipc.open_file(os.path.join(off, name)).statistics is None


@pytest.mark.parametrize("filters", [
    '[["x", "<", "NaN"]]', '[["x", "<=", "NaN"]]', '[["x", ">", "NaN"]]',
    '[["x", "==", "NaN"]]', '[["x", "!=", "NaN"]]', '[["x", ">", 3.0]]', '[["x", "<", 2.5]]',
    '[["x", "!=", 4.0]]',
])
def test_nan_in_data_and_filters_keeps_the_rows_unskipped_reading_keeps(spark, tmp_path,
                                                                         filters):
    """With NaN in the data or as the value, skipping never changes the rows: the same
    file with statistics and without gives the same rows (one batch per row)."""
    nan = float("nan")
    table = pa.table({"i": pa.array([0, 1, 2, 3, 4]), "x": pa.array([1.0, 2.0, nan, 4.0, None])})
    results = []
    for statistics in (True, False):
        path = str(tmp_path / f"nan{int(statistics)}.arrow")
        with ipc.new_file(path, table.schema, statistics=statistics) as writer:
            for batch in table.to_batches(max_chunksize=1):
                writer.write_batch(batch)
        df = spark.read.format("arrow").option("filters", filters).load(path)
        results.append(sorted(r[0] for r in df.select("i").collect()))
    assert results[0] == results[1]
    # and they are the rows pyarrow keeps for the same comparison
    import json
    import operator

    import pyarrow.compute as pc

    [[column, op, value]] = json.loads(filters)
    compare = {"<": operator.lt, "<=": operator.le, ">": operator.gt, "==": operator.eq,
               "!=": operator.ne}[op]
    expected = table.filter(compare(pc.field(column), float(value)))
    assert results[0] == expected.column("i").to_pylist()
