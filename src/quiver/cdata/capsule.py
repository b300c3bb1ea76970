"""The Arrow C data and C stream interface structs, capsules, metadata and release callbacks.

Implements the ABI of CDataInterface.rst ("Structure definitions", "Metadata") and
CStreamInterface.rst ("Structure definition") with ctypes, plus the PyCapsule plumbing of
PyCapsuleInterface.rst ("Lifetime semantics").  The format strings live with the types
(:func:`quiver.types.c_format`, :func:`quiver.cdata.schema.parse_format`).

The struct fields that hold C strings (``format``, ``name``, ``metadata``) are declared as
``void*`` because ``metadata`` is binary (it contains NUL bytes); :func:`c_string` reads one.

Theory of operation for capsules: an exported struct lives in a ctypes object kept in
``_CAPSULE_STRUCTS`` under its address; the capsule's destructor calls the struct's
``release`` if a consumer did not move it out (consumers that move it set ``release`` to
NULL), then drops the ctypes object. Nothing here is per row.

This module is the bottom of the C data machinery: it knows nothing of quiver's types or
arrays.  Exporting fills a struct from a *node*, a plain tuple that the layer above builds:
a schema node is ``(format, name, flags, metadata pairs, child nodes, dictionary node)``
(:func:`export_schema_node`); an array struct is filled from its length, counts, buffer
addresses and already-filled child structs (:func:`fill_array`).  Every exported struct
keeps what it points at in ``_KEEP`` under the integer stored in ``private_data``; its
release callback pops that entry, releases the children and dictionary a consumer did not
move away, and sets ``release`` to NULL.

>>> cap = export_schema_node((b"i", "x", 2, [], [], None))  # 2: the nullable flag
>>> type(cap).__name__
'PyCapsule'
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import struct as _struct
import sys
from typing import Any

from ..errors import ArrowInvalid, ArrowTypeError, NotSupported
from ..hooks import register


class ArrowSchema(ctypes.Structure):
    """``struct ArrowSchema`` of the C data interface."""


class ArrowArray(ctypes.Structure):
    """``struct ArrowArray`` of the C data interface."""


class ArrowArrayStream(ctypes.Structure):
    """``struct ArrowArrayStream`` of the C stream interface."""


SchemaRelease = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowSchema))
ArrayRelease = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowArray))
StreamGetSchema = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ArrowArrayStream), ctypes.POINTER(ArrowSchema)
)
StreamGetNext = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ArrowArrayStream), ctypes.POINTER(ArrowArray)
)
# restype c_void_p, not c_char_p: a Python callback cannot return a char* it owns otherwise
StreamGetLastError = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.POINTER(ArrowArrayStream))
StreamRelease = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowArrayStream))

ArrowSchema._fields_ = [
    ("format", ctypes.c_void_p),
    ("name", ctypes.c_void_p),
    ("metadata", ctypes.c_void_p),
    ("flags", ctypes.c_int64),
    ("n_children", ctypes.c_int64),
    ("children", ctypes.POINTER(ctypes.POINTER(ArrowSchema))),
    ("dictionary", ctypes.POINTER(ArrowSchema)),
    ("release", SchemaRelease),
    ("private_data", ctypes.c_void_p),
]

ArrowArray._fields_ = [
    ("length", ctypes.c_int64),
    ("null_count", ctypes.c_int64),
    ("offset", ctypes.c_int64),
    ("n_buffers", ctypes.c_int64),
    ("n_children", ctypes.c_int64),
    ("buffers", ctypes.POINTER(ctypes.c_void_p)),
    ("children", ctypes.POINTER(ctypes.POINTER(ArrowArray))),
    ("dictionary", ctypes.POINTER(ArrowArray)),
    ("release", ArrayRelease),
    ("private_data", ctypes.c_void_p),
]

ArrowArrayStream._fields_ = [
    ("get_schema", StreamGetSchema),
    ("get_next", StreamGetNext),
    ("get_last_error", StreamGetLastError),
    ("release", StreamRelease),
    ("private_data", ctypes.c_void_p),
]

# the native layouts of the two structs, for reading or writing all members in one call
# (every member is 8 bytes on a 64-bit platform)
SCHEMA_STRUCT = _struct.Struct("@PPPqqPPPP")
ARRAY_STRUCT = _struct.Struct("@qqqqqPPPPP")
if (SCHEMA_STRUCT.size, ARRAY_STRUCT.size) != (
    ctypes.sizeof(ArrowSchema),
    ctypes.sizeof(ArrowArray),
):  # pragma: no cover - only on platforms with 4-byte pointers
    raise NotSupported("quiver's C data interface expects 8-byte pointers (a 64-bit platform)")

_TABLES: dict[int, Any] = {}


def pointer_table(n: int) -> Any:
    """The ctypes type ``void*[n]`` (cached: building a ctypes type is the slow part)."""
    cls = _TABLES.get(n)
    if cls is None:
        cls = _TABLES[n] = ctypes.c_void_p * n
    return cls


class AddressSpace(ctypes.c_char * sys.maxsize):
    """Memory from an address on, as a buffer that is never copied nor sized.

    :data:`ADDRESS_SPACE` (from address 0) is what the importers read C structs,
    pointer tables and offsets through: ``Struct.unpack_from(ADDRESS_SPACE, address)`` is
    one C call, ~6x cheaper than ``unpack(ctypes.string_at(address, size))`` (a foreign
    function call and a bytes object).  It reads exactly what ``string_at`` read, so the
    same trust in the producer's pointers applies.  An instance from a buffer's address
    is the base of zero-copy views (``owner``: what keeps that memory alive).
    """


ADDRESS_SPACE = AddressSpace.from_address(0)
# a C string field (format, name) at a struct address: ``.value`` is its bytes (None for NULL)
string_field = ctypes.c_char_p.from_address

_POINTERS: dict[int, _struct.Struct] = {}


def structs_reader(layout: _struct.Struct, n: int) -> Any:
    """``unpack_from`` of ``n`` structs of ``layout`` lying side by side (all members of
    all of them in one flat tuple)."""
    return _struct.Struct("@" + layout.format.lstrip("@") * n).unpack_from


def pointers_reader(n: int) -> Any:
    """``unpack_from`` of a table of ``n`` pointers (cached per ``n``)."""
    reader = _POINTERS.get(n)
    if reader is None:
        if len(_POINTERS) > 1024:
            _POINTERS.clear()
        reader = _POINTERS[n] = _struct.Struct(f"@{n}P").unpack_from
    return reader


SCHEMA_CAPSULE = b"arrow_schema"
ARRAY_CAPSULE = b"arrow_array"
STREAM_CAPSULE = b"arrow_array_stream"


def c_string(address: int | None) -> bytes | None:
    """The NUL-terminated bytes at ``address`` (None for a NULL pointer)."""
    if not address:
        return None
    return ctypes.string_at(address)


# --------------------------------------------------------------------------------------
# capsules

_CapsuleDestructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p,
                                 _CapsuleDestructor)(("PyCapsule_New", ctypes.pythonapi))
_capsule_pointer_raw = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi)
)
_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi)
)
_capsule_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi)
)
_capsule_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(
    ("PyCapsule_GetName", ctypes.pythonapi)
)

# address -> the ctypes struct object a live capsule points at
_CAPSULE_STRUCTS: dict[int, ctypes.Structure] = {}


def _make_destructor(name: bytes) -> Any:
    def destructor(capsule: int) -> None:
        # the capsule is being deallocated: never touch it as a Python object here
        try:
            address = _capsule_pointer_raw(capsule, name)
            obj = _CAPSULE_STRUCTS.pop(address, None)
            if obj is not None and obj.release:
                obj.release(ctypes.byref(obj))
        except Exception:  # pragma: no cover - nothing may propagate into C
            pass

    return _CapsuleDestructor(destructor)


_DESTRUCTORS = {
    SCHEMA_CAPSULE: _make_destructor(SCHEMA_CAPSULE),
    ARRAY_CAPSULE: _make_destructor(ARRAY_CAPSULE),
    STREAM_CAPSULE: _make_destructor(STREAM_CAPSULE),
}


def protocol_capsules(obj: Any, method: str, alternative: str,
                      requested_schema: Any = None) -> Any:
    """What ``obj.<method>()`` hands out (``__arrow_c_schema__``, ``__arrow_c_array__``,
    ``__arrow_c_stream__``), asked for ``requested_schema`` (a schema capsule) when given;
    ArrowTypeError naming ``alternative`` (the raw capsules also accepted) when ``obj``
    has no such method."""
    found = getattr(obj, method, None)
    if found is None:
        raise ArrowTypeError(
            f"expected an object with {method} or {alternative}, found {type(obj).__name__}"
        )
    if requested_schema is not None:
        return found(requested_schema=requested_schema)
    return found()


def new_capsule(obj: ctypes.Structure, name: bytes) -> Any:
    """A PyCapsule named ``name`` owning the struct ``obj`` (released if never moved)."""
    address = ctypes.addressof(obj)
    _CAPSULE_STRUCTS[address] = obj
    try:
        return _capsule_new(address, name, _DESTRUCTORS[name])
    except BaseException:
        _CAPSULE_STRUCTS.pop(address, None)
        raise


def capsule_address(capsule: Any, name: bytes) -> int:
    """The struct address inside ``capsule``, checking the capsule's name."""
    # one call when all is well (PyCapsule_GetPointer checks the type and the name)
    try:
        address = _capsule_pointer(capsule, name)
    except (ValueError, TypeError, ctypes.ArgumentError):
        address = None
    if address:
        return int(address)
    if type(capsule).__name__ != "PyCapsule":
        raise ArrowTypeError(
            f"expected a PyCapsule named {name.decode()!r}, found {type(capsule).__name__}"
        )
    if not _capsule_is_valid(capsule, name):
        try:
            found = _capsule_name(capsule)
        except Exception:
            found = None
        raise ArrowTypeError(
            f"expected a PyCapsule named {name.decode()!r}, found one named {found!r}"
        )
    address = _capsule_pointer(capsule, name)
    if not address:
        raise ArrowInvalid(f"expected a non-NULL {name.decode()} capsule pointer, found NULL")
    return int(address)


