"""Hive partitions against Spark's own Parquet source and sink on the same data: directory
names ``partitionBy`` writes, types and values partition discovery infers, save modes,
session time zones, ``basePath``, globs, case and user schemas."""

from __future__ import annotations

import datetime as dt
import decimal
import math
import os
import warnings

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from quiver import types as t
from quiver.errors import ArrowInvalidArgument
from quiver.spark import hive

from .helpers import data_files, write_file

pytestmark = pytest.mark.xdist_group("spark")


def _dirs(root) -> list[str]:
    """Every visible ``key=value`` directory under ``root``, relative, sorted."""
    out = []
    for dirpath, dirnames, _ in os.walk(str(root)):
        dirnames[:] = [d for d in dirnames if not d.startswith(("_", "."))]
        out += [os.path.relpath(os.path.join(dirpath, d), str(root))
                for d in dirnames if "=" in d]
    return sorted(out)


def _norm(value):
    """A value comparable across sources (NaN equal to NaN, -0.0 apart from 0.0)."""
    if isinstance(value, float):
        return ("float", repr(value))
    return (type(value).__name__, value)


def _collected(df, order="id") -> list[tuple]:
    return [tuple(_norm(v) for v in r) for r in df.orderBy(order).collect()]


def _write(df, root, fmt, keys=(), mode="overwrite", **options):
    """``df.write.partitionBy(*keys).parquet(root)``, or quiver's sink with the
    ``partitionBy`` option (Spark refuses ``partitionBy()`` for Python data sources)."""
    writer = df.write.mode(mode).options(**options)
    if fmt == "parquet":
        writer.partitionBy(*keys).parquet(root) if keys else writer.parquet(root)
    else:
        writer = writer.format("arrow")
        (writer.option("partitionBy", ",".join(keys)) if keys else writer).save(root)


def _both(spark, df, tmp_path, name, keys=(), mode="overwrite", **options):
    """Write ``df`` with Spark's Parquet sink and with quiver's; the two roots."""
    pq_root, arrow_root = str(tmp_path / f"{name}-parquet"), str(tmp_path / f"{name}-arrow")
    _write(df, pq_root, "parquet", keys, mode, **options)
    _write(df, arrow_root, "arrow", keys, mode, **options)
    return pq_root, arrow_root


def _same_read(spark, pq_root, arrow_root, order="id", reader=lambda r: r):
    """Both roots read back by their own source: same schema and rows."""
    a = reader(spark.read).parquet(pq_root)
    b = reader(spark.read).format("arrow").load(arrow_root)
    assert b.schema.simpleString() == a.schema.simpleString()
    assert _collected(b, order) == _collected(a, order)
    return b


# -- partitionBy spells values as Spark does ------------------------------------------------

_SPECIAL = 'a b"#%\'*/:=?\\{[]^\x7f\x01'
_TYPED_ROWS = [
    # id, b, i8, i16, i64, f32, f64, dec, s, bin, d, ts
    (1, True, -5, -300, 2**40, 0.1, float("nan"), decimal.Decimal("1.500"), _SPECIAL,
     b"ab", dt.date(2020, 1, 1), dt.datetime(2020, 1, 1, 12, 34, 45, 500000, tzinfo=dt.UTC)),
    (2, False, 7, 300, -1, float("nan"), float("inf"), decimal.Decimal("-0.001"),
     "é€ ~!@$&()+,;<>|`", b"a/b", dt.date(1, 1, 1),
     dt.datetime(2020, 1, 1, 0, 0, tzinfo=dt.UTC)),
    (3, None, None, None, None, None, float("-inf"), decimal.Decimal("0"), "",
     b"", None, None),
    (4, True, 0, 0, 0, 1e10, 0.1, None, None, b"q", dt.date(2024, 2, 29),
     dt.datetime(2020, 1, 1, 1, 2, 3, 100000, tzinfo=dt.UTC)),
    (5, False, 1, 1, 1, 3.0, 1e20, decimal.Decimal("12.5"), "x\ny\t", b"\xc3\xa9",
     dt.date(2020, 1, 2), dt.datetime(1900, 1, 1, tzinfo=dt.UTC)),
    (6, True, 1, 1, 1, -0.0, -0.0, decimal.Decimal("1"), "%41", b"\xff",
     dt.date(2020, 1, 2), dt.datetime(2020, 1, 1, 12, 34, 45, 500000, tzinfo=dt.UTC)),
    (7, True, 1, 1, 1, 1e-4, 1e-5, decimal.Decimal("1"), "z", b"z",
     dt.date(2020, 1, 2), dt.datetime(2020, 1, 1, tzinfo=dt.UTC)),
    (8, True, 1, 1, 1, 123456.79, 123456789.0, decimal.Decimal("1"), "z", b"z",
     dt.date(2020, 1, 2), dt.datetime(2020, 1, 1, tzinfo=dt.UTC)),
]
_TYPED_SCHEMA = ("id int, b boolean, i8 tinyint, i16 smallint, i64 bigint, f32 float, "
                 "f64 double, dec decimal(10,3), s string, bin binary, d date, ts timestamp")


