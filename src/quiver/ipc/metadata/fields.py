"""IPC metadata, the schema half of the checked decoder: Schema.fbs ``Schema``, ``Field``,
``DictionaryEncoding``, ``KeyValue`` and the ``Type`` union -> quiver's fields, types and
:class:`~quiver.ipc.metadata.model.SchemaMessage`.

Together with :mod:`.decode` (messages, footers, tensors), this is the only code that turns
flatbuffer tables into schema objects.  Plain fields (no children, dictionary or custom
metadata, a simple type) are read with a few ``struct`` calls (:func:`plain_field`); the
rest, and anything odd, through :class:`~quiver.ipc.flatbuf.Table`, which explains.
Dictionary-encoded fields come back as :class:`~quiver.types.DictionaryType` with their ids
in ``SchemaMessage.dictionary_ids`` keyed by the path of child indices through
``Field.children``; extension types travel as their storage type plus the
``ARROW:extension:name`` / ``ARROW:extension:metadata`` field metadata.  No numpy here.

>>> from quiver import types as t
>>> from quiver.ipc.flatbuf import Reader
>>> from quiver.ipc.metadata.encode import encode_schema
>>> sm = SchemaMessage(t.schema([("a", t.int32()), ("b", t.list_(t.string()))]), {})
>>> decode_schema_table(Reader(encode_schema(sm)).root(), MetadataLimits()).schema.names
['a', 'b']
"""

from __future__ import annotations

from typing import Any

from ... import registry
from ... import types as t
from ...errors import ArrowError, LimitExceeded, NotSupported
from ...types import DataType, Field, KeyValueMetadata, Schema
from ..flatbuf import (
    BOOL,
    I16,
    I32,
    I64,
    U8,
    Table,
    fast_vtable,
    read_i16,
    read_i32,
    read_u32,
    target,
)
from .model import (
    EXTENSION_METADATA_KEY,
    EXTENSION_NAME_KEY,
    MetadataLimits,
    SchemaMessage,
)

# Schema.fbs: the Type union's codes, and the enums of its tables
_NULL, INT, FLOAT, BINARY, UTF8, _BOOL, DECIMAL, DATE, TIME, TIMESTAMP = range(1, 11)
INTERVAL, _LIST, _STRUCT, UNION, FIXED_BINARY, FIXED_LIST, MAP, DURATION = range(11, 19)
LARGE_BINARY, LARGE_UTF8, _LARGE_LIST, _RUN_END_ENCODED = range(19, 23)
_BINARY_VIEW, _UTF8_VIEW, _LIST_VIEW, _LARGE_LIST_VIEW = range(23, 27)

# names of the Type union members by code, from the registry rows (0 is NONE)
_CODE_NAMES = {code: name for row in registry.rows() for code, name in row.ipc_types}
_TYPE_NAMES: tuple[str, ...] = ("NONE", *(_CODE_NAMES[c] for c in range(1, max(_CODE_NAMES) + 1)))

TIME_UNITS = ("s", "ms", "us", "ns")
INTERVAL_UNITS = ("year_month", "day_time", "month_day_nano")
FLOAT_WIDTHS = (16, 32, 64)



def key_values(tbl: Table, i: int, limits: MetadataLimits) -> KeyValueMetadata | None:
    if not tbl.has(i):
        return None
    n = tbl.vector_len(i)
    if n > limits.max_metadata_items:
        raise LimitExceeded(
            f"expected at most {limits.max_metadata_items} custom metadata entries, found {n}",
            offset=tbl.reader.base_offset + tbl.pos,
        )
    items = []
    for kv in tbl.tables(i):
        key = kv.bytes(0)
        value = kv.bytes(1)
        items.append((key if key is not None else b"", value if value is not None else b""))
    if not items:
        return None
    return KeyValueMetadata(items)


def _enum(tbl: Table, i: int, default: int, names: tuple, expected: str) -> Any:
    """``names[u]`` for the int16 enum ``u`` in slot ``i`` (``default`` when absent);
    an error saying ``expected <expected>, found u`` when it is out of range."""
    u = tbl.get(i, I16, default)
    if not 0 <= u < len(names):
        raise tbl.reader.error(f"expected {expected}, found {u}", tbl.pos)
    return names[u]


def _time_unit(tbl: Table, i: int, default: int, what: str) -> str:
    return _enum(tbl, i, default, TIME_UNITS, f"a {what} TimeUnit 0..3")