# --------------------------------------------------------------------------------------
# metadata (CDataInterface.rst, "Metadata"): int32 count, then int32-length-prefixed
# key and value bytes, all in native byte order

_I32 = _struct.Struct("=i")


def encode_metadata(pairs: Any) -> bytes | None:
    """Encode key/value pairs in the C data binary metadata layout (None when empty)."""
    if not pairs:
        return None
    parts = [_I32.pack(len(pairs))]
    for k, v in pairs:
        parts.append(_I32.pack(len(k)))
        parts.append(k)
        parts.append(_I32.pack(len(v)))
        parts.append(v)
    return b"".join(parts)


def decode_metadata(address: int | None, field_path: str = "") -> list[tuple[bytes, bytes]]:
    """Decode the binary metadata at ``address`` into (key, value) pairs."""
    if not address:
        return []
    (count,) = _I32.unpack(ctypes.string_at(address, 4))
    if count < 0:
        raise ArrowInvalid(
            f"expected a non-negative metadata pair count, found {count}", field_path=field_path
        )
    pos = address + 4
    pairs = []
    for _ in range(count):
        item = []
        for what in ("key", "value"):
            (n,) = _I32.unpack(ctypes.string_at(pos, 4))
            if n < 0:
                raise ArrowInvalid(
                    f"expected a non-negative metadata {what} length, found {n}",
                    field_path=field_path,
                )
            item.append(ctypes.string_at(pos + 4, n))
            pos += 4 + n
        pairs.append((item[0], item[1]))
    return pairs


