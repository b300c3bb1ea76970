"""Message bodies <-> arrays (Columnar spec, "Record Batch message" and "Buffer Layout").

Both directions are one walk over the type tree in depth-first pre-order: a FieldNode per
array, then the array's buffers as :func:`quiver.layout.layout_of` lists them, then its
children.  The loader's variants (materialise a column, or skip it for projection) differ
only at the leaves; the assembler mirrors the loader.

The loader slices the body without copying (uncompressed buffers are numpy views of the
source); every node, buffer and variadic count is bounds-checked against the metadata and
the body before use.  V4 unions carry a validity buffer that V5 dropped: the loader reads
and discards it so that in-memory unions always have the V5 layout.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

import numpy as np

from .. import errors as E
from .. import types as t
from ..array import Array
from ..array.base import array_class_for
from ..array.concat import run_end_window
from ..buffers import empty_buffer, nbytes_of, pack_bits, unpack_bits
from ..layout import (
    BufferSpec,
    Layout,
    children_problem,
    layout_of,
    required_bytes,
)
from . import metadata as md
from .endian import swap_buffer_to_native

V4 = 3
V5 = 4


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


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


MAX_DEPTH = 64
_VECTOR_CHECK = 32  # from this many nodes or buffers, check them with numpy
PARALLEL_BODY_SIZE = 1 << 20  # compressed bodies from this size decompress on the pool


class PlanNode:
    """One field of a schema, compiled once: everything the per-batch walk asks of it.

    Compiling the type tree up front keeps the per-batch loop free of layout lookups and
    type tests, which is what small batches and wide schemas pay for.
    """

    __slots__ = (
        "_all_leaves",
        "array_class",
        "children",
        "dictionary_id",
        "dtype",
        "has_validity",
        "is_union",
        "layout",
        "leaf",
        "list_size",
        "name",
        "nbuf",
        "path",
        "rule",
        "sizes",
        "specs",
        "unbacked",
        "v4_validity",
        "variadic",
    )

    def __init__(
        self,
        dtype: t.DataType,
        path: tuple[int, ...],
        name: str,
        dictionary_ids: dict[tuple[int, ...], int],
        depth: int = 0,
    ) -> None:
        if depth > MAX_DEPTH:
            raise E.LimitExceeded(
                f"expected type nesting of at most {MAX_DEPTH} levels, found more",
                field_path=name,
            )
        storage = t.storage_of(dtype)
        lay = layout_of(storage)
        self.dtype = dtype
        self.path = path
        self.name = name
        self.layout = lay
        self.specs = lay.buffers
        self.nbuf = lay.num_buffers
        self.has_validity = lay.has_validity
        self.variadic = lay.variadic
        self.rule = lay.children
        self.is_union = isinstance(storage, t.UnionType)
        # V4 gives every type but null a validity buffer; V5 dropped it for the types whose
        # layout has none (unions, run-end encoded)
        self.v4_validity = not lay.has_validity and not isinstance(storage, t.NullType)
        # types whose length no buffer of their own backs: their lengths share one budget
        self.unbacked = isinstance(storage, (t.NullType, t.RunEndEncodedType)) or (
            isinstance(storage, t.StructType) and not storage.fields
        )
        self.list_size = getattr(storage, "list_size", 0)
        self.array_class = array_class_for(dtype)
        # per buffer: (kind, bytes per slot, extra slot) so that the bytes a buffer needs
        # for n values are (n * per_slot + extra) // divisor, precomputed from the layout
        self.sizes = _size_rules(lay)
        self.dictionary_id: int | None = None
        self.children: list[PlanNode] = []
        if isinstance(storage, t.DictionaryType):
            self.dictionary_id = dictionary_ids.get(path)
            if self.dictionary_id is None:
                raise E.DictionaryError(
                    "expected a dictionary id for this dictionary-encoded field, found none",
                    field_path=name,
                )
        else:
            self.children = [
                PlanNode(f.type, (*path, i), _join(name, f.name), dictionary_ids, depth + 1)
                for i, f in enumerate(storage.fields)
            ]
        # a plain leaf: fixed buffers only, no children, no dictionary, no V4 union slot
        self.leaf = (
            not self.children
            and self.dictionary_id is None
            and not self.variadic
            and not self.v4_validity
            and not self.unbacked
            and self.rule == "none"
        )


_SIZE_RULES: dict[int, tuple[Layout, tuple]] = {}


def _size_rules(lay: Layout) -> tuple[tuple[int, int, int, bool], ...]:
    """:func:`_size_rule` of each buffer of ``lay``, computed once per layout object
    (layout_of keeps one object per type, so a compiled plan reuses them)."""
    hit = _SIZE_RULES.get(id(lay))
    if hit is not None and hit[0] is lay:
        return hit[1]
    rules = tuple(_size_rule(spec, lay) for spec in lay.buffers)
    if len(_SIZE_RULES) < 4096:
        _SIZE_RULES[id(lay)] = (lay, rules)  # the layout kept alive: its id stays its own
    return rules


def _size_rule(spec: BufferSpec, lay: Layout) -> tuple[int, int, int, bool]:
    """``required_bytes`` as (per, extra, divisor, optional): a buffer needs
    ``(n + extra) * per // divisor`` bytes for ``n > 0`` values (none for 0), and an
    optional one (validity) may be absent."""
    kind = spec.kind
    if kind in ("validity", "bits"):
        rule = (1, 7, 8, kind == "validity")
    elif kind == "offsets" and required_bytes(spec, lay, 1) == 2 * spec.byte_width:
        rule = (spec.byte_width, 1, 1, False)  # length + 1 entries
    else:
        rule = (spec.byte_width, 0, 1, False)  # values, views, sizes, type ids; data: 0
    for n in (1, 2, 9, 17):  # the rule is the layout table's, restated for speed
        per, extra, div, _ = rule
        if (n + extra) * per // div != required_bytes(spec, lay, n):
            raise AssertionError(f"size rule for {kind} disagrees with the layout table")
    return rule


def compile_plan(
    schema: t.Schema, dictionary_ids: dict[tuple[int, ...], int]
) -> list[PlanNode]:
    """The compiled plan of every top-level field of ``schema``."""
    return [PlanNode(f.type, (i,), f.name, dictionary_ids) for i, f in enumerate(schema.fields)]


class _BodyLoader:
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
        self.nodes: list[list[int]] = nodes.tolist() if len(nodes) else []
        self.buffer_specs: list[list[int]] = buffers.tolist() if len(buffers) else []
        # every node and buffer is checked once here (vectorized for wide batches; numpy's
        # per-call cost loses to a plain loop for a handful)
        if len(nodes) > _VECTOR_CHECK:
            lengths, nulls = nodes[:, 0], nodes[:, 1]
            bad_nodes = (lengths < 0) | (nulls < 0) | (nulls > lengths)
            bad_node = int(np.argmax(bad_nodes)) if bad_nodes.any() else -1
        else:
            bad_node = next(
                (i for i, (n, z) in enumerate(self.nodes) if n < 0 or z < 0 or z > n), -1
            )
        if bad_node >= 0:
            n, z = self.nodes[bad_node]
            raise self.error(
                E.MetadataError,
                f"expected 0 <= null_count <= length in FieldNode {bad_node}, "
                f"found length {n}, null_count {z}",
                "",
            )
        # the first buffer outside the body; the walk raises when it reaches it, so that
        # the error names the field it belongs to
        if len(buffers) > _VECTOR_CHECK:
            offs, lens = buffers[:, 0], buffers[:, 1]
            bad = (offs < 0) | (lens < 0) | (offs > body_len) | (lens > body_len - offs)
            self.first_bad_buffer = int(np.argmax(bad)) if bad.any() else len(buffers)
        else:
            self.first_bad_buffer = next(
                (
                    i
                    for i, (o, n) in enumerate(self.buffer_specs)
                    if o < 0 or n < 0 or o + n > body_len
                ),
                len(buffers),
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
            offset, length = self.buffer_specs[i]
            views.append(self.body[offset : offset + length] if length else None)

        def locate(k: int, exc: E.ArrowError) -> None:
            # the error of one buffer names it as the serial walk (next_buffer) would
            i = ranges[k]
            exc.locate(
                offset=self.body_offset + self.buffer_specs[i][0],
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

    def next_buffer(self, path: str, load: bool) -> np.ndarray | None:
        i = self.i_buf
        if i >= len(self.buffer_specs):
            raise self.error(
                E.MetadataError,
                f"expected a Buffer for this field, found only {len(self.buffer_specs)} buffers",
                path,
            )
        self.i_buf = i + 1
        offset, length = self.buffer_specs[i]
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
        i = self.i_var
        if i >= len(self.variadic):
            raise self.error(
                E.MetadataError,
                f"expected a variadicBufferCounts entry for this view field, "
                f"found only {len(self.variadic)}",
                path,
            )
        self.i_var = i + 1
        n = self.variadic[i]
        if n < 0 or n > len(self.buffer_specs) - self.i_buf:
            raise self.error(
                E.MetadataError,
                f"expected a variadic buffer count between 0 and "
                f"{len(self.buffer_specs) - self.i_buf}, found {n}",
                path,
            )
        return n

    def next_node(self, path: str) -> tuple[int, int]:
        """The next FieldNode (for the field at ``path``): length and null count."""
        i = self.i_node
        if i >= len(self.nodes):
            raise self.error(
                E.MetadataError,
                f"expected a FieldNode for this field, found only {len(self.nodes)} nodes",
                path,
            )
        self.i_node = i + 1
        return self.nodes[i]  # type: ignore[return-value]  # checked in __init__

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
        j = self.i_buf
        k = j + node.nbuf
        if node.leaf and self.codec is None and not self.swap and k <= self.first_bad_buffer:
            # the hot path of small batches and wide schemas: a plain leaf, uncompressed
            self.i_buf = k
            if not load:
                return None
            body = self.body
            if k - j == 2:  # validity + values: most columns
                (o0, n0), (o1, n1) = self.buffer_specs[j:k]
                per, extra, div, _ = node.sizes[1]
                pair = [body[o0 : o0 + n0] if null_count else None, body[o1 : o1 + n1]]
                if length and (
                    n1 < (length + extra) * per // div
                    or (null_count and n0 < (length + 7) >> 3)
                ):
                    self._check_sizes(node, length, pair)  # raises, naming the buffer
                return node.array_class(node.dtype, length, pair, (), null_count, 0, None)
            bufs: list[np.ndarray | None] = [
                body[o : o + n] for o, n in self.buffer_specs[j:k]
            ]
            if null_count == 0 and node.has_validity:
                bufs[0] = None
            self._check_sizes(node, length, bufs)
            if length and len(bufs) == 3:  # binary and string: offsets inside the data
                self._check_offsets(node, bufs[1], length, len(bufs[2]))  # type: ignore[arg-type]
            return node.array_class(node.dtype, length, bufs, (), null_count, 0, None)
        name = node.name
        if node.v4_validity and self.v4:
            # V4 gave unions and run-end encoded arrays a validity buffer; V5 dropped it
            v4_bitmap = self.next_buffer(name, load)
            if load and null_count and v4_bitmap is not None and len(v4_bitmap):
                raise self.error(
                    E.NotSupported,
                    f"expected no top-level nulls in a V4 {node.dtype} array (quiver keeps the "
                    f"V5 layout, which has no validity bitmap for it), found {null_count}",
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
        """Each fixed buffer holds what ``length`` values need (the layout table's rule)."""
        if not length:
            return
        for i, ((per, extra, div, optional), buf) in enumerate(zip(node.sizes, bufs)):
            if buf is None:
                if optional:
                    continue
                have = 0
            else:
                have = len(buf)
            need = (length + extra) * per // div
            if have < need:
                kind = node.specs[i].kind
                raise self.error(
                    E.BodyError,
                    f"expected {kind} buffer of at least {need} bytes for {length} "
                    f"values, found {have}",
                    node.name,
                )

    def _check(
        self,
        node: PlanNode,
        length: int,
        null_count: int,
        bufs: list[np.ndarray | None],
        children: list[Array],
    ) -> None:
        """The structural checks between an array and its children: O(1) per array
        (the child rules are :func:`quiver.layout.children_problem`'s)."""
        rule = node.rule
        if not length:
            return
        if rule == "none" and node.variadic is False and len(bufs) == 3:  # binary, string
            self._check_offsets(node, bufs[1], length, len(bufs[2]))
        elif rule == "offsets":
            self._check_offsets(node, bufs[1], length, len(children[0]))
        elif rule in ("same", "fixed", "run_end"):
            last = None
            if rule == "run_end" and len(children[0]):
                run_ends = children[0]
                last = int(self._typed(run_ends.buffers[1], run_ends.type.byte_width,
                                       len(run_ends) - 1, 1)[0])
            problem = children_problem(rule, length, [len(c) for c in children],
                                       list_size=node.list_size or 0, last_run_end=last)
            if problem is not None:
                raise self.error(E.BodyError, problem[1], node.name)

    def _typed(self, buf: np.ndarray, width: int, start: int, count: int) -> np.ndarray:
        """``count`` integers of ``width`` bytes from ``start``, in the body's byte order."""
        order = ">" if self.big_endian and not self.swap else "<"
        return buf[start * width : (start + count) * width].view(f"{order}i{width}")

    def _check_offsets(
        self, node: PlanNode, offsets: np.ndarray, length: int, limit: int
    ) -> None:
        """The first and last offsets lie in ``0 .. limit`` in order (O(1) reads)."""
        width = node.specs[1].byte_width
        typed = self._typed(offsets, width, 0, length + 1)
        first, last = int(typed[0]), int(typed[length])
        if first < 0 or last < first or last > limit:
            raise self.error(
                E.BodyError,
                f"expected offsets from 0 to at most {limit}, found first {first}, last {last}",
                node.name,
            )

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
    loader = _BodyLoader(batch, body, body_offset, ctx)
    wanted = None if columns is None else set(columns)
    if loader.codec is not None and ctx.threads and len(body) >= PARALLEL_BODY_SIZE:
        loader.predecompress(plan, wanted)
    if loader.codec is None and not ctx.big_endian and wanted is None and _all_leaves(plan):
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


def _all_leaves(plan: Sequence[PlanNode]) -> bool:
    """Whether every column is a plain leaf: fixed width, boolean, binary or string
    (cached on the plan's first node)."""
    if not plan:
        return False
    head = plan[0]
    flag = getattr(head, "_all_leaves", None)
    if flag is None:
        flag = all(n.leaf and n.nbuf in (2, 3) for n in plan)
        head._all_leaves = flag  # type: ignore[attr-defined]
    return flag


_OFFSET_READERS = {4: struct.Struct("<i").unpack_from, 8: struct.Struct("<q").unpack_from}


def _load_leaves(plan: Sequence[PlanNode], loader: _BodyLoader, length: int) -> list[Array] | None:
    """All columns of a batch of plain leaves, in one tight loop with the same checks.

    Returns None at the first thing out of the ordinary; the general walk then loads the
    batch again and reports the problem with its field path.
    """
    nodes = loader.nodes
    specs = loader.buffer_specs
    if len(nodes) < len(plan):
        return None
    body = loader.body
    raw = loader.body_bytes
    limit = loader.first_bad_buffer
    out: list[Array] = []
    append = out.append
    j = 0
    for node, (n, z) in zip(plan, nodes):
        nbuf = node.nbuf
        if j + nbuf > limit or n != length:
            return None
        (o0, n0), (o1, n1) = specs[j], specs[j + 1]
        per, extra, div, _ = node.sizes[1]
        if n and (n1 < (n + extra) * per // div or (z and n0 < (n + 7) >> 3)):
            return None
        if nbuf == 2:
            bufs = [body[o0 : o0 + n0] if z else None, body[o1 : o1 + n1]]
        else:  # binary / string: first and last offsets within the data
            o2, n2 = specs[j + 2]
            if n:
                read = _OFFSET_READERS[per]
                first, last = read(raw, o1)[0], read(raw, o1 + n * per)[0]
                if first < 0 or last < first or last > n2:
                    return None
            bufs = [body[o0 : o0 + n0] if z else None, body[o1 : o1 + n1], body[o2 : o2 + n2]]
        j += nbuf
        append(node.array_class(node.dtype, n, bufs, (), z, 0, None))
    loader.i_node = len(plan)
    loader.i_buf = j
    return out


def load_single(
    node: PlanNode, batch: md.RecordBatch, body: memoryview, body_offset: int, ctx: LoadContext
) -> Array:
    """The one column of a DictionaryBatch's record batch."""
    loader = _BodyLoader(batch, body, body_offset, ctx)
    return loader.load(node, True)  # type: ignore[return-value]  # load=True builds it


# ======================================================================================
# assembling (the writer's direction)


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


class _Assembler:
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
    a = _Assembler(version)
    for col in columns:
        a.add(col)
    return a.out


# The compiled writer: a plan per schema says, for each top-level column, which of the
# common leaf layouts it has, so that the per-batch walk handles those columns inline;
# every other column (nested, unions, views, null, run-end encoded...) takes _Assembler.
_GENERAL, _FIXED, _BITS, _BINARY = 0, 1, 2, 3
_PAD = tuple(b"\x00" * (-k % 8) for k in range(8))  # the padding after k mod 8 bytes
_OFFSET_AT = {4: struct.Struct("<i").unpack_from, 8: struct.Struct("<q").unpack_from}
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
    general: _Assembler | None = None
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
                            read = _OFFSET_AT[w]
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
            general = _Assembler(version)
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
