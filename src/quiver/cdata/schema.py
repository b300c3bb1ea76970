"""Schemas through the C data interface, at the types layer: format strings to types and
``arrow_schema`` capsules (or objects with ``__arrow_c_schema__``) to quiver fields and
schemas.  Exporting is the types' own ``__arrow_c_schema__`` (:mod:`quiver.types` holds the
format-string table and builds the schema node; :mod:`quiver.cdata.capsule` the struct).

Spec: CDataInterface.rst ("Data type description -- format strings", "The ArrowSchema
structure", "Metadata"), PyCapsuleInterface.rst.

>>> import pyarrow as pa
>>> str(import_field(pa.field("x", pa.list_(pa.int8()), nullable=False)))
'x: list<item: int8> not null'
"""

from __future__ import annotations

import ctypes
import struct
from typing import Any

from .. import types as t
from ..errors import ArrowInvalid, ArrowTypeError, NotSupported
from ..hooks import register
from . import capsule as c

MAX_DEPTH = 200

_CODE_UNIT = {v: k for k, v in t.C_UNIT_CODES.items()}


def format_of(dtype: t.DataType) -> tuple[bytes, t.DataType]:
    """The format string of ``dtype``'s physical type and the type whose children follow
    (:func:`quiver.types.c_format`)."""
    return t.c_format(dtype)


def export_schema(obj: t.DataType | t.Field | t.Schema) -> Any:
    """An ``arrow_schema`` PyCapsule describing a quiver type, field or schema.

    >>> import quiver as qv, pyarrow as pa
    >>> pa.Schema._import_from_c_capsule(export_schema(qv.schema([qv.field("a", qv.int8())]))).names
    ['a']
    """
    if not isinstance(obj, (t.DataType, t.Field, t.Schema)):
        raise ArrowTypeError(
            f"expected a quiver DataType, Field or Schema to export, found {type(obj).__name__}"
        )
    return obj.__arrow_c_schema__()


def _int_list(text: bytes, fmt: bytes, path: str) -> list[int]:
    try:
        return [int(x) for x in text.split(b",")] if text else []
    except ValueError:
        raise ArrowInvalid(
            f"expected comma-separated integers in format {fmt!r}, found {text!r}",
            field_path=path,
        ) from None


