"""Message bodies -> arrays (Columnar spec, "Record Batch message" and "Buffer Layout").

Loading is one walk over the compiled plan (:mod:`quiver.ipc.plan`) in depth-first
pre-order: a FieldNode per array, then the array's buffers as
:func:`quiver.layout.layout_of` lists them, then its children.  The loader's variants
(materialise a column, or skip it for projection) differ only at the leaves.  The writer's
direction (:func:`assemble`, :func:`assemble_body`, :func:`layout_body`) lives in
:mod:`quiver.ipc.assemble` and is re-exported here.

The loader slices the body without copying (uncompressed buffers are numpy views of the
source); every node, buffer and variadic count is bounds-checked against the metadata and
the body before use; the structural rules between an array's numbers (buffer sizes,
offsets, children) are the layout's rule objects (:mod:`quiver.layout_rules`).  Plain
leaves take their node's generated ``take`` (those rules as code, through
:func:`quiver.ipc.plan.node_checks`); what it refuses, and every other node, takes the
interpreted walk, which runs the same rules and words the problem with them.  V4 unions
carry a validity buffer that V5 dropped: the loader reads and discards it so that
in-memory unions always have the V5 layout.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import errors as E
from .. import layout_rules as lr
from ..array import Array
from ..buffers import empty_buffer
from . import metadata as md
from .assemble import (  # noqa: F401  (the writer's direction, re-exported)
    Assembled,
    assemble,
    assemble_body,
    compile_write_plan,
    layout_body,
)
from .endian import swap_buffer_to_native
from .plan import (  # noqa: F401  (re-exported: the plan's old home)
    MAX_DEPTH,
    V4,
    V5,
    PlanNode,
    compile_plan,
    count_checks,
    leaf_program,
    take_leaves,
)

# ======================================================================================
# loading


@dataclass
class LoadContext:
    """What one record batch (or dictionary batch) load needs besides its body."""

    version: int = V5
    dictionaries: Any = None  # DictionaryMemo-like: .get(id) -> Array
    dictionary_ids: dict[tuple[int, ...], int] = field(default_factory=dict)
    max_decompressed_size: int = 4 * 1024**3
    message_index: int | None = None
    threads: bool = True
    # unbacked rows: rows of arrays without buffers (null, run-end encoded) the body cannot bound
    max_unbacked_rows: int = 1 << 24
    big_endian: bool = False  # the source's buffers are big-endian
    swap: bool = False  # convert them to native order as they are sliced


class DeferredBody:
    """A compressed message body left in its file: slicing gives
    :class:`~quiver.ipc.compression.StoredRange` objects that the decoders read when they
    decode them (the file reader's choice for large compressed bodies of files)."""

    __slots__ = ("_offset", "_read", "_size")

    def __init__(self, read: Any, offset: int, size: int) -> None:
        self._read = read  # read(absolute offset, out array): fills out or raises
        self._offset = offset
        self._size = size

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, where: slice) -> Any:
        from .compression import StoredRange

        start, stop, _ = where.indices(self._size)
        if stop <= start:  # a zero-length buffer: nothing to read (found in review)
            return empty_buffer()
        return StoredRange(self._read, self._offset + start, stop - start)


_VECTOR_CHECK = 32  # from this many nodes or buffers, check them with numpy
PARALLEL_BODY_SIZE = 1 << 20  # compressed bodies from this size decompress on the pool