# --------------------------------------------------------------------------------------
# exported structs: what they keep alive, and their release callbacks

_KEEP: dict[int, Any] = {}
_IDS = itertools.count(1)


def live_exports() -> int:
    """How many exported structs (schemas, arrays, streams) are not released yet."""
    return len(_KEEP)


def keep(obj: Any) -> int:
    """Keep ``obj`` alive until the struct whose ``private_data`` is the returned id is
    released (:func:`drop`)."""
    key = next(_IDS)
    _KEEP[key] = obj
    return key


def kept(key: int | None) -> Any:
    """What :func:`keep` stored under ``key`` (None once released)."""
    return _KEEP.get(key or 0)


def drop(key: int | None) -> Any:
    """Forget (and return) what :func:`keep` stored under ``key``."""
    return _KEEP.pop(key or 0, None)


def _release_struct(struct: Any, children_at: int, empty: type) -> None:
    """Release an exported ArrowSchema or ArrowArray and, depth first, its children and
    dictionary: what :func:`keep` holds for it has them at ``children_at`` and the next
    slot; the released struct's callback becomes an ``empty`` (NULL) one."""
    held = _KEEP.pop(struct.private_data or 0, None)
    if held is not None:
        for child in (*held[children_at], held[children_at + 1]):
            if child is not None and child.release:
                _release_struct(child, children_at, empty)
    struct.release = empty()


