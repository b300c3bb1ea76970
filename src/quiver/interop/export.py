"""Export quiver types, arrays, batches and streams through the Arrow C data interface.

Implements the producer side of CDataInterface.rst ("Exporting", "Memory management",
"Moving child arrays"), CStreamInterface.rst and the ``__arrow_c_*__`` methods of
PyCapsuleInterface.rst.

Buffers are never copied: each exported buffer pointer is the address of quiver's own numpy
buffer, and the Python objects behind it (buffers, C strings, pointer tables, child structs)
are kept in ``_KEEP`` under an integer id stored in ``private_data``.  The release callback
pops that entry (which frees them), releases the children and the dictionary that a consumer
did not move away, and sets ``release`` to NULL.  Each child struct has its own entry and
release, so a consumer may move children out independently (the spec allows it).

>>> import quiver as qv
>>> cap = export_schema(qv.int32())
>>> type(cap).__name__
'PyCapsule'
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import itertools
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from .. import types as t
from ..array.base import Array, make_array
from ..errors import ArrowError, ArrowTypeError, NotSupported
from ..layout import layout_of
from . import cdata as c

_KEEP: dict[int, Any] = {}
_IDS = itertools.count(1)

# non-NULL stand-in for empty or absent non-validity buffers: a consumer may read one
# offset (or one view) of an empty array, so it is zeroed and wide enough for that
_ZEROS = np.zeros(64, dtype=np.uint8)
_ZEROS_ADDRESS = _ZEROS.__array_interface__["data"][0]


def live_exports() -> int:
    """How many exported structs (schemas, arrays, streams) are not released yet."""
    return len(_KEEP)


def _buffer_address(buf: np.ndarray | None, validity: bool) -> int | None:
    if buf is None or buf.size == 0:
        return None if validity else _ZEROS_ADDRESS
    return buf.__array_interface__["data"][0]


# --------------------------------------------------------------------------------------
# schemas


def _release_schema_struct(s: c.ArrowSchema) -> None:
    keep = _KEEP.pop(s.private_data or 0, None)
    if keep is not None:
        for child in keep[1]:
            if child.release:
                _release_schema_struct(child)
        dictionary = keep[2]
        if dictionary is not None and dictionary.release:
            _release_schema_struct(dictionary)
    s.release = c.SchemaRelease()


@c.SchemaRelease
def _release_schema(ptr: Any) -> None:
    with contextlib.suppress(Exception):  # nothing may propagate into C
        _release_schema_struct(ptr.contents)


def _field_metadata(f: t.Field) -> list[tuple[bytes, bytes]]:
    pairs = f.metadata.items() if f.metadata else []
    ext = f.type
    if isinstance(ext, t.ExtensionType):
        pairs = [(k, v) for k, v in pairs if k not in (c.EXTENSION_NAME_KEY,
                                                      c.EXTENSION_METADATA_KEY)]
        pairs.append((c.EXTENSION_NAME_KEY, ext.extension_name.encode("utf-8")))
        pairs.append((c.EXTENSION_METADATA_KEY, ext.serialized))
    return pairs


def _fill_schema(
    s: c.ArrowSchema,
    name: str,
    dtype: t.DataType,
    nullable: bool,
    metadata: list[tuple[bytes, bytes]],
    children_fields: tuple[t.Field, ...] | None = None,
) -> None:
    """Fill the struct ``s`` (owned by the caller) for one field-like description."""
    fmt, physical = c.format_of(dtype)
    flags = c.ARROW_FLAG_NULLABLE if nullable else 0
    if isinstance(physical, t.DictionaryType) and physical.ordered:
        flags |= c.ARROW_FLAG_DICTIONARY_ORDERED
    if isinstance(physical, t.MapType) and physical.keys_sorted:
        flags |= c.ARROW_FLAG_MAP_KEYS_SORTED
    fields = physical.fields if children_fields is None else children_fields

    format_buf = ctypes.create_string_buffer(fmt)
    name_buf = ctypes.create_string_buffer(name.encode("utf-8"))
    meta = c.encode_metadata(metadata)
    meta_buf = ctypes.create_string_buffer(meta, len(meta)) if meta is not None else None

    children = [c.ArrowSchema() for _ in fields]
    for child, f in zip(children, fields):
        _fill_schema(child, f.name, f.type, f.nullable, _field_metadata(f))
    child_ptrs = c.pointer_table(len(children))(*map(ctypes.addressof, children))
    dictionary = None
    if isinstance(physical, t.DictionaryType):
        dictionary = c.ArrowSchema()
        value_type = physical.value_type
        dmeta = _field_metadata(t.Field("", value_type))
        _fill_schema(dictionary, "", value_type, True, dmeta)

    key = next(_IDS)
    _KEEP[key] = (format_buf, children, dictionary, name_buf, meta_buf, child_ptrs)
    # one pack_into instead of nine ctypes attribute writes (the export hot path)
    c.SCHEMA_STRUCT.pack_into(
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


def _fill_schema_from(s: c.ArrowSchema, obj: Any) -> None:
    if isinstance(obj, t.Schema):
        pairs = obj.metadata.items() if obj.metadata else []
        _fill_schema(s, "", t.struct(obj.fields), False, pairs, children_fields=obj.fields)
    elif isinstance(obj, t.Field):
        _fill_schema(s, obj.name, obj.type, obj.nullable, _field_metadata(obj))
    elif isinstance(obj, t.DataType):
        _fill_schema(s, "", obj, True, _field_metadata(t.Field("", obj)))
    else:
        raise ArrowTypeError(
            f"expected a quiver DataType, Field or Schema to export, found {type(obj).__name__}"
        )


def export_schema(obj: t.DataType | t.Field | t.Schema) -> Any:
    """An ``arrow_schema`` PyCapsule describing a type, field or schema.

    >>> import quiver as qv, pyarrow as pa
    >>> pa.schema(qv.schema([qv.field("a", qv.int8())])).names
    ['a']
    """
    s = c.ArrowSchema()
    _fill_schema_from(s, obj)
    return c.new_capsule(s, c.SCHEMA_CAPSULE)


# --------------------------------------------------------------------------------------
# arrays


def _release_array_struct(a: c.ArrowArray) -> None:
    keep = _KEEP.pop(a.private_data or 0, None)
    if keep is not None:
        for child in keep[0]:
            if child.release:
                _release_array_struct(child)
        dictionary = keep[1]
        if dictionary is not None and dictionary.release:
            _release_array_struct(dictionary)
    a.release = c.ArrayRelease()


@c.ArrayRelease
def _release_array(ptr: Any) -> None:
    with contextlib.suppress(Exception):  # nothing may propagate into C
        _release_array_struct(ptr.contents)


_RELEASE_ARRAY_ADDRESS = ctypes.cast(_release_array, ctypes.c_void_p).value
_RELEASE_SCHEMA_ADDRESS = ctypes.cast(_release_schema, ctypes.c_void_p).value


def _fill_array(a: c.ArrowArray, arr: Array) -> None:
    """Fill the struct ``a`` (owned by the caller) so that it views ``arr``'s buffers."""
    dtype = arr.type
    physical = t.storage_of(dtype)
    # a strided buffer (a step-sliced numpy view) has no single C pointer: copy it
    buffers = [
        b if b is None or b.flags.c_contiguous else np.ascontiguousarray(b) for b in arr.buffers
    ]
    # an absent trailing buffer (e.g. a struct built with no validity entry) is NULL
    wanted = layout_of(dtype).num_buffers
    if len(buffers) < wanted:
        buffers += [None] * (wanted - len(buffers))
    validity_first = bool(buffers) and not isinstance(physical, (t.UnionType, t.NullType))
    addresses = [
        _buffer_address(b, validity_first and i == 0) for i, b in enumerate(buffers)
    ]
    keep_extra: Any = None
    if isinstance(physical, (t.BinaryViewType, t.StringViewType)):
        # the C data interface appends the variadic buffer sizes as one more int64 buffer
        sizes = np.array([0 if b is None else b.size for b in buffers[2:]], dtype=np.int64)
        keep_extra = sizes
        addresses.append(sizes.__array_interface__["data"][0] if sizes.size else _ZEROS_ADDRESS)
    if isinstance(physical, t.NullType):
        addresses = []

    children = [c.ArrowArray() for _ in arr.children]
    for child, sub in zip(children, arr.children):
        _fill_array(child, sub)
    child_ptrs = c.pointer_table(len(children))(*map(ctypes.addressof, children))
    dictionary = None
    if arr.dictionary is not None:
        dictionary = c.ArrowArray()
        _fill_array(dictionary, arr.dictionary)
    buffer_table = c.pointer_table(len(addresses))(*addresses)

    key = next(_IDS)
    # the quiver array itself holds every buffer alive until release
    _KEEP[key] = (children, dictionary, arr, buffer_table, child_ptrs, keep_extra, buffers)
    # a known null_count is passed on; an unknown one stays -1 (the consumer counts),
    # except where it is fixed: no validity bitmap means 0 (some consumers, e.g. polars,
    # require 0 with a NULL bitmap), the null type is all nulls
    null_count = getattr(arr, "_null_count", -1)
    if isinstance(physical, t.NullType):
        null_count = len(arr)
    elif not validity_first or buffers[0] is None:
        null_count = 0
    c.ARRAY_STRUCT.pack_into(
        a,
        0,
        len(arr),
        null_count if isinstance(null_count, int) and null_count >= 0 else -1,
        # an empty slice exports offset 0: some consumers size imported buffers from the
        # length alone and then slice past them by the offset (pyarrow's IPC writer does)
        arr.offset if len(arr) else 0,
        len(addresses),
        len(children),
        ctypes.addressof(buffer_table),
        ctypes.addressof(child_ptrs),
        ctypes.addressof(dictionary) if dictionary is not None else 0,
        _RELEASE_ARRAY_ADDRESS,
        key,
    )