def _valid(tbl: Table, what: str, make: Any, *args: Any) -> DataType:
    """``make(*args)``; the type's own refusal as ``expected a valid <what>: ...``."""
    try:
        return make(*args)
    except ArrowError as exc:
        raise tbl.reader.error(f"expected a valid {what}: {exc.reason}", tbl.pos) from None


def int_type(tbl: Table, what: str) -> DataType:
    width = tbl.get(0, I32, 0)
    if width not in (8, 16, 32, 64):
        raise tbl.reader.error(f"expected {what} bitWidth 8/16/32/64, found {width}", tbl.pos)
    return _INTEGER_TYPES[width, bool(tbl.get(1, BOOL, False))]


_INTEGER_TYPES = {(w, s): t.IntegerType(w, s) for w in (8, 16, 32, 64) for s in (False, True)}


def _need_children(children: tuple[Field, ...], n: int, name: str, tbl: Table) -> None:
    if len(children) != n:
        raise tbl.reader.error(
            f"expected {n} child field{'s' if n != 1 else ''} for {name}, found {len(children)}",
            tbl.pos,
        )


def decode_type(
    code: int, tt: Table | None, children: tuple[Field, ...], where: Table
) -> DataType:
    """The quiver type of a Type union member (``code``, table ``tt``) with its children."""
    if code == 0 or code >= len(_TYPE_NAMES):
        if code == 0:
            raise where.reader.error("expected a field type, found NONE", where.pos)
        raise NotSupported(
            f"Type union member {code} is not supported: expected a type of Schema.fbs "
            f"(1..{len(_TYPE_NAMES) - 1}); the data was written by a newer Arrow, upgrade quiver",
            offset=where.reader.base_offset + where.pos,
        )
    if tt is None:
        raise where.reader.error(
            f"expected a {_TYPE_NAMES[code]} type table, found none", where.pos
        )
    return _DECODERS[code](code, tt, children)


# -- the registry's "ipc_decode" piece: (Type code, type table, children) -> DataType ----


@registry.implements(
    "ipc_decode", t.NullType, t.BoolType, t.BinaryType, t.StringType, t.BinaryViewType,
    t.StringViewType,
)
def _decode_leaf(code: int, tt: Table, children: tuple[Field, ...]) -> DataType:
    if children:
        _need_children(children, 0, _TYPE_NAMES[code], tt)
    return _LEAF_TYPES[code]


@registry.implements("ipc_decode", t.IntegerType)
def _decode_int(code: int, tt: Table, children: tuple[Field, ...]) -> DataType:
    return int_type(tt, "Int")


@registry.implements("ipc_decode", t.FloatingPointType)
def _decode_float(code: int, tt: Table, children: tuple[Field, ...]) -> DataType:
    return t.FloatingPointType(_enum(tt, 0, 0, FLOAT_WIDTHS, "a FloatingPoint precision 0..2"))


@registry.implements("ipc_decode", t.DecimalType)
def _decode_decimal(code: int, tt: Table, children: tuple[Field, ...]) -> DataType:
    width = tt.get(2, I32, 128)
    precision = tt.get(0, I32, 0)
    scale = tt.get(1, I32, 0)
    return _valid(tt, "Decimal", t.DecimalType, width, precision, scale)


@registry.implements("ipc_decode", t.DateType)
def _decode_date(code: int, tt: Table, children: tuple[Field, ...]) -> DataType:
    return t.DateType(_enum(tt, 0, 1, ("day", "ms"), "a DateUnit 0 or 1"))


@registry.implements("ipc_decode", t.TimeType)
def _decode_time(code: int, tt: Table, children: tuple[Field, ...]) -> DataType:
    unit = _time_unit(tt, 0, 1, "Time")
    return _valid(tt, "Time", t.TimeType, tt.get(1, I32, 32), unit)


@registry.implements("ipc_decode", t.TimestampType)
def _decode_timestamp(code: int, tt: Table, children: tuple[Field, ...]) -> DataType:
    return t.TimestampType(_time_unit(tt, 0, 0, "Timestamp"), tt.string(1))


@registry.implements("ipc_decode", t.IntervalType)
def _decode_interval(code: int, tt: Table, children: tuple[Field, ...]) -> DataType:
    return t.IntervalType(_enum(tt, 0, 0, INTERVAL_UNITS, "an IntervalUnit 0..2"))


