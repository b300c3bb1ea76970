"""IPC metadata, the checked decoder: flatbuffer tables -> the plain objects of
:mod:`.model` (Message.fbs, File.fbs, Tensor.fbs, SparseTensor.fbs; Schema tables through
:mod:`.fields`).

With :mod:`.fields` this is the only code that turns flatbuffer tables into schema
objects, and the only reader of Message, Footer, Tensor and SparseTensor tables.
:func:`decode_message` is the entry point for messages: plain RecordBatch messages take a
hot path of a few ``struct`` calls (:func:`fast_record_batch_message`), anything else, or
anything that path refuses, the checked path through :class:`~quiver.ipc.flatbuf.Table`,
which explains what is wrong.  RecordBatch tables have one decoder,
:func:`quiver.ipc.metadata.fast.read_record_batch`, used by both paths and bound on the
first RecordBatch header.

Decoding checks every offset against the bytes present (see :mod:`quiver.ipc.flatbuf`),
rejects metadata versions other than V4 and V5 with :class:`~quiver.errors.NotSupported`,
and reports malformed bytes as :class:`~quiver.errors.MetadataError` (or
:class:`LimitExceeded`, :class:`CompressionError`) at an absolute byte offset.  Exceptions
of any other class are quiver's own bugs and are not disguised.

This module does not import numpy: a schema or a footer is read without it.

>>> from quiver import types as t
>>> from quiver.ipc.metadata.encode import encode_schema
>>> sm = SchemaMessage(t.schema([t.field("a", t.int32())]), {})
>>> str(decode_schema(encode_schema(sm)).schema)
'a: int32'
"""

from __future__ import annotations

import struct
import sys
from collections.abc import Callable
from typing import Any

from ...errors import ArrowError, CompressionError, LimitExceeded, MetadataError, NotSupported
from ...types import DataType
from ..flatbuf import (
    BOOL,
    I16,
    I64,
    Reader,
    Table,
    as_readable,
    fast_vtable,
    read_i16,
    read_i64,
    read_u32,
)

# the model's tensor classes and rarer header codes as m.X (cold paths); the names the
# hot paths use, imported
from . import model as m
from .fields import decode_schema_table, decode_type, int_type, key_values
from .model import (
    DEFAULT_LIMITS,
    H_RECORD_BATCH,
    SUPPORTED_VERSIONS,
    V4,
    V5,
    Blocks,
    Buffer,
    DictionaryBatch,
    Footer,
    Message,
    MetadataLimits,
    RecordBatch,
    SchemaMessage,
    unchecked_maker,
    version_name,
)

_QQ = struct.Struct("<qq")


def _reader(buf: Any, base_offset: int, limits: MetadataLimits) -> Reader:
    # the schema sits a few tables below the root (Message/Footer -> Schema -> Field)
    return Reader(
        buf,
        base_offset=base_offset,
        max_depth=limits.max_depth + 8,
        max_count=limits.max_count,
    )


# fast.read_record_batch, bound on the first RecordBatch header: it makes numpy views, and
# numpy is not needed (nor imported) to read schemas and footers
_read_record_batch: Callable[[Any, int, MetadataLimits], RecordBatch] | None = None


def _record_batch_reader() -> Callable[[Any, int, MetadataLimits], RecordBatch]:
    global _read_record_batch
    from .fast import read_record_batch

    _read_record_batch = read_record_batch
    return read_record_batch


def _decode_record_batch(tbl: Table, limits: MetadataLimits) -> RecordBatch:
    """The RecordBatch table ``tbl``, through the one RecordBatch decoder."""
    read = _read_record_batch or _record_batch_reader()
    return read(tbl.buf, tbl.pos, limits, tbl.reader.base_offset)


# Message without its generic frozen __init__ (half the cost on the per-batch hot path)
_message = unchecked_maker(Message, ("version", "header", "body_length", "custom_metadata"))


def fast_record_batch_message(buf: Any, limits: MetadataLimits) -> Message | None:
    """The hot path: a RecordBatch message, its root read with a few struct calls and its
    header by :func:`~quiver.ipc.metadata.fast.read_record_batch`.

    Returns None for anything else (other headers, custom metadata, anything out of bounds or
    invalid); the general path then decodes it or explains the error.
    """
    size = len(buf)
    if size < 12:
        return None
    root = read_u32(buf, 0)[0]
    vt = fast_vtable(buf, size, root)
    if vt is None:
        return None
    o_version, o_htype, o_header, o_body, o_custom, tsize = vt
    if (
        o_custom
        or not o_version
        or not o_htype
        or not o_header
        or o_version + 2 > tsize
        or o_htype + 1 > tsize
        or o_header + 4 > tsize
        or o_body + 8 > tsize
    ):
        return None
    version = read_i16(buf, root + o_version)[0]
    if version not in SUPPORTED_VERSIONS or buf[root + o_htype] != H_RECORD_BATCH:
        return None
    body_length = read_i64(buf, root + o_body)[0] if o_body else 0
    if body_length < 0:
        return None
    p = root + o_header
    try:
        rb = (_read_record_batch or _record_batch_reader())(buf, p + read_u32(buf, p)[0], limits)
    except ArrowError:
        return None  # the general path says what is wrong, with the message's offsets
    return _message(version, rb, body_length, None)