def _batch_parts(batch: Any) -> tuple[t.Schema, list[Array], int]:
    schema = batch.schema
    columns = list(batch.columns)
    return schema, columns, int(batch.num_rows)


def _fill_batch(a: c.ArrowArray, schema: t.Schema, columns: list[Array], num_rows: int) -> None:
    """Fill ``a`` as the struct array the C data interface uses for a record batch."""
    struct_type = t.struct(schema.fields)
    as_struct = make_array(struct_type, num_rows, [None], columns, 0, 0)
    _fill_array(a, as_struct)


def _is_batch(obj: Any) -> bool:
    """A record batch: a schema, ``num_rows`` and columns that are quiver Arrays.

    (A Table has chunked columns, so it is not one.)
    """
    if isinstance(obj, Array) or not hasattr(obj, "schema") or not hasattr(obj, "num_rows"):
        return False
    columns = getattr(obj, "columns", None)
    try:
        return columns is not None and all(isinstance(col, Array) for col in columns)
    except TypeError:
        return False


def _shape(dtype: t.DataType) -> Any:
    """The names and nesting of a type, without the physical representations."""
    return tuple((f.name, _shape(f.type)) for f in dtype.fields)


def _check_requested(ours: t.Schema | t.DataType, requested_schema: Any) -> None:
    """Apply the PyCapsule "Schema Requests" rule.

    quiver does not cast on export.  An equal request is honoured; one that asks for another
    representation of the same data (same field names and nesting, other types, e.g.
    ``string_view`` for ``string``) is answered, as the spec allows, with the data's own
    schema (the consumer checks what it got); one with other fields is incompatible and
    raises :class:`NotSupported`.
    """
    if requested_schema is None:
        return
    from .import_ import peek_field

    requested = peek_field(requested_schema).type
    our_type = t.struct(ours.fields) if isinstance(ours, t.Schema) else ours
    if requested.equals(our_type) or _shape(requested) == _shape(our_type):
        return
    raise NotSupported(
        f"expected a requested_schema with the data's fields ({our_type}), found "
        f"{requested}; quiver does not transform schemas on export: select or cast first"
    )


