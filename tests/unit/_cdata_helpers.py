"""C data interface helpers shared by the cdata tests (and a few validate tests)."""

from __future__ import annotations

import contextlib
import ctypes
import datetime
import decimal

import numpy as np
import pyarrow as pa
import pytest

import quiver as qv
from quiver.array import make_array
from quiver.interop import cdata as c
from quiver.interop import export_array, export_stream

try:
    from quiver.batch import RecordBatch as _QuiverBatch
except ImportError:  # batch.py lands separately; a stand-in exercises the export side
    _QuiverBatch = None


class Wrap:
    """A protocol-speaking wrapper, so tests do not depend on the classes' own methods."""

    def __init__(self, obj):
        self.obj = obj

    def __arrow_c_array__(self, requested_schema=None):
        return export_array(self.obj, requested_schema)


def u8a(values, dtype) -> np.ndarray:
    return np.asarray(values, dtype=dtype).view(np.uint8)


class UuidLike(pa.ExtensionType):
    def __init__(self):
        super().__init__(pa.binary(4), "test.quiver.tag")

    def __arrow_ext_serialize__(self):
        return b"meta\x00data"

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type, serialized):
        return cls()


@pytest.fixture(scope="module", autouse=True)
def _registered_extension():
    with contextlib.suppress(pa.ArrowKeyError):
        pa.register_extension_type(UuidLike())
    yield
    pa.unregister_extension_type("test.quiver.tag")


# --------------------------------------------------------------------------------------
# pyarrow arrays of every type


