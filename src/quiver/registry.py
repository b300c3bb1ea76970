"""The one table of per-type knowledge: one row per concrete DataType class.

A row holds what the types layer itself knows about a type class: the members of the
flatbuffer ``Type`` union that describe it (code and name, Schema.fbs) and its names in
the integration JSON format.  The layers above add their own *pieces* to the row, one
explicit call per type class and piece, next to the code they register::

    @registry.implements("builder", t.IntegerType)
    def _build_int(values, dtype, checked=False): ...

and look them up by the class of a type instead of keeping ``if isinstance`` chains.  A
lookup of a piece that a class lacks raises :class:`~quiver.errors.NotSupported` naming
the class and the piece: there is no silent fallback.  ``tests/unit/test_type_coverage.py``
imports every module that registers pieces and fails on any row with a piece missing.

The pieces (see :data:`PIECES`) and the module that registers each:

==============  ===========================  ===============================================
piece           registered by                what it is
==============  ===========================  ===============================================
layout          quiver.layout                ``dtype -> Layout`` (buffers and child rule)
numpy_storage   quiver.layout                ``dtype -> numpy dtype`` of the value buffer, or
                                             None (no single numpy scalar)
numpy_logical   quiver.layout                ``dtype -> numpy dtype`` of ``to_numpy``, or None
array_class     quiver.array.*               the Array subclass :func:`make_array` builds
python_values   quiver.array.primitive       ``(array, mask) -> values`` (fixed width only)
builder         quiver.array.build           ``(values, dtype, checked) -> Array``
ipc_encode      quiver.ipc.metadata.encode   ``(builder, dtype) -> (Type code, table)``
ipc_decode      quiver.ipc.metadata.fields   ``(code, table, children) -> DataType``
json_encode     quiver.integration.          ``dtype -> {"name": ..., parameters}``
                json_writer
json_decode     quiver.integration.          ``(name, object, children, path) -> DataType``
                json_reader
==============  ===========================  ===============================================

The rows are keyed by class, so the hot paths (body loading, building, metadata decoding)
pay one dict lookup per column, never per value; :func:`table` hands them the live dict.

>>> from quiver import types as t
>>> row(t.StringType).ipc_types
((5, 'Utf8'), (20, 'LargeUtf8'))
>>> lookup("no_such_piece", t.StringType)
Traceback (most recent call last):
...
quiver.errors.NotSupported: DataType StringType has no no_such_piece
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from . import types as t
from .errors import NotSupported

F = TypeVar("F")


@dataclass(frozen=True, slots=True)
class TypeRow:
    """What the types layer knows of one DataType class.

    ``ipc_types`` are the flatbuffer ``Type`` union members (code, name) that decode to
    this class; ``json_names`` the integration JSON ``type.name`` values.  Extension and
    dictionary types travel as their storage/index type and have neither (nor the IPC and
    JSON pieces).
    """

    cls: type
    ipc_types: tuple[tuple[int, str], ...] = ()
    json_names: tuple[str, ...] = ()


# Schema.fbs, union Type: code -> name (0 is NONE)
_ROWS: dict[type, TypeRow] = {
    r.cls: r
    for r in (
        TypeRow(t.NullType, ((1, "Null"),), ("null",)),
        TypeRow(t.BoolType, ((6, "Bool"),), ("bool",)),
        TypeRow(t.IntegerType, ((2, "Int"),), ("int",)),
        TypeRow(t.FloatingPointType, ((3, "FloatingPoint"),), ("floatingpoint",)),
        TypeRow(t.DecimalType, ((7, "Decimal"),), ("decimal",)),
        TypeRow(t.DateType, ((8, "Date"),), ("date",)),
        TypeRow(t.TimeType, ((9, "Time"),), ("time",)),
        TypeRow(t.TimestampType, ((10, "Timestamp"),), ("timestamp",)),
        TypeRow(t.DurationType, ((18, "Duration"),), ("duration",)),
        TypeRow(t.IntervalType, ((11, "Interval"),), ("interval",)),
        TypeRow(t.BinaryType, ((4, "Binary"), (19, "LargeBinary")), ("binary", "largebinary")),
        TypeRow(t.StringType, ((5, "Utf8"), (20, "LargeUtf8")), ("utf8", "largeutf8")),
        TypeRow(t.BinaryViewType, ((23, "BinaryView"),), ("binaryview",)),
        TypeRow(t.StringViewType, ((24, "Utf8View"),), ("utf8view",)),
        TypeRow(t.FixedSizeBinaryType, ((15, "FixedSizeBinary"),), ("fixedsizebinary",)),
        TypeRow(t.ListType, ((12, "List"),), ("list",)),
        TypeRow(t.LargeListType, ((21, "LargeList"),), ("largelist",)),
        TypeRow(t.ListViewType, ((25, "ListView"),), ("listview",)),
        TypeRow(t.LargeListViewType, ((26, "LargeListView"),), ("largelistview",)),
        TypeRow(t.FixedSizeListType, ((16, "FixedSizeList"),), ("fixedsizelist",)),
        TypeRow(t.StructType, ((13, "Struct_"),), ("struct",)),
        TypeRow(t.MapType, ((17, "Map"),), ("map",)),
        TypeRow(t.UnionType, ((14, "Union"),), ("union",)),
        TypeRow(t.RunEndEncodedType, ((22, "RunEndEncoded"),), ("runendencoded",)),
        TypeRow(t.DictionaryType),
        TypeRow(t.ExtensionType),
    )
}

# piece -> the classes that must have it (None: every row)
_NOT_IN_IPC = frozenset({t.DictionaryType, t.ExtensionType})
_FIXED_WIDTH_VALUES = frozenset({
    t.IntegerType, t.FloatingPointType, t.DecimalType, t.DateType, t.TimeType,
    t.TimestampType, t.DurationType, t.IntervalType,
})
PIECES: dict[str, frozenset[type] | None] = {
    "layout": frozenset(set(_ROWS) - {t.ExtensionType}),  # extensions use their storage's
    "numpy_storage": frozenset(set(_ROWS) - {t.ExtensionType}),
    "numpy_logical": frozenset(set(_ROWS) - {t.ExtensionType}),
    "array_class": None,
    "python_values": _FIXED_WIDTH_VALUES,  # other Array classes convert in to_pylist
    "builder": None,
    "ipc_encode": frozenset(set(_ROWS) - _NOT_IN_IPC),
    "ipc_decode": frozenset(set(_ROWS) - _NOT_IN_IPC),
    "json_encode": frozenset(set(_ROWS) - _NOT_IN_IPC),
    "json_decode": frozenset(set(_ROWS) - _NOT_IN_IPC),
}
"""Every piece and the classes whose rows must carry it (None: all rows)."""

_TABLES: dict[str, dict[type, Any]] = {piece: {} for piece in PIECES}


def rows() -> tuple[TypeRow, ...]:
    """Every row, one per concrete DataType class."""
    return tuple(_ROWS.values())


def row(cls: type) -> TypeRow:
    """The row of DataType class ``cls``; NotSupported if it has none."""
    found = _ROWS.get(cls)
    if found is None:
        raise NotSupported(f"DataType {cls.__name__} has no registry row")
    return found


def table(piece: str) -> dict[type, Any]:
    """The live ``class -> value`` dict of ``piece``, for hot paths that look up per column.

    Callers must treat a missing key as :func:`missing_piece` does (raise, never default).
    """
    try:
        return _TABLES[piece]
    except KeyError:
        known = sorted(PIECES)
        raise NotSupported(f"expected a registry piece of {known}, found {piece!r}") from None


def register(piece: str, value: Any, *classes: type) -> None:
    """Give each of ``classes`` the ``piece`` ``value``; a second registration by another
    definition is an error (ValueError)."""
    tbl = table(piece)
    for cls in classes:
        if cls not in _ROWS:
            raise NotSupported(f"DataType {cls.__name__} has no row; add one in {__name__}")
        old = tbl.get(cls)
        if old is not None and old is not value and _origin(old) != _origin(value):
            raise ValueError(f"DataType {cls.__name__} already has a {piece}: {old!r}")
        tbl[cls] = value


def _origin(value: Any) -> tuple[str, str]:
    # the same definition run again (a module imported anew after a failed import, or
    # reloaded) replaces its own registration; another definition may not
    return getattr(value, "__module__", ""), getattr(value, "__qualname__", repr(value))


def implements(piece: str, *classes: type) -> Callable[[F], F]:
    """Decorator: register the decorated function or class as ``piece`` of ``classes``."""

    def deco(value: F) -> F:
        register(piece, value, *classes)
        return value

    return deco


def missing_piece(piece: str, cls: type) -> NotSupported:
    """The error for a lookup of ``piece`` that class ``cls`` lacks."""
    return NotSupported(f"DataType {cls.__name__} has no {piece}")


def lookup(piece: str, cls: type) -> Any:
    """The ``piece`` of DataType class ``cls``; NotSupported naming both if it has none."""
    found = _TABLES.get(piece, {}).get(cls)
    if found is None:
        raise missing_piece(piece, cls)
    return found


def missing() -> list[str]:
    """Every (class, piece) the rows lack, as "DataType X has no <piece>" lines."""
    out = []
    for piece, need in PIECES.items():
        tbl = _TABLES[piece]
        for cls in _ROWS:
            if (need is None or cls in need) and cls not in tbl:
                out.append(f"DataType {cls.__name__} has no {piece}")
    return out
