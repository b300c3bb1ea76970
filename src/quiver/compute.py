"""The selection kernels and ``cast``, under pyarrow's ``pyarrow.compute`` names.

Not a compute engine: ``take``, ``filter``, ``is_null``, ``is_valid``, ``fill_null``,
``cast`` and ``sort_indices``, for Arrays, ChunkedArrays, RecordBatches and Tables.  The
kernels live in :mod:`quiver.array.select` and :mod:`quiver.array.cast`.

>>> import quiver as qv, quiver.compute as qc
>>> qc.take(qv.array(["a", "b", "c"]), [2, 0]).to_pylist()
['c', 'a']
>>> qc.sort_indices(qv.table({"a": [3, 1, 2]}), [("a", "descending")]).to_pylist()
[0, 2, 1]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import types as t
from .array import select as _select
from .array.base import Array
from .array.build import from_numpy
from .batch import ChunkedArray, RecordBatch, Table, sort_spec
from .errors import ArrowInvalidArgument, ArrowTypeError

__all__ = ["cast", "fill_null", "filter", "is_null", "is_valid", "sort_indices", "take"]

_DATA = (Array, ChunkedArray, RecordBatch, Table)
_COLUMN = (Array, ChunkedArray)


def _check(data: Any, kinds: tuple[type, ...] = _DATA) -> None:
    """Refuse ``data`` unless it is one of ``kinds`` (pyarrow refuses batches and tables
    for the element-wise functions: ``is_null``, ``is_valid``, ``fill_null``, ``cast``)."""
    if not isinstance(data, kinds):
        names = [k.__name__ for k in kinds]
        raise ArrowTypeError(
            f"expected a quiver {', '.join(names[:-1])} or {names[-1]}, found "
            f"{type(data).__name__}"
        )


def take(data: Any, indices: Any) -> Any:
    """The values (or rows) of ``data`` at ``indices``; a null index gives a null."""
    _check(data)
    return data.take(indices)


def filter(data: Any, mask: Any) -> Any:
    """The values (or rows) of ``data`` where ``mask`` is True; nulls drop the row."""
    _check(data)
    return data.filter(mask)


def is_null(data: Array | ChunkedArray) -> Any:
    """Booleans, True where ``data`` (an Array or ChunkedArray) is null."""
    _check(data, _COLUMN)
    return data.is_null()


def is_valid(data: Array | ChunkedArray) -> Any:
    """Booleans, True where ``data`` (an Array or ChunkedArray) is not null."""
    _check(data, _COLUMN)
    if isinstance(data, ChunkedArray):
        return ChunkedArray([_select.is_valid(c) for c in data.chunks], t.bool_())
    return _select.is_valid(data)


def fill_null(data: Array | ChunkedArray, fill_value: Any) -> Any:
    """``data`` (an Array or ChunkedArray) with its nulls replaced by ``fill_value``."""
    _check(data, _COLUMN)
    return data.fill_null(fill_value)


def cast(data: Array | ChunkedArray, target_type: Any, safe: bool = True) -> Any:
    """``data`` as ``target_type`` (safe by default: overflow or truncation names the row)."""
    _check(data, _COLUMN)
    return data.cast(target_type, safe=safe)


def sort_indices(
    data: Any, sort_keys: str | Sequence[tuple[str, str]] | None = None, order: str = "ascending"
) -> Array:
    """The row order that sorts ``data`` (stable; nulls last): an Array or ChunkedArray in
    ``order`` (or the order of its one ``(name, order)`` sort key, as pyarrow), or a batch
    or table by ``sort_keys`` (a name or ``[(name, order), ...]``; by default its first
    column in ``order``)."""
    _check(data)
    if sort_keys is not None and not isinstance(sort_keys, (str, Sequence)):
        raise ArrowTypeError(
            f"expected a column name or (name, order) pairs to sort by, found {sort_keys!r}"
        )
    if isinstance(data, (RecordBatch, Table)):
        if sort_keys is None:
            if not data.column_names:
                raise ArrowInvalidArgument("expected a column to sort by, found no columns")
            sort_keys = [(data.column_names[0], order)]
        keys = sort_spec(sort_keys)
        cols = [data.column(name) for name, _ in keys]
        cols = [c.combine_chunks() if isinstance(c, ChunkedArray) else c for c in cols]
        return from_numpy(_select.sort_indices(cols, [o for _, o in keys]))
    if sort_keys is not None and not isinstance(sort_keys, str):
        keys = sort_spec(sort_keys)
        if len(keys) != 1:
            raise ArrowInvalidArgument(
                f"expected one sort key for an array, found {len(keys)}"
            )
        order = keys[0][1]
    arr = data.combine_chunks() if isinstance(data, ChunkedArray) else data
    return from_numpy(_select.sort_indices([arr], [order]))