def _pa_arrays() -> dict[str, pa.Array]:
    ts = datetime.datetime(2024, 1, 2, 3, 4, 5)
    long = "a string well past twelve bytes"
    struct = pa.array(
        [{"x": 1, "y": "a"}, None, {"x": 3, "y": None}],
        pa.struct([("x", pa.int32()), pa.field("y", pa.string(), metadata={"k": "v"})]),
    )
    arrays = {
        "null": pa.nulls(4),
        "bool": pa.array([True, None, False, True, True, False, None, True, False]),
        "int8": pa.array([1, None, -3], pa.int8()),
        "uint16": pa.array([1, None, 65535], pa.uint16()),
        "int32": pa.array([1, None, 3, 4], pa.int32()),
        "uint64": pa.array([1, 2**64 - 1, None], pa.uint64()),
        "int64": pa.array([1, None, 3, -4, 5]),
        "float16": pa.array(np.array([1.5, 2.0, -0.5], dtype=np.float16)),
        "float32": pa.array([1.5, None], pa.float32()),
        "float64": pa.array([1.5, None, float("inf")]),
        "decimal32": pa.array([decimal.Decimal("1.23"), None], pa.decimal32(5, 2)),
        "decimal64": pa.array([decimal.Decimal("1.23"), None], pa.decimal64(12, 2)),
        "decimal128": pa.array([decimal.Decimal("1.23"), None], pa.decimal128(20, 2)),
        "decimal256": pa.array([decimal.Decimal("-1.23"), None], pa.decimal256(40, 2)),
        "date32": pa.array([datetime.date(2024, 1, 2), None]),
        "date64": pa.array([datetime.date(2024, 1, 2), None], pa.date64()),
        "time32s": pa.array([1, None], pa.time32("s")),
        "time32ms": pa.array([1, None], pa.time32("ms")),
        "time64us": pa.array([1, None], pa.time64("us")),
        "time64ns": pa.array([1, None], pa.time64("ns")),
        "timestamp": pa.array([ts, None], pa.timestamp("us")),
        "timestamp_tz": pa.array([ts, None], pa.timestamp("ns", tz="Europe/Paris")),
        "duration": pa.array([5, None], pa.duration("ms")),
        "month_day_nano": pa.array(
            [pa.MonthDayNano([1, 2, 3]), None], pa.month_day_nano_interval()
        ),
        "binary": pa.array([b"ab", None, b"", b"xyz"]),
        "large_binary": pa.array([b"ab", None, b"xyz"], pa.large_binary()),
        "string": pa.array(["ab", None, "", "héllo"]),
        "large_string": pa.array(["ab", None, "xyz"], pa.large_string()),
        "string_view": pa.array(["ab", None, long, "short", long + "!"], pa.string_view()),
        "binary_view": pa.array([b"ab", None, long.encode()], pa.binary_view()),
        "fixed_size_binary": pa.array([b"abc", None, b"xyz"], pa.binary(3)),
        "list": pa.array([[1, 2], None, [], [3]], pa.list_(pa.int32())),
        "large_list": pa.array([[1, 2], None, [3]], pa.large_list(pa.int8())),
        "list_view": pa.array([[1, 2], None, [], [3]], pa.list_view(pa.int32())),
        "large_list_view": pa.array([["a", "b"], None, ["c"]], pa.large_list_view(pa.string())),
        "fixed_size_list": pa.array([[1, 2], None, [3, 4]], pa.list_(pa.int16(), 2)),
        "struct": struct,
        "map": pa.array(
            [[("a", 1), ("b", None)], None, []], pa.map_(pa.string(), pa.int32())
        ),
        "map_sorted": pa.array([[("a", 1)]], pa.map_(pa.string(), pa.int32(), keys_sorted=True)),
        "sparse_union": pa.UnionArray.from_sparse(
            pa.array([0, 1, 0], pa.int8()),
            [pa.array([1, 2, 3]), pa.array(["a", "b", "c"])],
            ["i", "s"],
        ),
        "dense_union": pa.UnionArray.from_dense(
            pa.array([5, 7, 5, 7], pa.int8()),
            pa.array([0, 0, 1, 1], pa.int32()),
            [pa.array([1, None]), pa.array(["a", "b"])],
            ["i", "s"],
            [5, 7],
        ),
        "dictionary": pa.array(["a", "b", None, "a"]).dictionary_encode(),
        "dictionary_ordered": pa.DictionaryArray.from_arrays(
            pa.array([0, 1, 1], pa.int16()), pa.array(["x", "y"]), ordered=True
        ),
        "run_end_encoded": pa.RunEndEncodedArray.from_arrays(
            pa.array([2, 5, 6], pa.int32()), pa.array(["a", None, "c"])
        ),
        "ree_int64": pa.RunEndEncodedArray.from_arrays(
            pa.array([1, 3], pa.int64()), pa.array([1.5, 2.5])
        ),
        "uuid": pa.ExtensionArray.from_storage(
            pa.uuid(), pa.array([b"0123456789abcdef", None], pa.binary(16))
        ),
        "custom_extension": pa.ExtensionArray.from_storage(
            UuidLike(), pa.array([b"abcd", None, b"wxyz"], pa.binary(4))
        ),
        "nested": pa.array(
            [[{"k": "a", "v": [1.0]}], None, [{"k": None, "v": None}, {"k": "c", "v": []}]],
            pa.list_(pa.struct([("k", pa.string()), ("v", pa.list_(pa.float64()))])),
        ),
        "list_of_dictionary": pa.ListArray.from_arrays(
            pa.array([0, 2, 3], pa.int32()), pa.array(["p", "q", "p"]).dictionary_encode()
        ),
        "empty_string": pa.array([], pa.string()),
        "empty_list": pa.array([], pa.list_(pa.int64())),
    }
    return arrays


PA_ARRAYS = _pa_arrays()


RELEASED: list[str] = []


KEEP: list[object] = []


@c.SchemaRelease
def _release_schema(ptr):
    RELEASED.append("schema")
    ptr.contents.release = c.SchemaRelease()


@c.ArrayRelease
def _release_array(ptr):
    RELEASED.append("array")
    ptr.contents.release = c.ArrayRelease()


@pytest.fixture(autouse=True)
def _reset():
    RELEASED.clear()
    yield
    KEEP.clear()


def _cstr(value: bytes) -> int:
    buf = ctypes.create_string_buffer(value)
    KEEP.append(buf)
    return ctypes.addressof(buf)


