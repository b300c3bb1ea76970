"""Reading the Arrow integration JSON format into quiver objects.

Implements the reader side of "JSON test data format" (Integration.rst, section
``format_json_integration``) as archery's generator and the arrow-testing gold files use it
(see ``JSON_FORMAT_NOTES.md``): the schema (every type, dictionaries, custom and extension
metadata), record batches and dictionary batches.

Theory of operation: the schema is parsed once into a tree of :class:`FieldNode` (a quiver
:class:`~quiver.types.Field`, the JSON dictionary id when the field is dictionary-encoded,
and the child nodes of the value type) and compiled into the IPC reader's plan
(:func:`quiver.ipc.body.compile_plan`).  Columns are then loaded by the IPC body walk with
JSON leaf reads (:mod:`quiver.integration.json_columns`), so that JSON and IPC data pass the
same structural checks.  Dictionaries are decoded lazily, by id, the first time a column
needs them, so nested dictionaries (a dictionary whose values hold dictionary-encoded
children) resolve in any order.

Buffers are ``numpy.uint8`` arrays.
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

from .. import registry
from .. import types as t
from ..array.base import Array
from ..batch import RecordBatch
from ..errors import ArrowError, FormatError, MetadataError
from ..ipc.body import compile_plan
from .json_columns import DAY_TIME_DTYPE as DAY_TIME_DTYPE  # re-exported: old import paths
from .json_columns import (
    MAX_COUNT,
    FieldNode,
    JsonColumnLoader,
    JsonDictionaries,
    check_json_array,
    dictionary_ids,
    need,
)
from .json_columns import MONTH_DAY_NANO_DTYPE as MONTH_DAY_NANO_DTYPE
from .json_columns import VIEW_INLINE_DTYPE as VIEW_INLINE_DTYPE
from .json_columns import VIEW_REF_DTYPE as VIEW_REF_DTYPE

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
#: the deepest type nesting accepted (as quiver's IPC metadata decoder), so that every later
#: walk stays far from Python's recursion limit
MAX_DEPTH = 64


# --------------------------------------------------------------------------------------
# results


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


_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1


def _int32(obj: Any, key: str, path: str, what: str, default: int | None = None) -> int:
    """An int parameter of a type, bounded like its Schema.fbs field (a 32-bit ``int``)."""
    if default is not None and key not in obj:
        return default
    value = need(obj, key, int, path, what)
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
        key = need(item, "key", str, where, "metadata entry")
        val = need(item, "value", str, where, "metadata entry")
        pairs.append((key, val))
    return t.KeyValueMetadata(pairs) if pairs else None


def _unit(table: dict[str, str], value: Any, what: str, path: str) -> str:
    if not isinstance(value, str) or value not in table:
        raise MetadataError(f"expected a {what} unit in {sorted(table)}, found {value!r}",
                            field_path=path)
    return table[value]


def type_from_json(obj: Any, children: Sequence[t.Field], path: str = "") -> t.DataType:
    """Build a quiver type from a JSON ``type`` object and the already parsed children."""
    name = need(obj, "name", str, path, "type")
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
    width = need(obj, "bitWidth", int, path, "int type")
    signed = need(obj, "isSigned", bool, path, "int type")
    return t.IntegerType(width, signed)


@registry.implements("json_decode", t.FloatingPointType)
def _float_from_json(
    name: str, obj: dict[str, Any], children: tuple[t.Field, ...], path: str
) -> t.DataType:
    return t.FloatingPointType(
        _PRECISIONS.get(need(obj, "precision", str, path, "floatingpoint type"), 0)
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


# the types with a unit: JSON name -> (class, unit names); time also has a bitWidth and
# timestamp a timezone
_UNIT_TYPES: dict[str, tuple[type, dict[str, str]]] = {
    "date": (t.DateType, _DATE_UNITS),
    "time": (t.TimeType, _TIME_UNITS),
    "timestamp": (t.TimestampType, _TIME_UNITS),
    "duration": (t.DurationType, _TIME_UNITS),
    "interval": (t.IntervalType, _INTERVAL_UNITS),
}


@registry.implements(
    "json_decode", t.DateType, t.TimeType, t.TimestampType, t.DurationType, t.IntervalType
)
def _unit_type_from_json(
    name: str, obj: dict[str, Any], children: tuple[t.Field, ...], path: str
) -> t.DataType:
    cls, units = _UNIT_TYPES[name]
    before: tuple[Any, ...] = ()  # the parameters the type takes before its unit
    after: tuple[Any, ...] = ()  # and after it
    if name == "time":
        before = (need(obj, "bitWidth", int, path, "time type"),)
    elif name == "timestamp":
        tz = obj.get("timezone")
        if tz is not None and not isinstance(tz, str):
            raise MetadataError(f"expected a string timezone, found {tz!r}", field_path=path)
        after = (tz,)
    return cls(*before, _unit(units, obj.get("unit"), name, path), *after)


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
    mode = need(obj, "mode", str, path, "union type")
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
    name = need(obj, "name", str, path, "field")
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
        dict_id = need(jdict, "id", int, here, "field dictionary")
        index_type = type_from_json(need(jdict, "indexType", dict, here, "field dictionary"),
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
    jfields = need(obj, "fields", list, "", "schema")
    nodes = tuple(field_from_json(f) for f in jfields)
    metadata = metadata_from_json(obj.get("metadata"))
    return t.Schema(tuple(n.field for n in nodes), metadata), nodes


# --------------------------------------------------------------------------------------
# documents


def parse_json(doc: Any, *, validate: bool = True) -> JsonFile:
    """Decode an already parsed integration JSON document (a dict).

    With ``validate`` (the default) every decoded column and dictionary is also checked at
    the full level of :func:`quiver.array.validate.validate_array` (decimal precision
    excepted: old gold files hold decimals beyond it), so a document that decodes is valid
    Arrow data; what it finds raises :class:`~quiver.errors.FormatError`.
    """
    if not isinstance(doc, dict):
        raise FormatError(f"expected a JSON object at the top level, found "
                          f"{type(doc).__name__}")
    schema, nodes = schema_from_json(need(doc, "schema", dict, "", "document"))
    plan = compile_plan(schema, dictionary_ids(nodes))
    dictionaries = JsonDictionaries(nodes, doc.get("dictionaries"), validate)
    jbatches = doc.get("batches") or []
    if not isinstance(jbatches, list):
        raise FormatError(f"expected 'batches' as a list, found {type(jbatches).__name__}")
    batches = []
    for b, jb in enumerate(jbatches):
        count = need(jb, "count", int, "", f"batch {b}")
        if not 0 <= count <= MAX_COUNT:
            raise FormatError(f"expected a batch count in 0..{MAX_COUNT}, found {count}")
        cols = need(jb, "columns", list, "", f"batch {b}")
        if len(cols) != len(nodes):
            raise FormatError(f"expected {len(nodes)} columns in batch {b}, found {len(cols)}")
        columns = []
        loader = JsonColumnLoader(dictionaries)
        for node, col in zip(plan, cols):
            try:
                arr = loader.read(node, col)
            except ArrowError as exc:
                raise exc.locate(message_index=b) from None
            if len(arr) != count:
                raise FormatError(f"expected {count} rows in column {node.name!r} of "
                                  f"batch {b}, found {len(arr)}", field_path=node.name)
            try:
                check_json_array(arr, node.name, validate)
            except ArrowError as exc:
                raise exc.locate(message_index=b) from None
            columns.append(arr)
        batches.append(make_batch(schema, columns, count))
    return JsonFile(schema, batches, dictionaries.all(), nodes)


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
