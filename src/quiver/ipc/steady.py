"""The steady-state fast path: batch after batch of one shape, each read in one step.

A stream of many small batches spends most of its time on per-message overhead: framing,
walking the flatbuffer, checking nodes and buffers, building the array objects.  Once a
RecordBatch message of a schema of plain leaf columns (fixed width, boolean, binary,
string) has been read the general way, :class:`SteadyBatches` remembers its metadata's
:class:`~quiver.ipc.metadata.RecordBatchShape`.  A later message whose prefix and
metadata bytes match that shape everywhere but the per-batch numbers is read here in one
function: the numbers come out of one ``struct`` call, the same structural checks as the
body loader's leaf path run on plain ints, and the arrays are views of the body.

Anything out of the ordinary (another size, other bytes, a negative number, a buffer
outside the body, a column too short, offsets out of range, a message split across
chunks) returns None, and the general path reads the message again and reports the problem
with its field path.  So this path never raises and never accepts what the general path
would refuse.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import types as t
from ..batch import RecordBatch
from . import metadata as md
from .body import PlanNode

_PREFIX = struct.Struct("<ii").unpack_from
_OFFSET_READERS = {4: struct.Struct("<i").unpack_from, 8: struct.Struct("<q").unpack_from}
_new = object.__new__


class SteadyBatches:
    """Reads RecordBatch messages of one known shape (see the module docstring)."""

    __slots__ = ("columns", "head", "max_body", "max_unbacked", "prefix", "schema", "shape")

    def __init__(
        self,
        shape: md.RecordBatchShape,
        plan: Sequence[PlanNode],
        schema: t.Schema,
        *,
        max_body_size: int,
        max_unbacked_rows: int,
    ) -> None:
        self.shape = shape
        self.schema = schema
        self.prefix = (-1, shape.size)
        self.head = 8 + shape.size
        self.max_body = max_body_size
        self.max_unbacked = max_unbacked_rows
        cols = []
        for node in plan:
            per, extra, div, _ = node.sizes[1]
            reader = _OFFSET_READERS[per] if node.nbuf == 3 else None
            cols.append((node.array_class, node.dtype, node.nbuf == 3, per, extra, div, reader))
        self.columns = tuple(cols)

    @classmethod
    def build(
        cls,
        metadata: Any,
        plan: Sequence[PlanNode],
        schema: t.Schema,
        *,
        max_body_size: int,
        max_unbacked_rows: int,
    ) -> SteadyBatches | None:
        """The fast path for messages shaped like ``metadata`` (bytes of a RecordBatch
        message just read the general way), or None when the plan or the message does not
        qualify: only plain leaf columns, at least one."""
        if not plan or not all(n.leaf and n.nbuf in (2, 3) for n in plan):
            return None
        shape = md.record_batch_shape(metadata)
        if shape is None:
            return None
        _, _, nodes, buffers = shape.slots
        # the vector counts are part of the fixed bytes: they hold for every match
        if (
            nodes.stop - nodes.start != 2 * len(plan)
            or buffers.stop - buffers.start != 2 * sum(n.nbuf for n in plan)
        ):
            return None
        return cls(
            shape,
            plan,
            schema,
            max_body_size=max_body_size,
            max_unbacked_rows=max_unbacked_rows,
        )

    def take(self, chunk: memoryview) -> tuple[RecordBatch, int] | None:
        """The batch at the start of ``chunk`` and the bytes it spans, or None."""
        head = self.head
        size = len(chunk)
        if size < head or _PREFIX(chunk, 0) != self.prefix:
            return None
        numbers = self.shape.match(chunk, 8)
        if numbers is None:
            return None
        body_len, length, nodes, specs = numbers
        end = head + body_len
        if size < end or body_len > self.max_body or length > 8 * body_len + self.max_unbacked:
            return None
        body = np.frombuffer(chunk, np.uint8, body_len, head)
        cols = []
        append = cols.append
        i = j = 0
        for cls, dtype, binary, per, extra, div, read in self.columns:
            n = nodes[i]
            z = nodes[i + 1]
            i += 2
            o0 = specs[j]
            n0 = specs[j + 1]
            o1 = specs[j + 2]
            n1 = specs[j + 3]
            if (
                n != length
                or z > n
                or o0 + n0 > body_len
                or o1 + n1 > body_len
                or (n and (n1 < (n + extra) * per // div or (z and n0 < (n + 7) >> 3)))
            ):
                return None
            if binary:
                o2 = specs[j + 4]
                n2 = specs[j + 5]
                j += 6
                if o2 + n2 > body_len:
                    return None
                if n:
                    first = read(chunk, head + o1)[0]
                    last = read(chunk, head + o1 + n * per)[0]
                    if first < 0 or last < first or last > n2:
                        return None
                bufs: tuple = (
                    body[o0 : o0 + n0] if z else None,
                    body[o1 : o1 + n1],
                    body[o2 : o2 + n2],
                )
            else:
                j += 4
                bufs = (body[o0 : o0 + n0] if z else None, body[o1 : o1 + n1])
            append(cls(dtype, n, bufs, (), z, 0, None))
        return RecordBatch._trusted(self.schema, cols, length), end
