"""Import Arrow data into quiver through the C data and C stream interfaces.

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
import struct
from collections.abc import Iterator
from typing import Any

import numpy as np

from .. import types as t
from ..array.base import _ARRAY_CLASSES, Array, make_array
from ..array.concat import concat_arrays
from ..array.validate import validate_array
from ..batch import RecordBatch, Table
from ..buffers import empty_buffer
from ..cdata import capsule as c
from ..cdata.schema import (  # noqa: F401 - schema import lives at the types layer
    _FIELD_CACHE,
    MAX_DEPTH,
    _field_from_capsule,
    _field_from_struct,
    _schema_capsule,
    _schema_of,
    export_schema,
    import_field,
    import_schema,
    import_type,
    peek_field,
)
from ..cdata.stream import export_stream
from ..errors import ArrowError, ArrowInvalid, ArrowInvalidArgument, ArrowTypeError, NotSupported
from ..layout import layout_of

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


def _array_capsules(obj: Any, requested_schema: Any) -> tuple[Any, Any]:
    if is_capsule_pair(obj):
        return obj
    method = getattr(obj, "__arrow_c_array__", None)
    if method is None:
        raise ArrowTypeError(
            f"expected an object with __arrow_c_array__ or a (schema, array) capsule pair, "
            f"found {type(obj).__name__}"
        )
    if requested_schema is not None:
        return method(requested_schema=export_schema(requested_schema))
    return method()


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


class _Memory:
    """The numpy ``base`` of one imported buffer: producer memory plus a ref to its owner."""

    __slots__ = ("__array_interface__", "owner")

    def __init__(self, address: int, size: int, owner: _Owner) -> None:
        self.owner = owner
        self.__array_interface__ = {
            "data": (address, True),
            "shape": (size,),
            "typestr": "|u1",
            "version": 3,
        }


def _move_array(capsule: Any) -> _Owner:
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
    return np.asarray(_Memory(address, size, owner))  # type: ignore[arg-type]


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


# what _build needs of a type, computed once per type object (keyed by id, the type
# kept in the entry so that the id cannot be reused while it is cached): hashing a
# nested frozen dataclass on every lookup cost more than the lookup saved
_SPECS: dict[int, tuple[Any, ...]] = {}


def _spec(dtype: t.DataType) -> tuple[Any, ...]:
    physical = t.storage_of(dtype)
    layout = layout_of(dtype)
    plus_one = 0 if layout.children in ("views", "dense") else 1
    buffer_specs = tuple((b.kind, b.byte_width, plus_one) for b in layout.buffers)
    legacy_ok = isinstance(physical, (t.UnionType, t.NullType))
    spec = (dtype, physical, layout, layout.num_buffers, buffer_specs, legacy_ok)
    if len(_SPECS) > 4096:
        _SPECS.clear()
    _SPECS[id(dtype)] = spec
    return spec


def _build(a: c.ArrowArray, dtype: t.DataType, owner: _Owner, path: str, depth: int) -> Array:
    """A quiver Array viewing the C array ``a`` (which ``owner`` keeps alive)."""
    if depth > MAX_DEPTH:
        raise ArrowInvalid(
            f"expected array nesting of at most {MAX_DEPTH} levels, found deeper", field_path=path
        )
    # all ten members in one call (ctypes attribute reads are the slow part here)
    (length, null_count, offset, n_buffers, n_children, buffers_address, children_address,
     dictionary_address, _, _) = c.ARRAY_STRUCT.unpack_from(a)
    if length < 0 or offset < 0:
        raise ArrowInvalid(
            f"expected non-negative length and offset, found length {length}, offset {offset}",
            field_path=path,
        )
    spec = _SPECS.get(id(dtype))
    if spec is None or spec[0] is not dtype:
        spec = _spec(dtype)
    _, physical, layout, expected, buffer_specs, legacy_ok = spec
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
    for i, (kind, byte_width, plus_one) in enumerate(buffer_specs):
        address = addresses[i]
        if kind == "validity":
            if not address:  # the common case of no nulls, decided first
                if null_count > 0:
                    raise ArrowInvalid(
                        f"expected a validity buffer for null_count {null_count}, found NULL",
                        field_path=path,
                    )
                buffers.append(None)
                continue
            size = (end + 7) >> 3
        elif kind == "bits":
            size = (end + 7) >> 3
        elif kind == "offsets":
            # list and binary offsets have length + 1 entries; list-view and dense-union
            # offsets have one per slot
            size = (end + plus_one) * byte_width
        elif kind == "data":
            offsets = buffers[i - 1]
            size = 0 if offsets is None or not offsets.size else _offsets_end(
                offsets, buffer_specs[i - 1][1], end, path
            )
        elif kind == "type_ids":
            size = end
        else:  # values, sizes, views
            size = end * byte_width
        if not address:
            if kind == "validity":
                if null_count > 0:
                    raise ArrowInvalid(
                        f"expected a validity buffer for null_count {null_count}, found NULL",
                        field_path=path,
                    )
                buffers.append(None)
                continue
            if size and length:
                raise ArrowInvalid(
                    f"expected a non-NULL {kind} buffer of {size} bytes, found NULL",
                    field_path=path,
                )
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
        _build(cs, f.type, owner, f"{path}.{f.name}" if path else f.name, depth + 1)
        for cs, f in zip(child_structs, fields)
    ]
    dictionary = None
    if isinstance(physical, t.DictionaryType):
        if not dictionary_address:
            raise ArrowInvalid(
                "expected a dictionary array for a dictionary type, found NULL", field_path=path
            )
        dictionary = _build(
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


def _import_array_field(
    capsules: tuple[Any, Any], validate: str = "none"
) -> tuple[t.Field, Array]:
    schema_capsule, array_capsule = capsules
    field = _field_from_capsule(schema_capsule)
    owner = _move_array(array_capsule)
    return field, _validated(_build(owner.struct, field.type, owner, "", 0), validate)


def _concat(chunks: list[Array], dtype: t.DataType) -> Array:
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
        with import_stream(obj, requested_schema, arrays=True, validate=validate) as reader:
            return reader.read_all()
    return _import_array_field(_array_capsules(obj, requested_schema), validate)[1]


def _batch_from_struct(field: t.Field, array: Array) -> Any:
    schema = _schema_of(field)
    if array.null_count:
        raise ArrowInvalid(
            f"expected a record batch struct without nulls, found {array.null_count} nulls"
        )
    n = len(array)
    columns = [
        col if array.offset == 0 and len(col) == n else col.slice(array.offset, n)
        for col in array.children
    ]
    return new_record_batch(schema, columns, n)


def new_record_batch(schema: t.Schema, columns: list[Array], num_rows: int) -> Any:
    """A quiver RecordBatch of ``columns`` (checked against ``schema``)."""
    return RecordBatch(schema, columns, num_rows)


class BatchImporter:
    """Imports batch after batch from one producer (a writer's pyarrow batches): the
    schema is parsed once and reused while the producer's own ``schema`` object compares
    equal (its ``==``: a C++ comparison for pyarrow, far cheaper than reading the C
    schema back), otherwise parsed again.  Each batch is zero-copy, as
    :func:`import_batch`.
    """

    __slots__ = ("_field", "_leaves", "_schema", "_schema_obj", "_target")

    def __init__(self, target: t.Schema | None = None) -> None:
        self._target = target  # a writer's schema: batches equal to it get this object
        self._schema_obj: Any = None
        self._field: t.Field | None = None
        self._schema: t.Schema | None = None
        self._leaves: list[tuple[Any, ...]] | None = None

    def __call__(self, obj: Any) -> Any:
        """A quiver RecordBatch viewing ``obj`` (any struct ``__arrow_c_array__``)."""
        schema_obj = getattr(obj, "schema", None)
        capsules = _array_capsules(obj, None)
        field, schema = self._field, self._schema
        if field is None or schema_obj is None or not _same(schema_obj, self._schema_obj):
            field = _field_from_capsule(capsules[0])
            schema = _schema_of(field)
            if self._target is not None and schema.equals(self._target):
                schema = self._target
            self._field, self._schema, self._schema_obj = field, schema, schema_obj
            self._leaves = _leaf_plan(schema)
        if self._leaves is not None:
            # the views keep the capsule alive, whose destructor releases the array
            capsule = capsules[1]
            address = c.capsule_address(capsule, c.ARRAY_CAPSULE)
            fast = _import_leaves(capsule, address, self._leaves, schema)  # type: ignore[arg-type]
            if fast is not None:
                return fast
        owner = _move_array(capsules[1])
        array = _build(owner.struct, field.type, owner, "", 0)
        if array.null_count:
            raise ArrowInvalid(
                f"expected a record batch struct without nulls, found {array.null_count} nulls"
            )
        n = len(array)
        columns = [
            col if array.offset == 0 and len(col) == n else col.slice(array.offset, n)
            for col in array.children
        ]
        return new_record_batch(schema, columns, n)  # type: ignore[arg-type]


# -- the flat fast path: a batch whose columns are all plain leaves ---------------------
# (fixed width, boolean, binary and string with 32/64-bit offsets: what Spark hands over).
# Each column's C struct and buffer table are read in one call each, and every buffer is
# a slice of one view spanning the batch's buffers (a view per buffer cost ~1.3 us, the
# largest part of an import); that view is never read outside the slices.  Anything out
# of the ordinary returns None and the general walk (_build) imports the batch instead,
# errors included.

_WINDOW_MAX = 1 << 30  # the widest span one view covers
_WINDOW_GAP = 1 << 20  # buffers further apart than this get views of their own
_LEAF_KINDS = {("validity", "values"), ("validity", "bits"), ("validity", "offsets", "data")}


def _windows(spans: list[tuple[int, int]], owner: _Owner) -> dict[int, tuple[int, np.ndarray]]:
    """For each buffer start, (window start, window view): buffers lying near each other
    (gaps below _WINDOW_GAP, a window at most _WINDOW_MAX) share one view."""
    out: dict[int, tuple[int, np.ndarray]] = {}
    group: list[int] = []
    lo = hi = 0
    for start, stop in sorted(spans):
        if group and (start - hi > _WINDOW_GAP or stop - lo > _WINDOW_MAX):
            entry = (lo, np.asarray(_Memory(lo, hi - lo, owner)))  # type: ignore[arg-type]
            for address in group:
                out[address] = entry
            group = []
        if not group:
            lo = hi = start
        group.append(start)
        if stop > hi:
            hi = stop
    if group:
        entry = (lo, np.asarray(_Memory(lo, hi - lo, owner)))  # type: ignore[arg-type]
        for address in group:
            out[address] = entry
    return out


def _leaf_plan(schema: t.Schema) -> list[tuple[Any, ...]] | None:
    """Per column (type, kind, width, buffer table reader, Array class), or None when a
    column is not a plain leaf.  kind: 0 fixed width values, 1 bits, 2 offsets and data
    (width is the value or offset width)."""
    plan = []
    for f in schema.fields:
        lay = layout_of(f.type)
        kinds = tuple(b.kind for b in lay.buffers)
        physical = t.storage_of(f.type)
        if kinds not in _LEAF_KINDS or lay.variadic or physical.fields or isinstance(
            physical, t.DictionaryType
        ):
            return None
        kind = {"values": 0, "bits": 1, "offsets": 2}[kinds[1]]
        width = lay.buffers[1].byte_width
        table = struct.Struct(f"{len(kinds)}P")
        plan.append((f.type, kind, width, table, _ARRAY_CLASSES.get(f.type.__class__, Array)))
    return plan


def _import_leaves(owner: Any, address: int, plan: list[tuple[Any, ...]],
                   schema: t.Schema) -> Any:
    """The batch at ``address`` (an ArrowArray struct, left unreleased and unmoved) as a
    RecordBatch whose buffer views keep ``owner`` (the capsule holding it, or an
    :class:`_Owner`) alive, or None when it is not a batch of plain leaf columns."""
    # the per-batch cost of a writer fed pyarrow batches: one C read per struct (one for
    # all the children when they lie side by side, as pyarrow's do), buffer table and
    # last offset, plain locals, and one numpy view per window of buffers
    string_at = ctypes.string_at
    size = c.ARRAY_STRUCT.size
    (length, null_count, offset, _n_buffers, n_children, _buffers, children_address,
     dictionary, release, _) = c.ARRAY_STRUCT.unpack(string_at(address, size))
    if (null_count not in (0, -1) or length < 0 or offset < 0 or dictionary or not release
            or n_children != len(plan) or not plan or not children_address):
        return None
    pointers = struct.unpack(f"{n_children}P", string_at(children_address, 8 * n_children))
    first = pointers[0]
    if first and pointers == tuple(range(first, first + size * n_children, size)):
        structs = list(c.ARRAY_STRUCT.iter_unpack(string_at(first, size * n_children)))
    else:
        if not all(pointers):
            return None
        structs = [c.ARRAY_STRUCT.unpack(string_at(p, size)) for p in pointers]
    pieces: list[tuple[Any, ...]] = []
    spans: list[tuple[int, int]] = []
    end_of_batch = offset + length
    for child, (dtype, kind, width, table, cls) in zip(structs, plan):
        (n, nulls, off, n_buf, n_kids, buffers_address, _, dict_address, release, _) = child
        if (not release or n_buf * 8 != table.size or n_kids or dict_address
                or n < end_of_batch or off < 0 or not buffers_address):
            return None
        addresses = table.unpack(string_at(buffers_address, table.size))
        end = off + n
        validity = addresses[0]
        if validity:
            vbytes = (end + 7) >> 3
            spans.append((validity, validity + vbytes))
        elif nulls == 0 or not n:
            vbytes = 0
        else:
            return None
        if kind == 0:
            sizes = (vbytes, end * width)
        elif kind == 1:
            sizes = (vbytes, (end + 7) >> 3)
        else:
            (last,) = struct.unpack("<q" if width == 8 else "<i",
                                    string_at(addresses[1] + end * width, width))
            if last < 0:
                return None
            sizes = (vbytes, (end + 1) * width, last)
        for buf_address, nbytes in zip(addresses[1:], sizes[1:]):
            if buf_address and nbytes:
                spans.append((buf_address, buf_address + nbytes))
            elif nbytes and n:
                return None
        pieces.append((cls, dtype, n, nulls, off, addresses, sizes))
    # buffers lying near each other (gaps below _WINDOW_GAP, a window at most
    # _WINDOW_MAX) share one view.  When all the gaps together are below _WINDOW_GAP (a
    # batch whose buffers sit in one body or one arena) that is a single view, found
    # without sorting; otherwise _windows groups them
    empty = empty_buffer()
    columns = []
    if spans:
        lo = min([start for start, _ in spans])
        hi = max([stop for _, stop in spans])
        total = sum([stop - start for start, stop in spans])
    if spans and hi - lo <= _WINDOW_MAX and hi - lo - total <= _WINDOW_GAP:
        window = np.asarray(_Memory(lo, hi - lo, owner))  # type: ignore[arg-type]
        for cls, dtype, n, nulls, off, addresses, sizes in pieces:
            bufs: list[np.ndarray | None] = [
                (window[address - lo : address - lo + nbytes] if address and nbytes
                 else empty) for address, nbytes in zip(addresses, sizes)
            ]
            if not sizes[0]:
                bufs[0] = None
            col = cls(dtype, n, bufs, (), nulls, off, None)
            columns.append(col if not offset and n == length else col.slice(offset, length))
    else:
        windows = _windows(spans, owner)
        for cls, dtype, n, nulls, off, addresses, sizes in pieces:
            bufs = []
            for i, (buf_address, nbytes) in enumerate(zip(addresses, sizes)):
                if not buf_address or not nbytes:
                    bufs.append(None if i == 0 else empty)
                else:
                    start, view = windows[buf_address]
                    bufs.append(view[buf_address - start : buf_address - start + nbytes])
            col = cls(dtype, n, bufs, (), nulls, off, None)
            columns.append(col if not offset and n == length else col.slice(offset, length))
    # the columns were built with the schema's own types and checked to the batch length
    return RecordBatch._trusted(schema, columns, length)


def _same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return False
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:  # a producer whose schemas do not compare: parse every time
        return False


def import_batch(obj: Any, requested_schema: Any = None, *, validate: str = "none") -> Any:
    """A zero-copy quiver RecordBatch from a struct-typed ``__arrow_c_array__``.

    A source with only ``__arrow_c_stream__`` (a table) becomes one batch: zero-copy when
    it has one chunk, concatenated otherwise.

    >>> import pyarrow as pa
    >>> import_batch(pa.record_batch({"a": [1, 2]})).num_rows
    2
    """
    if not hasattr(obj, "__arrow_c_array__") and hasattr(obj, "__arrow_c_stream__"):
        # a table-like source (a polars DataFrame, a pyarrow Table): one batch of it all
        with import_stream(obj, requested_schema, arrays=True, validate=validate) as reader:
            field = reader.field
            array = _concat(list(reader), field.type)
        return _batch_from_struct(field, array)
    capsules = _array_capsules(obj, requested_schema)
    if validate == "none":
        # batches of plain leaf columns take the flat fast path (as BatchImporter)
        field = _field_from_capsule(capsules[0])
        schema, plan = _leaf_plan_of(field)
        if plan is not None:
            capsule = capsules[1]
            address = c.capsule_address(capsule, c.ARRAY_CAPSULE)
            fast = _import_leaves(capsule, address, plan, schema)
            if fast is not None:
                return fast
        owner = _move_array(capsules[1])
        return _batch_from_struct(field, _build(owner.struct, field.type, owner, "", 0))
    field, array = _import_array_field(capsules, validate)
    return _batch_from_struct(field, array)


# the schema and leaf plan of each imported record batch field (the field objects come
# from the digest cache, so a producer's batches share one entry; keyed by id with the
# field kept in the entry so that the id is not reused while cached)
_LEAF_PLANS: dict[int, tuple[t.Field, t.Schema, Any]] = {}


def _leaf_plan_of(field: t.Field) -> tuple[t.Schema, list[tuple[Any, ...]] | None]:
    entry = _LEAF_PLANS.get(id(field))
    if entry is None or entry[0] is not field:
        schema = _schema_of(field) if isinstance(field.type, t.StructType) else None
        plan = _leaf_plan(schema) if schema is not None else None
        if len(_LEAF_PLANS) > 256:
            _LEAF_PLANS.clear()
        entry = _LEAF_PLANS[id(field)] = (field, schema, plan)  # type: ignore[assignment]
    return entry[1], entry[2]


# --------------------------------------------------------------------------------------
# streams


class ArrowStreamReader:
    """Record batches (or arrays) pulled lazily from an imported ``ArrowArrayStream``.

    Iterate it (each ``get_next`` happens on demand), or :meth:`read_all`. The producer's
    stream is released at the end of the stream, on :meth:`close`, or when this object dies.
    It speaks ``__arrow_c_stream__`` itself, so it can be passed on without reading it.
    """

    def __init__(self, capsule: Any, *, arrays: bool = False, validate: str = "none") -> None:
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
            self._field = _field_from_struct(out)
            is_struct = isinstance(self._field.type, t.StructType)
            # a stream of a non-struct type (a polars Series, a chunked array) or one
            # opened with arrays=True yields Arrays; otherwise record batches
            self._arrays = arrays or not is_struct
            self.schema: t.Schema | None = _schema_of(self._field) if is_struct else None
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

    def read_next_batch(self) -> Any:
        """The next batch; ``StopIteration`` at the end of the stream."""
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
        array = _build(out, self._field.type, owner, "", 0)
        array = _validated(array, self._validate)
        return array if self._arrays else _batch_from_struct(self._field, array)

    @property
    def field(self) -> t.Field:
        """The stream's field (a struct field for record batch streams)."""
        return self._field

    def __iter__(self) -> Iterator[Any]:
        return self

    def __next__(self) -> Any:
        return self.read_next_batch()

    def read_all(self) -> Any:
        """Every remaining batch, as a quiver Table.

        A stream of arrays gives one Array (chunks concatenated).
        """
        batches = list(self)
        if self._arrays:
            return _concat(batches, self._field.type)
        return Table.from_batches(batches, schema=self.schema)

    def close(self) -> None:
        """Release the producer's stream (idempotent)."""
        st, self._stream = self._stream, None
        if st is not None and st.release:
            st.release(ctypes.byref(st))

    def __enter__(self) -> ArrowStreamReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # never raise from a finalizer
            self.close()

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return export_stream(
            self, requested_schema, schema=self._field.type if self._arrays else self.schema
        )


def import_stream(
    obj: Any, requested_schema: Any = None, *, arrays: bool = False, validate: str = "none"
) -> ArrowStreamReader:
    """A lazy :class:`ArrowStreamReader` over ``__arrow_c_stream__`` (or a stream capsule).

    With ``arrays=True`` it yields Arrays (struct arrays for record batch streams);
    ``validate`` checks each one as in :func:`import_array`.

    >>> import pyarrow as pa
    >>> t_ = pa.table({"a": [1, 2, 3]})
    >>> [b.num_rows for b in import_stream(t_)]
    [3]
    """
    if type(obj).__name__ == "PyCapsule":
        return ArrowStreamReader(obj, arrays=arrays, validate=validate)
    method = getattr(obj, "__arrow_c_stream__", None)
    if method is None:
        raise ArrowTypeError(
            f"expected an object with __arrow_c_stream__ or an arrow_array_stream capsule, "
            f"found {type(obj).__name__}"
        )
    if requested_schema is not None:
        capsule = method(requested_schema=export_schema(requested_schema))
    else:
        capsule = method()
    return ArrowStreamReader(capsule, arrays=arrays, validate=validate)


def import_table(obj: Any, requested_schema: Any = None, *, validate: str = "none") -> Any:
    """A quiver Table from ``__arrow_c_stream__`` (or a struct ``__arrow_c_array__``).

    Batches stay zero-copy views of the producer's memory.

    >>> import pyarrow as pa
    >>> import_table(pa.table({"a": [1, 2], "b": ["x", "y"]})).num_rows
    2
    """
    if not hasattr(obj, "__arrow_c_stream__") and hasattr(obj, "__arrow_c_array__"):
        batch = import_batch(obj, requested_schema, validate=validate)
        return Table.from_batches([batch], schema=batch.schema)
    with import_stream(obj, requested_schema, validate=validate) as reader:
        if reader.schema is None:
            raise ArrowTypeError(
                f"expected a stream of record batches (a struct type), found {reader.field.type}"
            )
        return reader.read_all()
