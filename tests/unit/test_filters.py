"""Tests for quiver.filters: batch filters skip batches by their statistics."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
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
from quiver.ipc.statistics import STATISTICS_KEY
from tests.unit._statistics_helpers import _write_stats

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
        # (a float dictionary: its NaN count is the slots', not the dictionary's)
        "df": pa.array(floats, mask=rng.random(n) < 0.1).dictionary_encode(),
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
    "df": st.sampled_from([-1.0, 0.0, 0.5, 2.0, float("nan")]),
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
    data = _write_stats(table, 7, statistics=with_statistics)
    filters = groups if len(groups) > 1 else groups[0]
    expected = table.filter(_pa_expression(filters))
    got = ipc.read_table(data, filters=filters)
    assert _rows(pa.table(got)) == _rows(expected)


def test_in_matches_as_pyarrow_does_signed_zeros_and_nan():
    table = pa.table({"f": pa.array([-0.0, 0.0, float("nan"), 1.0])})
    data = _write_stats(table, 10)
    many = [5.0, 6.0, 7.0, 8.0, -0.0, float("nan")]  # more than four: the one-pass path
    for values in ([0.0], [-0.0], [float("nan")], [1.0, -0.0], many, [9.0, 5.0, 6.0, 7.0, 0.0]):
        expected = table.filter(pc.field("f").isin(values))
        got = ipc.read_table(data, filters=[("f", "in", values)])
        assert [str(v) for v in got.column("f").to_pylist()] == [
            str(v) for v in expected.column("f").to_pylist()], values


def test_in_on_a_float32_column_keeps_batches_whose_values_round_to_a_listed_one():
    # pyarrow's is_in casts 0.1 to float32 first: the batch whose bounds are 0.1f (above
    # the double 0.1) holds a match and must not be skipped by its statistics
    table = pa.table({"f": pa.array([0.1, 0.5, 0.2], pa.float32())})
    for values in ([0.1], [0.1, 0.2], [0.3, 0.4, 0.6, 0.7, 0.1]):
        expected = table.filter(pc.field("f").isin(values))
        got = ipc.read_table(_write_stats(table, 1), filters=[("f", "in", values)])
        assert got.column("f").to_pylist() == expected.column("f").to_pylist(), values


def test_selective_filter_reads_fewer_batches():
    table = pa.table({"a": pa.array(np.arange(10_000)), "b": pa.array(np.arange(10_000) % 7)})
    data = _write_stats(table, 500)
    reader = ipc.open_file(data, filters=[("a", ">=", 9_800)])
    rows = reader.read_all()
    assert rows.num_rows == 200 and reader.batches_skipped == 19
    none = ipc.open_file(data, filters=[("a", "<", 0)])
    assert none.read_all().num_rows == 0 and none.batches_skipped == 20
    nulls = ipc.open_file(data, filters=[("a", "is null", None)])
    assert nulls.read_all().num_rows == 0 and nulls.batches_skipped == 20



def test_rows_kept_in_one_run_of_half_the_batch_or_more_are_a_slice_of_it_not_a_copy():
    from quiver.filters import filter_batch, normalize

    batch = ipc.open_file(_write_stats(pa.table({
        "a": pa.array(np.arange(1_000)), "s": pa.array([str(i) for i in range(1_000)])}),
        1_000)).get_batch(0)
    source = [batch.column(0).to_numpy(), batch.column(1).buffers[2]]
    cases = {(("a", ">=", 500),): (500, 500, True), (("a", "<", 600),): (0, 600, True),
             (("a", ">", 100), ("a", "<=", 900)): (101, 800, True),
             # a short run is a copy: it must not hold the whole batch's memory
             (("a", ">=", 990),): (990, 10, False), (("a", "<", 499),): (0, 499, False),
             (("a", "<", 0),): (0, 0, False)}
    for predicates, (first, count, shared) in cases.items():
        kept = filter_batch(batch, normalize(list(predicates)))
        assert kept.column(0).to_pylist() == list(range(first, first + count))
        assert kept.column(1).to_pylist() == [str(i) for i in range(first, first + count)]
        if count:
            assert np.shares_memory(kept.column(0).to_numpy(), source[0]) == shared
            assert np.shares_memory(kept.column(1).buffers[2], source[1]) == shared
    assert filter_batch(batch, normalize([("a", ">=", 0)])) is batch
    apart = filter_batch(batch, normalize([("a", "in", [3, 5])]))  # two runs: a copy
    assert apart.column(0).to_pylist() == [3, 5]
    assert not np.shares_memory(apart.column(0).to_numpy(), source[0])


_UNREAD = [  # (columns, filters): the filter's columns before, after, among the read ones
    (["f"], [("i", ">", 3)]),
    (["i"], [("s", "==", "a")]),
    (["dec", "i"], [("f", "<", 0.5)]),
    (["s", "i"], [("b", "==", False), ("st.y", "!=", "zz")]),
    (["i"], [("st.x", ">=", 3)]),
    (["st"], [[("i", ">", 5)], [("b", "==", True)]]),
    ([], [("i", ">", 0)]),
    ([2, "i"], [("i", "<", 0), ("f", "is not null", None)]),
    ([1], [("f", ">", 0)]),
]


@pytest.mark.parametrize(("columns", "filters"), _UNREAD)
def test_filters_on_columns_not_read_as_pyarrow_parquet(tmp_path, columns, filters):
    # pyarrow.parquet.read_table reads a filter's columns too and returns only columns=
    table = _table(np.random.default_rng(7), 60)
    pq.write_table(table, tmp_path / "t.parquet", row_group_size=7)
    names = [table.schema.names[c] if isinstance(c, int) else c for c in columns]
    expected = pq.read_table(tmp_path / "t.parquet", columns=names,
                             filters=_pa_expression(filters))
    data = _write_stats(table, 7)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table, max_chunksize=7)
    stream = sink.getvalue().to_pybytes()
    with ipc.open_file(data, columns=columns, filters=filters) as reader:
        assert reader.schema.names == names
        iterated = [pa.record_batch(b) for b in reader]
        assert all(b.schema.names == names for b in iterated)
        assert reader.get_batch(0).schema.names == names
    for got in (ipc.read_table(data, columns=columns, filters=filters),
                ipc.read_table(stream, columns=columns, filters=filters),
                ipc.open_file(data, columns=columns, filters=filters).read_all(),
                pa.Table.from_batches(iterated, schema=expected.schema)):
        got = pa.table(got)
        assert got.schema.names == names, (columns, filters)
        assert got.num_rows == expected.num_rows, (columns, filters)
        assert _rows(got) == _rows(expected), (columns, filters)


def test_filters_on_columns_not_read_still_skip_batches():
    table = pa.table({"k": np.arange(1_000), "v": np.arange(1_000) * 0.5})
    data = _write_stats(table, 100)
    with ipc.open_file(data, columns=["v"], filters=[("k", ">=", 950)]) as reader:
        got = reader.read_all()
        assert reader.batches_skipped == 9
    assert got.schema.names == ["v"]
    assert got.column("v").to_pylist() == [k * 0.5 for k in range(950, 1_000)]


def test_bad_filters_are_refused_clearly():
    data = _write_stats(pa.table({"a": [1]}), 1)
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
        data = _write_stats(table, 2, statistics=statistics)
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
        data = _write_stats(table, 1, statistics=statistics)
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
    data = _write_stats(table, 1)
    for column, value in (("s", 5), ("b", "false"), ("b", 1), ("tz", dt.datetime(2020, 1, 1)),
                          ("naive", dt.datetime(2020, 1, 1, tzinfo=dt.UTC)), ("dur", 5)):
        with pytest.raises(E.ArrowTypeError, match=f"column {column}"):
            ipc.read_table(data, filters=[(column, "==", value)])
        with pytest.raises(E.ArrowTypeError):
            ipc.read_table(data, filters=[[("s", "==", "a")], [(column, "in", [value])]])


# -- statistics that cannot be used: a full read, exact, with a warning ------------------


def _sorted_table() -> pa.Table:
    return pa.table({"a": pa.array(np.arange(2_000)),
                     "s": pa.array([f"value-{i:05}" for i in range(2_000)])})


def _with_footer_value(table: pa.Table, value) -> bytes:
    """A file whose footer holds ``value`` under the statistics key, written by pyarrow
    (quiver's writer drops a statistics value it is handed: it is another file's)."""
    from quiver.ipc.statistics import STATISTICS_KEY

    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema, metadata={STATISTICS_KEY: value}) as writer:
        for batch in table.to_batches(max_chunksize=20):
            writer.write_batch(batch)
    return sink.getvalue().to_pybytes()


def _filtered(data, limits=None):
    reader = ipc.open_file(data, filters=[("a", ">=", 1_990)], limits=limits)
    with pytest.warns(E.StatisticsWarning) as caught:
        got = [reader.read_next_batch() for _ in range(1)]
        got += list(reader)  # the rest: the warning is not said again
    return reader, got, [str(w.message) for w in caught]


def test_statistics_over_the_metadata_limit_cost_a_full_read_not_the_read():
    import struct

    from quiver.ipc.statistics import footer_value, statistics_stream

    table = _sorted_table()
    data = _write_stats(table, 20)  # 100 batches
    footer_size = struct.unpack("<i", data[-10:-6])[0]
    value = footer_value(ipc.open_file(data).footer.custom_metadata)
    stream_size = len(statistics_stream(value))
    limit = footer_size + 64
    assert limit < stream_size  # the footer reads; the statistics it holds are too large
    limits = ipc.IpcLimits(max_metadata_size=limit)
    reader, got, said = _filtered(data, limits)
    assert [v for b in got for v in b.column(0).to_pylist()] == list(range(1_990, 2_000))
    assert reader.batches_skipped == 0
    assert len(said) == 1 and "max_metadata_size" in said[0] and f"{limit}" in said[0]
    with pytest.raises(E.LimitExceeded):
        _ = ipc.open_file(data, limits=limits).statistics  # asked for: still refused
    skipping = ipc.open_file(data, filters=[("a", ">=", 1_990)])  # the default limit
    assert skipping.read_all().num_rows == 10 and skipping.batches_skipped == 99


@pytest.mark.parametrize("value, expected", [
    ("not base64 at all!", "base64"),
    ("AAAA", "statistics"),  # base64 of three zero bytes: no stream
])
def test_damaged_statistics_cost_a_full_read_not_the_read(value, expected):
    data = _with_footer_value(_sorted_table(), value)
    reader, got, said = _filtered(data)
    assert [v for b in got for v in b.column(0).to_pylist()] == list(range(1_990, 2_000))
    assert reader.batches_skipped == 0 and len(said) == 1 and expected in said[0]


def test_statistics_of_another_file_are_not_used():
    from quiver.ipc.statistics import footer_value

    table = _sorted_table()
    other = _write_stats(table, 1_000)  # 2 batches
    data = _with_footer_value(table, footer_value(ipc.open_file(other).footer.custom_metadata))
    reader, got, said = _filtered(data)
    assert [v for b in got for v in b.column(0).to_pylist()] == list(range(1_990, 2_000))
    assert reader.batches_skipped == 0
    assert "each of the 100 record batches, found 2" in said[0]


# -- statistics that leave counts out: those batches are never ruled out -----------------


def _foreign_statistics(bounds, *, rows: bool, nulls: bool, value_type=None) -> str:
    """A statistics value as another writer might leave it: per batch of a one-column
    file, min and max, with or without the row and null counts (5 rows and 1 null, as
    the batches of the tables here have)."""
    names = pa.array(["ARROW:row_count:exact", "ARROW:null_count:exact",
                      "ARROW:min_value:exact", "ARROW:max_value:exact"])
    value_type = value_type or pa.int64()
    batches = []
    for lo, hi in bounds:
        counts = ([5] if rows else []) + ([1] if nulls else [])
        keys = ([0] if rows else []) + ([1] if nulls else []) + [2, 3]
        codes = [0] * len(counts) + [1, 1]
        offsets = [*range(len(counts)), 0, 1]
        values = pa.UnionArray.from_dense(
            pa.array(codes, pa.int8()), pa.array(offsets, pa.int32()),
            [pa.array(counts, pa.int64()), pa.array([lo, hi], value_type)])
        stats = pa.MapArray.from_arrays(
            pa.array([0, int(rows), len(keys)], pa.int32()),
            pa.DictionaryArray.from_arrays(pa.array(keys, pa.int32()), names), values)
        batches.append(pa.record_batch({"column": pa.array([None, 0], pa.int32()),
                                        "statistics": stats}))
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batches[0].schema) as writer:
        for b in batches:
            writer.write_batch(b)
    return base64.b64encode(sink.getvalue().to_pybytes()).decode()


@pytest.mark.parametrize("rows, nulls", [(False, True), (True, False), (False, False)])
def test_batches_whose_counts_the_statistics_leave_out_are_read(rows, nulls):
    table = pa.table({"a": pa.array([0, 1, None, 3, 4, 5, 6, None, 8, 9], pa.int64())})
    value = _foreign_statistics([(0, 4), (5, 9)], rows=rows, nulls=nulls)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema, metadata={STATISTICS_KEY: value}) as writer:
        for batch in table.to_batches(max_chunksize=5):
            writer.write_batch(batch)
    data = sink.getvalue().to_pybytes()
    for filters, expected in (([("a", ">=", 0)], [0, 1, 3, 4, 5, 6, 8, 9]),
                              ([("a", "is null", None)], [None, None]),
                              ([("a", ">", 4)], [5, 6, 8, 9])):
        reader = ipc.open_file(data, filters=filters)
        assert reader.read_all().column("a").to_pylist() == expected, filters
    # with the counts stated, the same bounds do rule batches out
    value = _foreign_statistics([(0, 4), (5, 9)], rows=True, nulls=True)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema, metadata={STATISTICS_KEY: value}) as writer:
        for batch in table.to_batches(max_chunksize=5):
            writer.write_batch(batch)
    reader = ipc.open_file(sink.getvalue().to_pybytes(), filters=[("a", ">", 4)])
    assert reader.read_all().num_rows == 4 and reader.batches_skipped == 1


def test_an_unstated_nan_count_keeps_float_batches_in_sparks_order():
    from quiver.filters import Predicate, batches_may_match
    from quiver.ipc.statistics import decode_statistics

    stats = decode_statistics(_foreign_statistics([(0.0, 4.0)], rows=True, nulls=True,
                                                  value_type=pa.float64()))
    schema = ipc.open_file(_write_stats(pa.table({"v": [1.0]}), 1)).schema
    above = [[Predicate(("v",), ">", 100.0)]]
    assert batches_may_match(above, stats, schema).tolist() == [False]  # NaN never > 100
    # in Spark's order NaN exceeds every number: a batch might hold NaN
    assert batches_may_match(above, stats, schema, nan_is_largest=True).tolist() == [True]


def test_statistics_out_of_their_batches_order_are_not_used():
    from tests.unit._statistics_helpers import _footer_value, _stream_bytes

    table = _sorted_table()
    reader = pa.ipc.open_stream(_stream_bytes(_footer_value(_write_stats(table, 20))))
    batches = []
    while True:
        try:
            batches.append(reader.read_next_batch_with_custom_metadata())
        except StopIteration:
            break
    batches[0], batches[1] = batches[1], batches[0]  # each keeps its quiver:batch index
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, reader.schema) as writer:
        for batch, meta in batches:
            writer.write_batch(batch, custom_metadata=meta)
    data = _with_footer_value(table, base64.b64encode(sink.getvalue().to_pybytes()).decode())
    reader, got, said = _filtered(data)
    assert [v for b in got for v in b.column(0).to_pylist()] == list(range(1_990, 2_000))
    assert reader.batches_skipped == 0
    assert "statistics of batch 0 in place 0, found those of batch 1" in said[0]


def test_batches_the_statistics_prove_to_match_throughout_are_kept_whole_unevaluated(
        monkeypatch):
    from quiver.filters import batches_all_match, normalize
    from quiver.ipc import scan as reader_module
    from quiver.ipc.statistics import decode_statistics, footer_value

    nan, null = float("nan"), None
    table = pa.table({
        "a": pa.array(np.arange(40)),
        "f": pa.array([1.0] * 10 + [nan] + [1.0] * 9 + [2.0] * 20),
        "n": pa.array([null] * 10 + [1] * 30, pa.int64()),
        "s": pa.array(["x" * 100] * 20 + ["abc"] * 20),  # long values: inexact bounds
    })
    data = _write_stats(table, 10)
    reader = ipc.open_file(data)
    schema = reader.schema
    stats = decode_statistics(footer_value(reader._footer.custom_metadata))
    cases = {
        (("a", ">=", 10),): [False, True, True, True],
        (("a", ">", 9), ("a", "<", 30)): [False, True, True, False],
        (("a", "<=", 9),): [True, False, False, False],
        (("f", ">=", 1.0),): [True, False, True, True],  # NaN fails the comparison
        (("f", "==", 2.0),): [False, False, True, True],
        (("n", "is null", None),): [True, False, False, False],
        (("n", "is not null", None),): [False, True, True, True],
        (("n", ">=", 0),): [False, True, True, True],  # nulls fail the comparison
        (("s", "==", "abc"),): [False, False, True, True],
        (("s", ">=", "a"),): [False, False, True, True],  # only exact bounds prove
        (("a", "!=", 100),): [False] * 4,  # (not proven: read and evaluated)
    }
    for predicates, expected in cases.items():
        dnf = normalize(list(predicates))
        assert batches_all_match(dnf, stats, schema).tolist() == expected, predicates
    either = normalize([[("a", "<", 10)], [("a", ">=", 30)]])
    assert batches_all_match(either, stats, schema).tolist() == [True, False, False, True]
    # proven batches are the file's batches as read; only the others are evaluated
    evaluated, original = [], reader_module.filter_batch

    def counting(batch, dnf):
        evaluated.append(batch.num_rows)
        return original(batch, dnf)

    monkeypatch.setattr(reader_module, "filter_batch", counting)
    filtered = ipc.open_file(data, filters=[("a", ">=", 15)])
    got = list(filtered)
    assert [b.column(0).to_pylist() for b in got] == [list(range(15, 20)),
                                                      list(range(20, 30)),
                                                      list(range(30, 40))]
    assert evaluated == [10] and filtered.batches_skipped == 1


@pytest.mark.parametrize("row_count, null_count, filters, expected", [
    (1, 1, [("a", "is null", None)], [None]),  # "every row is null", by a wrong count
    (5, 0, [("a", "is not null", None)], [0, 2, 3, 4]),  # "no nulls", wrongly
    (5, 0, [("a", ">=", 0)], [0, 2, 3, 4]),
])
def test_a_batch_whose_stated_counts_disagree_with_it_is_filtered_not_kept_whole(
        row_count, null_count, filters, expected):
    # bounds cannot be checked without a pass over the values, counts can: a batch is
    # kept whole only when its row count and null counts are the ones stated
    names = pa.array(["ARROW:row_count:exact", "ARROW:null_count:exact",
                      "ARROW:min_value:exact", "ARROW:max_value:exact"])
    values = pa.UnionArray.from_dense(
        pa.array([0, 0, 1, 1], pa.int8()), pa.array([0, 1, 0, 1], pa.int32()),
        [pa.array([row_count, null_count], pa.int64()), pa.array([0, 4], pa.int64())])
    stats = pa.MapArray.from_arrays(
        pa.array([0, 1, 4], pa.int32()),
        pa.DictionaryArray.from_arrays(pa.array([0, 1, 2, 3], pa.int32()), names), values)
    sink = pa.BufferOutputStream()
    batch = pa.record_batch({"column": pa.array([None, 0], pa.int32()), "statistics": stats})
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    value = base64.b64encode(sink.getvalue().to_pybytes()).decode()
    table = pa.table({"a": pa.array([0, None, 2, 3, 4], pa.int64())})
    data = _with_footer_value(table, value)
    assert ipc.read_table(data, filters=filters).column("a").to_pylist() == expected


def test_int64_past_2_53_against_a_float_raises_as_pyarrow_even_when_bounds_prove_a_match():
    table = pa.table({"a": pa.array([1, 2**60], pa.int64())})
    with pytest.raises(pa.ArrowInvalid):
        table.filter(pc.field("a") > 0.5)
    with pytest.raises(E.ArrowInvalid, match="beyond 2\\*\\*53"):
        ipc.read_table(_write_stats(table, 2), filters=[("a", ">", 0.5)])


def test_a_dictionary_of_floats_is_a_float_column_for_nan_in_both_decisions():
    from quiver.filters import Predicate, batches_all_match, batches_may_match
    from quiver.ipc.statistics import decode_statistics

    stats = decode_statistics(_foreign_statistics([(0.0, 4.0)], rows=True, nulls=True,
                                                  value_type=pa.float64()))
    stats.null_counts[0][:] = 0  # (no nulls: only NaN could keep a row out)
    table = pa.table({"v": pa.array([1.0]).dictionary_encode()})
    schema = ipc.open_file(_write_stats(table, 1)).schema
    above = [[Predicate(("v",), ">", 100.0)]]
    assert batches_may_match(above, stats, schema, nan_is_largest=True).tolist() == [True]
    # NaN fails a comparison: an unstated NaN count proves nothing
    assert batches_all_match([[Predicate(("v",), ">=", 0.0)]], stats, schema).tolist() == [
        False]


# -- dictionaries of floats: the NaN count is the slots', not the dictionary's -------------

def _dictionary_floats() -> pa.Table:
    nan = float("nan")
    # batch 0 selects NaN twice (one more index to it is null), batch 1 never, though its
    # dictionary (the same one) holds NaN
    indices = pa.array([0, 1, None, 1, 0, 0, 2, 2], pa.int32())
    column = pa.DictionaryArray.from_arrays(indices, pa.array([1.0, nan, 3.0]))
    return pa.table({"x": column})


def test_a_float_dictionary_counts_the_nans_its_valid_slots_select():
    from quiver.interop import import_array
    from quiver.ipc.statistics.compute import column_statistics

    column = _dictionary_floats().column("x").chunk(0)
    counts = [column_statistics(import_array(column.slice(k, 4))).nan_count for k in (0, 4)]
    assert counts == [2, 0]
    reader = ipc.open_file(_write_stats(_dictionary_floats(), 4))
    assert [b.columns[0].nan_count for b in reader.statistics] == [2, 0]


@pytest.mark.parametrize("filters", [
    [("x", "in", [float("nan")])], [("x", "in", [float("nan"), 3.0])], [("x", "!=", 1.0)],
    [("x", "not in", [1.0])], [("x", "<", 5.0)], [("x", ">=", 1.0)], [("x", "==", 3.0)]])
def test_filters_on_a_float_dictionary_with_nan_equal_pyarrows(filters):
    table = _dictionary_floats()
    expected = table.filter(pq.filters_to_expression(filters))
    got = ipc.read_table(_write_stats(table, 4), filters=filters)
    assert _rows(pa.table(got)) == _rows(expected)


def test_a_float_dictionarys_nan_count_of_0_from_an_older_writer_is_not_trusted(monkeypatch):
    # quiver wrote 0 for these columns without counting (until 2026-11-29): a filter that
    # trusts it loses the NaN rows, in pyarrow's order and in Spark's
    from quiver.filters import batches_may_match, normalize
    from quiver.ipc.statistics import compute

    monkeypatch.setattr(compute, "_selected_nans", lambda arr, name: 0)
    data = _write_stats(_dictionary_floats(), 4)
    monkeypatch.undo()
    reader = ipc.open_file(data)
    assert [b.columns[0].nan_count for b in reader.statistics] == [0, 0]  # as it was
    nan = float("nan")
    got = ipc.read_table(data, filters=[("x", "in", [nan])])
    assert _rows(pa.table(got)) == [{"x": "NaN"}, {"x": "NaN"}]
    from quiver.ipc.statistics.decode import statistics_for_skipping

    stats, _ = statistics_for_skipping(reader.footer.custom_metadata[STATISTICS_KEY],
                                       reader.schema, 2)
    equal_nan = normalize([("x", "==", nan)])
    assert batches_may_match(equal_nan, stats, reader.schema,
                             nan_is_largest=True).tolist() == [True, True]


def test_an_unstated_nan_count_keeps_float_batches_for_not_equal_in_pyarrows_order():
    # another writer's statistics (no NaN count) of a constant column: NaN != 1.0 holds,
    # so the batch may hold rows for != even though its bounds say 1.0 throughout
    from quiver.filters import Predicate, batches_may_match
    from quiver.ipc.statistics import decode_statistics

    stats = decode_statistics(_foreign_statistics([(1.0, 1.0)], rows=True, nulls=True,
                                                  value_type=pa.float64()))
    schema = ipc.open_file(_write_stats(pa.table({"v": [1.0]}), 1)).schema
    for p in (Predicate(("v",), "!=", 1.0), Predicate(("v",), "in", (float("nan"),))):
        assert batches_may_match([[p]], stats, schema).tolist() == [True]
