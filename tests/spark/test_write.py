"""df.write.format("arrow"): every Spark type, modes, partitioning, rolling, the commit
protocol under failure, and files other tools read."""

from __future__ import annotations

import datetime as dt
import decimal
import os

import pyarrow as pa
import pyarrow.dataset as ds
import pytest

import quiver.ipc as ipc
from quiver.spark.sink import TaskFiles

from .helpers import data_files, rows

pytestmark = pytest.mark.xdist_group("spark")

ALL_TYPES = """
    b boolean, i8 tinyint, i16 smallint, i32 int, i64 bigint, f32 float, f64 double,
    dec decimal(20,4), s string, bin binary, d date, ts timestamp, ntz timestamp_ntz,
    dti interval day to second, tm time, arr array<int>, m map<string,double>,
    st struct<x:int, y:array<string>>, nul void
"""


def _read(root, name) -> bytes:
    with open(os.path.join(root, name), "rb") as f:
        return f.read()


def _all_types_rows():
    return [
        (True, 1, 2, 3, 4, 1.5, 2.5, decimal.Decimal("1.2345"), "héllo", b"\x00\x01",
         dt.date(2024, 2, 29), dt.datetime(2024, 1, 1, 12, 0, tzinfo=dt.UTC),
         dt.datetime(2024, 1, 1, 12, 0, 0, 123456), dt.timedelta(days=1, microseconds=7),
         dt.time(23, 59, 59, 999999), [1, None, 3], {"k": 1.0}, (7, ["a", None]), None),
        (None,) * 19,
        (False, -128, -32768, -(2**31), -(2**63), -0.0, float("inf"),
         decimal.Decimal("-9999999999999999.9999"), "", b"", dt.date(1900, 1, 1),
         dt.datetime(1900, 1, 1, tzinfo=dt.UTC), dt.datetime(9999, 12, 31, 23, 59, 59),
         dt.timedelta(days=-3), dt.time(0, 0), [], {}, (None, []), None),
    ]


def test_every_spark_type_round_trips(spark, tmp_path):
    df = spark.createDataFrame(_all_types_rows(), ALL_TYPES)
    out = str(tmp_path / "types")
    df.write.format("arrow").mode("overwrite").save(out)
    back = spark.read.format("arrow").load(out)
    assert back.schema.simpleString() == df.schema.simpleString()
    key = "i64"
    assert rows(back, key) == rows(df, key)


@pytest.mark.parametrize(("fmt", "compression"),
                         [("file", "none"), ("file", "lz4"), ("stream", "zstd")])
def test_formats_and_compression(spark, tmp_path, fmt, compression):
    df = spark.range(0, 5000).selectExpr("id", "cast(id % 17 as string) as s")
    out = str(tmp_path / "fc")
    (df.repartition(3).write.format("arrow").option("format", fmt)
     .option("compression", compression).mode("overwrite").save(out))
    files = data_files(out)
    assert len(files) == 3
    suffix = ".arrows" if fmt == "stream" else ".arrow"
    assert all(f.endswith(suffix) and f.startswith("part-") for f in files)
    opener = ipc.open_stream if fmt == "stream" else ipc.open_file
    with opener(os.path.join(out, files[0]), validate="full") as reader:
        batches = list(reader)
    if compression != "none" and batches:
        from quiver.ipc.index import scan_messages

        codecs = {m.compression for m in scan_messages(_read(out, files[0]))
                  if m.kind == "record_batch"}
        assert codecs == {"lz4_frame" if compression == "lz4" else "zstd"}
    assert sorted(r[0] for r in spark.read.format("arrow").load(out).select("id").collect()) \
        == list(range(5000))


def test_append_and_overwrite(spark, tmp_path):
    out = str(tmp_path / "modes")
    spark.range(0, 10).write.format("arrow").mode("overwrite").save(out)
    spark.range(10, 15).write.format("arrow").mode("append").save(out)
    assert sorted(r[0] for r in spark.read.format("arrow").load(out).collect()) == list(range(15))
    before = data_files(out)
    spark.range(100, 103).write.format("arrow").mode("overwrite").save(out)
    after = data_files(out)
    assert not set(before) & set(after)
    assert sorted(r[0] for r in spark.read.format("arrow").load(out).collect()) == [100, 101, 102]
    assert os.path.exists(os.path.join(out, "_SUCCESS"))
    assert not os.path.exists(os.path.join(out, "_temporary"))


