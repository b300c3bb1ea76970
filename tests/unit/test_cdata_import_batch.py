"""Tests for quiver.cdata.import_batch: ArrowArray structs imported as record batches."""

from __future__ import annotations

import gc

import numpy as np
import pyarrow as pa

from tests.unit._helpers import _registered_extension  # noqa: F401 (autouse fixture)


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

    imp._FIELD_CACHE.clear()
    first = imp.import_batch(pa.record_batch({"a": [1], "b": ["x"]}))
    again = imp.import_batch(pa.record_batch({"a": [2], "b": ["y"]}))
    assert first.schema is again.schema or first.schema.fields[0] is again.schema.fields[0]
    assert len(imp._FIELD_CACHE) == 1
    # another name, type, nullability or metadata is another schema
    other = imp.import_batch(pa.record_batch({"a": [1.5], "b": ["x"]}))
    assert str(other.schema.field("a").type) == "double"
    meta = imp.import_batch(
        pa.record_batch({"a": [1], "b": ["x"]}).replace_schema_metadata({"k": "v"})
    )
    assert meta.schema.metadata == {b"k": b"v"}
    renamed = imp.import_batch(pa.record_batch({"z": [1], "b": ["x"]}))
    assert renamed.schema.names == ["z", "b"]
    assert len(imp._FIELD_CACHE) == 4


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
        general = imp._batch_from_struct(*imp._import_array_field(sliced.__arrow_c_array__()))
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
