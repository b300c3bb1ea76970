"""Tests for quiver.ipc.statistics.compute: per-batch statistics, equal to pyarrow.compute's."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import quiver.ipc as ipc
from quiver import errors as E
from quiver.interop import import_batch
from quiver.ipc.statistics import PREFIX_BYTES, batch_statistics
from tests.unit._statistics_helpers import COLUMNS


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


@pytest.mark.parametrize("kind", ["string", "binary", "large_string"])
def test_string_bounds_in_chunks_equal_those_in_one_piece(kind, monkeypatch):
    from quiver.ipc.statistics import compute as C

    rng = np.random.default_rng(3)
    long = "p" * (PREFIX_BYTES + 3)
    pool = ["", "a", "ab", "zz", long, long + "x", "p" * PREFIX_BYTES, "é" * 40, "\U0010ffff" * 20]
    ties = [[long, "p" * PREFIX_BYTES], ["p" * PREFIX_BYTES, None, long],
            [long + "x", long], [None, "\U0010ffff" * 20, "zz"],
            [long, "p" * (PREFIX_BYTES - 1) + "q"]]  # a rounded-up max equal to an exact one
    for trial in range(60 + len(ties)):
        n = int(rng.integers(1, 40))
        values = ties[trial - 60] if trial >= 60 else [
            None if rng.random() < 0.2 else pool[int(rng.integers(len(pool)))]
            for _ in range(n)]
        if kind == "binary":
            top = b"\xff" * (PREFIX_BYTES + 1)
            values = [v if v is None else (top if v == "zz" and trial % 3 == 0 else v.encode())
                      for v in values]
        column = pa.array(values, getattr(pa, kind)())
        arr = import_batch(pa.record_batch({"c": column})).column(0)
        found = {}
        for chunk in (1 << 20, 1, 3, 7):
            monkeypatch.setattr(C, "BINARY_CHUNK", chunk)
            found[chunk] = C.column_raw(arr)
        assert found[1] == found[3] == found[7] == found[1 << 20], values