def parse_format(
    fmt: bytes, children: list[t.Field], path: str = "", flags: int = 0
) -> t.DataType:
    """The quiver type for format string ``fmt`` with already-imported child fields.

    Dictionary encoding is applied by the caller (it lives in ``dictionary``, not here).
    """
    simple = t.C_SIMPLE_FORMATS.get(fmt)
    if simple is not None:
        return simple

    def need(n: int) -> None:
        if len(children) != n:
            raise ArrowInvalid(
                f"expected {n} child schema(s) for format {fmt.decode(errors='replace')!r}, "
                f"found {len(children)}",
                field_path=path,
            )

    try:
        if fmt.startswith(b"d:"):
            parts = _int_list(fmt[2:], fmt, path)
            if len(parts) not in (2, 3):
                raise ArrowInvalid(
                    f"expected 'd:precision,scale[,bitwidth]', found {fmt!r}", field_path=path
                )
            width = parts[2] if len(parts) == 3 else 128
            return t.DecimalType(width, parts[0], parts[1])
        if fmt.startswith(b"w:"):
            parts = _int_list(fmt[2:], fmt, path)
            if len(parts) != 1:
                raise ArrowInvalid(f"expected 'w:bytes', found {fmt!r}", field_path=path)
            return t.fixed_size_binary(parts[0])
        if fmt.startswith(b"ts") and len(fmt) >= 4 and fmt[3:4] == b":":
            unit = _CODE_UNIT.get(fmt[2:3])
            if unit is not None:
                tz = fmt[4:].decode("utf-8")
                # any zone text is taken, as pyarrow takes it (Spark hands batches in a
                # session zone such as 'Z' or 'GMT+08:00'); the timestamp() factory and
                # full validation are where malformed zones are refused
                return t.TimestampType(unit, tz or None)
        if fmt in t.C_NESTED_CLASSES:
            if fmt == b"+s":
                return t.StructType(tuple(children))
            if fmt == b"+r":
                need(2)
                return t.RunEndEncodedType(children[0], children[1])
            need(1)
            if fmt == b"+m":
                entries = children[0]
                if not isinstance(entries.type, t.StructType) or entries.type.num_fields != 2:
                    raise ArrowInvalid(
                        f"expected a map child struct of (key, value), found {entries.type}",
                        field_path=path,
                    )
                return t.MapType(entries, bool(flags & t.C_FLAG_MAP_KEYS_SORTED))
            return t.C_NESTED_CLASSES[fmt](children[0])
        if fmt.startswith(b"+w:"):
            need(1)
            parts = _int_list(fmt[3:], fmt, path)
            if len(parts) != 1:
                raise ArrowInvalid(f"expected '+w:size', found {fmt!r}", field_path=path)
            return t.FixedSizeListType(children[0], parts[0])
        if fmt.startswith((b"+ud:", b"+us:")):
            codes = _int_list(fmt[4:], fmt, path)
            mode = "dense" if fmt[2:3] == b"d" else "sparse"
            return t.UnionType(mode, tuple(children), tuple(codes))
    except (ArrowInvalid, NotSupported):
        raise
    except (ValueError, TypeError, UnicodeDecodeError) as exc:
        raise ArrowInvalid(
            f"expected a valid type for format {fmt!r}, found an error: {exc}", field_path=path
        ) from None
    raise NotSupported(
        f"C data format string {fmt.decode(errors='replace')!r} is not supported by quiver; "
        "cast it to a supported type in the producer",
        field_path=path,
    )


def _schema_capsule(obj: Any) -> Any:
    if type(obj).__name__ == "PyCapsule":
        return obj
    return c.protocol_capsules(obj, "__arrow_c_schema__", "an arrow_schema capsule")


# --------------------------------------------------------------------------------------
# schemas


def _child_pointers(ptr_table: Any, n: int, what: str, path: str) -> list[Any]:
    if n < 0:
        raise ArrowInvalid(f"expected a non-negative n_children, found {n}", field_path=path)
    if n and not ptr_table:
        raise ArrowInvalid(
            f"expected a {what} children table for {n} children, found NULL", field_path=path
        )
    out = []
    for i in range(n):
        p = ptr_table[i]
        if not p:
            raise ArrowInvalid(f"expected child {i} to be non-NULL, found NULL", field_path=path)
        out.append(p.contents)
    return out


def _read_field(s: c.ArrowSchema, path: str, depth: int) -> t.Field:
    if depth > MAX_DEPTH:
        raise ArrowInvalid(
            f"expected type nesting of at most {MAX_DEPTH} levels, found deeper", field_path=path
        )
    if not s.release:
        raise ArrowInvalid("expected a live ArrowSchema, found a released one", field_path=path)
    fmt = c.c_string(s.format)
    if fmt is None:
        raise ArrowInvalid("expected a format string, found NULL", field_path=path)
    raw_name = c.c_string(s.name) or b""
    try:
        name = raw_name.decode("utf-8")
    except UnicodeDecodeError:
        raise ArrowInvalid(
            f"expected a UTF-8 field name, found {raw_name!r}", field_path=path
        ) from None
    here = f"{path}.{name}" if path else name
    metadata = c.decode_metadata(s.metadata, here)
    flags = int(s.flags)
    children = [
        _read_field(ch, here, depth + 1)
        for ch in _child_pointers(s.children, int(s.n_children), "schema", here)
    ]
    if s.dictionary:
        if children:
            raise ArrowInvalid(
                f"expected no children on a dictionary index schema, found {len(children)}",
                field_path=here,
            )
        index_type = parse_format(fmt, [], here, flags)
        if not isinstance(index_type, t.IntegerType):
            raise ArrowInvalid(
                f"expected an integer dictionary index format, found {fmt!r}", field_path=here
            )
        values = _read_field(s.dictionary.contents, here, depth + 1)
        dtype: t.DataType = t.DictionaryType(
            index_type, values.type, bool(flags & t.C_FLAG_DICTIONARY_ORDERED)
        )
    else:
        dtype = parse_format(fmt, children, here, flags)
    ext_name = next((v for k, v in metadata if k == t.C_EXTENSION_NAME_KEY), None)
    if ext_name is not None:
        serialized = next((v for k, v in metadata if k == t.C_EXTENSION_METADATA_KEY), b"")
        dtype = t.ExtensionType(ext_name.decode("utf-8", "replace"), dtype, serialized)
        metadata = [
            (k, v) for k, v in metadata
            if k not in (t.C_EXTENSION_NAME_KEY, t.C_EXTENSION_METADATA_KEY)
        ]
    return t.Field(name, dtype, bool(flags & t.C_FLAG_NULLABLE), metadata or None)


