"""Buffer-wise body compression (Columnar spec, "Compression"; Message.fbs ``BodyCompression``).

With ``BodyCompression`` set on a RecordBatch or DictionaryBatch, every body buffer is
stored as a little-endian int64 holding the uncompressed length followed by the
compressed bytes, or as ``-1`` followed by the raw bytes when the writer chose to leave it
uncompressed.  A zero-length buffer stays zero-length (no prefix), as Arrow C++ writes it.

Codecs: ``lz4_frame`` (the LZ4 *frame* format, never the raw block format) and ``zstd``,
from the ``lz4``, ``zstandard`` and ``cramjam`` packages, each path picked by measurement
against pyarrow (40 MB buffers, one core; see ``benchmarks/bench_compression.py``):

- lz4 compress: buffers up to 1 MiB in one python-lz4 frame call, as Arrow C++ writes
  them (64 KiB linked blocks, no content size, no checksums: byte-identical to pyarrow);
  larger ones as frames of independent 4 MiB blocks from python-lz4's block compressor,
  incompressible blocks stored as views (~12% less CPU than pyarrow, sizes within 0.03%).
- lz4 decompress: quiver walks the frame container itself (the frame format spec): raw
  blocks, which is how frames carry incompressible data, are copied by numpy (~4.5x
  faster than any Python frame decoder); compressed blocks go to a block decoder, all
  straight into the output.  Frames the walk does not fully handle (checksums, a
  dictionary id, mostly compressed linked blocks) go to cramjam's frame decoder, and any
  error to python-lz4's, which explains it.
- zstd compress: zstandard (byte-identical to pyarrow, same speed).
- zstd decompress: zstandard's stream reader straight into the output, which libzstd
  decodes in a single pass when the frame states its size (10-25% faster than cramjam).

Safety: the uncompressed length a buffer declares is checked against a caller's limit
*before* anything is allocated, and the decompressors never produce more than one byte past
it (zstd frames that state a larger content size are rejected up front, because the
zstandard package would otherwise trust the frame header).  Within the limit the length is
still untrusted: the output is allocated at the declared length in one codec call only when
that length is small (<= 1 MiB), or at most 64 MiB and reachable from the payload at the
codec's physical maximum ratio (lz4 ~255x, zstd ~32500x); the LZ4 walk applies that rule
to what its compressed blocks must still produce, since raw blocks prove their bytes
(so a frame of raw blocks is walked at any size).  Otherwise the codec runs in
1 MiB pieces, so memory follows the real output: a 100-byte buffer claiming 3.9 GiB costs
about 1 MiB and a CompressionError, not a 3.9 GiB allocation.  (zstd allocates its output
once half of the declared length has really been produced.)

All three libraries release the GIL, so many buffers are (de)compressed on a small shared
thread pool when the total is large enough to pay for the hand-off: the largest first,
and the small ones on the calling thread meanwhile.

>>> import numpy as np
>>> raw = np.arange(1000, dtype=np.int64).view(np.uint8)
>>> parts = compress_buffer("zstd", raw)
>>> stored = np.frombuffer(b"".join(bytes(p) for p in parts), np.uint8)
>>> bool((decompress_buffer("zstd", stored, max_uncompressed=1 << 20) == raw).all())
True
"""

from __future__ import annotations

import functools
import os
import struct
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import cramjam
import lz4.block
import lz4.frame
import numpy as np
import zstandard

from ..buffers import as_buffer, empty_buffer, nbytes_of
from ..errors import ArrowError, ArrowInvalidArgument, CompressionError, LimitExceeded

LZ4_FRAME = "lz4_frame"
ZSTD = "zstd"
CODECS: tuple[str, ...] = (LZ4_FRAME, ZSTD)

# Message.fbs: enum CompressionType : byte { LZ4_FRAME, ZSTD }
_CODEC_IDS = {LZ4_FRAME: 0, ZSTD: 1}
_ALIASES = {"lz4": LZ4_FRAME, "lz4_frame": LZ4_FRAME, "lz4frame": LZ4_FRAME, "zstd": ZSTD}

# Accepted levels: lz4 frame 0 (fast, the default) .. 12 (LZ4HC max), like Arrow C++
# (which calls 1 the fast default); zstd from ZSTD_minCLevel() to 22, default 1 as Arrow.
_LEVELS = {LZ4_FRAME: (0, 12, 0), ZSTD: (-(1 << 17), 22, 1)}