def test_partition_by_names_directories_and_reads_back_as_parquet_does(spark, tmp_path):
    # every key type at once: one directory level per column (Spark's Parquet sink fails
    # on b"" beside null binary, both named __HIVE_DEFAULT_PARTITION__, so there is none)
    df = spark.createDataFrame(_TYPED_ROWS, _TYPED_SCHEMA)
    keys = [c for c in df.columns if c != "id"]
    pq_root, arrow_root = _both(spark, df, tmp_path, "typed", keys)
    assert _dirs(arrow_root) == _dirs(pq_root)
    _same_read(spark, pq_root, arrow_root)


def test_float_and_double_text_is_javas(spark):
    # the rule on its own, for values a directory test cannot show in one column
    assert hive.partition_text(0.1, t.float32()) == "0.1"
    assert hive.partition_text(float("nan"), t.float64()) == "NaN"
    assert hive.partition_text(4.9e-324, t.float64()) == "4.9E-324"
    assert hive.partition_text(1e7, t.float64()) == "1.0E7"
    assert hive.partition_text(9999999.0, t.float64()) == "9999999.0"
    assert hive.partition_text(0.001, t.float64()) == "0.001"
    assert hive.partition_text(1e-4, t.float32()) == "1.0E-4"
    # Spark reads each text back as the same double
    for x in (0.1, 4.9e-324, 1e7, 1e-4, 1.7976931348623157e308, 5.684341886080802e-14):
        text = hive.partition_text(x, t.float64())
        assert hive.partition_value(text, t.float64()) == x
        value = spark.sql(f"select double('{text}') as v").first().v
        assert value == x


# -- parsing and inference as PartitioningUtils ------------------------------------------------

_RAW = [
    "+1", "00012", "2147483648", "99999999999999999999", "1" * 39, "1E+3", "1.0E20", "5.",
    ".5", " 1", "1d", "0x10", "NaN", "-Infinity", "inf", "1_000", "\u0661\u0662",
    "4.9e-325", "-0.0", "true", "%41", "2020-1-1", "2020-02-30", "2020-01-01%2000%3A00%3A00",
    "2020-01-01 12%3A34%3A45.5", "2020-01-01 12%3A34%3A45.123456", "2020-01-01T00%3A00%3A00",
    "2020-01-01 12%3A34%3A45.5Z", "12%3A34%3A45.123456", "25%3A00%3A00",
]
_MIXED = [
    ("1", "1.5"), ("1", "2147483648"), ("2147483648", "1.5"), ("99999999999999999999", "1"),
    ("99999999999999999999", "1.5"), ("2020-01-01", "2020-01-01 00%3A00%3A00"),
    ("1", "2020-01-01"), ("1", hive.HIVE_NULL), (hive.HIVE_NULL,), ("1", "1e3"),
    ("12%3A34%3A45", "2020-01-01"), ("12%3A34%3A45", hive.HIVE_NULL),
]


def _dataset(root, texts):
    table = pa.table({"id": pa.array([1], pa.int64())})
    for i, text in enumerate(texts):
        directory = os.path.join(str(root), f"k={text}")
        os.makedirs(directory, exist_ok=True)
        pq.write_table(table, os.path.join(directory, f"part-{i}.parquet"))
        write_file(os.path.join(directory, f"part-{i}.arrow"), table)


def _read_k(spark, root, fmt, reader=lambda r: r):
    r = reader(spark.read)
    if fmt == "parquet":
        return r.option("pathGlobFilter", "*.parquet").parquet(root)
    return r.format("arrow").load(root)


def test_inferred_types_and_values_match_parquet(spark, tmp_path):
    from functools import reduce

    cases = [(text,) for text in _RAW] + list(_MIXED)
    frames = {"parquet": [], "arrow": []}
    for i, texts in enumerate(cases):
        root = str(tmp_path / f"c{i}")
        _dataset(root, texts)
        types = {}
        for fmt in frames:
            df = _read_k(spark, root, fmt)
            types[fmt] = df.schema["k"].dataType.simpleString()
            frames[fmt].append(df.selectExpr(f"{i} as case", "cast(k as string) as k"))
        assert types["arrow"] == types["parquet"], (texts, types)
    values = {fmt: sorted((r.case, r.k or "") for r in reduce(
        lambda a, b: a.unionByName(b), dfs).collect()) for fmt, dfs in frames.items()}
    assert values["arrow"] == values["parquet"]