@registry.implements("ipc_decode", t.DurationType)
def _decode_duration(code: int, tt: Table, children: tuple[Field, ...]) -> DataType:
    return t.DurationType(_time_unit(tt, 0, 1, "Duration"))


@registry.implements("ipc_decode", t.FixedSizeBinaryType)
def _decode_fixed_binary(code: int, tt: Table, children: tuple[Field, ...]) -> DataType:
    width = tt.get(0, I32, 0)
    if width < 0:
        raise tt.reader.error(
            f"expected a non-negative FixedSizeBinary byteWidth, found {width}", tt.pos
        )
    return t.FixedSizeBinaryType(width)


@registry.implements(
    "ipc_decode", t.ListType, t.LargeListType, t.ListViewType, t.LargeListViewType
)
def _decode_list(code: int, tt: Table, children: tuple[Field, ...]) -> DataType:
    _need_children(children, 1, _TYPE_NAMES[code], tt)
    return _CODE_CLASSES[code](children[0])


@registry.implements("ipc_decode", t.FixedSizeListType)
def _decode_fixed_list(code: int, tt: Table, children: tuple[Field, ...]) -> DataType:
    _need_children(children, 1, "FixedSizeList", tt)
    size = tt.get(0, I32, 0)
    if size < 0:
        raise tt.reader.error(
            f"expected a non-negative FixedSizeList listSize, found {size}", tt.pos
        )
    return t.FixedSizeListType(children[0], size)


@registry.implements("ipc_decode", t.StructType)
def _decode_struct(code: int, tt: Table, children: tuple[Field, ...]) -> DataType:
    return t.StructType(children)


@registry.implements("ipc_decode", t.MapType)
def _decode_map(code: int, tt: Table, children: tuple[Field, ...]) -> DataType:
    _need_children(children, 1, "Map", tt)
    entries = children[0]
    et = entries.type
    if not isinstance(et, t.StructType) or len(et.children) != 2:
        raise tt.reader.error(
            f"expected a Map entries field of struct<key, value>, found {et}", tt.pos
        )
    return t.MapType(entries, tt.get(0, BOOL, False))


@registry.implements("ipc_decode", t.UnionType)
def _decode_union(code: int, tt: Table, children: tuple[Field, ...]) -> DataType:
    mode = _enum(tt, 0, 0, ("sparse", "dense"), "a UnionMode 0 or 1")
    ids = tt.scalars(1, "i")
    codes = tuple(range(len(children))) if ids is None else ids
    return _valid(tt, "Union", t.UnionType, mode, children, codes)


@registry.implements("ipc_decode", t.RunEndEncodedType)
def _decode_ree(code: int, tt: Table, children: tuple[Field, ...]) -> DataType:
    _need_children(children, 2, "RunEndEncoded", tt)
    return _valid(tt, "RunEndEncoded", t.RunEndEncodedType, children[0], children[1])


# Type union code -> its decoder, from the registry rows (a row's codes without a decoder
# fail here, at import, naming the class)
_DECODERS: dict[int, Any] = {
    code: registry.lookup("ipc_decode", row.cls)
    for row in registry.rows()
    for code, _name in row.ipc_types
}


_LEAF_TYPES: dict[int, DataType] = {
    _NULL: t.NullType(),
    BINARY: t.BinaryType(False),
    UTF8: t.StringType(False),
    _BOOL: t.BoolType(),
    LARGE_BINARY: t.BinaryType(True),
    LARGE_UTF8: t.StringType(True),
    _BINARY_VIEW: t.BinaryViewType(),
    _UTF8_VIEW: t.StringViewType(),
}

# Type union code -> the DataType class its registry row names
_CODE_CLASSES: dict[int, type] = {
    code: row.cls for row in registry.rows() for code, _name in row.ipc_types
}


def _extension(
    typ: DataType, metadata: KeyValueMetadata, ft: Table
) -> tuple[DataType, KeyValueMetadata | None]:
    """Wrap ``typ`` in the ExtensionType that the field metadata names; drop those keys."""
    ext_name = metadata.get(EXTENSION_NAME_KEY) or b""
    serialized = metadata.get(EXTENSION_METADATA_KEY) or b""
    try:
        ext_str = ext_name.decode("utf-8")
    except UnicodeDecodeError:
        raise ft.reader.error(
            "expected a UTF-8 extension name, found invalid bytes", ft.pos
        ) from None
    rest = metadata.without(EXTENSION_NAME_KEY, EXTENSION_METADATA_KEY)
    return t.ExtensionType(ext_str, typ, serialized), (rest if len(rest) else None)