def test_partition_by_writes_hive_directories_and_reads_back(spark, tmp_path):
    df = spark.createDataFrame(
        [(1, "a/b", dt.date(2024, 1, 1), 10.0), (2, "a/b", dt.date(2024, 1, 2), 20.0),
         (3, None, dt.date(2024, 1, 1), 30.0), (4, "c", dt.date(2024, 1, 1), None)],
        "id int, city string, day date, v double",
    )
    out = str(tmp_path / "hive")
    df.write.format("arrow").option("partitionBy", "city,day").mode("overwrite").save(out)
    dirs = sorted({os.path.dirname(f) for f in data_files(out)})
    assert dirs == [
        "city=__HIVE_DEFAULT_PARTITION__/day=2024-01-01",
        "city=a%2Fb/day=2024-01-01", "city=a%2Fb/day=2024-01-02", "city=c/day=2024-01-01",
    ]
    for f in data_files(out):
        with ipc.open_file(os.path.join(out, f)) as reader:
            assert reader.schema.names == ["id", "v"]
    back = spark.read.format("arrow").load(out)
    assert back.columns == ["id", "v", "city", "day"]
    assert rows(back.select("id", "city", "day", "v"), "id") == rows(
        df.select("id", "city", "day", "v"), "id")


def test_small_spark_batches_are_written_as_larger_ones(tmp_path):
    writer = _writer(tmp_path / "gather", batchRows="25000")
    message = writer.write(iter(_batches(*[(i, i + 10_000) for i in range(0, 100_000, 10_000)])))
    (written,) = message.files
    path = os.path.join(message.attempt_dir, written.relative)
    with ipc.open_file(path) as reader:
        assert [reader.get_batch(i).num_rows for i in range(len(reader))] == [
            30_000, 30_000, 30_000, 10_000]
        assert reader.read_all().column("id").to_pylist() == list(range(100_000))


def test_files_roll_at_max_records_and_max_bytes(spark, tmp_path):
    df = spark.range(0, 2500, numPartitions=1).selectExpr("id", "repeat('x', 100) as pad")
    out = str(tmp_path / "roll")
    df.write.format("arrow").option("maxRecordsPerFile", "1000").mode("overwrite").save(out)
    counts = []
    for f in data_files(out):
        with ipc.open_file(os.path.join(out, f)) as reader:
            counts.append(reader.read_all().num_rows)
    assert sorted(counts) == [500, 1000, 1000]
    out2 = str(tmp_path / "roll-bytes")
    (df.write.format("arrow").option("maxBytesPerFile", "100k")
     .option("compression", "none").mode("overwrite").save(out2))
    sizes = [os.path.getsize(os.path.join(out2, f)) for f in data_files(out2)]
    assert len(sizes) >= 3 and max(sizes) < 100 * 1024 + 16 * 1024, sizes
    assert spark.read.format("arrow").load(out2).count() == 2500


def test_injected_task_failure_leaves_previous_data_and_nothing_else(spark, tmp_path):
    from pyspark.sql.functions import udf

    out = str(tmp_path / "fail")
    spark.range(0, 5).write.format("arrow").mode("overwrite").save(out)
    before = {f: _read(out, f) for f in data_files(out)}

    @udf("long")
    def boom(x):
        if x == 777:
            raise ValueError("injected failure")
        return x

    bad = spark.range(0, 2000, numPartitions=4).select(boom("id").alias("id"))
    with pytest.raises(Exception, match="injected failure"):
        bad.write.format("arrow").mode("overwrite").save(out)
    assert {f: _read(out, f) for f in data_files(out)} == before
    assert not os.path.exists(os.path.join(out, "_temporary"))
    assert sorted(r[0] for r in spark.read.format("arrow").load(out).collect()) == list(range(5))


def test_retried_attempt_leaves_no_visible_file(spark, tmp_path):
    from pyspark import TaskContext
    from pyspark.sql.functions import udf

    @udf("long")
    def flaky(x):
        ctx = TaskContext.get()
        if x == 1500 and ctx.attemptNumber() == 0:
            raise ValueError("first attempt fails")
        return x

    out = str(tmp_path / "retry")
    spark.range(0, 2000, numPartitions=2).select(flaky("id").alias("id")) \
        .write.format("arrow").mode("overwrite").save(out)
    names = data_files(out)
    assert len(names) == 2
    assert any("-1-" in n for n in names)  # the retried attempt's file
    assert sorted(r[0] for r in spark.read.format("arrow").load(out).collect()) == \
        list(range(2000))
    assert not os.path.exists(os.path.join(out, "_temporary"))


