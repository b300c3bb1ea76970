"""Tests for quiver.batch: RecordBatch, ChunkedArray and Table against pyarrow's behaviour."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import quiver as qv
import quiver.ipc as ipc
import quiver.types as t
from quiver.array import make_array
from quiver.batch import ChunkedArray, RecordBatch, Table, chunked_array, record_batch, table
from quiver.errors import (
    ArrowError,
    ArrowIndexError,
    ArrowInvalid,
    ArrowInvalidArgument,
    ArrowKeyError,
    ArrowTypeError,
)
from tests.unit._helpers import _q, from_pa, i32, rebuild

PA_DATA = {
    "n": pa.array([1, None, 3, 4, 5], pa.int64()),
    "s": pa.array(["a", "b", None, "dé", ""], pa.string()),
    "l": pa.array([[1], None, [], [2, 3], [None]], pa.list_(pa.int32())),
    "st": pa.array([{"x": 1.5}, None, {"x": None}, {"x": 2.0}, {"x": -1.0}]),
}


def _pa_batch() -> pa.RecordBatch:
    return pa.record_batch(PA_DATA)


def _batch() -> RecordBatch:
    return RecordBatch.from_arrays([from_pa(a) for a in PA_DATA.values()], names=list(PA_DATA))


# --------------------------------------------------------------------------------------
# RecordBatch construction and attributes


def test_from_arrays_builds_schema_and_attributes() -> None:
    batch = _batch()
    assert batch.num_rows == len(batch) == 5
    assert batch.num_columns == 4
    assert batch.shape == (5, 4)
    assert batch.column_names == ["n", "s", "l", "st"]
    assert batch.schema.field("l").type == t.list_(t.int32())
    assert batch.field(1).name == "s"
    assert batch.field("st").type == t.struct([t.field("x", t.float64())])


def test_to_pylist_and_to_pydict_match_pyarrow() -> None:
    batch, expected = _batch(), _pa_batch()
    assert batch.to_pylist() == expected.to_pylist()
    assert batch.to_pydict() == expected.to_pydict()


def test_column_by_index_name_and_negative_index() -> None:
    batch = _batch()
    assert batch.column(0).to_pylist() == [1, None, 3, 4, 5]
    assert batch.column("s").to_pylist() == PA_DATA["s"].to_pylist()
    assert batch.column(-1) is batch.columns[3]
    assert batch["n"] is batch.column(0)
    assert batch[1] is batch.column(1)


def test_column_lookup_errors_are_quiver_errors() -> None:
    batch = _batch()
    with pytest.raises(ArrowKeyError, match="expected one column named 'zz', found none"):
        batch.column("zz")
    with pytest.raises(ArrowIndexError, match="expected a column index below 4, found 4"):
        batch.column(4)
    with pytest.raises(ArrowTypeError):
        batch.column(1.5)  # type: ignore[arg-type]


def test_duplicate_column_names_are_allowed_but_ambiguous_by_name() -> None:
    a = from_pa(pa.array([1, 2]))
    batch = RecordBatch.from_arrays([a, a], names=["x", "x"])
    assert batch.column_names == ["x", "x"]
    with pytest.raises(ArrowKeyError, match="found 2 columns with that name"):
        batch.column("x")
    assert batch.to_pylist() == pa.record_batch([pa.array([1, 2])] * 2, ["x", "x"]).to_pylist()


def test_constructor_rejects_columns_of_different_lengths_naming_the_column() -> None:
    a = from_pa(pa.array([1, 2, 3]))
    b = from_pa(pa.array(["x", "y"]))
    schema = t.schema([("a", t.int64()), ("b", t.string())])
    with pytest.raises(ArrowInvalidArgument, match=r"column 1 \('b'\) of length 3, found 2"):
        RecordBatch(schema, [a, b])


def test_constructor_rejects_type_mismatch_naming_the_column() -> None:
    a = from_pa(pa.array([1, 2, 3]))
    schema = t.schema([("a", t.int32())])
    with pytest.raises(ArrowInvalidArgument, match=r"column 0 \('a'\) of type int32, found int64"):
        RecordBatch(schema, [a])


def test_constructor_rejects_wrong_column_count_and_non_arrays() -> None:
    schema = t.schema([("a", t.int64())])
    with pytest.raises(ArrowInvalidArgument, match="expected 1 columns for the schema, found 0"):
        RecordBatch(schema, [])
    with pytest.raises(ArrowTypeError, match="as a quiver Array, found list"):
        RecordBatch(schema, [[1, 2]])  # type: ignore[list-item]


def test_from_arrays_needs_names_or_schema() -> None:
    a = from_pa(pa.array([1]))
    with pytest.raises(ArrowInvalidArgument, match="names or schema"):
        RecordBatch.from_arrays([a])
    with pytest.raises(ArrowInvalidArgument, match="expected 1 names"):
        RecordBatch.from_arrays([a], names=["a", "b"])


def test_from_arrays_with_schema_checks_types() -> None:
    a = from_pa(pa.array([1]))
    good = t.schema([t.field("a", t.int64(), nullable=False)], metadata={"k": "v"})
    batch = RecordBatch.from_arrays([a], schema=good)
    assert batch.schema == good
    with pytest.raises(ArrowTypeError, match="column 'a' of type string, found int64"):
        RecordBatch.from_arrays([a], schema=t.schema([("a", t.string())]))


def test_batch_without_columns_keeps_its_row_count() -> None:
    batch = RecordBatch(t.schema([]), [], num_rows=3)
    assert batch.num_rows == 3
    assert batch.to_pylist() == [{}, {}, {}]
    assert batch.slice(1).num_rows == 2


# --------------------------------------------------------------------------------------
# zero-copy transformations


def test_slice_is_zero_copy_and_matches_pyarrow() -> None:
    batch, expected = _batch(), _pa_batch()
    for offset, length in [(0, 5), (1, 2), (3, None), (4, 10), (5, 1), (2, 0)]:
        sliced = batch.slice(offset, length)
        assert sliced.to_pylist() == expected.slice(offset, length).to_pylist()
        for col, orig in zip(sliced.columns, batch.columns):
            assert all(
                x is y for x, y in zip(col.buffers, orig.buffers)
            ), "slicing must share the buffers"
    assert batch[1:3].to_pylist() == expected[1:3].to_pylist()


def test_slice_rejects_negative_offset() -> None:
    with pytest.raises(ArrowInvalidArgument, match="non-negative slice offset"):
        _batch().slice(-1)


def test_select_by_names_and_indices() -> None:
    batch, expected = _batch(), _pa_batch()
    assert batch.select(["s", "n"]).to_pylist() == expected.select(["s", "n"]).to_pylist()
    assert batch.select([3, 0]).column_names == ["st", "n"]
    with pytest.raises(ArrowKeyError):
        batch.select(["nope"])


def test_rename_add_append_remove_columns() -> None:
    batch = _batch()
    renamed = batch.rename_columns(["a", "b", "c", "d"])
    assert renamed.column_names == ["a", "b", "c", "d"]
    assert batch.rename_columns({"n": "num"}).column_names == ["num", "s", "l", "st"]
    with pytest.raises(ArrowInvalidArgument, match="expected 4 new column names, found 1"):
        batch.rename_columns(["x"])
    extra = from_pa(pa.array([True, False, True, None, False]))
    added = batch.add_column(1, "flag", extra)
    assert added.column_names == ["n", "flag", "s", "l", "st"]
    appended = batch.append_column(t.field("flag", t.bool_(), nullable=False), extra)
    assert appended.schema.field("flag").nullable is False
    assert appended.remove_column(4).equals(batch)
    with pytest.raises(ArrowInvalidArgument, match="length 5, found 2"):
        batch.append_column("short", extra.slice(0, 2))


def test_schema_metadata_replacement() -> None:
    batch = _batch()
    tagged = batch.replace_schema_metadata({"origin": "test"})
    assert tagged.schema.metadata.get("origin") == b"test"
    assert tagged.equals(batch)
    assert not tagged.equals(batch, check_metadata=True)
    assert tagged.with_schema_metadata(None).equals(batch, check_metadata=True)


def test_nbytes_counts_each_buffer_once() -> None:
    a = from_pa(pa.array([1, 2, 3], pa.int64()))
    batch = RecordBatch.from_arrays([a, a], names=["x", "y"])
    assert batch.nbytes == a.buffers[1].nbytes
    assert _batch().nbytes > 0


# --------------------------------------------------------------------------------------
# equality and validation


def test_batches_equal_by_logical_value() -> None:
    batch = _batch()
    other = RecordBatch.from_arrays(
        [from_pa(pa.concat_arrays([a])) for a in PA_DATA.values()], names=list(PA_DATA)
    )
    assert batch.equals(other)
    assert batch == other
    assert batch.slice(1, 2).equals(other.slice(1, 2))
    assert not batch.slice(0, 2).equals(other.slice(1, 2))
    assert not batch.equals(batch.rename_columns(["a", "b", "c", "d"]))
    assert not batch.equals("batch")


def test_validate_reports_the_column_name_as_field_path() -> None:
    col = make_array(t.string(), 2, [None, i32(0, 2, 1), np.frombuffer(b"ab", np.uint8)])
    batch = RecordBatch.from_arrays([from_pa(pa.array([1, 2])), col], names=["ok", "name"])
    batch.validate()
    with pytest.raises(ArrowInvalid) as info:
        batch.validate(full=True)
    assert info.value.field_path == "name"
    assert "expected offsets[2] >= 2, found 1" in str(info.value)
    _batch().validate(full=True)


def test_validate_finds_nested_paths() -> None:
    batch = _batch()
    lst = batch.column("l")
    bad = rebuild(lst, buffers=(lst.buffers[0], i32(0, 1, 1, 0, 3, 4)))
    broken = RecordBatch(batch.schema, [*batch.columns[:2], bad, batch.columns[3]])
    with pytest.raises(ArrowInvalid) as info:
        broken.validate(full=True)
    assert info.value.field_path == "l"


def test_repr_shows_schema_and_values_like_pyarrow() -> None:
    text = repr(_batch())
    assert text.splitlines()[:3] == ["quiver.RecordBatch", "n: int64", "s: string"]
    assert "----" in text
    assert 'n: [1,null,3,4,5]' in text
    assert 's: ["a","b",null,"dé",""]' in text


# --------------------------------------------------------------------------------------
# ChunkedArray


def _chunked(*parts: list, pt: pa.DataType | None = None) -> tuple[ChunkedArray, pa.ChunkedArray]:
    pt = pa.int64() if pt is None else pt
    pas = [pa.array(p, pt) for p in parts]
    return ChunkedArray([from_pa(p) for p in pas]), pa.chunked_array(pas, pt)


def test_chunked_array_basics_match_pyarrow() -> None:
    ca, expected = _chunked([1, 2], [], [3, None, 5])
    assert len(ca) == ca.length() == 5
    assert ca.num_chunks == 3
    assert ca.type == t.int64()
    assert ca.null_count == 1
    assert ca.to_pylist() == expected.to_pylist()
    assert ca.chunk(2).to_pylist() == [3, None, 5]
    assert ca[3] is None and ca[-1] == 5 and ca[0] == 1
    with pytest.raises(ArrowIndexError):
        ca[5]
    for offset, length in [(0, 5), (1, 3), (2, 1), (4, None), (5, 0)]:
        assert ca.slice(offset, length).to_pylist() == expected.slice(offset, length).to_pylist()


def test_chunked_array_equality_ignores_chunking() -> None:
    a, _ = _chunked([1, 2], [3, None, 5])
    b, _ = _chunked([1], [2, 3, None], [], [5])
    c, _ = _chunked([1], [2, 3, None], [], [6])
    assert a.equals(b)
    assert not a.equals(c)
    assert not a.equals(a.slice(1))
    assert a.slice(1, 3).equals(b.slice(1, 3))


def test_chunked_array_type_checks() -> None:
    with pytest.raises(ArrowInvalidArgument, match="chunk 1 of type int64, found string"):
        ChunkedArray([from_pa(pa.array([1])), from_pa(pa.array(["x"]))])
    with pytest.raises(ArrowInvalidArgument, match="expected a type"):
        ChunkedArray([])
    empty = ChunkedArray([], t.int8())
    assert len(empty) == 0 and empty.to_pylist() == []


def test_chunked_array_combine_chunks() -> None:
    ca, expected = _chunked(["a", None], ["bc"], pt=pa.string())
    combined = ca.combine_chunks()
    assert combined.to_pylist() == expected.to_pylist()
    assert chunked_array([from_pa(pa.array([1]))]).to_pylist() == [1]


# --------------------------------------------------------------------------------------
# Table


def _table() -> tuple[Table, pa.Table]:
    pb = _pa_batch()
    parts = [pb.slice(0, 2), pb.slice(2, 0), pb.slice(2, 3)]
    batch = _batch()
    qparts = [batch.slice(0, 2), batch.slice(2, 0), batch.slice(2, 3)]
    return Table.from_batches(qparts), pa.Table.from_batches(parts)


def test_table_attributes_and_conversion_match_pyarrow() -> None:
    tbl, expected = _table()
    assert tbl.num_rows == len(tbl) == 5
    assert tbl.num_columns == 4
    assert tbl.column_names == expected.column_names
    assert tbl.to_pylist() == expected.to_pylist()
    assert tbl.to_pydict() == expected.to_pydict()
    assert len(tbl.to_batches()) == 3
    assert tbl.column("s").num_chunks == 3
    assert tbl.column(0).to_pylist() == expected.column(0).to_pylist()
    assert [c.to_pylist() for c in tbl.columns] == [c.to_pylist() for c in expected.columns]


def test_table_slice_across_batches() -> None:
    tbl, expected = _table()
    for offset, length in [(0, 5), (1, 3), (2, 2), (4, None), (5, 3), (1, 0)]:
        assert tbl.slice(offset, length).to_pylist() == expected.slice(offset, length).to_pylist()
    assert tbl[1:4].num_rows == 3


def test_table_select_rename_and_metadata() -> None:
    tbl, expected = _table()
    assert tbl.select(["st", "n"]).to_pylist() == expected.select(["st", "n"]).to_pylist()
    renamed = tbl.rename_columns({"n": "num"})
    assert renamed.column_names == ["num", "s", "l", "st"]
    assert renamed.column("num").to_pylist() == [1, None, 3, 4, 5]
    tagged = tbl.replace_schema_metadata({"a": "b"})
    assert tagged.schema.metadata.get("a") == b"b"
    assert tagged.equals(tbl) and not tagged.equals(tbl, check_metadata=True)


def test_table_equality_ignores_chunking() -> None:
    tbl, _ = _table()
    single = Table.from_batches([_batch()])
    assert tbl.equals(single)
    assert tbl == single
    assert not tbl.equals(single.slice(1))
    assert not tbl.slice(0, 4).equals(single.slice(1, 4))
    assert tbl.combine_chunks().equals(single)
    assert tbl.combine_chunks().num_batches == 1


def test_table_to_batches_with_max_chunksize() -> None:
    tbl = Table.from_batches([_batch()])
    sizes = [b.num_rows for b in tbl.to_batches(max_chunksize=2)]
    assert sizes == [2, 2, 1]
    with pytest.raises(ArrowInvalidArgument):
        tbl.to_batches(max_chunksize=0)


def test_table_rejects_batches_of_another_schema() -> None:
    batch = _batch()
    other = batch.rename_columns(["a", "b", "c", "d"])
    with pytest.raises(ArrowInvalidArgument, match="expected batch 1 with the table schema"):
        Table.from_batches([batch, other])
    with pytest.raises(ArrowInvalidArgument, match="expected a schema"):
        Table.from_batches([])
    empty = Table.from_batches([], schema=batch.schema)
    assert empty.num_rows == 0 and empty.to_pylist() == []
    assert empty.column("n").num_chunks == 0


def test_table_validate_and_repr() -> None:
    tbl, _ = _table()
    tbl.validate(full=True)
    text = repr(tbl)
    assert text.startswith("quiver.Table\nn: int64")
    assert "n: [[1,null],[],[3,4,5]]" in text


def test_table_and_record_batch_constructors_accept_batches() -> None:
    batch = _batch()
    assert table(batch).num_rows == 5
    assert table([batch, batch]).num_rows == 10
    assert record_batch(batch) is batch
    arrays = [from_pa(a) for a in PA_DATA.values()]
    assert record_batch(arrays, names=list(PA_DATA)).equals(batch)
    assert table(arrays, names=list(PA_DATA)).equals(table(batch))
    with pytest.raises(ArrowTypeError):
        record_batch(42)


# --------------------------------------------------------------------------------------
# building from Python values (needs quiver.array())


def test_from_pydict_and_from_pylist_match_pyarrow() -> None:
    data = {"a": [1, 2, None], "b": ["x", None, "z"], "c": [[1.5], [], None]}
    expected = pa.RecordBatch.from_pydict(data)
    batch = RecordBatch.from_pydict(data)
    assert batch.to_pylist() == expected.to_pylist()
    rows = expected.to_pylist()
    assert RecordBatch.from_pylist(rows).to_pylist() == rows
    assert record_batch(data).equals(batch)
    assert record_batch(rows).equals(batch)
    assert table(data).to_pylist() == rows
    assert Table.from_pylist(rows).equals(Table.from_pydict(data))


def test_from_pydict_with_schema_uses_its_types() -> None:
    schema = t.schema([("a", t.int16()), ("b", t.large_string())])
    batch = RecordBatch.from_pydict({"b": ["x", "y"], "a": [1, 2]}, schema=schema)
    assert batch.schema == schema
    assert batch.to_pydict() == {"a": [1, 2], "b": ["x", "y"]}
    with pytest.raises(ArrowKeyError, match="none for \\['b'\\]"):
        RecordBatch.from_pydict({"a": [1]}, schema=schema)


def test_from_pylist_fills_missing_keys_with_null() -> None:
    rows = [{"a": 1, "b": "x"}, {"a": 2}]
    expected = pa.RecordBatch.from_pylist(rows)
    assert RecordBatch.from_pylist(rows).to_pylist() == expected.to_pylist()


# --------------------------------------------------------------------------------------
# more of the pyarrow surface


def test_struct_array_round_trip() -> None:
    batch = _batch().slice(1, 3)
    struct = batch.to_struct_array()
    assert struct.to_pylist() == _pa_batch().slice(1, 3).to_struct_array().to_pylist()
    back = RecordBatch.from_struct_array(struct)
    assert back.equals(batch)
    nested = from_pa(pa.array([{"a": 1, "b": "x"}, {"a": 2, "b": "y"}, {"a": 3, "b": "z"}]))
    assert RecordBatch.from_struct_array(nested.slice(1)).to_pylist() == [
        {"a": 2, "b": "y"},
        {"a": 3, "b": "z"},
    ]
    with pytest.raises(ArrowTypeError, match="expected a struct array, found int64"):
        RecordBatch.from_struct_array(from_pa(pa.array([1])))
    with pytest.raises(ArrowInvalidArgument, match="without nulls"):
        RecordBatch.from_struct_array(from_pa(pa.array([{"a": 1}, None])))


def test_drop_and_set_columns() -> None:
    batch = _batch()
    assert batch.drop_columns(["s", 0]).column_names == ["l", "st"]
    assert batch.drop_columns("st").column_names == ["n", "s", "l"]
    replaced = batch.set_column(1, "flag", from_pa(pa.array([True] * 5)))
    assert replaced.column_names == ["n", "flag", "l", "st"]
    assert replaced.column(1).to_pylist() == [True] * 5


def test_table_add_remove_drop_columns_follow_the_batches() -> None:
    tbl, _ = _table()
    extra = from_pa(pa.array([10, 20, 30, 40, 50]))
    added = tbl.append_column("extra", extra)
    assert added.column_names[-1] == "extra"
    assert added.num_batches == tbl.num_batches
    assert added.column("extra").to_pylist() == [10, 20, 30, 40, 50]
    assert [len(c) for c in added.column("extra").chunks] == [2, 0, 3]
    assert added.remove_column(4).equals(tbl)
    assert added.drop_columns(["extra", "s"]).column_names == ["n", "l", "st"]
    with pytest.raises(ArrowInvalidArgument, match="length 5, found 2"):
        tbl.append_column("x", extra.slice(0, 2))
    empty = Table.from_batches([], schema=tbl.schema).append_column("x", extra.slice(0, 0))
    assert empty.column_names[-1] == "x" and empty.num_rows == 0


def test_chunked_array_to_numpy() -> None:
    ca, _ = _chunked([1, 2], [3])
    assert ca.to_numpy().tolist() == [1, 2, 3]
    with pytest.raises(ArrowInvalidArgument, match="one chunk"):
        ca.to_numpy(zero_copy_only=True)
    single, _ = _chunked([4, 5])
    assert single.to_numpy(zero_copy_only=True).tolist() == [4, 5]


def test_array_methods_delegate_to_validation_and_equality() -> None:
    arr = from_pa(pa.array(["x", "y"]))
    arr.validate(full=True)
    assert arr.equals(from_pa(pa.array(["x", "y"])))
    bad = rebuild(arr, buffers=(None, i32(0, 2, 1), arr.buffers[2]))
    with pytest.raises(ArrowInvalid, match="non-decreasing"):
        bad.validate(full=True)


def test_building_errors_name_the_column() -> None:
    schema = t.schema([("a", t.int8()), ("b", t.int8())])
    with pytest.raises(ArrowError) as info:
        RecordBatch.from_pydict({"a": [1], "b": ["not a number"]}, schema=schema)
    assert info.value.field_path == "b"


# -- RecordBatchReader, concat_tables (issue 14) ------------------------------------------


def test_record_batch_reader_from_batches_reads_like_pyarrows() -> None:
    import pyarrow as pa

    from quiver.batch import RecordBatchReader

    batches = [record_batch({"a": [1, 2]}), record_batch({"a": [3]})]
    reader = RecordBatchReader.from_batches(batches[0].schema, batches)
    assert reader.read_next_batch().num_rows == 2
    assert reader.read_all().to_pydict() == {"a": [3]}
    with pytest.raises(StopIteration):
        reader.read_next_batch()
    # it speaks __arrow_c_stream__: pyarrow reads it lazily
    again = RecordBatchReader.from_batches(batches[0].schema, iter(batches))
    assert pa.RecordBatchReader.from_stream(again).read_all().to_pydict() == {"a": [1, 2, 3]}
    # and it takes any __arrow_c_stream__ source, and checks batches against its schema
    src = RecordBatchReader.from_stream(pa.table({"x": ["p", None]}))
    assert src.schema.names == ["x"] and src.read_pandas()["x"].tolist()[0] == "p"
    bad = RecordBatchReader.from_batches(batches[0].schema, [record_batch({"b": [1]})])
    with pytest.raises(ArrowInvalidArgument, match="expected batch 0 with the reader's schema"):
        bad.read_all()


def test_table_to_reader_and_ipc_readers_are_record_batch_readers() -> None:
    import quiver.ipc as ipc
    from quiver.batch import RecordBatchReader, concat_tables

    tbl = concat_tables([table({"a": [1, 2]}), table({"a": [3]})])
    assert tbl.num_batches == 2 and tbl.to_pydict() == {"a": [1, 2, 3]}
    reader = tbl.to_reader(max_chunksize=1)
    assert isinstance(reader, RecordBatchReader)
    assert [b.num_rows for b in reader] == [1, 1, 1]
    sink = ipc.BufferOutputStream()
    with ipc.new_file(sink, tbl.schema) as w:
        w.write_table(tbl)
    file_reader = ipc.open_file(sink.getvalue())
    assert isinstance(file_reader, RecordBatchReader) and len(file_reader) == 2
    assert file_reader.read_pandas()["a"].tolist() == [1, 2, 3]
    assert file_reader.read_next_batch().num_rows == 2
    stream_sink = ipc.BufferOutputStream()
    with ipc.new_stream(stream_sink, tbl.schema) as w:
        w.write(tbl)
    assert ipc.open_stream(stream_sink.getvalue()).read_pandas()["a"].tolist() == [1, 2, 3]
    with pytest.raises(ArrowInvalidArgument, match="schema of table 0"):
        concat_tables([table({"a": [1]}), table({"b": [1]})])


def test_a_conversion_error_from_a_batch_names_the_column() -> None:
    batch = qv.record_batch({"ok": qv.array([1]), "s": qv.array(["x"])})
    sink = ipc.BufferOutputStream()
    with ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch)
    data = bytearray(sink.getvalue())
    pos = data.rfind(b"x")
    data[pos] = 0xFF  # invalid UTF-8, which only the full level or conversion sees
    got = next(iter(ipc.open_stream(bytes(data))))
    with pytest.raises(qv.ArrowInvalid) as info:
        got.to_pylist()
    assert info.value.field_path == "s"


def test_table_sort_by_filter_and_take_match_pyarrow() -> None:
    rng = np.random.default_rng(1)
    n = 200
    words = np.array(["a", "b", "c", None], dtype=object)
    table = pa.table({
        "k": pa.array(words[rng.integers(0, 4, n)]),
        "x": pa.array(np.where(rng.random(n) < 0.1, None, rng.integers(0, 5, n)).tolist()),
        "v": rng.random(n),
        "l": pa.array([[int(i)] if i % 3 else None for i in range(n)]),
    })
    chunked = pa.concat_tables([table.slice(0, 50), table.slice(50)])
    ours = qv.table(chunked)
    assert ours.num_batches == 2
    keys = [("k", "ascending"), ("x", "descending")]
    assert ours.sort_by(keys).to_pydict() == chunked.sort_by(keys).to_pydict()
    assert ours.sort_by("v").to_pydict() == chunked.sort_by("v").to_pydict()
    mask = pa.array(rng.random(n) < 0.3)
    assert ours.filter(_q(mask)).to_pydict() == chunked.filter(mask).to_pydict()
    idx = rng.integers(0, n, 50)
    assert ours.take(idx).to_pydict() == chunked.take(pa.array(idx)).to_pydict()
    batch = qv.record_batch(table.to_batches()[0])
    assert batch.sort_by(keys).to_pydict() == table.to_batches()[0].sort_by(keys).to_pydict()
    assert batch.filter(_q(mask)).to_pydict() == table.to_batches()[0].filter(mask).to_pydict()
    with pytest.raises(qv.ArrowKeyError, match="nope"):
        ours.sort_by("nope")


def test_chunked_array_kernels() -> None:
    ca = qv.chunked_array([qv.array([1, None]), qv.array([3])])
    assert ca.take([2, 0]).to_pylist() == [3, 1]
    assert ca.filter([True, True, False]).to_pylist() == [1, None]
    assert ca.is_null().to_pylist() == [False, True, False]
    assert ca.fill_null(0).to_pylist() == [1, 0, 3]
    assert ca.cast(qv.float32()).type == qv.float32()


def test_an_empty_slice_keeps_one_empty_chunk_as_pyarrow() -> None:
    # with no chunk left, a dictionary column lost its dictionary (categories in pandas)
    tbl = qv.table({"c": qv.array(pa.array(["x", "y"]).dictionary_encode())})
    tbl = qv.concat_tables([tbl, tbl])
    ptbl = pa.concat_tables([pa.table(tbl), pa.table(tbl)])
    for offset in (0, 2, 4, 9):
        got, want = tbl.slice(offset, 0), ptbl.slice(offset, 0)
        assert got.num_rows == 0
        assert got.column(0).num_chunks == want.column(0).num_chunks == 1
        assert list(got.to_pandas()["c"].cat.categories) == ["x", "y"]
    assert chunked_array([[1, 2], [3]]).slice(1, 0).num_chunks == 1
    assert chunked_array([], qv.int8()).slice(0, 0).num_chunks == 0


def test_a_table_without_rows_gives_and_writes_no_batches_as_pyarrow() -> None:
    empty = qv.record_batch({"a": qv.array([], qv.int64())})
    for tbl in (qv.table({"a": [1, 2, 3]}).slice(3), Table.from_batches([empty])):
        assert tbl.to_batches() == [] == pa.table(tbl).to_batches()
        sink = ipc.BufferOutputStream()
        with ipc.new_file(sink, tbl.schema) as w:
            w.write_table(tbl)
        assert ipc.open_file(sink.getvalue()).num_record_batches == 0
    mixed = Table.from_batches([empty, qv.record_batch({"a": [1]})])
    assert [b.num_rows for b in mixed.to_batches()] == [0, 1]  # pyarrow keeps it too
    dict_tbl = qv.table({"c": qv.array(pa.array(["x"]).dictionary_encode())}).slice(1)
    joined = qv.concat_tables([dict_tbl, dict_tbl])
    assert list(joined.to_pandas()["c"].cat.categories) == ["x"]  # the dictionary is kept
