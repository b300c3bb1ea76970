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

from .array import select as _select
from .array.base import Array
from .array.build import from_numpy
from .array.cast import cast as _cast
from .batch import ChunkedArray, RecordBatch, Table, _sort_spec
from .errors import ArrowTypeError

__all__ = ["cast", "fill_null", "filter", "is_null", "is_valid", "sort_indices", "take"]

_DATA = (Array, ChunkedArray, RecordBatch, Table)


def _check(data: Any) -> None:
    if not isinstance(data, _DATA):
        raise ArrowTypeError(
            f"expected a quiver Array, ChunkedArray, RecordBatch or Table, found "
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
    """Booleans, True where ``data`` is null."""
    _check(data)
    return data.is_null()  # type: ignore[union-attr]


def is_valid(data: Array) -> Array:
    """Booleans, True where ``data`` is not null."""
    return _select.is_valid(data)


def fill_null(data: Array | ChunkedArray, fill_value: Any) -> Any:
    """``data`` with its nulls replaced by ``fill_value``."""
    _check(data)
    return data.fill_null(fill_value)  # type: ignore[union-attr]


def cast(data: Array | ChunkedArray, target_type: Any, safe: bool = True) -> Any:
    """``data`` as ``target_type`` (safe by default: overflow or truncation names the row)."""
    if isinstance(data, ChunkedArray):
        return data.cast(target_type, safe=safe)
    return _cast(data, target_type, safe=safe)


def sort_indices(
    data: Any, sort_keys: str | Sequence[tuple[str, str]] | None = None, order: str = "ascending"
) -> Array:
    """The row order that sorts ``data`` (stable; nulls last): an Array or ChunkedArray in
    ``order``, or a batch or table by ``sort_keys`` (a name or ``[(name, order), ...]``)."""
    _check(data)
    if isinstance(data, (RecordBatch, Table)):
        keys = _sort_spec(sort_keys if sort_keys is not None else data.column_names[0])
        cols = [data.column(name) for name, _ in keys]
        cols = [c.combine_chunks() if isinstance(c, ChunkedArray) else c for c in cols]
        return from_numpy(_select.sort_indices(cols, [o for _, o in keys]))
    arr = data.combine_chunks() if isinstance(data, ChunkedArray) else data
    return from_numpy(_select.sort_indices([arr], [order]))
