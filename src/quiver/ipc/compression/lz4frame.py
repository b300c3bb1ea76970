"""LZ4 frames (the lz4 Frame format description): quiver's own walk of the frame container
with the descriptor's XXH32 check, the writer of frames of independent 4 MiB blocks, and
the library decoders (cramjam, python-lz4) that take the frames the walk declines.

>>> xxh32_short(b"\x60\x70") >> 8 & 0xFF == _LZ4_BIG_HEADER[-1]
True
"""

from __future__ import annotations

import functools
import struct
from typing import Any

import cramjam
import lz4.block
import lz4.frame
import numpy as np

from ...errors import CompressionError
from . import codecs
from .codecs import LZ4_FRAME, ONE_SHOT_RATIO, joined, more_error, where_suffix

#: lz4 buffers larger than this are written as frames of independent 4 MiB blocks
LZ4_COMPRESS_CHUNK = 1 << 20


#: the block size of those frames (the largest the frame format has)
LZ4_BIG_BLOCK = 1 << 22


_LZ4_MAGIC = b"\x04\x22\x4d\x18"


#: FLG bits: version 01 required; block checksum, content checksum, reserved, dict id unset
_LZ4_FLG_MASK = 0xD7


_LZ4_FLG_WANT = 0x40


_LZ4_FLG_INDEPENDENT = 0x20


_LZ4_FLG_CONTENT_SIZE = 0x08


_LZ4_BLOCK_MAX = {4: 1 << 16, 5: 1 << 18, 6: 1 << 20, 7: 1 << 22}


#: linked blocks may refer to the previous 64 KiB of output
_LZ4_WINDOW = 1 << 16


_LZ4_RAW_BLOCK = 0x80000000


#: an LZ4 block of n bytes decodes to at most ~255 n bytes (each match-length byte adds
#: 255; a sequence costs at least 3 bytes for at most 19 more)
_LZ4_BLOCK_EXPANSION = 264


_u32 = struct.Struct("<I").unpack_from


#: a linked frame whose compressed blocks could produce more than this many times the
#: bytes of its raw blocks goes to cramjam's frame decoder instead: on compressed blocks
#: that is ~25% faster than python-lz4's block decoder with a separate dictionary, while
#: the walk copies raw blocks ~4x faster; they break even near half and half (measured on
#: 40 MB buffers, one core)
LZ4_LINKED_COMPRESSED_RATIO = 1


_U32_PACK = struct.Struct("<I").pack


_LZ4_END_MARK = bytes(4)


_XXH_P1, _XXH_P2, _XXH_P3, _XXH_P4, _XXH_P5 = (
    2654435761,
    2246822519,
    3266489917,
    668265263,
    374761393,
)


_M32 = 0xFFFFFFFF


def xxh32_short(data: bytes) -> int:
    """XXH32 with seed 0 of fewer than 16 bytes (the LZ4 frame descriptor's checksum)."""
    h = (_XXH_P5 + len(data)) & _M32
    for i in range(0, len(data) - 3, 4):
        h = (h + int.from_bytes(data[i : i + 4], "little") * _XXH_P3) & _M32
        h = (((h << 17) | (h >> 15)) & _M32) * _XXH_P4 & _M32
    for b in data[len(data) & ~3 :]:
        h = (h + b * _XXH_P5) & _M32
        h = (((h << 11) | (h >> 21)) & _M32) * _XXH_P1 & _M32
    h ^= h >> 15
    h = h * _XXH_P2 & _M32
    h ^= h >> 13
    h = h * _XXH_P3 & _M32
    return h ^ (h >> 16)


#: the frame header of lz4_big_frame: FLG version 01 with independent blocks and nothing
#: optional (0x60), BD 4 MiB blocks (0x70), then the descriptor's checksum byte
_LZ4_BIG_HEADER = _LZ4_MAGIC + bytes([0x60, 0x70, (xxh32_short(b"\x60\x70") >> 8) & 0xFF])


def lz4_big_frame(data: np.ndarray, level: int) -> list[Any]:
    """One LZ4 frame of independent 4 MiB blocks, each block compressed by python-lz4's
    block compressor, or stored (a view of ``data``) when that would not be smaller.

    Measured on the 8 buffers of the benchmark (320 MB): 253 ms of CPU against pyarrow's
    287 ms and 362 ms for python-lz4's streaming frame compressor fed 1 MiB pieces (whose
    linked-block bookkeeping halves its speed on incompressible data), with sizes within
    0.03% of pyarrow's (a match across a 4 MiB boundary is lost, about one in 64 of the
    64 KiB block boundaries that linked blocks bridge).  Every LZ4 frame decoder reads
    independent 4 MiB blocks, and quiver's own frame walk decodes them straight into the
    output.  Levels as in the frame format: below 3 the fast compressor, then LZ4HC.
    """
    if level < 3:
        compress = functools.partial(lz4.block.compress, store_size=False)
    else:
        compress = functools.partial(
            lz4.block.compress, store_size=False, mode="high_compression", compression=level
        )
    parts: list[Any] = [_LZ4_BIG_HEADER]
    pack = _U32_PACK
    for start in range(0, data.nbytes, LZ4_BIG_BLOCK):
        block = data[start : start + LZ4_BIG_BLOCK]
        packed = compress(block)
        if len(packed) < block.nbytes:
            parts += (pack(len(packed)), packed)
        else:
            parts += (pack(block.nbytes | _LZ4_RAW_BLOCK), block)
    parts.append(_LZ4_END_MARK)
    return parts