def export_array(obj: Any, requested_schema: Any = None) -> tuple[Any, Any]:
    """``(arrow_schema, arrow_array)`` PyCapsules for a quiver Array or RecordBatch.

    Zero-copy: the C buffers are quiver's buffers, alive until the consumer releases.

    >>> import pyarrow as pa, quiver as qv
    >>> schema_capsule, array_capsule = export_array(qv.array([0, 1, 2]))
    >>> pa.Array._import_from_c_capsule(schema_capsule, array_capsule).to_pylist()
    [0, 1, 2]
    """
    s = c.ArrowSchema()
    a = c.ArrowArray()
    if isinstance(obj, Array):
        _check_requested(obj.type, requested_schema)
        _fill_schema_from(s, obj.type)
        _fill_array(a, obj)
    elif _is_batch(obj):
        schema, columns, num_rows = _batch_parts(obj)
        _check_requested(schema, requested_schema)
        _fill_schema_from(s, schema)
        _fill_batch(a, schema, columns, num_rows)
    else:
        raise ArrowTypeError(
            f"expected a quiver Array or RecordBatch to export, found {type(obj).__name__}"
        )
    return c.new_capsule(s, c.SCHEMA_CAPSULE), c.new_capsule(a, c.ARRAY_CAPSULE)


# --------------------------------------------------------------------------------------
# streams


class _StreamState:
    """What a stream's private_data names: its schema (a Schema for record batches, a
    DataType for a stream of arrays), the source iterator and the last error message."""

    __slots__ = ("error", "iterator", "schema")

    def __init__(self, schema: t.Schema | t.DataType, iterator: Iterator[Any]) -> None:
        self.schema = schema
        self.iterator = iterator
        self.error: Any = None


def _stream_state(ptr: Any) -> _StreamState | None:
    return _KEEP.get(ptr.contents.private_data or 0)