_FIELD_SLOTS = tuple(getattr(Field, n).__set__ for n in ("name", "type", "nullable", "metadata"))


def _new_field(
    name: str, typ: DataType, nullable: bool, metadata: KeyValueMetadata | None
) -> Field:
    # the decoder's values already have the types Field.__post_init__ checks for; setting
    # the slots directly skips the generic frozen __init__ (a schema of many fields)
    s0, s1, s2, s3 = _FIELD_SLOTS
    f = object.__new__(Field)
    s0(f, name)
    s1(f, typ)
    s2(f, bool(nullable))
    s3(f, metadata)
    return f


def _plain_string(buf: Any, size: int, pos: int) -> str | None:
    """The UTF-8 string referenced at ``pos``, or None when out of bounds or invalid."""
    s = target(buf, size, pos)
    if s is None:
        return None
    n = read_u32(buf, s)[0]
    if n > size - s - 4:
        return None
    try:
        return str(buf[s + 4 : s + 4 + n], "utf-8")
    except UnicodeDecodeError:
        return None


def plain_field(buf: Any, size: int, pos: int) -> Field | None:
    """The Field table at ``pos`` when it is plain: no children, no dictionary, no custom
    metadata, and a parameterless, Int, FloatingPoint, Date or Timestamp type, every
    reference and scalar in bounds and valid.  None otherwise: the general decoder
    (``_SchemaDecoder.field``) then decodes it or explains what is wrong."""
    fields = fast_vtable(buf, size, pos, 7)
    if fields is None:
        return None
    o_name, o_null, o_code, o_type, o_dict, o_children, o_meta, tsize = fields
    if (
        o_dict
        or o_meta
        or not o_code
        or not o_type
        or o_name + 4 > tsize
        or o_null + 1 > tsize
        or o_code + 1 > tsize
        or o_type + 4 > tsize
        or o_children + 4 > tsize
    ):
        return None
    if o_children:
        vec = target(buf, size, pos + o_children)
        if vec is None or read_u32(buf, vec)[0]:
            return None
    name = _plain_string(buf, size, pos + o_name) if o_name else ""
    tt = target(buf, size, pos + o_type)
    if name is None or tt is None:
        return None
    code = buf[pos + o_code]
    typ = _LEAF_TYPES.get(code)
    if typ is None:
        typ = _plain_type(buf, size, code, tt)
        if typ is None:
            return None
    return _new_field(name, typ, bool(o_null and buf[pos + o_null]), None)


def _plain_type(buf: Any, size: int, code: int, tt: int) -> DataType | None:
    """The Int, FloatingPoint, Date or Timestamp type of the table at ``tt`` (as
    ``decode_type`` reads it), or None."""
    if code not in (INT, FLOAT, DATE, TIMESTAMP):
        return None
    fields = fast_vtable(buf, size, tt, 2)
    if fields is None:
        return None
    o0, o1, tsize = fields
    if code == INT:
        if o0 + 4 > tsize or o1 + 1 > tsize:
            return None
        width = read_i32(buf, tt + o0)[0] if o0 else 0
        if width not in (8, 16, 32, 64):
            return None
        return _INTEGER_TYPES[width, bool(o1 and buf[tt + o1])]
    if o0 + 2 > tsize:
        return None
    if code == FLOAT:
        p = read_i16(buf, tt + o0)[0] if o0 else 0
        return t.FloatingPointType(FLOAT_WIDTHS[p]) if 0 <= p < 3 else None
    if code == DATE:
        u = read_i16(buf, tt + o0)[0] if o0 else 1
        return t.DateType("day" if u == 0 else "ms") if u in (0, 1) else None
    u = read_i16(buf, tt + o0)[0] if o0 else 0  # Timestamp
    if not 0 <= u < 4 or o1 + 4 > tsize:
        return None
    tz = _plain_string(buf, size, tt + o1) if o1 else None
    if o1 and tz is None:
        return None
    try:
        return t.TimestampType(TIME_UNITS[u], tz)
    except ArrowError:
        return None


