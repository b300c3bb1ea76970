"""Arrays -> message bodies (the writer's direction of :mod:`quiver.ipc.body`).

One walk over the type tree in depth-first pre-order, mirroring the loader: a FieldNode
per array, then the array's buffers as :func:`quiver.layout.layout_of` lists them (each
normalised to offset 0), then its children.  :func:`compile_write_plan` and
:func:`assemble_body` are the compiled writer of plain leaf columns; :func:`layout_body`
places buffers in a body.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

import numpy as np

from .. import types as t
from ..array import Array
from ..array.concat import run_end_window
from ..buffers import empty_buffer, nbytes_of, pack_bits, unpack_bits
from ..layout import layout_of
from .plan import OFFSET_READERS, V5


@dataclass
class Assembled:
    """A batch flattened for writing: FieldNodes, buffers (views), variadic counts."""

    nodes: list[tuple[int, int]] = field(default_factory=list)
    buffers: list[np.ndarray] = field(default_factory=list)
    variadic_buffer_counts: list[int] = field(default_factory=list)


def _bitmap_slice(buf: np.ndarray | None, offset: int, length: int) -> np.ndarray | None:
    if buf is None:
        return None
    if offset % 8 == 0:
        return buf[offset // 8 : offset // 8 + (length + 7) // 8]
    return pack_bits(unpack_bits(buf, offset, length))


def _offsets_view(buf: np.ndarray, width: int, offset: int, length: int) -> np.ndarray:
    dt = np.dtype("<i4") if width == 4 else np.dtype("<i8")
    return buf[offset * width : (offset + length + 1) * width].view(dt)


class Assembler:
    """The general write walk: appends arrays in pre-order to one :class:`Assembled`."""

    def __init__(self, version: int = V5) -> None:
        self.out = Assembled()
        self.v4 = version < V5

    def add(self, arr: Array) -> None:
        """Append ``arr`` (any offset) in pre-order, normalising it to offset 0."""
        dtype = arr.type
        lay = layout_of(dtype)
        off, n = arr.offset, len(arr)
        null_count = arr.null_count
        self.out.nodes.append((n, null_count))
        bufs = arr.buffers
        if lay.leaf_pair and off % 8 == 0 and len(bufs) == 2:
            # the common leaf: validity + fixed-width values or bits, byte-aligned offset
            spec = lay.buffers[1]
            values = bufs[1]
            if values is not None:
                if spec.kind == "bits":
                    values = values[off >> 3 : (off + n + 7) >> 3]
                else:
                    w = spec.byte_width
                    values = values[off * w : (off + n) * w]
            validity = bufs[0]
            if null_count and validity is not None:
                validity = validity[off >> 3 : (off + n + 7) >> 3]
            else:
                validity = None
            self.out.buffers.append(validity)
            self.out.buffers.append(values)
            return
        storage = t.storage_of(dtype)
        rule = lay.children
        emit: list[np.ndarray | None] = []
        start = end = 0  # the value range that rebased offsets select
        for i, spec in enumerate(lay.buffers):
            buf = bufs[i] if i < len(bufs) else None
            kind = spec.kind
            w = spec.byte_width
            if kind == "validity":
                emit.append(_bitmap_slice(buf, off, n) if null_count else None)
            elif kind == "bits":
                emit.append(_bitmap_slice(buf, off, n))
            elif kind == "data":
                emit.append(empty_buffer() if buf is None else buf[start:end])
            elif kind == "offsets" and rule in ("offsets", "none"):
                if buf is None or len(buf) < (off + n + 1) * w:
                    emit.append(np.zeros(1, dtype="<i4" if w == 4 else "<i8").view(np.uint8))
                else:
                    offs = _offsets_view(buf, w, off, n)
                    start, end = int(offs[0]), int(offs[-1])
                    emit.append((offs - start if start else offs).view(np.uint8))
            else:  # fixed-width values, views, type ids, dense offsets, list-view buffers
                emit.append(None if buf is None else buf[off * w : (off + n) * w])
        if self.v4 and not lay.has_validity and not isinstance(storage, t.NullType):
            emit.insert(0, None)  # V4 unions and run-end arrays carry an (absent) validity
        if lay.variadic:
            data_bufs = bufs[len(lay.buffers) :]
            emit.extend(data_bufs)
            self.out.variadic_buffer_counts.append(len(data_bufs))
        self.out.buffers.extend(emit)  # type: ignore[arg-type]
        if rule == "offsets":
            children = [arr.children[0].slice(start, end - start)]
        else:
            children = self._children(arr, storage, rule, off, n)
        for c in children:
            self.add(c)

    def _children(
        self, arr: Array, storage: t.DataType, rule: str, off: int, n: int
    ) -> list[Array]:
        kids = arr.children
        if rule == "same":
            return [c.slice(off, n) for c in kids]
        if rule == "fixed":
            size = storage.list_size  # type: ignore[attr-defined]
            return [kids[0].slice(off * size, n * size)]
        if rule == "run_end":
            return run_end_window(arr, off, n)
        return list(kids)  # dense unions and list views keep whole children


def assemble(columns: Sequence[Array], version: int = V5) -> Assembled:
    """Flatten a batch's columns into FieldNodes and buffer views, pre-order."""
    a = Assembler(version)
    for col in columns:
        a.add(col)
    return a.out


