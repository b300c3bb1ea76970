"""Reading the Arrow integration JSON format into quiver objects.

Implements the reader side of "JSON test data format" (Integration.rst, section
``format_json_integration``) as archery's generator and the arrow-testing gold files use it
(see ``JSON_FORMAT_NOTES.md``): the schema (every type, dictionaries, custom and extension
metadata), record batches and dictionary batches.

Theory of operation: the schema is parsed once into a tree of :class:`FieldNode` (a quiver
:class:`~quiver.types.Field`, the JSON dictionary id when the field is dictionary-encoded,
and the child nodes of the value type).  Columns are then loaded by one walk over that tree,
driven by :func:`quiver.layout.layout_of`: each buffer kind of the layout has one leaf
decoder, each child rule one way to find the children's lengths.  Dictionaries are decoded
lazily, by id, the first time a column needs them, so nested dictionaries (a dictionary whose
values hold dictionary-encoded children) resolve in any order.

Every array is built with :func:`quiver.array.make_array`; buffers are ``numpy.uint8`` arrays.
Malformed JSON raises :class:`~quiver.errors.MetadataError` (schema) or
:class:`~quiver.errors.FormatError` (data) naming the field path, never ``KeyError`` and
friends.

>>> doc = {"schema": {"fields": [{"name": "a", "nullable": True, "children": [],
...         "type": {"name": "int", "bitWidth": 32, "isSigned": True}}]},
...        "batches": [{"count": 2, "columns": [{"name": "a", "count": 2,
...         "VALIDITY": [1, 0], "DATA": [7, 0]}]}]}
>>> jf = parse_json(doc)
>>> str(jf.schema.field("a").type), jf.batches[0].num_rows
('int32', 2)
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import registry
from .. import types as t
from ..array import make_array
from ..array.base import Array
from ..array.validate import validate_array
from ..batch import RecordBatch
from ..buffers import pack_bits
from ..errors import ArrowError, FormatError, MetadataError, NotSupported
from ..layout import children_problem, layout_of, storage_numpy_dtype

EXTENSION_NAME = b"ARROW:extension:name"
EXTENSION_METADATA = b"ARROW:extension:metadata"

_TIME_UNITS = {"SECOND": "s", "MILLISECOND": "ms", "MICROSECOND": "us", "NANOSECOND": "ns"}
_DATE_UNITS = {"DAY": "day", "MILLISECOND": "ms"}
_INTERVAL_UNITS = {
    "YEAR_MONTH": "year_month",
    "DAY_TIME": "day_time",
    "MONTH_DAY_NANO": "month_day_nano",
}
_PRECISIONS = {"HALF": 16, "SINGLE": 32, "DOUBLE": 64}
#: the largest ``count`` accepted: JSON test files are small, and a huge count on a type
#: without data (null, run-end encoded) would only make later walks allocate without bound
MAX_COUNT = 2**31 - 1
#: the deepest type nesting accepted (as quiver's IPC metadata decoder), so that every later
#: walk stays far from Python's recursion limit
MAX_DEPTH = 64

#: numpy record layouts of the two interval types that are not plain integers
DAY_TIME_DTYPE = np.dtype([("days", "<i4"), ("milliseconds", "<i4")])
MONTH_DAY_NANO_DTYPE = np.dtype([("months", "<i4"), ("days", "<i4"), ("nanoseconds", "<i8")])
#: a 16-byte binary view, inline form and reference form
VIEW_INLINE_DTYPE = np.dtype([("size", "<i4"), ("inlined", "V12")])
VIEW_REF_DTYPE = np.dtype([("size", "<i4"), ("prefix", "V4"), ("buffer_index", "<i4"),
                           ("offset", "<i4")])


# --------------------------------------------------------------------------------------
# results


@dataclass(frozen=True, slots=True)
class FieldNode:
    """One schema field as read from JSON.

    ``field`` is the quiver field (its type includes the dictionary and extension wrappers),
    ``dictionary_id`` the JSON dictionary id when the field is dictionary-encoded, and
    ``children`` the nodes of the value type's child fields.
    """

    field: t.Field
    dictionary_id: int | None
    children: tuple[FieldNode, ...]


@dataclass(frozen=True, slots=True)
class JsonBatch:
    """A record batch when :mod:`quiver.batch` is not available: schema, columns, rows."""

    schema: t.Schema
    columns: tuple[Array, ...]
    num_rows: int

    @property
    def num_columns(self) -> int:
        """How many columns the batch has."""
        return len(self.columns)

    def column(self, i: int) -> Array:
        """The column at position ``i``."""
        return self.columns[i]


@dataclass(frozen=True, slots=True)
class JsonFile:
    """The content of one integration JSON file.

    ``batches`` are :class:`quiver.batch.RecordBatch` objects when that module exists (else
    :class:`JsonBatch`); ``dictionaries`` maps the JSON dictionary ids to decoded arrays;
    ``nodes`` is the parsed schema tree (dictionary ids included).
    """

    schema: t.Schema
    batches: list[Any]
    dictionaries: dict[int, Array]
    nodes: tuple[FieldNode, ...]


def make_batch(schema: t.Schema, columns: Sequence[Array], num_rows: int) -> Any:
    """A quiver RecordBatch of ``columns`` when available, else a :class:`JsonBatch`."""
    try:
        return RecordBatch(schema, list(columns), num_rows=num_rows)
    except TypeError:
        pass
    if not columns:
        return JsonBatch(schema, (), num_rows)
    return RecordBatch(schema, list(columns))


# --------------------------------------------------------------------------------------
# small checked accessors


def _need(obj: Any, key: str, kind: type | tuple[type, ...], where: str, what: str) -> Any:
    if not isinstance(obj, dict):
        raise FormatError(f"expected a JSON object for {what}, found {type(obj).__name__}",
                          field_path=where or None)
    if key not in obj:
        raise FormatError(f"expected key {key!r} in {what}, found keys {sorted(obj)}",
                          field_path=where or None)
    value = obj[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise FormatError(f"expected {what} key {key!r} to be {names}, found {value!r:.60}",
                          field_path=where or None)
    return value


_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1


def _int32(obj: Any, key: str, path: str, what: str, default: int | None = None) -> int:
    """An int parameter of a type, bounded like its Schema.fbs field (a 32-bit ``int``)."""
    if default is not None and key not in obj:
        return default
    value = _need(obj, key, int, path, what)
    if not _INT32_MIN <= value <= _INT32_MAX:
        raise MetadataError(f"expected {what} key {key!r} in -2**31..2**31-1 (an int32), "
                            f"found {value}", field_path=path or None)
    return value


def _schema_error(exc: ArrowError, path: str) -> MetadataError:
    return MetadataError(exc.reason, field_path=path)


# --------------------------------------------------------------------------------------
# schema


def metadata_from_json(value: Any, where: str = "") -> t.KeyValueMetadata | None:
    """Parse a JSON ``metadata`` list of ``{"key", "value"}`` objects (order and duplicates
    kept); ``None`` when absent or empty."""
    if value is None:
        return None
    if not isinstance(value, list):
        raise MetadataError(f"expected metadata as a list, found {type(value).__name__}",
                            field_path=where or None)
    pairs = []
    for item in value:
        key = _need(item, "key", str, where, "metadata entry")
        val = _need(item, "value", str, where, "metadata entry")
        pairs.append((key, val))
    return t.KeyValueMetadata(pairs) if pairs else None


def _unit(table: dict[str, str], value: Any, what: str, path: str) -> str:
    if not isinstance(value, str) or value not in table:
        raise MetadataError(f"expected a {what} unit in {sorted(table)}, found {value!r}",
                            field_path=path)
    return table[value]


def type_from_json(obj: Any, children: Sequence[t.Field], path: str = "") -> t.DataType:
    """Build a quiver type from a JSON ``type`` object and the already parsed children."""
    name = _need(obj, "name", str, path, "type")
    try:
        return _type_from_json(name, obj, tuple(children), path)
    except MetadataError:
        raise
    except ArrowError as exc:
        raise _schema_error(exc, path) from None
    except (TypeError, ValueError):
        # a parameter of the wrong JSON kind that a type constructor could not take
        raise MetadataError(f"expected valid parameters for type {name!r}, found "
                            f"{json.dumps(obj)[:80]}", field_path=path) from None


def _n_children(children: tuple[t.Field, ...], n: int, name: str, path: str) -> None:
    if len(children) != n:
        raise MetadataError(f"expected {n} child field(s) for {name}, found {len(children)}",
                            field_path=path)


def _type_from_json(
    name: str, obj: dict[str, Any], children: tuple[t.Field, ...], path: str
) -> t.DataType:
    decode = _DECODERS.get(name)
    if decode is None:
        raise MetadataError(f"expected a known type name, found {name!r}", field_path=path)
    return decode(name, obj, children, path)


# -- the registry's "json_decode" piece: (name, type object, children, path) -> DataType


@registry.implements(
    "json_decode", t.NullType, t.BoolType, t.StringType, t.BinaryType, t.StringViewType,
    t.BinaryViewType,
)
def _simple_from_json(
    name: str, obj: dict[str, Any], children: tuple[t.Field, ...], path: str
) -> t.DataType:
    _n_children(children, 0, name, path)
    return _SIMPLE_TYPES[name]


@registry.implements("json_decode", t.IntegerType)
def _int_from_json(
    name: str, obj: dict[str, Any], children: tuple[t.Field, ...], path: str
) -> t.DataType:
    width = _need(obj, "bitWidth", int, path, "int type")
    signed = _need(obj, "isSigned", bool, path, "int type")
    return t.IntegerType(width, signed)


@registry.implements("json_decode", t.FloatingPointType)
def _float_from_json(
    name: str, obj: dict[str, Any], children: tuple[t.Field, ...], path: str
) -> t.DataType:
    return t.FloatingPointType(
        _PRECISIONS.get(_need(obj, "precision", str, path, "floatingpoint type"), 0)
    )


@registry.implements("json_decode", t.FixedSizeBinaryType)
def _fixed_binary_from_json(
    name: str, obj: dict[str, Any], children: tuple[t.Field, ...], path: str
) -> t.DataType:
    return t.FixedSizeBinaryType(_int32(obj, "byteWidth", path, "fixedsizebinary type"))


@registry.implements("json_decode", t.DecimalType)
def _decimal_from_json(
    name: str, obj: dict[str, Any], children: tuple[t.Field, ...], path: str
) -> t.DataType:
    width = _int32(obj, "bitWidth", path, "decimal type", default=128)
    precision = _int32(obj, "precision", path, "decimal type")
    scale = _int32(obj, "scale", path, "decimal type", default=0)
    return t.DecimalType(width, precision, scale)


@registry.implements("json_decode", t.DateType)
def _date_from_json(
    name: str, obj: dict[str, Any], children: tuple[t.Field, ...], path: str
) -> t.DataType:
    return t.DateType(_unit(_DATE_UNITS, obj.get("unit"), "date", path))


@registry.implements("json_decode", t.TimeType)
def _time_from_json(
    name: str, obj: dict[str, Any], children: tuple[t.Field, ...], path: str
) -> t.DataType:
    width = _need(obj, "bitWidth", int, path, "time type")
    return t.TimeType(width, _unit(_TIME_UNITS, obj.get("unit"), "time", path))


@registry.implements("json_decode", t.TimestampType)
def _timestamp_from_json(
    name: str, obj: dict[str, Any], children: tuple[t.Field, ...], path: str
) -> t.DataType:
    tz = obj.get("timezone")
    if tz is not None and not isinstance(tz, str):
        raise MetadataError(f"expected a string timezone, found {tz!r}", field_path=path)
    return t.TimestampType(_unit(_TIME_UNITS, obj.get("unit"), "timestamp", path), tz)


@registry.implements("json_decode", t.DurationType)
def _duration_from_json(
    name: str, obj: dict[str, Any], children: tuple[t.Field, ...], path: str
) -> t.DataType:
    return t.DurationType(_unit(_TIME_UNITS, obj.get("unit"), "duration", path))


@registry.implements("json_decode", t.IntervalType)
def _interval_from_json(
    name: str, obj: dict[str, Any], children: tuple[t.Field, ...], path: str
) -> t.DataType:
    return t.IntervalType(_unit(_INTERVAL_UNITS, obj.get("unit"), "interval", path))


@registry.implements(
    "json_decode", t.ListType, t.LargeListType, t.ListViewType, t.LargeListViewType
)
def _list_from_json(
    name: str, obj: dict[str, Any], children: tuple[t.Field, ...], path: str
) -> t.DataType:
    _n_children(children, 1, name, path)
    return _LIST_TYPES[name](children[0])


@registry.implements("json_decode", t.FixedSizeListType)
def _fixed_list_from_json(
    name: str, obj: dict[str, Any], children: tuple[t.Field, ...], path: str
) -> t.DataType:
    _n_children(children, 1, name, path)
    size = _int32(obj, "listSize", path, "fixedsizelist type")
    return t.FixedSizeListType(children[0], size)


@registry.implements("json_decode", t.StructType)
def _struct_from_json(
    name: str, obj: dict[str, Any], children: tuple[t.Field, ...], path: str
) -> t.DataType:
    return t.StructType(children)


@registry.implements("json_decode", t.MapType)
def _map_from_json(
    name: str, obj: dict[str, Any], children: tuple[t.Field, ...], path: str
) -> t.DataType:
    _n_children(children, 1, name, path)
    entries = children[0]
    if not isinstance(entries.type, t.StructType) or entries.type.num_fields != 2:
        raise MetadataError(
            f"expected map entries of a struct with 2 fields, found {entries.type}",
            field_path=path,
        )
    return t.MapType(entries, bool(obj.get("keysSorted", False)))


@registry.implements("json_decode", t.UnionType)
def _union_from_json(
    name: str, obj: dict[str, Any], children: tuple[t.Field, ...], path: str
) -> t.DataType:
    mode = _need(obj, "mode", str, path, "union type")
    if mode not in ("SPARSE", "DENSE"):
        raise MetadataError(f"expected union mode SPARSE or DENSE, found {mode!r}",
                            field_path=path)
    codes = obj.get("typeIds")
    if codes is None:
        codes = list(range(len(children)))
    if not isinstance(codes, list) or not all(
        isinstance(c, int) and not isinstance(c, bool) for c in codes
    ):
        raise MetadataError(f"expected a list of integer typeIds, found {codes!r:.60}",
                            field_path=path)
    return t.UnionType(mode.lower(), children, tuple(codes))


@registry.implements("json_decode", t.RunEndEncodedType)
def _ree_from_json(
    name: str, obj: dict[str, Any], children: tuple[t.Field, ...], path: str
) -> t.DataType:
    _n_children(children, 2, name, path)
    return t.RunEndEncodedType(children[0], children[1])


_SIMPLE_TYPES: dict[str, t.DataType] = {
    "null": t.null(),
    "bool": t.bool_(),
    "utf8": t.string(),
    "largeutf8": t.large_string(),
    "binary": t.binary(),
    "largebinary": t.large_binary(),
    "utf8view": t.string_view(),
    "binaryview": t.binary_view(),
}
_LIST_TYPES: dict[str, type] = {
    "list": t.ListType,
    "largelist": t.LargeListType,
    "listview": t.ListViewType,
    "largelistview": t.LargeListViewType,
}
# JSON type name -> its decoder, from the registry rows (a row's names without a decoder
# fail here, at import, naming the class)
_DECODERS: dict[str, Any] = {
    name: registry.lookup("json_decode", row.cls)
    for row in registry.rows()
    for name in row.json_names
}


def field_from_json(obj: Any, path: str = "", depth: int = 0) -> FieldNode:
    """Parse one JSON ``Field`` (with its children) into a :class:`FieldNode`."""
    if depth >= MAX_DEPTH:
        raise MetadataError(f"expected type nesting of at most {MAX_DEPTH} levels, found "
                            "deeper", field_path=path)
    name = _need(obj, "name", str, path, "field")
    here = f"{path}.{name}" if path else name
    nullable = obj.get("nullable", True)
    if not isinstance(nullable, bool):
        raise MetadataError(f"expected a boolean 'nullable', found {nullable!r}", field_path=here)
    jchildren = obj.get("children") or []
    if not isinstance(jchildren, list):
        raise MetadataError(f"expected 'children' as a list, found {jchildren!r:.60}",
                            field_path=here)
    children = tuple(field_from_json(c, here, depth + 1) for c in jchildren)
    value_type = type_from_json(obj.get("type"), [c.field for c in children], here)
    metadata = metadata_from_json(obj.get("metadata"), here)
    typ: t.DataType = value_type
    dict_id: int | None = None
    jdict = obj.get("dictionary")
    if jdict is not None:
        dict_id = _need(jdict, "id", int, here, "field dictionary")
        index_type = type_from_json(_need(jdict, "indexType", dict, here, "field dictionary"),
                                    (), here)
        if not isinstance(index_type, t.IntegerType):
            raise MetadataError(f"expected an integer dictionary indexType, found {index_type}",
                                field_path=here)
        typ = t.DictionaryType(index_type, value_type, bool(jdict.get("isOrdered", False)))
    if metadata is not None and metadata.get(EXTENSION_NAME) is not None:
        ext_name = metadata.get(EXTENSION_NAME) or b""
        serialized = metadata.get(EXTENSION_METADATA) or b""
        typ = t.ExtensionType(ext_name.decode("utf-8", "replace"), typ, serialized)
        metadata = metadata.without(EXTENSION_NAME, EXTENSION_METADATA)
    return FieldNode(t.Field(name, typ, nullable, metadata), dict_id, children)


def schema_from_json(obj: Any) -> tuple[t.Schema, tuple[FieldNode, ...]]:
    """Parse a JSON ``Schema`` object: the quiver schema and its field-node tree."""
    jfields = _need(obj, "fields", list, "", "schema")
    nodes = tuple(field_from_json(f) for f in jfields)
    metadata = metadata_from_json(obj.get("metadata"))
    return t.Schema(tuple(n.field for n in nodes), metadata), nodes


# --------------------------------------------------------------------------------------
# leaf decoders


def _np(values: Any, dtype: Any, path: str, what: str) -> np.ndarray:
    if not isinstance(values, list):
        raise FormatError(f"expected {what} as a JSON list, found {type(values).__name__}",
                          field_path=path)
    try:
        return np.array(values, dtype=dtype)
    except (ValueError, TypeError, OverflowError) as exc:
        raise FormatError(f"expected {what} values of {np.dtype(dtype)}, found an entry "
                          f"that does not fit ({exc})", field_path=path) from None


def _list_of(col: dict[str, Any], key: str, count: int, path: str) -> list[Any]:
    values = _need(col, key, list, path, "column")
    if len(values) != count:
        raise FormatError(f"expected {count} {key} entries, found {len(values)}",
                          field_path=path)
    return values


def _validity(col: dict[str, Any], count: int, path: str) -> tuple[np.ndarray | None, int]:
    if "VALIDITY" not in col:
        return None, 0
    bits = _np(_list_of(col, "VALIDITY", count, path), np.uint8, path, "VALIDITY")
    if bits.size and int(bits.max()) > 1:
        raise FormatError(f"expected VALIDITY entries 0 or 1, found {int(bits.max())}",
                          field_path=path)
    nulls = int(count - np.count_nonzero(bits))
    return (pack_bits(bits) if nulls else None), nulls


def _hex_bytes(values: list[Any], path: str, what: str) -> list[bytes]:
    try:
        return [bytes.fromhex(v) for v in values]
    except (ValueError, TypeError):
        raise FormatError(f"expected hex strings in {what}, found a non-hex entry",
                          field_path=path) from None


def _utf8_bytes(values: list[Any], path: str, what: str) -> list[bytes]:
    try:
        return [v.encode("utf-8") for v in values]
    except AttributeError:
        raise FormatError(f"expected strings in {what}, found a non-string entry",
                          field_path=path) from None
    except UnicodeEncodeError as exc:
        raise FormatError(f"expected valid Unicode strings in {what}, found a lone "
                          f"surrogate {exc.object[exc.start:exc.end]!r}",
                          field_path=path) from None


def _big_ints(values: list[Any], width: int, path: str) -> np.ndarray:
    """Two's complement little-endian integers of ``width`` bytes (decimal128/256)."""
    try:
        raw = b"".join(int(v).to_bytes(width, "little", signed=True) for v in values)
    except (ValueError, TypeError, OverflowError):
        raise FormatError(f"expected integer strings that fit in {width * 8} bits, "
                          "found one that does not", field_path=path) from None
    return np.frombuffer(raw, dtype=np.uint8)


