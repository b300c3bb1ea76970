"""Helpers shared by several unit-test files."""

from __future__ import annotations

import contextlib
import ctypes
import datetime
import datetime as dt
import decimal
import io
import json
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.ipc as pipc
import pytest

import quiver as qv
import quiver.ipc as ipc
import quiver.types as t
from quiver import types as qt
from quiver.array import (
    make_array,
)
from quiver.array.base import Array
from quiver.integration import (
    array_values,
    parse_json,
    to_json,
)
from quiver.interop import cdata as c
from quiver.interop import (
    export_array,
    export_stream,
    import_array,
)
from quiver.ipc import compression
from quiver.ipc import metadata as md
from quiver.ipc import tensor as it
from quiver.ipc.body import (
    V4,
    V5,
)
from quiver.ipc.flatbuf import Builder
from quiver.ipc.framing import frame_message
from quiver.ipc.statistics import (
    STATISTICS_KEY,
)
from tests.conftest import SUPPLEMENT
from tests.ipc_cases import all_type_arrays
from tests.roundtrip.pa_types import from_pyarrow

try:
    from quiver.batch import RecordBatch as _QuiverBatch
except ImportError:  # batch.py lands separately; a stand-in exercises the export side
    _QuiverBatch = None


# --------------------------------------------------------------------------------------
# pyarrow -> quiver, through raw buffers (shared with test_equal)


def qtype(pt: pa.DataType) -> t.DataType:
    """The quiver type for a pyarrow type (the subset these tests use)."""
    simple = {
        pa.null(): t.null(),
        pa.bool_(): t.bool_(),
        pa.int8(): t.int8(),
        pa.int16(): t.int16(),
        pa.int32(): t.int32(),
        pa.int64(): t.int64(),
        pa.uint8(): t.uint8(),
        pa.uint16(): t.uint16(),
        pa.uint32(): t.uint32(),
        pa.uint64(): t.uint64(),
        pa.float16(): t.float16(),
        pa.float32(): t.float32(),
        pa.float64(): t.float64(),
        pa.string(): t.string(),
        pa.large_string(): t.large_string(),
        pa.binary(): t.binary(),
        pa.large_binary(): t.large_binary(),
        pa.string_view(): t.string_view(),
        pa.binary_view(): t.binary_view(),
        pa.date32(): t.date32(),
        pa.date64(): t.date64(),
        pa.month_day_nano_interval(): t.month_day_nano_interval(),
    }
    if pt in simple:
        return simple[pt]
    if isinstance(pt, pa.BaseExtensionType):
        serialized = pt.__arrow_ext_serialize__() if isinstance(pt, pa.ExtensionType) else b""
        return t.extension(pt.extension_name, qtype(pt.storage_type), serialized)
    if pa.types.is_timestamp(pt):
        return t.timestamp(pt.unit, pt.tz)
    if pa.types.is_time32(pt):
        return t.time32(pt.unit)
    if pa.types.is_time64(pt):
        return t.time64(pt.unit)
    if pa.types.is_duration(pt):
        return t.duration(pt.unit)
    if pa.types.is_decimal(pt):
        return t.DecimalType(pt.bit_width, pt.precision, pt.scale)
    if pa.types.is_fixed_size_binary(pt):
        return t.binary(pt.byte_width)

    def fld(f: pa.Field) -> t.Field:
        return t.field(f.name, qtype(f.type), f.nullable)

    if pa.types.is_map(pt):
        return t.map_(fld(pt.key_field), fld(pt.item_field), pt.keys_sorted)
    if pa.types.is_fixed_size_list(pt):
        return t.list_(fld(pt.value_field), pt.list_size)
    for pred, make in (
        (pa.types.is_list, t.list_),
        (pa.types.is_large_list, t.large_list),
        (pa.types.is_list_view, t.list_view),
        (pa.types.is_large_list_view, t.large_list_view),
    ):
        if pred(pt):
            return make(fld(pt.value_field))
    if pa.types.is_struct(pt):
        return t.struct([fld(pt.field(i)) for i in range(pt.num_fields)])
    if pa.types.is_union(pt):
        fields = [fld(pt.field(i)) for i in range(pt.num_fields)]
        return t.union(fields, pt.mode, list(pt.type_codes))
    if pa.types.is_dictionary(pt):
        return t.dictionary(qtype(pt.index_type), qtype(pt.value_type), pt.ordered)
    if pa.types.is_run_end_encoded(pt):
        return t.run_end_encoded(qtype(pt.run_end_type), qtype(pt.value_type))
    raise NotImplementedError(str(pt))


