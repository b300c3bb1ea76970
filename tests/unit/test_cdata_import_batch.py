"""Tests for quiver.cdata.import_batch: ArrowArray structs imported as record batches."""

from __future__ import annotations

import gc

import numpy as np
import pyarrow as pa
import pytest

import quiver as qv
from quiver.errors import ArrowTypeError
from quiver.interop import import_array, import_batch, import_stream
from tests.unit._cdata_helpers import (
    SCHEMA,
    Batches,
    _batch,
    _expected,
    _registered_extension,  # noqa: F401 (autouse fixture)
    needs_batch,
)


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_import_loop_does_not_grow_memory():
    source = pa.record_batch({"a": pa.array(np.arange(1000)), "s": pa.array(["x"] * 1000)})
    from quiver.interop import import_batch

    for _ in range(2000):
        import_batch(source)
    gc.collect()
    start = _rss_bytes()
    for _ in range(20000):
        import_batch(source)
    gc.collect()
    assert _rss_bytes() - start < 8 * 1024 * 1024


def test_a_schema_imported_twice_is_parsed_once_and_still_checked() -> None:
    import pyarrow as pa

    from quiver.interop import import_ as imp

    imp.FIELD_CACHE.clear()
    first = imp.import_batch(pa.record_batch({"a": [1], "b": ["x"]}))
    again = imp.import_batch(pa.record_batch({"a": [2], "b": ["y"]}))
    assert first.schema is again.schema or first.schema.fields[0] is again.schema.fields[0]
    assert len(imp.FIELD_CACHE) == 1
    # another name, type, nullability or metadata is another schema
    other = imp.import_batch(pa.record_batch({"a": [1.5], "b": ["x"]}))
    assert str(other.schema.field("a").type) == "double"
    meta = imp.import_batch(
        pa.record_batch({"a": [1], "b": ["x"]}).replace_schema_metadata({"k": "v"})
    )
    assert meta.schema.metadata == {b"k": b"v"}
    renamed = imp.import_batch(pa.record_batch({"z": [1], "b": ["x"]}))
    assert renamed.schema.names == ["z", "b"]
    assert len(imp.FIELD_CACHE) == 4


def test_batch_importer_reuses_the_schema_while_the_producer_says_it_is_the_same() -> None:
    import pyarrow as pa

    from quiver.interop.import_ import BatchImporter

    imp = BatchImporter()
    first = imp(pa.record_batch({"a": [1], "b": ["x"]}))
    second = imp(pa.record_batch({"a": [2], "b": ["y"]}))
    assert second.schema is first.schema and second.to_pydict() == {"a": [2], "b": ["y"]}
    other = imp(pa.record_batch({"a": [1.5], "b": ["x"]}))  # another schema: parsed again
    assert str(other.schema.field("a").type) == "double"
    assert other.to_pydict() == {"a": [1.5], "b": ["x"]}


def test_batch_importer_fast_path_matches_the_general_import_on_leaf_types() -> None:
    import datetime as dt
    from decimal import Decimal

    import pyarrow as pa

    from quiver.interop import import_ as imp

    n = 37
    values = {
        "i8": pa.array([None if i % 7 == 0 else i - 18 for i in range(n)], pa.int8()),
        "u64": pa.array(range(n), pa.uint64()),
        "f32": pa.array([i / 3 for i in range(n)], pa.float32()),
        "b": pa.array([None if i % 5 == 0 else i % 2 == 0 for i in range(n)]),
        "s": pa.array([None if i % 4 == 0 else "é" * (i % 3) for i in range(n)]),
        "ls": pa.array(["x" * i for i in range(n)], pa.large_string()),
        "bin": pa.array([bytes([i]) * (i % 4) for i in range(n)], pa.binary()),
        "ts": pa.array([dt.datetime(2020, 1, 1) + dt.timedelta(seconds=i) for i in range(n)],
                       pa.timestamp("ns", "UTC")),
        "d": pa.array([Decimal(i) / 100 for i in range(n)], pa.decimal128(10, 2)),
        "fsb": pa.array([bytes([i]) * 3 for i in range(n)], pa.binary(3)),
        "date": pa.array(range(n), pa.date32()),
    }
    batch = pa.record_batch(values)
    for sliced in (batch, batch.slice(5, 20), batch.slice(0, 0), batch.slice(36)):
        importer = imp.BatchImporter()
        ours = importer(sliced)
        assert importer._leaves is not None  # the fast path applies to every column here
        # the general walk, by hand
        general = imp.batch_from_struct(*imp.import_array_field(sliced.__arrow_c_array__()))
        for got in (ours, imp.import_batch(sliced)):  # import_batch takes the fast path too
            assert got.equals(general)
            assert got.to_pydict() == general.to_pydict() == sliced.to_pydict()
            got.validate(full=True)
    # a nested column takes the general walk
    nested = pa.record_batch({"l": pa.array([[1], None, [2, 3]])})
    importer = imp.BatchImporter()
    assert importer(nested).to_pydict() == {"l": [[1], None, [2, 3]]}
    assert importer._leaves is None