def test_empty_dataframe_leaves_a_file_with_its_schema(spark, tmp_path):
    out = str(tmp_path / "empty")
    spark.range(0).selectExpr("id", "cast(id as string) as s").write.format("arrow") \
        .mode("overwrite").save(out)
    back = spark.read.format("arrow").load(out)
    assert back.columns == ["id", "s"] and back.count() == 0


def test_a_dataframe_without_columns_is_refused_as_parquet_refuses_it(spark, tmp_path):
    # the sink wrote one empty file for six rows of no columns, so the rows were lost
    # without a word; Spark's Parquet writer refuses an empty schema
    df = spark.range(0, 6).select()
    with pytest.raises(Exception, match="EMPTY_SCHEMA_NOT_SUPPORTED"):
        df.write.mode("overwrite").parquet(str(tmp_path / "pq"))
    out = str(tmp_path / "none")
    with pytest.raises(Exception, match="expected at least one column to write, found none"):
        df.write.format("arrow").mode("overwrite").save(out)
    assert not os.path.exists(out) or data_files(out) == []


def test_spark_refuses_error_and_ignore_modes(spark, tmp_path):
    with pytest.raises(Exception, match="UNSUPPORTED_DATA_SOURCE_SAVE_MODE"):
        spark.range(1).write.format("arrow").mode("errorifexists").save(str(tmp_path / "e"))


def test_written_files_are_read_by_pyarrow_polars_and_duckdb(spark, tmp_path):
    df = spark.range(0, 300).selectExpr("id", "cast(id % 3 as string) as k",
                                        "array(id, id) as a", "id * 0.5 as f")
    out = str(tmp_path / "other")
    (df.repartition(2).write.format("arrow").option("compression", "zstd")
     .option("partitionBy", "k").mode("overwrite").save(out))
    dataset = ds.dataset(out, format="ipc", partitioning="hive")
    assert dataset.to_table().num_rows == 300
    assert sorted(dataset.to_table().column("id").to_pylist()) == list(range(300))
    polars = pytest.importorskip("polars")
    frame = polars.scan_ipc(os.path.join(out, "**", "*.arrow"), hive_partitioning=True).collect()
    assert frame.height == 300 and sorted(frame["id"].to_list()) == list(range(300))
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    con.register("written", pa.concat_tables(
        pa.ipc.open_file(os.path.join(out, f)).read_all() for f in data_files(out)
    ))
    assert con.sql("select count(*), sum(id) from written").fetchall() == [(300, 44850)]


# -- the commit protocol, driven directly ------------------------------------------------


def _writer(path, string_fields=(), **options):
    from pyspark.sql.datasource import CaseInsensitiveDict
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    from quiver.spark.source import ArrowWriter

    fields = [StructField("id", LongType())]
    fields += [StructField(name, StringType()) for name in string_fields]
    schema = StructType(fields)
    return ArrowWriter(CaseInsensitiveDict(path=str(path), **options), schema, True)


def _batches(*ranges):
    return [pa.record_batch({"id": pa.array(range(a, b), pa.int64())}) for a, b in ranges]


def test_commit_removes_unreported_attempts_and_abort_removes_everything(tmp_path):
    out = tmp_path / "proto"
    writer = _writer(out)
    message = writer.write(iter(_batches((0, 10), (10, 20))))
    stray = os.path.join(out, "_temporary", writer.job, "task-00001-0")
    os.makedirs(stray)
    with open(os.path.join(stray, "part-00001-0-x.arrow"), "wb") as f:
        f.write(b"half-written")
    assert data_files(out) == []  # nothing visible before commit
    writer.commit([message])
    assert data_files(out) == [f"part-00000-0-{writer.job}.arrow"]
    assert not os.path.exists(os.path.join(out, "_temporary"))

    second = _writer(out)
    done = second.write(iter(_batches((0, 5))))
    second.abort([done, None])
    assert data_files(out) == [f"part-00000-0-{writer.job}.arrow"]
    assert not os.path.exists(os.path.join(out, "_temporary"))


def test_a_failing_task_removes_its_own_files(tmp_path):
    out = tmp_path / "task-fail"
    writer = _writer(out)

    def batches():
        yield from _batches((0, 10))
        raise RuntimeError("source died")

    with pytest.raises(RuntimeError, match="source died"):
        writer.write(batches())
    job_dir = os.path.join(out, "_temporary", writer.job)
    assert not os.path.exists(job_dir) or os.listdir(job_dir) == []