class _SchemaDecoder:
    __slots__ = ("dictionary_ids", "limits", "nfields")

    def __init__(self, limits: MetadataLimits) -> None:
        self.limits = limits
        self.nfields = 0
        self.dictionary_ids: dict[tuple[int, ...], int] = {}

    def fields(self, tbl: Table, i: int, path: tuple[int, ...], names: str) -> tuple[Field, ...]:
        n = tbl.vector_len(i)
        self.nfields += n
        if self.nfields > self.limits.max_fields:
            raise LimitExceeded(
                f"expected at most {self.limits.max_fields} fields in a schema, found more "
                f"(raise MetadataLimits.max_fields if the source is trusted)",
                offset=tbl.reader.base_offset + tbl.pos,
                field_path=names or None,
            )
        if n and len(path) >= self.limits.max_depth:
            raise LimitExceeded(
                f"expected fields nested at most {self.limits.max_depth} deep, found deeper",
                offset=tbl.reader.base_offset + tbl.pos,
                field_path=names or None,
            )
        if not n:
            return ()
        reader = tbl.reader
        depth = tbl.depth + 1
        # plain fields (no children, dictionary or metadata; a simple type) decode with a
        # few struct reads; the rest, and anything odd, through Table (which explains)
        fast = depth + 1 <= reader.max_depth
        out = []
        for k, pos in enumerate(tbl._refs(i) or ()):
            f = plain_field(reader.buf, reader.size, pos) if fast else None
            if f is None:
                f = self.field(Table(reader, pos, depth), (*path, k), names)
            out.append(f)
        return tuple(out)

    def field(self, ft: Table, path: tuple[int, ...], parent: str) -> Field:
        name = ft.string(0)
        if name is None:
            name = ""
        names = f"{parent}.{name}" if parent else name
        try:
            nullable = ft.get(1, BOOL, False)
            code = ft.get(2, U8, 0)
            present = ft.offsets  # vtable entries: 0 for an absent field
            count = len(present)
            children = self.fields(ft, 5, path, names) if count > 5 and present[5] else ()
            metadata = key_values(ft, 6, self.limits) if count > 6 and present[6] else None
            leaf = _LEAF_TYPES.get(code)
            if leaf is not None and not children and ft.ref(3):
                # parameterless types: their (empty) table need not be read
                typ = leaf
            else:
                typ = decode_type(code, ft.table(3) if code else None, children, ft)
            if count > 4 and present[4]:
                de = ft.table(4)
                if de is not None:
                    typ = self.dictionary(de, typ, path)
            # like Arrow C++: a dictionary-encoded extension field is an extension type
            # whose storage is the dictionary type
            if metadata is not None and metadata.get(EXTENSION_NAME_KEY) is not None:
                typ, metadata = _extension(typ, metadata, ft)
            return _new_field(name, typ, nullable, metadata)
        except ArrowError as exc:
            raise exc.locate(field_path=names or "<unnamed>") from None

    def dictionary(self, de: Table, value_type: DataType, path: tuple[int, ...]) -> DataType:
        dict_id = de.get(0, I64, 0)
        it = de.table(1)
        index_type = t.IntegerType(32, True) if it is None else int_type(it, "dictionary index")
        kind = de.get(3, I16, 0)
        if kind != 0:
            raise NotSupported(
                f"dictionaryKind {kind} is not supported: expected DenseArray (0)",
                offset=de.reader.base_offset + de.pos,
            )
        self.dictionary_ids[path] = dict_id
        return t.DictionaryType(index_type, value_type, de.get(2, BOOL, False))


def decode_schema_table(tbl: Table, limits: MetadataLimits) -> SchemaMessage:
    endian = tbl.get(0, I16, 0)
    if endian not in (0, 1):
        raise tbl.reader.error(f"expected Endianness 0 or 1, found {endian}", tbl.pos)
    dec = _SchemaDecoder(limits)
    try:
        fields = dec.fields(tbl, 1, (), "")
    except RecursionError:
        raise LimitExceeded(
            "expected a schema shallow enough for Python's recursion limit, found deeper "
            "nesting (lower MetadataLimits.max_depth)",
            offset=tbl.reader.base_offset + tbl.pos,
        ) from None
    metadata = key_values(tbl, 2, limits)
    features = tbl.scalars(3, "q") or ()
    return SchemaMessage(
        Schema(fields, metadata),
        dec.dictionary_ids,
        "little" if endian == 0 else "big",
        tuple(features),
    )
