"""Helpers shared by several unit-test files: pyarrow arrays rebuilt as quiver arrays
through their raw buffers, and small array checks."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

import quiver as qv
import quiver.types as t
from quiver.array import make_array
from quiver.array.base import Array
from quiver.interop import import_array
from tests.roundtrip.pa_types import from_pyarrow

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


def same_as_pyarrow(pa_arr: pa.Array) -> list:
    """quiver's to_pylist over pyarrow's buffers, checked equal to pyarrow's."""
    got = from_pyarrow(pa_arr).to_pylist()
    assert got == pa_arr.to_pylist()
    return got


def _q(arr: pa.Array) -> qv.Array:
    return import_array(arr)
