"""IPC metadata, the numpy side of decoding: the one decoder of RecordBatch tables.

A RecordBatch table is decoded by :func:`read_record_batch` and nowhere else: the hot path
of :func:`~quiver.ipc.metadata.decode.decode_message` (a plain RecordBatch message), the
checked decoder of :mod:`.decode` (RecordBatch and DictionaryBatch headers) and
:func:`~quiver.ipc.metadata.shape.record_batch_shape` all go through it.  It reads the
table with a few ``struct`` calls and never builds one Python object per FieldNode or
Buffer: ``RecordBatch.nodes`` and ``RecordBatch.buffers`` are zero-copy ``(n, 2)`` int64
views of the input.  Body offsets and lengths are checked against the body by the body
decoder, not here; negative values are rejected here, with the same "expected X, found Y"
errors and offsets as :class:`~quiver.ipc.flatbuf.Table` gives.

This module imports numpy; :mod:`.decode` imports it on the first RecordBatch header.

>>> from quiver.ipc.metadata import V5, Message, decode_message, encode_message
>>> rb = RecordBatch(3, [[3, 0]], [[0, 0], [0, 24]])
>>> m = decode_message(encode_message(Message(V5, rb, 24)))
>>> m.header.nodes.tolist(), m.body_length
([[3, 0]], 24)
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from ...errors import CompressionError, LimitExceeded, MetadataError
from ..flatbuf import (
    Reader,
    Table,
    fast_vtable,
    read_i8,
    read_i64,
    read_u32,
    target,
)
from .model import (
    CODECS,
    COMPRESSIONS,
    BodyCompression,
    MetadataLimits,
    RecordBatch,
)

_NO_PAIRS = np.zeros((0, 2), dtype="<i8")
_NO_PAIRS.flags.writeable = False
_PAIR = np.dtype(("<i8", 2))  # frombuffer with this dtype gives an (n, 2) int64 array
_q_many: dict[int, struct.Struct] = {}

# Building the frozen dataclass through its slot descriptors skips the generic frozen
# __init__ (half the cost on the per-batch hot path); it has no __post_init__.
_new = object.__new__
_RB_SLOTS = tuple(
    getattr(RecordBatch, n).__set__
    for n in ("length", "nodes", "buffers", "compression", "variadic_buffer_counts")
)


def _table_error(buf: Any, pos: int, base_offset: int) -> MetadataError:
    """What :class:`Table` says about the table at ``pos`` that :func:`fast_vtable` refused."""
    try:
        Table(Reader(buf, base_offset=base_offset), pos, 1)
    except MetadataError as exc:
        return exc
    return MetadataError(f"expected a table at {pos}, found none", offset=base_offset + pos)


def _ref_error(buf: Any, size: int, p: int, i: int, base: int) -> MetadataError:
    return MetadataError(
        f"expected field {i}'s reference inside the {size}-byte flatbuffer, found target "
        f"offset {p + read_u32(buf, p)[0]}",
        offset=base + p,
    )


def _length_error(n: int, width: int, room: int, vec: int, base: int) -> MetadataError:
    return MetadataError(
        f"expected a vector of at most {room // width} {width}-byte elements, found "
        f"length {n}",
        offset=base + vec,
    )


def _pairs(
    buf: Any, size: int, tbl: int, i: int, o: int, what: str, limit: int, base: int
) -> np.ndarray:
    """The vector of 16-byte structs of two int64 that field ``i`` (at ``tbl + o``)
    references, as one zero-copy (n, 2) view, checked >= 0."""
    p = tbl + o
    vec = p + read_u32(buf, p)[0]
    if vec + 4 > size:
        raise _ref_error(buf, size, p, i, base)
    n = read_u32(buf, vec)[0]
    start = vec + 4
    if n * 16 > size - start:
        raise _length_error(n, 16, size - start, vec, base)
    if n > limit:
        raise LimitExceeded(f"expected at most {limit} {what}s, found {n}", offset=base + tbl)
    arr = np.frombuffer(buf, _PAIR, count=n, offset=start)
    if n <= 32:
        # tiny vectors: one struct call is several times faster than a numpy reduction
        if not n:
            return arr
        st = _q_many.get(n)
        if st is None:
            st = _q_many[n] = struct.Struct(f"<{2 * n}q")
        if min(st.unpack_from(buf, start)) >= 0:
            return arr
    elif not (arr < 0).any():
        return arr
    row = int(np.flatnonzero((arr < 0).any(axis=1))[0])
    raise MetadataError(
        f"expected non-negative {what} values, found {arr[row].tolist()} at {what} {row}",
        offset=base + tbl,
    )


def _past_end(vt: tuple[int, ...], widths: tuple[int, ...], pos: int, base: int) -> MetadataError:
    """The first field of the vtable ``vt`` (offsets, then the table size) that does not
    fit its table."""
    tsize = vt[-1]
    for i, (o, width) in enumerate(zip(vt, widths)):
        if o + width > tsize:
            return MetadataError(
                f"expected field {i} ({width} bytes at {o}) inside the {tsize}-byte table, "
                f"found it past the end",
                offset=base + pos,
            )
    return MetadataError(f"expected a valid table, found {vt}", offset=base + pos)


_RB_WIDTHS = (8, 4, 4, 4, 4)  # length, nodes, buffers, compression, variadicBufferCounts
_BC_WIDTHS = (1, 1)  # codec, method


def _compression(buf: Any, size: int, tbl: int, o: int, base: int) -> BodyCompression:
    p = tbl + o
    ct = target(buf, size, p)
    if ct is None:
        raise _ref_error(buf, size, p, 3, base)
    vt = fast_vtable(buf, size, ct)
    if vt is None:
        raise _table_error(buf, ct, base)
    o_codec, o_method, _, _, _, tsize = vt
    if o_codec + 1 > tsize or o_method + 1 > tsize:
        raise _past_end(vt, _BC_WIDTHS, ct, base)
    codec = read_i8(buf, ct + o_codec)[0] if o_codec else 0
    method = read_i8(buf, ct + o_method)[0] if o_method else 0
    if not 0 <= codec < len(CODECS):
        raise CompressionError(
            f"expected a CompressionType 0 (LZ4_FRAME) or 1 (ZSTD), found {codec}",
            offset=base + ct,
        )
    if method != 0:
        raise CompressionError(
            f"expected BodyCompressionMethod 0 (BUFFER), found {method}", offset=base + ct
        )
    return COMPRESSIONS[CODECS[codec]]


def read_record_batch(
    buf: Any, pos: int, limits: MetadataLimits, base_offset: int = 0
) -> RecordBatch:
    """The RecordBatch table at ``pos`` of the flatbuffer ``buf`` (bytes or a flat byte
    memoryview): the one decoder of RecordBatch metadata.

    Malformed bytes raise :class:`~quiver.errors.MetadataError` (negative or out-of-bounds
    values), :class:`~quiver.errors.LimitExceeded` or
    :class:`~quiver.errors.CompressionError`, located at ``base_offset`` plus the position in
    ``buf``.

    >>> from quiver.ipc.metadata import V5, Message, encode_message
    >>> data = encode_message(Message(V5, RecordBatch(2, [[2, 0]], [[0, 0], [0, 8]]), 8))
    >>> header = Reader(data).root().table(2)
    >>> rb = read_record_batch(data, header.pos, MetadataLimits())
    >>> rb.length, rb.buffers.tolist()
    (2, [[0, 0], [0, 8]])
    """
    size = len(buf)
    vt = fast_vtable(buf, size, pos)
    if vt is None:
        raise _table_error(buf, pos, base_offset)
    o_length, o_nodes, o_buffers, o_comp, o_variadic, tsize = vt
    if (
        o_length + 8 > tsize
        or o_nodes + 4 > tsize
        or o_buffers + 4 > tsize
        or o_comp + 4 > tsize
        or o_variadic + 4 > tsize
    ):
        raise _past_end(vt, _RB_WIDTHS, pos, base_offset)
    length = read_i64(buf, pos + o_length)[0] if o_length else 0
    if length < 0:
        raise MetadataError(
            f"expected a non-negative RecordBatch length, found {length}",
            offset=base_offset + pos,
        )
    if o_nodes:
        nodes = _pairs(buf, size, pos, 1, o_nodes, "FieldNode", limits.max_nodes, base_offset)
    else:
        nodes = _NO_PAIRS
    if o_buffers:
        buffers = _pairs(buf, size, pos, 2, o_buffers, "Buffer", limits.max_buffers, base_offset)
    else:
        buffers = _NO_PAIRS
    compression = _compression(buf, size, pos, o_comp, base_offset) if o_comp else None
    variadic: tuple[int, ...] = ()
    if o_variadic:
        p = pos + o_variadic
        vec = p + read_u32(buf, p)[0]
        if vec + 4 > size:
            raise _ref_error(buf, size, p, 4, base_offset)
        n = read_u32(buf, vec)[0]
        if n * 8 > size - vec - 4:
            raise _length_error(n, 8, size - vec - 4, vec, base_offset)
        if n > limits.max_count:
            raise LimitExceeded(
                f"expected at most {limits.max_count} flatbuffer elements, found more "
                f"(raise max_count if the source is trusted)",
                offset=base_offset + pos,
            )
        if n:
            variadic = struct.unpack_from(f"<{n}q", buf, vec + 4)
            if min(variadic) < 0:
                raise MetadataError(
                    f"expected non-negative variadicBufferCounts, found {min(variadic)}",
                    offset=base_offset + pos,
                )
    s0, s1, s2, s3, s4 = _RB_SLOTS
    rb = _new(RecordBatch)
    s0(rb, length)
    s1(rb, nodes)
    s2(rb, buffers)
    s3(rb, compression)
    s4(rb, variadic)
    return rb
