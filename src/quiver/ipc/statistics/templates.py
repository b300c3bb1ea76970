"""Many statistics messages at once: all of a file's statistics messages share one
schema and one metadata layout, so their framed metadata is a matrix, one row per message."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ...array.data import ranges
from ...buffers import unpack_bits
from ...layout import layout_of
from ...types import KeyValueMetadata
from .. import metadata as md
from ..framing import frame_message
from .model import BATCH_KEY

if TYPE_CHECKING:
    from .encode import Columns


def windows(flat: np.ndarray, starts: np.ndarray, width: int) -> np.ndarray:
    """``flat[s : s + width]`` for each of ``starts``, as the rows of a new matrix (rows of
    a read-only window view, several times faster than indexing by a matrix); IndexError
    for a window that would start before 0 or pass the end."""
    if width > len(flat):
        raise IndexError(f"expected windows of at most {len(flat)} items, found {width}")
    if len(starts) and starts.min() < 0:
        raise IndexError(f"expected windows starting at 0 or later, found {starts.min()}")
    every = np.lib.stride_tricks.as_strided(
        flat, (len(flat) - width + 1, width), (flat.strides[0], flat.strides[0]),
        writeable=False)
    return every[starts]


def exclusive_cumsum(counts: np.ndarray, axis: int = 0) -> np.ndarray:
    """The running sum before each item along ``axis`` (starts from counts: 0 first)."""
    out = np.cumsum(counts, axis=axis)
    return out - counts


# -- many statistics messages at once ----------------------------------------------------
#
# A file of n batches has n statistics messages of one schema: the same FieldNode and
# Buffer counts and one custom metadata pair (quiver:batch = the index in decimal).  Their
# framed metadata is the same bytes but for the numbers and the index's digits, so both
# directions handle them as a matrix: one row per message, numbers in known columns.
# Where the numbers sit is learned from the metadata encoder's own output (sentinel numbers,
# located once and checked on a real message), so no flatbuffer field is known here.

_SENTINEL = 0x5C00_0000_0000_0011  # with a counter in its second byte: found only once
_DIGIT = ord("~")


class TemplateError(Exception):
    """The encoder's layout is not the one the matrix handling expects."""