# Fields already imported, by the bytes that describe them (every node's format, name,
# metadata and flags): a producer that exports batch after batch of one schema (a Spark
# sink writing pyarrow batches) has it parsed once.  Reading those bytes costs a third of
# a full parse.
FIELD_CACHE: dict[tuple[Any, ...], t.Field] = {}
_FIELD_CACHE_SIZE = 256
_DIGEST_NODES = 512  # wider schemas are parsed every time
_I32 = struct.Struct("<i")


_MEMORY = c.ADDRESS_SPACE
_read_schema = c.SCHEMA_STRUCT.unpack_from
_read_i32 = _I32.unpack_from
_string = c.string_field


def _metadata_blob(address: int) -> bytes | None:
    """The raw bytes of a C data metadata block (None when malformed: the full parse
    then raises the error)."""
    (count,) = _read_i32(_MEMORY, address)
    if count < 0 or count > 10_000:
        return None
    pos = address + 4
    for _ in range(2 * count):
        (n,) = _read_i32(_MEMORY, pos)
        if n < 0:
            return None
        pos += 4 + n
    return _MEMORY[address:pos]


def _digest_into(address: int, out: list[Any], budget: list[int]) -> bool:
    """Append what identifies the schema node at ``address`` and, depth first, its
    children and dictionary to ``out`` (per node: format, name, metadata bytes, flags,
    child count, whether a dictionary follows); False when it is to be parsed in full."""
    budget[0] -= 1
    if budget[0] < 0:
        return False
    (fmt, name, metadata, flags, n_children, children, dictionary, release,
     _) = _read_schema(_MEMORY, address)
    if not release or not fmt or not 0 <= n_children <= _DIGEST_NODES or (
        n_children and not children
    ):
        return False
    blob = _metadata_blob(metadata) if metadata else b""
    if blob is None:
        return False
    out += (_string(address).value, _string(address + 8).value if name else None, blob,
            flags, n_children, bool(dictionary))
    if n_children:
        for p in c.pointers_reader(n_children)(_MEMORY, children):
            if not p:
                return False
            (k_fmt, k_name, k_metadata, k_flags, k_n, _, k_dictionary, k_release,
             _) = _read_schema(_MEMORY, p)
            if k_n or k_dictionary or k_metadata or not k_release or not k_fmt:
                if not _digest_into(p, out, budget):
                    return False
                continue
            # a plain leaf (most children), inline: a call per node is much of the cost
            budget[0] -= 1
            if budget[0] < 0:
                return False
            out += (_string(p).value, _string(p + 8).value if k_name else None, b"",
                    k_flags, 0, False)
    return not dictionary or _digest_into(dictionary, out, budget)


