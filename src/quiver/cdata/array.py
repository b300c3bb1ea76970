"""Arrays through the C data interface, at the array layer: an Array's buffers as an
``ArrowArray`` struct, zero-copy, and the ``requested_schema`` rule of the PyCapsule
protocol.  :meth:`quiver.array.base.Array.__arrow_c_array__` calls it.

Spec: CDataInterface.rst ("The ArrowArray structure", "Exporting", "Memory management"),
PyCapsuleInterface.rst ("Schema Requests").

Buffers are never copied: each exported buffer pointer is the address of quiver's own numpy
buffer, and the array itself stays alive, kept with the struct, until the consumer
releases.  This module sees arrays only through their attributes (``type``, ``buffers``,
``children``, ``dictionary``, ``offset``, ``len``), so it does not import the Array class.

>>> import pyarrow as pa, quiver as qv
>>> schema_capsule, array_capsule = export_array(qv.array([0, 1, 2]))
>>> pa.Array._import_from_c_capsule(schema_capsule, array_capsule).to_pylist()
[0, 1, 2]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import types as t
from ..errors import NotSupported
from ..hooks import register
from ..layout import layout_of
from . import capsule as c
from .schema import peek_field

# non-NULL stand-in for empty or absent non-validity buffers: a consumer may read one
# offset (or one view) of an empty array, so it is zeroed and wide enough for that
_ZEROS = np.zeros(64, dtype=np.uint8)
_ZEROS_ADDRESS = _ZEROS.__array_interface__["data"][0]


def _buffer_address(buf: np.ndarray | None, validity: bool) -> int | None:
    if buf is None or buf.size == 0:
        return None if validity else _ZEROS_ADDRESS
    return buf.__array_interface__["data"][0]


def fill_array(a: c.ArrowArray, arr: Any) -> None:
    """Fill the struct ``a`` (owned by the caller) so that it views ``arr``'s buffers."""
    dtype = arr.type
    physical = t.storage_of(dtype)
    # a strided buffer (a step-sliced numpy view) has no single C pointer: copy it
    buffers = [
        b if b is None or b.flags.c_contiguous else np.ascontiguousarray(b) for b in arr.buffers
    ]
    # an absent trailing buffer (e.g. a struct built with no validity entry) is NULL
    wanted = layout_of(dtype).num_buffers
    if len(buffers) < wanted:
        buffers += [None] * (wanted - len(buffers))
    validity_first = bool(buffers) and not isinstance(physical, (t.UnionType, t.NullType))
    addresses = [
        _buffer_address(b, validity_first and i == 0) for i, b in enumerate(buffers)
    ]
    keep_extra: Any = None
    if isinstance(physical, (t.BinaryViewType, t.StringViewType)):
        # the C data interface appends the variadic buffer sizes as one more int64 buffer
        sizes = np.array([0 if b is None else b.size for b in buffers[2:]], dtype=np.int64)
        keep_extra = sizes
        addresses.append(sizes.__array_interface__["data"][0] if sizes.size else _ZEROS_ADDRESS)
    if isinstance(physical, t.NullType):
        addresses = []

    children = [c.ArrowArray() for _ in arr.children]
    for child, sub in zip(children, arr.children):
        fill_array(child, sub)
    dictionary = None
    if arr.dictionary is not None:
        dictionary = c.ArrowArray()
        fill_array(dictionary, arr.dictionary)

    # a known null_count is passed on; an unknown one stays -1 (the consumer counts),
    # except where it is fixed: no validity bitmap means 0 (some consumers, e.g. polars,
    # require 0 with a NULL bitmap), the null type is all nulls
    null_count = getattr(arr, "_null_count", -1)
    if isinstance(physical, t.NullType):
        null_count = len(arr)
    elif not validity_first or buffers[0] is None:
        null_count = 0
    c.fill_array(
        a,
        len(arr),
        null_count if isinstance(null_count, int) and null_count >= 0 else -1,
        # an empty slice exports offset 0: some consumers size imported buffers from the
        # length alone and then slice past them by the offset (pyarrow's IPC writer does)
        arr.offset if len(arr) else 0,
        addresses,
        children,
        dictionary,
        # the quiver array itself holds every buffer alive until release
        (arr, keep_extra, buffers),
    )


def _shape(dtype: t.DataType) -> Any:
    """The names and nesting of a type, without the physical representations."""
    return tuple((f.name, _shape(f.type)) for f in dtype.fields)


def check_requested(ours: t.Schema | t.DataType, requested_schema: Any) -> None:
    """Apply the PyCapsule "Schema Requests" rule.

    quiver does not cast on export.  An equal request is honoured; one that asks for another
    representation of the same data (same field names and nesting, other types, e.g.
    ``string_view`` for ``string``) is answered, as the spec allows, with the data's own
    schema (the consumer checks what it got); one with other fields is incompatible and
    raises :class:`NotSupported`.
    """
    if requested_schema is None:
        return
    requested = peek_field(requested_schema).type
    our_type = t.struct(ours.fields) if isinstance(ours, t.Schema) else ours
    if requested.equals(our_type) or _shape(requested) == _shape(our_type):
        return
    raise NotSupported(
        f"expected a requested_schema with the data's fields ({our_type}), found "
        f"{requested}; quiver does not transform schemas on export: select or cast first"
    )


def export_array(arr: Any, requested_schema: Any = None) -> tuple[Any, Any]:
    """``(arrow_schema, arrow_array)`` PyCapsules for a quiver Array, zero-copy."""
    if requested_schema is not None:
        check_requested(arr.type, requested_schema)
    schema_capsule = arr.type.__arrow_c_schema__()
    a = c.ArrowArray()
    fill_array(a, arr)
    return schema_capsule, c.new_capsule(a, c.ARRAY_CAPSULE)


# the hooks this module answers for the layers below (quiver.hooks)
register("cdata.export_array", export_array)
