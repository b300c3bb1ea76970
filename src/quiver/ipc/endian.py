"""Byte-order conversion of arrays read from big-endian IPC sources (Schema.fbs
``endianness``; Columnar spec, "Byte Order (Endianness)").

The spec lets a writer use its native byte order and says so in the schema; a reader may
convert.  :func:`swap_array_to_native` does what pyarrow's ``ensure_native_endian`` does:
it walks the type tree once, asking :func:`quiver.layout.layout_of` which buffers each
type has and how their elements swap (``BufferSpec.swap`` lists the component widths of
one element; each component is reversed on its own), and returns a new array whose
multi-byte buffers are little-endian.  Validity bitmaps, boolean bits, raw bytes and the
one-byte union type ids are byte-order free and are passed through without copying.

The one irregular layout is the binary view: its int32 length is always swapped, and the
buffer index and offset after the 4-byte prefix only for views longer than 12 bytes (short
views keep their inline bytes as they are).

>>> import numpy as np
>>> from quiver import types as t
>>> from quiver.array import make_array
>>> be = np.array([1, 2, 256], dtype=">i4").view(np.uint8)
>>> native = swap_array_to_native(make_array(t.int32(), 3, [None, be]))
>>> native.buffers[1].view("<i4").tolist()
[1, 2, 256]
"""

from __future__ import annotations

import numpy as np

from .. import types as t
from ..array.base import Array, make_array
from ..errors import LimitExceeded
from ..layout import BufferSpec, layout_of

#: deeper type trees than this are rejected instead of exhausting the Python stack (the
#: same bound as Arrow C++'s and quiver's metadata decoder)
MAX_DEPTH = 64


def _permutation(width: int, components: tuple[int, ...]) -> np.ndarray:
    perm: list[int] = []
    start = 0
    for comp in components:
        perm.extend(range(start + comp - 1, start - 1, -1))
        start += comp
    perm.extend(range(start, width))  # bytes no component covers stay in place
    return np.asarray(perm, dtype=np.intp)


def byteswap_buffer(buf: np.ndarray, byte_width: int, swap: tuple[int, ...]) -> np.ndarray:
    """A copy of ``buf`` with each ``byte_width``-byte element's components reversed.

    ``swap`` lists the component widths (``(8,)`` for int64, ``(4, 4, 8)`` for a
    month-day-nano interval, ``(16,)`` for decimal128).  Trailing bytes that do not fill
    an element (padding) are copied unchanged.  An empty ``swap`` returns ``buf`` itself.

    >>> import numpy as np
    >>> b = np.frombuffer(bytes([0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3]), np.uint8)
    >>> byteswap_buffer(b, 16, (4, 4, 8)).tobytes().hex()
    '01000000020000000300000000000000'
    """
    if not swap or byte_width <= 1:
        return buf
    n = buf.nbytes // byte_width * byte_width
    out = np.empty(buf.nbytes, dtype=np.uint8)
    if n:
        body = buf[:n]
        if swap == (byte_width,) and byte_width in (2, 4, 8):
            # one pass: numpy converts the byte order while assigning
            out[:n].view(f"<u{byte_width}")[:] = body.view(f">u{byte_width}")
        else:
            perm = _permutation(byte_width, swap)
            out[:n].reshape(-1, byte_width)[:] = body.reshape(-1, byte_width)[:, perm]
    out[n:] = buf[n:]
    return out


def swap_views_buffer(buf: np.ndarray, *, source_order: str = "big") -> np.ndarray:
    """A copy of a binary-view buffer with its integers in the other byte order.

    Every view's int32 length is swapped; for views longer than 12 bytes the buffer
    index and offset are swapped too, the 4-byte prefix and inline bytes are not.
    ``source_order`` ("big" or "little") says how to read the lengths of ``buf``.

    >>> import numpy as np
    >>> short = (3).to_bytes(4, "big") + b"abc" + bytes(9)
    >>> long_ = (20).to_bytes(4, "big") + b"abcd" + (1).to_bytes(4, "big") + (8).to_bytes(4, "big")
    >>> out = swap_views_buffer(np.frombuffer(short + long_, np.uint8))
    >>> out.view("<i4").reshape(2, 4)[:, [0, 2, 3]].tolist()
    [[3, 0, 0], [20, 1, 8]]
    """
    n = buf.nbytes // 16 * 16
    out = np.array(buf, dtype=np.uint8, copy=True)
    if not n:
        return out
    src = buf[:n].reshape(-1, 16)
    dst = out[:n].reshape(-1, 16)
    dst[:, 0:4] = src[:, 3::-1]
    length_dtype = ">i4" if source_order == "big" else "<i4"
    lengths = np.ascontiguousarray(src[:, 0:4]).view(length_dtype).reshape(-1)
    long_rows = np.flatnonzero(lengths > 12)
    if long_rows.size:
        picked = src[long_rows]
        dst[long_rows, 8:12] = picked[:, 11:7:-1]
        dst[long_rows, 12:16] = picked[:, 15:11:-1]
    return out


