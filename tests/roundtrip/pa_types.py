"""Test helpers: map quiver types to pyarrow types and back, and wrap pyarrow arrays'
buffers as quiver arrays (zero-copy) so that quiver's readers can be checked against
pyarrow's.  pyarrow is a test oracle only; quiver's own code never imports it.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from quiver import types as t
from quiver.array import make_array
from quiver.array.base import Array
from quiver.layout import layout_of


def _pa_field(f: t.Field) -> pa.Field:
    md = None if f.metadata is None else f.metadata.items()
    return pa.field(f.name, to_pyarrow_type(f.type), f.nullable, metadata=md and dict(md))


def to_pyarrow_type(qt: t.DataType) -> pa.DataType:
    """The pyarrow type equal to a quiver type (extension types: their storage type,
    except ``arrow.uuid`` which maps to ``pa.uuid()``)."""
    if isinstance(qt, t.NullType):
        return pa.null()
    if isinstance(qt, t.BoolType):
        return pa.bool_()
    if isinstance(qt, t.IntegerType):
        return pa.from_numpy_dtype(np.dtype(f"{'i' if qt.signed else 'u'}{qt.width // 8}"))
    if isinstance(qt, t.FloatingPointType):
        return {16: pa.float16(), 32: pa.float32(), 64: pa.float64()}[qt.width]
    if isinstance(qt, t.DecimalType):
        make = {32: pa.decimal32, 64: pa.decimal64, 128: pa.decimal128, 256: pa.decimal256}
        return make[qt.width](qt.precision, qt.scale)
    if isinstance(qt, t.DateType):
        return pa.date32() if qt.unit == "day" else pa.date64()
    if isinstance(qt, t.TimeType):
        return pa.time32(qt.unit) if qt.width == 32 else pa.time64(qt.unit)
    if isinstance(qt, t.TimestampType):
        return pa.timestamp(qt.unit, tz=qt.tz)
    if isinstance(qt, t.DurationType):
        return pa.duration(qt.unit)
    if isinstance(qt, t.IntervalType):
        if qt.unit == "month_day_nano":
            return pa.month_day_nano_interval()
        # pyarrow has no Python factory for these two; import them through the C data
        # interface instead
        from quiver.interop import export_schema

        return pa.DataType._import_from_c_capsule(export_schema(qt))
    if isinstance(qt, t.BinaryType):
        return pa.large_binary() if qt.large else pa.binary()
    if isinstance(qt, t.StringType):
        return pa.large_string() if qt.large else pa.string()
    if isinstance(qt, t.BinaryViewType):
        return pa.binary_view()
    if isinstance(qt, t.StringViewType):
        return pa.string_view()
    if isinstance(qt, t.FixedSizeBinaryType):
        return pa.binary(qt.width)
    if isinstance(qt, t.ListType):
        return pa.list_(_pa_field(qt.value_field))
    if isinstance(qt, t.LargeListType):
        return pa.large_list(_pa_field(qt.value_field))
    if isinstance(qt, t.ListViewType):
        return pa.list_view(_pa_field(qt.value_field))
    if isinstance(qt, t.LargeListViewType):
        return pa.large_list_view(_pa_field(qt.value_field))
    if isinstance(qt, t.FixedSizeListType):
        return pa.list_(_pa_field(qt.value_field), qt.list_size)
    if isinstance(qt, t.StructType):
        return pa.struct([_pa_field(f) for f in qt.fields])
    if isinstance(qt, t.MapType):
        return pa.map_(_pa_field(qt.key_field), _pa_field(qt.item_field), qt.keys_sorted)
    if isinstance(qt, t.UnionType):
        return pa.union([_pa_field(f) for f in qt.fields], qt.mode, list(qt.type_codes))
    if isinstance(qt, t.DictionaryType):
        return pa.dictionary(to_pyarrow_type(qt.index_type), to_pyarrow_type(qt.value_type),
                             qt.ordered)
    if isinstance(qt, t.RunEndEncodedType):
        return pa.run_end_encoded(to_pyarrow_type(qt.run_end_type),
                                  to_pyarrow_type(qt.value_type))
    if isinstance(qt, t.ExtensionType):
        if qt.extension_name == "arrow.uuid":
            return pa.uuid()
        return to_pyarrow_type(qt.storage_type)
    raise NotImplementedError(f"no pyarrow mapping for {qt}")


def _q_field(f: pa.Field) -> t.Field:
    md = None if f.metadata is None else list(f.metadata.items())
    return t.field(f.name, from_pyarrow_type(f.type), f.nullable, md)


def from_pyarrow_type(pt: pa.DataType) -> t.DataType:
    """The quiver type equal to a pyarrow type."""
    import pyarrow.types as pat

    simple = {
        pa.null(): t.null(), pa.bool_(): t.bool_(), pa.float16(): t.float16(),
        pa.float32(): t.float32(), pa.float64(): t.float64(), pa.date32(): t.date32(),
        pa.date64(): t.date64(), pa.binary(): t.binary(), pa.string(): t.string(),
        pa.large_binary(): t.large_binary(), pa.large_string(): t.large_string(),
        pa.binary_view(): t.binary_view(), pa.string_view(): t.string_view(),
        pa.month_day_nano_interval(): t.month_day_nano_interval(),
    }
    for k, v in simple.items():
        if pt == k:
            return v
    if pt.id == 21:  # month_interval (no pyarrow.types predicate)
        return t.month_interval()
    if pt.id == 22:  # day_time_interval
        return t.day_time_interval()
    if pat.is_integer(pt):
        return t.IntegerType(pt.bit_width, pat.is_signed_integer(pt))
    if pat.is_decimal(pt):
        return t.DecimalType(pt.bit_width, pt.precision, pt.scale)
    if pat.is_time32(pt):
        return t.time32(pt.unit)
    if pat.is_time64(pt):
        return t.time64(pt.unit)
    if pat.is_timestamp(pt):
        return t.timestamp(pt.unit, pt.tz)
    if pat.is_duration(pt):
        return t.duration(pt.unit)
    if pat.is_fixed_size_binary(pt):
        return t.binary(pt.byte_width)
    if isinstance(pt, pa.BaseExtensionType):
        if pt.extension_name == "arrow.uuid":
            return t.uuid()
        return t.extension(pt.extension_name, from_pyarrow_type(pt.storage_type),
                           pt.__arrow_ext_serialize__())
    if pat.is_map(pt):
        return t.map_(_q_field(pt.key_field), _q_field(pt.item_field), pt.keys_sorted)
    if pat.is_list(pt):
        return t.list_(_q_field(pt.value_field))
    if pat.is_large_list(pt):
        return t.large_list(_q_field(pt.value_field))
    if pat.is_list_view(pt):
        return t.list_view(_q_field(pt.value_field))
    if pat.is_large_list_view(pt):
        return t.large_list_view(_q_field(pt.value_field))
    if pat.is_fixed_size_list(pt):
        return t.list_(_q_field(pt.value_field), pt.list_size)
    if pat.is_struct(pt):
        return t.struct([_q_field(pt.field(i)) for i in range(pt.num_fields)])
    if pat.is_union(pt):
        fields = [_q_field(pt.field(i)) for i in range(pt.num_fields)]
        return t.union(fields, pt.mode, list(pt.type_codes))
    if pat.is_dictionary(pt):
        return t.dictionary(from_pyarrow_type(pt.index_type), from_pyarrow_type(pt.value_type),
                            pt.ordered)
    if pat.is_run_end_encoded(pt):
        return t.run_end_encoded(from_pyarrow_type(pt.run_end_type),
                                 from_pyarrow_type(pt.value_type))
    raise NotImplementedError(f"no quiver mapping for {pt}")


def _np(b: pa.Buffer | None) -> np.ndarray | None:
    return None if b is None else np.frombuffer(b, dtype=np.uint8)


def _unslice(child: Array, parent_offset: int) -> Array:
    """pyarrow slices struct / sparse union children with the parent; quiver does not."""
    return make_array(child.type, len(child) + parent_offset, child.buffers, child.children,
                      -1, child.offset - parent_offset, child.dictionary)


def from_pyarrow(arr: pa.Array) -> Array:
    """A quiver array sharing a pyarrow array's buffers (no copies, no validation)."""
    qt = from_pyarrow_type(arr.type)
    pt = arr.type
    if isinstance(pt, pa.BaseExtensionType):
        storage = from_pyarrow(arr.storage)
        return make_array(qt, len(storage), storage.buffers, storage.children, -1,
                          storage.offset, storage.dictionary)
    st = t.storage_of(qt)
    lay = layout_of(qt)
    bufs = arr.buffers()
    if isinstance(st, t.UnionType):
        bufs = bufs[1:]  # pyarrow keeps the pre-V5 validity slot (always None)
    if lay.variadic:
        own = [_np(b) for b in bufs]
    else:
        own = [_np(b) for b in bufs[: lay.num_buffers]]
    kids: list[Array] = []
    dictionary = None
    if isinstance(st, (t.ListType, t.LargeListType, t.MapType, t.ListViewType,
                       t.LargeListViewType, t.FixedSizeListType)):
        kids = [from_pyarrow(arr.values)]
    elif isinstance(st, t.StructType):
        kids = [_unslice(from_pyarrow(arr.field(i)), arr.offset) for i in range(pt.num_fields)]
    elif isinstance(st, t.UnionType):
        if st.mode == "sparse":
            kids = [_unslice(from_pyarrow(arr.field(i)), arr.offset)
                    for i in range(pt.num_fields)]
        else:
            kids = [from_pyarrow(arr.field(i)) for i in range(pt.num_fields)]
    elif isinstance(st, t.RunEndEncodedType):
        kids = [from_pyarrow(arr.run_ends), from_pyarrow(arr.values)]
        own = []
    elif isinstance(st, t.DictionaryType):
        own = [_np(b) for b in arr.indices.buffers()]
        dictionary = from_pyarrow(arr.dictionary)
    return make_array(qt, len(arr), own, kids, -1, arr.offset, dictionary)