# the held tuples: schemas (format, children, dictionary, ...), arrays (children, ...)
@SchemaRelease
def _release_schema(ptr: Any) -> None:
    with contextlib.suppress(Exception):  # nothing may propagate into C
        _release_struct(ptr.contents, 1, SchemaRelease)


@ArrayRelease
def _release_array(ptr: Any) -> None:
    with contextlib.suppress(Exception):  # nothing may propagate into C
        _release_struct(ptr.contents, 0, ArrayRelease)


_RELEASE_ARRAY_ADDRESS = ctypes.cast(_release_array, ctypes.c_void_p).value
_RELEASE_SCHEMA_ADDRESS = ctypes.cast(_release_schema, ctypes.c_void_p).value


# --------------------------------------------------------------------------------------
# schema nodes

SchemaNode = tuple[bytes, str, int, Any, list[Any], Any]


def fill_schema(s: ArrowSchema, node: SchemaNode) -> None:
    """Fill the struct ``s`` (owned by the caller) from a schema node
    ``(format, name, flags, metadata pairs, child nodes, dictionary node or None)``."""
    fmt, name, flags, metadata, child_nodes, dictionary_node = node
    format_buf = ctypes.create_string_buffer(fmt)
    name_buf = ctypes.create_string_buffer(name.encode("utf-8"))
    meta = encode_metadata(metadata)
    meta_buf = ctypes.create_string_buffer(meta, len(meta)) if meta is not None else None

    children = [ArrowSchema() for _ in child_nodes]
    for child, sub in zip(children, child_nodes):
        fill_schema(child, sub)
    child_ptrs = pointer_table(len(children))(*map(ctypes.addressof, children))
    dictionary = None
    if dictionary_node is not None:
        dictionary = ArrowSchema()
        fill_schema(dictionary, dictionary_node)

    key = next(_IDS)
    _KEEP[key] = (format_buf, children, dictionary, name_buf, meta_buf, child_ptrs)
    # one pack_into instead of nine ctypes attribute writes (the export hot path)
    SCHEMA_STRUCT.pack_into(
        s,
        0,
        ctypes.addressof(format_buf),
        ctypes.addressof(name_buf),
        ctypes.addressof(meta_buf) if meta_buf is not None else 0,
        flags,
        len(children),
        ctypes.addressof(child_ptrs),
        ctypes.addressof(dictionary) if dictionary is not None else 0,
        _RELEASE_SCHEMA_ADDRESS,
        key,
    )


def export_schema_node(node: SchemaNode) -> Any:
    """An ``arrow_schema`` PyCapsule for a schema node (see :func:`fill_schema`)."""
    s = ArrowSchema()
    fill_schema(s, node)
    return new_capsule(s, SCHEMA_CAPSULE)


# --------------------------------------------------------------------------------------
# array structs


def fill_array(
    a: ArrowArray,
    length: int,
    null_count: int,
    offset: int,
    addresses: list[int | None],
    children: list[ArrowArray],
    dictionary: ArrowArray | None,
    owner: Any,
) -> None:
    """Fill the struct ``a`` (owned by the caller): ``addresses`` are the buffer pointers,
    ``children`` and ``dictionary`` structs already filled, ``owner`` whatever holds the
    buffers alive until the consumer releases."""
    child_ptrs = pointer_table(len(children))(*map(ctypes.addressof, children))
    buffer_table = pointer_table(len(addresses))(*addresses)
    key = next(_IDS)
    _KEEP[key] = (children, dictionary, owner, buffer_table, child_ptrs)
    ARRAY_STRUCT.pack_into(
        a,
        0,
        length,
        null_count,
        offset,
        len(addresses),
        len(children),
        ctypes.addressof(buffer_table),
        ctypes.addressof(child_ptrs),
        ctypes.addressof(dictionary) if dictionary is not None else 0,
        _RELEASE_ARRAY_ADDRESS,
        key,
    )


# the hooks this module answers for the layers below (quiver.hooks)
register("cdata.export_schema_node", export_schema_node)
