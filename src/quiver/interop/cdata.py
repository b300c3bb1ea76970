"""The Arrow C data and C stream interface structs, capsules and format strings.

Implements the ABI of CDataInterface.rst ("Structure definitions", "Data type description --
format strings", "Metadata") and CStreamInterface.rst ("Structure definition") with ctypes,
plus the PyCapsule plumbing of PyCapsuleInterface.rst ("Lifetime semantics").

The struct fields that hold C strings (``format``, ``name``, ``metadata``) are declared as
``void*`` because ``metadata`` is binary (it contains NUL bytes); :func:`c_string` reads one.

Theory of operation for capsules: an exported struct lives in a ctypes object kept in
``_CAPSULE_STRUCTS`` under its address; the capsule's destructor calls the struct's
``release`` if a consumer did not move it out (consumers that move it set ``release`` to
NULL), then drops the ctypes object. Nothing here is per row.

>>> fmt, _ = format_of(__import__("quiver").types.timestamp("us", "UTC"))
>>> fmt
b'tsu:UTC'
"""

from __future__ import annotations

import ctypes
import struct as _struct
from typing import Any

from .. import types as t
from ..errors import ArrowInvalid, ArrowTypeError, NotSupported

# flags (CDataInterface.rst, "The ArrowSchema structure")
ARROW_FLAG_DICTIONARY_ORDERED = 1
ARROW_FLAG_NULLABLE = 2
ARROW_FLAG_MAP_KEYS_SORTED = 4

EXTENSION_NAME_KEY = b"ARROW:extension:name"
EXTENSION_METADATA_KEY = b"ARROW:extension:metadata"


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
# format strings (CDataInterface.rst, "Data type description -- format strings")

_SIMPLE_FORMATS: dict[bytes, t.DataType] = {
    b"n": t.null(),
    b"b": t.bool_(),
    b"c": t.int8(),
    b"C": t.uint8(),
    b"s": t.int16(),
    b"S": t.uint16(),
    b"i": t.int32(),
    b"I": t.uint32(),
    b"l": t.int64(),
    b"L": t.uint64(),
    b"e": t.float16(),
    b"f": t.float32(),
    b"g": t.float64(),
    b"z": t.binary(),
    b"Z": t.large_binary(),
    b"vz": t.binary_view(),
    b"u": t.string(),
    b"U": t.large_string(),
    b"vu": t.string_view(),
    b"tdD": t.date32(),
    b"tdm": t.date64(),
    b"tts": t.time32("s"),
    b"ttm": t.time32("ms"),
    b"ttu": t.time64("us"),
    b"ttn": t.time64("ns"),
    b"tDs": t.duration("s"),
    b"tDm": t.duration("ms"),
    b"tDu": t.duration("us"),
    b"tDn": t.duration("ns"),
    b"tiM": t.month_interval(),
    b"tiD": t.day_time_interval(),
    b"tin": t.month_day_nano_interval(),
}
_FORMAT_OF_SIMPLE: dict[t.DataType, bytes] = {v: k for k, v in _SIMPLE_FORMATS.items()}

_UNIT_CODE = {"s": b"s", "ms": b"m", "us": b"u", "ns": b"n"}
_CODE_UNIT = {v: k for k, v in _UNIT_CODE.items()}

# nested formats; the value says which children the format needs
_NESTED_FORMATS = {b"+l", b"+L", b"+vl", b"+vL", b"+s", b"+m", b"+r"}


def format_of(dtype: t.DataType) -> tuple[bytes, t.DataType]:
    """The format string of ``dtype``'s physical type and the type whose children follow.

    Extension types give their storage's format (the name travels in metadata);
    dictionary types give the index format (the values travel in ``dictionary``).
    """
    dtype = t.storage_of(dtype)
    simple = _FORMAT_OF_SIMPLE.get(dtype)
    if simple is not None:
        return simple, dtype
    if isinstance(dtype, t.DictionaryType):
        return _FORMAT_OF_SIMPLE[dtype.index_type], dtype
    if isinstance(dtype, t.DecimalType):
        tail = b"" if dtype.width == 128 else b",%d" % dtype.width
        return b"d:%d,%d" % (dtype.precision, dtype.scale) + tail, dtype
    if isinstance(dtype, t.FixedSizeBinaryType):
        return b"w:%d" % dtype.width, dtype
    if isinstance(dtype, t.TimestampType):
        tz = (dtype.tz or "").encode("utf-8")
        return b"ts" + _UNIT_CODE[dtype.unit] + b":" + tz, dtype
    if isinstance(dtype, t.ListType):
        return b"+l", dtype
    if isinstance(dtype, t.LargeListType):
        return b"+L", dtype
    if isinstance(dtype, t.ListViewType):
        return b"+vl", dtype
    if isinstance(dtype, t.LargeListViewType):
        return b"+vL", dtype
    if isinstance(dtype, t.FixedSizeListType):
        return b"+w:%d" % dtype.list_size, dtype
    if isinstance(dtype, t.StructType):
        return b"+s", dtype
    if isinstance(dtype, t.MapType):
        return b"+m", dtype
    if isinstance(dtype, t.UnionType):
        mode = b"+ud:" if dtype.mode == "dense" else b"+us:"
        return mode + b",".join(b"%d" % c for c in dtype.type_codes), dtype
    if isinstance(dtype, t.RunEndEncodedType):
        return b"+r", dtype
    raise NotSupported(f"no C data format string is known for type {dtype}; report it")


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
    simple = _SIMPLE_FORMATS.get(fmt)
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
                return t.timestamp(unit, tz or None)
        if fmt in _NESTED_FORMATS:
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
                return t.MapType(entries, bool(flags & ARROW_FLAG_MAP_KEYS_SORTED))
            cls = {
                b"+l": t.ListType,
                b"+L": t.LargeListType,
                b"+vl": t.ListViewType,
                b"+vL": t.LargeListViewType,
            }[fmt]
            return cls(children[0])
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
