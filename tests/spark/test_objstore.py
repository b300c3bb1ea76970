"""The Spark source and sink over S3 only (moto's server; no local output directory):
round trips, hive partitions and globs, the commit protocol without rename (nothing
visible and nothing pending after a failed job or a retried attempt), and what other
readers see."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.ipc as pa_ipc
import pytest

import quiver.ipc as ipc
from quiver.spark.objstore_sink import pending_uploads
from tests.objstore.conftest import key_of, s3  # noqa: F401 - the fixture

from .helpers import rows

pytestmark = pytest.mark.xdist_group("spark")


def _visible(s3, url: str) -> list[str]:  # noqa: F811
    fs = s3.fs()
    fs.invalidate_cache()
    root = key_of(url)
    try:
        return sorted(p[len(root) + 1:] for p in fs.find(root))
    except FileNotFoundError:
        return []


def test_write_and_read_back_over_s3_only(spark, s3):  # noqa: F811
    url = s3.url("ds")
    df = spark.range(0, 5000, numPartitions=3).selectExpr(
        "id", "cast(id * 0.5 as double) as x", "cast(id % 7 as string) as s")
    df.write.format("arrow").options(**s3.spark_options).mode("overwrite").save(url)
    names = _visible(s3, url)
    manifest = json.loads(s3.fs().cat_file(f"{key_of(url)}/_SUCCESS"))
    assert sorted(manifest["files"]) == [n for n in names if n != "_SUCCESS"]
    assert len(manifest["files"]) == 3
    assert pending_uploads(s3.fs(), key_of(url)) == []
    back = spark.read.format("arrow").options(**s3.spark_options).load(url)
    assert rows(back, "id") == rows(df, "id")
    # the same objects through pyarrow (another reader) and quiver's Python API
    for name in manifest["files"]:
        data = s3.fs().cat_file(f"{key_of(url)}/{name}")
        assert pa_ipc.open_file(data).read_all().equals(
            pa.table(ipc.read_table(f"{url}/{name}", storage_options=s3.options)))
    # append keeps the old files in the manifest
    df.limit(10).write.format("arrow").options(**s3.spark_options).mode("append").save(url)
    manifest = json.loads(s3.fs().cat_file(f"{key_of(url)}/_SUCCESS"))
    assert len(manifest["files"]) >= 4
    assert spark.read.format("arrow").options(**s3.spark_options).load(url).count() == 5010


def test_partitions_and_globs(spark, s3):  # noqa: F811
    url = s3.url("parts")
    df = spark.range(0, 300).selectExpr("id", "cast(id % 3 as int) as p")
    df.write.format("arrow").options(**s3.spark_options).option("partitionBy", "p") \
        .mode("overwrite").save(url)
    assert any(n.startswith("p=1/") for n in _visible(s3, url))
    back = spark.read.format("arrow").options(**s3.spark_options).load(url)
    assert rows(back.select("id", "p"), "id") == rows(df, "id")
    only = spark.read.format("arrow").options(**s3.spark_options).load(f"{url}/p=2/*.arrow")
    assert sorted(r[0] for r in only.collect()) == list(range(2, 300, 3))


def test_a_stream_format_dataset(spark, s3):  # noqa: F811
    url = s3.url("streams")
    df = spark.range(0, 1000, numPartitions=2).selectExpr("id", "cast(id as string) as s")
    df.write.format("arrow").options(**s3.spark_options).option("format", "stream") \
        .mode("overwrite").save(url)
    back = spark.read.format("arrow").options(**s3.spark_options).load(url)
    assert rows(back, "id") == rows(df, "id")


def test_the_staging_protocol_over_s3(spark, s3):  # noqa: F811
    """committer=staging (what gs://, abfs:// and other stores take) forced on S3: files
    staged under _temporary/<job>/ and copied into place; nothing staged stays."""
    url = s3.url("staged")
    df = spark.range(0, 3000, numPartitions=3).selectExpr("id", "cast(id % 2 as int) as p")
    df.write.format("arrow").options(**s3.spark_options).option("committer", "staging") \
        .option("partitionBy", "p").mode("overwrite").save(url)
    names = _visible(s3, url)
    assert not any(n.startswith("_temporary") for n in names)
    manifest = json.loads(s3.fs().cat_file(f"{key_of(url)}/_SUCCESS"))
    assert sorted(manifest["files"]) == [n for n in names if n != "_SUCCESS"]
    assert len(manifest["files"]) == 6
    back = spark.read.format("arrow").options(**s3.spark_options).load(url)
    assert rows(back.select("id", "p"), "id") == rows(df, "id")
    assert pending_uploads(s3.fs(), key_of(url)) == []


@pytest.mark.parametrize("committer", ["auto", "staging"])
def test_a_failed_job_leaves_nothing_visible_and_nothing_pending(spark, s3,  # noqa: F811
                                                                 committer):
    from pyspark.sql.functions import udf

    @udf("long")
    def boom(x):
        if x == 1777:
            raise ValueError("injected failure")
        return x

    url = s3.url("fail")
    bad = spark.range(0, 2000, numPartitions=4).select(boom("id").alias("id"))
    with pytest.raises(Exception, match="injected failure"):
        bad.write.format("arrow").options(**s3.spark_options).option("committer", committer) \
            .mode("overwrite").save(url)
    assert _visible(s3, url) == []
    assert pending_uploads(s3.fs(), key_of(url)) == []


def test_a_retried_attempt_leaves_nothing(spark, s3):  # noqa: F811
    from pyspark import TaskContext
    from pyspark.sql.functions import udf

    @udf("long")
    def flaky(x):
        if x == 1500 and TaskContext.get().attemptNumber() == 0:
            raise ValueError("first attempt fails")
        return x

    url = s3.url("retry")
    spark.range(0, 2000, numPartitions=2).select(flaky("id").alias("id")) \
        .write.format("arrow").options(**s3.spark_options).mode("overwrite").save(url)
    assert pending_uploads(s3.fs(), key_of(url)) == []
    manifest = json.loads(s3.fs().cat_file(f"{key_of(url)}/_SUCCESS"))
    assert len(manifest["files"]) == 2
    assert [n for n in _visible(s3, url) if n != "_SUCCESS"] == sorted(manifest["files"])
    back = spark.read.format("arrow").options(**s3.spark_options).load(url)
    assert sorted(r[0] for r in back.collect()) == list(range(2000))


@pytest.mark.parametrize("how", ["option", "session"])
def test_dynamic_partition_overwrite_keeps_the_other_partitions(spark, s3, how):  # noqa: F811
    """partitionOverwriteMode=dynamic on S3 replaces only the partitions written, as
    locally (it replaced every partition: the others' rows were lost)."""
    url = s3.url("dynamic")
    df = spark.range(0, 3000, numPartitions=3).selectExpr("id", "cast(id % 3 as int) as q")
    df.write.format("arrow").options(**s3.spark_options).option("partitionBy", "q") \
        .mode("overwrite").save(url)
    writer = df.filter("q = 1").limit(10).write.format("arrow").options(**s3.spark_options) \
        .option("partitionBy", "q").mode("overwrite")
    if how == "option":
        writer.option("partitionOverwriteMode", "dynamic").save(url)
    else:
        spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
        try:
            writer.save(url)
        finally:
            spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    back = spark.read.format("arrow").options(**s3.spark_options).load(url)
    counts = {r["q"]: r["count"] for r in back.groupBy("q").count().collect()}
    assert counts == {0: 1000, 1: 10, 2: 1000}
    names = [n for n in _visible(s3, url) if n != "_SUCCESS"]
    manifest = json.loads(s3.fs().cat_file(f"{key_of(url)}/_SUCCESS"))
    assert sorted(manifest["files"]) == names
    assert pending_uploads(s3.fs(), key_of(url)) == []


def test_a_glob_skips_hidden_and_underscore_objects(spark, s3):  # noqa: F811
    """load("s3://.../out/*") over a sink's output: the _SUCCESS manifest (and other
    hidden names a glob matches) are skipped as a local glob skips them, not read as
    data (the read failed: "expected an Arrow IPC file or stream, found text")."""
    url = s3.url("globbed")
    df = spark.range(0, 1000, numPartitions=2).selectExpr("id")
    df.write.format("arrow").options(**s3.spark_options).mode("overwrite").save(url)
    s3.fs().pipe_file(f"{key_of(url)}/.hidden", b"not arrow")
    back = spark.read.format("arrow").options(**s3.spark_options).load(f"{url}/*")
    assert sorted(r[0] for r in back.collect()) == list(range(1000))


def test_base_path_gives_the_partition_columns_above_the_paths_read(spark, s3):  # noqa: F811
    """basePath on S3, as locally: the key=value directories between it and each path
    read are partition columns (it was ignored: the column was missing)."""
    url = s3.url("based")
    df = spark.range(0, 600).selectExpr("id", "cast(id % 3 as int) as p")
    df.write.format("arrow").options(**s3.spark_options).option("partitionBy", "p") \
        .mode("overwrite").save(url)
    for paths, kept in (([f"{url}/p=2"], {2}), ([f"{url}/p=2/*.arrow"], {2}),
                        ([f"{url}/p=*"], {0, 1, 2}), ([f"{url}/p=0", f"{url}/p=2"], {0, 2})):
        back = spark.read.format("arrow").options(**s3.spark_options) \
            .option("basePath", url).load(paths)
        assert back.columns == ["id", "p"], paths
        assert sorted(tuple(r) for r in back.collect()) == \
            [(i, i % 3) for i in range(600) if i % 3 in kept], paths
    with pytest.raises(Exception, match="basePath"):
        spark.read.format("arrow").options(**s3.spark_options) \
            .option("basePath", f"{url}/p=1").load(f"{url}/p=2").schema  # noqa: B018


def test_one_large_batch_is_split_over_tasks(spark, s3):  # noqa: F811
    """A file or stream of one large record batch on S3 is cut into row ranges with a
    small maxPartitionBytes, as a local one is (it was read by one task); every row once."""
    fs = s3.fs()
    table = pa.table({"id": pa.array(range(200_000), pa.int64()),
                      "x": pa.array([i * 0.5 for i in range(200_000)])})
    for name, make in (("one.arrow", pa_ipc.new_file), ("one.arrows", pa_ipc.new_stream)):
        url = s3.url(name)
        sink = pa.BufferOutputStream()
        with make(sink, table.schema) as w:
            w.write_table(table, max_chunksize=len(table))
        fs.pipe_file(key_of(url), sink.getvalue().to_pybytes())
        df = spark.read.format("arrow").options(**s3.spark_options) \
            .option("maxPartitionBytes", "300k").load(url)
        assert df.rdd.getNumPartitions() > 1, name
        assert df.selectExpr("count(*)", "count(distinct id)", "sum(id)").collect()[0][:] \
            == (200_000, 200_000, sum(range(200_000))), name
