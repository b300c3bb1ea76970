"""Import arrays into quiver through the C data and C stream interfaces (the array layer;
record batches, tables and batch streams are :mod:`quiver.cdata.import_batch`).

Implements the consumer side of CDataInterface.rst ("Importing", "Moving an array",
"Buffer sizes" as given by the Columnar layout), CStreamInterface.rst and the PyCapsule
protocol (PyCapsuleInterface.rst): anything with ``__arrow_c_schema__``,
``__arrow_c_array__`` or ``__arrow_c_stream__`` (pyarrow, polars, duckdb, nanoarrow, ...),
or the raw capsules.

Zero-copy: every imported buffer is a read-only ``numpy.uint8`` view of the producer's
memory, exactly as long as the layout says (``offset + length`` values; variable-size data
up to the last offset; view data from the variadic sizes buffer) and no longer.  The
producer's ``ArrowArray`` is moved into an :class:`_Owner` (our own copy of the struct, the
source's ``release`` set to NULL, as the spec's "move" allows); each buffer's numpy ``base``
is a small object that references the owner, so the producer's release runs exactly once,
when the last quiver buffer over its memory is gone.  Record batches of plain leaf columns
(the flat fast path below) are not moved: their buffers reference the PyCapsule itself,
whose destructor releases the array (the PyCapsule protocol's rule), which spares the
struct copy and a release through ctypes per batch.

>>> import pyarrow as pa
>>> a = import_array(pa.array([1, None, 3]))
>>> a.type, len(a), a.null_count
(DataType(int64), 3, 1)
"""

from __future__ import annotations

import contextlib
import ctypes
from collections.abc import Iterator
from typing import Any, Self

import numpy as np

from .. import types as t
from ..array.base import Array, make_array
from ..array.concat import concat_arrays
from ..array.validate import validate_array
from ..buffers import empty_buffer
from ..errors import ArrowError, ArrowInvalid, ArrowInvalidArgument, NotSupported
from ..hooks import register
from ..layout import layout_of
from ..layout_rules import on_clear, rules_of
from . import capsule as c
from .schema import MAX_DEPTH, export_schema, field_from_capsule, field_from_struct

# --------------------------------------------------------------------------------------
# getting capsules out of objects


def is_capsule_pair(obj: Any) -> bool:
    """Whether ``obj`` is a ``(schema, array)`` pair of PyCapsules (what
    ``__arrow_c_array__`` returns), as opposed to a tuple of values."""
    return (
        isinstance(obj, tuple)
        and len(obj) == 2
        and all(type(x).__name__ == "PyCapsule" for x in obj)
    )


def array_capsules(obj: Any, requested_schema: Any) -> tuple[Any, Any]:
    if is_capsule_pair(obj):
        return obj
    requested = None if requested_schema is None else export_schema(requested_schema)
    return c.protocol_capsules(obj, "__arrow_c_array__", "a (schema, array) capsule pair",
                             requested)


# --------------------------------------------------------------------------------------
# arrays


class _Owner:
    """Our moved copy of a producer's ArrowArray; releases it once, when it dies."""

    __slots__ = ("__weakref__", "struct")

    def __init__(self, struct: c.ArrowArray) -> None:
        self.struct = struct

    def release(self) -> None:
        """Call the producer's release callback (once)."""
        s = self.struct
        if s.release:
            s.release(ctypes.byref(s))

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # never raise from a finalizer
            self.release()


_frombuffer = np.frombuffer
_u8 = np.uint8


def memory_view(address: int, size: int, owner: Any) -> np.ndarray:
    """A read-only ``uint8`` view of the ``size`` bytes at ``address`` whose base holds
    ``owner`` (what keeps that memory alive: an :class:`_Owner` or a capsule).

    The base is a :class:`~quiver.cdata.capsule.AddressSpace` at ``address`` (a ctypes
    object, ~0.6 us cheaper than numpy reading an ``__array_interface__`` dict)."""
    if size < 0:  # (frombuffer would take a negative count as "the whole buffer")
        raise ArrowInvalid(f"expected a buffer size >= 0, found {size}")
    base = c.AddressSpace.from_address(address)
    base.owner = owner
    # through a read-only memoryview: numpy must not let anyone set WRITEABLE again and
    # write into the producer's memory
    return _frombuffer(memoryview(base).toreadonly(), _u8, size)


