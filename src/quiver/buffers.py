"""Buffers: contiguous bytes viewed as 1-D ``numpy.uint8`` arrays, plus bitmap helpers.

A quiver buffer is a ``numpy.ndarray`` of dtype uint8 and one dimension.  Slicing one is a
view; ``numpy.frombuffer`` over ``bytes``, a ``memoryview`` or an ``mmap`` makes one without
copying.  Typed access is ``buf.view(dtype)`` (numpy accepts unaligned views).

Bitmaps are LSB-first (bit ``i`` is ``byte[i // 8] >> (i % 8) & 1``) as the Columnar spec
says.

>>> import numpy as np
>>> b = pack_bits(np.array([True, False, True, True]))
>>> bytes(b), count_set_bits(b, 0, 4), unpack_bits(b, 1, 3).tolist()
(b'\\r', 3, [False, True, True])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import ArrowTypeError

Buffer = np.ndarray

_EMPTY = np.zeros(0, dtype=np.uint8)
_EMPTY.flags.writeable = False


def empty_buffer() -> np.ndarray:
    """A shared, read-only, zero-length buffer."""
    return _EMPTY


def nbytes_of(part: Any) -> int:
    """The byte length of a bytes-like object or numpy array (a part to write)."""
    return part.nbytes if isinstance(part, np.ndarray) else memoryview(part).nbytes


def as_buffer(obj: Any) -> np.ndarray:
    """View ``obj`` (bytes-like or a contiguous numpy array) as a uint8 buffer, no copy.

    ``None`` stays ``None`` (an absent buffer).
    """
    if obj is None:
        return None  # type: ignore[return-value]
    if isinstance(obj, np.ndarray):
        if obj.dtype == np.uint8 and obj.ndim == 1:
            return obj
        if not (obj.flags.c_contiguous or obj.flags.f_contiguous):
            obj = np.ascontiguousarray(obj)
        return obj.reshape(-1).view(np.uint8) if obj.size else _EMPTY
    try:
        mv = memoryview(obj)
    except TypeError:
        raise ArrowTypeError(
            f"expected a bytes-like object or numpy array as a buffer, found {type(obj).__name__}"
        ) from None
    if not mv.c_contiguous:
        raise ArrowTypeError("expected a contiguous buffer, found a strided memoryview")
    if mv.nbytes == 0:
        return _EMPTY
    return np.frombuffer(mv.cast("B") if mv.format != "B" or mv.ndim != 1 else mv, np.uint8)


def unpack_bits(buf: np.ndarray, offset: int, length: int) -> np.ndarray:
    """Bits ``offset .. offset+length`` of an LSB-first bitmap as a bool array."""
    if length == 0:
        return np.zeros(0, dtype=bool)
    start = offset // 8
    stop = (offset + length + 7) // 8
    bits = np.unpackbits(buf[start:stop], bitorder="little")
    skip = offset - start * 8
    return bits[skip : skip + length].view(bool)


def pack_bits(values: np.ndarray) -> np.ndarray:
    """Pack a bool array into an LSB-first bitmap (padded with zero bits)."""
    return np.packbits(np.asarray(values, dtype=bool), bitorder="little")


_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def count_set_bits(buf: np.ndarray, offset: int, length: int) -> int:
    """How many bits are set in ``offset .. offset+length`` of a bitmap."""
    if length <= 0:
        return 0
    first = offset // 8
    last = (offset + length - 1) // 8
    head = offset % 8
    tail = (offset + length) % 8
    if first == last:
        mask = ((1 << length) - 1) << head
        return int(_POPCOUNT[int(buf[first]) & mask])
    total = int(_POPCOUNT[buf[first + 1 : last]].sum(dtype=np.int64)) if last > first + 1 else 0
    total += int(_POPCOUNT[int(buf[first]) & (0xFF << head) & 0xFF])
    last_mask = 0xFF if tail == 0 else (1 << tail) - 1
    total += int(_POPCOUNT[int(buf[last]) & last_mask])
    return total


def bitmap_bytes(length: int) -> int:
    """Bytes needed for a bitmap of ``length`` bits."""
    return (length + 7) // 8


def padded(n: int, alignment: int = 8) -> int:
    """``n`` rounded up to a multiple of ``alignment``."""
    return (n + alignment - 1) // alignment * alignment