PREFIX_BYTES = 8
UNCOMPRESSED = -1
_UNCOMPRESSED_PREFIX = UNCOMPRESSED.to_bytes(8, "little", signed=True)

#: below this total size the thread hand-off costs more than it saves
PARALLEL_THRESHOLD = 1 << 20
#: buffers below these sizes are not sent to the pool (the calling thread does them while
#: the pool works): for smaller ones the hand-off, and the GIL taken back after each codec
#: call, cost more than a second core saves.  Measured with many equal buffers, pool of 2
#: vs serial: compress gains 1.3-1.6x from 64 KiB; zstd decompress 1.1-1.3x from 64-128
#: KiB; lz4 decompress, which runs at memory speed, loses below 256 KiB (0.4-0.9x) and
#: gains 1.6x at 1 MiB.
POOL_MIN_BYTES = {"compress": 1 << 16, ZSTD: 1 << 17, LZ4_FRAME: 1 << 20}


def normalize_codec(codec: str) -> str:
    """The canonical codec name for ``codec`` ("lz4" and "lz4_frame" -> "lz4_frame").

    >>> normalize_codec("LZ4"), normalize_codec("zstd")
    ('lz4_frame', 'zstd')
    """
    if not isinstance(codec, str):
        raise ArrowInvalidArgument(
            f"expected a codec name in {list(_ALIASES)}, found {codec!r}"
        )
    name = _ALIASES.get(codec.lower())
    if name is None:
        raise ArrowInvalidArgument(f"expected a codec name in {list(_ALIASES)}, found {codec!r}")
    return name


def codec_id(codec: str) -> int:
    """The ``CompressionType`` enum value written in ``BodyCompression.codec``.

    >>> codec_id("lz4"), codec_id("zstd")
    (0, 1)
    """
    return _CODEC_IDS[normalize_codec(codec)]


def codec_from_id(value: int) -> str:
    """The codec name for a ``CompressionType`` value read from metadata.

    A value this version does not know is bad input (:class:`CompressionError`).

    >>> codec_from_id(1)
    'zstd'
    """
    for name, cid in _CODEC_IDS.items():
        if cid == value:
            return name
    raise CompressionError(
        f"expected a BodyCompression codec of 0 (LZ4_FRAME) or 1 (ZSTD), found {value!r}"
    )


def check_level(codec: str, level: int | None) -> int:
    """Validate ``level`` for ``codec`` and return the level to use (default when None).

    >>> check_level("zstd", None), check_level("lz4", 9)
    (1, 9)
    """
    name = normalize_codec(codec)
    lo, hi, default = _LEVELS[name]
    if level is None:
        return default
    if isinstance(level, bool) or not isinstance(level, (int, np.integer)):
        raise ArrowInvalidArgument(
            f"expected an integer compression level for {name}, found {level!r}"
        )
    if not lo <= int(level) <= hi:
        raise ArrowInvalidArgument(
            f"expected a {name} compression level in {lo}..{hi}, found {level}"
        )
    return int(level)


# --------------------------------------------------------------------------------------
# one buffer


def _where(where: str) -> str:
    return f" in {where}" if where else ""


#: lz4 buffers larger than this are written as frames of independent 4 MiB blocks
LZ4_COMPRESS_CHUNK = 1 << 20
#: the block size of those frames (the largest the frame format has)
LZ4_BIG_BLOCK = 1 << 22


def _raw_compress(name: str, data: np.ndarray, level: int) -> list[Any]:
    """The compressed payload of one buffer, as one or more pieces to write in order."""
    if name == ZSTD:
        return [_zstd_compressor(level).compress(data)]
    # Small buffers: frames as Arrow C++ writes them (64 KiB linked blocks, without the
    # optional content size), byte-identical to pyarrow's.
    if data.nbytes <= LZ4_COMPRESS_CHUNK:
        return [lz4.frame.compress(data, compression_level=level, store_size=False)]
    return _lz4_big_frame(data, level)


def _lz4_big_frame(data: np.ndarray, level: int) -> list[Any]:
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


_local = threading.local()


def _zstd_compressor(level: int) -> zstandard.ZstdCompressor:
    # ZstdCompressor objects are not thread-safe; keep one per thread and level
    cache = getattr(_local, "zc", None)
    if cache is None:
        cache = _local.zc = {}
    comp = cache.get(level)
    if comp is None:
        comp = cache[level] = zstandard.ZstdCompressor(level=level)
    return comp