def decode_message(
    buf: Any, *, base_offset: int = 0, limits: MetadataLimits | None = None
) -> Message:
    """Decode a Message flatbuffer (the bytes after the length prefix, padding allowed).

    Plain RecordBatch messages take the hot path (:func:`fast_record_batch_message`);
    every other message, and any message the hot path refuses, goes through the checked
    decoder, which explains what is wrong.

    >>> from quiver.ipc.metadata.encode import encode_message
    >>> rb = RecordBatch(3, [[3, 0]], [[0, 0], [0, 24]])
    >>> m = decode_message(encode_message(Message(V5, rb, 24)))
    >>> m.header.nodes.tolist(), m.body_length
    ([[3, 0]], 24)
    """
    lim = limits or DEFAULT_LIMITS
    if not isinstance(buf, bytes):
        buf = as_readable(buf)
    fast = fast_record_batch_message(buf, lim)
    if fast is not None:
        return fast
    return decode_message_general(buf, base_offset, lim)


def _decode_dictionary_batch(tbl: Table, limits: MetadataLimits) -> DictionaryBatch:
    data = tbl.table(1)
    if data is None:
        raise tbl.reader.error("expected DictionaryBatch data (a RecordBatch), found none", tbl.pos)
    return DictionaryBatch(
        tbl.get(0, I64, 0), _decode_record_batch(data, limits), tbl.get(2, BOOL, False)
    )


def _buffer_at(tbl: Table, pos: int) -> Buffer:
    off, length = _QQ.unpack_from(tbl.buf, pos)
    if off < 0 or length < 0:
        raise tbl.reader.error(
            f"expected a non-negative Buffer offset and length, found ({off}, {length})", pos
        )
    return Buffer(off, length)


def _required_buffer(tbl: Table, i: int, what: str) -> Buffer:
    p = tbl.struct_pos(i, 16)
    if not p:
        raise tbl.reader.error(f"expected {what}, found none", tbl.pos)
    return _buffer_at(tbl, p)


def _buffer_vector(tbl: Table, i: int, what: str) -> tuple[Buffer, ...]:
    v = tbl.vector(i, 16)
    if v is None:
        raise tbl.reader.error(f"expected {what}, found none", tbl.pos)
    start, n = v
    tbl.reader.count(n, tbl.pos)
    return tuple(_buffer_at(tbl, start + 16 * k) for k in range(n))


def _tensor_type(tbl: Table) -> DataType:
    code, tt = tbl.union(0)
    return decode_type(code, tt, (), tbl)


def _tensor_dims(tbl: Table) -> tuple[tuple[int, ...], tuple[str | None, ...]]:
    if not tbl.has(2):
        raise tbl.reader.error("expected a tensor shape, found none", tbl.pos)
    shape = []
    names = []
    for dim in tbl.tables(2):
        size = dim.get(0, I64, 0)
        if size < 0:
            raise dim.reader.error(f"expected a non-negative dimension size, found {size}", dim.pos)
        shape.append(size)
        names.append(dim.string(1))
    return tuple(shape), tuple(names)


def _required_int(tbl: Table, i: int, what: str) -> DataType:
    it = tbl.table(i)
    if it is None:
        raise tbl.reader.error(f"expected {what}, found none", tbl.pos)
    return int_type(it, what)


def _decode_tensor(tbl: Table) -> m.Tensor:
    typ = _tensor_type(tbl)
    shape, names = _tensor_dims(tbl)
    strides = tbl.scalars(3, "q") or ()
    data = _required_buffer(tbl, 4, "tensor data (a Buffer)")
    return m.Tensor(typ, shape, names, tuple(strides), data.offset, data.length)