def schema_digest(address: int) -> tuple[Any, ...] | None:
    """What identifies the schema tree at ``address``: every node's format, name,
    metadata bytes and flags, in one flat tuple (None: too wide or malformed, parse it
    in full).  Two schemas with equal digests import to equal fields."""
    out: list[Any] = []
    return tuple(out) if _digest_into(address, out, [_DIGEST_NODES]) else None


def _check_source(key: tuple[Any, ...], names: dict[str, Any]) -> str:
    """The text of ``same(address)`` for the digest ``key`` (see :func:`schema_check`);
    the expected bytes are bound in ``names``."""
    # the readers are bound as defaults: locals, not a globals lookup at each use
    lines = ["def same(address, _read_schema=_read_schema, _MEMORY=_MEMORY, _string=_string):"]
    size = c.SCHEMA_STRUCT.size

    def tree(j: int) -> tuple[Any, int]:
        """The node at ``key[j]`` as (j, child trees, dictionary tree), and where the
        next node starts (the key lists each node, its children's, then its
        dictionary's)."""
        nxt = j + 6
        kids = []
        for _ in range(key[j + 4]):
            kid, nxt = tree(nxt)
            kids.append(kid)
        dictionary = None
        if key[j + 5]:
            dictionary, nxt = tree(nxt)
        return (j, kids, dictionary), nxt

    def fields(j: int) -> str:
        return f"_, nm{j}, md{j}, fl{j}, nc{j}, ch{j}, d{j}, r{j}, _"

    def node(at: str, here: tuple[Any, ...]) -> None:
        """Check the node ``here`` (its struct's members already read into locals
        ``*{j}``) at address ``at``, then its children and dictionary."""
        j, subtrees, dictionary = here
        fmt, name, blob, flags, n_children, has_dictionary = key[j : j + 6]
        names[f"F{j}"], names[f"N{j}"], names[f"B{j}"] = fmt, name, blob
        tests = [
            f"not r{j}", f"fl{j} != {flags}", f"nc{j} != {n_children}",
            f"not d{j}" if has_dictionary else f"d{j}",
            f"not md{j} or _blob(md{j}) != B{j}" if blob else f"md{j}",
            f"not nm{j} or _string({at} + 8).value != N{j}" if name is not None else f"nm{j}",
            f"_string({at}).value != F{j}",
        ]
        if n_children:  # a NULL children table is not read (the full parse refuses it)
            tests.insert(3, f"not ch{j}")
        lines.extend([f"  if {' or '.join(tests)}:", "    return False"])
        if n_children:
            kids = [f"a{j}_{k}" for k in range(n_children)]
            numbers = [sub[0] for sub in subtrees]  # the children's places in the key
            names[f"_pointers{n_children}"] = c.pointers_reader(n_children)
            names[f"_schemas{n_children}"] = c.structs_reader(c.SCHEMA_STRUCT, n_children)
            side_by_side = " and ".join(f"{kid} == {kids[0]} + {k * size}"
                                        for k, kid in enumerate(kids[1:], 1))
            lines.extend([
                f"  ({', '.join(kids)},) = _pointers{n_children}(_MEMORY, ch{j})",
                f"  if not ({' and '.join(kids)}):",
                "    return False",
                # one read when the children lie side by side (as pyarrow's do)
                f"  if {side_by_side or 'True'}:",
                f"    ({', '.join(fields(i) for i in numbers)},) = "
                f"_schemas{n_children}(_MEMORY, {kids[0]})",
                "  else:",
                *(f"    ({fields(i)},) = _read_schema(_MEMORY, {kid})"
                  for kid, i in zip(kids, numbers)),
            ])
            for kid, sub in zip(kids, subtrees):
                node(kid, sub)
        if dictionary is not None:
            lines.append(f"  ({fields(dictionary[0])},) = _read_schema(_MEMORY, d{j})")
            node(f"d{j}", dictionary)

    lines.append(f"  ({fields(0)},) = _read_schema(_MEMORY, address)")
    node("address", tree(0)[0])
    lines.append("  return True")
    return "\n".join(lines) + "\n"