def _zstd_decompressor() -> zstandard.ZstdDecompressor:
    dec = getattr(_local, "zd", None)
    if dec is None:
        dec = _local.zd = zstandard.ZstdDecompressor()
    return dec


#: when a buffer's declared length is not plausible for its payload, the codecs produce
#: output in pieces of at most this many bytes, so memory follows the real output and not
#: the (untrusted) declared length
DECOMPRESS_CHUNK = 1 << 20
#: one codec call, with the output allocated at the declared length up front, only for a
#: declared length of at most DECOMPRESS_CHUNK, or of at most ONE_SHOT_MAX that is also at
#: most ONE_SHOT_RATIO times the payload.  The ratios are what the formats can physically
#: reach (measured on zeros, every level: lz4 frame 243-255x, zstd 32404-32546x; a zstd
#: block of at most 128 KiB costs at least 4 bytes), so real data always qualifies and a
#: length that only a lie could reach is never allocated before it is produced.
ONE_SHOT_MAX = 64 << 20
ONE_SHOT_RATIO = {LZ4_FRAME: 256, ZSTD: 1 << 15}
#: compressed bytes handed to the LZ4 decompressor per call when decoding in pieces
LZ4_INPUT_CHUNK = 1 << 18


def _one_shot(name: str, payload_size: int, declared: int) -> bool:
    return declared <= DECOMPRESS_CHUNK or (
        declared <= ONE_SHOT_MAX and declared <= payload_size * ONE_SHOT_RATIO[name]
    )


def _more_error(declared: int, where: str) -> CompressionError:
    return CompressionError(f"expected {declared} uncompressed bytes, found more{_where(where)}")


def _joined(pieces: list[bytes]) -> bytes:
    return pieces[0] if len(pieces) == 1 else b"".join(pieces)


def _lz4_check_end(
    dec: lz4.frame.LZ4FrameDecompressor, total: int, unfed: int, declared: int, where: str
) -> None:
    if not dec.eof:
        raise CompressionError(
            f"expected a complete LZ4 frame of {declared} uncompressed bytes, found "
            f"a truncated frame ({total} bytes decoded){_where(where)}"
        )
    unused = len(dec.unused_data or b"") + unfed
    if unused:
        raise CompressionError(
            f"expected one LZ4 frame, found {unused} bytes after its end{_where(where)}"
        )


def _lz4_one_shot(payload: np.ndarray, declared: int, where: str) -> bytes:
    dec = lz4.frame.LZ4FrameDecompressor()
    out = dec.decompress(payload, max_length=declared)
    if len(out) == declared and not dec.eof and dec.decompress(b"", max_length=1):
        # a frame that holds exactly ``declared`` bytes still has its end mark to read;
        # anything it would still produce is more than declared
        raise _more_error(declared, where)
    _lz4_check_end(dec, len(out), 0, declared, where)
    return out


def _lz4_chunked(payload: np.ndarray, declared: int, where: str) -> bytes:
    dec = lz4.frame.LZ4FrameDecompressor()
    pieces: list[bytes] = []
    total = 0
    pos = 0
    while True:
        # input in pieces too: python-lz4 copies the input it has not consumed on every
        # call that stops at max_length
        data: Any = b""
        if pos < payload.nbytes and (pos == 0 or dec.needs_input):
            data = payload[pos : pos + LZ4_INPUT_CHUNK]
            pos += data.nbytes
        # at ``declared`` a complete frame still has its end mark to read; ask for one
        # more byte, which only a frame holding more than declared can produce
        want = min(DECOMPRESS_CHUNK, declared - total) if total < declared else 1
        piece = dec.decompress(data, max_length=want)
        if piece:
            total += len(piece)
            if total > declared:
                raise _more_error(declared, where)
            pieces.append(piece)
        if dec.eof:
            break
        if not piece and not len(data) and (pos >= payload.nbytes or not dec.needs_input):
            break  # no progress and no input left: a truncated frame, reported below
    _lz4_check_end(dec, total, payload.nbytes - pos, declared, where)
    return _joined(pieces) if pieces else b""


