"""The public factories that accept foreign objects: the top of the package.

``quiver.array``, ``quiver.chunked_array``, ``quiver.record_batch``, ``quiver.table`` and
``quiver.schema`` take what the layers below take (quiver objects, Python values, numpy
arrays) and also what other libraries hand over: anything speaking the Arrow PyCapsule
protocol (``__arrow_c_schema__``, ``__arrow_c_array__``, ``__arrow_c_stream__``: pyarrow,
polars, duckdb, nanoarrow, ...), raw capsules, and pandas objects.  Foreign objects are
turned into quiver objects here, through :mod:`quiver.interop`, and nowhere below: the
types, arrays and batches know only their own kinds (the PyCapsule *export* methods are
defined on the classes themselves).

Zero-copy where the producer allows it: imported buffers are views of the producer's memory.

>>> import pyarrow as pa
>>> array(pa.array([1, None, 3])).to_pylist()
[1, None, 3]
>>> schema(pa.schema([("a", pa.int8())])).names
['a']
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from . import batch as _batch
from . import types as t
from .array import build as _build
from .array.base import Array
from .errors import ArrowInvalidArgument, NotSupported
from .interop import import_array, import_batch, import_schema, import_table
from .interop.numpy_pandas import array_from_pandas, batch_from_pandas

__all__ = ["array", "chunked_array", "record_batch", "schema", "table"]

_PANDAS_ARRAYS = ("Series", "Index", "DatetimeIndex", "CategoricalIndex", "RangeIndex")


def _is_pandas(obj: Any, names: tuple[str, ...]) -> bool:
    cls = type(obj)
    return cls.__module__.startswith("pandas") and cls.__name__ in names


# what quiver builds itself, decided without asking for protocol attributes
_NATIVE = frozenset({list, tuple, np.ndarray})


def _is_foreign_array(values: Any) -> bool:
    return not isinstance(values, Array) and (
        hasattr(values, "__arrow_c_array__") or _is_pandas(values, _PANDAS_ARRAYS)
    )


def array(values: Any, type: t.DataType | None = None, **options: Any) -> Array:
    """An Arrow array from Python values, a numpy array, a pandas Series or Index, or any
    object with ``__arrow_c_array__`` (pyarrow's ``pa.array``).

    Python and numpy values follow :func:`quiver.array.build.array`, whose keyword
    ``options`` this takes (``type`` inferred when None; ``mask``, True = null;
    ``from_pandas`` makes NaN null).  Arrays from other libraries are imported zero-copy
    and must already have ``type`` when one is given; pandas objects follow the rules of
    ``record_batch(df)`` (NaN and NA are nulls).

    >>> import pandas as pd
    >>> array(pd.Series([1.0, None])).to_pylist()
    [1.0, None]
    """
    if type is not None and not isinstance(type, t.DataType):
        return _build.array(values, type, **options)  # its error
    if values.__class__ in _NATIVE or isinstance(values, Array) or not _is_foreign_array(values):
        return _build.array(values, type, **options)
    _BUILD_SIGNATURE.bind(values, type, **options)  # an unknown option: the call's TypeError
    if hasattr(values, "__arrow_c_array__"):  # pyarrow, polars, nanoarrow, ... arrays
        imported = import_array(values, type)
        if type is not None and imported.type != type:
            raise NotSupported(
                f"casting arrays is not supported: found {imported.type}, asked for {type}"
            )
        return imported
    # pandas: categoricals, tz-aware datetimes, masked and str dtypes
    converted = array_from_pandas(values)[0]
    if type is None or converted.type == type:
        return converted
    return converted.cast(type)  # type: ignore[attr-defined]


# the parameters are those of the builder (one list, kept there): inspect and help() show them
_BUILD_SIGNATURE = inspect.signature(_build.array)
array.__signature__ = _BUILD_SIGNATURE  # type: ignore[attr-defined]


def _columns(data: Any) -> Any:
    """``data`` with its foreign columns (other libraries' arrays, pandas Series) imported."""
    if isinstance(data, Mapping):
        if not any(_is_foreign_array(v) for v in data.values()):
            return data
        return {k: array(v) if _is_foreign_array(v) else v for k, v in data.items()}
    if isinstance(data, (list, tuple)) and any(_is_foreign_array(v) for v in data):
        return [array(v) if _is_foreign_array(v) else v for v in data]
    return data


def chunked_array(arrays: Sequence[Any], type: t.DataType | None = None) -> _batch.ChunkedArray:
    """A ChunkedArray from Arrays, Python lists built with ``type``, or other libraries'
    arrays (imported zero-copy).

    >>> import pyarrow as pa
    >>> chunked_array([pa.array([1]), [2, 3]]).to_pylist()
    [1, 2, 3]
    """
    return _batch.chunked_array([array(a, type) if _is_foreign_array(a) else a for a in arrays],
                                type)


def _is_pandas_frame(data: Any) -> bool:
    return _is_pandas(data, ("DataFrame",))


def _is_arrow_data(data: Any) -> bool:
    return not isinstance(data, (_batch.RecordBatch, _batch.Table)) and (
        hasattr(data, "__arrow_c_array__") or hasattr(data, "__arrow_c_stream__")
    )


def _frame_batch(
    df: Any, names: Sequence[str] | None, schema: t.Schema | None, metadata: Any
) -> _batch.RecordBatch:
    """The batch of a pandas DataFrame: ``schema`` as pyarrow's ``from_pandas`` takes it;
    ``names`` and ``metadata`` refused (pyarrow's ``pa.table`` refuses them too: the frame
    names the columns, a schema carries metadata)."""
    if names is not None or metadata is not None:
        given = "names" if names is not None else "metadata"
        raise ArrowInvalidArgument(
            f"expected no names= or metadata= with a pandas DataFrame (the frame names the "
            f"columns; a schema= carries metadata), found {given}="
        )
    return batch_from_pandas(df, schema=schema)


def record_batch(
    data: Any,
    names: Sequence[str] | None = None,
    schema: t.Schema | None = None,
    metadata: Any = None,
) -> _batch.RecordBatch:
    """A RecordBatch from a dict of columns, a list of arrays plus names, a list of rows, a
    pandas DataFrame, or any object speaking the Arrow PyCapsule protocol (zero-copy).

    >>> import pyarrow as pa
    >>> record_batch(pa.record_batch({"a": [1, 2]})).num_rows
    2
    """
    if _is_pandas_frame(data):
        return _frame_batch(data, names, schema, metadata)
    if _is_arrow_data(data):
        return import_batch(data)
    return _batch.record_batch(_columns(data), names, schema, metadata)


def table(
    data: Any,
    names: Sequence[str] | None = None,
    schema: t.Schema | None = None,
    metadata: Any = None,
) -> _batch.Table:
    """A Table from a dict of columns, arrays plus names, rows, record batches, a pandas
    DataFrame, or any object speaking the Arrow PyCapsule protocol (zero-copy).

    >>> import pyarrow as pa
    >>> table(pa.table({"a": [1, 2]})).num_rows
    2
    """
    if _is_pandas_frame(data):
        return _batch.Table.from_batches([_frame_batch(data, names, schema, metadata)])
    if _is_arrow_data(data):
        return import_table(data)
    return _batch.table(_columns(data), names, schema, metadata)


def schema(fields: Any, metadata: Any = None) -> t.Schema:
    """A schema from Field objects, (name, type) pairs, a mapping, or any object with
    ``__arrow_c_schema__`` (a pyarrow or polars schema, ...).

    >>> import pyarrow as pa
    >>> schema(pa.schema([("a", pa.int32())])).field("a").type
    DataType(int32)
    """
    if not isinstance(fields, t.Schema) and hasattr(fields, "__arrow_c_schema__"):
        imported = import_schema(fields)
        return imported if metadata is None else imported.with_metadata(metadata)
    return t.schema(fields, metadata)