def _np(buf: pa.Buffer | None) -> np.ndarray | None:
    return None if buf is None else np.frombuffer(buf, dtype=np.uint8)


def _children(arr: pa.Array) -> list[pa.Array]:
    pt = arr.type
    if pa.types.is_struct(pt) or pa.types.is_union(pt):
        return [arr.field(i) for i in range(pt.num_fields)]
    if pa.types.is_run_end_encoded(pt):
        return [arr.run_ends, arr.values]
    if (
        pa.types.is_list(pt)
        or pa.types.is_large_list(pt)
        or pa.types.is_list_view(pt)
        or pa.types.is_large_list_view(pt)
        or pa.types.is_fixed_size_list(pt)
        or pa.types.is_map(pt)
    ):
        return [arr.values]
    return []


def from_pa(arr: pa.Array) -> Array:
    """A quiver array over the buffers of an unsliced pyarrow array (no copies)."""
    assert arr.offset == 0, "test helper expects unsliced pyarrow arrays"
    pt = arr.type
    if isinstance(pt, pa.BaseExtensionType):
        storage = from_pa(arr.storage)
        return rebuild(storage, type=qtype(pt), null_count=arr.null_count)
    if pa.types.is_dictionary(pt):
        idx = from_pa(arr.indices)
        return make_array(
            qtype(pt), len(arr), idx.buffers, (), arr.null_count, 0, from_pa(arr.dictionary)
        )
    kids = _children(arr)
    own = len(arr.buffers()) - sum(len(k.buffers()) for k in kids)
    bufs = [_np(b) for b in arr.buffers()[:own]]
    if pa.types.is_null(pt) or pa.types.is_run_end_encoded(pt):
        bufs = []
    elif pa.types.is_union(pt):
        bufs = bufs[1:]  # pyarrow keeps an always-absent validity slot; V5 has none
    null_count = arr.null_count if not pa.types.is_union(pt) else 0
    return make_array(
        qtype(pt), len(arr), bufs, [from_pa(k) for k in kids], null_count, 0, None
    )


def rebuild(arr: Array, **changes: object) -> Array:
    """``arr`` with some parts replaced (buffers, children, length, offset, ...)."""
    parts = {
        "type": arr.type,
        "length": len(arr),
        "buffers": arr.buffers,
        "children": arr.children,
        "null_count": -1,
        "offset": arr.offset,
        "dictionary": arr.dictionary,
    }
    parts.update(changes)
    return make_array(**parts)  # type: ignore[arg-type]


def i32(*values: int) -> np.ndarray:
    return np.array(values, dtype="<i4").view(np.uint8)


def u8(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype=np.uint8)


def _views(*rows: tuple[int, bytes, int, int] | tuple[int, bytes]) -> np.ndarray:
    out = bytearray()
    for row in rows:
        if len(row) == 2:
            length, inline = row
            out += np.int32(length).tobytes() + inline.ljust(12, b"\x00")
        else:
            length, prefix, index, offset = row
            out += np.array([length], "<i4").tobytes() + prefix
            out += np.array([index, offset], "<i4").tobytes()
    return u8(bytes(out))


