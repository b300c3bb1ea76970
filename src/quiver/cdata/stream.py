"""Record batches and streams through the C data and C stream interfaces, at the batch
layer: a batch as the struct array the C data interface uses for it, and an
``ArrowArrayStream`` that pulls batches lazily from a Table, a reader or any iterable.
``RecordBatch``, ``Table``, ``ChunkedArray`` and ``RecordBatchReader`` call it from their
``__arrow_c_array__`` / ``__arrow_c_stream__`` methods.

Spec: CDataInterface.rst ("Exporting"), CStreamInterface.rst, PyCapsuleInterface.rst.
Batches are recognised by their attributes (``schema``, ``num_rows``, ``columns`` of
Arrays), so this module does not import :mod:`quiver.batch`.

>>> import quiver as qv, pyarrow as pa
>>> capsule = export_stream([], schema=qv.schema([qv.field("a", qv.int8())]))
>>> pa.RecordBatchReader._import_from_c_capsule(capsule).read_all().num_rows
0
"""

from __future__ import annotations

import ctypes
import errno
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .. import types as t
from ..array.base import Array, make_array
from ..errors import ArrowError, ArrowTypeError
from ..hooks import register
from . import capsule as c
from .array import check_requested, fill_array
from .array import export_array as export_one


def _schema_node(obj: t.Schema | t.DataType) -> Any:
    if isinstance(obj, t.Schema):
        pairs = obj.metadata.items() if obj.metadata else []
        return t.c_schema_node("", t.struct(obj.fields), False, pairs, obj.fields)
    return t.c_schema_node("", obj, True, t.c_field_metadata(t.Field("", obj)))


def _batch_parts(batch: Any) -> tuple[t.Schema, list[Array], int]:
    schema = batch.schema
    columns = list(batch.columns)
    return schema, columns, int(batch.num_rows)


def _fill_batch(a: c.ArrowArray, schema: t.Schema, columns: list[Array], num_rows: int) -> None:
    """Fill ``a`` as the struct array the C data interface uses for a record batch."""
    struct_type = t.struct(schema.fields)
    as_struct = make_array(struct_type, num_rows, [None], columns, 0, 0)
    fill_array(a, as_struct)


def is_batch(obj: Any) -> bool:
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


def export_batch(batch: Any, requested_schema: Any = None) -> tuple[Any, Any]:
    """``(arrow_schema, arrow_array)`` PyCapsules for a record batch (a struct array)."""
    schema, columns, num_rows = _batch_parts(batch)
    check_requested(schema, requested_schema)
    schema_capsule = schema.__arrow_c_schema__()
    a = c.ArrowArray()
    _fill_batch(a, schema, columns, num_rows)
    return schema_capsule, c.new_capsule(a, c.ARRAY_CAPSULE)


def export_array(obj: Any, requested_schema: Any = None) -> tuple[Any, Any]:
    """``(arrow_schema, arrow_array)`` PyCapsules for a quiver Array or RecordBatch.

    Zero-copy: the C buffers are quiver's buffers, alive until the consumer releases.

    >>> import pyarrow as pa, quiver as qv
    >>> schema_capsule, array_capsule = export_array(qv.array([0, 1, 2]))
    >>> pa.Array._import_from_c_capsule(schema_capsule, array_capsule).to_pylist()
    [0, 1, 2]
    """
    if isinstance(obj, Array):
        return export_one(obj, requested_schema)
    if is_batch(obj):
        return export_batch(obj, requested_schema)
    raise ArrowTypeError(
        f"expected a quiver Array or RecordBatch to export, found {type(obj).__name__}"
    )


class _StreamState:
    """What a stream's private_data names: its schema (a Schema for record batches, a
    DataType for a stream of arrays), the source iterator and the last error message."""

    __slots__ = ("error", "iterator", "schema")

    def __init__(self, schema: t.Schema | t.DataType, iterator: Iterator[Any]) -> None:
        self.schema = schema
        self.iterator = iterator
        self.error: Any = None


def _stream_state(ptr: Any) -> _StreamState | None:
    return c.kept(ptr.contents.private_data)


def _set_error(state: _StreamState, exc: BaseException) -> int:
    state.error = ctypes.create_string_buffer(
        f"{type(exc).__name__}: {exc}".encode("utf-8", "replace")
    )
    return errno.EINVAL if isinstance(exc, (ArrowError, TypeError, ValueError)) else errno.EIO


def _guarded(ptr: Any, work: Callable[[_StreamState], None]) -> int:
    """A stream callback's frame: ``work`` on the stream's state, 0 when it returns, an
    errno when it raises (the message kept for get_last_error); nothing propagates into C."""
    state = _stream_state(ptr)
    if state is None:
        return errno.EINVAL
    try:
        work(state)
        return 0
    except BaseException as exc:
        return _set_error(state, exc)


@c.StreamGetSchema
def _stream_get_schema(ptr: Any, out: Any) -> int:
    return _guarded(ptr, lambda state: c.fill_schema(out.contents, _schema_node(state.schema)))


@c.StreamGetNext
def _stream_get_next(ptr: Any, out: Any) -> int:
    return _guarded(ptr, lambda state: _next_into(state, out.contents))


def _next_into(state: _StreamState, out: Any) -> None:
    """Fill ``out`` (an ArrowArray) with the stream's next chunk, or mark it released at
    the end of the stream."""
    batch = next(state.iterator, None)
    if batch is None:
        out.release = c.ArrayRelease()
        return
    if isinstance(state.schema, t.DataType):
        if not isinstance(batch, Array) or not batch.type.equals(state.schema):
            found = batch.type if isinstance(batch, Array) else type(batch).__name__
            raise ArrowTypeError(
                f"expected every chunk of the stream to be a {state.schema} array, "
                f"found {found}"
            )
        fill_array(out, batch)
        return
    schema, columns, num_rows = _batch_parts(batch)
    if not schema.equals(state.schema):
        raise ArrowTypeError(
            f"expected every batch of the stream to have schema {state.schema}, "
            f"found {schema}"
        )
    _fill_batch(out, state.schema, columns, num_rows)


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
        state = c.drop(s.private_data)
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
    if is_batch(obj):
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
    check_requested(schema, requested_schema)
    st = c.ArrowArrayStream()
    key = c.keep(_StreamState(schema, iterator))
    st.get_schema = _stream_get_schema
    st.get_next = _stream_get_next
    st.get_last_error = _stream_get_last_error
    st.release = _stream_release
    st.private_data = key
    return c.new_capsule(st, c.STREAM_CAPSULE)


# the hooks this module answers for the layers below (quiver.hooks)
register("cdata.export_batch", export_batch)
register("cdata.export_stream", export_stream)
