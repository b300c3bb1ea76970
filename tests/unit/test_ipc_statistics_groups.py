"""Tests for quiver.ipc.statistics.groups: the statistics of small batches, computed a
group at a time, are those computed batch by batch (column_raw), for every grouped type."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quiver import errors as E
from quiver.interop import import_array, import_batch
from quiver.ipc.statistics import PREFIX_BYTES, StatisticsCollector, column_raw
from quiver.ipc.statistics import groups as G


def _same(a, b) -> bool:
    """Raw statistics equal: counts, exactness and bounds (numbers by value, and floats
    by sign too: a group gives Python numbers where one batch gives numpy's, and both
    encode alike)."""
    return a[:2] == b[:2] and a[4:] == b[4:] and all(
        (x is None and y is None) or (x is not None and y is not None and x == y and (
            not isinstance(x, (float, np.floating))
            or math.copysign(1, x) == math.copysign(1, y)))
        for x, y in zip(a[2:4], b[2:4]))


def _collected(batches: list[pa.RecordBatch]) -> list[list]:
    quiver_batches = [import_batch(b) for b in batches]
    collector = StatisticsCollector(quiver_batches[0].schema)
    for b in quiver_batches:
        collector.add(b.columns, b.num_rows)
    return collector.raws


def _one_by_one(batches: list[pa.RecordBatch]) -> list[list]:
    quiver_batches = [import_batch(b) for b in batches]
    return [[column_raw(b.column(c)) for b in quiver_batches]
            for c in range(quiver_batches[0].num_columns)]


def _check(batches: list[pa.RecordBatch]) -> None:
    got, expected = _collected(batches), _one_by_one(batches)
    for c, (g, e) in enumerate(zip(got, expected)):
        assert len(g) == len(e) == len(batches)
        for k, (x, y) in enumerate(zip(g, e)):
            assert _same(x, y), (batches[0].schema.field(c), k, x, y)


_WORDS = [b"", b"a", b"a\x00", b"a\x00\x00", b"ab", b"b", b"\xff", b"\xff\xff", b"\x00",
          b"x" * 8, b"x" * 9, b"x" * 16, b"x" * 63, b"x" * 64, b"x" * 65, b"x" * 64 + b"a",
          b"x" * 64 + b"b", b"x" * 70, "\u00e9t\u00e9".encode(), b"\xf4\x8f\xbf\xbf" * 17,
          b"x" * 72, b"x" * 73, b"x" * 100 + b"a", b"x" * 200, b"\xff" * 90, b"x" * 71 + b"\xff"]


@st.composite
def _tables(draw):
    n = draw(st.integers(0, 60))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    nulls = rng.random(n) < draw(st.sampled_from([0.0, 0.3, 1.0]))
    floats = rng.choice([0.0, -0.0, 1.5, -2.5, np.inf, -np.inf, np.nan, 3e300], n)
    words = [_WORDS[i] for i in rng.integers(0, len(_WORDS), n)]
    texts = [w.decode("utf-8", errors="replace") for w in words]
    columns = {
        "i8": pa.array(rng.integers(-128, 128, n).astype(np.int8), mask=nulls),
        "u64": pa.array(rng.integers(0, 2**63, n, dtype=np.uint64) * 2, mask=nulls),
        "i64": pa.array(rng.integers(-(2**62), 2**62, n), mask=nulls),
        "f64": pa.array(floats, mask=nulls),
        "f32": pa.array(np.clip(floats, -1e30, 1e30).astype(np.float32), mask=nulls),
        "ts": pa.array(rng.integers(-(2**40), 2**40, n), pa.timestamp("us", "UTC"),
                       mask=nulls),
        "d": pa.array(rng.integers(-1000, 1000, n).astype(np.int32), pa.date32(),
                      mask=nulls),
        "b": pa.array(rng.random(n) < 0.5, mask=nulls),
        "bin": pa.array(words, pa.binary(), mask=nulls),
        "lbin": pa.array(words, pa.large_binary(), mask=nulls),
        "s": pa.array(texts, pa.string(), mask=nulls),
        "ls": pa.array(texts, pa.large_string(), mask=nulls),
        "dec": pa.array([None] * n, pa.decimal128(5, 1)),  # computed batch by batch
    }
    table = pa.table(columns)
    lo = draw(st.integers(0, n))
    return table.slice(lo, draw(st.integers(0, n - lo)))  # sliced: offsets not 0


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_tables(), st.lists(st.integers(0, 20), min_size=1, max_size=6))
def test_grouped_statistics_equal_batch_by_batch(table, cuts):
    batches, at = [], 0
    for size in [*cuts, table.num_rows]:
        size = min(size, table.num_rows - at)
        batches.append(table.slice(at, size).combine_chunks().to_batches()[0]
                       if size else pa.record_batch(table.slice(0, 0).to_pydict(),
                                                    schema=table.schema))
        at += size
    _check(batches)


def test_groups_and_lone_batches_interleave_in_order(monkeypatch):
    monkeypatch.setattr("quiver.ipc.statistics.encode.GROUP_ROWS", 50)
    monkeypatch.setattr("quiver.ipc.statistics.encode.ALONE_ROWS", 40)
    rng = np.random.default_rng(3)
    sizes = [3, 45, 0, 17, 22, 30, 1, 60, 2]
    schema = pa.schema([("a", pa.int64()), ("s", pa.string()), ("dec", pa.decimal128(5, 1))])
    batches = []
    for n in sizes:
        values = rng.integers(-50, 50, n)
        batches.append(pa.record_batch({
            "a": pa.array(values, mask=rng.random(n) < 0.2),
            "s": pa.array([f"v{v:+03d}" * int(1 + abs(v) % 12) for v in values]),
            "dec": pa.array([None] * n, pa.decimal128(5, 1)),
        }, schema=schema))
    _check(batches)


def test_a_column_of_bad_offsets_is_refused_before_it_is_kept():
    good = import_array(pa.array(["a", "bb"]))
    offsets = np.array([0, 9, 3], np.int32)  # decreasing, and past the 3 data bytes
    from quiver.array import make_array

    data = np.frombuffer(b"abb", np.uint8)
    bad = make_array(good.type, 2, [None, offsets.view(np.uint8), data], (), 0)
    group = G.group_for(good.type)
    with pytest.raises(E.ArrowInvalid, match="offsets that do not decrease"):
        G.keep_column(group, bad)
    collector = StatisticsCollector(import_batch(pa.record_batch({"s": ["x"]})).schema)
    with pytest.raises(E.ArrowInvalid):
        collector.add([bad], 2)
    assert len(collector) == 0 and collector.raws == [[]]


def test_long_ties_and_rounding_match_over_many_batches():
    base = b"p" * PREFIX_BYTES
    values = [base + b"b", base + b"a", base, b"p" * 10, base + b"\xff" * 3, b"q"]
    rotations = [(values[i:] + values[:i])[: len(values) - i % 3] for i in range(len(values))]
    batches = [pa.record_batch({"bin": pa.array(rows, pa.binary()),
                                "s": pa.array([v.decode("latin-1") for v in rows])})
               for rows in rotations]
    _check(batches)


def test_a_boolean_column_whose_bitmap_is_short_is_refused():
    from quiver.array import make_array
    from quiver.types import bool_

    short = make_array(bool_(), 20, [None, np.zeros(2, np.uint8)], (), 0)  # 16 bits
    with pytest.raises(E.ArrowInvalid, match="at least 3 bytes, found 2"):
        G.keep_column(G.group_for(short.type), short)
    fine = make_array(bool_(), 16, [None, np.array([0xFF, 0x01], np.uint8)], (), 0)
    kept = [G.keep_column(G.group_for(fine.type), fine.slice(k, 5))[0]
            for k in (0, 3, 6, 11)]
    assert [r[2:4] for r in G._bool_group(kept)] == [(True, True), (True, True),
                                                     (False, True), (False, False)]


# -- found in review: what a group keeps, and batches whose null count disagrees ---------


def test_a_buffer_reused_after_write_batch_does_not_change_the_statistics():
    import quiver.ipc as ipc

    buf = np.zeros(100, np.int64)
    schema = pa.schema([("a", pa.int64())])
    sink = ipc.BufferOutputStream()
    with ipc.new_file(sink, schema, statistics=True) as writer:
        for k in range(3):  # the caller refills one buffer, which write_batch allows
            buf[:] = np.arange(100) + 1000 * k
            writer.write_batch(pa.record_batch([pa.array(buf)], schema=schema))
    data = sink.getvalue()
    stats = ipc.open_file(data).statistics
    assert [(s.columns[0].min, s.columns[0].max) for s in stats] == [
        (0, 99), (1000, 1099), (2000, 2099)]
    reader = ipc.open_file(data, filters=[("a", "==", 5)])
    assert reader.read_all().num_rows == 1  # (the bytes are the last refill's: 2005)


def _strings_with(null_count: int, bitmap: int) -> pa.Array:
    """Two strings "y", "z" whose declared null count and validity bitmap disagree."""
    return pa.Array.from_buffers(pa.string(), 2, [
        pa.py_buffer(bytes([bitmap])), pa.py_buffer(np.array([0, 1, 2], np.int32)),
        pa.py_buffer(b"yz")], null_count=null_count)


@pytest.mark.parametrize("null_count, bitmap", [(2, 0b11), (1, 0b00), (2, 0b01)])
def test_null_counts_that_disagree_with_the_bitmap_stay_in_their_batch(null_count, bitmap):
    odd = _strings_with(null_count, bitmap)
    batches = [pa.record_batch({"s": pa.array(["m", "n"])}),
               pa.record_batch({"s": odd}),
               pa.record_batch({"s": pa.array(["a", "b"])})]
    _check(batches)  # each batch's statistics as batch by batch
    raws = _collected(batches)[0]
    assert (raws[0][2:4], raws[2][2:4]) == ((b"m", b"n"), (b"a", b"b"))


def test_strings_keep_a_bounded_prefix_of_each_value():
    blob = import_array(pa.array([b"a" * 1_000_000, b"b" * 900_000, b"c"]))
    kept, size = G.keep_column(G.group_for(blob.type), blob)
    assert size < 3 * (G.KEPT_BYTES + 24)  # not the 1.9 MB of the values
    assert G._binary_group([kept], is_text=False) == [column_raw(blob)]


def test_odd_offsets_buffers_are_quivers_error():
    from quiver.array import make_array

    good = import_array(pa.array(["ab", "c"]))
    data = np.frombuffer(b"abc", np.uint8)
    for offsets in (None, np.zeros(5, np.uint8), np.array([0, 2], np.int32).view(np.uint8)):
        bad = make_array(good.type, 2, [None, offsets, data], (), 0)
        with pytest.raises(E.ArrowInvalid, match="offsets"):
            G.keep_column(G.group_for(good.type), bad)
        with pytest.raises(E.ArrowInvalid, match="offsets"):
            column_raw(bad)
