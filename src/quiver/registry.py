"""The one table of per-type knowledge: one row per concrete DataType class.

This module is the mechanism only and imports nothing of quiver but the errors, so that
:mod:`quiver.types` can declare the rows right after its classes and factories:
what the types layer itself knows about a type class, namely the members of the
flatbuffer ``Type`` union that describe it (code and name, Schema.fbs), its names in the
integration JSON format, its C data format string (the ``c_format`` piece) and which
pieces it goes without.  The layers above add their own *pieces* to the row, one
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
c_format        quiver.types                 ``dtype -> bytes`` (CDataInterface format)
layout          quiver.layout                ``dtype -> Layout`` (buffers and child rule)
numpy_storage   quiver.layout                ``dtype -> numpy dtype`` of the value buffer, or
                                             None (no single numpy scalar)
numpy_logical   quiver.layout                ``dtype -> numpy dtype`` of ``to_numpy``, or None
array_class     quiver.array.*               the Array subclass :func:`make_array` builds
python_values   quiver.array.primitive       ``(array, storage type, mask) -> values``
builder         quiver.array.build           ``(values, dtype, checked) -> Array``
ipc_encode      quiver.ipc.metadata.encode   ``(builder, dtype) -> (Type code, table)``
ipc_decode      quiver.ipc.metadata.fields   ``(code, table, children) -> DataType``
json_encode     quiver.integration.          ``dtype -> {"name": ..., parameters}``
                json_writer
json_decode     quiver.integration.          ``(name, object, children, path) -> DataType``
                json_reader
cast_family     quiver.array.cast            the family name its casts are chosen by
                                             (``"integer"``, ``"decimal"``, ...; ``"none"``:
                                             it casts only to its own type)
pandas          quiver.pandas_out            ``(pd, column, storage, numpy_type, options)
                                             -> values`` for a pandas column
stats_raw       quiver.ipc.statistics.       ``(dtype, name) -> (Array -> Raw)``: how a
                compute                      column's bounds and counts are computed
filter          quiver.filters               a ``FilterRule``: how a column compares with a
                                             filter value, and which values it accepts
spark_arrow     quiver.spark.policy          ``(dtype, policy) -> DataType`` Spark reads
spark_sql       quiver.spark.policy          ``(dtype, pyspark.sql.types) -> Spark type``,
                                             None for a type Spark reads as another
spark_convert   quiver.spark.convert         ``(array, target, policy, where) -> Array``
==============  ===========================  ===============================================

The rows are keyed by class, so the hot paths (body loading, building, metadata decoding)
pay one dict lookup per column, never per value; :func:`table` hands them the live dict.

>>> from quiver import types as t  # declares the rows
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

from .errors import NotSupported

F = TypeVar("F")


PIECES: dict[str, str] = {
    "c_format": "quiver.types",
    "layout": "quiver.layout",
    "numpy_storage": "quiver.layout",
    "numpy_logical": "quiver.layout",
    "array_class": "quiver.array.*",
    "python_values": "quiver.array.primitive",
    "builder": "quiver.array.build",
    "ipc_encode": "quiver.ipc.metadata.encode",
    "ipc_decode": "quiver.ipc.metadata.fields",
    "json_encode": "quiver.integration.json_writer",
    "json_decode": "quiver.integration.json_reader",
    "cast_family": "quiver.array.cast",
    "pandas": "quiver.pandas_out",
    "stats_raw": "quiver.ipc.statistics.compute",
    "filter": "quiver.filters",
    "spark_arrow": "quiver.spark.policy",
    "spark_sql": "quiver.spark.policy",
    "spark_convert": "quiver.spark.convert",
}
"""Every piece and the module that registers it."""

# what a type that travels as another (an extension as its storage type, a dictionary
# as its index type plus a dictionary) goes without
TRAVELS_AS_ANOTHER = frozenset(
    {"ipc_encode", "ipc_decode", "json_encode", "json_decode", "python_values"}
)
# what the fixed-width value types alone have (the other Array classes convert in to_pylist)
ONLY_FIXED_WIDTH = frozenset({"python_values"})
# what a type whose values are another type's (an extension's are its storage's, a
# dictionary's its value type's) goes without: casts and pandas see the storage or values
CONVERTS_AS_ANOTHER = frozenset({"cast_family", "pandas"})


@dataclass(frozen=True, slots=True)
class TypeRow:
    """What the types layer knows of one DataType class.

    ``ipc_types`` are the flatbuffer ``Type`` union members (code, name) that decode to
    this class; ``json_names`` the integration JSON ``type.name`` values; ``without``
    the pieces this class does not have, said here so the coverage test can tell a
    piece left out on purpose from one forgotten.
    """

    cls: type
    ipc_types: tuple[tuple[int, str], ...] = ()
    json_names: tuple[str, ...] = ()
    without: frozenset[str] = frozenset()


_ROWS: dict[type, TypeRow] = {}


def add_row(new: TypeRow) -> None:
    """Declare the row of a DataType class (quiver.types does, once per class)."""
    unknown = new.without - set(PIECES)
    if unknown:
        raise ValueError(f"expected pieces of {sorted(PIECES)}, found {sorted(unknown)}")
    old = _ROWS.get(new.cls)
    if old is not None and old != new:
        raise ValueError(f"DataType {new.cls.__name__} already has a row: {old}")
    _ROWS[new.cls] = new


_TABLES: dict[str, dict[type, Any]] = {piece: {} for piece in PIECES}


def rows() -> tuple[TypeRow, ...]:
    """Every row, one per concrete DataType class."""
    return tuple(_ROWS.values())


def row(cls: type) -> TypeRow:
    """The row of DataType class ``cls``; NotSupported if it has none."""
    found = _ROWS.get(cls)
    if found is None:
        raise NotSupported(f"DataType {cls.__name__} has no row; add one in quiver.types")
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
            raise NotSupported(f"DataType {cls.__name__} has no row; add one in quiver.types")
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
    """Every (class, piece) the rows lack and do not say they go without, as
    "DataType X has no <piece>" lines."""
    out = []
    for piece, tbl in _TABLES.items():
        for cls, r in _ROWS.items():
            if piece not in r.without and cls not in tbl:
                out.append(f"DataType {cls.__name__} has no {piece}")
    return out