def _values(st: t.DataType, col: dict[str, Any], count: int, path: str) -> np.ndarray:
    """The fixed-width value buffer of a primitive column from its DATA entries."""
    data = _list_of(col, "DATA", count, path)
    nd = storage_numpy_dtype(st)
    if nd is not None:
        if nd.kind == "f" and nd.itemsize < 8:
            arr = _np(data, np.float64, path, "DATA").astype(nd)
        else:
            arr = _np(data, nd, path, "DATA")
        return arr.view(np.uint8)
    if isinstance(st, t.DecimalType):
        if st.width <= 64:
            arr = _np(data, np.int64, path, "DATA")
            narrow = arr.astype(f"<i{st.width // 8}")
            if not np.array_equal(narrow, arr):
                raise FormatError(f"expected decimal values that fit in {st.width} bits, "
                                  "found one that does not", field_path=path)
            return narrow.view(np.uint8)
        return _big_ints(data, st.width // 8, path)
    if isinstance(st, t.IntervalType):
        if st.unit == "year_month":
            return _np(data, np.int32, path, "DATA").view(np.uint8)
        rec = DAY_TIME_DTYPE if st.unit == "day_time" else MONTH_DAY_NANO_DTYPE
        out = np.zeros(count, dtype=rec)
        for name in rec.names:
            try:
                column = [d[name] for d in data]
            except (KeyError, TypeError):
                raise FormatError(f"expected interval objects with key {name!r}, found one "
                                  "without", field_path=path) from None
            out[name] = _np(column, rec[name], path, f"interval {name}")
        return out.view(np.uint8)
    if isinstance(st, t.FixedSizeBinaryType):
        raw = b"".join(_hex_bytes(data, path, "DATA"))
        if len(raw) != count * st.width:
            raise FormatError(f"expected {count} values of {st.width} bytes, found "
                              f"{len(raw)} bytes in all", field_path=path)
        return np.frombuffer(raw, dtype=np.uint8)
    raise NotSupported(f"no JSON value decoder for {st}; add one in json_reader._values")


def _offsets(
    col: dict[str, Any], key: str, count: int, width: int, path: str
) -> np.ndarray:
    arr = _np(_need(col, key, list, path, "column"), f"<i{width}", path, key)
    return arr


def _binary(
    st: t.DataType, col: dict[str, Any], count: int, width: int, path: str
) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, data) of a binary/string column, offsets rebuilt from DATA and checked
    against OFFSET."""
    data = _list_of(col, "DATA", count, path)
    is_text = isinstance(st, t.StringType)
    pieces = _utf8_bytes(data, path, "DATA") if is_text else _hex_bytes(data, path, "DATA")
    lengths = np.fromiter((len(p) for p in pieces), dtype=np.int64, count=count)
    offsets = np.zeros(count + 1, dtype=f"<i{width}")
    offsets[1:] = np.cumsum(lengths)
    if "OFFSET" in col:
        given = _offsets(col, "OFFSET", count, width, path)
        if given.size != count + 1:
            raise FormatError(f"expected {count + 1} OFFSET entries, found {given.size}",
                              field_path=path)
        bad = np.flatnonzero(np.diff(given.astype(np.int64)) != lengths)
        if bad.size:
            i = int(bad[0])
            raise FormatError(f"expected OFFSET to give slot {i} a length of "
                              f"{int(lengths[i])} bytes, found {int(given[i + 1] - given[i])}",
                              field_path=path)
    return offsets.view(np.uint8), np.frombuffer(b"".join(pieces), dtype=np.uint8)


def _views(
    st: t.DataType, col: dict[str, Any], count: int, path: str
) -> list[np.ndarray]:
    """(views, data buffers...) of a binary/string view column."""
    views = _list_of(col, "VIEWS", count, path)
    jbuffers = _need(col, "VARIADIC_DATA_BUFFERS", list, path, "column")
    buffers = [np.frombuffer(b, dtype=np.uint8) for b in
               _hex_bytes(jbuffers, path, "VARIADIC_DATA_BUFFERS")]
    is_text = isinstance(st, t.StringViewType)
    sizes = np.zeros(count, dtype=np.int64)
    inline = np.zeros(count, dtype=bool)
    inlined: list[bytes] = []
    refs: list[tuple[bytes, int, int]] = []
    for i, v in enumerate(views):
        size = _need(v, "SIZE", int, path, f"view {i}")
        if not 0 <= size < 2**31:
            raise FormatError(f"expected view {i} size in 0..2**31-1, found {size}",
                              field_path=path)
        sizes[i] = size
        if size <= 12:
            value = _need(v, "INLINED", str, path, f"view {i}")
            if is_text:
                raw = _utf8_bytes([value], path, f"INLINED of view {i}")[0]
            else:
                raw = _hex_bytes([value], path, "INLINED")[0]
            if len(raw) != size:
                raise FormatError(f"expected view {i} to inline {size} bytes, found {len(raw)}",
                                  field_path=path)
            inline[i] = True
            inlined.append(raw.ljust(12, b"\0"))
        else:
            prefix = _hex_bytes([_need(v, "PREFIX_HEX", str, path, f"view {i}")], path,
                                "PREFIX_HEX")[0]
            index = _need(v, "BUFFER_INDEX", int, path, f"view {i}")
            offset = _need(v, "OFFSET", int, path, f"view {i}")
            if len(prefix) != 4:
                raise FormatError(f"expected a 4-byte view prefix, found {len(prefix)} bytes "
                                  f"at view {i}", field_path=path)
            if not 0 <= index < len(buffers) or offset < 0 or offset + size > len(
                buffers[index]
            ):
                raise FormatError(f"expected view {i} inside a data buffer, found buffer "
                                  f"{index} offset {offset} size {size}", field_path=path)
            if bytes(buffers[index][offset : offset + 4]) != prefix:
                raise FormatError(f"expected view {i} prefix {prefix.hex()} to match its data, "
                                  f"found {bytes(buffers[index][offset:offset + 4]).hex()}",
                                  field_path=path)
            refs.append((prefix, index, offset))
    if sizes.size and sizes.max() > np.iinfo(np.int32).max:
        raise FormatError("expected view sizes below 2**31, found a larger one",
                          field_path=path)
    out = np.zeros(count, dtype=VIEW_REF_DTYPE)
    out["size"] = sizes
    if refs:
        ref_rows = ~inline
        out["prefix"][ref_rows] = np.frombuffer(b"".join(r[0] for r in refs), dtype="V4")
        out["buffer_index"][ref_rows] = [r[1] for r in refs]
        out["offset"][ref_rows] = [r[2] for r in refs]
    as_inline = out.view(VIEW_INLINE_DTYPE)
    if inlined:
        as_inline["inlined"][inline] = np.frombuffer(b"".join(inlined), dtype="V12")
    return [out.view(np.uint8), *buffers]


# --------------------------------------------------------------------------------------
# the column walk


class _Loader:
    """Decodes columns and (lazily, by id) dictionaries of one JSON document."""

    def __init__(self, nodes: Sequence[FieldNode], jdicts: Any) -> None:
        self._jdicts: dict[int, Any] = {}
        if jdicts is not None:
            if not isinstance(jdicts, list):
                raise FormatError(f"expected 'dictionaries' as a list, found "
                                  f"{type(jdicts).__name__}")
            for d in jdicts:
                did = _need(d, "id", int, "", "dictionary batch")
                if did in self._jdicts:
                    raise FormatError(f"expected one dictionary batch per id, found id {did} "
                                      "twice (JSON cannot express deltas)")
                self._jdicts[did] = d
        # the value-type node of each dictionary id (the first field that uses it)
        self._value_nodes: dict[int, FieldNode] = {}
        self._collect(nodes)
        self._decoded: dict[int, Array] = {}
        self._busy: set[int] = set()

    def _collect(self, nodes: Sequence[FieldNode]) -> None:
        for n in nodes:
            if n.dictionary_id is not None and n.dictionary_id not in self._value_nodes:
                st = t.storage_of(n.field.type)
                value = st.value_type if isinstance(st, t.DictionaryType) else st
                self._value_nodes[n.dictionary_id] = FieldNode(
                    t.Field(n.field.name, value, True), None, n.children
                )
            self._collect(n.children)

    def dictionary(self, did: int, path: str) -> Array:
        """The decoded dictionary with JSON id ``did``."""
        done = self._decoded.get(did)
        if done is not None:
            return done
        jd = self._jdicts.get(did)
        if jd is None:
            raise FormatError(f"expected a dictionary batch with id {did}, found none",
                              field_path=path)
        if did in self._busy:
            raise FormatError(f"expected dictionaries without cycles, found id {did} "
                              "inside its own values", field_path=path)
        self._busy.add(did)
        try:
            data = _need(jd, "data", dict, path, "dictionary batch")
            count = _need(data, "count", int, path, "dictionary batch data")
            if not 0 <= count <= MAX_COUNT:
                raise FormatError(f"expected a dictionary count in 0..{MAX_COUNT}, found "
                                  f"{count}", field_path=path)
            cols = _need(data, "columns", list, path, "dictionary batch data")
            if len(cols) != 1:
                raise FormatError(f"expected one column in dictionary batch {did}, found "
                                  f"{len(cols)}", field_path=path)
            arr = self.load(self._value_nodes[did], cols[0], f"<dictionary {did}>")
            if len(arr) != count:
                raise FormatError(f"expected dictionary {did} of {count} values, found "
                                  f"{len(arr)}", field_path=path)
        finally:
            self._busy.discard(did)
        self._decoded[did] = arr
        return arr

    def all_dictionaries(self) -> dict[int, Array]:
        """Every dictionary named by the schema, decoded."""
        for did in self._value_nodes:
            if did in self._jdicts:
                self.dictionary(did, f"<dictionary {did}>")
        return dict(self._decoded)

    def load(self, node: FieldNode, col: Any, path: str, depth: int = 0) -> Array:
        """Decode one JSON ``FieldData`` of ``node``'s type into an Array."""
        typ = node.field.type
        here = path
        count = _need(col, "count", int, here, "column")
        if not 0 <= count <= MAX_COUNT:
            raise FormatError(f"expected a count in 0..{MAX_COUNT}, found {count}",
                              field_path=here)
        st = t.storage_of(typ)
        if isinstance(st, t.DictionaryType):
            validity, nulls = _validity(col, count, here)
            indices = _values(st.index_type, col, count, here)
            if node.dictionary_id is None:
                raise FormatError("expected a dictionary id for a dictionary field, found none",
                                  field_path=here)
            dictionary = self.dictionary(node.dictionary_id, here)
            if not dictionary.type.equals(st.value_type):
                raise FormatError(f"expected dictionary {node.dictionary_id} to hold "
                                  f"{st.value_type}, found {dictionary.type} (one id used "
                                  "for two value types)", field_path=here)
            _check_indices(indices, st.index_type, validity, count, len(dictionary), here)
            return make_array(typ, count, (validity, indices), (), nulls, 0, dictionary)
        lay = layout_of(st)
        buffers: list[np.ndarray | None] = []
        nulls = 0
        for spec in lay.buffers:
            kind = spec.kind
            if kind == "validity":
                v, nulls = _validity(col, count, here)
                buffers.append(v)
            elif kind == "bits":
                bits = _np(_list_of(col, "DATA", count, here), bool, here, "DATA")
                buffers.append(pack_bits(bits))
            elif kind == "values":
                buffers.append(_values(st, col, count, here))
            elif kind == "offsets" and isinstance(st, (t.BinaryType, t.StringType)):
                offsets, data = _binary(st, col, count, spec.byte_width, here)
                buffers.extend((offsets, data))
            elif kind == "data":
                continue  # produced with the offsets
            elif kind == "offsets":
                n = count if lay.children in ("views", "dense") else count + 1
                offs = _offsets(col, "OFFSET", n, spec.byte_width, here)
                if offs.size != n:
                    raise FormatError(f"expected {n} OFFSET entries, found {offs.size}",
                                      field_path=here)
                buffers.append(offs.view(np.uint8))
            elif kind == "sizes":
                sizes = _offsets(col, "SIZE", count, spec.byte_width, here)
                if sizes.size != count:
                    raise FormatError(f"expected {count} SIZE entries, found {sizes.size}",
                                      field_path=here)
                buffers.append(sizes.view(np.uint8))
            elif kind == "views":
                buffers.extend(_views(st, col, count, here))
            elif kind == "type_ids":
                buffers.append(_np(_list_of(col, "TYPE_ID", count, here), np.int8, here,
                                   "TYPE_ID").view(np.uint8))
            else:  # pragma: no cover - the layout table has no other kinds
                raise NotSupported(f"no JSON decoder for buffer kind {kind!r}")
        if isinstance(st, t.UnionType) and "VALIDITY" in col:
            # V4 unions carried a validity bitmap; V5 (what quiver holds) has none
            _, union_nulls = _validity(col, count, here)
            if union_nulls:
                raise NotSupported("union slots marked null in VALIDITY (metadata V4) cannot "
                                   "be held as V5 unions; mark the children null instead",
                                   field_path=here)
        children = self._children(node, st, col, count, here, depth)
        _check_children(st, lay.children, buffers, children, count, here)
        null_count = count if isinstance(st, t.NullType) else nulls
        return make_array(typ, count, buffers, children, null_count, 0, None)

    def _children(
        self, node: FieldNode, st: t.DataType, col: dict[str, Any], count: int, path: str,
        depth: int,
    ) -> list[Array]:
        nodes = node.children
        if not nodes:
            return []
        jchildren = _need(col, "children", list, path, "column")
        if len(jchildren) != len(nodes):
            raise FormatError(f"expected {len(nodes)} children, found {len(jchildren)}",
                              field_path=path)
        return [
            self.load(n, c, f"{path}.{n.field.name}", depth + 1)
            for n, c in zip(nodes, jchildren)
        ]