class BodyLoader:
    """One pass over the nodes and buffers of a RecordBatch table."""

    def __init__(
        self,
        batch: md.RecordBatch,
        body: memoryview | DeferredBody,
        body_offset: int,
        ctx: LoadContext,
    ) -> None:
        nodes = batch.nodes
        buffers = batch.buffers
        self.body_len = body_len = len(body)
        self.body_offset = body_offset
        self.ctx = ctx
        # the FieldNode numbers flat (length, null_count, ...) and the Buffer numbers flat
        # (offset, length, ...), as plain ints
        self.nodes: list[int] = nodes.ravel().tolist() if len(nodes) else []
        self.specs: list[int] = buffers.ravel().tolist() if len(buffers) else []
        self.num_nodes = num_nodes = len(nodes)
        self.num_buffers = num_buffers = len(buffers)
        # every node and buffer is checked once here (vectorized for wide batches; numpy's
        # per-call cost loses to a plain loop for a handful); the node count rule is
        # generated from its rule object and worded by it
        counts = lr.COUNT_RULE
        first_bad, bad_rows = count_checks(counts)
        flat = self.nodes
        if num_nodes > _VECTOR_CHECK:
            bad_nodes = bad_rows(nodes[:, 0], nodes[:, 1])
            bad_node = int(np.argmax(bad_nodes)) if bad_nodes.any() else -1
        else:
            bad_node = first_bad(flat, num_nodes)
        if bad_node >= 0:
            n, z = flat[2 * bad_node], flat[2 * bad_node + 1]
            words = counts.problem(n, z, where=f" in FieldNode {bad_node}")
            raise self.error(E.MetadataError, words or "", "")
        # the first buffer outside the body; the walk raises when it reaches it, so that
        # the error names the field it belongs to
        if num_buffers > _VECTOR_CHECK:
            offs, lens = buffers[:, 0], buffers[:, 1]
            bad = (offs < 0) | (lens < 0) | (offs > body_len) | (lens > body_len - offs)
            self.first_bad_buffer = int(np.argmax(bad)) if bad.any() else num_buffers
        else:
            specs = self.specs
            self.first_bad_buffer = next(
                (
                    i
                    for i in range(num_buffers)
                    if specs[2 * i] < 0 or specs[2 * i + 1] < 0
                    or specs[2 * i] + specs[2 * i + 1] > body_len
                ),
                num_buffers,
            )
        self.variadic = list(batch.variadic_buffer_counts)
        self.v4 = ctx.version < V5
        self.codec = batch.compression.codec if batch.compression is not None else None
        self.body: Any
        if isinstance(body, DeferredBody):
            if self.codec is None:
                raise E.ArrowInvalidArgument("expected a DeferredBody for compressed bodies only")
            self.body = body  # slices are read (and decompressed) later
        else:
            self.body = np.frombuffer(body, dtype=np.uint8) if body_len else empty_buffer()
        self.body_bytes = body  # for struct reads of single offsets (uncompressed bodies)
        # plain leaves may take their node's generated take: slices of a little-endian,
        # uncompressed body
        self.direct = self.codec is None and not ctx.big_endian and not ctx.swap
        # compressed bodies hold far more rows per byte; allow a generous codec ratio
        per_byte = 8 if self.codec is None else 8 * 256
        limit = per_byte * self.body_len + ctx.max_unbacked_rows
        if batch.length < 0 or batch.length > limit:
            raise self.error(
                E.LimitExceeded,
                f"expected a batch length between 0 and {limit} (8 rows per body byte plus "
                f"IpcLimits.max_unbacked_rows), found {batch.length}",
                "",
            )
        self.i_node = 0
        self.i_buf = 0
        self.i_var = 0
        self.big_endian = ctx.big_endian
        self.swap = ctx.swap
        self.unbacked_budget = limit  # rows that null / run-end encoded arrays may claim
        self._decompressed: dict[int, np.ndarray] = {}
        self.buffer_paths: dict[int, str] | None = None  # filled by predecompress's dry walk

    def predecompress(self, plan: Sequence[PlanNode], wanted: set[int] | None) -> None:
        """Decompress the buffers of the wanted columns together, on the thread pool.

        A dry walk (which also bounds-checks every node and buffer) finds each column's
        buffer range; skipped columns' buffers are not decompressed.
        """
        ranges = []
        paths: dict[int, str] = {}
        self.buffer_paths = paths  # the dry walk's next_buffer records each buffer's field
        for i, node in enumerate(plan):
            start = self.i_buf
            self.load(node, False)
            if wanted is None or i in wanted:
                ranges.extend(range(start, self.i_buf))
        self.buffer_paths = None
        self.i_node = self.i_buf = self.i_var = 0
        from .compression import decompress_buffers

        views = []
        for i in ranges:
            offset, length = self.specs[2 * i], self.specs[2 * i + 1]
            views.append(self.body[offset : offset + length] if length else None)

        def locate(k: int, exc: E.ArrowError) -> None:
            # the error of one buffer names it as the serial walk (next_buffer) would
            i = ranges[k]
            exc.locate(
                offset=self.body_offset + self.specs[2 * i],
                message_index=self.ctx.message_index,
                field_path=paths.get(i) or None,
            )

        # max_decompressed_size bounds each buffer, as on the serial path (next_buffer)
        out = decompress_buffers(
            self.codec,  # type: ignore[arg-type]
            views,
            max_uncompressed=self.ctx.max_decompressed_size,
            bound_total=False,
            threads=self.ctx.threads,
            names=[f"buffer {i}" for i in ranges],
            locate=locate,
        )
        self._decompressed = {i: b for i, b in zip(ranges, out) if b is not None}

    def error(self, cls: type[E.ArrowError], msg: str, path: str, offset: int | None = None):
        return cls(
            msg,
            offset=self.body_offset if offset is None else offset,
            message_index=self.ctx.message_index,
            field_path=path or None,
        )

    def _missing(self, expected: str, found: Any, path: str) -> E.ArrowError:
        """The error for metadata that ran out: ``expected <expected>, found only
        <found>``."""
        return self.error(E.MetadataError, f"expected {expected}, found only {found}", path)

    def next_buffer(self, path: str, load: bool) -> np.ndarray | None:
        """The next buffer of the field at ``path`` (None when ``load`` is false: only
        checked), decompressed when the body is compressed."""
        i = self.i_buf
        if i >= self.num_buffers:
            raise self._missing("a Buffer for this field", f"{self.num_buffers} buffers", path)
        self.i_buf = i + 1
        offset, length = self.specs[2 * i], self.specs[2 * i + 1]
        if self.buffer_paths is not None:
            self.buffer_paths[i] = path
        if i == self.first_bad_buffer:
            raise self.error(
                E.BodyError,
                f"expected buffer {i} inside the body of {self.body_len} bytes, "
                f"found offset {offset} length {length}",
                path,
            )
        if not load:
            return None
        view = self.body[offset : offset + length]
        if self.codec is None or length == 0:
            return view
        done = self._decompressed.get(i)
        if done is not None:
            return done
        from .compression import decompress_buffer

        try:
            return decompress_buffer(
                self.codec,
                view,
                max_uncompressed=self.ctx.max_decompressed_size,
                where=f"buffer {i}",
            )
        except E.ArrowError as exc:
            exc.locate(
                offset=self.body_offset + offset,
                message_index=self.ctx.message_index,
                field_path=path or None,
            )
            raise

    def next_variadic(self, path: str) -> int:
        """The next variadicBufferCounts entry (for the view field at ``path``), checked
        against the buffers left."""
        i = self.i_var
        if i >= len(self.variadic):
            raise self._missing(
                "a variadicBufferCounts entry for this view field", len(self.variadic), path
            )
        self.i_var = i + 1
        n = self.variadic[i]
        if n < 0 or n > self.num_buffers - self.i_buf:
            raise self.error(
                E.MetadataError,
                f"expected a variadic buffer count between 0 and "
                f"{self.num_buffers - self.i_buf}, found {n}",
                path,
            )
        return n

    def next_node(self, path: str) -> tuple[int, int]:
        """The next FieldNode (for the field at ``path``): length and null count."""
        i = self.i_node
        if i >= self.num_nodes:
            raise self._missing("a FieldNode for this field", f"{self.num_nodes} nodes", path)
        self.i_node = i + 1
        return self.nodes[2 * i], self.nodes[2 * i + 1]  # checked for all nodes in __init__

    def load(self, node: PlanNode, load: bool) -> Array | None:
        """Load (or skip, when ``load`` is false) one array and its children."""
        length, null_count = self.next_node(node.name)
        if node.unbacked:
            self.unbacked_budget -= length
            if self.unbacked_budget < 0:
                raise self.error(
                    E.LimitExceeded,
                    f"expected arrays without buffers (null, run-end encoded) to claim at most "
                    f"8 rows per body byte plus IpcLimits.max_unbacked_rows in all, found "
                    f"{length} more here",
                    node.name,
                )
        take = node.take
        if take is not None and self.direct:
            # the hot path of small batches and wide schemas: a plain leaf, uncompressed;
            # what its take refuses, the walk below reports (naming the buffer)
            j = self.i_buf
            k = j + node.nbuf
            if k <= self.first_bad_buffer:
                if not load:
                    self.i_buf = k
                    return None
                arr = take(self.body, self.body_bytes, 0, self.body_len, length, null_count,
                           self.specs, 2 * j)  # fmt: skip
                if arr is not None:
                    self.i_buf = k
                    return arr
        name = node.name
        if node.v4_validity and self.v4:
            # V4 gave unions and run-end encoded arrays a validity buffer; V5 dropped it
            v4_bitmap = self.next_buffer(name, load)
            if load and null_count and v4_bitmap is not None and len(v4_bitmap):
                raise self.error(
                    E.NotSupported,
                    f"expected no top-level nulls in a V4 {node.dtype} array (quiver keeps the "
                    f"V5 layout, which has no validity bitmap for it: mark the children null "
                    f"instead), found {null_count}",
                    name,
                )
        if node.v4_validity:
            null_count = 0  # no validity bitmap at this level (V5 layout): no nulls here
        bufs = [self.next_buffer(name, load) for _ in range(node.nbuf)]
        if self.swap and load:
            bufs = [swap_buffer_to_native(s, b) for s, b in zip(node.specs, bufs)]
        if node.variadic:
            n = self.next_variadic(name)
            bufs.extend(self.next_buffer(name, load) for _ in range(n))
        children = [self.load(c, load) for c in node.children]
        if not load:
            return None
        if node.has_validity and null_count == 0:
            bufs[0] = None
        self._check_sizes(node, length, bufs)
        self._check(node, length, null_count, bufs, children)  # type: ignore[arg-type]
        dictionary = None
        if node.dictionary_id is not None:
            dictionary = self._dictionary(node)
        return node.array_class(node.dtype, length, bufs, children, null_count, 0, dictionary)

    def _check_sizes(self, node: PlanNode, length: int, bufs: list[np.ndarray | None]) -> None:
        """Each fixed buffer holds what ``length`` values need (the layout's size rules,
        interpreted; an absent validity bitmap means no nulls)."""
        if not length:
            return
        for rule, buf in zip(node.sizes, bufs):
            if buf is None and rule.optional:
                continue
            have = 0 if buf is None else len(buf)
            if have < rule.need(length):  # worded by the rule only when it fails
                words = rule.problem(have, length) or ""
                raise self.error(E.BodyError, words, node.name)

    def _check(
        self,
        node: PlanNode,
        length: int,
        null_count: int,
        bufs: list[np.ndarray | None],
        children: list[Array],
    ) -> None:
        """The offsets and children rules of the node's layout, interpreted: O(1) per
        array (the offsets rule reads the first and last offsets, the run-end rule the
        last run end)."""
        if not length:
            return
        rules = node.rules
        off = rules.offsets
        if off is not None:
            limit = len(children[0]) if off.within is None else len(bufs[off.within])
            typed = self._typed(bufs[off.index], off.width, 0, length + 1)
            problem = off.problem(int(typed[0]), int(typed[length]), length, limit)
            if problem is not None:
                raise self.error(E.BodyError, problem, node.name)
        kids = rules.children
        if kids is not None:
            last = None
            if kids.kind == "run_end" and len(children[0]):
                run_ends = children[0]
                last = int(self._typed(run_ends.buffers[1], run_ends.type.byte_width,
                                       len(run_ends) - 1, 1)[0])
            found = kids.problem(length, [len(c) for c in children],
                                 list_size=node.list_size or 0, last_run_end=last)
            if found is not None:
                raise self.error(E.BodyError, found[1], node.name)

    def _typed(self, buf: np.ndarray, width: int, start: int, count: int) -> np.ndarray:
        """``count`` integers of ``width`` bytes from ``start``, in the body's byte order."""
        order = ">" if self.big_endian and not self.swap else "<"
        return buf[start * width : (start + count) * width].view(f"{order}i{width}")

    def _dictionary(self, node: PlanNode) -> Array:
        memo = self.ctx.dictionaries
        found = memo.get(node.dictionary_id) if memo is not None else None
        if found is None:
            raise self.error(
                E.DictionaryError,
                f"expected dictionary id {node.dictionary_id} to be read before the batch "
                "that uses it, found no such dictionary",
                node.name,
            )
        return found