def test_type_inference_off_as_parquet(spark, tmp_path):
    root = str(tmp_path / "off")
    _dataset(root, ["1", "2020-01-01", hive.HIVE_NULL])
    spark.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
    try:
        expected = _read_k(spark, root, "parquet")
        expected_rows = sorted(str(r.k) for r in expected.collect())
    finally:
        spark.conf.unset("spark.sql.sources.partitionColumnTypeInference.enabled")
    got = _read_k(spark, root, "arrow",
                  lambda r: r.option("partitionColumnTypeInference", "false"))
    assert got.schema.simpleString() == expected.schema.simpleString()
    assert sorted(str(r.k) for r in got.collect()) == expected_rows


@pytest.mark.parametrize("schema", [
    "id long, k timestamp", "id long, k date", "id long, k string", "id long, k binary",
    "id long, k timestamp_ntz",
])
def test_a_user_schema_reads_partition_text_as_parquet_does(spark, tmp_path, schema):
    root = str(tmp_path / "user")
    _dataset(root, ["2020-01-01 00%3A00%3A00.123456", "2020-01-02", "2020-01-03 04%3A05%3A06"])
    reader = lambda r: r.schema(schema)  # noqa: E731
    a = _read_k(spark, root, "parquet", reader)
    b = _read_k(spark, root, "arrow", reader)
    assert _collected(b, "k") == _collected(a, "k")


def test_a_user_schema_reads_booleans_and_refuses_what_is_not_its_type(spark, tmp_path):
    root = str(tmp_path / "bool")
    _dataset(root, ["true", "FALSE"])
    reader = lambda r: r.schema("id long, k boolean")  # noqa: E731
    assert _collected(_read_k(spark, root, "arrow", reader), "k") == \
        _collected(_read_k(spark, root, "parquet", reader), "k")
    bad = str(tmp_path / "bad")
    _dataset(bad, ["1.5", "x"])
    for schema in ("id long, k int", "id long, k double"):
        reader = lambda r, s=schema: r.schema(s)  # noqa: E731
        with pytest.raises(Exception, match="INVALID_PARTITION_VALUE"):
            _read_k(spark, bad, "parquet", reader).collect()
        with pytest.raises(Exception, match="expected a partition value of type"):
            _read_k(spark, bad, "arrow", reader).collect()


def test_timestamp_partitions_written_by_quiver_read_back_as_timestamps(spark, tmp_path):
    df = spark.createDataFrame(
        [(1, dt.datetime(2020, 1, 1, 12, 34, 45, 500000)), (2, dt.datetime(2020, 1, 2))],
        "id int, k timestamp")
    pq_root, arrow_root = _both(spark, df, tmp_path, "ts", ["k"])
    back = _same_read(spark, pq_root, arrow_root)
    assert back.schema["k"].dataType.simpleString() == "timestamp"


def test_a_partition_column_stored_in_the_files_takes_the_directory(spark, tmp_path):
    root = str(tmp_path / "inside")
    os.makedirs(os.path.join(root, "k=1"))
    table = pa.table({"id": pa.array([1, 2], pa.int64()), "k": pa.array(["abc", "x"])})
    pq.write_table(table, os.path.join(root, "k=1", "a.parquet"))
    write_file(os.path.join(root, "k=1", "a.arrow"), table)
    a, b = _read_k(spark, root, "parquet"), _read_k(spark, root, "arrow")
    assert b.schema.simpleString() == a.schema.simpleString()
    assert _collected(b) == _collected(a)


def test_partition_names_compare_without_case(spark, tmp_path):
    root = str(tmp_path / "case")
    table = pa.table({"id": pa.array([1], pa.int64())})
    for key, value in (("K", "1"), ("k", "2")):
        os.makedirs(os.path.join(root, f"{key}={value}"))
        pq.write_table(table, os.path.join(root, f"{key}={value}", "a.parquet"))
        write_file(os.path.join(root, f"{key}={value}", "a.arrow"), table)
    a, b = _read_k(spark, root, "parquet"), _read_k(spark, root, "arrow")
    assert [f.lower() for f in b.columns] == [f.lower() for f in a.columns]
    assert sorted(r[1] for r in b.collect()) == sorted(r[1] for r in a.collect()) == [1, 2]
    df = spark.createDataFrame([(1, "a"), (2, "b")], "id int, k string")
    pq_root, arrow_root = _both(spark, df, tmp_path, "upper", ["K"])
    assert _dirs(arrow_root) == _dirs(pq_root)
    _same_read(spark, pq_root, arrow_root)