def _check_indices(
    indices: np.ndarray, index_type: t.DataType, validity: np.ndarray | None, count: int,
    size: int, path: str,
) -> None:
    nd = storage_numpy_dtype(index_type)
    idx = indices.view(nd)
    if validity is not None:
        valid = np.unpackbits(validity, count=count, bitorder="little").astype(bool)
        idx = idx[valid]
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= size):
        bad = int(idx.min()) if int(idx.min()) < 0 else int(idx.max())
        raise FormatError(f"expected dictionary indices in 0..{size - 1}, found {bad}",
                          field_path=path)


def _as_int(buf: np.ndarray | None, width: int) -> np.ndarray:
    if buf is None:
        return np.zeros(0, dtype=np.int64)
    return buf.view(f"<i{width}").astype(np.int64)


def _check_children(
    st: t.DataType, rule: str, buffers: list[np.ndarray | None], children: list[Array],
    count: int, path: str,
) -> None:
    """Structural checks so that later walks cannot index out of range: the child rule
    shared with the IPC loader and validate_array, then every offset and run end (the JSON
    values are decoded anyway, so checking them all costs one vectorized pass)."""
    lens = [len(c) for c in children]
    if rule in ("same", "fixed", "run_end"):
        last = None
        if rule == "run_end" and count and lens[0]:
            last = int(_as_int(children[0].buffers[1], children[0].type.bit_width // 8)[-1])
        problem = children_problem(rule, count, lens,
                                   list_size=getattr(st, "list_size", 0), last_run_end=last)
        if problem is not None:
            raise FormatError(problem[1], field_path=path)
    if rule in ("offsets", "views"):
        width = 8 if isinstance(st, (t.LargeListType, t.LargeListViewType)) else 4
        offs = _as_int(buffers[1], width)
        if rule == "offsets":
            starts, ends = offs[:-1], offs[1:]
        else:
            starts, ends = offs, offs + _as_int(buffers[2], width)
        if count and (
            np.any(starts < 0) or np.any(ends < starts) or int(ends.max()) > lens[0]
        ):
            raise FormatError(f"expected list offsets within the child's {lens[0]} values, "
                              "found some outside", field_path=path)
    elif rule == "dense":
        ids = buffers[0].view(np.int8) if buffers[0] is not None else np.zeros(0, np.int8)
        offs = _as_int(buffers[1], 4)
        _check_type_ids(st, ids, path)
        for child_index, code in enumerate(st.type_codes):  # type: ignore[attr-defined]
            sel = offs[ids == code]
            if sel.size and (int(sel.min()) < 0 or int(sel.max()) >= lens[child_index]):
                raise FormatError(f"expected dense union offsets within child {child_index}'s "
                                  f"{lens[child_index]} values, found {int(sel.max())}",
                                  field_path=path)
    elif rule == "run_end" and count:
        run_ends = _as_int(children[0].buffers[1], children[0].type.bit_width // 8)
        if np.any(np.diff(run_ends) <= 0) or int(run_ends[0]) <= 0:
            raise FormatError(f"expected strictly increasing positive run ends, found "
                              f"{run_ends[:8].tolist()}", field_path=path)
    if isinstance(st, t.UnionType) and st.mode == "sparse":
        ids = buffers[0].view(np.int8) if buffers[0] is not None else np.zeros(0, np.int8)
        _check_type_ids(st, ids, path)


def _check_type_ids(st: Any, ids: np.ndarray, path: str) -> None:
    bad = ~np.isin(ids, np.array(st.type_codes, dtype=np.int8))
    if bad.any():
        raise FormatError(f"expected union type ids in {list(st.type_codes)}, found "
                          f"{int(ids[bad][0])}", field_path=path)


# --------------------------------------------------------------------------------------
# documents


def parse_json(doc: Any, *, validate: bool = True) -> JsonFile:
    """Decode an already parsed integration JSON document (a dict).

    With ``validate`` (the default) every decoded column is also checked at the full level of
    :func:`quiver.array.validate.validate_array` (decimal precision excepted: old gold files
    hold decimals beyond it), so a document that decodes is valid Arrow data.
    """
    if not isinstance(doc, dict):
        raise FormatError(f"expected a JSON object at the top level, found "
                          f"{type(doc).__name__}")
    schema, nodes = schema_from_json(_need(doc, "schema", dict, "", "document"))
    loader = _Loader(nodes, doc.get("dictionaries"))
    jbatches = doc.get("batches") or []
    if not isinstance(jbatches, list):
        raise FormatError(f"expected 'batches' as a list, found {type(jbatches).__name__}")
    batches = []
    for b, jb in enumerate(jbatches):
        count = _need(jb, "count", int, "", f"batch {b}")
        if not 0 <= count <= MAX_COUNT:
            raise FormatError(f"expected a batch count in 0..{MAX_COUNT}, found {count}")
        cols = _need(jb, "columns", list, "", f"batch {b}")
        if len(cols) != len(nodes):
            raise FormatError(f"expected {len(nodes)} columns in batch {b}, found {len(cols)}")
        columns = []
        for node, col in zip(nodes, cols):
            try:
                arr = loader.load(node, col, node.field.name)
            except ArrowError as exc:
                raise exc.locate(message_index=b) from None
            if len(arr) != count:
                raise FormatError(f"expected {count} rows in column {node.field.name!r} of "
                                  f"batch {b}, found {len(arr)}", field_path=node.field.name)
            if validate:
                try:
                    validate_array(arr, full=True, path=node.field.name)
                except ArrowError as exc:
                    raise exc.locate(message_index=b) from None
            columns.append(arr)
        batches.append(make_batch(schema, columns, count))
    return JsonFile(schema, batches, loader.all_dictionaries(), nodes)


def loads(text: str | bytes) -> JsonFile:
    """Decode integration JSON text (gzip-compressed bytes are accepted too)."""
    if isinstance(text, (bytes, bytearray)) and bytes(text[:2]) == b"\x1f\x8b":
        try:
            text = gzip.decompress(text)
        except (OSError, EOFError) as exc:
            raise FormatError(f"expected gzip-compressed JSON, found a broken stream ({exc})"
                              ) from None
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise FormatError(f"expected integration JSON, found text that does not parse "
                          f"({str(exc)[:80]})") from None
    return parse_json(doc)


def read_json(source: str | Path | io.IOBase | Any) -> JsonFile:
    """Read an integration JSON file (``.json`` or ``.json.gz``) from a path or file object."""
    if isinstance(source, (str, Path)):
        data = Path(source).read_bytes()
    else:
        data = source.read()
    return loads(data)


__all__ = [
    "FieldNode",
    "JsonBatch",
    "JsonFile",
    "field_from_json",
    "loads",
    "make_batch",
    "metadata_from_json",
    "parse_json",
    "read_json",
    "schema_from_json",
    "type_from_json",
]
