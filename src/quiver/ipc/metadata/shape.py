"""IPC metadata, the steady shapes: where the per-batch numbers sit in one writer's
RecordBatch messages, for the steady path of :mod:`quiver.ipc.steady`.

:func:`record_batch_shape` decodes a message with the hot path of :mod:`.decode` (and so
with the one RecordBatch decoder), then records the positions of ``bodyLength``,
``length`` and the FieldNode and Buffer vectors, and every byte that the decoder read to
learn the structure.

>>> from quiver.ipc.metadata import V5, Message, RecordBatch, encode_message
>>> meta = encode_message(Message(V5, RecordBatch(3, [[3, 0]], [[0, 0], [0, 24]]), 24))
>>> shape = record_batch_shape(meta)
>>> shape.size == len(meta), shape.numbers.unpack_from(meta)[shape.slots[0]]
(True, 24)
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from ..flatbuf import fast_vtable, read_i32, read_u16x2, read_u32
from .decode import fast_record_batch_message
from .model import DEFAULT_LIMITS


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
    """Byte ranges that :func:`fast_record_batch_message` reads for structure (all but
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
    message = fast_record_batch_message(buf, DEFAULT_LIMITS)
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