def _stream(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue().to_pybytes()


def _file(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue().to_pybytes()


TABLE = pa.table({"a": [1, 2, 3], "s": ["x", None, "zzz"], "l": [[1], [], None]})


CASES = all_type_arrays()


VERSIONS = [V4, V5]


def _quiver_batch(table: pa.Table) -> qv.RecordBatch:
    sink = pa.BufferOutputStream()
    with pipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    (batch,) = list(ipc.open_stream(sink.getvalue().to_pybytes()))
    return batch


def _windows(n: int) -> list[tuple[int, int]]:
    """Whole, byte-aligned and unaligned slices (and an empty one) of an n-row batch."""
    return [(0, n), (8, n - 8), (3, n - 5), (1, 1), (n, 0), (16, n - 16)]


def _plain_table(rows: int, nulls: bool) -> pa.Table:
    """A batch of the kinds the compiled plan handles inline, with or without nulls."""
    rng = np.random.default_rng(rows)
    mask = rng.random(rows) < 0.3 if nulls else None
    words = np.array([f"w{i}" * (i % 4) for i in range(50)], dtype=object)[
        rng.integers(0, 50, rows)
    ]
    return pa.table(
        {
            "i8": pa.array(rng.integers(-100, 100, rows).astype(np.int8), mask=mask),
            "i64": pa.array(rng.integers(0, 1 << 40, rows), mask=mask),
            "f32": pa.array(rng.random(rows).astype(np.float32), mask=mask),
            "b": pa.array(rng.random(rows) > 0.5, mask=mask),
            "s": pa.array(words, pa.string(), mask=mask),
            "ls": pa.array(words, pa.large_string(), mask=mask),
            "bin": pa.array([w.encode() for w in words], pa.binary(), mask=mask),
            "d128": pa.array(rng.integers(0, 1000, rows), mask=mask).cast(pa.decimal128(21, 2)),
            "ts": pa.array(rng.integers(0, 1 << 50, rows), pa.timestamp("us"), mask=mask),
            "fsb": pa.array([b"abcd"] * rows, pa.binary(4), mask=mask),
            "dict": pa.array(words, pa.string()).dictionary_encode(),
        }
    )


def _table(rows: int = 30_000) -> pa.Table:
    rng = np.random.default_rng(11)
    return pa.table(
        {
            "noise": rng.integers(0, 1 << 62, rows),  # incompressible: stored raw (-1)
            "small": rng.integers(0, 10, rows),  # compresses well
            "s": pa.array([f"w{k % 53}" if k % 7 else None for k in range(rows)]),
            "f": rng.random(rows),
            "empty": pa.array([None] * rows, pa.int32()),  # validity only, values empty
        }
    )


def _write_deferred(path: Path, table: pa.Table, codec: str, chunk: int | None = 10_000) -> None:
    opts = pipc.IpcWriteOptions(compression=codec)
    with pipc.new_file(path, table.schema, options=opts) as w:
        w.write_table(table, max_chunksize=chunk)


CONT = b"\xff\xff\xff\xff"


def frame(meta: bytes, body: bytes = b"") -> bytes:
    """An encapsulated message: marker, length, metadata padded to 8, body."""
    meta = meta + b"\0" * (-len(meta) % 8)
    return CONT + struct.pack("<i", len(meta)) + meta + body


EOS = CONT + b"\0\0\0\0"


EXT_KEYS = (b"ARROW:extension:name", b"ARROW:extension:metadata")


_INTERVALS = {
    "month_interval": "year_month",
    "day_time_interval": "day_time",
    "month_day_nano_interval": "month_day_nano",
}


def q_type(pt) -> qt.DataType:
    """The quiver type equal to pyarrow type ``pt``."""
    T = pa.types
    if isinstance(pt, pa.BaseExtensionType):
        # canonical types built into pyarrow (arrow.uuid, ...) serialize to b"" here
        serialize = getattr(pt, "__arrow_ext_serialize__", lambda: b"")
        return qt.ExtensionType(pt.extension_name, q_type(pt.storage_type), serialize())
    if T.is_dictionary(pt):
        return qt.DictionaryType(q_type(pt.index_type), q_type(pt.value_type), pt.ordered)
    if T.is_null(pt):
        return qt.null()
    if T.is_boolean(pt):
        return qt.bool_()
    if T.is_integer(pt):
        return qt.IntegerType(pt.bit_width, T.is_signed_integer(pt))
    if T.is_floating(pt):
        return qt.FloatingPointType(pt.bit_width)
    if T.is_decimal(pt):
        return qt.DecimalType(pt.bit_width, pt.precision, pt.scale)
    if T.is_date32(pt):
        return qt.date32()
    if T.is_date64(pt):
        return qt.date64()
    if T.is_time32(pt):
        return qt.time32(pt.unit)
    if T.is_time64(pt):
        return qt.time64(pt.unit)
    if T.is_timestamp(pt):
        return qt.timestamp(pt.unit, pt.tz)
    if T.is_duration(pt):
        return qt.duration(pt.unit)
    if str(pt) in _INTERVALS:
        return qt.IntervalType(_INTERVALS[str(pt)])
    simple = {
        T.is_binary: qt.binary(),
        T.is_string: qt.string(),
        T.is_large_binary: qt.large_binary(),
        T.is_large_string: qt.large_string(),
        T.is_binary_view: qt.binary_view(),
        T.is_string_view: qt.string_view(),
    }
    for pred, value in simple.items():
        if pred(pt):
            return value
    if T.is_fixed_size_binary(pt):
        return qt.fixed_size_binary(pt.byte_width)
    if T.is_map(pt):
        return qt.MapType(q_field(pt.field(0)), pt.keys_sorted)
    lists = {
        T.is_list: qt.ListType,
        T.is_large_list: qt.LargeListType,
        T.is_list_view: qt.ListViewType,
        T.is_large_list_view: qt.LargeListViewType,
    }
    for pred, cls in lists.items():
        if pred(pt):
            return cls(q_field(pt.value_field))
    if T.is_fixed_size_list(pt):
        return qt.FixedSizeListType(q_field(pt.value_field), pt.list_size)
    children = tuple(q_field(pt.field(i)) for i in range(pt.num_fields))
    if T.is_struct(pt):
        return qt.StructType(children)
    if T.is_union(pt):
        return qt.UnionType(pt.mode, children, tuple(pt.type_codes))
    if T.is_run_end_encoded(pt):
        return qt.RunEndEncodedType(children[0], children[1])
    raise AssertionError(f"no quiver mapping for pyarrow type {pt}")


def q_field(pf) -> qt.Field:
    """The quiver field pyarrow's field stands for (unregistered extensions re-wrapped)."""
    typ = q_type(pf.type)
    meta = dict(pf.metadata or {})
    if EXT_KEYS[0] in meta:
        ext = (meta[EXT_KEYS[0]].decode(), meta.get(EXT_KEYS[1], b""))
        # like Arrow C++, a dictionary-encoded extension wraps the dictionary type
        typ = qt.ExtensionType(ext[0], typ, ext[1])
        meta = {k: v for k, v in meta.items() if k not in EXT_KEYS}
    return qt.Field(pf.name, typ, pf.nullable, list(meta.items()) or None)


def q_schema(ps) -> qt.Schema:
    """pyarrow schema -> quiver schema."""
    return qt.Schema(tuple(q_field(f) for f in ps), list((ps.metadata or {}).items()) or None)


def dict_paths(schema: qt.Schema) -> list[tuple[int, ...]]:
    """Paths (through flatbuffer children) of every dictionary-encoded field."""
    out: list[tuple[int, ...]] = []

    def walk(f: qt.Field, path: tuple[int, ...]) -> None:
        typ = qt.storage_of(f.type)
        if isinstance(typ, qt.DictionaryType):
            out.append(path)
            typ = qt.storage_of(typ.value_type)
        for k, child in enumerate(typ.fields):
            walk(child, (*path, k))

    for i, f in enumerate(schema.fields):
        walk(f, (i,))
    return out


# --------------------------------------------------------------------------------------
# defaults of absent fields


def _field_table(b: Builder, type_code: int, type_table: int, **extra: int) -> int:
    entries = [(2, "<B", type_code), (3, "offset", type_table)]
    for index, value in extra.items():
        entries.append((int(index[1:]), "offset", value))
    return b.table(entries)


def _schema_bytes(build_fields) -> bytes:
    b = Builder()
    fields = b.create_offset_vector(build_fields(b))
    return b.finish(b.table([(1, "offset", fields)]))


CODECS = ["lz4_frame", "zstd"]


def _stored(parts) -> np.ndarray:
    return np.frombuffer(b"".join(bytes(memoryview(p)) for p in parts), np.uint8)


def _prefixed(n: int, payload: bytes) -> np.ndarray:
    return np.frombuffer(n.to_bytes(8, "little", signed=True) + payload, np.uint8)


def _ints(n: int = 100_000) -> np.ndarray:
    return np.arange(n, dtype=np.int64).view(np.uint8)


KIB = 1 << 10


#: sizes around the 64 KiB block boundaries, and odd ones
SIZES = [0, 1, 7, 64 * KIB - 1, 64 * KIB, 64 * KIB + 1, 3 * 64 * KIB + 5, 300_001]


def _data(kind: str, n: int, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    if kind == "random":
        return rng.integers(0, 256, n, dtype=np.uint8).tobytes()
    if kind == "text":
        words = [b"value-%d," % i for i in range(300)]
        return b"".join(words[i] for i in rng.integers(0, 300, n // 4 + 1))[:n]
    # half random, half compressible, in 48 KiB runs: frames of mixed raw and compressed blocks
    out = bytearray()
    while len(out) < n:
        out += _data("random" if len(out) // (48 * KIB) % 2 else "text", 48 * KIB, seed + len(out))
    return bytes(out[:n])


def _walk(payload: bytes, n: int) -> np.ndarray | None:
    return compression._lz4_walk(np.frombuffer(payload, np.uint8), n, library_fits=True)


def _decode(payload: bytes, n: int) -> np.ndarray:
    return compression.decompress_buffer("lz4", _prefixed(n, payload), max_uncompressed=1 << 30)


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


def _write_stats(table: pa.Table, batch_rows: int, **kw) -> bytes:
    kw.setdefault("statistics", True)
    sink = ipc.BufferOutputStream()
    with ipc.new_file(sink, table.schema, **kw) as writer:
        for batch in table.to_batches(max_chunksize=batch_rows):
            writer.write_batch(batch)
    return bytes(sink.getvalue())


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


# --------------------------------------------------------------------------------------
# gold files


def _gold_tensors() -> list[dict]:
    manifest = SUPPLEMENT / "manifest.json"
    if not manifest.exists():
        return []
    return [f for f in json.loads(manifest.read_text())["files"] if f["file"].endswith(".tensor")]


GOLD = _gold_tensors()


def _pa_read(data: bytes) -> np.ndarray:
    return pa.ipc.read_tensor(pa.BufferReader(data)).to_numpy()


def _pa_bytes(arr: np.ndarray, dim_names=None) -> bytes:
    sink = pa.BufferOutputStream()
    pa.ipc.write_tensor(pa.Tensor.from_numpy(arr, dim_names=dim_names), sink)
    return sink.getvalue().to_pybytes()


def _ours(obj) -> bytes:
    sink = io.BytesIO()
    n = it.write_tensor(obj, sink)
    out = sink.getvalue()
    assert n == len(out)
    return out


# --------------------------------------------------------------------------------------
# malformed input


def _message(header, body: bytes, body_length: int | None = None) -> bytes:
    blen = len(body) if body_length is None else body_length
    meta = md.encode_message(md.Message(md.V5, header, blen))
    return frame_message(meta, blen, alignment=64) + body


# --------------------------------------------------------------------------------------
# sparse tensors

DENSE = np.array(
    [[0, 1, 2, 0], [0, 0, 3, 0], [0, 4, 0, 5], [0, 0, 0, 0], [6, 0, 7, 8], [0, 9, 0, 0]],
    dtype=np.float64,
)


def _round_trip(st):
    sink = io.BytesIO()
    n = it.write_sparse_tensor(st, sink)
    data = sink.getvalue()
    assert n == len(data)
    return it.read_sparse_tensor(data), data


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


# --------------------------------------------------------------------------------------
# helpers


def fld(name: str, type_: dict[str, Any], children: list | None = None, nullable: bool = True,
        **extra: Any) -> dict[str, Any]:
    return {"name": name, "nullable": nullable, "type": type_, "children": children or [],
            **extra}


def doc(fields: list[dict], *batches: tuple[int, list[dict]], dictionaries: list | None = None,
        metadata: list | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "schema": {"fields": fields},
        "batches": [{"count": n, "columns": cols} for n, cols in batches],
    }
    if metadata is not None:
        out["schema"]["metadata"] = metadata
    if dictionaries is not None:
        out["dictionaries"] = dictionaries
    return out


def one_column(type_: dict, col: dict, children: list | None = None, **extra: Any) -> dict:
    return doc([fld("a", type_, children, **extra)], (col["count"], [{"name": "a", **col}]))


def values(d: dict) -> list[Any]:
    jf = parse_json(d)
    return array_values(jf.batches[0].columns[0])


def roundtrip(d: dict) -> dict:
    jf = parse_json(d)
    return json.loads(json.dumps(to_json(jf.schema, jf.batches)))


INT32 = {"name": "int", "bitWidth": 32, "isSigned": True}


INT64 = {"name": "int", "bitWidth": 64, "isSigned": True}


UTF8 = {"name": "utf8"}


# --------------------------------------------------------------------------------------
# dictionaries


def _dict_field(name: str, did: int, value: dict, children: list | None = None) -> dict:
    return fld(name, value, children, dictionary={
        "id": did, "indexType": {"name": "int", "bitWidth": 8, "isSigned": True},
        "isOrdered": False})


def _dict_batch(did: int, count: int, col: dict) -> dict:
    return {"id": did, "data": {"count": count, "columns": [{"name": f"DICT{did}",
                                                              "count": count, **col}]}}


def _jints(data: list, validity: list | None = None, type_: dict = INT32) -> dict:
    return one_column(type_, {"count": len(data), "VALIDITY": validity or [1] * len(data),
                              "DATA": data})


def same_as_pyarrow(pa_arr: pa.Array) -> list:
    """quiver's to_pylist over pyarrow's buffers, checked equal to pyarrow's."""
    got = from_pyarrow(pa_arr).to_pylist()
    assert got == pa_arr.to_pylist()
    return got


def _q(arr: pa.Array) -> qv.Array:
    return import_array(arr)