# The compiled writer: a plan per schema says, for each top-level column, which of the
# common leaf layouts it has, so that the per-batch walk handles those columns inline;
# every other column (nested, unions, views, null, run-end encoded...) takes Assembler.
_GENERAL, _FIXED, _BITS, _BINARY = 0, 1, 2, 3
_PAD = tuple(b"\x00" * (-k % 8) for k in range(8))  # the padding after k mod 8 bytes
_OFFSET_DTYPES = {4: np.dtype("<i4"), 8: np.dtype("<i8")}
# length, offset, buffers and null count (-1: unknown) of an Array in one call: the
# properties cost a Python call each, which is most of a small column's time; no Array
# class overrides them, except null_count, which is asked for when unknown
_ARRAY_STATE = attrgetter("_length", "_offset", "_buffers", "_null_count")


def compile_write_plan(schema: t.Schema) -> tuple[tuple[int, int], ...]:
    """Per top-level field of ``schema``: (kind, byte width) for :func:`assemble_body`.

    Kinds: fixed-width values, bit-packed booleans, binary / string (width: of the
    offsets), or the general walk (0).
    """
    plan = []
    for f in schema.fields:
        lay = layout_of(f.type)
        kinds = [b.kind for b in lay.buffers]
        if lay.leaf_pair:
            spec = lay.buffers[1]
            plan.append((_BITS, 0) if spec.kind == "bits" else (_FIXED, spec.byte_width))
        elif lay.children == "none" and not lay.variadic and kinds == [
            "validity", "offsets", "data"
        ]:
            plan.append((_BINARY, lay.buffers[1].byte_width))
        else:
            plan.append((_GENERAL, 0))
    return tuple(plan)