def load_record_batch(
    plan: Sequence[PlanNode],
    batch: md.RecordBatch,
    body: memoryview | DeferredBody,
    body_offset: int,
    ctx: LoadContext,
    *,
    columns: Sequence[int] | None = None,
) -> list[Array]:
    """The columns of one RecordBatch message (only ``columns`` when given)."""
    loader = BodyLoader(batch, body, body_offset, ctx)
    wanted = None if columns is None else set(columns)
    if loader.codec is not None and ctx.threads and len(body) >= PARALLEL_BODY_SIZE:
        loader.predecompress(plan, wanted)
    if wanted is None and loader.direct:
        flat = _load_leaves(plan, loader, batch.length)
        if flat is not None:
            return flat
    out: list[Array] = []
    for i, node in enumerate(plan):
        arr = loader.load(node, wanted is None or i in wanted)
        if arr is not None:
            if len(arr) != batch.length:
                raise loader.error(
                    E.BodyError,
                    f"expected a column of the batch length {batch.length}, "
                    f"found length {len(arr)}",
                    node.name,
                )
            out.append(arr)
    return out


def _load_leaves(plan: Sequence[PlanNode], loader: BodyLoader, length: int) -> list[Array] | None:
    """All columns of a batch of plain leaves in one tight loop (:func:`take_leaves`).

    Returns None when the plan is not all plain leaves or at the first thing out of the
    ordinary; the general walk then loads the batch again and reports the problem with
    its field path.
    """
    program = leaf_program(plan)
    if program is None:
        return None
    takes, num_buffers = program
    if loader.num_nodes < len(plan) or loader.first_bad_buffer < num_buffers:
        return None
    out = take_leaves(takes, length, loader.nodes, loader.specs, loader.body,
                      loader.body_bytes, 0, loader.body_len)  # fmt: skip
    if out is not None:
        loader.i_node = len(plan)
        loader.i_buf = num_buffers
    return out


def load_single(
    node: PlanNode, batch: md.RecordBatch, body: memoryview, body_offset: int, ctx: LoadContext
) -> Array:
    """The one column of a DictionaryBatch's record batch."""
    loader = BodyLoader(batch, body, body_offset, ctx)
    return loader.load(node, True)  # type: ignore[return-value]  # load=True builds it


