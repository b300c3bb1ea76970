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

The package is split by job: :mod:`.codecs` (names, levels, the prefix, the allocation
rule), :mod:`.lz4frame` (the LZ4 frame container: walk, XXH32, big-block writer, library
decoders), :mod:`.buffer` (one buffer: prefix, zstd, dispatch, :class:`StoredRange`) and
:mod:`.pool` (many buffers on the thread pool).  The tunables live where they are read:
``codecs.ONE_SHOT_MAX`` / ``DECOMPRESS_CHUNK`` / ``LZ4_INPUT_CHUNK``,
``lz4frame.LZ4_LINKED_COMPRESSED_RATIO``, ``pool.PARALLEL_THRESHOLD`` / ``POOL_MIN_BYTES``.

>>> import numpy as np
>>> raw = np.arange(1000, dtype=np.int64).view(np.uint8)
>>> parts = compress_buffer("zstd", raw)
>>> stored = np.frombuffer(b"".join(bytes(p) for p in parts), np.uint8)
>>> bool((decompress_buffer("zstd", stored, max_uncompressed=1 << 20) == raw).all())
True
"""

from __future__ import annotations

from .buffer import (
    StoredRange,
    compress_buffer,
    decompress_buffer,
    parts_length,
)
from .codecs import (
    CODECS,
    LZ4_FRAME,
    PREFIX_BYTES,
    UNCOMPRESSED,
    ZSTD,
    check_level,
    decompress_one_shot,
    normalize_codec,
)
from .lz4frame import (
    LZ4_BIG_BLOCK,
    LZ4_COMPRESS_CHUNK,
    lz4_walk,
    xxh32_short,
)
from .pool import (
    PARALLEL_THRESHOLD,
    POOL_MIN_BYTES,
    compress_buffers,
    compress_buffers_in_order,
    decompress_buffers,
    default_threads,
    run_parallel,
    run_pooled,
)

__all__ = [
    "CODECS",
    "LZ4_FRAME",
    "PARALLEL_THRESHOLD",
    "POOL_MIN_BYTES",
    "PREFIX_BYTES",
    "UNCOMPRESSED",
    "ZSTD",
    "StoredRange",
    "check_level",
    "compress_buffer",
    "compress_buffers",
    "compress_buffers_in_order",
    "decompress_buffer",
    "decompress_buffers",
    "default_threads",
    "normalize_codec",
    "parts_length",
    "run_pooled",
]