def move_array(capsule: Any) -> _Owner:
    address = c.capsule_address(capsule, c.ARRAY_CAPSULE)
    source = c.ArrowArray.from_address(address)
    if not source.release:
        raise ArrowInvalid("expected a live ArrowArray, found a released one")
    moved = c.ArrowArray.from_buffer_copy(source)
    source.release = c.ArrayRelease()
    return _Owner(moved)


def _view(address: int | None, size: int, owner: _Owner) -> np.ndarray:
    if size == 0:
        return empty_buffer()
    return memory_view(address, size, owner)  # type: ignore[arg-type]


def _offsets_end(buf: np.ndarray, width: int, end: int, path: str) -> int:
    last = int(buf[end * width : (end + 1) * width].view(f"<i{width}")[0])
    if last < 0:
        raise ArrowInvalid(f"expected a non-negative last offset, found {last}", field_path=path)
    return last


def _child_arrays(table_address: int | None, n: int, path: str) -> list[c.ArrowArray]:
    if n < 0:
        raise ArrowInvalid(f"expected a non-negative n_children, found {n}", field_path=path)
    if not n:
        return []
    if not table_address:
        raise ArrowInvalid(
            f"expected an array children table for {n} children, found NULL", field_path=path
        )
    out = []
    for i, address in enumerate(c.pointer_table(n).from_address(table_address)):
        if not address:
            raise ArrowInvalid(f"expected child {i} to be non-NULL, found NULL", field_path=path)
        out.append(c.ArrowArray.from_address(address))
    return out


# what build_array needs of a type, computed once per type object (keyed by id, the type
# kept in the entry so that the id cannot be reused while it is cached): hashing a
# nested frozen dataclass on every lookup cost more than the lookup saved
_SPECS: dict[int, tuple[Any, ...]] = {}
on_clear(_SPECS.clear)  # they hold the layout's rules


def _spec(dtype: t.DataType) -> tuple[Any, ...]:
    physical = t.storage_of(dtype)
    layout = layout_of(dtype)
    rules = rules_of(layout)
    # each buffer's kind and size rule (quiver.layout_rules: what IPC reading and
    # validate_array check), and the width of the offsets before a data buffer
    buffer_specs = tuple(
        (b.kind, rule, layout.buffers[i - 1].byte_width if b.kind == "data" else 0)
        for i, (b, rule) in enumerate(zip(layout.buffers, rules.sizes))
    )
    legacy_ok = isinstance(physical, (t.UnionType, t.NullType))
    spec = (dtype, physical, layout, layout.num_buffers, buffer_specs, legacy_ok, rules.counts)
    if len(_SPECS) > 4096:
        _SPECS.clear()
    _SPECS[id(dtype)] = spec
    return spec