def _decode_sparse_index(code: int, it: Table | None, where: Table) -> m.SparseIndex:
    if code == 0 or it is None:
        raise where.reader.error("expected a sparseIndex, found none", where.pos)
    if code == 1:
        return m.SparseTensorIndexCOO(
            _required_int(it, 0, "COO indicesType"),
            _required_buffer(it, 2, "COO indicesBuffer"),
            tuple(it.scalars(1, "q") or ()),
            it.get(3, BOOL, False),
        )
    if code == 2:
        axis = it.get(0, I16, 0)
        if axis not in (0, 1):
            raise it.reader.error(f"expected compressedAxis 0 or 1, found {axis}", it.pos)
        return m.SparseMatrixIndexCSX(
            "row" if axis == 0 else "column",
            _required_int(it, 1, "CSX indptrType"),
            _required_buffer(it, 2, "CSX indptrBuffer"),
            _required_int(it, 3, "CSX indicesType"),
            _required_buffer(it, 4, "CSX indicesBuffer"),
        )
    if code == 3:
        axis_order = it.scalars(4, "i")
        if axis_order is None:
            raise it.reader.error("expected CSF axisOrder, found none", it.pos)
        return m.SparseTensorIndexCSF(
            _required_int(it, 0, "CSF indptrType"),
            _buffer_vector(it, 1, "CSF indptrBuffers"),
            _required_int(it, 2, "CSF indicesType"),
            _buffer_vector(it, 3, "CSF indicesBuffers"),
            tuple(axis_order),
        )
    raise where.reader.error(f"expected a SparseTensorIndex type 1..3, found {code}", where.pos)


def _decode_sparse_tensor(tbl: Table) -> m.SparseTensor:
    typ = _tensor_type(tbl)
    shape, names = _tensor_dims(tbl)
    nnz = tbl.get(3, I64, 0)
    if nnz < 0:
        raise tbl.reader.error(f"expected a non-negative non_zero_length, found {nnz}", tbl.pos)
    code, it = tbl.union(4)
    index = _decode_sparse_index(code, it, tbl)
    data = _required_buffer(tbl, 6, "sparse tensor data (a Buffer)")
    return m.SparseTensor(typ, shape, names, nnz, index, data)


def _check_version(version: int, tbl: Table) -> None:
    if version in SUPPORTED_VERSIONS:
        return
    if 0 <= version < V4:
        raise NotSupported(
            f"metadata version {version_name(version)} is not supported: expected V4 or V5 "
            f"(rewrite the data with Arrow >= 0.15)",
            offset=tbl.reader.base_offset + tbl.pos,
        )
    if version > V5:
        raise NotSupported(
            f"metadata version {version_name(version)} (enum value {version}) is not supported: "
            f"expected V4 or V5 (the data comes from a newer Arrow; upgrade quiver)",
            offset=tbl.reader.base_offset + tbl.pos,
        )
    raise tbl.reader.error(f"expected a MetadataVersion V4 or V5, found {version}", tbl.pos)


def _as_format_error(exc: ArrowError, reader: Reader, what: str) -> ArrowError:
    """An error raised while decoding, as the caller should see it.

    Errors about the bytes (MetadataError, LimitExceeded, CompressionError, NotSupported)
    pass unchanged.  Any other ArrowError comes from a constructor that refused a value the
    bytes carried (``t.decimal128(99, 0)``, a time unit a type does not take): that is bad
    metadata too, so it becomes a MetadataError.  Exceptions that are not ArrowErrors are
    not caught at all: every bounds problem is reported by the flatbuffer reader itself, so
    an IndexError, TypeError or struct.error here is a bug in quiver and must show as one.
    """
    if isinstance(exc, (MetadataError, LimitExceeded, CompressionError, NotSupported)):
        return exc
    return MetadataError(
        f"expected a valid {what} flatbuffer, found {exc.reason}",
        offset=exc.offset if exc.offset is not None else reader.base_offset,
        field_path=exc.field_path,
    )
    if isinstance(exc, ArrowError):
        return MetadataError(
            f"expected a valid {what} flatbuffer, found {exc.reason}",
            offset=exc.offset if exc.offset is not None else reader.base_offset,
            field_path=exc.field_path,
        )
    if isinstance(
        exc,
        (
            struct.error,
            IndexError,
            KeyError,
            ValueError,
            OverflowError,
            TypeError,
            RecursionError,
            MemoryError,
        ),
    ):
        return reader.error(f"expected a well-formed {what} flatbuffer, found {exc!r}", 0)
    return exc

