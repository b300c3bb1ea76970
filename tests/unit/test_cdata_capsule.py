"""Tests for quiver.cdata.capsule: PyCapsules and release callbacks."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pyarrow as pa
import pytest

import quiver as qv
from quiver.array import make_array
from quiver.errors import ArrowTypeError
from quiver.interop import cdata as c
from quiver.interop import export_array, export_schema, import_array, import_field, live_exports
from tests.unit._cdata_helpers import (
    Wrap,
    _registered_extension,  # noqa: F401 (autouse fixture)
    u8a,
)


def test_metadata_encoding_round_trips_binary_and_duplicates():
    pairs = [(b"k", b"\x00\x01"), (b"k", b"two"), (b"", b"")]
    raw = c.encode_metadata(pairs)
    buf = np.frombuffer(raw, np.uint8)
    assert c.decode_metadata(buf.__array_interface__["data"][0]) == pairs
    assert c.encode_metadata([]) is None


def test_import_rejects_objects_without_the_protocol():
    with pytest.raises(ArrowTypeError, match="__arrow_c_schema__"):
        import_field(42)
    with pytest.raises(ArrowTypeError, match="__arrow_c_array__"):
        import_array("nope")
    with pytest.raises(ArrowTypeError, match="__arrow_c_array__"):
        import_array((1, 2))  # a tuple of values is not a capsule pair


def test_import_rejects_capsule_with_wrong_name():
    schema_capsule = export_schema(qv.int8())
    with pytest.raises(ArrowTypeError, match="arrow_array"):
        import_array((schema_capsule, export_schema(qv.int8())))


def test_exported_buffers_live_until_consumer_releases():
    data = np.arange(100, dtype=np.int64)
    q = make_array(qv.int64(), 100, [None, data.view(np.uint8)])
    ref = weakref.ref(q)
    gc.collect()
    before = live_exports()
    p = pa.array(Wrap(q))
    del q
    gc.collect()
    assert ref() is not None  # pyarrow still holds it through private_data
    assert live_exports() > before
    del p
    gc.collect()
    assert ref() is None
    assert live_exports() == before


def test_unconsumed_capsules_release_on_destruction():
    q = make_array(qv.int8(), 1, [None, u8a([1], "i1")])
    ref = weakref.ref(q)
    gc.collect()
    before = live_exports()
    capsules = export_array(q)
    del q
    assert ref() is not None
    del capsules
    gc.collect()
    assert ref() is None
    assert live_exports() == before


def test_consumer_moving_children_keeps_them_alive_independently():
    child = make_array(qv.int32(), 2, [None, u8a([1, 2], "<i4")])
    parent = make_array(qv.struct([qv.field("c", qv.int32())]), 2, [None], [child])
    ref = weakref.ref(child)
    gc.collect()
    before = live_exports()
    p = pa.array(Wrap(parent))
    del parent, child
    only_child = p.field(0)
    del p
    gc.collect()
    assert only_child.to_pylist() == [1, 2]
    del only_child
    gc.collect()
    assert ref() is None
    assert live_exports() == before


def test_export_loop_does_not_grow_memory():
    data = np.arange(1000, dtype=np.int64)
    q = make_array(qv.list_(qv.int64()), 999, [None, data[:1000].astype("<i4").view(np.uint8)],
                   [make_array(qv.int64(), 1000, [None, data.view(np.uint8)])])

    def rss_pages() -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1])

    for _ in range(2000):
        pa.array(Wrap(q))
    gc.collect()
    start = rss_pages()
    for _ in range(20000):
        pa.array(Wrap(q))
    gc.collect()
    grown_bytes = (rss_pages() - start) * 4096
    assert grown_bytes < 8 * 1024 * 1024
    assert live_exports() == 0 or live_exports() < 10


def test_consumer_may_release_from_another_thread():
    import threading

    data = np.arange(50, dtype=np.int64)
    q = make_array(qv.int64(), 50, [None, data.view(np.uint8)])
    ref = weakref.ref(q)
    gc.collect()
    before = live_exports()
    holder = [pa.array(Wrap(q))]
    del q

    def consume():
        assert holder[0].to_pylist()[-1] == 49
        holder.clear()  # pyarrow calls our release callback on this thread

    worker = threading.Thread(target=consume)
    worker.start()
    worker.join()
    gc.collect()
    assert ref() is None
    assert live_exports() == before