def test_batch_fast_path_keeps_the_producer_memory_until_its_views_die() -> None:
    import pyarrow as pa

    from quiver.interop import import_ as imp

    def imported(importer: object) -> object:
        batch = pa.record_batch({"a": pa.array(np.arange(1100)) * 3,  # pyarrow's memory
                                 "s": pa.array(["x" * 50] * 1000 + [None] * 100)})
        return importer(batch)  # the pyarrow batch dies here

    gc.collect()
    before = pa.total_allocated_bytes()
    for importer in (imp.BatchImporter(), imp.import_batch):
        ours = imported(importer)
        gc.collect()
        assert pa.total_allocated_bytes() - before >= 8 * 1100  # held by our views
        view = ours.column(1).buffers[2][10:20]
        del ours
        gc.collect()
        assert pa.total_allocated_bytes() - before >= 8 * 1100  # a slice holds it too
        assert bytes(view) == b"x" * 10
        del view
        gc.collect()
        assert pa.total_allocated_bytes() == before  # released once the views are gone


# --------------------------------------------------------------------------------------
# import


def test_stream_import_yields_arrays_lazily_for_non_struct_streams():
    chunked = pa.chunked_array([[1, 2], [3]], pa.int16())
    reader = import_stream(chunked)
    assert reader.schema is None
    assert reader.field.type == qv.int16()
    chunks = list(reader)
    assert [len(ch) for ch in chunks] == [2, 1]
    assert import_array(chunked).to_pylist() == [1, 2, 3]


def test_stream_import_pulls_lazily_and_releases_at_end():
    pulled = []

    def gen():
        for i in range(3):
            pulled.append(i)
            yield pa.record_batch({"a": [i]})

    source = pa.RecordBatchReader.from_batches(pa.schema([("a", pa.int64())]), gen())
    reader = import_stream(source, arrays=True)
    assert pulled == []
    first = next(reader)
    assert pulled == [0]
    assert first.type == qv.struct([qv.field("a", qv.int64())])
    rest = list(reader)
    assert len(rest) == 2
    assert reader._stream is None  # released at the end of the stream


def test_stream_import_passes_requested_schema_to_producer():
    table = pa.table({"a": pa.array([1, 2], pa.int64())})
    reader = import_stream(table, qv.schema([qv.field("a", qv.int32())]), arrays=True)
    assert reader.field.type == qv.struct([qv.field("a", qv.int32())])


@needs_batch
def test_batch_import_from_pyarrow_is_zero_copy():
    p = _expected(0, 4)
    b = import_batch(p)
    assert b.num_rows == 4
    assert b.schema.names == ["a", "s"]
    address = b.columns[0].buffers[1].__array_interface__["data"][0]
    assert address == p.column(0).buffers()[1].address


@needs_batch
def test_stream_import_builds_record_batches_and_table():
    table = pa.table({"a": [1, 2, 3], "b": ["x", None, "z"]})
    reader = import_stream(table)
    assert reader.schema.names == ["a", "b"]
    batches = list(reader)
    assert sum(b.num_rows for b in batches) == 3
    again = pa.RecordBatchReader.from_stream(import_stream(table)).read_all()
    assert again.equals(table)