def _set_error(state: _StreamState, exc: BaseException) -> int:
    state.error = ctypes.create_string_buffer(
        f"{type(exc).__name__}: {exc}".encode("utf-8", "replace")
    )
    return errno.EINVAL if isinstance(exc, (ArrowError, TypeError, ValueError)) else errno.EIO


@c.StreamGetSchema
def _stream_get_schema(ptr: Any, out: Any) -> int:
    state = _stream_state(ptr)
    if state is None:
        return errno.EINVAL
    try:
        _fill_schema_from(out.contents, state.schema)
        return 0
    except BaseException as exc:
        return _set_error(state, exc)


@c.StreamGetNext
def _stream_get_next(ptr: Any, out: Any) -> int:
    state = _stream_state(ptr)
    if state is None:
        return errno.EINVAL
    try:
        batch = next(state.iterator, None)
        if batch is None:
            out.contents.release = c.ArrayRelease()
            return 0
        if isinstance(state.schema, t.DataType):
            if not isinstance(batch, Array) or not batch.type.equals(state.schema):
                found = batch.type if isinstance(batch, Array) else type(batch).__name__
                raise ArrowTypeError(
                    f"expected every chunk of the stream to be a {state.schema} array, "
                    f"found {found}"
                )
            _fill_array(out.contents, batch)
            return 0
        schema, columns, num_rows = _batch_parts(batch)
        if not schema.equals(state.schema):
            raise ArrowTypeError(
                f"expected every batch of the stream to have schema {state.schema}, "
                f"found {schema}"
            )
        _fill_batch(out.contents, state.schema, columns, num_rows)
        return 0
    except BaseException as exc:
        return _set_error(state, exc)


@c.StreamGetLastError
def _stream_get_last_error(ptr: Any) -> Any:
    state = _stream_state(ptr)
    if state is None or state.error is None:
        return None
    return ctypes.addressof(state.error)


@c.StreamRelease
def _stream_release(ptr: Any) -> None:
    try:
        s = ptr.contents
        state = _KEEP.pop(s.private_data or 0, None)
        close = getattr(getattr(state, "iterator", None), "close", None)
        if close is not None:
            close()
        s.release = c.StreamRelease()
    except Exception:  # pragma: no cover - nothing may propagate into C
        pass


def _stream_source(
    obj: Any, schema: t.Schema | t.DataType | None
) -> tuple[t.Schema | t.DataType, Iterator[Any]]:
    chunks = getattr(obj, "chunks", None)
    chunk_type = getattr(obj, "type", None)
    if schema is None and chunks is not None and isinstance(chunk_type, t.DataType):
        # a ChunkedArray: a stream of arrays, described by the type alone
        return chunk_type, iter(chunks)
    if isinstance(schema, t.DataType):
        return schema, iter(obj)
    if schema is None:
        schema = getattr(obj, "schema", None)
    if not isinstance(schema, t.Schema):
        raise ArrowTypeError(
            f"expected a source with a quiver Schema (or schema=...), found {type(obj).__name__}"
        )
    if _is_batch(obj):
        return schema, iter([obj])
    to_batches = getattr(obj, "to_batches", None)
    if callable(to_batches):
        return schema, iter(to_batches())
    if isinstance(obj, Iterable):
        return schema, iter(obj)
    raise ArrowTypeError(
        f"expected a Table, RecordBatch, reader or iterable of batches, found {type(obj).__name__}"
    )


def export_stream(
    source: Any, requested_schema: Any = None, *, schema: t.Schema | t.DataType | None = None
) -> Any:
    """An ``arrow_array_stream`` PyCapsule pulling batches lazily from ``source``.

    ``source`` is a Table (``to_batches()``), a RecordBatch, a reader, or any iterable of
    record batches; pass ``schema=`` when the source has no ``.schema`` (a DataType there
    makes it a stream of arrays of that type).  A ChunkedArray
    (``.type`` and ``.chunks``) gives a stream of arrays of its type.  Batches are taken
    from the source only when the consumer calls ``get_next``.

    >>> import quiver as qv, pyarrow as pa
    >>> capsule = export_stream([], schema=qv.schema([qv.field("a", qv.int8())]))
    >>> pa.RecordBatchReader._import_from_c_capsule(capsule).read_all().num_rows
    0
    """
    schema, iterator = _stream_source(source, schema)
    _check_requested(schema, requested_schema)
    st = c.ArrowArrayStream()
    key = next(_IDS)
    _KEEP[key] = _StreamState(schema, iterator)
    st.get_schema = _stream_get_schema
    st.get_next = _stream_get_next
    st.get_last_error = _stream_get_last_error
    st.release = _stream_release
    st.private_data = key
    return c.new_capsule(st, c.STREAM_CAPSULE)