def _zstd_stream(payload: np.ndarray, declared: int, step: int, where: str) -> Any:
    # ZSTD_decompress (Arrow C++) accepts concatenated frames; read across them, in
    # pieces of at most ``step`` bytes, until at least half of ``declared`` has really come
    # out; then the output is allocated once at ``declared`` (at most twice what the codec
    # has already produced) and the rest is read straight into it, so large buffers pay
    # for copying only their first half.  Never more than one byte past ``declared``.
    reader = _zstd_decompressor().stream_reader(payload, read_across_frames=True)
    pieces: list[bytes] = []
    total = 0
    while total * 2 < declared:
        piece = reader.read(min(step, declared - total))
        if not piece:
            return _joined(pieces) if pieces else b""
        total += len(piece)
        pieces.append(piece)
    if total == declared:
        if reader.read(1):
            raise _more_error(declared, where)
        return _joined(pieces)
    out = np.empty(declared + 1, dtype=np.uint8)
    pos = 0
    for piece in pieces:
        out[pos : pos + len(piece)] = np.frombuffer(piece, np.uint8)
        pos += len(piece)
    pieces.clear()
    return _read_rest(reader, out, pos, declared, where)


def _read_rest(reader: Any, out: np.ndarray, pos: int, declared: int, where: str) -> Any:
    """Read a zstd stream reader to its end into ``out`` (``declared`` + 1 bytes) from
    ``pos`` on; the bytes read, read-only.  The extra byte of ``out`` is how a frame
    holding more than declared shows itself (an error)."""
    view = memoryview(out)
    while pos <= declared:
        got = reader.readinto(view[pos:])
        if not got:
            break
        pos += got
    if pos > declared:
        raise _more_error(declared, where)
    result = out[:pos]
    result.flags.writeable = False  # like every buffer read from IPC
    return result


# --------------------------------------------------------------------------------------
# LZ4 frames walked block by block (lz4 Frame format description, "General structure")
#
# Both Python frame decoders are several times slower than Arrow C++ on the frames Arrow
# writes (64 KiB linked blocks, no checksums, no content size); incompressible data is
# stored in such frames as raw blocks, which the libraries copy slowly.  So quiver reads
# the container itself: raw blocks are copied with numpy (runs of full blocks in one
# strided copy); compressed blocks go to a block decoder, cramjam's straight into the
# output for independent blocks, python-lz4's with the previous 64 KiB of output as its
# dictionary for linked ones (cramjam's has no dictionary).  The header checksum is
# verified (XXH32 of at most 11 bytes, computed here).
# A frame with anything this walker does not handle fully (checksums it cannot verify, a
# dictionary id, bytes after the end mark, a block that fails) gives None, and the
# library decoders below then decode it or explain the error as before.

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


def _xxh32_short(data: bytes) -> int:
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


#: the frame header of _lz4_big_frame: FLG version 01 with independent blocks and nothing
#: optional (0x60), BD 4 MiB blocks (0x70), then the descriptor's checksum byte
_LZ4_BIG_HEADER = _LZ4_MAGIC + bytes([0x60, 0x70, (_xxh32_short(b"\x60\x70") >> 8) & 0xFF])


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
    if len(head) <= end or head[end] != (_xxh32_short(head[4:end]) >> 8) & 0xFF:
        return None
    if end == 14 and int.from_bytes(head[6:14], "little") != declared:
        return None
    return end + 1, block_max, not flg & _LZ4_FLG_INDEPENDENT


