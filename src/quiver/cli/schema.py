"""``quiver schema FILE``: the schema, nested fields as a tree, with nullability, field and
schema metadata, dictionary ids and index types, extension names; ``--json`` for machines.

Dictionary ids come from the Schema message, keyed by the path of child indices through
the flatbuffer ``Field.children`` (Columnar spec, "Schema message"): a dictionary field's
children are those of its value type, an extension field's those of its storage type.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .. import types as t
from ._common import open_input
from ._read import read_schema

_VERSIONS = {3: "V4", 4: "V5"}


def text(value: bytes) -> str:
    """Metadata bytes as text (undecodable bytes escaped)."""
    return value.decode("utf-8", errors="backslashreplace")


def child_fields(dt: t.DataType) -> tuple[t.Field, ...]:
    """The children a field carries in the flatbuffer (through dictionaries and
    extensions to the values' / storage's children)."""
    while isinstance(dt, (t.DictionaryType, t.ExtensionType)):
        dt = dt.value_type if isinstance(dt, t.DictionaryType) else dt.storage_type
    return dt.fields


def short_type(dt: t.DataType) -> str:
    """A type's name and parameters without its children (the tree shows those).

    >>> short_type(t.list_(t.int32())), short_type(t.dictionary(t.int8(), t.string()))
    ('list', 'dictionary<values=string, indices=int8>')
    >>> short_type(t.sparse_union([t.field("a", t.int8())], [5]))
    'sparse_union (type codes 5)'
    """
    if isinstance(dt, t.ExtensionType):
        return f"extension<{dt.extension_name}> over {short_type(dt.storage_type)}"
    if isinstance(dt, t.DictionaryType):
        ordered = ", ordered" if dt.ordered else ""
        return f"dictionary<values={short_type(dt.value_type)}, indices={dt.index_type}{ordered}>"
    if isinstance(dt, t.FixedSizeListType):
        return f"fixed_size_list[{dt.list_size}]"
    if isinstance(dt, t.MapType):
        return "map (keys sorted)" if dt.keys_sorted else "map"
    if isinstance(dt, t.UnionType):
        return f"{dt.name} (type codes {', '.join(map(str, dt.type_codes))})"
    if isinstance(dt, t.RunEndEncodedType):
        return "run_end_encoded"
    if isinstance(dt, t.StructType):
        return "struct"
    if isinstance(dt, t.DataType) and dt.fields:
        return dt.name
    return str(dt)


def metadata_pairs(md: Any) -> list[tuple[bytes, bytes]]:
    """Every (key, value) pair of custom metadata, in order, duplicates included (whether
    ``KeyValueMetadata`` iterates pairs or, as a mapping, keys)."""
    if not md:
        return []
    return list(md.items()) if hasattr(md, "items") else list(md)


def _metadata_pairs(md: Any) -> list[list[str]]:
    return [[text(k), text(v)] for k, v in metadata_pairs(md)]


def field_json(f: t.Field, path: tuple[int, ...], ids: dict[tuple[int, ...], int]) -> dict:
    """One field as JSON: name, type, nullability, metadata, dictionary, extension, children."""
    out: dict[str, Any] = {"name": f.name, "type": str(f.type), "nullable": f.nullable}
    dt = f.type
    ext = dt if isinstance(dt, t.ExtensionType) else None
    if ext is not None:
        out["extension"] = {"name": ext.extension_name, "metadata": text(ext.serialized)}
        dt = ext.storage_type
    if isinstance(dt, t.DictionaryType):
        out["dictionary"] = {"id": ids.get(path), "index_type": str(dt.index_type),
                             "ordered": dt.ordered}
    if f.metadata:
        out["metadata"] = _metadata_pairs(f.metadata)
    children = child_fields(f.type)
    if children:
        out["children"] = [field_json(c, (*path, i), ids) for i, c in enumerate(children)]
    return out


def schema_json(info: Any, fmt: str) -> dict:
    """The whole schema as JSON."""
    sm = info.message
    return {
        "format": fmt,
        "metadata_version": _VERSIONS.get(info.version, str(info.version)),
        "endianness": sm.endianness,
        "fields": [field_json(f, (i,), sm.dictionary_ids) for i, f in enumerate(sm.schema.fields)],
        "metadata": _metadata_pairs(sm.schema.metadata),
    }


def _tree(fields: tuple[t.Field, ...], path: tuple[int, ...], ids: dict, prefix: str,
          out: list[str]) -> None:
    for i, f in enumerate(fields):
        last = i == len(fields) - 1
        here = (*path, i)
        label = f"{f.name}: {short_type(f.type)}"
        if not f.nullable:
            label += " not null"
        dt = f.type.storage_type if isinstance(f.type, t.ExtensionType) else f.type
        if isinstance(dt, t.DictionaryType) and here in ids:
            label += f"  [dictionary id {ids[here]}]"
        out.append(f"{prefix}{'└── ' if last else '├── '}{label}")
        inner = prefix + ("    " if last else "│   ")
        children = child_fields(f.type)
        bar = "│   " if children else "    "
        if isinstance(f.type, t.ExtensionType) and f.type.serialized:
            out.append(f"{inner}{bar}extension metadata: {text(f.type.serialized)!r}")
        for k, v in _metadata_pairs(f.metadata):
            out.append(f"{inner}{bar}metadata: {k} = {v!r}")
        _tree(children, here, ids, inner, out)


def schema_text(info: Any, name: str, fmt: str) -> str:
    """The schema as a tree, one field per line."""
    sm = info.message
    fields = sm.schema.fields
    head = (f"{name}: Arrow IPC {fmt}, metadata {_VERSIONS.get(info.version, info.version)}, "
            f"{len(fields)} field{'' if len(fields) == 1 else 's'}")
    if sm.endianness != "little":
        head += f", {sm.endianness}-endian"
    lines = [head]
    _tree(fields, (), sm.dictionary_ids, "", lines)
    meta = _metadata_pairs(sm.schema.metadata)
    if meta:
        lines.append("schema metadata:")
        lines.extend(f"  {k} = {v!r}" for k, v in meta)
    return "\n".join(lines) + "\n"


def run(ns: argparse.Namespace) -> int:
    """Print the schema of ``ns.input``; 1 when only a damaged file's stream had it."""
    inp = open_input(ns.input)
    info = read_schema(inp)
    if ns.json:
        sys.stdout.write(json.dumps(schema_json(info, inp.format), indent=2) + "\n")
    else:
        sys.stdout.write(schema_text(info, inp.display, inp.format))
    sys.stdout.flush()
    if info.warning:
        print(f"quiver: {inp.display}: {info.warning}", file=sys.stderr)
        return 1
    return 0