def assemble_body(
    columns: Sequence[Array],
    plan: Sequence[tuple[int, int]],
    version: int = V5,
) -> tuple[list[int], list[int], list[Any], int, list[int]]:
    """:func:`assemble` and :func:`layout_body` (uncompressed) in one pass.

    ``plan`` comes from :func:`compile_write_plan` for the schema whose field types the
    columns have.  Returns the FieldNodes flat (``[length, null_count, ...]``), the Buffers
    flat (``[offset, length, ...]``), the parts to write (``parts[0]`` is a placeholder
    for the framed metadata, so that a small message is one ``join``), the body length
    and the variadic buffer counts; the same FieldNodes, Buffers and bytes as the general
    walk.
    """
    nodes: list[int] = []
    bufs: list[np.ndarray | None] = []
    variadic: list[int] = []
    general: Assembler | None = None
    for col, (kind, w) in zip(columns, plan):
        if kind:
            n, off, b, nc = _ARRAY_STATE(col)
            if not off & 7:
                if nc < 0:
                    nc = col.null_count
                if kind == _FIXED:
                    if len(b) == 2 and b[1] is not None:
                        values = b[1]
                        lo = off * w
                        size = n * w
                        if lo or values.nbytes != size:
                            values = values[lo : lo + size]
                        nodes += (n, nc)
                        bufs += (
                            b[0][off >> 3 : (off + n + 7) >> 3] if nc and b[0] is not None
                            else None,
                            values,
                        )
                        continue
                elif kind == _BINARY:
                    if len(b) == 3 and b[1] is not None and b[2] is not None:
                        offsets = b[1]
                        lo = off * w
                        hi = lo + (n + 1) * w
                        if hi <= offsets.nbytes:
                            read = OFFSET_READERS[w]
                            start = read(offsets, lo)[0]
                            end = read(offsets, hi - w)[0]
                            data = b[2]
                            if start:  # rebased to start at 0, with the data they select
                                offsets = offsets[lo:hi].view(_OFFSET_DTYPES[w]) - start
                                offsets = offsets.view(np.uint8)
                                data = data[start:end]
                            else:
                                if lo or hi != offsets.nbytes:
                                    offsets = offsets[lo:hi]
                                if end != data.nbytes:
                                    data = data[0:end]
                            nodes += (n, nc)
                            bufs += (
                                b[0][off >> 3 : (off + n + 7) >> 3] if nc and b[0] is not None
                                else None,
                                offsets,
                                data,
                            )
                            continue
                elif len(b) == 2 and b[1] is not None:  # _BITS
                    lo = off >> 3
                    hi = (off + n + 7) >> 3
                    values = b[1]
                    if lo or values.nbytes != hi:
                        values = values[lo:hi]
                    nodes += (n, nc)
                    bufs += (b[0][lo:hi] if nc and b[0] is not None else None, values)
                    continue
        if general is None:
            general = Assembler(version)
        out = general.out
        general.add(col)
        nodes.extend(x for node in out.nodes for x in node)
        bufs.extend(out.buffers)
        variadic.extend(out.variadic_buffer_counts)
        out.nodes.clear()
        out.buffers.clear()
        out.variadic_buffer_counts.clear()
    specs: list[int] = []
    parts: list[Any] = [None]
    pos = 0
    for buf in bufs:
        if buf is None:
            specs += (pos, 0)
            continue
        size = buf.nbytes
        specs += (pos, size)
        if size:
            parts.append(buf)
            pad = size & 7
            if pad:
                parts.append(_PAD[pad])
                size += 8 - pad
            pos += size
    return nodes, specs, parts, pos, variadic


def layout_body(
    buffers: Sequence[np.ndarray | None],
    compressed: Sequence[list[Any]] | None = None,
) -> tuple[np.ndarray, list[Any], int]:
    """Place buffers in a body: (offset, length) pairs, the parts to write, body length.

    Each buffer starts on an 8-byte boundary; ``compressed`` holds, per buffer, the parts
    that replace it (the 8-byte length prefix and the payload).
    """
    specs = np.zeros((len(buffers), 2), dtype="<i8")
    parts: list[Any] = []
    pos = 0
    zeros = b"\x00" * 8
    rows: list[tuple[int, int]] = []
    for i, buf in enumerate(buffers):
        if buf is None or len(buf) == 0:
            rows.append((pos, 0))
            continue
        if compressed is None:
            size = buf.nbytes
            parts.append(buf)
        else:
            pieces = compressed[i]
            size = sum(nbytes_of(p) for p in pieces)
            parts.extend(pieces)
        rows.append((pos, size))
        pad = -size % 8
        if pad:
            parts.append(zeros[:pad])
        pos += size + pad
    if rows:
        specs[:] = rows
    return specs, parts, pos
