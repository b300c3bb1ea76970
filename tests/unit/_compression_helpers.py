"""Helpers shared by the ipc.compression tests."""

from __future__ import annotations

import numpy as np

from quiver.ipc import compression

CODECS = ["lz4_frame", "zstd"]


def _stored(parts) -> np.ndarray:
    return np.frombuffer(b"".join(bytes(memoryview(p)) for p in parts), np.uint8)


def _prefixed(n: int, payload: bytes) -> np.ndarray:
    return np.frombuffer(n.to_bytes(8, "little", signed=True) + payload, np.uint8)


def _ints(n: int = 100_000) -> np.ndarray:
    return np.arange(n, dtype=np.int64).view(np.uint8)


KIB = 1 << 10


#: sizes around the 64 KiB block boundaries, and odd ones
SIZES = [0, 1, 7, 64 * KIB - 1, 64 * KIB, 64 * KIB + 1, 3 * 64 * KIB + 5, 300_001]


def _data(kind: str, n: int, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    if kind == "random":
        return rng.integers(0, 256, n, dtype=np.uint8).tobytes()
    if kind == "text":
        words = [b"value-%d," % i for i in range(300)]
        return b"".join(words[i] for i in rng.integers(0, 300, n // 4 + 1))[:n]
    # half random, half compressible, in 48 KiB runs: frames of mixed raw and compressed blocks
    out = bytearray()
    while len(out) < n:
        out += _data("random" if len(out) // (48 * KIB) % 2 else "text", 48 * KIB, seed + len(out))
    return bytes(out[:n])


def _walk(payload: bytes, n: int) -> np.ndarray | None:
    return compression.lz4_walk(np.frombuffer(payload, np.uint8), n, library_fits=True)


def _decode(payload: bytes, n: int) -> np.ndarray:
    return compression.decompress_buffer("lz4", _prefixed(n, payload), max_uncompressed=1 << 30)