# the generated checks by digest: a writer per file of one schema compiles it once
_CHECKS: dict[tuple[Any, ...], Any] = {}
_CHECKS_SIZE = 64


def schema_check(key: tuple[Any, ...]) -> Any:
    """``same(address)``: whether the schema tree at ``address`` has the digest ``key``
    (:func:`schema_digest`), as straight-line code that compares each node's fields as
    it reads them, without building the digest (half its cost, for an importer that
    expects batch after batch of one schema).  Compiled once per digest (~1 ms for a
    few columns, ~0.5 ms a column)."""
    same = _CHECKS.get(key)
    if same is None:
        names: dict[str, Any] = {
            "_read_schema": _read_schema, "_MEMORY": _MEMORY, "_string": _string,
            "_blob": _metadata_blob,
        }
        exec(compile(_check_source(key, names), "<quiver.cdata.schema same>", "exec"), names)
        same = names["same"]
        if len(_CHECKS) >= _CHECKS_SIZE:
            _CHECKS.clear()
        _CHECKS[key] = same
    return same


def field_from_struct(s: c.ArrowSchema) -> t.Field:
    try:
        key = schema_digest(ctypes.addressof(s))
        if key is not None:
            hit = FIELD_CACHE.get(key)
            if hit is not None:
                return hit
        field = _read_field(s, "", 0)
        if key is not None:
            if len(FIELD_CACHE) >= _FIELD_CACHE_SIZE:
                FIELD_CACHE.clear()
            FIELD_CACHE[key] = field
        return field
    finally:
        if s.release:
            s.release(ctypes.byref(s))


def field_from_capsule(capsule: Any) -> t.Field:
    address = c.capsule_address(capsule, c.SCHEMA_CAPSULE)
    return field_from_struct(c.ArrowSchema.from_address(address))


def peek_field(obj: Any) -> t.Field:
    """Read a schema capsule (or ``__arrow_c_schema__``) without releasing a raw capsule.

    For ``requested_schema`` capsules, which stay the caller's to reuse and release.
    """
    if type(obj).__name__ != "PyCapsule":
        return import_field(obj)
    address = c.capsule_address(obj, c.SCHEMA_CAPSULE)
    return _read_field(c.ArrowSchema.from_address(address), "", 0)


def import_field(obj: Any) -> t.Field:
    """A quiver Field from an ``arrow_schema`` capsule or an object with ``__arrow_c_schema__``.

    >>> import pyarrow as pa
    >>> str(import_field(pa.field("x", pa.list_(pa.int8()), nullable=False)))
    'x: list<item: int8> not null'
    """
    return field_from_capsule(_schema_capsule(obj))


def import_type(obj: Any) -> t.DataType:
    """A quiver DataType from anything that speaks ``__arrow_c_schema__``.

    >>> import pyarrow as pa
    >>> import_type(pa.timestamp("ms", "UTC"))
    DataType(timestamp[ms, tz=UTC])
    """
    return import_field(obj).type


def schema_of(f: t.Field) -> t.Schema:
    if not isinstance(f.type, t.StructType):
        raise ArrowTypeError(f"expected a struct ('+s') schema for a record batch, found {f.type}")
    return t.Schema(f.type.fields, f.metadata)


def import_schema(obj: Any) -> t.Schema:
    """A quiver Schema from a struct-typed ``__arrow_c_schema__`` (pyarrow Schema, ...).

    >>> import pyarrow as pa
    >>> import_schema(pa.schema([("a", pa.int32())], metadata={"k": "v"})).metadata
    KeyValueMetadata([(b'k', b'v')])
    """
    return schema_of(import_field(obj))


# the hooks this module answers for the layers below (quiver.hooks)
register("cdata.import_type", import_type)
register("cdata.import_schema", import_schema)
