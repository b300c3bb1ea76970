"""IPC metadata helpers shared by the ipc.metadata tests."""

from __future__ import annotations

import struct

import pyarrow as pa

from quiver import types as qt
from quiver.ipc.flatbuf import Builder

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