class Template:
    """The framed metadata of a RecordBatch message with ``num_nodes`` FieldNodes,
    ``num_buffers`` Buffers and custom metadata ``quiver:batch`` of ``digits`` digits."""

    def __init__(self, version: int, num_nodes: int, num_buffers: int, digits: int) -> None:
        self.version, self.num_nodes, self.num_buffers = version, num_nodes, num_buffers
        self.digits = digits
        count = 2 + 2 * num_nodes + 2 * num_buffers
        numbers = np.array([_SENTINEL | (k << 8) for k in range(count)], np.int64)
        nodes = numbers[2 : 2 + 2 * num_nodes].reshape(-1, 2)
        buffers = numbers[2 + 2 * num_nodes :].reshape(-1, 2)
        framed = frame_message(md.encode_message_general(md.Message(
            version, md.RecordBatch(int(numbers[0]), nodes, buffers, None, ()),
            int(numbers[1]), KeyValueMetadata([(BATCH_KEY.encode(), b"~" * digits)]))))
        if len(framed) % 8:
            raise TemplateError("a message size that is not a multiple of 8")
        words = np.frombuffer(framed, "<i8")
        where = {int(v): i for i, v in enumerate(words)}
        found = [where.get(int(v), -1) for v in numbers]
        if min(found) < 0 or len(set(found)) != count:
            raise TemplateError("numbers not at 8-byte boundaries")
        self.length_at, self.body_at = found[0], found[1]
        self.nodes_at, self.buffers_at = found[2], found[2 + 2 * num_nodes]
        if (found[2 : 2 + 2 * num_nodes] != list(range(self.nodes_at, self.nodes_at
                                                        + 2 * num_nodes))
                or found[2 + 2 * num_nodes :] != list(range(self.buffers_at, self.buffers_at
                                                            + 2 * num_buffers))):
            raise TemplateError("FieldNodes or Buffers not contiguous")
        value = struct.pack("<I", digits) + b"~" * digits + b"\x00"
        at = framed.find(value)
        if at < 0 or framed.find(value, at + 1) >= 0:
            raise TemplateError("the index's digits not found once")
        self.value_at = at + 4
        self.size = len(framed)
        self.bytes = np.frombuffer(framed, np.uint8)
        fixed = np.ones(self.size // 8, bool)
        fixed[found] = False
        fixed[self.value_at // 8 : (self.value_at + digits - 1) // 8 + 1] = False
        self.fixed_words = np.flatnonzero(fixed)
        self.words = words
        # the words around the digits, which hold other bytes too
        self.digit_words = np.arange(self.value_at // 8, (self.value_at + digits - 1) // 8 + 1)
        # check on a message of ordinary numbers against the general encoder
        nodes = np.arange(2 * num_nodes, dtype=np.int64).reshape(1, -1, 2)
        buffers = np.arange(2 * num_buffers, dtype=np.int64).reshape(1, -1, 2) * 8
        index = np.array([10 ** (digits - 1)], np.int64)
        mine = self.encode(np.array([64]), 3, nodes, buffers, index)
        theirs = frame_message(md.encode_message_general(md.Message(
            version, md.RecordBatch(3, nodes[0], buffers[0], None, ()), 64,
            KeyValueMetadata([(BATCH_KEY.encode(), str(int(index[0])).encode())]))))
        if mine.tobytes() != theirs:
            raise TemplateError("the template does not reproduce the encoder's bytes")

    def encode(self, body_lengths: np.ndarray, length: int, nodes: np.ndarray,
               buffers: np.ndarray, indices: np.ndarray) -> np.ndarray:
        """The framed metadata of ``len(indices)`` messages (all of ``digits`` digits) as
        an (m, size) uint8 matrix."""
        m = len(indices)
        out = np.tile(self.words, (m, 1))
        out[:, self.length_at] = length
        out[:, self.body_at] = body_lengths
        out[:, self.nodes_at : self.nodes_at + 2 * self.num_nodes] = nodes.reshape(m, -1)
        out[:, self.buffers_at : self.buffers_at + 2 * self.num_buffers] = buffers.reshape(
            m, -1)
        raw = out.view(np.uint8)
        for j in range(self.digits):
            raw[:, self.value_at + j] = ord("0") + indices // 10 ** (self.digits - 1 - j) % 10
        return raw


_TEMPLATES: dict[tuple[int, int, int, int], Template | None] = {}


def template_for(version: int, num_nodes: int, num_buffers: int, digits: int) -> Template | None:
    """The (cached) template, or None when the encoder's layout does not allow one."""
    key = (version, num_nodes, num_buffers, digits)
    if key not in _TEMPLATES:
        try:
            found: Template | None = Template(*key)
        except TemplateError:
            found = None
        if len(_TEMPLATES) < 256:
            _TEMPLATES[key] = found
        return found
    return _TEMPLATES[key]


#: the messages in order whose own words a template group keeps (8 bytes a word, 7 words
#: a message in quiver's layout: 0.9 MB; groups are cached with at most 64 stream plans)
IN_ORDER_ROWS = 1 << 14


class TemplateGroup:
    """The templates of one message size (indices of different digit counts), which put
    the numbers at the same places and differ only in a few words around the digits:
    a matrix of messages is checked against the shared words once, then each row's own
    words against the template its digit count names (the string's length, stored just
    before the digits)."""

    def __init__(self, templates: Sequence[Template]) -> None:
        first = templates[0]
        self.size = first.size
        self.first = first
        for tm in templates:
            if (tm.size, tm.length_at, tm.body_at, tm.nodes_at, tm.buffers_at) != (
                    first.size, first.length_at, first.body_at, first.nodes_at,
                    first.buffers_at):
                raise TemplateError("templates of one size with numbers elsewhere")
        differ = np.zeros(first.size // 8, bool)
        for tm in templates:
            differ |= first.words != tm.words
            differ[tm.digit_words] = True
        self.own = np.flatnonzero(differ)  # the words each template checks itself
        shared = np.zeros(first.size // 8, bool)
        shared[first.fixed_words] = True
        shared[self.own] = False
        self.shared = np.flatnonzero(shared)  # the words all templates have the same
        # per template: its own words' bytes, which of them it fixes (not the digits),
        # where its digits are and their place values; by where the digit count is
        raw_at = {int(w) * 8 + b: j * 8 + b for j, w in enumerate(self.own) for b in range(8)}
        widest = max(tm.digits for tm in templates)
        own_bytes = 8 * len(self.own)
        expected = np.zeros((len(templates), own_bytes), np.uint8)
        checked = np.zeros((len(templates), own_bytes), np.uint8)  # 0xFF: compared
        self.powers = np.zeros((len(templates), widest), np.int64)
        self.digit_at = np.zeros((len(templates), widest), np.int64)  # raw byte of each
        self.by_count: dict[int, np.ndarray] = {}  # count's raw byte -> digits -> template
        for k, tm in enumerate(templates):
            count_at = raw_at.get(tm.value_at - 4, -1)
            digit_at = [raw_at.get(tm.value_at + j, -1) for j in range(tm.digits)]
            if count_at < 0 or min(digit_at) < 0:
                raise TemplateError("the digits or their count outside the own words")
            self.by_count.setdefault(count_at, np.full(256, -1, np.int64))[tm.digits] = k
            expected[k] = tm.words[self.own].view(np.uint8)
            checked[k] = 0xFF
            checked[k, digit_at] = 0
            self.powers[k, : tm.digits] = 10 ** np.arange(tm.digits - 1, -1, -1)
            self.digit_at[k] = digit_at + [digit_at[0]] * (widest - tm.digits)
        # (compared a word at a time)
        self.expected, self.checked = expected.view(np.int64), checked.view(np.int64)
        self.by_digits = np.full(widest + 1, -1, np.int64)  # digit count -> template
        for k, tm in enumerate(templates):
            self.by_digits[tm.digits] = k
        self._in_order = np.zeros((0, len(self.own)), np.int64)

    def in_order(self, m: int) -> np.ndarray | None:
        """The own words of messages ``0 .. m-1`` (as quiver writes them: the indices in
        order), or None when some of those indices have a digit count of another group.
        The first :data:`IN_ORDER_ROWS` rows are kept (they are the same for every file)."""
        if m <= len(self._in_order):
            return self._in_order[:m]
        index = np.arange(m, dtype=np.int64)
        digits = np.searchsorted(10 ** np.arange(1, 19, dtype=np.int64), index,
                                 side="right") + 1
        if digits[-1] >= len(self.by_digits):
            return None
        k = self.by_digits[digits]
        if (k < 0).any():
            return None
        words = self.expected[k]  # a copy: the templates' bytes, then each row's digits
        raw = words.view(np.uint8).reshape(m, -1)
        rows = np.arange(m)
        for j in range(self.digit_at.shape[1]):
            has = digits > j
            place = 10 ** np.maximum(digits[has] - 1 - j, 0)
            raw[rows[has], self.digit_at[k[has], j]] = ord("0") + index[has] // place % 10
        if m <= IN_ORDER_ROWS:
            self._in_order = words
        return words

    def decode(self, matrix: np.ndarray) -> tuple[np.ndarray, ...] | None:
        """(body lengths, lengths, nodes, buffers, indices) of an (m, size // 8) int64
        matrix of framed metadata, or None when a row is not one of the group's."""
        m = len(matrix)
        first = self.first
        shared = self.shared
        if (matrix[:, shared] != first.words[shared]).any():
            return None
        own = np.ascontiguousarray(matrix[:, self.own])
        ordered = self.in_order(m)
        if ordered is not None and np.array_equal(own, ordered):
            indices = np.arange(m, dtype=np.int64)
        else:
            indices = self._indices(own)
            if indices is None:
                return None
        nodes = matrix[:, first.nodes_at : first.nodes_at + 2 * first.num_nodes]
        buffers = matrix[:, first.buffers_at : first.buffers_at + 2 * first.num_buffers]
        return (matrix[:, first.body_at], matrix[:, first.length_at],
                nodes.reshape(m, -1, 2), buffers.reshape(m, -1, 2), indices)

    def _indices(self, own: np.ndarray) -> np.ndarray | None:
        """The index of each row of own words (any order), or None when a row is not one
        of the group's templates with decimal digits."""
        m = len(own)
        raw = own.view(np.uint8).reshape(m, -1)
        k = np.full(m, -1, np.int64)
        for count_at, template_of in self.by_count.items():
            found = template_of[raw[:, count_at]]
            rows = np.flatnonzero((k < 0) & (found >= 0))
            mine = found[rows]  # a row is a template's when all its own bytes agree
            agree = ~((own[rows] ^ self.expected[mine]) & self.checked[mine]).any(axis=1)
            k[rows[agree]] = mine[agree]
        if (k < 0).any():
            return None
        digits = raw.reshape(-1)[(np.arange(m) * raw.shape[1])[:, None] + self.digit_at[k]]
        digits = digits.astype(np.int64)
        digits -= ord("0")
        powers = self.powers[k]
        if (((digits < 0) | (digits > 9)) & (powers > 0)).any():
            return None
        return (digits * powers).sum(axis=1)


def _pad8(n: np.ndarray) -> np.ndarray:
    return (n + 7) & ~7


def _body_parts(cols: Columns) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray,
                                                               np.ndarray]]]:
    """Every batch's FieldNodes, as a (batches, nodes, 2) array, and its buffers in IPC
    order, each as (source bytes, start in them per batch, length per batch)."""

    nb = len(cols.entry_counts)
    rows = cols.rows
    e = cols.entry_counts
    e0 = exclusive_cumsum(e)
    zero = np.zeros(nb, np.int64)
    column = cols.column_ids
    validity = column.buffers[0][: (rows + 7) // 8]
    parts = [
        (validity, zero, np.full(nb, len(validity), np.int64)),
        (column.buffers[1][: rows * 4], zero, np.full(nb, rows * 4, np.int64)),
        (np.zeros(0, np.uint8), zero, zero),  # the map's validity: none
        (cols.map_offsets.view(np.uint8).reshape(-1), np.arange(nb) * (rows + 1) * 4,
         np.full(nb, (rows + 1) * 4, np.int64)),
        (np.zeros(0, np.uint8), zero, zero),  # the entries' validity
        (np.zeros(0, np.uint8), zero, zero),  # the keys' validity
        (cols.keys.view(np.uint8), e0 * 4, e * 4),
        (cols.codes.view(np.uint8), e0, e),
        (cols.offsets.view(np.uint8), e0 * 4, e * 4),
    ]
    nodes = [np.stack([np.full(nb, rows), np.ones(nb, np.int64)], axis=1),
             np.stack([np.full(nb, rows), zero], axis=1)]
    nodes += [np.stack([e, zero], axis=1)] * 3
    for code, child in enumerate(cols.children):
        counts = cols.child_counts[:, code]
        starts = exclusive_cumsum(counts)
        nodes.append(np.stack([counts, zero], axis=1))
        for spec in layout_of(child.type).buffers:
            if spec.kind == "validity":
                parts.append((np.zeros(0, np.uint8), zero, zero))
            elif spec.kind == "values":
                w = spec.byte_width
                data = child.buffers[1][child.offset * w : (child.offset + len(child)) * w]
                parts.append((data, starts * w, counts * w))
            elif spec.kind == "bits":
                bits = unpack_bits(child.buffers[1], child.offset, len(child))
                width = int(counts.max(initial=0))
                padded = np.zeros((nb, max(width, 1)), bool)
                padded[np.repeat(np.arange(nb), counts),
                       np.arange(len(child)) - np.repeat(starts, counts)] = bits
                packed = np.packbits(padded, axis=1, bitorder="little")
                parts.append((packed.reshape(-1), np.arange(nb) * packed.shape[1],
                              (counts + 7) // 8))
            elif spec.kind == "offsets":
                w = spec.byte_width
                all_offsets = child.buffers[1].view(f"<i{w}")[
                    child.offset : child.offset + len(child) + 1].astype(np.int64)
                index = ranges(starts, counts + 1)
                first = np.repeat(all_offsets[starts], counts + 1)
                own = (all_offsets[index] - first).astype(f"<i{w}")
                parts.append((own.view(np.uint8), exclusive_cumsum(counts + 1) * w,
                              (counts + 1) * w))
                data_start = all_offsets[starts]
                data_end = all_offsets[starts + counts]
            else:  # data, after its offsets
                parts.append((child.buffers[2], data_start, data_end - data_start))
    return np.stack(nodes, axis=1), parts


def bulk_messages(cols: Columns, first: int, version: int) -> bytes | None:
    """The framed messages of statistics batches ``first ..`` (bodies included), or None
    when the encoder's layout allows no template."""
    nb = len(cols.entry_counts)
    nodes, parts = _body_parts(cols)
    lengths = np.stack([p[2] for p in parts], axis=1)  # (batches, buffers)
    padded = _pad8(lengths)
    body_offsets = exclusive_cumsum(padded, axis=1)
    body_lengths = padded.sum(axis=1)
    buffers = np.stack([body_offsets, lengths], axis=2)
    batches = np.arange(first, nb)
    if len(batches) == 0:
        return b""
    digits = np.array([len(str(int(k))) for k in (batches[0], batches[-1])])
    templates = {}
    for d in range(int(digits[0]), int(digits[1]) + 1):
        found = template_for(version, nodes.shape[1], len(parts), d)
        if found is None:
            return None
        templates[d] = found
    number_digits = np.ones(len(batches), np.int64)
    for d in range(2, int(digits[1]) + 1):
        number_digits[batches >= 10 ** (d - 1)] = d
    sizes = np.array([templates[int(d)].size for d in number_digits], np.int64)
    message_lengths = sizes + body_lengths[batches]
    starts = exclusive_cumsum(message_lengths)
    out = np.zeros(int(message_lengths.sum()), np.uint8)
    for d, tmpl in templates.items():
        mine = np.flatnonzero(number_digits == d)
        k = batches[mine]
        meta = tmpl.encode(body_lengths[k], cols.rows, nodes[k], buffers[k], k)
        out[ranges(starts[mine], np.full(len(mine), tmpl.size))] = meta.reshape(-1)
    body_starts = starts + sizes
    for j, (source, at, n) in enumerate(parts):
        n = n[batches]
        if not n.any():
            continue
        out[ranges(body_starts + body_offsets[batches, j], n)] = source[
            ranges(at[batches], n)]
    return out.tobytes()