def test_duckdb_queries_a_quiver_batch_and_stream():
    duckdb = pytest.importorskip("duckdb")
    batch = _batch(0, 10)  # noqa: F841 - duckdb finds it by name (replacement scan)
    con = duckdb.connect()
    assert con.sql("select sum(a), count(*) from batch").fetchall() == [(45, 10)]
    stream = Batches(SCHEMA, [_batch(0, 3), _batch(3, 3)])  # noqa: F841 - found by name
    assert con.sql("select max(a), min(s) from stream").fetchall() == [(5, "a")]
    result = con.sql("select 7::bigint as x, 'hi' as y")
    reader = import_stream(result, arrays=True)
    (chunk,) = list(reader)
    assert chunk.children[0].to_pylist() == [7]
    con.close()


@needs_batch
def test_import_table_from_pyarrow_polars_and_duckdb():
    from quiver.interop import import_table

    table = pa.table({"a": [1, 2, 3], "s": ["x", None, "z"]})
    q = import_table(table)
    assert q.num_rows == 3 and q.schema.names == ["a", "s"]
    assert q.column("s").to_pylist() == ["x", None, "z"]
    assert import_table(pa.record_batch(table.to_batches()[0])).num_rows == 3
    pl = pytest.importorskip("polars")
    from_polars = import_table(pl.DataFrame({"v": [1.5, None]}))
    assert from_polars.column("v").to_pylist() == [1.5, None]
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    from_duckdb = import_table(con.sql("select range as r from range(5)"))
    assert from_duckdb.column("r").to_pylist() == [0, 1, 2, 3, 4]
    con.close()
    with pytest.raises(ArrowTypeError, match="struct"):
        import_table(pa.chunked_array([[1]]))


@needs_batch
def test_import_batch_from_a_table_source_concatenates_chunks():
    table = pa.Table.from_batches([_expected(0, 2), _expected(2, 3)])
    batch = import_batch(table)
    assert batch.num_rows == 5
    assert batch.column(0).to_pylist() == [0, 1, 2, 3, 4]
    one = import_batch(pa.Table.from_batches([_expected(0, 2)]))
    assert one.column(1).to_pylist() == ["a", "b"]


