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


# -- the filters option ------------------------------------------------------------------


def _typed_table(n: int = 20_000):
    import datetime as dt
    import decimal

    import numpy as np
    import pyarrow as pa

    ids = np.arange(n)
    f = (ids % 11).astype(float)
    f[ids % 17 == 0] = np.nan
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "f": pa.array(f, mask=ids % 19 == 0),
        "s": pa.array([f"a{i % 9}" for i in range(n)], mask=ids % 13 == 0),
        "d": pa.array([dt.date(1970, 1, 1) + dt.timedelta(days=int(i // 100)) for i in ids]),
        "ts": pa.array(ids * 1_000_000 + 7, pa.timestamp("us", "UTC")),
        "dec": pa.array([decimal.Decimal(i % 3000) / 100 for i in range(n)], pa.decimal128(10, 2)),
        "b": pa.array(ids % 3 == 0),
    })


@pytest.fixture(scope="module")
def typed(tmp_path_factory):
    """The same rows as a quiver IPC file with statistics (1,000-row batches) and as
    Parquet."""
    import pyarrow.parquet as pq

    import quiver.ipc as ipc

    root = tmp_path_factory.mktemp("typed")
    table = _typed_table()
    path = str(root / "t.arrow")
    with ipc.new_file(path, table.schema, statistics=True) as writer:
        for batch in table.to_batches(max_chunksize=1000):
            writer.write_batch(batch)
    parquet = str(root / "t.parquet")
    pq.write_table(table, parquet)
    return path, parquet


def _filters():
    import datetime as dt
    import decimal

    utc = dt.UTC
    return [
        [("id", ">=", 100), ("id", "<", 200)],
        [[("id", "<", 10)], [("id", ">", 19_990)]],
        [("s", "in", ["a3", "a7"]), ("id", "<", 3000)],
        [("s", "not in", ["a3"])],  # keeps nulls (pyarrow's semantics)
        [("s", "!=", "a3"), ("b", "==", True)],
        [("f", ">", 9.0)],  # NaN fails the comparison (pyarrow's semantics)
        [("f", "<=", 1.0), ("id", ">", 5000)],
        [("d", "<", dt.date(1970, 1, 5))],
        [("d", "==", dt.date(1970, 3, 1))],
        [("ts", ">=", dt.datetime(1970, 1, 1, 5, 30, tzinfo=utc))],
        [("ts", "==", dt.datetime(1970, 1, 1, 0, 0, 42, 7, tzinfo=utc))],
        [("dec", "<=", decimal.Decimal("0.05"))],
        [("dec", "in", [decimal.Decimal("29.99"), decimal.Decimal("3.5")])],
        [("id", "in", [1, 5, 19_999, 10**12])],
        [("id", "not in", list(range(10, 19_990, 3)))],
    ]


def _pyarrow_rows(parquet, filters):
    import pyarrow.parquet as pq

    table = pq.read_table(parquet, filters=filters)
    return sorted(tuple(r.values()) for r in table.to_pylist())


def _normal(values):
    """NaN comparable, zoned datetimes as Spark shows them (UTC session: naive UTC)."""
    import datetime as dt

    def one(v):
        if isinstance(v, float) and v != v:
            return "NaN"
        if isinstance(v, dt.datetime) and v.tzinfo is not None:
            return v.astimezone(dt.UTC).replace(tzinfo=None)
        return v

    return sorted((tuple(one(v) for v in r) for r in values), key=repr)


@pytest.mark.parametrize("filters", _filters(), ids=lambda f: str(f)[:60])
def test_filters_keep_exactly_the_rows_pyarrow_keeps(spark, typed, filters):
    """Differential: quiver's source with the ``filters`` option against
    pyarrow.parquet.read_table(filters=...) on the same rows."""
    from quiver.spark import filters_option

    path, parquet = typed
    df = spark.read.format("arrow").option("filters", filters_option(filters)).load(path)
    got = sorted(tuple(r) for r in df.collect())
    assert _normal(got) == _normal(_pyarrow_rows(parquet, filters))


@pytest.mark.parametrize(("text", "sql"), [
    ('[["s", "is null"]]', "s is null"),
    ('[["f", "is not null"], ["id", "<", 100]]', "f is not null and id < 100"),
    ('[["ID", "=", 77]]', "id = 77"),
    ('[["dec", ">", 29.985]]', "dec > 29.985"),
    ('[["id", "<", 10.5]]', "id < 10.5"),
    ('[["id", "==", 10.5]]', "id = 10.5"),
    ('[["ts", ">", "1970-01-01T00:00:10.0000079"]]',
     "ts > timestamp'1970-01-01 00:00:10.000007'"),
    ('[["ts", "<=", "1970-01-01 00:00:10.000007Z"]]',
     "ts <= timestamp'1970-01-01 00:00:10.000007'"),
])
def test_filters_against_sparks_own_filter_on_parquet(spark, typed, text, sql):
    path, parquet = typed
    df = spark.read.format("arrow").option("filters", text).load(path)
    expected = spark.read.parquet(parquet).filter(sql)
    assert _normal(sorted(tuple(r) for r in df.collect())) == _normal(
        sorted(tuple(r) for r in expected.collect()))


def test_filters_are_part_of_the_dataframe_every_query_sees(spark, typed):
    path, _ = typed
    df = spark.read.format("arrow").option("filters", '[["id", "<", 100]]').load(path)
    assert df.count() == 100
    assert df.filter("id >= 50").count() == 50
    assert df.count() == 100
    assert df.alias("a").join(df.alias("b"), "id").count() == 100
    assert df.union(df).count() == 200
    assert df.agg(F.max("id")).first()[0] == 99


def _reader(options, schema):
    from pyspark.sql.datasource import CaseInsensitiveDict

    from quiver.spark.source import ArrowReader

    return ArrowReader(CaseInsensitiveDict(**options), schema)


def _batches(partitions) -> int:
    return sum(s.stop - s.start for p in partitions for s in p.splits)


def test_filters_skip_batches_by_statistics(spark, typed):
    path, _ = typed
    schema = spark.read.format("arrow").load(path).schema
    assert _batches(_reader({"path": path}, schema).partitions()) == 20
    for text, batches in (('[["id", ">=", 19500]]', 1),
                          ('[["id", "<", 10], ["id", ">", 5]]', 1),
                          ('[[["id", "<", 10]], [["id", ">", 19990]]]', 2),
                          ('[["id", "in", [5, 7005]]]', 2),
                          ('[["d", "==", "1970-03-01"]]', 1),
                          ('[["id", "is null"]]', 0),
                          ('[["id", "==", 10.5]]', 0),
                          ('[["s", "==", "zzz"]]', 0)):
        reader = _reader({"path": path, "filters": text}, schema)
        assert _batches(reader.partitions()) == batches, text


def test_the_filters_option_really_skips_batches(spark, tmp_path):
    """The first batch's body is destroyed: a read whose filters rule that batch out
    succeeds only if it is never read; without the option the read fails."""
    import numpy as np
    import pyarrow as pa

    import quiver.ipc as ipc

    table = pa.table({"id": np.arange(1000), "s": [f"v{i}" for i in range(1000)]})
    path = str(tmp_path / "damaged.arrow")
    with ipc.new_file(path, table.schema, statistics=True) as writer:
        for batch in table.to_batches(max_chunksize=100):
            writer.write_batch(batch)
    block = ipc.open_file(path).footer.record_batches[0]
    with open(path, "r+b") as f:
        f.seek(block.offset + block.meta_data_length)
        f.write(b"\xff" * block.body_length)
    df = spark.read.format("arrow").option("filters", '[["id", ">=", 900]]').load(path)
    assert sorted(r[0] for r in df.select("id").collect()) == list(range(900, 1000))
    with pytest.raises(Exception, match=r"damaged\.arrow"):
        spark.read.format("arrow").load(path).collect()


@pytest.mark.parametrize(("text", "message"), [
    ("[[", "option filters: expected JSON"),
    ('{"id": 1}', "option filters: expected a JSON list"),
    ('[["nope", "==", 1]]', "option filters: expected a column among"),
    ('[["id", "~", 1]]', "option filters: expected a filter op among"),
    ('[["id", "==", "x"]]', "option filters: expected a number for column id"),
    ('[["d", "<", "01/02/1970"]]', 'option filters: expected a date "YYYY-MM-DD"'),
    ('[["id", "in", 3]]', "option filters: expected a list of values for 'in'"),
])
def test_bad_filters_name_the_option(spark, typed, text, message):
    path, _ = typed
    with pytest.raises(Exception, match=message):
        spark.read.format("arrow").option("filters", text).load(path).collect()
    # under a user schema (no schema inference) the reader says the same
    with pytest.raises(Exception, match=message):
        spark.read.format("arrow").schema("id long, d date").option("filters", text) \
            .load(path).collect()


def test_filters_option_builds_the_json():
    import datetime as dt
    import decimal
    import json

    from quiver.spark import filters_option

    text = filters_option([[("d", "==", dt.date(2024, 1, 31)), ("x", "in", [1.5, None])],
                           [("ts", "<", dt.datetime(2024, 1, 1, tzinfo=dt.UTC)),
                            ("dec", ">", decimal.Decimal("1.10")), ("f", "!=", float("nan")),
                            ("s", "is null")]])
    assert json.loads(text) == [
        [["d", "==", "2024-01-31"], ["x", "in", [1.5, None]]],
        [["ts", "<", "2024-01-01T00:00:00+00:00"], ["dec", ">", "1.10"], ["f", "!=", "NaN"],
         ["s", "is null"]],
    ]
    assert json.loads(filters_option([("id", ">=", 10)])) == [["id", ">=", 10]]
    with pytest.raises(Exception, match="option filters"):
        filters_option([("id", ">=", object())])


# -- partition directories -----------------------------------------------------------------


@pytest.fixture(scope="module")
def keyed(tmp_path_factory):
    """k=01/, k=1/, k=2/ in Arrow and in Parquet, id 0..9 in each."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .helpers import write_file

    root = tmp_path_factory.mktemp("keyed")
    for i, k in enumerate(("01", "1", "2")):
        table = pa.table({"id": pa.array(range(10 * i, 10 * i + 10), pa.int32())})
        write_file(root / "arrow" / f"k={k}" / "a.arrow", table)
        (root / "parquet" / f"k={k}").mkdir(parents=True)
        pq.write_table(table, str(root / "parquet" / f"k={k}" / "a.parquet"))
    return str(root / "arrow"), str(root / "parquet")


@pytest.mark.parametrize(("schema", "filters", "sql"), [
    ("id int, k string", '[["k", "in", ["01", "2"]]]', "k in ('01', '2')"),
    ("id int, k string", '[["k", "==", "1"]]', "k = '1'"),
    ("id int, k string", '[["k", "<", "1"]]', "k < '1'"),
    ("id int, k string", '[["k", "not in", ["1"]], ["id", ">", 3]]', "k <> '1' and id > 3"),
    (None, '[["k", "in", [1]]]', "k in (1)"),
    (None, '[["k", ">", 1]]', "k > 1"),
    (None, '[[["k", "==", 2]], [["id", "<", 3]]]', "k = 2 or id < 3"),
])
def test_partition_values_are_matched_as_the_schema_types_them(spark, keyed, schema, filters,
                                                                sql):
    """A user schema's partition type is the type values are compared in, ``in`` is
    matched as a set, and the rows are those Spark's Parquet source gives."""
    arrow, parquet = keyed
    reader = spark.read.format("arrow")
    expected = spark.read
    if schema is not None:
        reader, expected = reader.schema(schema), expected.schema(schema)
    got = reader.option("filters", filters).load(arrow)
    want = expected.parquet(parquet).filter(sql)
    assert sorted(tuple(r) for r in got.collect()) == sorted(tuple(r) for r in want.collect())


def test_partition_directories_are_skipped(spark, keyed):
    from pyspark.sql.types import IntegerType, StringType, StructField, StructType

    arrow, _ = keyed
    schema = StructType([StructField("id", IntegerType()), StructField("k", StringType())])
    reader = _reader({"path": arrow, "filters": '[["k", "in", ["01", "2"]]]'}, schema)
    paths = sorted(s.path.split("/")[-2] for p in reader.partitions() for s in p.splits)
    assert paths == ["k=01", "k=2"]


# -- statistics in Spark's units -----------------------------------------------------------


def _with_and_without_statistics(tmp_path, table, batch_rows=2):
    import quiver.ipc as ipc

    paths = []
    for stats in (True, False):
        path = str(tmp_path / f"s{int(stats)}.arrow")
        with ipc.new_file(path, table.schema, statistics=stats) as writer:
            for batch in table.to_batches(max_chunksize=batch_rows):
                writer.write_batch(batch)
        paths.append(path)
    assert ipc.open_file(paths[0]).statistics is not None
    assert ipc.open_file(paths[1]).statistics is None
    return paths


@pytest.mark.parametrize("text", [
    '[["d64", "==", "1970-01-02"]]',
    '[["d64", "<=", "1970-01-01"]]',
    '[["ts", "==", "1970-01-01T00:00:00"]]',
    '[["ts", "<=", "1970-01-01T00:00:00"]]',
    '[["ts", ">", "1970-01-01T00:00:00"]]',
    '[["ts", "in", ["1970-01-01T00:00:00.000001"]]]',
])
def test_statistics_are_compared_in_sparks_units(spark, tmp_path, text):
    """date64 (Spark sees days, floored) and timestamp[ns] (microseconds, cut): a file
    with statistics gives the rows the same file without them gives."""
    import pyarrow as pa

    day = 86_400_000
    table = pa.table({
        "d64": pa.array([day + 5, 2 * day - 1, 5, -1], pa.date64()),
        "ts": pa.array([1, 999, 1000, 1999], pa.timestamp("ns")),
    })
    with_stats, without = _with_and_without_statistics(tmp_path, table)
    got = spark.read.format("arrow").option("filters", text).load(with_stats).collect()
    want = spark.read.format("arrow").option("filters", text).load(without).collect()
    assert sorted(map(tuple, got), key=repr) == sorted(map(tuple, want), key=repr)
    # and they are the rows whose values, as Spark shows them, satisfy the comparison
    import datetime as dt
    import json
    import operator

    [[column, op, value]] = json.loads(text)
    parse = dt.date.fromisoformat if column == "d64" else dt.datetime.fromisoformat
    compare = {"==": operator.eq, "<=": operator.le, ">": operator.gt,
               "in": lambda v, vs: v in vs}[op]
    wanted = [parse(v) for v in value] if op == "in" else parse(value)
    every = spark.read.format("arrow").load(without).collect()
    expected = [tuple(r) for r in every if compare(r[column], wanted)]
    assert expected and len(expected) < len(every)
    assert sorted(map(tuple, got), key=repr) == sorted(expected, key=repr)


def test_invalid_values_made_null_are_not_skipped_by_null_counts(spark, tmp_path):
    """invalidValues=null: a timestamp past year 9999 becomes null, the footer still
    says no nulls; the batch must not be skipped for IS NULL, nor for its bounds."""
    import pyarrow as pa

    past_9999 = 253_402_300_800  # seconds: 10000-01-01
    table = pa.table({"id": pa.array([0, 1, 2, 3]),
                      "ts": pa.array([5, past_9999, -10**12, 7], pa.timestamp("s"))})
    with_stats, without = _with_and_without_statistics(tmp_path, table)
    for text in ('[["ts", "is null"]]', '[["ts", "is not null"]]',
                 '[["ts", "<", "1970-01-01T00:00:06"]]', '[["ts", ">", "1970-01-01T00:00:06"]]'):
        results = []
        for path in (with_stats, without):
            df = (spark.read.format("arrow").option("invalidValues", "null")
                  .option("filters", text).load(path))
            results.append(sorted(r[0] for r in df.select("id").collect()))
        assert results[0] == results[1], text
    df = (spark.read.format("arrow").option("invalidValues", "null")
          .option("filters", '[["ts", "is null"]]').load(with_stats))
    assert sorted(r[0] for r in df.select("id").collect()) == [1, 2]


def test_spark_statistics_widen_bounds_and_forget_counts_that_change():
    """The rule itself, without Spark: bounds converted by the policy; a bound Spark
    cannot hold drops the bounds and, with invalidValues=null, the null count."""
    import pyarrow as pa

    from quiver import types as t
    from quiver.interop import import_array
    from quiver.spark.policy import ReadPolicy
    from quiver.spark.pushdown import spark_statistics

    class Stats:  # the fields spark_statistics reads, as FileStatistics has them
        pass

    import dataclasses

    import numpy as np

    @dataclasses.dataclass(frozen=True)
    class Fake:
        row_counts: np.ndarray
        null_counts: tuple
        nan_counts: tuple
        mins: list
        maxs: list
        min_exact: tuple
        max_exact: tuple
        has_bounds: tuple
        row_known: np.ndarray
        null_known: tuple
        nan_known: tuple

    ones = np.ones(2, bool)
    stats = Fake(np.array([2, 2]), (np.zeros(2, np.int64),), (np.zeros(2, np.int64),),
                 [import_array(pa.array([5, -10**12], pa.timestamp("s")))],
                 [import_array(pa.array([7, 9], pa.timestamp("s")))],
                 (ones,), (ones,), (ones,), ones, (ones,), (ones,))
    schema = t.schema([t.field("ts", t.timestamp("s"))])
    target = t.timestamp("us")
    for policy, null_known in ((ReadPolicy(), [True, True]),
                               (ReadPolicy(invalid_values="null"), [True, False])):
        converted, spark_schema = spark_statistics(stats, schema, {0: target}, policy)
        assert spark_schema.field(0).type == target
        assert converted.has_bounds[0].tolist() == [True, False]
        assert converted.null_known[0].tolist() == null_known
        assert pa.array(converted.mins[0]).to_pylist()[0] == pa.scalar(
            5_000_000, pa.timestamp("us")).as_py()


# -- values Spark cannot hold ---------------------------------------------------------------


def test_time_is_cut_to_microseconds_as_a_parquet_round_trip_does(spark, tmp_path):
    import pyarrow as pa

    from .helpers import write_file

    path = write_file(tmp_path / "tm.arrow", pa.table({
        "id": pa.array([0, 1, 2]),
        "tm": pa.array([999, 1_000_001, 86_399_999_999_999], pa.time64("ns"))}))
    df = spark.read.format("arrow").load(path)
    parquet = str(tmp_path / "tm.parquet")
    before = spark.conf.get("spark.sql.timeType.enabled", "false")
    spark.conf.set("spark.sql.timeType.enabled", "true")  # Parquet's TIME (Spark 4.3)
    try:
        df.write.parquet(parquet)
        again = spark.read.parquet(parquet)
        assert sorted(map(tuple, df.collect())) == sorted(map(tuple, again.collect()))
        for sql in ("tm = time'00:00:00'", "tm = time'00:00:00.001'", "tm > time'00:00:00'"):
            assert df.filter(sql).count() == again.filter(sql).count(), sql
        assert df.filter("tm = time'00:00:00'").count() == 1
        nanos = pa.array(df.toArrow().column("tm")).cast(pa.int64()).to_pylist()
        assert sorted(nanos) == [0, 1_000_000, 86_399_999_999_000]
    finally:
        spark.conf.set("spark.sql.timeType.enabled", before)


def _decimal_beyond_precision(tmp_path):
    import decimal

    import pyarrow as pa

    from .helpers import write_file

    wide = pa.array([decimal.Decimal("1.50"), decimal.Decimal("128.10"),
                     decimal.Decimal("-9.99")], pa.decimal128(6, 2))
    narrow = pa.Array.from_buffers(pa.decimal128(3, 2), 3, wide.buffers())
    return write_file(tmp_path / "dec.arrow", pa.table({"x": narrow}))


def test_decimal_with_more_digits_than_its_precision_is_an_invalid_value(spark, tmp_path):
    import decimal

    path = _decimal_beyond_precision(tmp_path)
    with pytest.raises(Exception, match=r"dec\.arrow, batch 0, column x, row 1: expected a "
                                        r"decimal of at most 3 digits"):
        spark.read.format("arrow").load(path).collect()
    df = spark.read.format("arrow").option("invalidValues", "null").load(path)
    assert [r[0] for r in df.collect()] == [decimal.Decimal("1.50"), None,
                                             decimal.Decimal("-9.99")]


# -- one huge batch, read in parallel --------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["file", "stream"])
def test_a_one_batch_file_is_read_by_several_tasks(spark, tmp_path, stream):
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .helpers import write_file

    n = 60_000
    ids = np.arange(n)
    table = pa.table({
        "id": ids,
        "s": pa.array([f"row{i}" for i in range(n)]).dictionary_encode(),
        "l": pa.array([[i, i + 1] if i % 3 else None for i in range(n)]),
        "t": pa.array([f"text-{i % 97}" for i in range(n)], pa.large_string()),
    })
    path = write_file(tmp_path / "one.arrow", table, stream=stream)
    parquet = str(tmp_path / "one.parquet")
    pq.write_table(table, parquet)
    df = (spark.read.format("arrow").option("maxPartitionBytes", "256k")
          .option("openCostInBytes", "1").load(path))
    assert df.rdd.getNumPartitions() >= 4
    got = df.collect()
    assert [r[0] for r in got] == list(range(n))  # order kept, nothing twice
    want = spark.read.parquet(parquet).collect()
    assert sorted(map(tuple, got), key=repr) == sorted(
        (tuple(r) for r in want), key=repr)


def test_no_batch_handed_to_spark_exceeds_max_records(spark, tmp_path):
    import pyarrow as pa

    from quiver.spark import read as R

    from .helpers import write_file

    path = write_file(tmp_path / "big.arrow", pa.table({"id": pa.array(range(25_000))}))
    schema = spark.read.format("arrow").load(path).schema
    for options, most in (({}, 10_000), ({"maxRecordsPerBatch": "3000"}, 3000)):
        reader = _reader({"path": path, **options}, schema)
        sizes = [b.num_rows for p in reader.partitions() for s in p.splits
                 for b in R.read_split(s, reader.job)]
        assert sum(sizes) == 25_000 and max(sizes) == most


def test_a_null_map_key_and_duplicate_names_are_errors_not_crashes(spark, tmp_path):
    """A map with a null key crashed the Python worker (pyarrow's import aborts); a file
    with two columns of one name failed deep in the JVM."""
    import numpy as np
    import pyarrow as pa

    import quiver as qv
    import quiver.ipc as ipc
    from quiver import types as t
    from quiver.array import make_array

    mt = t.map_(t.field("key", t.string(), nullable=False), t.field("value", t.int64()))
    entries = make_array(mt.entries_field.type, 3, [None],
                         [qv.array(["a", None, "c"]), qv.array([1, 2, 3])], 0)
    maps = make_array(mt, 2, [None, np.array([0, 2, 3], np.int32).view(np.uint8)],
                      [entries], 0)
    path = str(tmp_path / "nullkey.arrow")
    with ipc.new_file(path, t.schema([t.field("m", mt)])) as writer:
        writer.write_batch(qv.record_batch({"m": maps}))
    with pytest.raises(Exception, match=r"nullkey\.arrow, batch 0, column m, row 0: expected "
                                        r"a map without null keys"):
        spark.read.format("arrow").load(path).collect()
    df = spark.read.format("arrow").option("invalidValues", "null").load(path)
    assert [r[0] for r in df.collect()] == [None, {"c": 3}]
    twice = str(tmp_path / "twice.arrow")
    with pa.ipc.new_file(twice, pa.schema([("a", pa.int64()), ("a", pa.int64())])) as w:
        w.write_batch(pa.record_batch([pa.array([1]), pa.array([2])], names=["a", "a"]))
    with pytest.raises(Exception, match=r"expected distinct column names"):
        spark.read.format("arrow").load(twice).collect()
