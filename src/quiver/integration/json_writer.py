"""Writing quiver schemas and record batches as Arrow integration JSON.

The writer side of "JSON test data format" (Integration.rst, ``format_json_integration``),
producing what archery's generator writes: 64-bit integers as strings, binary as uppercase
hex, decimals as unscaled integer strings, VALIDITY even for non-nullable fields, V5 unions
(no VALIDITY), one ``dictionaries`` entry per dictionary id.

Theory of operation: the schema is walked once to give every dictionary-encoded field a
dictionary id (depth first, nested dictionaries included).  Columns are then written by one
walk driven by :func:`quiver.layout.layout_of`, the mirror of
:mod:`quiver.integration.json_reader`; each buffer kind has one leaf encoder.  A parent's
offset is applied to its own buffers, and struct, sparse-union, fixed-size-list and run-end
children are sliced to what the parent's slots reach, since JSON children have no offset.
JSON cannot express replacement dictionaries: for each id the dictionary of the last batch
that used it is written (after deltas it holds every earlier value).

>>> from quiver.integration.json_reader import parse_json
>>> doc = {"schema": {"fields": [{"name": "a", "nullable": True, "children": [],
...         "type": {"name": "int", "bitWidth": 64, "isSigned": True}}]},
...        "batches": [{"count": 2, "columns": [{"name": "a", "count": 2,
...         "VALIDITY": [1, 0], "DATA": ["7", "0"]}]}]}
>>> jf = parse_json(doc)
>>> to_json(jf.schema, jf.batches)["batches"][0]["columns"][0]["DATA"]
['7', '0']
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

from .. import registry
from .. import types as t
from ..array import make_array
from ..array.base import Array
from ..array.decimal import limbs, to_ints
from ..array.validate import validate_array
from ..buffers import unpack_bits
from ..errors import ArrowInvalid, ArrowTypeError, NotSupported
from ..layout import layout_of, storage_numpy_dtype
from .compare import batch_parts, compare_arrays
from .json_reader import (
    DAY_TIME_DTYPE,
    EXTENSION_METADATA,
    EXTENSION_NAME,
    MONTH_DAY_NANO_DTYPE,
)

_UNIT_NAMES = {"s": "SECOND", "ms": "MILLISECOND", "us": "MICROSECOND", "ns": "NANOSECOND"}
_PRECISION_NAMES = {16: "HALF", 32: "SINGLE", 64: "DOUBLE"}
_INTERVAL_NAMES = {"year_month": "YEAR_MONTH", "day_time": "DAY_TIME",
                   "month_day_nano": "MONTH_DAY_NANO"}


# --------------------------------------------------------------------------------------
# schema


def metadata_to_json(md: t.KeyValueMetadata | None) -> list[dict[str, str]] | None:
    """A metadata list of ``{"key", "value"}`` (order and duplicates kept), None if empty."""
    if not md:
        return None
    return [{"key": k.decode("utf-8", "replace"), "value": v.decode("utf-8", "replace")}
            for k, v in (md.items() if hasattr(md, "items") else md)]


def type_to_json(typ: t.DataType) -> dict[str, Any]:
    """The JSON ``type`` object of a (non-dictionary, non-extension) type."""
    encode = _ENCODERS.get(type(typ))
    if encode is None:
        raise NotSupported(f"no JSON spelling for type {typ}: DataType "
                           f"{type(typ).__name__} has no json_encode; register one in json_writer")
    return encode(typ)


# -- the registry's "json_encode" piece: dtype -> JSON type object ---------------------
_ENCODERS = registry.table("json_encode")


def _by_name(name: str) -> Any:
    return lambda typ: {"name": name}


# the types without parameters: their one JSON name, from the registry row
for _cls in (
    t.NullType,
    t.BoolType,
    t.BinaryViewType,
    t.StringViewType,
    t.StructType,
    t.ListType,
    t.LargeListType,
    t.ListViewType,
    t.LargeListViewType,
    t.RunEndEncodedType,
):
    registry.register("json_encode", _by_name(registry.row(_cls).json_names[0]), _cls)


@registry.implements("json_encode", t.IntegerType)
def _int_json(typ: t.IntegerType) -> dict[str, Any]:
    return {"name": "int", "isSigned": typ.signed, "bitWidth": typ.width}


@registry.implements("json_encode", t.FloatingPointType)
def _float_json(typ: t.FloatingPointType) -> dict[str, Any]:
    return {"name": "floatingpoint", "precision": _PRECISION_NAMES[typ.width]}


@registry.implements("json_encode", t.BinaryType)
def _binary_json(typ: t.BinaryType) -> dict[str, Any]:
    return {"name": "largebinary" if typ.large else "binary"}


@registry.implements("json_encode", t.StringType)
def _string_json(typ: t.StringType) -> dict[str, Any]:
    return {"name": "largeutf8" if typ.large else "utf8"}


@registry.implements("json_encode", t.FixedSizeBinaryType)
def _fixed_binary_json(typ: t.FixedSizeBinaryType) -> dict[str, Any]:
    return {"name": "fixedsizebinary", "byteWidth": typ.width}


@registry.implements("json_encode", t.DecimalType)
def _decimal_json(typ: t.DecimalType) -> dict[str, Any]:
    return {"name": "decimal", "precision": typ.precision, "scale": typ.scale,
            "bitWidth": typ.width}


@registry.implements("json_encode", t.DateType)
def _date_json(typ: t.DateType) -> dict[str, Any]:
    return {"name": "date", "unit": "DAY" if typ.unit == "day" else "MILLISECOND"}


@registry.implements("json_encode", t.TimeType)
def _time_json(typ: t.TimeType) -> dict[str, Any]:
    return {"name": "time", "unit": _UNIT_NAMES[typ.unit], "bitWidth": typ.width}


@registry.implements("json_encode", t.TimestampType)
def _timestamp_json(typ: t.TimestampType) -> dict[str, Any]:
    out: dict[str, Any] = {"name": "timestamp", "unit": _UNIT_NAMES[typ.unit]}
    if typ.tz is not None:
        out["timezone"] = typ.tz
    return out


@registry.implements("json_encode", t.DurationType)
def _duration_json(typ: t.DurationType) -> dict[str, Any]:
    return {"name": "duration", "unit": _UNIT_NAMES[typ.unit]}


@registry.implements("json_encode", t.IntervalType)
def _interval_json(typ: t.IntervalType) -> dict[str, Any]:
    return {"name": "interval", "unit": _INTERVAL_NAMES[typ.unit]}


@registry.implements("json_encode", t.FixedSizeListType)
def _fixed_list_json(typ: t.FixedSizeListType) -> dict[str, Any]:
    return {"name": "fixedsizelist", "listSize": typ.list_size}


@registry.implements("json_encode", t.MapType)
def _map_json(typ: t.MapType) -> dict[str, Any]:
    return {"name": "map", "keysSorted": typ.keys_sorted}


@registry.implements("json_encode", t.UnionType)
def _union_json(typ: t.UnionType) -> dict[str, Any]:
    return {"name": "union", "mode": typ.mode.upper(), "typeIds": list(typ.type_codes)}


class _Ids:
    """Dictionary ids per schema position (a tuple path of child indices)."""

    def __init__(self, schema: t.Schema) -> None:
        self.ids: dict[tuple[int, ...], int] = {}
        self.value_fields: dict[int, tuple[t.Field, tuple[int, ...]]] = {}
        for i, f in enumerate(schema.fields):
            self._assign(f, (i,))

    def _assign(self, f: t.Field, path: tuple[int, ...]) -> None:
        st = t.storage_of(f.type)
        if isinstance(st, t.DictionaryType):
            did = len(self.ids)
            self.ids[path] = did
            self.value_fields[did] = (t.Field(f"DICT{did}", st.value_type, True), path)
            st = t.storage_of(st.value_type)
        for j, child in enumerate(st.fields):
            self._assign(child, (*path, j))


def _unwrap_extension(
    typ: t.DataType, md: t.KeyValueMetadata | None
) -> tuple[t.DataType, t.KeyValueMetadata | None]:
    """An extension type as JSON carries it: its storage type, and its name and serialized
    metadata as the first field metadata entries (``typ`` unchanged when no extension)."""
    if not isinstance(typ, t.ExtensionType):
        return typ, md
    ext = [(EXTENSION_NAME, typ.extension_name.encode("utf-8")),
           (EXTENSION_METADATA, typ.serialized)]
    return typ.storage_type, t.KeyValueMetadata([*ext, *(md.items() if md else ())])


def field_to_json(f: t.Field, ids: _Ids, path: tuple[int, ...]) -> dict[str, Any]:
    """The JSON ``Field`` object of ``f`` at schema position ``path``."""
    typ, md = _unwrap_extension(f.type, f.metadata)
    out: dict[str, Any] = {"name": f.name, "nullable": f.nullable}
    dictionary = None
    if isinstance(typ, t.DictionaryType):
        dictionary = {"id": ids.ids[path], "indexType": type_to_json(typ.index_type),
                      "isOrdered": typ.ordered}
        # an extension over the dictionary's values travels the same way: field metadata
        typ, md = _unwrap_extension(typ.value_type, md)
    out["type"] = type_to_json(typ)
    out["children"] = [field_to_json(c, ids, (*path, j)) for j, c in enumerate(typ.fields)]
    if dictionary is not None:
        out["dictionary"] = dictionary
    jmd = metadata_to_json(md)
    if jmd is not None:
        out["metadata"] = jmd
    return out


def schema_to_json(schema: t.Schema) -> dict[str, Any]:
    """The JSON ``Schema`` object (dictionary ids assigned depth first from 0)."""
    ids = _Ids(schema)
    out: dict[str, Any] = {
        "fields": [field_to_json(f, ids, (i,)) for i, f in enumerate(schema.fields)]
    }
    jmd = metadata_to_json(schema.metadata)
    if jmd is not None:
        out["metadata"] = jmd
    return out


# --------------------------------------------------------------------------------------
# leaf encoders


def _typed(buf: np.ndarray | None, dtype: Any, start: int, count: int) -> np.ndarray:
    nd = np.dtype(dtype)
    if buf is None or len(buf) == 0:
        # absent, or empty as IPC allows for the offsets of a zero-length array
        return np.zeros(count, dtype=nd)
    need = (start + count) * nd.itemsize
    if len(buf) < need:
        raise ArrowInvalid(f"expected a buffer of at least {need} bytes, found {len(buf)}")
    return buf[start * nd.itemsize : need].view(nd)


def _strs(values: np.ndarray) -> list[str]:
    return [str(v) for v in values.tolist()]


def _fixed_rows(buf: np.ndarray | None, width: int, start: int, count: int) -> np.ndarray:
    if buf is None or width == 0:
        return np.zeros((count, width), dtype=np.uint8)
    return buf[start * width : (start + count) * width].reshape(count, width)


def _values(st: t.DataType, arr: Array, start: int, count: int) -> list[Any]:
    """The DATA entries of a fixed-width column."""
    buf = arr.buffers[1]
    nd = storage_numpy_dtype(st)
    if nd is not None:
        vals = _typed(buf, nd, start, count)
        if nd.kind == "f":
            if nd.itemsize < 8:
                # the shortest decimal that reads back as the same half/single float
                return [float(x) for x in vals.astype(str)]
            return vals.tolist()
        if nd.itemsize == 8:
            return _strs(vals)
        return vals.tolist()
    if isinstance(st, t.DecimalType):
        rows = _fixed_rows(buf, st.width // 8, start, count).reshape(-1)
        return _strs(to_ints(limbs(rows, st.width, 0, count)))
    if isinstance(st, t.IntervalType):
        if st.unit == "year_month":
            return _typed(buf, "<i4", start, count).tolist()
        rec = DAY_TIME_DTYPE if st.unit == "day_time" else MONTH_DAY_NANO_DTYPE
        vals = _fixed_rows(buf, rec.itemsize, start, count).copy().view(rec).ravel()
        columns = [vals[name].tolist() for name in rec.names]
        return [dict(zip(rec.names, row)) for row in zip(*columns)]
    if isinstance(st, t.FixedSizeBinaryType):
        return [r.hex().upper() for r in map(bytes, _fixed_rows(buf, st.width, start, count))]
    raise NotSupported(f"no JSON value encoder for {st}; add one in json_writer._values")


def _validity(arr: Array, start: int, count: int) -> list[int]:
    buf = arr.buffers[0] if arr.buffers else None
    if buf is None:
        return [1] * count
    return unpack_bits(buf, start, count).astype(np.uint8).tolist()


def _binary(st: t.DataType, arr: Array, start: int, count: int) -> dict[str, Any]:
    width = 8 if st.large else 4  # type: ignore[attr-defined]
    offs = _typed(arr.buffers[1], f"<i{width}", start, count + 1).astype(np.int64)
    data = arr.buffers[2] if arr.buffers[2] is not None else np.zeros(0, np.uint8)
    raw = bytes(data[int(offs[0]) : int(offs[-1])]) if count else b""
    rel = (offs - offs[0]).tolist() if count else [0]
    pieces = [raw[a:b] for a, b in pairwise(rel)]
    if isinstance(st, t.StringType):
        values: list[str] = [p.decode("utf-8", "replace") for p in pieces]
    else:
        values = [p.hex().upper() for p in pieces]
    jrel: list[Any] = _strs(np.array(rel)) if width == 8 else rel
    return {"OFFSET": jrel, "DATA": values}


def _views(st: t.DataType, arr: Array, start: int, count: int) -> dict[str, Any]:
    views = _fixed_rows(arr.buffers[1], 16, start, count)
    sizes = views[:, :4].copy().view("<i4").ravel().tolist()
    index = views[:, 8:12].copy().view("<i4").ravel().tolist()
    offset = views[:, 12:16].copy().view("<i4").ravel().tolist()
    is_text = isinstance(st, t.StringViewType)
    out = []
    for k, size in enumerate(sizes):
        if size <= 12:
            raw = bytes(views[k, 4 : 4 + size])
            inlined = raw.decode("utf-8", "replace") if is_text else raw.hex().upper()
            out.append({"SIZE": size, "INLINED": inlined})
        else:
            out.append({"SIZE": size, "PREFIX_HEX": bytes(views[k, 4:8]).hex().upper(),
                        "BUFFER_INDEX": index[k], "OFFSET": offset[k]})
    data = [bytes(b).hex().upper() if b is not None else "" for b in arr.buffers[2:]]
    return {"VIEWS": out, "VARIADIC_DATA_BUFFERS": data}


# --------------------------------------------------------------------------------------
# the column walk


class _Writer:
    def __init__(self, schema: t.Schema) -> None:
        self.schema = schema
        self.ids = _Ids(schema)
        self.dictionaries: dict[int, Array] = {}

    def column(self, name: str, arr: Array, path: tuple[int, ...]) -> dict[str, Any]:
        """The JSON ``FieldData`` of ``arr`` (schema position ``path``)."""
        st = t.storage_of(arr.type)
        start, count = arr.offset, len(arr)
        out: dict[str, Any] = {"name": name, "count": count}
        if isinstance(st, t.DictionaryType):
            did = self.ids.ids.get(path)
            if did is None or arr.dictionary is None:
                raise ArrowTypeError(f"expected a dictionary array at a dictionary field, "
                                     f"found {arr.type} without one", field_path=name)
            self._keep_dictionary(did, arr.dictionary, name)
            out["VALIDITY"] = _validity(arr, start, count)
            out["DATA"] = _values(st.index_type, arr, start, count)
            return out
        lay = layout_of(st)
        for spec in lay.buffers:
            kind = spec.kind
            if kind == "validity":
                out["VALIDITY"] = _validity(arr, start, count)
            elif kind == "bits":
                bits = arr.buffers[1]
                out["DATA"] = (unpack_bits(bits, start, count).tolist() if bits is not None
                               else [False] * count)
            elif kind == "values":
                out["DATA"] = _values(st, arr, start, count)
            elif kind == "offsets" and isinstance(st, (t.BinaryType, t.StringType)):
                out.update(_binary(st, arr, start, count))
            elif kind == "offsets":
                n = count if lay.children in ("views", "dense") else count + 1
                offs = _typed(arr.buffers[1], f"<i{spec.byte_width}", start, n)
                out["OFFSET"] = _strs(offs) if spec.byte_width == 8 else offs.tolist()
            elif kind == "sizes":
                sizes = _typed(arr.buffers[2], f"<i{spec.byte_width}", start, count)
                out["SIZE"] = _strs(sizes) if spec.byte_width == 8 else sizes.tolist()
            elif kind == "views":
                out.update(_views(st, arr, start, count))
            elif kind == "type_ids":
                out["TYPE_ID"] = _typed(arr.buffers[0], np.int8, start, count).tolist()
        children = self._children(st, lay.children, arr, start, count)
        if children is not None:
            out["children"] = [
                self.column(f.name, c, (*path, j))
                for j, (f, c) in enumerate(zip(st.fields, children))
            ]
        return out

    def _keep_dictionary(self, did: int, dictionary: Array, name: str) -> None:
        """Remember the dictionary of id ``did``; a later one must extend the earlier one
        (a delta), since JSON has one dictionary per id and no replacements."""
        before = self.dictionaries.get(did)
        if before is not None and before is not dictionary:
            n = len(before)
            if len(dictionary) < n or compare_arrays(before, dictionary.slice(0, n), limit=1):
                raise NotSupported(
                    f"expected dictionary {did} to only grow between batches (JSON has one "
                    "dictionary per id), found it replaced; write such data as IPC, or one "
                    "JSON file per dictionary", field_path=name)
            if len(dictionary) == n:
                return
        self.dictionaries[did] = dictionary

    def _children(
        self, st: t.DataType, rule: str, arr: Array, start: int, count: int
    ) -> list[Array] | None:
        if not st.fields:
            return None
        kids = list(arr.children)
        if rule == "same":  # struct, sparse union: children line up with the parent slots
            return [c.slice(start, count) for c in kids]
        if rule == "fixed":
            size = st.list_size  # type: ignore[attr-defined]
            return [kids[0].slice(start * size, count * size)]
        if rule == "run_end":
            return self._run_end_children(kids, start, count)
        return kids  # offsets address the whole child

    @staticmethod
    def _run_end_children(kids: list[Array], start: int, count: int) -> list[Array]:
        ends, values = kids
        if start == 0 and count == (_run_ends(ends)[-1] if len(ends) else 0):
            return kids
        re = _run_ends(ends)
        first = int(np.searchsorted(re, start, side="right"))
        last = int(np.searchsorted(re, start + count - 1, side="right")) + 1 if count else first
        new_ends = np.minimum(re[first:last] - start, count).astype(
            storage_numpy_dtype(ends.type)
        )
        ends_arr = make_array(ends.type, last - first, (None, new_ends.view(np.uint8)), (), 0)
        return [ends_arr, values.slice(first, last - first)]

    def dictionary_batches(self) -> list[dict[str, Any]]:
        """The ``dictionaries`` entries, nested ones included, in id order."""
        out: dict[int, dict[str, Any]] = {}
        pending = sorted(self.dictionaries)
        while pending:
            did = pending.pop(0)
            if did in out:
                continue
            value_field, path = self.ids.value_fields[did]
            before = set(self.dictionaries)
            col = self.column(value_field.name, self.dictionaries[did], path)
            out[did] = {"id": did, "data": {"count": len(self.dictionaries[did]),
                                            "columns": [col]}}
            pending.extend(sorted(set(self.dictionaries) - before))
        return [out[k] for k in sorted(out)]


def _run_ends(ends: Array) -> np.ndarray:
    nd = storage_numpy_dtype(ends.type)
    return _typed(ends.buffers[1], nd, ends.offset, len(ends)).astype(np.int64)


# --------------------------------------------------------------------------------------
# documents


def to_json(
    schema: t.Schema, batches: Sequence[Any], *, dictionaries: dict[int, Array] | None = None
) -> dict[str, Any]:
    """The integration JSON document (a dict) of ``schema`` and ``batches``.

    ``dictionaries`` (by the ids :func:`schema_to_json` assigns) fills in dictionaries that
    no batch carries, e.g. for a file without batches.
    """
    writer = _Writer(schema)
    if dictionaries:
        writer.dictionaries.update(dictionaries)
    jbatches = []
    for batch in batches:
        _, columns, num_rows = batch_parts(batch)
        if len(columns) != len(schema.fields):
            raise ArrowInvalid(f"expected {len(schema.fields)} columns per batch, found "
                               f"{len(columns)}")
        for f, c in zip(schema.fields, columns):
            # the cheap structural level: buffers long enough for what the walk reads
            validate_array(c, path=f.name)
        jcols = [writer.column(f.name, c, (i,))
                 for i, (f, c) in enumerate(zip(schema.fields, columns))]
        jbatches.append({"count": num_rows, "columns": jcols})
    doc: dict[str, Any] = {"schema": schema_to_json(schema), "batches": jbatches}
    if writer.ids.ids:
        doc["dictionaries"] = writer.dictionary_batches()
    return doc


def dumps(schema: t.Schema, batches: Sequence[Any], *, indent: int | None = None) -> str:
    """The integration JSON text of ``schema`` and ``batches``."""
    return json.dumps(to_json(schema, batches), indent=indent, ensure_ascii=False)


def write_json(
    path: str | Path, schema: t.Schema, batches: Sequence[Any], *, indent: int | None = None
) -> None:
    """Write integration JSON to ``path`` (gzip-compressed when it ends with ``.gz``)."""
    text = dumps(schema, batches, indent=indent).encode("utf-8")
    p = Path(path)
    p.write_bytes(gzip.compress(text) if p.suffix == ".gz" else text)


__all__ = [
    "dumps",
    "field_to_json",
    "metadata_to_json",
    "schema_to_json",
    "to_json",
    "type_to_json",
    "write_json",
]