def test_base_path_and_globs_as_parquet(spark, tmp_path):
    df = spark.createDataFrame([(1, "a"), (2, "b")], "id int, k string")
    pq_root, arrow_root = _both(spark, df, tmp_path, "glob", ["k"])
    assert os.path.exists(os.path.join(arrow_root, "_SUCCESS"))
    for base, suffix in ((False, "/*"), (True, "/*"), (True, "/k=a"), (False, "/k=a")):
        a, b = spark.read, spark.read.format("arrow")
        if base:
            a, b = a.option("basePath", pq_root), b.option("basePath", arrow_root)
        a, b = a.parquet(pq_root + suffix), b.load(arrow_root + suffix)
        assert b.schema.simpleString() == a.schema.simpleString(), (base, suffix)
        assert _collected(b) == _collected(a)
    with pytest.raises(Exception, match="basePath"):
        spark.read.format("arrow").option("basePath", pq_root).load(
            arrow_root + "/k=a").collect()


# -- session time zones --------------------------------------------------------------------

_ZONES = ["Z", "GMT+8", "UTC+01:00", "UT", "-8", "UTC-00:30", "+05:30", "Asia/Kolkata",
          "EST", "-1:5"]


def test_timestamp_partitions_in_every_session_zone_spark_accepts(spark, tmp_path):
    df = spark.createDataFrame(
        [(1, dt.datetime(2020, 1, 1, tzinfo=dt.UTC)), (2, dt.datetime(1900, 1, 1, tzinfo=dt.UTC)),
         (3, dt.datetime(2020, 7, 1, 12, 0, 0, 500000, tzinfo=dt.UTC))],
        "id int, k timestamp")
    try:
        for i, zone in enumerate(_ZONES):
            spark.conf.set("spark.sql.session.timeZone", zone)
            arrow_root = str(tmp_path / f"z{i}-arrow")
            _write(df, arrow_root, "arrow", ["k"])
            # Spark's rule: the value cast to a string in the session zone, then escaped
            expected = sorted(f"k={hive.escape_partition_text(r.k)}" for r in
                              df.selectExpr("cast(k as string) as k").collect())
            assert _dirs(arrow_root) == expected, zone
            if zone in ("GMT+8", "Asia/Kolkata", "-1:5"):  # and as Parquet, read back
                pq_root = str(tmp_path / f"z{i}-parquet")
                _write(df, pq_root, "parquet", ["k"])
                assert _dirs(arrow_root) == _dirs(pq_root), zone
                _same_read(spark, pq_root, arrow_root)
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")


def test_zone_names_parse_as_java_zone_ids():
    offsets = {"Z": 0, "GMT+8": 8 * 3600, "UTC+01:00": 3600, "UT": 0, "-8": -8 * 3600,
               "UTC-00:30": -1800, "+05:30": 19800, "+0530": 19800, "-08:00:00": -28800,
               "-1:5": -3900, "+5:30": 19800, "UT+5": 18000, "EST": -18000}
    for name, seconds in offsets.items():
        zone = hive.zone_of(name)
        assert zone.utcoffset(dt.datetime(2020, 1, 1)).total_seconds() == seconds, name
    assert hive.zone_of("PST").key == "America/Los_Angeles"
    for bad in ("+19:00", "Mars/Base", "+1:2:3", "GMT+", "../etc"):
        with pytest.raises(ArrowInvalidArgument, match="time zone"):
            hive.zone_of(bad)


# -- save semantics ------------------------------------------------------------------------


def test_dynamic_partition_overwrite_by_option_and_session_setting(spark, tmp_path):
    first = spark.createDataFrame([(1, "a"), (2, "b")], "id int, k string")
    pq_root, arrow_root = _both(spark, first, tmp_path, "dyn", ["k"])
    steps = [
        (spark.createDataFrame([(3, "a")], "id int, k string"), "dynamic", None),
        (spark.createDataFrame([(4, "c")], "id int, k string"), None, "dynamic"),
        (first.limit(0), None, "dynamic"),
        (spark.createDataFrame([(5, "c")], "id int, k string"), "static", "dynamic"),
    ]
    for df, option, setting in steps:
        if setting:
            spark.conf.set("spark.sql.sources.partitionOverwriteMode", setting)
        options = {"partitionOverwriteMode": option} if option else {}
        try:
            _write(df, pq_root, "parquet", ["k"], **options)
            _write(df, arrow_root, "arrow", ["k"], **options)
        finally:
            spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
        assert _dirs(arrow_root) == _dirs(pq_root), (option, setting)
        _same_read(spark, pq_root, arrow_root)


