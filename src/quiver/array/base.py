"""The core array object shared by every layout family (Columnar spec, "Array").

An :class:`Array` is a type, a logical ``length``, an ``offset`` into its buffers, a
``null_count`` (computed lazily when unknown), the buffers of its layout (see
:mod:`quiver.layout`; absent buffers are ``None``), its child arrays, and for dictionary
arrays the ``dictionary``.  Buffers are 1-D ``numpy.uint8`` arrays (see
:mod:`quiver.buffers`).

Children are *not* sliced with their parent: like Arrow C++ and the C data interface, the
parent's ``offset`` applies to its own buffers and the children keep theirs (struct and
fixed-size-list children are addressed at ``offset`` + i).

Family subclasses (primitive, binary, list, struct, union, ...) register themselves with
:func:`register_array_class`; :func:`make_array` picks the right one.  The IPC reader, the
C data importer and the JSON loader build arrays only through :func:`make_array`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import registry
from .. import types as t
from ..buffers import as_buffer
from ..errors import (
    ArrowError,
    ArrowIndexError,
    ArrowInvalid,
    ArrowInvalidArgument,
    ArrowTypeError,
    NotSupported,
)
from ..hooks import Hook
from ..layout import kept_per_type, layout_of, logical_numpy_dtype, storage_numpy_dtype
from .data import ArrayData, slice_bounds, typed_view
from .equal import array_equals
from .validate import validate_array

__all__ = [
    "Array",
    "OffsetArray",
    "array_class_for",
    "item_position",
    "make_array",
    "register_array_class",
    "slice_bounds",
    "step_one_slice",
    "typed_view",
    "unchecked_new_source",
]

# the registry's "array_class" piece: DataType class -> Array subclass
_ARRAY_CLASSES: dict[type, type[Array]] = registry.table("array_class")


# answered above this layer (quiver.hooks): the C data interface (ctypes loads on the first
# export, not with this module) and the pandas conversion
_export_c_array = Hook("cdata.export_array")
_array_to_pandas = Hook("pandas.array_to_pandas")


def register_array_class(*type_classes: type) -> Any:
    """Class decorator: use the decorated Array subclass for these DataType classes
    (the ``array_class`` piece of their :mod:`quiver.registry` rows)."""
    return registry.implements("array_class", *type_classes)


def step_one_slice(key: slice, size: int) -> tuple[int, int]:
    """``(offset, length)`` of the slice ``key`` over ``size`` items (``obj[a:b]`` of an
    array, a chunked array, a batch or a table); only step 1 is allowed."""
    start, stop, step = key.indices(size)
    if step != 1:
        raise ArrowInvalidArgument(f"expected a slice step of 1, found {step}")
    return start, max(stop - start, 0)


def item_position(i: int, size: int, key: Any) -> int:
    """Index ``i`` (negative counts from the end) as a position below ``size``; the error
    shows ``key`` as it was given."""
    if i < 0:
        i += size
    if not 0 <= i < size:
        raise ArrowIndexError(f"expected an index below {size}, found {key}")
    return i


class Array(ArrayData):
    """An Arrow array: type, length, offset, null_count, buffers, children, dictionary
    (held by :class:`~quiver.array.data.ArrayData`), with slicing, Python and numpy
    values, validation, equality and the Arrow PyCapsule protocol."""

    __slots__ = ()

    # -- zero-copy slicing -------------------------------------------------------------

    def slice(self, offset: int = 0, length: int | None = None) -> Array:
        """A zero-copy view of ``length`` values from ``offset`` (clamped like pyarrow)."""
        offset, length = slice_bounds(self._length, offset, length)
        null_count = -1
        if self._null_count == 0 or (length == self._length and offset == 0):
            null_count = self._null_count
        return type(self)(
            self._type,
            length,
            self._buffers,
            self._children,
            null_count,
            self._offset + offset,
            self._dictionary,
        )

    def __getitem__(self, key: int | slice) -> Any:
        if isinstance(key, slice):
            return self.slice(*step_one_slice(key, self._length))
        if not isinstance(key, (int, np.integer)):
            raise ArrowInvalidArgument(f"expected an int or slice index, found {key!r}")
        i = item_position(int(key), self._length, key)
        return self.slice(i, 1).to_pylist()[0]

    # -- what family subclasses provide --------------------------------------------------

    def to_pylist(self, *, maps_as_pydicts: str | None = None) -> list[Any]:
        """The values as Python objects (None for nulls), as pyarrow returns them.

        ``maps_as_pydicts`` (None, ``'lossy'`` or ``'strict'``) turns map values into dicts
        instead of lists of (key, value) tuples, as in pyarrow.
        """
        raise NotSupported(
            f"to_pylist is not implemented for {self._type}; register an Array subclass for "
            "its type class with register_array_class"
        )

    def tolist(self) -> list[Any]:
        """Alias of :meth:`to_pylist` (numpy's name)."""
        return self.to_pylist()

    def __iter__(self) -> Any:
        return iter(self.to_pylist())

    def __repr__(self) -> str:
        n = self._length
        try:
            preview = repr(self.slice(0, 10).to_pylist())[:-1]
        except ArrowError as exc:  # a repr must not fail on bad data
            preview = f"[<unreadable: {exc}>"
        more = ", ..." if n > 10 else ""
        return f"<quiver.Array {self._type} length={n}> {preview}{more}]"

    # -- validation and equality (implemented in validate.py / equal.py) ---------------

    def validate(self, *, full: bool = False, check_decimal_precision: bool = False) -> None:
        """Check the array against the spec; raise :class:`ArrowInvalid` when it breaks it.

        The default level is cheap and structural (buffer counts and sizes, child lengths);
        ``full=True`` also checks the data (offsets, UTF-8, indices, run ends, ...).
        """
        validate_array(self, full=full, check_decimal_precision=check_decimal_precision)

    def equals(self, other: object) -> bool:
        """Logical equality: same type, length, nulls and values (offsets honoured)."""
        if not isinstance(other, Array):
            return False
        return array_equals(self, other)

    def __eq__(self, other: object) -> bool:  # type: ignore[override]
        if not isinstance(other, Array):
            return NotImplemented
        return self.equals(other)

    __hash__ = None  # type: ignore[assignment]

    # -- construction from raw buffers -------------------------------------------------

    @classmethod
    def from_buffers(
        cls,
        type: t.DataType,
        length: int,
        buffers: Sequence[Any],
        null_count: int = -1,
        offset: int = 0,
        children: Sequence[Array] | None = None,
        dictionary: Array | None = None,
    ) -> Array:
        """Build an array from raw buffers (bytes-like or numpy) and validate its structure.

        ``buffers`` are this array's own buffers in layout order (see :mod:`quiver.layout`);
        view types append their variadic data buffers.  Children are given as arrays.

        >>> import quiver as qv
        >>> import numpy as np
        >>> a = qv.Array.from_buffers(qv.int32(), 3, [None, np.array([1, 2, 3], "<i4")])
        >>> a.to_pylist()
        [1, 2, 3]
        """
        if not isinstance(type, t.DataType):
            raise ArrowTypeError(f"expected a DataType, found {type!r}")
        if not isinstance(length, (int, np.integer)) or length < 0:
            raise ArrowInvalidArgument(f"expected a non-negative length, found {length!r}")
        if not isinstance(offset, (int, np.integer)) or offset < 0:
            raise ArrowInvalidArgument(f"expected a non-negative offset, found {offset!r}")
        lay = layout_of(type)
        bufs = [as_buffer(b) for b in buffers]
        nfixed = lay.num_buffers
        if len(bufs) < nfixed or (not lay.variadic and len(bufs) != nfixed):
            want = f"at least {nfixed}" if lay.variadic else str(nfixed)
            raise ArrowInvalidArgument(
                f"expected {want} buffers for {type}, found {len(bufs)}"
            )
        for spec, b in zip(lay.buffers, bufs):
            if b is None and spec.kind != "validity" and length + offset > 0:
                raise ArrowInvalidArgument(
                    f"expected a {spec.kind} buffer for {type}, found None"
                )
        if lay.variadic and any(b is None for b in bufs[nfixed:]):
            raise ArrowInvalidArgument(f"expected variadic data buffers for {type}, found None")
        kids = tuple(children or ())
        nkids = len(t.storage_of(type).fields)
        if len(kids) != nkids:
            raise ArrowInvalidArgument(f"expected {nkids} children for {type}, found {len(kids)}")
        for k in kids:
            if not isinstance(k, Array):
                raise ArrowTypeError(f"expected Array children, found {k!r}")
        st = t.storage_of(type)
        if isinstance(st, t.DictionaryType):
            if not isinstance(dictionary, Array):
                raise ArrowInvalidArgument(
                    f"expected a dictionary Array for {type}, found {dictionary!r}"
                )
        elif dictionary is not None:
            raise ArrowInvalidArgument(f"expected no dictionary for {type}, found one")
        arr = make_array(type, int(length), bufs, kids, int(null_count), int(offset), dictionary)
        arr.validate()
        return arr

    # -- numpy ---------------------------------------------------------------------------

    def to_numpy(self, zero_copy_only: bool = True, writable: bool = False) -> np.ndarray:
        """The values as a numpy array (pyarrow's semantics).

        Fixed-width numeric and temporal arrays without nulls give a zero-copy view, which
        is read-only (the array's memory is shared); ``writable=True`` asks for a copy.  With
        ``zero_copy_only=False``: integers with nulls become float64 with NaN, floats get NaN,
        temporal values NaT, and other types an object array of Python values.

        >>> import quiver as qv
        >>> view = qv.array([1, 2, 3]).to_numpy()
        >>> view.tolist(), view.flags.writeable
        ([1, 2, 3], False)
        """
        if not writable:
            # the common call (np.asarray of numbers without nulls): a read-only view
            plain = _plain_view_dtype(self._type)
            if plain is not None and self.null_count == 0:
                bufs = self._buffers
                buf = bufs[1] if len(bufs) > 1 else None
                lo = self._offset * plain.itemsize
                hi = lo + self._length * plain.itemsize
                if buf is not None and len(buf) >= hi:
                    values = buf[lo:hi].view(plain)
                    values.flags.writeable = False
                    return values
        storage = t.storage_of(self._type)
        if isinstance(storage, (t.TimeType, t.DateType)):
            # as pyarrow: times become datetime.time objects, dates datetime64[D] (date64:
            # [ms]); neither is a view of the stored integers
            if zero_copy_only:
                raise ArrowInvalid(
                    f"expected a type numpy can view for a zero-copy to_numpy, found "
                    f"{self._type} (it needs a copy; pass zero_copy_only=False)"
                )
            if isinstance(storage, t.TimeType):
                return _object_array(self.to_pylist())
        np_dtype = logical_numpy_dtype(self._type)
        if np_dtype is not None and not isinstance(storage, t.DictionaryType):
            values = self._fixed_values_view(np_dtype)
            if self.null_count == 0:
                if writable:
                    return values.copy()
                if values.flags.writeable:
                    values = values.view()
                    values.flags.writeable = False
                return values
            if zero_copy_only:
                raise ArrowInvalid(
                    f"expected no nulls for a zero-copy to_numpy, found {self.null_count}"
                )
            valid = self.is_valid_mask()
            # one pass that allocates and fills (a copy then a masked store took 2x)
            if values.dtype.kind in "Mm":
                nat = np.array("NaT", dtype=values.dtype)
                return np.where(valid, values, nat)  # type: ignore[arg-type]
            if values.dtype.kind in "iu":
                return np.where(valid, values, np.float64(np.nan))  # type: ignore[arg-type]
            return np.where(valid, values, values.dtype.type(np.nan))  # type: ignore[arg-type]
        if zero_copy_only:
            raise ArrowInvalid(
                f"expected a fixed-width type without nulls for a zero-copy to_numpy, "
                f"found {self._type}"
            )
        if isinstance(t.storage_of(self._type), t.BoolType) and self.null_count == 0:
            return getattr(self, "storage", self).to_numpy_bool().copy()
        return _object_array(self.to_pylist())

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if copy is False:
            out = self.to_numpy(zero_copy_only=True)
        else:
            out = self.to_numpy(zero_copy_only=False)
            if copy:
                out = out.copy()
        if dtype is not None and out.dtype != np.dtype(dtype):
            if copy is False:
                raise ArrowInvalid(
                    f"expected dtype {out.dtype} for a zero-copy view, found {dtype}"
                )
            out = out.astype(dtype)
        return out

    def __arrow_c_array__(self, requested_schema: Any = None) -> tuple[Any, Any]:
        """This array as ``(arrow_schema, arrow_array)`` PyCapsules (the Arrow PyCapsule
        protocol), zero-copy: the C buffers are this array's buffers, kept alive until the
        consumer releases them.  A ``requested_schema`` with the same fields is answered
        with the array's own type; quiver does not cast on export.

        >>> import pyarrow as pa, quiver as qv
        >>> pa.array(qv.array([1, None, 3])).to_pylist()
        [1, None, 3]
        """
        return _export_c_array.call(self, requested_schema)

    def to_pandas(self, **options: Any) -> Any:
        """A pandas Series of this array (``types_mapper``, ``date_as_object``,
        ``timestamp_as_object`` as in ``RecordBatch.to_pandas``), built with numpy and
        pandas, not through pyarrow (:mod:`quiver.pandas_out`; pandas loads on first use).

        >>> import quiver as qv
        >>> qv.array([1, None, 3]).to_pandas().tolist()
        [1.0, nan, 3.0]
        """
        return _array_to_pandas.call(self, **options)

    # -- buffers, for the family subclasses ----------------------------------------------

    def _absent_buffer(self, what: str, empty: np.ndarray) -> np.ndarray:
        """What to read for a buffer found absent: ``empty`` when the array is empty (there
        is nothing to read); otherwise ArrowInvalid "expected {what} buffer" (``what`` as
        ``"an offsets"``)."""
        if self._length:
            raise ArrowInvalid(f"expected {what} buffer for {self._type}, found None")
        return empty


class OffsetArray(Array):
    """Shared code of the layouts with ``len + 1`` offsets in buffer 1: binary, string,
    list and map arrays (subclasses give the offsets' numpy dtype)."""

    __slots__ = ()

    def _offset_dtype(self) -> str:
        raise NotImplementedError

    def value_offsets(self) -> np.ndarray:
        """The ``len(self) + 1`` offsets of this slice (a zero-copy numpy view)."""
        buf = self._buffers[1] if len(self._buffers) > 1 else None
        if buf is None or (self._length == 0 and len(buf) == 0):
            return self._absent_buffer("an offsets", np.zeros(1, dtype=self._offset_dtype()))
        return typed_view(buf, self._offset_dtype(), self._offset, self._length + 1, "offsets")

    @property
    def offsets(self) -> Array:
        """The offsets of this slice as an int32/int64 array (shares the buffer)."""
        return int_array(self.value_offsets())


_PLAIN_VIEWS: dict[t.DataType, np.dtype | None] = {}


def _plain_view_dtype(dtype: t.DataType) -> np.dtype | None:
    """The dtype ``to_numpy`` views a values buffer as without converting it (the
    logical dtype, when it has the stored width: numbers, timestamps, durations), or None
    (dates, times, dictionaries and types numpy cannot view); kept per type."""
    return kept_per_type(_PLAIN_VIEWS, dtype, _plain_view_of)


def _plain_view_of(dtype: t.DataType) -> np.dtype | None:
    storage = t.storage_of(dtype)
    if isinstance(storage, (t.TimeType, t.DateType, t.DictionaryType)):
        return None
    logical = logical_numpy_dtype(dtype)
    raw = storage_numpy_dtype(dtype)
    if logical is None or raw is None or logical.itemsize != raw.itemsize:
        return None
    return logical


def int_array(values: np.ndarray) -> Array:
    """An integer array without nulls over a numpy integer array (shares its memory)."""
    itype = t.IntegerType(values.dtype.itemsize * 8, values.dtype.kind == "i")
    return make_array(itype, len(values), (None, values.view(np.uint8)), null_count=0)


def _object_array(values: list[Any]) -> np.ndarray:
    """A 1-D object array of ``values`` (nested lists stay Python objects)."""
    return np.fromiter(values, dtype=object, count=len(values))


def unchecked_new_source(
    target: str,
    cls: str,
    dtype: str,
    length: str,
    buffers: str,
    null_count: str,
    children: str = "()",
) -> str:
    """Python statements (one per line, no indent) that bind ``target`` to an Array built
    like ``cls(dtype, length, buffers, children, null_count, 0, None)`` but without the
    ``__init__`` call; the arguments are names or expressions in the caller's code.

    For generated hot paths (quiver.ipc.steady), which save a call frame per array this
    way; kept here, next to the slots it sets.  ``buffers`` and ``children`` must be
    tuples.
    """
    return (
        f"{target} = _object_new({cls})\n"
        f"{target}._type = {dtype}\n"
        f"{target}._length = {length}\n"
        f"{target}._buffers = {buffers}\n"
        f"{target}._children = {children}\n"
        f"{target}._null_count = {null_count}\n"
        f"{target}._offset = 0\n"
        f"{target}._dictionary = None\n"
    )


def array_class_for(dtype: t.DataType) -> type[Array]:
    """The registered Array subclass for ``dtype`` (what :func:`make_array` builds);
    NotSupported if its class has none."""
    cls = _ARRAY_CLASSES.get(dtype.__class__)
    if cls is None:
        raise registry.missing_piece("array_class", dtype.__class__)
    return cls


def make_array(
    type: t.DataType,
    length: int,
    buffers: Sequence[np.ndarray | None],
    children: Sequence[Array] = (),
    null_count: int = -1,
    offset: int = 0,
    dictionary: Array | None = None,
) -> Array:
    """Build the right Array subclass for ``type`` from parts, without validation."""
    cls = _ARRAY_CLASSES.get(type.__class__)
    if cls is None:
        raise registry.missing_piece("array_class", type.__class__)
    return cls(type, length, buffers, children, null_count, offset, dictionary)