def _lz4_walk(payload: np.ndarray, declared: int, *, library_fits: bool) -> np.ndarray | None:
    """The ``declared`` bytes of one LZ4 frame, or None (see above).

    The output is allocated at ``declared`` up front only when the frame can produce it:
    raw blocks prove their bytes (they are in the payload), and the rest must pass the
    rule of one-call decoding (see ``_one_shot``) against the compressed blocks' bytes,
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
    if unproven <= 0 or _one_shot(LZ4_FRAME, packed, unproven):
        room = declared
    elif ONE_SHOT_MAX < unproven <= packed * ONE_SHOT_RATIO[LZ4_FRAME]:
        room = raw_bytes + ONE_SHOT_MAX
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


def _lz4_into(payload: np.ndarray, declared: int, where: str) -> np.ndarray | None:
    """A frame the walk declined, in one cramjam call straight into an output of exactly
    ``declared`` bytes, or None to let python-lz4's streaming decoder explain the error.

    Measured: 1.5-2.5x faster than python-lz4's frame decoder on 40 MB buffers.
    """
    out = np.empty(declared, dtype=np.uint8)
    try:
        written = cramjam.lz4.decompress_into(payload, out)
    except cramjam.DecompressionError as exc:
        if "whole buffer" in str(exc):  # the output would not fit: more than declared
            raise _more_error(declared, where) from None
        return None  # corrupt, or something the streaming decoder explains better
    if written != declared:
        return None
    out.flags.writeable = False  # like every buffer read from IPC
    return out


def _zstd_into(payload: np.ndarray, declared: int, where: str) -> np.ndarray:
    """Every frame of ``payload`` read straight into one output of ``declared`` + 1 bytes.

    With the whole frame in hand, a known content size and room for it, libzstd decodes
    in a single pass into the output (no window buffer, no copy): measured 10-25% faster
    than cramjam's ``decompress_into`` and 1.3x faster than ``ZstdDecompressor.decompress``
    (whose fresh ``bytes`` take 4 KiB page faults where numpy's large arrays get huge
    pages).  The extra byte is how a frame holding more than declared shows itself.
    """
    out = np.empty(declared + 1, dtype=np.uint8)
    # ZSTD_decompress (Arrow C++) accepts concatenated frames; so does this reader
    reader = _zstd_decompressor().stream_reader(payload, read_across_frames=True)
    return _read_rest(reader, out, 0, declared, where)


def _raw_decompress(name: str, payload: np.ndarray, declared: int, where: str) -> Any:
    one_shot = _one_shot(name, payload.nbytes, declared)
    step = declared if one_shot else DECOMPRESS_CHUNK
    if name == LZ4_FRAME:
        out = _lz4_walk(payload, declared, library_fits=one_shot)
        if out is None and one_shot:
            out = _lz4_into(payload, declared, where)
        if out is not None:
            return out
    try:
        if name == LZ4_FRAME:
            if one_shot:
                return _lz4_one_shot(payload, declared, where)
            return _lz4_chunked(payload, declared, where)
        # the zstandard package allocates whatever a frame header claims, ignoring
        # max_output_size; so look at the header first
        content_size = zstandard.frame_content_size(payload)
        if content_size != zstandard.CONTENTSIZE_UNKNOWN and content_size > declared:
            raise CompressionError(
                f"expected a zstd frame of at most {declared} bytes, found a frame header "
                f"claiming {content_size}{_where(where)}"
            )
        if one_shot:
            return _zstd_into(payload, declared, where)
        return _zstd_stream(payload, declared, step, where)
    except CompressionError:
        raise
    except (RuntimeError, ValueError, zstandard.ZstdError) as exc:
        raise CompressionError(
            f"expected valid {name} data, found a corrupt stream ({exc}){_where(where)}"
        ) from None


def _read_prefix(data: np.ndarray, max_uncompressed: int, where: str) -> int:
    if data.nbytes < PREFIX_BYTES:
        raise CompressionError(
            f"expected at least {PREFIX_BYTES} bytes for a compressed buffer's length "
            f"prefix, found {data.nbytes}{_where(where)}"
        )
    declared = int.from_bytes(data[:PREFIX_BYTES].tobytes(), "little", signed=True)
    if declared == UNCOMPRESSED:
        return declared
    if declared < 0:
        raise CompressionError(
            f"expected an uncompressed length >= 0 (or -1), found {declared}{_where(where)}"
        )
    if declared > max_uncompressed:
        raise LimitExceeded(
            f"expected an uncompressed buffer length <= {max_uncompressed} (the limit), "
            f"found {declared}{_where(where)}"
        )
    return declared


def _as_u8(data: Any) -> np.ndarray:
    if isinstance(data, np.ndarray) and data.dtype == np.uint8 and data.ndim == 1:
        return data
    return as_buffer(data)


class StoredRange:
    """A stored body buffer still in its file: ``nbytes`` bytes from ``offset`` that
    ``read(offset, out)`` copies into ``out`` (filling it, or raising).

    The decoders read such a buffer only when they decode it, into a scratch buffer that
    each worker thread reuses, so a compressed body never has to be read whole into
    fresh memory first (see :func:`decompress_buffers`).
    """

    __slots__ = ("_read", "nbytes", "offset")

    def __init__(self, read: Callable[[int, np.ndarray], None], offset: int, nbytes: int) -> None:
        self._read = read
        self.offset = offset
        self.nbytes = nbytes

    def read_into(self, out: np.ndarray, skip: int = 0) -> None:
        """Fill ``out`` with the bytes from ``skip`` on."""
        if out.nbytes:
            self._read(self.offset + skip, out)

    def head(self, n: int) -> np.ndarray:
        """The first ``n`` bytes (fewer when the range is shorter)."""
        out = np.empty(min(n, self.nbytes), dtype=np.uint8)
        self.read_into(out)
        return out


def _decode(name: str, payload: np.ndarray, declared: int, where: str) -> np.ndarray:
    """The ``declared`` (> 0) bytes that ``payload`` (the bytes after the prefix) holds."""
    out = _raw_decompress(name, payload, declared, where)
    if len(out) != declared:
        raise CompressionError(
            f"expected {declared} uncompressed bytes, found {len(out)}{_where(where)}"
        )
    return np.frombuffer(out, dtype=np.uint8)


def _decode_stored(
    name: str, stored: StoredRange, declared: int, scratch: dict[int, np.ndarray], where: str
) -> np.ndarray:
    """One buffer still in its file (prefix already read and checked as ``declared``).

    A compressed payload is read into this thread's scratch array (grown as needed, and
    reused for the next buffer); the decoders never return a view of their input, so
    nothing keeps the scratch.  A buffer stored raw (-1) is read into its own array.
    """
    if declared == 0:
        return empty_buffer()
    size = stored.nbytes - PREFIX_BYTES
    if declared == UNCOMPRESSED:
        raw = np.empty(size, dtype=np.uint8)
        stored.read_into(raw, PREFIX_BYTES)
        raw.flags.writeable = False  # like every buffer read from IPC
        return raw
    me = threading.get_ident()
    room = scratch.get(me)
    if room is None or room.nbytes < size:
        room = scratch[me] = np.empty(size, dtype=np.uint8)
    payload = room[:size]
    stored.read_into(payload, PREFIX_BYTES)
    return _decode(name, payload, declared, where)


def decompress_buffer(
    codec: str, data: Any, *, max_uncompressed: int, where: str = ""
) -> np.ndarray:
    """Decode one stored body buffer (length prefix included) into its raw bytes.

    A zero-length buffer stays zero-length; prefix ``-1`` gives a zero-copy view of the
    bytes after it.  The declared length must be within ``max_uncompressed`` (else
    :class:`LimitExceeded`) and must match what the codec produces (else
    :class:`CompressionError`).  ``where`` names the buffer in error messages.

    >>> import numpy as np
    >>> stored = np.frombuffer((-1).to_bytes(8, "little", signed=True) + b"abc", np.uint8)
    >>> bytes(decompress_buffer("lz4", stored, max_uncompressed=10))
    b'abc'
    """
    name = normalize_codec(codec)
    if isinstance(data, StoredRange):  # the prefix is read and checked before the rest
        if data.nbytes == 0:
            return empty_buffer()
        declared = _read_prefix(data.head(PREFIX_BYTES), max_uncompressed, where)
        return _decode_stored(name, data, declared, {}, where)
    buf = _as_u8(data)
    if buf.nbytes == 0:
        return buf
    declared = _read_prefix(buf, max_uncompressed, where)
    payload = buf[PREFIX_BYTES:]
    if declared == UNCOMPRESSED:
        return payload
    if declared == 0:
        return empty_buffer()
    return _decode(name, payload, declared, where)


def compress_buffer(codec: str, buf: Any, *, level: int | None = None) -> list[Any]:
    """The parts to write for one body buffer: the 8-byte prefix, then the payload.

    The payload is the compressed bytes (one or more pieces, to be written in order), or
    the buffer itself (zero-copy, prefix ``-1``) when compressing does not make it smaller.
    An empty buffer gives no parts at all.

    >>> import numpy as np
    >>> [len(p) for p in compress_buffer("lz4", np.zeros(4096, np.uint8))]
    [8, 41]
    >>> [bytes(p) for p in compress_buffer("zstd", np.frombuffer(b"xy", np.uint8))]
    [b'\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff', b'xy']
    """
    name = normalize_codec(codec)
    lvl = check_level(name, level)
    return _compress_one(name, _as_u8(buf), lvl)


def _compress_one(name: str, raw: np.ndarray, level: int) -> list[Any]:
    n = raw.nbytes
    if n == 0:
        return []
    pieces = _raw_compress(name, raw, level)
    if sum(len(p) for p in pieces) >= n:
        return [_UNCOMPRESSED_PREFIX, raw]
    return [n.to_bytes(8, "little", signed=True), *pieces]


def parts_length(parts: Sequence[Any]) -> int:
    """Total byte length of the parts returned by :func:`compress_buffer`.

    >>> parts_length([b"12345678", b"abc"])
    11
    """
    return sum(nbytes_of(p) for p in parts)


# --------------------------------------------------------------------------------------
# many buffers, on a small thread pool

_pools: dict[int, ThreadPoolExecutor] = {}
_pools_lock = threading.Lock()


def default_threads() -> int:
    """How many worker threads ``threads=True`` uses (CPU count, at most 8)."""
    return max(1, min(8, os.cpu_count() or 1))


def _workers(threads: bool | int) -> int:
    if isinstance(threads, bool):
        return default_threads() if threads else 1
    if not isinstance(threads, (int, np.integer)) or threads < 0:
        raise ArrowInvalidArgument(
            f"expected threads as a bool or a non-negative int, found {threads!r}"
        )
    return max(1, int(threads))


def _pool(workers: int) -> ThreadPoolExecutor:
    with _pools_lock:
        pool = _pools.get(workers)
        if pool is None:
            pool = _pools[workers] = ThreadPoolExecutor(
                max_workers=workers, thread_name_prefix="quiver-codec"
            )
        return pool


def _run(
    fn: Callable[[int], Any], sizes: Sequence[int], threads: bool | int, min_bytes: int
) -> list[Any]:
    """``[fn(i) for i in range(len(sizes))]``, the items of at least ``min_bytes`` on the
    pool, largest first, and the small ones on the calling thread meanwhile.

    Largest first, because with as few workers as two cores give, a large buffer that
    starts last finishes alone.  When several items fail, the first one's error (by
    index) is raised, as a serial run would.
    """
    count = len(sizes)
    workers = _workers(threads)
    big = [i for i in range(count) if sizes[i] >= min_bytes]
    if workers <= 1 or len(big) <= 1 or sum(sizes) < PARALLEL_THRESHOLD:
        return [fn(i) for i in range(count)]
    big.sort(key=sizes.__getitem__, reverse=True)
    pool = _pool(min(workers, len(big)))
    futures = {i: pool.submit(fn, i) for i in big}
    results: list[Any] = [None] * count
    errors: dict[int, BaseException] = {}
    for i in range(count):
        if i not in futures:
            try:
                results[i] = fn(i)
            except Exception as exc:  # raised below, after the pool's work is done
                errors[i] = exc
    for i, future in futures.items():
        exc = future.exception()
        if exc is None:
            results[i] = future.result()
        else:
            errors[i] = exc
    if errors:
        raise errors[min(errors)]
    return results


def run_pooled(
    fn: Callable[[int], Any], sizes: Sequence[int], *, threads: bool | int, min_bytes: int
) -> list[Any]:
    """``[fn(i) for i in range(len(sizes))]`` on the codec thread pool as :func:`_run`
    schedules it (the items of at least ``min_bytes``, largest first); the readers use it
    for large positional reads, which release the GIL as the codecs do."""
    return _run(fn, sizes, threads, min_bytes)


def decompress_buffers(
    codec: str,
    buffers: Sequence[Any],
    *,
    max_uncompressed: int,
    bound_total: bool = True,
    threads: bool | int = True,
    where: str = "",
    names: Sequence[str] | None = None,
    locate: Callable[[int, ArrowError], None] | None = None,
) -> list[np.ndarray | None]:
    """Decode many stored buffers (``None`` entries stay ``None``).

    ``names``: what error messages call each buffer (default ``buffer <i>``); ``locate``
    is called with the index and the error of a failing buffer before it is raised.

    ``max_uncompressed`` bounds each buffer and, unless ``bound_total`` is false, the sum
    of all of them; every prefix is checked before any buffer is decompressed.
    ``threads``: True for the shared pool, False for serial, an int for at most that many
    workers.  A :class:`StoredRange` entry
    is read only when its turn comes, into a scratch array per thread: the compressed
    bytes then pass through a few reused arrays instead of one fresh array as large as
    the whole body, whose page faults cost as much as decoding lz4 (measured on 249 MB
    of lz4 frames, 8 columns: 106-116 ms instead of 117-126 ms, pyarrow 96-111 ms).

    >>> import numpy as np
    >>> raw = np.frombuffer(b"hello" * 100, np.uint8)
    >>> stored = np.frombuffer(b"".join(bytes(p) for p in compress_buffer("lz4", raw)), np.uint8)
    >>> [None if b is None else len(b) for b in
    ...  decompress_buffers("lz4", [stored, None, stored], max_uncompressed=10_000)]
    [500, None, 500]
    """
    name = normalize_codec(codec)
    views = [
        None if b is None else b if isinstance(b, StoredRange) else _as_u8(b) for b in buffers
    ]
    label = (where + ", ") if where else ""
    if names is None:
        names = [f"buffer {i}" for i in range(len(views))]
    sizes = [0] * len(views)
    prefixes = [0] * len(views)
    for i, v in enumerate(views):
        if v is None or v.nbytes == 0:
            continue
        try:
            head = v.head(PREFIX_BYTES) if isinstance(v, StoredRange) else v
            prefixes[i] = declared = _read_prefix(head, max_uncompressed, label + names[i])
        except ArrowError as exc:
            if locate is not None:
                locate(i, exc)
            raise
        # work follows the output; a raw (-1) buffer is a view, no work at all
        sizes[i] = max(declared, 0)
    total = sum(sizes)
    if bound_total and total > max_uncompressed:
        raise LimitExceeded(
            f"expected the uncompressed buffers to total <= {max_uncompressed} (the limit), "
            f"found {total}{_where(where)}"
        )

    scratch: dict[int, np.ndarray] = {}  # thread id -> its scratch array, for this call

    def one(i: int) -> np.ndarray | None:
        v = views[i]
        if v is None:
            return None
        try:
            if isinstance(v, StoredRange):
                if v.nbytes == 0:
                    return empty_buffer()
                return _decode_stored(name, v, prefixes[i], scratch, label + names[i])
            return decompress_buffer(
                name, v, max_uncompressed=max_uncompressed, where=label + names[i]
            )
        except ArrowError as exc:
            if locate is not None:
                locate(i, exc)
            raise

    return _run(one, sizes, threads, POOL_MIN_BYTES[name])


def compress_buffers(
    codec: str,
    buffers: Sequence[Any],
    *,
    level: int | None = None,
    threads: bool | int = True,
) -> list[list[Any]]:
    """Compress many buffers; one list of parts per buffer (see :func:`compress_buffer`).

    ``None`` entries (absent buffers) give empty part lists.

    >>> import numpy as np
    >>> out = compress_buffers("zstd", [np.zeros(100, np.uint8), None], threads=False)
    >>> [parts_length(p) for p in out]
    [25, 0]
    """
    name = normalize_codec(codec)
    lvl = check_level(name, level)
    raws = [empty_buffer() if b is None else _as_u8(b) for b in buffers]
    sizes = [r.nbytes for r in raws]
    return _run(
        lambda i: _compress_one(name, raws[i], lvl), sizes, threads, POOL_MIN_BYTES["compress"]
    )


def compress_buffers_in_order(
    codec: str,
    buffers: Sequence[Any],
    *,
    level: int | None = None,
    threads: bool | int = True,
) -> Iterator[list[Any]]:
    """:func:`compress_buffers`, one buffer's parts at a time, in order: the large ones are
    all handed to the pool at once, so that the caller can write buffer ``i`` while the
    pool compresses the buffers after it (the writers' pipelined path).

    Leaving the generator early cancels what the pool has not started; what it has
    started finishes, and the results are dropped.

    >>> import numpy as np
    >>> [parts_length(p) for p in compress_buffers_in_order("zstd", [np.zeros(100, np.uint8)])]
    [25]
    """
    name = normalize_codec(codec)
    lvl = check_level(name, level)
    raws = [empty_buffer() if b is None else _as_u8(b) for b in buffers]
    workers = _workers(threads)
    floor = POOL_MIN_BYTES["compress"]
    futures: dict[int, Future[list[Any]]] = {}
    if workers > 1:
        pool = _pool(workers)
        futures = {
            i: pool.submit(_compress_one, name, r, lvl)
            for i, r in enumerate(raws)
            if r.nbytes >= floor
        }
    try:
        for i, raw in enumerate(raws):
            future = futures.get(i)
            yield _compress_one(name, raw, lvl) if future is None else future.result()
    finally:
        for future in futures.values():  # left early: what has not started never will
            future.cancel()


__all__ = [
    "CODECS",
    "LZ4_FRAME",
    "PARALLEL_THRESHOLD",
    "POOL_MIN_BYTES",
    "ZSTD",
    "StoredRange",
    "check_level",
    "codec_from_id",
    "codec_id",
    "compress_buffer",
    "compress_buffers",
    "compress_buffers_in_order",
    "decompress_buffer",
    "decompress_buffers",
    "normalize_codec",
    "parts_length",
    "run_pooled",
]