def build_array(a: c.ArrowArray, dtype: t.DataType, owner: _Owner, path: str, depth: int) -> Array:
    """A quiver Array viewing the C array ``a`` (which ``owner`` keeps alive)."""
    if depth > MAX_DEPTH:
        raise ArrowInvalid(
            f"expected array nesting of at most {MAX_DEPTH} levels, found deeper", field_path=path
        )
    # all ten members in one call (ctypes attribute reads are the slow part here)
    (length, null_count, offset, n_buffers, n_children, buffers_address, children_address,
     dictionary_address, _, _) = c.ARRAY_STRUCT.unpack_from(a)
    spec = _SPECS.get(id(dtype))
    if spec is None or spec[0] is not dtype:
        spec = _spec(dtype)
    _, physical, layout, expected, buffer_specs, legacy_ok, counts = spec
    problem = counts.problem(length, null_count, offset, unknown_ok=True)  # the count rule
    if problem is not None:
        raise ArrowInvalid(problem, field_path=path)
    if layout.variadic:
        ok = n_buffers >= expected + 1
        wanted = f"at least {expected + 1}"
    else:
        ok = n_buffers == expected
        wanted = str(expected)
    # producers older than format V5 give unions and the null type a leading validity
    # buffer (always NULL in practice); it carries nothing, so it is dropped
    legacy = legacy_ok and n_buffers == expected + 1
    if legacy:
        ok = True
    if not ok:
        raise ArrowInvalid(
            f"expected {wanted} buffers for {dtype}, found {n_buffers}", field_path=path
        )
    if n_buffers and not buffers_address:
        raise ArrowInvalid("expected a buffers table, found NULL", field_path=path)
    addresses = list(c.pointer_table(n_buffers).from_address(buffers_address)) if n_buffers else []
    if legacy:
        addresses = addresses[1:]
        n_buffers -= 1
    end = offset + length

    buffers: list[np.ndarray | None] = []
    for i, (kind, rule, width) in enumerate(buffer_specs):
        address = addresses[i]
        if kind == "validity" and not address:  # the common case of no nulls, decided first
            problem = counts.bitmap_problem(null_count, "NULL")
            if problem is not None:
                raise ArrowInvalid(problem, field_path=path)
            buffers.append(None)
            continue
        if kind == "data":  # as long as the last offset says
            offsets = buffers[i - 1]
            size = 0 if offsets is None or not offsets.size else _offsets_end(
                offsets, width, end, path
            )
        else:  # the layout's size rule
            size = rule.need(end)
        if not address:  # (a NULL validity buffer was handled above)
            if size and length:
                raise ArrowInvalid(rule.absent(size, "NULL"), field_path=path)
            # an empty array may leave its buffers NULL; offsets still need a zero entry
            buffers.append(np.zeros(size, dtype=np.uint8) if size else empty_buffer())
            continue
        buffers.append(_view(address, size, owner))

    if layout.variadic:
        n_data = n_buffers - expected - 1
        sizes_address = addresses[-1]
        if n_data and not sizes_address:
            raise ArrowInvalid(
                "expected a variadic buffer sizes buffer, found NULL", field_path=path
            )
        sizes = _view(sizes_address, 8 * n_data, owner).view("<i8") if n_data else ()
        for j in range(n_data):
            size = int(sizes[j])
            if size < 0:
                raise ArrowInvalid(
                    f"expected a non-negative size for variadic buffer {j}, found {size}",
                    field_path=path,
                )
            address = addresses[expected + j]
            if size and not address:
                raise ArrowInvalid(
                    f"expected variadic buffer {j} of {size} bytes, found NULL", field_path=path
                )
            buffers.append(_view(address, size, owner))

    fields = physical.fields
    child_structs = _child_arrays(children_address, n_children, path)
    if len(child_structs) != len(fields):
        raise ArrowInvalid(
            f"expected {len(fields)} child arrays for {dtype}, found {len(child_structs)}",
            field_path=path,
        )
    children = [
        build_array(cs, f.type, owner, f"{path}.{f.name}" if path else f.name, depth + 1)
        for cs, f in zip(child_structs, fields)
    ]
    dictionary = None
    if isinstance(physical, t.DictionaryType):
        if not dictionary_address:
            raise ArrowInvalid(
                "expected a dictionary array for a dictionary type, found NULL", field_path=path
            )
        dictionary = build_array(
            c.ArrowArray.from_address(dictionary_address), physical.value_type, owner, path,
            depth + 1,
        )
    if isinstance(physical, t.NullType):
        null_count = length
    return make_array(dtype, length, buffers, children, null_count, offset, dictionary)


VALIDATE_LEVELS = ("none", "minimal", "full")


def _validated(array: Array, validate: str) -> Array:
    """Run quiver's validation at ``validate`` level: none (trust the producer, like
    pyarrow), minimal (structure and buffer sizes) or full (every value)."""
    if validate == "none":
        return array
    if validate not in VALIDATE_LEVELS:
        raise ArrowInvalidArgument(
            f"expected validate to be one of {VALIDATE_LEVELS}, found {validate!r}"
        )
    validate_array(array, full=validate == "full")
    return array


def import_array_field(
    capsules: tuple[Any, Any], validate: str = "none"
) -> tuple[t.Field, Array]:
    schema_capsule, array_capsule = capsules
    field = field_from_capsule(schema_capsule)
    owner = move_array(array_capsule)
    return field, _validated(build_array(owner.struct, field.type, owner, "", 0), validate)


def concat(chunks: list[Array], dtype: t.DataType) -> Array:
    if len(chunks) == 1:
        return chunks[0]
    if not chunks:
        raise NotSupported(
            f"expected at least one chunk to build a {dtype} array, found none; "
            "use import_stream to read an empty stream"
        )
    return concat_arrays(chunks)