def test_bad_write_options_are_refused(tmp_path):
    from quiver.errors import ArrowInvalidArgument

    with pytest.raises(ArrowInvalidArgument, match="compression"):
        _writer(tmp_path, compression="snappy")
    with pytest.raises(ArrowInvalidArgument, match="format"):
        _writer(tmp_path, format="parquet")
    with pytest.raises(ArrowInvalidArgument, match="partitionBy"):
        _writer(tmp_path, partitionBy="nope")


def test_a_failed_overwrite_commit_puts_the_old_data_back(tmp_path):
    out = tmp_path / "commit-fail"
    first = _writer(out)
    first.commit([first.write(iter(_batches((0, 10))))])
    before = data_files(out)
    second = _writer(out)
    message = second.write(iter(_batches((100, 110))))
    os.remove(os.path.join(message.attempt_dir, message.files[0].relative))  # lost
    with pytest.raises(FileNotFoundError):
        second.commit([message])
    second.abort([message])
    assert data_files(out) == before
    assert os.path.exists(os.path.join(out, "_SUCCESS"))
    assert not os.path.exists(os.path.join(out, "_temporary"))


def test_empty_partitioned_write_leaves_no_file_as_parquet(spark, tmp_path):
    # Spark's file sources write no file for a partitioned job without rows: one at the
    # root would sit beside the key=value directories of later appends
    out, pq_out = str(tmp_path / "empty-hive"), str(tmp_path / "empty-hive-pq")
    df = spark.range(0).selectExpr("id", "cast(id as string) as k")
    df.write.format("arrow").option("partitionBy", "k").mode("overwrite").save(out)
    df.write.partitionBy("k").mode("overwrite").parquet(pq_out)
    assert data_files(out) == data_files(pq_out) == []
    assert os.path.exists(os.path.join(out, "_SUCCESS"))
    back = spark.read.format("arrow").schema("id long, k string").load(out)
    assert back.count() == 0


def test_partitioned_write_of_large_string_columns(spark, tmp_path):
    out = str(tmp_path / "large")
    spark.conf.set("spark.sql.execution.arrow.useLargeVarTypes", "true")
    try:
        df = spark.createDataFrame([(1, "aa"), (2, "bbb"), (3, "aa"), (1, "c")], "id int, s string")
        df.write.format("arrow").option("partitionBy", "s").mode("overwrite").save(out)
    finally:
        spark.conf.unset("spark.sql.execution.arrow.useLargeVarTypes")
    assert rows(spark.read.format("arrow").load(out).select("id", "s"), "id", "s") == [
        (1, "aa"), (1, "c"), (2, "bbb"), (3, "aa")]


def test_many_partition_values_do_not_run_out_of_files(tmp_path):
    from quiver.spark import sink

    writer = _writer(tmp_path / "many", string_fields=("k",), partitionBy="k")
    batch = pa.record_batch({"id": pa.array(range(300), pa.int64()),
                             "k": pa.array([f"v{i}" for i in range(300)])})
    message = writer.write(iter([batch, batch]))
    # rows held per directory are written at the end: one file per directory here
    assert len({os.path.dirname(f.relative) for f in message.files}) == 300
    assert sum(f.rows for f in message.files) == 600
    assert sink.MAX_OPEN_FILES < 300


def test_fixed_offset_session_zones_name_timestamp_partitions():
    from quiver.spark.hive import zone_of

    offset = zone_of("+01:00")
    assert offset.utcoffset(None).total_seconds() == 3600
    assert zone_of("Europe/Paris").key == "Europe/Paris"


def test_a_task_running_after_abort_does_not_bring_the_job_directory_back(tmp_path):
    from quiver.errors import ArrowInvalid

    out = tmp_path / "late"
    writer = _writer(out)
    early = writer.write(iter(_batches((0, 10))))
    writer.abort([early])
    assert not os.path.exists(os.path.join(out, "_temporary"))
    # a straggler of the failed job: it starts, or opens its next file, after abort()
    with pytest.raises(ArrowInvalid, match="found it gone"):
        writer.write(iter(_batches((10, 20))))
    assert not os.path.exists(os.path.join(out, "_temporary"))
    files = TaskFiles(str(tmp_path / "gone" / "attempt"), "part", writer.options)
    with pytest.raises(FileNotFoundError):
        files.write(_batches((0, 5))[0])
        files.close()
    assert not os.path.exists(tmp_path / "gone")
