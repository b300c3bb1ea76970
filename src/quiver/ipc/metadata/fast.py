"""IPC metadata, the numpy side of decoding: the one decoder of RecordBatch tables, and
the steady shapes.

A RecordBatch table is decoded by :func:`read_record_batch` and nowhere else: the hot path
of :func:`~quiver.ipc.metadata.decode.decode_message` (a plain RecordBatch message), the
checked decoder of :mod:`.decode` (RecordBatch and DictionaryBatch headers) and
:func:`record_batch_shape` all go through it.  It reads the table with a few ``struct``
calls and never builds one Python object per FieldNode or Buffer: ``RecordBatch.nodes``
and ``RecordBatch.buffers`` are zero-copy ``(n, 2)`` int64 views of the input.  Body
offsets and lengths are checked against the body by the body decoder, not here; negative
values are rejected here, with the same "expected X, found Y" errors and offsets as
:class:`~quiver.ipc.flatbuf.Table` gives.

:class:`RecordBatchShape` records where the per-batch numbers sit in one writer's messages,
for the steady path of :mod:`quiver.ipc.steady`.

>>> from quiver.ipc.metadata import V5, Message, decode_message, encode_message
>>> rb = RecordBatch(3, [[3, 0]], [[0, 0], [0, 24]])
>>> m = decode_message(encode_message(Message(V5, rb, 24)))
>>> m.header.nodes.tolist(), m.body_length
([[3, 0]], 24)
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import CompressionError, LimitExceeded, MetadataError
from ..flatbuf import (
    Reader,
    Table,
    fast_vtable,
    read_i8,
    read_i32,
    read_i64,
    read_u16x2,
    read_u32,
    target,
)
from .decode import _fast_record_batch_message
from .model import (
    _COMPRESSIONS,
    _DEFAULT_LIMITS,
    CODECS,
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
    return _COMPRESSIONS[CODECS[codec]]


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
    >>> rb = read_record_batch(data, header.pos, _DEFAULT_LIMITS)
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


@dataclass(frozen=True, slots=True)
class RecordBatchShape:
    """Where the per-batch numbers sit in one writer's RecordBatch messages.

    A writer that sends batch after batch of one schema produces metadata whose bytes
    differ only in four places: the Message's ``bodyLength``, the RecordBatch's
    ``length``, and the contents of the FieldNode and Buffer struct vectors.  When a later
    message has the same size and the same bytes everywhere else, every vtable and offset
    is the same, so those numbers are read straight from their known positions (one
    ``struct`` call) instead of walking the flatbuffer again.

    ``fixed.unpack_from(buf)`` gives the bytes outside the four places, to compare with
    ``fixed_bytes``; ``numbers.unpack_from(buf)`` gives the numbers in byte order, which
    ``slots`` maps: the index of ``bodyLength`` and ``length``, and the slices of the
    FieldNode (``length, null_count`` pairs) and Buffer (``offset, length`` pairs) values.
    A reader must still refuse negative numbers, as the general decoder does.
    """

    size: int
    fixed: struct.Struct  # the bytes outside the four places, as strings
    fixed_bytes: tuple[bytes, ...]
    numbers: struct.Struct  # the four places, as int64s, with pad bytes between
    slots: tuple[int, int, slice, slice]  # body_length, length, nodes, buffers in numbers


def _vtable_ranges(buf: bytes, pos: int) -> list[tuple[int, int]]:
    """The bytes :func:`_fast_vtable` reads for the table at ``pos``."""
    vt = pos - read_i32(buf, pos)[0]
    vlen = read_u16x2(buf, vt)[0]
    return [(pos, pos + 4), (vt, vt + 4 + 2 * min((vlen - 4) >> 1, 5))]


def _record_batch_structure(buf: bytes, root: int, rb: int) -> list[tuple[int, int]]:
    """Byte ranges that :func:`_fast_record_batch_message` reads for structure (all but
    the numbers) in a message it has decoded: root offset, both tables' vtables, the
    version, header type and header offset, the RecordBatch's reference fields, the vector
    counts, the compression table and the variadic counts."""
    size = len(buf)
    o_version, o_htype, o_header, _, o_custom, _ = fast_vtable(buf, size, root)  # type: ignore[misc]
    out = [(0, 4), *_vtable_ranges(buf, root)]
    out += [
        (root + o_version, root + o_version + 2),
        (root + o_htype, root + o_htype + 1),
        (root + o_header, root + o_header + 4),
    ]
    if o_custom:
        out.append((root + o_custom, root + o_custom + 4))
    out += _vtable_ranges(buf, rb)
    fields = fast_vtable(buf, size, rb)
    for o in fields[1:5]:  # type: ignore[index]  # nodes, buffers, compression, variadic
        if o:
            field = rb + o
            target = field + read_u32(buf, field)[0]
            out += [(field, field + 4), (target, target + 4)]
    o_comp, o_variadic = fields[3], fields[4]  # type: ignore[index]
    if o_comp:
        ct = rb + o_comp + read_u32(buf, rb + o_comp)[0]
        o_codec, o_method = fast_vtable(buf, size, ct)[:2]  # type: ignore[index]
        out += _vtable_ranges(buf, ct)
        out += [(ct + o_codec, ct + o_codec + 1), (ct + o_method, ct + o_method + 1)]
    if o_variadic:
        vec = rb + o_variadic + read_u32(buf, rb + o_variadic)[0]
        out.append((vec + 4, vec + 4 + 8 * read_u32(buf, vec)[0]))
    return out


def record_batch_shape(buf: Any) -> RecordBatchShape | None:
    """The :class:`RecordBatchShape` of a RecordBatch message's metadata bytes, or None.

    None when the message is not a plain RecordBatch message (custom metadata, an absent
    ``bodyLength``/``length``/vector, anything the fast decoder does not take, places that
    overlap): such messages always go through the general decoder.
    """
    buf = bytes(buf)
    size = len(buf)
    message = _fast_record_batch_message(buf, _DEFAULT_LIMITS)
    if message is None:
        return None
    root = read_u32(buf, 0)[0]
    _, _, o_header, o_body, _, _ = fast_vtable(buf, size, root)  # type: ignore[misc]
    p = root + o_header
    rb = p + read_u32(buf, p)[0]
    o_length, o_nodes, o_buffers, _, _, _ = fast_vtable(buf, size, rb)  # type: ignore[misc]
    if not (o_body and o_length and o_nodes and o_buffers):
        return None
    places = [(root + o_body, 1, "body"), (rb + o_length, 1, "length")]
    for field, name in ((rb + o_nodes, "nodes"), (rb + o_buffers, "buffers")):
        vec = field + read_u32(buf, field)[0]
        places.append((vec + 4, 2 * read_u32(buf, vec)[0], name))
    places.sort()
    # every byte the fast decoder reads to learn the structure (offsets, vtables, version,
    # header type, counts, compression, variadic counts) must lie outside the places:
    # flatbuffers let a crafted table cover other bytes, and a structural byte inside a
    # place would change with the numbers while the fixed bytes still match
    structure = _record_batch_structure(buf, root, rb)
    for start, n, _ in places:
        end = start + 8 * n
        if any(a < end and start < b for a, b in structure):
            return None
    fixed_fmt, numbers_fmt, slots = ["<"], ["<"], {}
    at = count = 0
    for start, n, name in places:
        if start < at:
            return None  # overlapping places: not something a writer produces
        fixed_fmt.append(f"{start - at}s{8 * n}x")
        numbers_fmt.append(f"{start - at}x{n}q")
        slots[name] = count if n == 1 and name in ("body", "length") else slice(count, count + n)
        count += n
        at = start + 8 * n
    fixed_fmt.append(f"{size - at}s")
    fixed = struct.Struct("".join(fixed_fmt))
    return RecordBatchShape(
        size,
        fixed,
        fixed.unpack_from(buf, 0),
        struct.Struct("".join(numbers_fmt)),
        (slots["body"], slots["length"], slots["nodes"], slots["buffers"]),  # type: ignore[arg-type]
    )
