"""Body compression, the policy: codec names and levels, the buffer prefix, and the rule
that decides when an untrusted declared length may be allocated up front.

The codec names come from quiver's one table (:data:`quiver.ipc.metadata.model.CODECS`,
whose order is Message.fbs's ``CompressionType``, and ``CODEC_ALIASES``): the writer's
options, the metadata coder and this package all read it.

>>> normalize_codec("LZ4"), normalize_codec("lz4frame"), check_level("zstd", None)
('lz4_frame', 'lz4_frame', 1)
"""

from __future__ import annotations

import numpy as np

from ...errors import ArrowInvalidArgument, CompressionError
from ..metadata.model import CODEC_ALIASES, CODECS

LZ4_FRAME, ZSTD = CODECS
_ALIASES = CODEC_ALIASES

# Accepted levels: lz4 frame 0 (fast, the default) .. 12 (LZ4HC max), like Arrow C++
# (which calls 1 the fast default); zstd from ZSTD_minCLevel() to 22, default 1 as Arrow.
_LEVELS = {LZ4_FRAME: (0, 12, 0), ZSTD: (-(1 << 17), 22, 1)}


PREFIX_BYTES = 8


UNCOMPRESSED = -1


UNCOMPRESSED_PREFIX = UNCOMPRESSED.to_bytes(8, "little", signed=True)


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


def where_suffix(where: str) -> str:
    return f" in {where}" if where else ""


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


def decompress_one_shot(name: str, payload_size: int, declared: int) -> bool:
    return declared <= DECOMPRESS_CHUNK or (
        declared <= ONE_SHOT_MAX and declared <= payload_size * ONE_SHOT_RATIO[name]
    )


def more_error(declared: int, where: str) -> CompressionError:
    return CompressionError(
        f"expected {declared} uncompressed bytes, found more{where_suffix(where)}"
    )


def joined(pieces: list[bytes]) -> bytes:
    return pieces[0] if len(pieces) == 1 else b"".join(pieces)