def schema_struct(fmt: bytes | None, children=(), dictionary=None, metadata=None, flags=2):
    s = c.ArrowSchema()
    s.format = _cstr(fmt) if fmt is not None else None
    s.name = _cstr(b"col")
    if metadata is not None:
        buf = ctypes.create_string_buffer(metadata, len(metadata))
        KEEP.append(buf)
        s.metadata = ctypes.addressof(buf)
    s.flags = flags
    s.n_children = len(children)
    table = (ctypes.POINTER(c.ArrowSchema) * max(len(children), 1))(
        *[ctypes.pointer(ch) if ch is not None else None for ch in children]
    )
    KEEP.append(table)
    KEEP.extend(children)
    s.children = ctypes.cast(table, ctypes.POINTER(ctypes.POINTER(c.ArrowSchema)))
    if dictionary is not None:
        KEEP.append(dictionary)
        s.dictionary = ctypes.pointer(dictionary)
    s.release = _release_schema
    return s


def array_struct(length, buffers, children=(), null_count=0, offset=0, n_buffers=None):
    a = c.ArrowArray()
    a.length = length
    a.null_count = null_count
    a.offset = offset
    addresses = []
    for b in buffers:
        if b is None:
            addresses.append(None)
        else:
            KEEP.append(b)
            addresses.append(b.__array_interface__["data"][0])
    table = (ctypes.c_void_p * max(len(addresses), 1))(*addresses)
    KEEP.append(table)
    a.n_buffers = len(addresses) if n_buffers is None else n_buffers
    a.buffers = ctypes.cast(table, ctypes.POINTER(ctypes.c_void_p))
    a.n_children = len(children)
    ctable = (ctypes.POINTER(c.ArrowArray) * max(len(children), 1))(
        *[ctypes.pointer(ch) for ch in children]
    )
    KEEP.append(ctable)
    KEEP.extend(children)
    a.children = ctypes.cast(ctable, ctypes.POINTER(ctypes.POINTER(c.ArrowArray)))
    a.release = _release_array
    return a


def capsules(schema, array):
    return c.new_capsule(schema, c.SCHEMA_CAPSULE), c.new_capsule(array, c.ARRAY_CAPSULE)


def int64_buffer(values):
    return np.asarray(values, dtype="<i8").view(np.uint8)


needs_batch = pytest.mark.skipif(_QuiverBatch is None, reason="quiver.batch not available yet")


class Batch:
    """A duck-typed record batch (schema, columns, num_rows) that speaks the protocol."""

    def __init__(self, schema, columns):
        self.schema = schema
        self.columns = list(columns)
        self.num_rows = len(self.columns[0]) if self.columns else 0

    def __arrow_c_array__(self, requested_schema=None):
        return export_array(self, requested_schema)

    def __arrow_c_stream__(self, requested_schema=None):
        return export_stream(self, requested_schema)


class Batches:
    """A schema plus an iterable of batches, exported as a stream."""

    def __init__(self, schema, batches):
        self.schema = schema
        self.batches = batches

    def __iter__(self):
        return iter(self.batches)

    def __arrow_c_stream__(self, requested_schema=None):
        return export_stream(self, requested_schema)


SCHEMA = qv.schema([qv.field("a", qv.int64()), qv.field("s", qv.string())], {"k": "v"})


def _batch(start: int, n: int) -> Batch:
    ints = make_array(qv.int64(), n, [None, np.arange(start, start + n, dtype="<i8").view("u1")])
    text = "".join(chr(97 + (start + i) % 26) for i in range(n)).encode()
    offsets = np.arange(n + 1, dtype="<i4").view("u1")
    strings = make_array(qv.string(), n, [None, offsets, np.frombuffer(text, np.uint8)])
    return Batch(SCHEMA, [ints, strings])


def _expected(start: int, n: int) -> pa.RecordBatch:
    return pa.record_batch(
        {
            "a": pa.array(range(start, start + n), pa.int64()),
            "s": pa.array([chr(97 + (start + i) % 26) for i in range(n)]),
        }
    )