def import_array(obj: Any, requested_schema: Any = None, *, validate: str = "none") -> Array:
    """A zero-copy quiver Array from ``__arrow_c_array__`` (or a capsule pair).

    ``requested_schema`` (a quiver type, field or schema) is passed to the producer.
    ``validate`` is ``"none"`` (default: trust the producer, as pyarrow does),
    ``"minimal"`` (structure and buffer sizes) or ``"full"`` (every value).  Objects that
    only speak ``__arrow_c_stream__`` (a polars Series, a chunked array) are read whole:
    one chunk stays zero-copy, several are concatenated.

    >>> import pyarrow as pa
    >>> import_array(pa.array(["a", "bc"])).type
    DataType(string)
    """
    if not hasattr(obj, "__arrow_c_array__") and hasattr(obj, "__arrow_c_stream__"):
        with ArrayStreamReader(stream_capsule(obj, requested_schema), validate=validate) as reader:
            return reader.read_all()
    return import_array_field(array_capsules(obj, requested_schema), validate)[1]


# --------------------------------------------------------------------------------------
# streams of arrays


class ArrayStreamReader:
    """Arrays pulled lazily from an imported ``ArrowArrayStream`` (struct arrays for a
    stream of record batches).

    Iterate it (each ``get_next`` happens on demand), or :meth:`read_all`.  The producer's
    stream is released at the end of the stream, on :meth:`close`, or when this object dies.
    :class:`quiver.cdata.import_batch.ArrowStreamReader` builds record batches on it.
    """

    def __init__(self, capsule: Any, *, validate: str = "none") -> None:
        self._validate = validate
        address = c.capsule_address(capsule, c.STREAM_CAPSULE)
        source = c.ArrowArrayStream.from_address(address)
        if not source.release:
            raise ArrowInvalid("expected a live ArrowArrayStream, found a released one")
        self._stream: c.ArrowArrayStream | None = c.ArrowArrayStream.from_buffer_copy(source)
        source.release = c.StreamRelease()
        try:
            out = c.ArrowSchema()
            self._check(self._stream.get_schema(ctypes.byref(self._stream), ctypes.byref(out)))
            self._field = field_from_struct(out)
        except BaseException:
            self.close()
            raise

    def _check(self, rc: int) -> None:
        if rc == 0:
            return
        message = ""
        st = self._stream
        if st is not None and st.get_last_error:
            raw = st.get_last_error(ctypes.byref(st))
            message = c.c_string(raw).decode("utf-8", "replace") if raw else ""
        raise ArrowError(
            f"expected the stream producer to succeed, found error code {rc}"
            + (f": {message}" if message else "")
        )

    def read_next_array(self) -> Array:
        """The next array; ``StopIteration`` at the end of the stream."""
        st = self._stream
        if st is None:
            raise StopIteration
        out = c.ArrowArray()
        try:
            self._check(st.get_next(ctypes.byref(st), ctypes.byref(out)))
        except BaseException:
            self.close()
            raise
        if not out.release:
            self.close()
            raise StopIteration
        owner = _Owner(out)
        return _validated(build_array(out, self._field.type, owner, "", 0), self._validate)

    @property
    def field(self) -> t.Field:
        """The stream's field (a struct field for record batch streams)."""
        return self._field

    def __iter__(self) -> Iterator[Any]:
        return self

    def __next__(self) -> Any:
        return self.read_next_array()

    def read_all(self) -> Any:
        """Every remaining array as one Array (chunks concatenated)."""
        return concat(list(self), self._field.type)

    def close(self) -> None:
        """Release the producer's stream (idempotent)."""
        st, self._stream = self._stream, None
        if st is not None and st.release:
            st.release(ctypes.byref(st))

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # never raise from a finalizer
            self.close()


def stream_capsule(obj: Any, requested_schema: Any = None) -> Any:
    """The ``arrow_array_stream`` PyCapsule of ``obj`` (``__arrow_c_stream__``, asked for
    ``requested_schema`` when given), or ``obj`` itself when it is one."""
    if type(obj).__name__ == "PyCapsule":
        return obj
    requested = None if requested_schema is None else export_schema(requested_schema)
    return c.protocol_capsules(obj, "__arrow_c_stream__", "an arrow_array_stream capsule",
                             requested)


# the hooks this module answers for the layers below (quiver.hooks)
register("cdata.import_array", import_array)