def test_empty_partitioned_writes_leave_no_file_beside_the_directories(spark, tmp_path):
    df = spark.createDataFrame([(1, "a"), (2, "b")], "id int, k string")
    empty = df.limit(0)
    # an empty append to partitioned data, and one with its columns in another order
    pq_root, arrow_root = _both(spark, df, tmp_path, "append", ["k"])
    for frame in (empty, empty.select("k", "id")):
        _write(frame, pq_root, "parquet", ["k"], "append")
        _write(frame, arrow_root, "arrow", ["k"], "append")
        assert [os.path.dirname(f) for f in data_files(arrow_root)] == ["k=a", "k=b"]
        _same_read(spark, pq_root, arrow_root)
    # an empty overwrite, then a partitioned append
    pq_root, arrow_root = _both(spark, empty, tmp_path, "empty", ["k"])
    assert data_files(arrow_root) == data_files(pq_root) == []
    _write(df, pq_root, "parquet", ["k"], "append")
    _write(df, arrow_root, "arrow", ["k"], "append")
    _same_read(spark, pq_root, arrow_root)


def test_max_bytes_per_file_below_one_row_keeps_batches_whole(tmp_path):
    from pyspark.sql.datasource import CaseInsensitiveDict
    from pyspark.sql.types import LongType, StructField, StructType

    from quiver.spark import sink
    from quiver.spark.source import ArrowWriter

    writer = ArrowWriter(CaseInsensitiveDict(path=str(tmp_path / "tiny"), maxBytesPerFile="1"),
                         StructType([StructField("id", LongType())]), True)
    batches = [pa.record_batch({"id": pa.array(range(i, i + 2500), pa.int64())})
               for i in range(0, 10_000, 2500)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        message = writer.write(iter(batches))
    rows = [f.rows for f in message.files]
    assert sum(rows) == 10_000
    # whole pieces of at least MIN_ROWS_PER_PIECE rows, the last one holding the rest
    assert min(rows[:-1]) >= sink.MIN_ROWS_PER_PIECE
    assert len(rows) <= math.ceil(10_000 / sink.MIN_ROWS_PER_PIECE)
    assert any("maxBytesPerFile=1" in str(w.message) for w in caught)
    writer.abort([message])


def test_partition_by_refuses_a_column_of_no_plain_type(tmp_path):
    from pyspark.sql.datasource import CaseInsensitiveDict
    from pyspark.sql.types import ArrayType, LongType, StructField, StructType

    from quiver.errors import ArrowInvalidArgument
    from quiver.spark.source import ArrowWriter

    schema = StructType([StructField("id", LongType()), StructField("a", ArrayType(LongType()))])
    with pytest.raises(ArrowInvalidArgument, match="plain type"):
        ArrowWriter(CaseInsensitiveDict(path=str(tmp_path / "x"), partitionBy="a"), schema, True)
    with pytest.raises(ArrowInvalidArgument, match="partitionOverwriteMode"):
        ArrowWriter(CaseInsensitiveDict(path=str(tmp_path / "x"),
                                        partitionOverwriteMode="sometimes"), schema, True)


def test_max_records_per_file_session_setting_as_parquet(spark, tmp_path):
    df = spark.range(0, 2500, numPartitions=1).selectExpr("id", "cast(id % 2 as string) as k")
    spark.conf.set("spark.sql.files.maxRecordsPerFile", "500")
    try:
        pq_root, arrow_root = _both(spark, df, tmp_path, "roll", ["k"])
        # the option wins over the setting
        pq_opt, arrow_opt = _both(spark, df, tmp_path, "roll-opt", ["k"],
                                  maxRecordsPerFile="1000")
    finally:
        spark.conf.unset("spark.sql.files.maxRecordsPerFile")

    def per_dir(root):
        return sorted((os.path.dirname(f), 1) for f in data_files(root)
                      if not f.endswith(".crc"))

    assert per_dir(arrow_root) == per_dir(pq_root)
    assert len(per_dir(arrow_root)) == 6
    assert per_dir(arrow_opt) == per_dir(pq_opt)
    _same_read(spark, pq_root, arrow_root)
