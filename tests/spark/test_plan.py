"""Planning and reading splits without a session: grouping, packing, stream preludes, and
batches handed to pyarrow without a copy."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed (pip install -e '.[spark]')")

from quiver.spark import plan as P
from quiver.spark import read as R
from quiver.spark.paths import list_files
from quiver.spark.policy import spark_arrow_schema

from .helpers import write_file


def _job(layout: P.Layout) -> P.ReadJob:
    return P.ReadJob(schema=spark_arrow_schema(layout.schema), partition_fields=(), columns=None)


def test_read_split_hands_pyarrow_the_mapped_bytes(tmp_path):
    table = pa.table({"a": pa.array(np.arange(1000, dtype=np.int64)), "s": ["x"] * 1000})
    path = write_file(tmp_path / "z.arrow", table, batch_rows=250)
    layout = P.read_layout(list_files([path])[0])
    (split,) = P.splits_of(layout, 1 << 30)
    batches = list(R.read_split(split, _job(layout)))
    assert [b.num_rows for b in batches] == [250] * 4
    quiver_values = batches[1].column(0).buffers[1]
    exported = pa.record_batch(batches[1])
    assert exported.column(0).buffers()[1].address == quiver_values.__array_interface__["data"][0]
    assert exported.column(0).to_pylist() == list(range(250, 500))


def test_file_blocks_group_by_size_and_keep_order(tmp_path):
    table = pa.table({"a": pa.array(np.arange(10_000, dtype=np.int64))})
    path = write_file(tmp_path / "g.arrow", table, batch_rows=1000)
    layout = P.read_layout(list_files([path])[0])
    assert len(layout.batches) == 10
    one_batch = layout.batches[0][1] - layout.batches[0][0]
    splits = P.splits_of(layout, 3 * one_batch)
    assert [(s.start, s.stop) for s in splits] == [(0, 3), (3, 6), (6, 9), (9, 10)]
    got = [v for s in splits for b in R.read_split(s, _job(layout))
           for v in b.column(0).to_pylist()]
    assert got == list(range(10_000))


def test_stream_splits_carry_the_dictionaries_before_them(tmp_path):
    dictionary = pa.array(["a", "b", "c", "a"]).dictionary_encode()
    table = pa.table({"d": dictionary, "i": pa.array([1, 2, 3, 4])})
    path = write_file(tmp_path / "d.arrows", table, stream=True, batch_rows=1)
    layout = P.read_layout(list_files([path])[0])
    assert len(layout.batches) == 4 and len(layout.dictionaries) >= 1
    splits = P.splits_of(layout, 1)
    assert [(s.start, s.stop) for s in splits] == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert all(s.prelude[0] == layout.schema_range for s in splits)
    assert all(len(s.prelude) == 1 + len(layout.dictionaries) for s in splits)
    rows = [r for s in splits for b in R.read_split(s, _job(layout)) for r in b.to_pylist()]
    assert rows == [{"d": "a", "i": 1}, {"d": "b", "i": 2}, {"d": "c", "i": 3},
                    {"d": "a", "i": 4}]


def test_packing_follows_sparks_rule():
    splits = [P.Split("f", "file", i, i + 1, (), 10) for i in range(10)]
    assert [len(p) for p in P.pack(splits, 35, 5)] == [2, 2, 2, 2, 2]
    assert [len(p) for p in P.pack(splits, 1, 0)] == [1] * 10  # never an empty partition
    assert P.max_split_bytes(1000, 2, 128, 4, 2) == 128
    assert P.max_split_bytes(100, 1, 128, 4, 4) == 26  # spread over the cores


def test_merge_types_widen_and_refuse():
    from quiver import errors as E
    from quiver import types as t

    assert P.merge_types(t.int32(), t.int64(), "a") == t.int64()
    assert P.merge_types(t.int16(), t.float32(), "a") == t.float64()
    assert P.merge_types(t.decimal128(5, 2), t.decimal128(9, 2), "a") == t.decimal128(9, 2)
    with pytest.raises(E.ArrowInvalid, match="field a"):
        P.merge_types(t.int64(), t.float64(), "a")  # not exact above 2**53
    with pytest.raises(E.ArrowInvalid, match=r"field s\.x"):
        P.merge_types(t.struct([("x", t.string())]), t.struct([("x", t.int8())]), "s")


def test_a_file_whose_statistics_cannot_be_used_is_planned_whole(tmp_path):
    from quiver.errors import StatisticsWarning
    from quiver.ipc.statistics import STATISTICS_KEY

    table = pa.table({"a": pa.array(np.arange(1000, dtype=np.int64))})
    path = str(tmp_path / "d.arrow")  # pyarrow's writer keeps the value it is given
    with pa.ipc.new_file(path, table.schema, metadata={STATISTICS_KEY: "#damaged#"}) as w:
        for batch in table.to_batches(max_chunksize=100):
            w.write_batch(batch)
    layout = P.read_layout(list_files([path])[0])  # (statistics decode when first used)
    with pytest.warns(StatisticsWarning, match=r"d\.arrow.*base64"):
        assert P.layout_statistics(layout) is None and len(layout.batches) == 10
    got = [v for s in P.splits_of(layout, 1 << 30) for b in R.read_split(s, _job(layout))
           for v in b.column(0).to_pylist()]
    assert got == list(range(1000))