def _lz4_header(payload: np.ndarray, declared: int) -> tuple[int, int, bool] | None:
    """(bytes of frame header, block maximum size, linked) of a frame the walk handles."""
    head = payload[:19].tobytes()  # magic, FLG, BD, content size, header checksum at most
    if len(head) < 7 or head[:4] != _LZ4_MAGIC:
        return None
    flg, bd = head[4], head[5]
    block_max = _LZ4_BLOCK_MAX.get(bd >> 4)
    if flg & _LZ4_FLG_MASK != _LZ4_FLG_WANT or bd & 0x8F or block_max is None:
        return None
    end = 14 if flg & _LZ4_FLG_CONTENT_SIZE else 6
    if len(head) <= end or head[end] != (xxh32_short(head[4:end]) >> 8) & 0xFF:
        return None
    if end == 14 and int.from_bytes(head[6:14], "little") != declared:
        return None
    return end + 1, block_max, not flg & _LZ4_FLG_INDEPENDENT


def lz4_walk(payload: np.ndarray, declared: int, *, library_fits: bool) -> np.ndarray | None:
    """The ``declared`` bytes of one LZ4 frame, or None (see above).

    The output is allocated at ``declared`` up front only when the frame can produce it:
    raw blocks prove their bytes (they are in the payload), and the rest must pass the
    rule of one-call decoding (see ``decompress_one_shot``) against the compressed blocks' bytes,
    so a frame of raw blocks of any size is walked.  When the rest is plausible but more
    than ONE_SHOT_MAX, the output starts at what the rule allows and grows (by copying)
    to at most twice what has really come out, rather than the python-lz4 decoder in
    pieces (80 MB of compressed blocks: ~70 ms instead of ~110 ms).  ``library_fits``:
    whether cramjam's frame decoder may take the frame instead (see
    LZ4_LINKED_COMPRESSED_RATIO).
    """
    if not payload.flags.c_contiguous:
        return None
    header = _lz4_header(payload, declared)
    if header is None:
        return None
    pos, block_max, linked = header
    src = memoryview(payload)
    n = payload.nbytes
    stride = block_max + 4
    # one turn per block: (raw?, start, size, count); back-to-back full raw blocks merge.
    # A frame of many tiny or empty blocks would cost one Python turn (and one decoder
    # call) per few bytes: past the blocks the declared size can need, the frame goes to
    # the C decoders instead (found in review: 4M empty blocks took 4 s here)
    ops: list[list[int]] = []
    raw_bytes = compressed = packed = reach = 0
    max_blocks = 4 + 2 * (declared // block_max)
    blocks = 0
    while True:
        if pos + 4 > n:
            return None
        (word,) = _u32(src, pos)
        pos += 4
        if word == 0:
            break
        size = word & ~_LZ4_RAW_BLOCK
        blocks += 1
        if size == 0 or size > block_max or pos + size > n or blocks > max_blocks:
            return None
        if word & _LZ4_RAW_BLOCK:
            raw_bytes += size
            if raw_bytes > declared:
                return None
            last = ops[-1] if ops else None
            if (
                size == block_max
                and last is not None
                and last[0]
                and last[2] == block_max
                and last[1] + last[3] * stride == pos
            ):
                last[3] += 1
            else:
                ops.append([1, pos, size, 1])
        else:
            compressed += 1
            packed += size
            reach += min(block_max, _LZ4_BLOCK_EXPANSION * size)
            ops.append([0, pos, size, 1])
        pos += size
    unproven = declared - raw_bytes
    if pos != n or unproven > reach:
        return None
    if unproven <= 0 or codecs.decompress_one_shot(LZ4_FRAME, packed, unproven):
        room = declared
    elif codecs.ONE_SHOT_MAX < unproven <= packed * ONE_SHOT_RATIO[LZ4_FRAME]:
        room = raw_bytes + codecs.ONE_SHOT_MAX
    else:
        return None
    if (
        library_fits
        and linked
        and compressed * block_max > LZ4_LINKED_COMPRESSED_RATIO * raw_bytes
    ):
        return None
    out = np.empty(room, dtype=np.uint8)
    dst = memoryview(out)
    o = 0
    try:
        for is_raw, start, size, count in ops:
            # bytes this op may write; the output grows first if they would not fit
            need = size * count if is_raw else min(block_max, declared - o)
            if o + need > room and o + need <= declared:
                room = min(declared, max(2 * o, o + need))
                grown = np.empty(room, dtype=np.uint8)
                grown[:o] = out[:o]
                out, dst = grown, memoryview(grown)
            if is_raw:
                if o + size * count > declared:
                    return None
                if count == 1:
                    dst[o : o + size] = src[start : start + size]
                else:
                    # the last block is followed by at least the end mark, so the rows of
                    # stride bytes stay inside the payload
                    rows = payload[start : start + count * stride].reshape(count, stride)
                    out[o : o + size * count].reshape(count, size)[...] = rows[:, :size]
                o += size * count
            elif o >= declared:
                return None
            elif not linked:
                o += cramjam.lz4.decompress_block_into(src[start : start + size], dst[o : o + need])
            else:
                window = dst[max(0, o - _LZ4_WINDOW) : o]
                piece = lz4.block.decompress(
                    src[start : start + size], uncompressed_size=need, dict=window
                )
                dst[o : o + len(piece)] = piece
                o += len(piece)
    except (lz4.block.LZ4BlockError, cramjam.DecompressionError, ValueError):
        return None
    if o != declared:
        return None
    out.flags.writeable = False  # like every buffer read from IPC
    return out


def lz4_into(payload: np.ndarray, declared: int, where: str) -> np.ndarray | None:
    """A frame the walk declined, in one cramjam call straight into an output of exactly
    ``declared`` bytes, or None to let python-lz4's streaming decoder explain the error.

    Measured: 1.5-2.5x faster than python-lz4's frame decoder on 40 MB buffers.
    """
    out = np.empty(declared, dtype=np.uint8)
    try:
        written = cramjam.lz4.decompress_into(payload, out)
    except cramjam.DecompressionError as exc:
        if "whole buffer" in str(exc):  # the output would not fit: more than declared
            raise more_error(declared, where) from None
        return None  # corrupt, or something the streaming decoder explains better
    if written != declared:
        return None
    out.flags.writeable = False  # like every buffer read from IPC
    return out


def _lz4_check_end(
    dec: lz4.frame.LZ4FrameDecompressor, total: int, unfed: int, declared: int, where: str
) -> None:
    if not dec.eof:
        raise CompressionError(
            f"expected a complete LZ4 frame of {declared} uncompressed bytes, found "
            f"a truncated frame ({total} bytes decoded){where_suffix(where)}"
        )
    unused = len(dec.unused_data or b"") + unfed
    if unused:
        raise CompressionError(
            f"expected one LZ4 frame, found {unused} bytes after its end{where_suffix(where)}"
        )


def lz4_one_shot(payload: np.ndarray, declared: int, where: str) -> bytes:
    dec = lz4.frame.LZ4FrameDecompressor()
    out = dec.decompress(payload, max_length=declared)
    if len(out) == declared and not dec.eof and dec.decompress(b"", max_length=1):
        # a frame that holds exactly ``declared`` bytes still has its end mark to read;
        # anything it would still produce is more than declared
        raise more_error(declared, where)
    _lz4_check_end(dec, len(out), 0, declared, where)
    return out


def lz4_chunked(payload: np.ndarray, declared: int, where: str) -> bytes:
    dec = lz4.frame.LZ4FrameDecompressor()
    pieces: list[bytes] = []
    total = 0
    pos = 0
    while True:
        # input in pieces too: python-lz4 copies the input it has not consumed on every
        # call that stops at max_length
        data: Any = b""
        if pos < payload.nbytes and (pos == 0 or dec.needs_input):
            data = payload[pos : pos + codecs.LZ4_INPUT_CHUNK]
            pos += data.nbytes
        # at ``declared`` a complete frame still has its end mark to read; ask for one
        # more byte, which only a frame holding more than declared can produce
        want = min(codecs.DECOMPRESS_CHUNK, declared - total) if total < declared else 1
        piece = dec.decompress(data, max_length=want)
        if piece:
            total += len(piece)
            if total > declared:
                raise more_error(declared, where)
            pieces.append(piece)
        if dec.eof:
            break
        if not piece and not len(data) and (pos >= payload.nbytes or not dec.needs_input):
            break  # no progress and no input left: a truncated frame, reported below
    _lz4_check_end(dec, total, payload.nbytes - pos, declared, where)
    return joined(pieces) if pieces else b""
