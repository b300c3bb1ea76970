"""Flatbuffers read and built by hand: the wire format of Arrow IPC metadata.

Arrow's metadata (Schema.fbs, Message.fbs, File.fbs, Tensor.fbs, SparseTensor.fbs) is encoded
as flatbuffers.  This module knows the flatbuffer *format* and nothing about Arrow; the field
numbers live in :mod:`quiver.ipc.metadata` only.

Theory of operation
-------------------
A flatbuffer starts with a ``uint32`` offset to the root table.  A table starts with an
``int32`` *soffset*; ``table - soffset`` is its vtable: ``uint16`` vtable size, ``uint16``
table size, then one ``uint16`` per field giving the field's position inside the table (0 means
absent: the reader uses the default).  References from a table to strings, vectors and other
tables are ``uint32`` offsets relative to where they are stored, so they always point forward.
A vector is a ``uint32`` count followed by its elements; a string is a vector of bytes followed
by a NUL.  A union takes two fields: a ``uint8`` type code and the reference to the table.

:class:`Reader` / :class:`Table` check every offset and length against the bytes present and
raise :class:`~quiver.errors.MetadataError` ("expected X, found Y" at an absolute byte offset:
``base_offset`` says where the flatbuffer starts in the whole input).  Table nesting is limited
(``max_depth``) and so is the number of Python objects made from vectors (``max_count``):
both raise :class:`~quiver.errors.LimitExceeded`.  This module does not import numpy (a
schema or a footer is read without it); the numpy views of vectors of structs are in
:mod:`quiver.ipc.flatvec`.

:func:`fast_vtable` and :func:`target` are the unchecked-by-exception twins used on hot
paths: they return None where :class:`Table` would raise, and the caller then falls back to
:class:`Table` for the explanation.

:class:`Builder` writes back to front, as the reference implementation does: children are
written before the tables that point at them, so every reference points forward.  Scalars are
aligned to their size, structs to their alignment, vector counts to 4 with elements aligned, and
the whole buffer to 8 bytes.  Identical vtables are shared.

>>> b = Builder()
>>> name = b.create_string("hi")
>>> root = b.table([(0, "offset", name), (1, "<i", 7, 0)])
>>> t = Reader(b.finish(root)).root()
>>> t.string(0), t.get(1, I32, 0), t.get(2, I32, -1)
('hi', 7, -1)
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

from ..errors import LimitExceeded, MetadataError

U8 = struct.Struct("<B")
BOOL = struct.Struct("<?")
I8 = struct.Struct("<b")
I16 = struct.Struct("<h")
U16 = struct.Struct("<H")
I32 = struct.Struct("<i")
U32 = struct.Struct("<I")
I64 = struct.Struct("<q")
U64 = struct.Struct("<Q")
F32 = struct.Struct("<f")
F64 = struct.Struct("<d")

# unpackers for the hot paths that read fields at known positions (one call, no lookup)
read_u32 = _u32 = U32.unpack_from
read_i32 = _i32 = I32.unpack_from
read_i16 = I16.unpack_from
read_i64 = I64.unpack_from
read_i8 = I8.unpack_from
read_u16x2 = _u16x2 = struct.Struct("<HH").unpack_from

_VT_STRUCTS: dict[int, struct.Struct] = {}


def _vt_struct(n: int) -> struct.Struct:
    s = _VT_STRUCTS.get(n)
    if s is None:
        s = _VT_STRUCTS[n] = struct.Struct(f"<{n}H")
    return s


_VT = [struct.Struct(f"<{n}H") for n in range(8)]
_PAD = [[(0,) * (count - n) for n in range(count + 1)] for count in range(8)]


def fast_vtable(buf: Any, size: int, pos: int, count: int = 5) -> tuple[int, ...] | None:
    """The first ``count`` (<= 7) field offsets (0 for an absent field) and the table size
    of the table at ``pos``, when the table and its vtable lie inside the buffer; None
    where :class:`Table` would raise.

    >>> b = Builder()
    >>> data = b.finish(b.table([(1, "<i", 7, 0)]))
    >>> root = U32.unpack_from(data, 0)[0]
    >>> fast_vtable(data, len(data), root, 2)[:2], fast_vtable(data, 3, root, 2)
    ((0, 4), None)
    """
    if pos + 4 > size:
        return None
    vt = pos - _i32(buf, pos)[0]
    if vt < 0 or vt + 4 > size:
        return None
    vlen, tsize = _u16x2(buf, vt)
    if vlen < 4 or vlen & 1 or vt + vlen > size or tsize < 4 or pos + tsize > size:
        return None
    nf = min((vlen - 4) >> 1, count)
    return (*_VT[nf].unpack_from(buf, vt + 4), *_PAD[count][nf], tsize)


def target(buf: Any, size: int, pos: int) -> int | None:
    """Where the reference at ``pos`` points, when that is inside the buffer (else None)."""
    t = pos + _u32(buf, pos)[0]
    return t if t + 4 <= size else None


def as_readable(data: Any) -> bytes | memoryview:
    """``data`` as bytes or a flat unsigned-byte memoryview (no copy)."""
    if isinstance(data, bytes):
        return data
    try:
        mv = memoryview(data)
    except TypeError:
        raise MetadataError(
            f"expected a bytes-like flatbuffer, found {type(data).__name__}"
        ) from None
    if not mv.c_contiguous:
        raise MetadataError("expected a contiguous flatbuffer, found a strided buffer")
    if mv.format != "B" or mv.ndim != 1:
        mv = mv.cast("B")
    return mv


class Reader:
    """A bounds-checked view of one flatbuffer.

    ``base_offset`` is where the flatbuffer starts in the whole input (used in error messages);
    ``max_depth`` limits table nesting and ``max_count`` the total number of elements turned
    into Python objects by the vector readers.
    """

    __slots__ = ("_count", "base_offset", "buf", "max_count", "max_depth", "size")

    def __init__(
        self,
        data: Any,
        *,
        base_offset: int = 0,
        max_depth: int = 64,
        max_count: int = 1_000_000,
    ) -> None:
        self.buf = as_readable(data)
        self.size = len(self.buf)
        self.base_offset = base_offset
        self.max_depth = max_depth
        self.max_count = max_count
        self._count = 0

    def error(self, message: str, pos: int) -> MetadataError:
        """A MetadataError located at ``pos`` inside this flatbuffer."""
        return MetadataError(message, offset=self.base_offset + pos)

    def root(self) -> Table:
        """The root table (the ``uint32`` offset at the start of the buffer)."""
        if self.size < 4:
            raise self.error(f"expected a flatbuffer of at least 4 bytes, found {self.size}", 0)
        return Table(self, _u32(self.buf, 0)[0], 1)

    def count(self, n: int, pos: int) -> None:
        """Account ``n`` more decoded elements; LimitExceeded past ``max_count``."""
        self._count += n
        if self._count > self.max_count:
            raise LimitExceeded(
                f"expected at most {self.max_count} flatbuffer elements, found more "
                f"(raise max_count if the source is trusted)",
                offset=self.base_offset + pos,
            )


class Table:
    """One flatbuffer table: field lookup through its vtable, with defaults for absent fields.

    Fields are addressed by their index in the schema (0-based; a union takes two indices).
    """

    __slots__ = ("buf", "depth", "offsets", "pos", "reader", "tsize")

    def __init__(self, reader: Reader, pos: int, depth: int) -> None:
        if depth > reader.max_depth:
            raise LimitExceeded(
                f"expected flatbuffer tables nested at most {reader.max_depth} deep, "
                f"found deeper nesting",
                offset=reader.base_offset + pos,
            )
        buf = reader.buf
        size = reader.size
        if pos + 4 > size:
            raise reader.error(
                f"expected a table inside the {size}-byte flatbuffer, found offset {pos}", pos
            )
        vt = pos - _i32(buf, pos)[0]
        if vt < 0 or vt + 4 > size:
            raise reader.error(
                f"expected a vtable inside the {size}-byte flatbuffer, found offset {vt}", pos
            )
        vlen, tsize = _u16x2(buf, vt)
        if vlen < 4 or vlen & 1 or vt + vlen > size:
            raise reader.error(
                f"expected a vtable size that is even, >= 4 and inside the buffer, found {vlen}",
                vt,
            )
        if tsize < 4 or pos + tsize > size:
            raise reader.error(
                f"expected a table size >= 4 that fits the buffer, found {tsize}", vt + 2
            )
        n = (vlen - 4) >> 1
        self.offsets = _vt_struct(n).unpack_from(buf, vt + 4) if n else ()
        self.reader = reader
        self.buf = buf
        self.pos = pos
        self.tsize = tsize
        self.depth = depth

    # --- locating fields ------------------------------------------------------------
    def field_pos(self, i: int, width: int) -> int:
        """Absolute position of field ``i`` (``width`` bytes), or 0 when absent."""
        offs = self.offsets
        if i >= len(offs):
            return 0
        o = offs[i]
        if not o:
            return 0
        if o + width > self.tsize:
            raise self.reader.error(
                f"expected field {i} ({width} bytes at {o}) inside the {self.tsize}-byte "
                f"table, found it past the end",
                self.pos,
            )
        return self.pos + o

    def has(self, i: int) -> bool:
        """Whether field ``i`` is present."""
        offs = self.offsets
        return i < len(offs) and offs[i] != 0

    def get(self, i: int, st: struct.Struct, default: Any) -> Any:
        """Scalar field ``i`` read with the struct format ``st``, or ``default``."""
        p = self.field_pos(i, st.size)
        if not p:
            return default
        return st.unpack_from(self.buf, p)[0]

    def ref(self, i: int) -> int:
        """Absolute position that reference field ``i`` points at, or 0 when absent."""
        p = self.field_pos(i, 4)
        if not p:
            return 0
        target = p + _u32(self.buf, p)[0]
        if target + 4 > self.reader.size:
            raise self.reader.error(
                f"expected field {i}'s reference inside the {self.reader.size}-byte "
                f"flatbuffer, found target offset {target}",
                p,
            )
        return target

    # --- nested objects -------------------------------------------------------------
    def table(self, i: int) -> Table | None:
        """Table field ``i``, or None when absent."""
        t = self.ref(i)
        if not t:
            return None
        return Table(self.reader, t, self.depth + 1)

    def struct_pos(self, i: int, size: int) -> int:
        """Position of an inline struct field of ``size`` bytes, or 0 when absent."""
        return self.field_pos(i, size)

    def union(self, type_field: int) -> tuple[int, Table | None]:
        """A union stored as (type code in ``type_field``, table in ``type_field + 1``)."""
        code = self.get(type_field, U8, 0)
        if not code:
            return 0, None
        return code, self.table(type_field + 1)

    def _string_at(self, t: int) -> tuple[int, int]:
        reader = self.reader
        n = _u32(self.buf, t)[0]
        start = t + 4
        if n > reader.size - start:
            raise reader.error(
                f"expected a string of at most {reader.size - start} bytes, found length {n}",
                t,
            )
        return start, start + n

    def bytes(self, i: int) -> bytes | None:
        """String field ``i`` as raw bytes, or None when absent."""
        t = self.ref(i)
        if not t:
            return None
        a, b = self._string_at(t)
        return bytes(self.buf[a:b])

    def string(self, i: int) -> str | None:
        """String field ``i`` decoded as UTF-8, or None when absent."""
        t = self.ref(i)
        if not t:
            return None
        a, b = self._string_at(t)
        try:
            return str(self.buf[a:b], "utf-8")
        except UnicodeDecodeError as exc:
            raise self.reader.error(
                f"expected a UTF-8 string, found invalid byte at {a + exc.start}", a + exc.start
            ) from None

    # --- vectors --------------------------------------------------------------------
    def vector(self, i: int, elem_size: int) -> tuple[int, int] | None:
        """(position of the first element, count) of vector field ``i``, or None."""
        t = self.ref(i)
        if not t:
            return None
        n = _u32(self.buf, t)[0]
        start = t + 4
        room = self.reader.size - start
        if n * elem_size > room:
            raise self.reader.error(
                f"expected a vector of at most {room // elem_size} {elem_size}-byte elements, "
                f"found length {n}",
                t,
            )
        return start, n

    def vector_len(self, i: int) -> int:
        """Element count of vector field ``i`` (0 when absent), bounds unchecked."""
        t = self.ref(i)
        return _u32(self.buf, t)[0] if t else 0

    def scalars(self, i: int, code: str) -> tuple[Any, ...] | None:
        """A vector of scalars as a tuple of Python values (``code`` a struct code like 'q')."""
        size = struct.calcsize("<" + code)
        v = self.vector(i, size)
        if v is None:
            return None
        start, n = v
        self.reader.count(n, start)
        return struct.unpack_from(f"<{n}{code}", self.buf, start)

    def _refs(self, i: int) -> list[int] | None:
        v = self.vector(i, 4)
        if v is None:
            return None
        start, n = v
        self.reader.count(n, start)
        offs = struct.unpack_from(f"<{n}I", self.buf, start)
        size = self.reader.size
        out = []
        for k, o in enumerate(offs):
            p = start + 4 * k
            target = p + o
            if target + 4 > size:
                raise self.reader.error(
                    f"expected vector element {k} to point inside the {size}-byte flatbuffer, "
                    f"found target offset {target}",
                    p,
                )
            out.append(target)
        return out

    def tables(self, i: int) -> list[Table]:
        """Vector-of-tables field ``i`` (empty when absent)."""
        refs = self._refs(i)
        if not refs:
            return []
        reader, depth = self.reader, self.depth + 1
        return [Table(reader, t, depth) for t in refs]

    def strings(self, i: int) -> list[str]:
        """Vector-of-strings field ``i`` decoded as UTF-8 (empty when absent)."""
        refs = self._refs(i)
        if not refs:
            return []
        out = []
        for t in refs:
            a, b = self._string_at(t)
            try:
                out.append(str(self.buf[a:b], "utf-8"))
            except UnicodeDecodeError:
                raise self.reader.error("expected a UTF-8 string, found invalid bytes", a) from None
        return out


# ------------------------------------------------------------------------------------
# building


_SCALAR_CACHE: dict[str, struct.Struct] = {}


def _scalar_struct(fmt: str) -> struct.Struct:
    st = _SCALAR_CACHE.get(fmt)
    if st is None:
        st = _SCALAR_CACHE[fmt] = struct.Struct(fmt)
    return st


def _by_alignment(item: tuple[int, int, int, Any]) -> int:
    return item[0]


_pack_u32 = U32.pack_into
_pack_i32 = I32.pack_into


class Builder:
    """Builds one flatbuffer back to front.

    Objects are written children first; each ``create_*`` / :meth:`table` call returns a handle
    (the object's distance from the end of the buffer) to store in later tables and vectors.
    """

    __slots__ = ("_chunks", "_empty", "_size", "_vtables")

    def __init__(self) -> None:
        self._chunks: list[bytes] = []
        self._size = 0
        self._vtables: dict[bytes, int] = {}
        self._empty = 0  # handle of the shared field-less table, once written

    def _pad(self, align: int, additional: int) -> None:
        """Pad so that after ``additional`` more bytes the size is a multiple of ``align``."""
        pad = -(self._size + additional) % align
        if pad:
            self._chunks.append(b"\0" * pad)
            self._size += pad

    def _push(self, data: bytes) -> int:
        self._chunks.append(data)
        self._size += len(data)
        return self._size

    def create_string(self, value: str | bytes) -> int:
        """Write a string (UTF-8 for str) and return its handle."""
        data = value.encode("utf-8") if isinstance(value, str) else bytes(value)
        n = len(data)
        self._pad(4, n + 1 + 4)
        self._push(data + b"\0")
        return self._push(U32.pack(n))

    def create_raw_vector(self, data: bytes, count: int, align: int) -> int:
        """Write a vector whose ``count`` elements are already encoded in ``data``."""
        self._pad(max(align, 4), len(data))
        if data:
            self._push(data)
        return self._push(U32.pack(count))

    def create_scalar_vector(self, code: str, values: Sequence[Any]) -> int:
        """Write a vector of scalars (``code`` a struct code such as 'q' or 'i')."""
        n = len(values)
        size = struct.calcsize("<" + code)
        return self.create_raw_vector(struct.pack(f"<{n}{code}", *values), n, size)

    def create_struct_vector(self, array: Any, align: int = 8) -> int:
        """Write a vector of structs from a numpy array (one row per struct): one
        ``tobytes()``, which is in C order whatever the array's strides."""
        n = array.shape[0] if array.ndim else 0
        return self.create_raw_vector(array.tobytes(), n, align)

    def create_offset_vector(self, handles: Sequence[int]) -> int:
        """Write a vector of references (to tables or strings) given their handles."""
        n = len(handles)
        self._pad(4, 4 * n)
        # element k ends up at handle (size + 4 * (n - k)); its offset is that minus the target
        end = self._size + 4 * n
        data = struct.pack(f"<{n}I", *[end - 4 * k - h for k, h in enumerate(handles)])
        if data:
            self._push(data)
        return self._push(U32.pack(n))

    def table(self, fields: Sequence[tuple[Any, ...]]) -> int:
        """Write a table and return its handle.

        ``fields`` holds ``(index, kind, value[, default])`` entries; ``kind`` is a struct
        format such as ``"<i"`` (a scalar, skipped when equal to ``default``), ``"offset"``
        (``value`` is a handle, skipped when 0/None) or ``"struct"`` (``value`` is the encoded
        struct bytes, and ``default`` its alignment).  Tables without fields are shared.
        """
        # (alignment, size, index, packed bytes or a handle)
        items: list[tuple[int, int, int, Any]] = []
        for entry in fields:
            kind = entry[1]
            value = entry[2]
            if kind == "offset":
                if value:
                    items.append((4, 4, entry[0], int(value)))
            elif kind == "struct":
                items.append((entry[3] if len(entry) > 3 else 8, len(value), entry[0], value))
            elif len(entry) < 4 or value != entry[3]:
                st = _scalar_struct(kind)
                items.append((st.size, st.size, entry[0], st.pack(value)))
        if not items:
            if self._empty:
                return self._empty
        elif len(items) > 1:
            # widest first so each field is naturally aligned with little padding
            items.sort(key=_by_alignment, reverse=True)
        max_align = 4
        nfields = 0
        cur = 4
        layout = []
        for align, size, index, value in items:
            if align > max_align:
                max_align = align
            if index >= nfields:
                nfields = index + 1
            cur = (cur + align - 1) & -align
            layout.append((cur, size, index, value))
            cur += size
        tsize = (cur + 3) & -4
        self._pad(max_align, tsize)
        start = self._size + tsize  # the table's handle
        body = bytearray(tsize)
        vt_offsets = [0] * nfields
        for pos, size, index, value in layout:
            vt_offsets[index] = pos
            if size == 4 and type(value) is int:  # a reference
                _pack_u32(body, pos, start - pos - value)
            else:
                body[pos : pos + size] = value
        vtable = struct.pack(f"<HH{nfields}H", 4 + 2 * nfields, tsize, *vt_offsets)
        known = self._vtables.get(vtable)
        if known is not None:
            # soffset = table position - vtable position = known - start (vtable further on)
            _pack_i32(body, 0, known - start)
            self._push(bytes(body))
        else:
            _pack_i32(body, 0, len(vtable))
            self._push(bytes(body))
            self._vtables[vtable] = self._push(vtable)
        if not items:
            self._empty = start
        return start

    def finish(self, root: int) -> bytes:
        """Write the root offset and return the whole flatbuffer (a multiple of 8 bytes)."""
        self._pad(8, 4)
        self._push(U32.pack(self._size + 4 - root))
        return b"".join(reversed(self._chunks))


__all__ = [
    "BOOL",
    "F32",
    "F64",
    "I8",
    "I16",
    "I32",
    "I64",
    "U8",
    "U16",
    "U32",
    "U64",
    "Builder",
    "Reader",
    "Table",
    "as_readable",
    "fast_vtable",
    "read_i8",
    "read_i16",
    "read_i32",
    "read_i64",
    "read_u16x2",
    "read_u32",
    "target",
]