def decode_message_general(buf: Any, base_offset: int, lim: MetadataLimits) -> Message:
    """Every message kind, through :class:`~quiver.ipc.flatbuf.Table` (checks and explains)."""
    reader = _reader(buf, base_offset, lim)
    try:
        root = reader.root()
        version = root.get(0, I16, 0)
        _check_version(version, root)
        code, ht = root.union(1)
        body_length = root.get(3, I64, 0)
        if body_length < 0:
            raise reader.error(f"expected a non-negative bodyLength, found {body_length}", root.pos)
        custom = key_values(root, 4, lim) if root.has(4) else None
        if code == 0:
            return Message(version, None, body_length, custom)
        if ht is None:
            raise reader.error(
                f"expected a header table for header type {code}, found none", root.pos
            )
        if code == H_RECORD_BATCH:
            header: m.Header = _decode_record_batch(ht, lim)
        elif code == m.H_SCHEMA:
            header = decode_schema_table(ht, lim)
        elif code == m.H_DICTIONARY_BATCH:
            header = _decode_dictionary_batch(ht, lim)
        elif code == m.H_TENSOR:
            header = _decode_tensor(ht)
        elif code == m.H_SPARSE_TENSOR:
            header = _decode_sparse_tensor(ht)
        else:
            raise reader.error(f"expected a MessageHeader type 0..5, found {code}", root.pos)
        return Message(version, header, body_length, custom)
    except ArrowError as exc:
        raise _as_format_error(exc, reader, "Message") from None


def decode_schema(
    buf: Any, *, base_offset: int = 0, limits: MetadataLimits | None = None
) -> SchemaMessage:
    """Decode a flatbuffer whose root is a bare Schema table.

    >>> from quiver import types as t
    >>> sm = SchemaMessage(t.schema([("d", t.dictionary(t.int8(), t.string()))]), {(0,): 5})
    >>> from quiver.ipc.metadata.encode import encode_schema
    >>> decode_schema(encode_schema(sm)).dictionary_ids
    {(0,): 5}
    """
    lim = limits or DEFAULT_LIMITS
    reader = _reader(buf, base_offset, lim)
    try:
        return decode_schema_table(reader.root(), lim)
    except ArrowError as exc:
        raise _as_format_error(exc, reader, "Schema") from None


_BLOCK = struct.Struct("<qi4xq")  # File.fbs struct Block: offset, metaDataLength, pad, bodyLength
_LITTLE_HOST = sys.byteorder == "little"


def _block_columns(region: memoryview) -> tuple[list[int], list[int], list[int]]:
    """The offsets, metaDataLengths and bodyLengths of the Blocks in ``region``."""
    if _LITTLE_HOST:
        # strided memoryviews of the int64 and int32 words: three C-speed tolist() calls
        words = region.cast("q")
        halves = region.cast("i")
        return words[0::3].tolist(), halves[2::6].tolist(), words[2::3].tolist()
    rows = list(_BLOCK.iter_unpack(region))
    return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]


def _blocks(tbl: Table, i: int, limits: MetadataLimits) -> Blocks:
    v = tbl.vector(i, _BLOCK.size)
    if v is None or not v[1]:
        return Blocks([], [], [])
    start, n = v
    if n > limits.max_blocks:
        raise LimitExceeded(
            f"expected at most {limits.max_blocks} Blocks, found {n}",
            offset=tbl.reader.base_offset + tbl.pos,
        )
    offsets, meta, body = _block_columns(memoryview(tbl.buf)[start : start + _BLOCK.size * n])
    if min(offsets) < 0 or min(meta) < 0 or min(body) < 0:
        k = next(k for k in range(n) if min(offsets[k], meta[k], body[k]) < 0)
        raise tbl.reader.error(
            f"expected non-negative Block values, found ({offsets[k]}, {meta[k]}, {body[k]}) "
            f"at Block {k}",
            start + _BLOCK.size * k,
        )
    return Blocks(offsets, meta, body)


def decode_footer(
    buf: Any, *, base_offset: int = 0, limits: MetadataLimits | None = None
) -> Footer:
    """Decode an IPC file Footer flatbuffer.

    >>> from quiver import types as t
    >>> sm = SchemaMessage(t.schema([("a", t.int64())]), {})
    >>> from quiver.ipc.metadata import Block
    >>> from quiver.ipc.metadata.encode import encode_footer
    >>> f = decode_footer(encode_footer(Footer(V5, sm, (), (Block(8, 136, 64),))))
    >>> f.record_batches
    (Block(offset=8, meta_data_length=136, body_length=64),)
    """
    lim = limits or DEFAULT_LIMITS
    reader = _reader(buf, base_offset, lim)
    try:
        root = reader.root()
        # a footer without a version field comes from writers that predate it: read as V4
        version = root.get(0, I16, 0) if root.has(0) else V4
        _check_version(version, root)
        st = root.table(1)
        if st is None:
            raise reader.error("expected a Footer schema, found none", root.pos)
        schema = decode_schema_table(st, lim)
        return Footer(
            version,
            schema,
            _blocks(root, 2, lim),
            _blocks(root, 3, lim),
            key_values(root, 4, lim),
        )
    except ArrowError as exc:
        raise _as_format_error(exc, reader, "Footer") from None