def test_batch_fast_path_with_buffers_apart_matches_the_general_import(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import pyarrow as pa

    from quiver.cdata import import_batch as ib
    from quiver.interop import import_ as imp

    # no gap allowed: every batch's buffers count as lying apart (one view each)
    monkeypatch.setattr(ib, "_WINDOW_GAP", -1)
    n = 29
    batch = pa.record_batch({
        "i": pa.array([None if i % 3 == 0 else i for i in range(n)], pa.int32()),
        "b": pa.array([i % 2 == 0 for i in range(n)]),
        "s": pa.array([None if i % 4 == 0 else "ab" * (i % 5) for i in range(n)]),
        "ls": pa.array(["x" * i for i in range(n)], pa.large_binary()),
    })
    for sliced in (batch, batch.slice(3, 20), batch.slice(0, 0)):
        ours = imp.BatchImporter()(sliced)
        general = imp.batch_from_struct(*imp.import_array_field(sliced.__arrow_c_array__()))
        assert ours.equals(general) and ours.to_pydict() == sliced.to_pydict()
        ours.validate(full=True)
        assert all(b is None or not b.flags.writeable for col in ours.columns for b in col.buffers)


def test_batch_importer_sees_a_schema_that_changed_only_in_metadata() -> None:
    import pyarrow as pa

    from quiver.interop.import_ import BatchImporter

    importer = BatchImporter()
    batch = pa.record_batch({"a": [1], "b": ["x"]})
    for value in ("v", "w", "v"):
        got = importer(batch.replace_schema_metadata({"k": value}))
        assert got.schema.metadata == {b"k": value.encode()}
    assert importer(batch).schema.metadata is None
    renamed = importer(pa.record_batch({"a": [1], "c": ["x"]}))
    assert renamed.schema.names == ["a", "c"] and renamed.to_pydict() == {"a": [1], "c": ["x"]}


def test_batch_fast_path_on_a_batch_wider_than_one_generated_run() -> None:
    import pyarrow as pa

    from quiver.cdata import import_batch as ib
    from quiver.interop import import_ as imp

    n = 9
    kinds = [pa.array([None if i % 3 == 0 else i for i in range(n)], pa.int16()),
             pa.array([i % 2 == 0 for i in range(n)]),
             pa.array([None if i % 4 == 0 else "q" * i for i in range(n)]),
             pa.array([b"z" * i for i in range(n)], pa.large_binary())]
    width = 2 * ib._CHUNK + 3
    batch = pa.record_batch({f"c{k}": kinds[k % 4] for k in range(width)})
    for sliced in (batch, batch.slice(2, 5)):
        importer = imp.BatchImporter()
        ours = importer(sliced)
        assert importer._leaves is not None
        general = imp.batch_from_struct(*imp.import_array_field(sliced.__arrow_c_array__()))
        assert ours.num_columns == width and ours.equals(general)
        assert ours.to_pydict() == sliced.to_pydict()
        ours.validate(full=True)


def test_a_known_schema_coming_back_with_a_null_children_table_is_refused_not_read():
    # (the check generated for a known schema read the children table at address 0)
    import ctypes

    from quiver.cdata import capsule as c
    from quiver.cdata.import_batch import BatchImporter
    from quiver.errors import ArrowInvalid

    keep: list = []

    @c.SchemaRelease
    def release(p):
        p.contents.release = c.SchemaRelease()

    def address_of(text: bytes) -> int:
        buf = ctypes.c_char_p(text)
        keep.append(buf)
        return ctypes.cast(buf, ctypes.c_void_p).value

    def schema(null_children: bool):
        child = c.ArrowSchema(format=address_of(b"l"), name=address_of(b"a"), flags=2,
                              release=release)
        table = (ctypes.POINTER(c.ArrowSchema) * 1)(ctypes.pointer(child))
        root = c.ArrowSchema(format=address_of(b"+s"), n_children=1, release=release,
                             children=None if null_children else table)
        keep.extend([child, table, root])
        return c.new_capsule(root, c.SCHEMA_CAPSULE)

    batch = pa.record_batch({"a": pa.array([1, 2], pa.int64())})

    class Producer:
        def __init__(self, bad: bool) -> None:
            self.bad = bad

        def __arrow_c_array__(self, requested_schema=None):
            return schema(self.bad), batch.__arrow_c_array__()[1]

    importer = BatchImporter()
    assert importer(Producer(False)).num_rows == 2
    with pytest.raises(ArrowInvalid, match="children table for 1 children, found NULL"):
        importer(Producer(True))


def test_imported_buffers_cannot_be_made_writable():
    source = pa.record_batch({"a": pa.array([1, 2, 3], pa.int64()),
                              "s": pa.array(["x", None, "zz"])})
    for imported in (import_batch(source), import_array(source.column(0))):
        arrays = imported.columns if hasattr(imported, "columns") else [imported]
        for arr in arrays:
            for buf in arr.buffers:
                if buf is not None and len(buf):
                    with pytest.raises(ValueError):
                        buf.setflags(write=True)
    assert source.column(0).to_pylist() == [1, 2, 3]


def test_a_schema_too_wide_to_digest_is_reused_while_the_producer_says_it_is_the_same():
    from quiver.cdata.import_batch import BatchImporter

    batch = pa.record_batch({f"c{i}": pa.array(np.arange(4)) for i in range(600)})
    importer = BatchImporter()
    first, second = importer(batch), importer(batch)
    assert second.schema is first.schema  # not parsed again
    other = pa.record_batch({f"d{i}": pa.array(np.arange(4)) for i in range(600)})
    assert importer(other).schema.names[0] == "d0"
    assert second.column(599).to_pylist() == [0, 1, 2, 3]