def _swap_buffer(spec: BufferSpec, buf: np.ndarray | None, source_order: str) -> np.ndarray | None:
    if buf is None:
        return None
    if spec.kind == "views":
        return swap_views_buffer(buf, source_order=source_order)
    return byteswap_buffer(buf, spec.byte_width, spec.swap)


def _swap(array: Array, depth: int, path: str, source_order: str) -> Array:
    if depth > MAX_DEPTH:
        raise LimitExceeded(
            f"expected a type nesting depth <= {MAX_DEPTH}, found more", field_path=path or None
        )
    dtype = array.type
    lay = layout_of(dtype)
    own = array.buffers
    buffers = [_swap_buffer(spec, buf, source_order) for spec, buf in zip(lay.buffers, own)]
    # variadic data buffers of views hold raw bytes; they are shared, not copied
    buffers.extend(own[len(lay.buffers) :])
    fields = t.storage_of(dtype).fields
    children = [
        _swap(
            child,
            depth + 1,
            f"{path}.{fields[i].name}" if i < len(fields) else path,
            source_order,
        )
        for i, child in enumerate(array.children)
    ]
    dictionary = array.dictionary
    if dictionary is not None:
        dictionary = _swap(dictionary, depth + 1, f"{path}.<dictionary>", source_order)
    return make_array(
        dtype,
        len(array),
        buffers,
        children,
        getattr(array, "_null_count", -1),  # keep it lazy: bitmaps do not change
        array.offset,
        dictionary,
    )


def swap_buffer_to_native(spec: BufferSpec, buf: np.ndarray | None) -> np.ndarray | None:
    """One big-endian buffer of layout ``spec`` in native order (``None`` stays ``None``).

    For loaders that swap each buffer as they slice it from the body, before checking
    offsets with native arithmetic; byte-order free buffers are returned as they are.

    >>> import numpy as np
    >>> from quiver.layout import BufferSpec
    >>> be = np.array([0, 3, 5], ">i4").view(np.uint8)
    >>> swap_buffer_to_native(BufferSpec("offsets", 4, (4,)), be).view("<i4").tolist()
    [0, 3, 5]
    """
    return _swap_buffer(spec, buf, "big")


def _check_type_depth(dtype: t.DataType) -> None:
    # iterative, so that a hostile depth is reported before anything recurses over the
    # type (hashing a type for the layout cache recurses too)
    stack = [(dtype, 0)]
    while stack:
        typ, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise LimitExceeded(f"expected a type nesting depth <= {MAX_DEPTH}, found more")
        st = typ
        while isinstance(st, t.ExtensionType):
            st = st.storage_type
        if isinstance(st, t.DictionaryType):
            stack.append((st.value_type, depth + 1))
            continue
        stack.extend((f.type, depth + 1) for f in st.fields)


def swap_array_to_native(array: Array) -> Array:
    """Convert an array whose buffers are big-endian into one in native (little) order.

    Offsets, sizes, run ends, union offsets, dictionary indices and the dictionary,
    decimals, intervals, floats and views are swapped by their type's widths; bitmaps
    and bytes are shared with the input.  Length, offset and null count are kept.
    """
    _check_type_depth(array.type)
    return _swap(array, 0, "", "big")


def swap_array_from_native(array: Array) -> Array:
    """The inverse of :func:`swap_array_to_native`: little-endian buffers to big-endian.

    Useful to write test data or big-endian output; quiver's writers always write
    little-endian.
    """
    _check_type_depth(array.type)
    return _swap(array, 0, "", "little")


__all__ = [
    "MAX_DEPTH",
    "byteswap_buffer",
    "swap_array_from_native",
    "swap_array_to_native",
    "swap_buffer_to_native",
    "swap_views_buffer",
]
