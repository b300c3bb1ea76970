"""The one table of physical layouts (Columnar spec, "Physical Memory Layout" and
"Buffer Layout Summary").

For every type it says which buffers an array has, in IPC order, how wide each buffer's
elements are, how a big-endian buffer is swapped, and how the children are sized.  Every
walk over the type tree (IPC body load and assembly, projection skipping, validation,
endianness swapping, the C data interface) asks this table instead of keeping its own
per-type ``if`` chains.  The structural rules derived from it (buffer sizes, offsets,
child lengths) are rule objects in :mod:`quiver.layout_rules`.

>>> from quiver import types as t
>>> [b.kind for b in layout_of(t.string()).buffers]
['validity', 'offsets', 'data']
>>> layout_of(t.dense_union([t.field("a", t.int8())])).has_validity
False
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import registry
from . import types as t
from .errors import NotSupported


@dataclass(frozen=True, slots=True)
class BufferSpec:
    """One buffer of a layout.

    ``kind`` is one of ``validity``, ``bits`` (boolean values), ``values`` (fixed width),
    ``offsets``, ``sizes``, ``data`` (variable bytes), ``views`` (16-byte binary views),
    ``type_ids``.  ``byte_width`` is the element width (0 for bit buffers and raw data).
    ``swap`` lists the widths of the components of one element that a byte-order change
    reverses independently (empty: nothing to swap).
    """

    kind: str
    byte_width: int = 0
    swap: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Layout:
    """The buffers and child rule of one type.

    ``variadic`` marks view types, whose data buffers follow the fixed ones and are counted
    by ``variadicBufferCounts`` in IPC.  ``children`` says how child lengths relate to the
    parent: ``none``, ``same`` (struct, sparse union), ``offsets`` (lists, maps),
    ``views`` (list views), ``fixed`` (fixed-size list), ``dense`` (dense union),
    ``run_end`` (run-end encoded: two children of their own lengths).
    """

    buffers: tuple[BufferSpec, ...]
    variadic: bool = False
    children: str = "none"
    # a validity bitmap plus one fixed-width or bit buffer, no children (derived)
    leaf_pair: bool = field(init=False, default=False, compare=False)

    @property
    def has_validity(self) -> bool:
        """Whether the first buffer is a validity bitmap."""
        return bool(self.buffers) and self.buffers[0].kind == "validity"

    @property
    def num_buffers(self) -> int:
        """Number of fixed (non-variadic) buffers."""
        return len(self.buffers)

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "leaf_pair",
            len(self.buffers) == 2
            and self.buffers[0].kind == "validity"
            and self.buffers[1].kind in ("values", "bits")
            and self.children == "none"
            and not self.variadic,
        )


VALIDITY = BufferSpec("validity")
_DATA = BufferSpec("data")


def _values(width: int, swap: tuple[int, ...] | None = None) -> BufferSpec:
    if swap is None:
        swap = (width,) if width > 1 else ()
    return BufferSpec("values", width, swap)


def _offsets(width: int) -> BufferSpec:
    return BufferSpec("offsets", width, (width,))


def _sizes(width: int) -> BufferSpec:
    return BufferSpec("sizes", width, (width,))


_NULL_LAYOUT = Layout(())
_BOOL_LAYOUT = Layout((VALIDITY, BufferSpec("bits")))
_BINARY = Layout((VALIDITY, _offsets(4), _DATA))
_LARGE_BINARY = Layout((VALIDITY, _offsets(8), _DATA))
# a view is int32 length + 12 inline bytes, or int32 length, 4-byte prefix, int32 buffer
# index, int32 offset; the swap of the last three depends on the length, so ``swap`` names
# only the leading length and the reader handles the rest.
_VIEW = Layout((VALIDITY, BufferSpec("views", 16, (4,))), variadic=True)
_LIST = Layout((VALIDITY, _offsets(4)), children="offsets")
_LARGE_LIST = Layout((VALIDITY, _offsets(8)), children="offsets")
_LIST_VIEW = Layout((VALIDITY, _offsets(4), _sizes(4)), children="views")
_LARGE_LIST_VIEW = Layout((VALIDITY, _offsets(8), _sizes(8)), children="views")
_FIXED_LIST = Layout((VALIDITY,), children="fixed")
_STRUCT = Layout((VALIDITY,), children="same")
_SPARSE_UNION = Layout((BufferSpec("type_ids", 1),), children="same")
_DENSE_UNION = Layout((BufferSpec("type_ids", 1), _offsets(4)), children="dense")
_REE = Layout((), children="run_end")

_INTERVAL_SWAP = {"year_month": (4,), "day_time": (4, 4), "month_day_nano": (4, 4, 8)}


_CACHE: dict[t.DataType, Layout] = {}
# the same type objects come back batch after batch (a schema's), and hashing a nested
# type walks all of it: look them up by identity first (the entry keeps the type alive,
# so its id stays its own)
_BY_ID: dict[int, tuple[t.DataType, Layout]] = {}


def kept_per_type(table: dict[Any, Any], dtype: t.DataType, make: Callable[[Any], Any],
                  keep: int = 4096) -> Any:
    """``make(dtype)``, kept in ``table`` by the type (types are immutable values), up to
    ``keep`` types; an unhashable type (extension types may be) is worked out each time."""
    try:
        return table[dtype]
    except KeyError:
        pass
    except TypeError:
        return make(dtype)
    found = make(dtype)
    if len(table) < keep:
        table[dtype] = found
    return found


def layout_of(dtype: t.DataType) -> Layout:
    """The physical layout of ``dtype`` (extension types use their storage's)."""
    hit = _BY_ID.get(id(dtype))
    if hit is not None and hit[0] is dtype:
        return hit[1]
    found = _CACHE.get(dtype)
    if found is None:
        found = _layout_of(dtype)
        if len(_CACHE) < 4096:  # types are immutable values; keep the cache bounded
            _CACHE[dtype] = found
    if len(_BY_ID) < 4096:
        _BY_ID[id(dtype)] = (dtype, found)
    return found


def _layout_of(dtype: t.DataType) -> Layout:
    dtype = t.storage_of(dtype)
    cls = type(dtype)
    make = _LAYOUTS.get(cls)
    if make is None:
        raise NotSupported(f"no physical layout is known for type {dtype} "
                           f"(DataType {cls.__name__} has no layout)")
    return make(dtype)


def _fixed_width(dtype: t.DataType) -> Layout:
    width = dtype.bit_width // 8
    if isinstance(dtype, t.IntervalType):
        return Layout((VALIDITY, _values(width, _INTERVAL_SWAP[dtype.unit])))
    if isinstance(dtype, t.FixedSizeBinaryType):
        return Layout((VALIDITY, _values(width, ())))
    return Layout((VALIDITY, _values(width)))


def _dictionary(dtype: t.DictionaryType) -> Layout:
    return _fixed_width(dtype.index_type)


# the registry's "layout" piece: type class -> (dtype -> Layout)
_LAYOUTS = registry.table("layout")


def _same(lay: Layout) -> Callable[[t.DataType], Layout]:
    return lambda dtype: lay


# (one layout per class: a list of (class, layout) pairs, two to a line)
_ONE_LAYOUT = [
    (t.NullType, _NULL_LAYOUT), (t.BoolType, _BOOL_LAYOUT),
    (t.BinaryViewType, _VIEW), (t.StringViewType, _VIEW),
    (t.ListViewType, _LIST_VIEW), (t.LargeListViewType, _LARGE_LIST_VIEW),
    (t.ListType, _LIST), (t.LargeListType, _LARGE_LIST), (t.MapType, _LIST),
    (t.FixedSizeListType, _FIXED_LIST), (t.StructType, _STRUCT),
    (t.RunEndEncodedType, _REE),
]
for _cls, _lay in _ONE_LAYOUT:
    registry.register("layout", _same(_lay), _cls)
registry.register(
    "layout", _fixed_width, t.IntegerType, t.FloatingPointType, t.DecimalType, t.DateType,
    t.TimeType, t.TimestampType, t.DurationType, t.IntervalType, t.FixedSizeBinaryType,
)


@registry.implements("layout", t.BinaryType, t.StringType)
def _binary(dtype: t.BinaryType | t.StringType) -> Layout:
    return _LARGE_BINARY if dtype.large else _BINARY


@registry.implements("layout", t.UnionType)
def _union(dtype: t.UnionType) -> Layout:
    return _DENSE_UNION if dtype.mode == "dense" else _SPARSE_UNION


registry.register("layout", _dictionary, t.DictionaryType)


def storage_numpy_dtype(dtype: t.DataType) -> np.dtype | None:
    """The little-endian numpy dtype that views a fixed-width value buffer, or None.

    Integers, floats, dates, times, timestamps, durations and dictionary indices map to
    integer or float dtypes of the buffer's width; decimals, intervals, booleans and
    fixed-size binary have no single numpy scalar and give None.

    >>> from quiver import types as t
    >>> storage_numpy_dtype(t.date32()), storage_numpy_dtype(t.timestamp("ms"))
    (dtype('int32'), dtype('int64'))
    """
    return _numpy_piece(_STORAGE_DTYPES, "numpy_storage", dtype)


def logical_numpy_dtype(dtype: t.DataType) -> np.dtype | None:
    """The numpy dtype ``to_numpy`` produces (datetime64/timedelta64 for temporal types).

    >>> from quiver import types as t
    >>> logical_numpy_dtype(t.timestamp("ms")), logical_numpy_dtype(t.date32())
    (dtype('<M8[ms]'), dtype('<M8[D]'))
    """
    return _numpy_piece(_LOGICAL_DTYPES, "numpy_logical", dtype)


def _numpy_piece(table: dict, piece: str, dtype: t.DataType) -> np.dtype | None:
    """The registry piece ``piece`` (looked up in ``table``) of ``dtype``'s storage type,
    applied to it."""
    storage = t.storage_of(dtype)
    get = table.get(storage.__class__)
    if get is None:
        raise registry.missing_piece(piece, storage.__class__)
    return get(storage)


# -- the registry's "numpy_storage" and "numpy_logical" pieces: dtype -> np.dtype or None
_STORAGE_DTYPES = registry.table("numpy_storage")
_LOGICAL_DTYPES = registry.table("numpy_logical")


@registry.implements("numpy_storage", t.IntegerType, t.FloatingPointType)
def _number_dtype(dtype: t.IntegerType | t.FloatingPointType) -> np.dtype:
    if isinstance(dtype, t.FloatingPointType):
        kind = "f"
    else:
        kind = "i" if dtype.signed else "u"
    return np.dtype(f"<{kind}{dtype.width // 8}")


@registry.implements(
    "numpy_storage", t.DateType, t.TimeType, t.TimestampType, t.DurationType
)
def _temporal_storage(dtype: t.DataType) -> np.dtype:
    return np.dtype(f"<i{dtype.bit_width // 8}")


@registry.implements("numpy_storage", t.DictionaryType)
def _index_dtype(dtype: t.DictionaryType) -> np.dtype | None:
    return storage_numpy_dtype(dtype.index_type)


def _no_dtype(dtype: t.DataType) -> None:
    return None


# no single numpy scalar: None, said once per class
registry.register(
    "numpy_storage", _no_dtype, t.NullType, t.BoolType, t.DecimalType, t.IntervalType,
    t.BinaryType, t.StringType, t.BinaryViewType, t.StringViewType, t.FixedSizeBinaryType,
    t.ListType, t.LargeListType, t.ListViewType, t.LargeListViewType, t.FixedSizeListType,
    t.StructType, t.MapType, t.UnionType, t.RunEndEncodedType,
)


@registry.implements("numpy_logical", t.DateType, t.TimestampType, t.DurationType)
def _temporal_logical(dtype: t.DateType | t.TimestampType | t.DurationType) -> np.dtype:
    """datetime64 of the type's unit (days or ms for dates), timedelta64 for durations."""
    if isinstance(dtype, t.DateType):
        return np.dtype("M8[D]") if dtype.unit == "day" else np.dtype("M8[ms]")
    kind = "m8" if isinstance(dtype, t.DurationType) else "M8"
    return np.dtype(f"{kind}[{dtype.unit}]")


# the rest: what the value buffer holds
for _cls, _get in _STORAGE_DTYPES.items():
    if _cls not in (t.DateType, t.TimestampType, t.DurationType):
        registry.register("numpy_logical", _get, _cls)
