"""spark.read.format("arrow"): paths, formats, splits, partitions, schemas, options."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path

import pyarrow as pa
import pytest

from quiver.spark.policy import ReadPolicy
from tests.conftest import INTEGRATION, SUPPLEMENT, require_shared

from .helpers import rows, write_file

pytestmark = pytest.mark.xdist_group("spark")


def _table(n: int, start: int = 0) -> pa.Table:
    ids = pa.array(range(start, start + n), pa.int64())
    return pa.table({
        "id": ids,
        "name": pa.array([f"n{i % 13}" for i in range(start, start + n)]),
        "score": pa.array([i * 0.5 if i % 5 else None for i in range(start, start + n)]),
    })


def test_auto_registered_name_and_explicit_names(spark, tmp_path):
    path = write_file(tmp_path / "a.arrow", _table(10))
    for name in ("arrow", "quiver"):
        assert spark.read.format(name).load(path).count() == 10


def test_file_and_stream_detected_by_bytes_not_extension(spark, tmp_path):
    write_file(tmp_path / "d" / "x.feather", _table(5))
    write_file(tmp_path / "d" / "y.arrow", _table(5, 5), stream=True)
    write_file(tmp_path / "d" / "z", _table(5, 10), stream=True)
    df = spark.read.format("arrow").load(str(tmp_path / "d"))
    assert [r[0] for r in rows(df.select("id"), "id")] == list(range(15))


def test_hidden_underscore_and_non_arrow_files_are_skipped(spark, tmp_path):
    root = tmp_path / "mixed"
    write_file(root / "part-1.arrow", _table(4))
    write_file(root / "_temporary" / "x" / "part-2.arrow", _table(4, 100))
    write_file(root / ".hidden.arrow", _table(4, 200))
    write_file(root / "nested" / "deep" / "part-3.arrows", _table(4, 4), stream=True)
    (root / "_SUCCESS").write_bytes(b"")
    (root / "notes.csv").write_text("a,b\n1,2\n")
    df = spark.read.format("arrow").load(str(root))
    assert [r[0] for r in rows(df.select("id"), "id")] == list(range(8))


def test_glob_and_list_of_paths(spark, tmp_path):
    for i in range(3):
        write_file(tmp_path / f"p{i}.arrow", _table(3, 3 * i))
    assert spark.read.format("arrow").load(str(tmp_path / "p[01].arrow")).count() == 6
    df = spark.read.format("arrow").load([str(tmp_path / "p0.arrow"), str(tmp_path / "p2.arrow")])
    assert sorted(r[0] for r in df.select("id").collect()) == [0, 1, 2, 6, 7, 8]


def test_non_arrow_file_named_directly_says_what_it_is(spark, tmp_path):
    path = tmp_path / "data.parquet"
    path.write_bytes(b"PAR1" + b"\x00" * 32)
    with pytest.raises(Exception, match="found a Parquet file"):
        spark.read.format("arrow").load(str(path)).count()


@pytest.mark.parametrize("stream", [False, True], ids=["file", "stream"])
def test_one_file_split_over_partitions_gives_the_same_rows(spark, tmp_path, stream):
    table = _table(20_000)
    path = write_file(tmp_path / "big.arrow", table, stream=stream, batch_rows=1000)
    whole = spark.read.format("arrow").load(path)
    split = (spark.read.format("arrow").option("maxPartitionBytes", "16384")
             .option("openCostInBytes", "1").load(path))
    assert whole.rdd.getNumPartitions() == 1 or whole.rdd.getNumPartitions() <= 2
    assert split.rdd.getNumPartitions() >= 8
    assert rows(split) == rows(whole)  # order kept: partitions in file order
    assert rows(split) == [tuple(r.values()) for r in table.to_pylist()]


def test_stream_split_replays_delta_and_replacement_dictionaries(spark):
    for name in ("dict_delta.stream", "dict_delta_and_replacement.stream",
                 "dict_replacement.stream"):
        path = str(require_shared(SUPPLEMENT / name))
        expected = pa.ipc.open_stream(path).read_all()
        expected_rows = [tuple(r.values()) for r in expected.to_pylist()]
        counts = []
        for max_bytes in ("1", "128m"):
            df = (spark.read.format("arrow").option("maxPartitionBytes", max_bytes)
                  .option("openCostInBytes", "1").option("minPartitions", "1").load(path))
            assert rows(df) == expected_rows, (name, max_bytes)
            counts.append(df.rdd.getNumPartitions())
        # one partition per batch, then the whole stream in one
        assert counts == [len(pa.ipc.open_stream(path).read_all().to_batches()), 1]


def test_small_files_are_packed_together(spark, tmp_path):
    for i in range(12):
        write_file(tmp_path / "many" / f"f{i:02d}.arrow", _table(10, 10 * i))
    df = spark.read.format("arrow").option("minPartitions", "1").load(str(tmp_path / "many"))
    assert df.rdd.getNumPartitions() == 1
    assert [r[0] for r in rows(df.select("id"))] == list(range(120))


def test_hive_partitions_are_columns_with_inferred_types(spark, tmp_path):
    root = tmp_path / "hive"
    write_file(root / "year=2024" / "day=2024-01-02" / "city=Paris" / "a.arrow", _table(2))
    write_file(root / "year=2025" / "day=2025-03-04" / "city=New%20York" / "a.arrow",
               _table(2, 2))
    write_file(root / "year=__HIVE_DEFAULT_PARTITION__" / "day=2025-03-05" / "city=x" /
               "a.arrow", _table(1, 4))
    df = spark.read.format("arrow").load(str(root))
    assert [f.dataType.simpleString() for f in df.schema.fields[-3:]] == ["int", "date", "string"]
    got = rows(df.select("id", "year", "day", "city"), "id")
    assert got == [
        (0, 2024, dt.date(2024, 1, 2), "Paris"), (1, 2024, dt.date(2024, 1, 2), "Paris"),
        (2, 2025, dt.date(2025, 3, 4), "New York"), (3, 2025, dt.date(2025, 3, 4), "New York"),
        (4, None, dt.date(2025, 3, 5), "x"),
    ]
    as_text = spark.read.format("arrow").option("partitionColumnTypeInference", "false")
    assert as_text.load(str(root)).schema["year"].dataType.simpleString() == "string"
    assert spark.read.format("arrow").load(str(root)).filter("year = 2025").count() == 2


def test_schema_mismatch_names_the_file_and_field(spark, tmp_path):
    write_file(tmp_path / "m" / "a.arrow", _table(3))
    other = _table(3).set_column(2, "score", pa.array(["x", "y", "z"]))
    write_file(tmp_path / "m" / "b.arrow", other)
    with pytest.raises(Exception, match=r"b\.arrow.*score.*(string|double)"):
        spark.read.format("arrow").load(str(tmp_path / "m")).collect()


def test_merge_schema_unifies_and_widens(spark, tmp_path):
    write_file(tmp_path / "u" / "a.arrow", pa.table({"id": pa.array([1, 2], pa.int32()),
                                                   "x": pa.array([1.5, 2.5], pa.float32())}))
    write_file(tmp_path / "u" / "b.arrow", pa.table({"id": pa.array([3], pa.int64()),
                                                   "y": pa.array(["new"]),
                                                   "x": pa.array([3.25], pa.float64())}))
    df = spark.read.format("arrow").option("mergeSchema", "true").load(str(tmp_path / "u"))
    assert [(f.name, f.dataType.simpleString()) for f in df.schema.fields] == [
        ("id", "bigint"), ("x", "double"), ("y", "string")]
    assert rows(df, "id") == [(1, 1.5, None), (2, 2.5, None), (3, 3.25, "new")]
    write_file(tmp_path / "u" / "c.arrow", pa.table({"id": pa.array(["text"])}))
    with pytest.raises(Exception, match=r"c\.arrow.*id"):
        spark.read.format("arrow").option("mergeSchema", "true").load(
            str(tmp_path / "u")).collect()


def test_user_schema_is_honoured_with_safe_casts(spark, tmp_path):
    path = write_file(tmp_path / "s.arrow", pa.table({"a": pa.array([1, 2], pa.int16()),
                                                     "b": pa.array(["p", "q"])}))
    df = spark.read.format("arrow").schema("a bigint, b string, c double").load(path)
    assert rows(df) == [(1, "p", None), (2, "q", None)]
    with pytest.raises(Exception, match="column b"):
        spark.read.format("arrow").schema("a int, b int").load(path).collect()


def test_columns_option_reads_only_those(spark, tmp_path):
    path = write_file(tmp_path / "c.arrow", _table(6))
    df = spark.read.format("arrow").option("columns", "score, id").load(path)
    assert df.columns == ["score", "id"]
    assert rows(df.select("id"), "id") == [(i,) for i in range(6)]
    with pytest.raises(Exception, match="nope"):
        spark.read.format("arrow").option("columns", "id,nope").load(path).collect()
    # names match as Spark matches them (spark.sql.caseSensitive=false), spelt as the file
    df = spark.read.format("arrow").option("columns", "SCORE,Id").load(path)
    assert df.columns == ["score", "id"]
    assert rows(df.select("id"), "id") == [(i,) for i in range(6)]
    merged = (spark.read.format("arrow").option("mergeSchema", "true")
              .option("columns", "ID").load(path))
    assert merged.columns == ["id"]


def test_invalid_values_error_names_file_column_and_row(spark, tmp_path):
    path = write_file(tmp_path / "t.arrow",
                      pa.table({"t": pa.array([0, 86_400 * 1000], pa.time32("ms"))}))
    with pytest.raises(Exception, match=r"t\.arrow, batch 0, column t, row 1"):
        spark.read.format("arrow").load(path).collect()
    df = spark.read.format("arrow").option("invalidValues", "null").load(path)
    assert rows(df) == [(dt.time(0, 0),), (None,)]


def test_filter_pushdown_setting_on_and_off_gives_the_same_rows(spark, tmp_path):
    path = write_file(tmp_path / "f.arrow", _table(100), batch_rows=10)
    results = []
    for enabled in ("false", "true"):
        spark.conf.set("spark.sql.python.filterPushdown.enabled", enabled)
        try:
            df = spark.read.format("arrow").load(path).filter("id > 90 and name = 'n0'")
            results.append(rows(df, "id"))
        finally:
            spark.conf.unset("spark.sql.python.filterPushdown.enabled")
    assert results[0] == results[1] == [(91, "n0", 45.5)]


NULL_POLICY = ReadPolicy(invalid_values="null")

GOLD_CASES = ["generated_primitive", "generated_primitive_no_batches", "generated_datetime",
              "generated_decimal", "generated_dictionary", "generated_nested",
              "generated_null", "generated_custom_metadata",
              "generated_map", "generated_nested_large_offsets", "generated_large_binary",
              "generated_recursive_nested", "generated_binary_view", "generated_list_view"]


@pytest.mark.parametrize("case", GOLD_CASES)
def test_gold_files_read_with_the_values_pyarrow_reads(spark, case):
    from quiver.interop import import_array
    from quiver.spark.convert import to_spark_array

    base = require_shared(INTEGRATION / "cpp-21.0.0")
    for suffix in (".arrow_file", ".stream"):
        path = base / f"{case}{suffix}"
        if not path.exists():
            pytest.skip(f"gold case {case} absent from ../shared")
        table = (pa.ipc.open_file(path) if suffix == ".arrow_file"
                 else pa.ipc.open_stream(path)).read_all()
        # invalidValues=null: generated_decimal holds values of more digits than their
        # precision (128.10 in a decimal(3, 2)), which Spark cannot hold
        df = spark.read.format("arrow").option("maxPartitionBytes", "1") \
            .option("openCostInBytes", "1").option("invalidValues", "null").load(str(path))
        got = df.toArrow()
        assert got.num_rows == table.num_rows
        for i, name in enumerate(table.column_names):
            # expected: pyarrow's own reading, put into Spark's types by the policy
            expected = [
                pa.array(to_spark_array(import_array(chunk), NULL_POLICY)).to_pylist()
                for chunk in table.column(i).chunks
            ]
            flat = [v for chunk in expected for v in chunk]
            got_values = got.column(i).to_pylist()
            assert _normalise(got_values) == _normalise(flat), (case, suffix, name)
            plain = _plain(table.column(i))
            if plain is not None and flat.count(None) == plain.count(None):
                assert _normalise(got_values) == _normalise(plain), (case, suffix, name)


def _plain(column: pa.ChunkedArray) -> list | None:
    """The Python values pyarrow gives for a column whose values Spark keeps as they are
    (nanoseconds cut to microseconds first, as Spark does); None for unions and
    intervals, which Spark reads as structs."""
    typ = column.type
    if pa.types.is_dictionary(typ):
        column = pa.chunked_array([c.dictionary_decode() for c in column.chunks], typ.value_type)
        typ = column.type
    if pa.types.is_union(typ) or pa.types.is_interval(typ) or "interval" in str(typ):
        return None
    if (pa.types.is_timestamp(typ) or pa.types.is_duration(typ)) and typ.unit == "ns":
        column = column.cast(pa.timestamp("us", typ.tz) if pa.types.is_timestamp(typ)
                             else pa.duration("us"), safe=False)
    try:
        return column.to_pylist()
    except OverflowError:  # a zone shift past year 9999 that Python cannot show
        return None


def _normalise(values):
    """Lists of pairs (maps) and NaN compare by value."""
    out = []
    for v in values:
        if isinstance(v, float) and v != v:
            out.append("NaN")
        elif isinstance(v, list):
            out.append(_normalise(v))
        elif isinstance(v, dict):
            out.append({k: _normalise([x])[0] for k, x in v.items()})
        elif isinstance(v, tuple):
            out.append(tuple(_normalise(list(v))))
        elif isinstance(v, decimal.Decimal):
            out.append(v.normalize() if v.is_finite() else str(v))
        else:
            out.append(v)
    return out


def test_duplicate_struct_field_names_get_a_clear_error(spark):
    path = require_shared(INTEGRATION / "cpp-21.0.0" / "generated_duplicate_fieldnames.arrow_file")
    with pytest.raises(Exception, match="duplicate field names"):
        spark.read.format("arrow").load(str(path)).collect()


def test_merge_schema_with_columns_reads_missing_ones_as_null(spark, tmp_path):
    write_file(tmp_path / "mc" / "a.arrow", pa.table({"x": [1, 2]}))
    write_file(tmp_path / "mc" / "b.arrow", pa.table({"x": [3], "y": ["z"]}))
    df = (spark.read.format("arrow").option("mergeSchema", "true").option("columns", "y,x")
          .load(str(tmp_path / "mc")))
    assert rows(df, "x") == [(None, 1), (None, 2), ("z", 3)]


def test_a_file_of_another_type_is_an_error_without_merge_schema(spark, tmp_path):
    write_file(tmp_path / "wt" / "a.arrow", pa.table({"x": pa.array([1], pa.int64())}))
    write_file(tmp_path / "wt" / "b.arrow", pa.table({"x": pa.array([2], pa.int32())}))
    with pytest.raises(Exception, match=r"b\.arrow.*field 'x' of type int64, found int32"):
        spark.read.format("arrow").load(str(tmp_path / "wt")).collect()


def test_partition_texts_spark_would_not_parse_stay_strings(spark, tmp_path):
    for i, value in enumerate(["1_000", " 7", "\u0663"]):
        write_file(tmp_path / "pt" / f"k={value}" / f"{i}.arrow", pa.table({"i": [i]}))
    write_file(tmp_path / "pt" / ".staging=1" / "x.arrow", pa.table({"i": [99]}))
    df = spark.read.format("arrow").load(str(tmp_path / "pt"))
    assert df.schema["k"].dataType.simpleString() == "string"
    assert sorted(r[0] for r in df.select("k").collect()) == [" 7", "1_000", "\u0663"]


def test_user_schema_reads_partition_text_as_its_type(spark, tmp_path):
    for k in (1, 2):
        write_file(tmp_path / "us" / f"k={k}" / "a.arrow", pa.table({"x": [k * 10]}))
    df = spark.read.format("arrow").schema("x long, k string").load(str(tmp_path / "us"))
    assert rows(df, "x") == [(10, "1"), (20, "2")]


def test_a_damaged_file_in_a_directory_is_an_error_not_a_skip(spark, tmp_path):
    good = write_file(tmp_path / "dm" / "a.arrow", pa.table({"x": [1]}))
    damaged = tmp_path / "dm" / "b.arrow"
    data = bytearray(Path(good).read_bytes())
    data[:6] = b"\x00\x01\x02\x03\x04\x05"
    damaged.write_bytes(bytes(data))
    with pytest.raises(Exception, match=r"b\.arrow.*neither an Arrow IPC file"):
        spark.read.format("arrow").load(str(tmp_path / "dm")).collect()


def _two_suffixes(root: Path, parquet: bool) -> str:
    """k=1 and k=2 directories each holding part-0.<ext> (ids k*100..) and
    part-1.<ext>x (ids k*100+10..), written as Arrow or as Parquet."""
    import pyarrow.parquet as pq

    ext = "parquet" if parquet else "arrow"
    for k in (1, 2):
        for j, suffix in enumerate((ext, ext + "x")):
            table = pa.table({"id": pa.array([k * 100 + j * 10 + i for i in range(3)],
                                             pa.int64())})
            path = root / f"k={k}" / f"part-{j}.{suffix}"
            if parquet:
                path.parent.mkdir(parents=True, exist_ok=True)
                pq.write_table(table, str(path))
            else:
                write_file(path, table)
    return str(root)


def test_path_glob_filter_and_recursive_file_lookup_as_parquet(spark, tmp_path):
    # both options were ignored: every file was read (extra rows) and the k=... directories
    # still became a column
    a = _two_suffixes(tmp_path / "a", parquet=False)
    p = _two_suffixes(tmp_path / "p", parquet=True)
    for options in ({"pathGlobFilter": "*.{ext}"}, {"pathGlobFilter": "part-[!0].{ext}x"},
                    {"pathGlobFilter": "part-{{0,9}}.{ext}*"}, {"recursiveFileLookup": "true"},
                    {"recursiveFileLookup": "true", "pathGlobFilter": "*.{ext}x"}):
        def load(fmt: str, path: str, options=options):
            reader = spark.read.format(fmt)
            ext = "arrow" if fmt == "arrow" else "parquet"
            for key, value in options.items():
                reader = reader.option(key, value.replace("{ext}", ext))
            return reader.load(path)

        got, expected = load("arrow", a), load("parquet", p)
        assert got.schema.simpleString() == expected.schema.simpleString(), options
        assert rows(got, "id") == rows(expected, "id"), options
    # a file the filter leaves out is not opened (this one would be an error)
    (tmp_path / "a" / "k=1" / "notes.txt").write_bytes(b"\x00\x01 not arrow")
    got = spark.read.format("arrow").option("pathGlobFilter", "*.arrow").load(a)
    assert [r[0] for r in rows(got, "id")] == [100, 101, 102, 200, 201, 202]


@pytest.mark.parametrize("key", ["modifiedBefore", "modifiedAfter"])
def test_modified_before_and_after_are_refused_not_ignored(spark, tmp_path, key):
    path = write_file(tmp_path / "a.arrow", _table(5))
    with pytest.raises(Exception, match=f"{key} is not supported"):
        spark.read.format("arrow").option(key, "2000-01-01T00:00:00").load(path).collect()
