"""Per-batch statistics in the file footer: values equal pyarrow.compute's, the encoding
follows StatisticsSchema.rst, other readers read the files unchanged, filters skip
batches and return exactly pyarrow's rows."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import io
import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import quiver.ipc as ipc
from quiver import errors as E
from quiver.interop import import_batch
from quiver.ipc.statistics import (
    PREFIX_BYTES,
    STATISTICS_KEY,
    batch_statistics,
    decode_statistics,
)

COLUMNS = {
    "i64": pa.array([5, None, -3, 12, 0], pa.int64()),
    "u8": pa.array([200, 3, None, 7, 255], pa.uint8()),
    "i16": pa.array([None, None, None, None, None], pa.int16()),
    "f64": pa.array([1.5, float("nan"), None, -2.25, 8.0]),
    "f32": pa.array([float("nan"), float("nan"), None, None, None], pa.float32()),
    "s": pa.array(["pear", None, "apple", "", "zebra"]),
    "ls": pa.array(["b", "a", None, "c", "b"], pa.large_string()),
    "bin": pa.array([b"\x01\x02", b"\x00", None, b"\xff", b""]),
    "b": pa.array([False, None, False, False, False]),
    "d32": pa.array([dt.date(2020, 1, 1), None, dt.date(1999, 12, 31), dt.date(2030, 5, 5),
                     dt.date(2020, 1, 2)]),
    "ts": pa.array([1, 2, None, -5, 100], pa.timestamp("ms", "Europe/Paris")),
    "t64": pa.array([1, 2, None, 5, 100], pa.time64("us")),
    "dur": pa.array([1, -2, None, 5, 100], pa.duration("s")),
    "dec": pa.array([decimal.Decimal("1.50"), decimal.Decimal("-3.25"), None,
                     decimal.Decimal("10.00"), decimal.Decimal("-0.01")], pa.decimal128(10, 2)),
    "dec256": pa.array([decimal.Decimal("1e30"), decimal.Decimal("-7"), None,
                        decimal.Decimal("0"), decimal.Decimal("5")], pa.decimal256(40, 0)),
}


def _expected(column: pa.Array):
    if pa.types.is_floating(column.type):
        finite = pc.filter(column, pc.invert(pc.is_nan(column)))
        mm = pc.min_max(finite)
    elif pa.types.is_duration(column.type):  # no min_max kernel: through int64
        mm = pc.min_max(column.cast(pa.int64()))
        unit = column.type.unit
        as_py = [None if v.as_py() is None else pa.scalar(v.as_py(), pa.duration(unit)).as_py()
                 for v in (mm["min"], mm["max"])]
        return tuple(as_py)
    else:
        mm = pc.min_max(column)
    return mm["min"].as_py(), mm["max"].as_py()


@pytest.mark.parametrize("name", sorted(COLUMNS))
@pytest.mark.parametrize("window", [(0, 5), (1, 3)], ids=["whole", "sliced"])
def test_statistics_equal_pyarrow_compute(name, window):
    column = COLUMNS[name].slice(*window)
    batch = import_batch(pa.record_batch({name: column}))
    (stats,) = batch_statistics(batch, 0).columns
    assert stats.null_count == column.null_count
    low, high = _expected(column)
    if low is None:
        assert not stats.has_bounds
    else:
        assert stats.has_bounds and (stats.min, stats.max) == (low, high)
        assert stats.min_exact and stats.max_exact
    if pa.types.is_floating(column.type):
        assert stats.nan_count == int(pc.sum(pc.is_nan(column).cast(pa.int64())).as_py() or 0)


def test_empty_and_all_null_batches_have_no_bounds():
    empty = import_batch(pa.record_batch({"a": pa.array([], pa.int64())}))
    assert batch_statistics(empty, 0).columns[0].has_bounds is False
    nulls = import_batch(pa.record_batch({"a": pa.nulls(4, pa.string())}))
    (stats,) = batch_statistics(nulls, 0).columns
    assert stats.null_count == 4 and not stats.has_bounds


def test_long_strings_are_cut_and_marked_approximate():
    long_low = "a" * 200
    long_high = "\u00ff" * 100
    batch = import_batch(pa.record_batch({"s": pa.array([long_low, "m", long_high])}))
    (stats,) = batch_statistics(batch, 0).columns
    assert not stats.min_exact and not stats.max_exact
    assert len(stats.min.encode()) <= PREFIX_BYTES and long_low.startswith(stats.min)
    assert len(stats.max.encode()) <= PREFIX_BYTES and stats.max > long_high


def test_dictionary_columns_give_the_dictionary_range_approximately():
    column = pa.DictionaryArray.from_arrays(pa.array([1, 1, None], pa.int8()),
                                            pa.array(["q", "b", "z"]))
    (stats,) = batch_statistics(import_batch(pa.record_batch({"d": column})), 0).columns
    assert (stats.min, stats.max, stats.null_count) == ("b", "z", 1)
    assert not stats.min_exact and not stats.max_exact


def _write(table: pa.Table, batch_rows: int, **kw) -> bytes:
    kw.setdefault("statistics", True)
    sink = ipc.BufferOutputStream()
    with ipc.new_file(sink, table.schema, **kw) as writer:
        for batch in table.to_batches(max_chunksize=batch_rows):
            writer.write_batch(batch)
    return bytes(sink.getvalue())


def test_footer_holds_a_base64_stream_of_statistics_schema_batches():
    table = pa.table({k: v for k, v in COLUMNS.items()})
    data = _write(table, 2, metadata={"mine": "kept"})
    footer_meta = pa.ipc.open_file(data).metadata
    assert footer_meta[b"mine"] == b"kept"
    stream = pa.ipc.open_stream(base64.b64decode(footer_meta[STATISTICS_KEY.encode()]))
    batches = list(stream)
    assert len(batches) == 3
    first = batches[0]
    assert first.schema.names == ["column", "statistics"]
    assert first.schema.field("column").type == pa.int32()
    map_type = first.schema.field("statistics").type
    assert pa.types.is_map(map_type)
    assert map_type.key_type == pa.dictionary(pa.int32(), pa.string())
    assert pa.types.is_union(map_type.item_type) and map_type.item_type.mode == "dense"
    rows = first.to_pylist()
    assert rows[0] == {"column": None, "statistics": [("ARROW:row_count:exact", 2)]}
    by_column = {r["column"]: dict(r["statistics"]) for r in rows[1:]}
    i64 = list(COLUMNS).index("i64")
    assert by_column[i64] == {"ARROW:null_count:exact": 1, "ARROW:min_value:exact": 5,
                              "ARROW:max_value:exact": 5}


def test_reader_statistics_round_trip_and_the_standard_array():
    table = pa.table({"a": pa.array(range(10)), "s": pa.array([str(i) for i in range(10)])})
    reader = ipc.open_file(_write(table, 4))
    stats = reader.statistics
    assert [s.row_count for s in stats] == [4, 4, 2]
    assert [(c.min, c.max) for c in (s.columns[0] for s in stats)] == [(0, 3), (4, 7), (8, 9)]
    arrays = reader.statistics_array()
    assert len(arrays) == 3 and pa.record_batch(arrays[1]).to_pylist()[1]["column"] == 0


def test_statistics_false_and_the_default_write_none():
    table = pa.table({"a": [1, 2]})
    assert ipc.open_file(_write(table, 10, statistics=False)).statistics is None
    assert pa.ipc.open_file(_write(table, 10, statistics=False)).metadata is None
    sink = ipc.BufferOutputStream()
    with ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    assert ipc.open_file(sink.getvalue()).statistics is None


def test_other_readers_read_files_with_statistics_unchanged():
    # (no NaN here: NaN != NaN would hide what is compared)
    table = pa.table({k: v for k, v in COLUMNS.items() if k not in ("dec256", "f64", "f32")})
    data = _write(table, 2, compression="zstd")
    assert pa.ipc.open_file(data).read_all().to_pylist() == table.to_pylist()
    polars = pytest.importorskip("polars")
    frame = polars.read_ipc(io.BytesIO(data))
    assert frame.height == 5
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    con.register("t", pa.ipc.open_file(data).read_all())
    assert con.sql("select count(*) from t").fetchall() == [(5,)]


def test_corrupt_statistics_value_is_a_format_error():
    with pytest.raises(E.FormatError):
        decode_statistics("not base64 at all!")
    with pytest.raises(E.FormatError):
        decode_statistics(base64.b64encode(b"\xff\xff\xff\xff\x10\x00\x00\x00junk").decode())


# -- filters -------------------------------------------------------------------------------


def _pa_predicate(column: str, op: str, value):
    """pyarrow's expression for one predicate: filters_to_expression's for top-level
    columns, the same operators on a nested field reference for dotted paths."""
    field = pc.field(*column.split("."))
    if op == "is null":
        return field.is_null()
    if op == "is not null":
        return field.is_valid()
    if "." not in column:
        return pq.filters_to_expression([[(column, op, value)]])
    if op in ("in", "not in"):
        hit = field.isin(list(value))
        return hit if op == "in" else ~hit
    return {"==": field.__eq__, "!=": field.__ne__, "<": field.__lt__, "<=": field.__le__,
            ">": field.__gt__, ">=": field.__ge__}[op](value)


def _rows(table) -> list:
    """Rows with NaN made comparable."""
    def fix(v):
        if isinstance(v, float) and v != v:
            return "NaN"
        if isinstance(v, dict):
            return {k: fix(x) for k, x in v.items()}
        return v

    return [{k: fix(v) for k, v in row.items()} for row in table.to_pylist()]


def _pa_expression(filters):
    groups = filters if isinstance(filters[0], list) else [filters]
    expression = None
    for group in groups:
        part = None
        for column, op, value in group:
            p = _pa_predicate(column, op, value)
            part = p if part is None else part & p
        expression = part if expression is None else expression | part
    return expression


def _table(rng: np.random.Generator, n: int) -> pa.Table:
    ints = rng.integers(-20, 20, n)
    floats = rng.normal(size=n).round(1)
    floats[rng.random(n) < 0.1] = np.nan
    words = np.array(["", "a", "ab", "b", "pear", "zz", "\u00e9t\u00e9"])[rng.integers(0, 7, n)]
    nulls = rng.random(n) < 0.15
    return pa.table({
        "i": pa.array(ints, mask=nulls),
        "f": pa.array(floats, mask=rng.random(n) < 0.1),
        "s": pa.array(words.tolist(), mask=rng.random(n) < 0.1),
        "d": pa.array(words.tolist()).dictionary_encode(),
        "b": pa.array(rng.random(n) < 0.5, mask=rng.random(n) < 0.1),
        "t": pa.array((ints * 86_400_000).astype("datetime64[ms]"), mask=nulls),
        "dec": pa.array([decimal.Decimal(int(v)) / 4 for v in ints], pa.decimal128(8, 2)),
        "st": pa.StructArray.from_arrays([pa.array(ints), pa.array(words.tolist())],
                                         ["x", "y"], mask=pa.array(rng.random(n) < 0.1)),
    })


_VALUES = {
    "i": st.integers(-25, 25),
    "f": st.sampled_from([-1.0, 0.0, -0.0, 0.5, 2.0, float("nan")]),
    "s": st.sampled_from(["", "a", "ab", "b", "c", "pear", "zz", "\u00e9t\u00e9"]),
    "d": st.sampled_from(["", "a", "b", "pear", "zz"]), "b": st.booleans(),
    "t": st.integers(-25, 25).map(lambda d: dt.datetime(1970, 1, 1) + dt.timedelta(days=d)),
    "dec": st.integers(-100, 100).map(lambda v: decimal.Decimal(v) / 4),
    "st.x": st.integers(-25, 25), "st.y": st.sampled_from(["a", "pear", "zz"]),
}
_OPS = ["==", "!=", "<", "<=", ">", ">=", "in", "not in", "is null", "is not null"]


@st.composite
def _predicates(draw):
    column = draw(st.sampled_from(sorted(_VALUES)))
    op = draw(st.sampled_from(_OPS))
    if column in ("b",) and op in ("<", "<=", ">", ">="):
        op = "=="
    if op in ("in", "not in"):
        value = [draw(_VALUES[column]),
                 *draw(st.lists(st.one_of(_VALUES[column], st.none()), max_size=2))]
    elif op in ("is null", "is not null"):
        value = None
    else:
        value = draw(_VALUES[column])
    if column == "f" and op in ("in", "not in"):
        value = [v for v in value if not (isinstance(v, float) and math.isnan(v))] or [0.5]
    return (column, op, value)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1),
       groups=st.lists(st.lists(_predicates(), min_size=1, max_size=3), min_size=1,
                       max_size=2),
       with_statistics=st.booleans())
def test_filters_equal_pyarrow_filtering(seed, groups, with_statistics):
    table = _table(np.random.default_rng(seed), 60)
    data = _write(table, 7, statistics=with_statistics)
    filters = groups if len(groups) > 1 else groups[0]
    expected = table.filter(_pa_expression(filters))
    got = ipc.read_table(data, filters=filters)
    assert _rows(pa.table(got)) == _rows(expected)


def test_in_matches_as_pyarrow_does_signed_zeros_and_nan():
    table = pa.table({"f": pa.array([-0.0, 0.0, float("nan"), 1.0])})
    data = _write(table, 10)
    many = [5.0, 6.0, 7.0, 8.0, -0.0, float("nan")]  # more than four: the one-pass path
    for values in ([0.0], [-0.0], [float("nan")], [1.0, -0.0], many, [9.0, 5.0, 6.0, 7.0, 0.0]):
        expected = table.filter(pc.field("f").isin(values))
        got = ipc.read_table(data, filters=[("f", "in", values)])
        assert [str(v) for v in got.column("f").to_pylist()] == [
            str(v) for v in expected.column("f").to_pylist()], values


def test_selective_filter_reads_fewer_batches():
    table = pa.table({"a": pa.array(np.arange(10_000)), "b": pa.array(np.arange(10_000) % 7)})
    data = _write(table, 500)
    reader = ipc.open_file(data, filters=[("a", ">=", 9_800)])
    rows = reader.read_all()
    assert rows.num_rows == 200 and reader.batches_skipped == 19
    none = ipc.open_file(data, filters=[("a", "<", 0)])
    assert none.read_all().num_rows == 0 and none.batches_skipped == 20
    nulls = ipc.open_file(data, filters=[("a", "is null", None)])
    assert nulls.read_all().num_rows == 0 and nulls.batches_skipped == 20


def test_bad_filters_are_refused_clearly():
    data = _write(pa.table({"a": [1]}), 1)
    with pytest.raises(E.ArrowInvalidArgument, match="op"):
        ipc.open_file(data, filters=[("a", "~", 1)])
    with pytest.raises(E.ArrowInvalidArgument, match="list of values"):
        ipc.open_file(data, filters=[("a", "in", 1)])
    with pytest.raises(E.ArrowInvalidArgument, match="columns="):
        ipc.open_file(data, columns=["a"], filters=[("zz", "==", 1)]).read_all()


def test_is_null_sees_logical_nulls_with_and_without_statistics():
    dictionary = pa.DictionaryArray.from_arrays(pa.array([0, 1, None, 1], pa.int8()),
                                                pa.array(["a", None]))
    runs = pc.run_end_encode(pa.array([1, None, None, 2]))
    union = pa.UnionArray.from_sparse(pa.array([0, 1, 0, 1], pa.int8()),
                                      [pa.array([1, None, 3, 4]), pa.array(["a", "b", None, None])])
    table = pa.table({"d": dictionary, "r": runs, "u": union, "i": pa.array([0, 1, 2, 3])})
    for statistics in (True, False):
        data = _write(table, 2, statistics=statistics)
        for column in ("d", "r", "u"):
            nulls = pc.is_null(table.column(column)).to_pylist()
            for op, want in (("is null", True), ("is not null", False)):
                got = ipc.read_table(data, columns=["i", column], filters=[(column, op, None)])
                assert got.column("i").to_pylist() == [
                    i for i, null in enumerate(nulls) if null == want], (column, op, statistics)
        got = ipc.read_table(data, columns=["i", "r"], filters=[("r", ">", 1)])
        assert got.column("i").to_pylist() == [3]


def test_values_compare_as_pyarrow_compares_them():
    import datetime as dt

    table = pa.table({
        "f32": pa.array([0.1, 0.5], pa.float32()),
        "i8": pa.array([1, -100], pa.int8()),
        "ts": pa.array([dt.datetime(2020, 1, 1, 12), dt.datetime(2020, 1, 1, 13)],
                       pa.timestamp("s")),
        "d": pa.array([dt.date(2020, 1, 1), dt.date(2020, 1, 2)]),
        "dur": pa.array([dt.timedelta(seconds=1), dt.timedelta(seconds=2)], pa.duration("s")),
    })
    cases = [("f32", ">", 0.1), ("f32", "==", 0.1), ("f32", "<=", 0.1), ("i8", "<", 300),
             ("i8", ">", -300), ("i8", "==", 1.0), ("i8", "in", [1, 383]),
             ("ts", ">=", dt.datetime(2020, 1, 1, 12, 0, 0, 1)),
             ("ts", "<", dt.datetime(2020, 1, 1, 12, 0, 0, 1)),
             ("ts", "==", dt.datetime(2020, 1, 1, 12)),
             ("d", "==", dt.datetime(2020, 1, 1, 12)), ("d", "<=", dt.datetime(2020, 1, 1, 12)),
             ("dur", ">", dt.timedelta(seconds=1, microseconds=5)),
             ("dur", "!=", dt.timedelta(seconds=1, microseconds=5))]
    for statistics in (True, False):
        data = _write(table, 1, statistics=statistics)
        for column, op, value in cases:
            expected = table.filter(pq.filters_to_expression([[(column, op, value)]]))
            got = ipc.read_table(data, filters=[(column, op, value)])
            assert pa.table(got).to_pylist() == expected.to_pylist(), (column, op, value)


def test_values_of_another_kind_are_refused_before_anything_is_read():
    import datetime as dt

    table = pa.table({"s": ["a", "b"], "b": [True, False],
                      "tz": pa.array([0, 1], pa.timestamp("s", "UTC")),
                      "naive": pa.array([0, 1], pa.timestamp("s")),
                      "dur": pa.array([1, 2], pa.duration("s"))})
    data = _write(table, 1)
    for column, value in (("s", 5), ("b", "false"), ("b", 1), ("tz", dt.datetime(2020, 1, 1)),
                          ("naive", dt.datetime(2020, 1, 1, tzinfo=dt.UTC)), ("dur", 5)):
        with pytest.raises(E.ArrowTypeError, match=f"column {column}"):
            ipc.read_table(data, filters=[(column, "==", value)])
        with pytest.raises(E.ArrowTypeError):
            ipc.read_table(data, filters=[[("s", "==", "a")], [(column, "in", [value])]])


def test_a_foreign_statistics_value_is_a_format_error_on_every_reader_path():
    sink = io.BytesIO()
    table = pa.table({"a": [1, 2]})
    with pa.ipc.new_file(sink, table.schema,
                         metadata={STATISTICS_KEY: "not base64!"}) as writer:
        writer.write_table(table)
    reader = ipc.open_file(sink.getvalue())
    with pytest.raises(E.FormatError, match="base64"):
        reader.statistics  # noqa: B018 - the property decodes
    with pytest.raises(E.FormatError, match="base64"):
        reader.statistics_array()


# -- statistics of many batches: written and read as a matrix of messages ----------------

def _many_batches_table() -> pa.Table:
    table = pa.table(COLUMNS)
    table = table.append_column(
        "dict", pa.array(["a", "b", None, "a", "c"]).dictionary_encode())
    table = table.append_column("long", pa.array(["x" * 100, "y" * 70 + "\U0010ffff", None,
                                                  "a", "z" * 65]))
    return pa.concat_tables([table] * 24)  # 120 rows: batches with 1, 2 and 3 digits


def _footer_value(data: bytes) -> bytes:
    return pa.ipc.open_file(data).metadata[STATISTICS_KEY.encode()]


def _message_by_message(value, monkeypatch):
    from quiver.ipc.statistics import decode as S

    with monkeypatch.context() as m:
        m.setattr(S, "_bulk_columns", lambda stream: None)
        return decode_statistics(value)


def _same_statistics(a, b) -> None:
    assert list(a) == list(b)
    for name in ("row_counts", "indices"):
        assert getattr(a, name).tolist() == getattr(b, name).tolist()
    for name in ("null_counts", "nan_counts", "min_exact", "max_exact", "has_bounds"):
        assert [x.tolist() for x in getattr(a, name)] == [x.tolist() for x in getattr(b, name)]
    for name in ("mins", "maxs"):
        for x, y in zip(getattr(a, name), getattr(b, name)):
            assert (x is None) == (y is None)
            if x is not None:
                assert x.equals(y)


def test_bulk_and_message_by_message_decoding_agree(monkeypatch):
    from quiver.ipc.statistics import decode as S

    value = _footer_value(_write(_many_batches_table(), 1))
    assert S._bulk_columns(S.statistics_stream(value)) is not None  # the bulk path reads it
    bulk = decode_statistics(value)
    assert len(bulk) == 120 and bulk.indices.tolist() == list(range(120))
    _same_statistics(bulk, _message_by_message(value, monkeypatch))


def test_bulk_written_statistics_read_by_pyarrow_as_statistics_schema_batches():
    value = _footer_value(_write(_many_batches_table(), 1))
    reader = pa.ipc.open_stream(base64.b64decode(value))
    batches = []
    while True:
        try:
            batch, meta = reader.read_next_batch_with_custom_metadata()
        except StopIteration:
            break
        batches.append((batch, meta))
    assert [int(meta[b"quiver:batch"]) for _, meta in batches] == list(range(120))
    for k, (batch, _) in enumerate(batches):  # batch k holds row k of the table
        rows = batch.to_pylist()
        assert rows[0] == {"column": None, "statistics": [("ARROW:row_count:exact", 1)]}
        u8 = list(COLUMNS).index("u8") + 1
        want = COLUMNS["u8"][k % 5].as_py()
        got = dict(rows[u8]["statistics"])
        assert got.get("ARROW:min_value:exact") == want
        assert got["ARROW:null_count:exact"] == (want is None)


def test_damaged_statistics_decode_the_same_on_both_paths_or_raise_format_errors(
        monkeypatch):
    rng = np.random.default_rng(5)
    stream = bytearray(base64.b64decode(_footer_value(_write(_many_batches_table()[:40], 1))))
    for _ in range(150):
        damaged = bytearray(stream)
        for at in rng.integers(0, len(damaged), rng.integers(1, 4)):
            damaged[at] = int(rng.integers(0, 256))
        value = base64.b64encode(bytes(damaged))
        outcomes = []
        for decode in (decode_statistics, lambda v: _message_by_message(v, monkeypatch)):
            try:
                outcomes.append(decode(value))
            except E.ArrowError as exc:
                outcomes.append(type(exc))
        bulk, general = outcomes
        if isinstance(general, type):
            assert bulk is general
        else:
            assert not isinstance(bulk, type)
            _same_statistics(bulk, general)


def test_a_batch_whose_statistics_fail_is_refused_before_it_is_written():
    import quiver as qv
    from quiver import types as t
    from quiver.array import make_array
    from quiver.batch import RecordBatch

    good = qv.record_batch({"s": qv.array(["a", "b"])})
    offsets = np.array([0, 5, 1], "<i4").view(np.uint8)  # decreasing: no bounds to take
    bad = RecordBatch(good.schema, [make_array(
        t.string(), 2, [None, offsets, np.frombuffer(b"abcdef", np.uint8)], (), 0)])
    sink = ipc.BufferOutputStream()
    with ipc.new_file(sink, good.schema, statistics=True) as writer:
        writer.write_batch(good)
        with pytest.raises(E.ArrowInvalid, match="do not decrease"):
            writer.write_batch(bad)
        writer.write_batch(good)
    reader = ipc.open_file(sink.getvalue())
    assert reader.num_record_batches == 2
    assert [s.row_count for s in reader.statistics] == [2, 2]
