"""pandas <-> quiver record batches, built with numpy (pyarrow is never involved).

Not an Arrow spec format: the conversion rules follow pyarrow's ``to_pandas`` /
``from_pandas`` so that results look the same.

To pandas (:func:`batch_to_pandas`, for a RecordBatch or a Table):

- numeric and temporal columns without nulls are zero-copy numpy views of the Arrow buffers;
- with nulls: integers become float64 with NaN, floats NaN, timestamps/durations NaT
  (the rule of :meth:`quiver.array.base.Array.to_numpy`);
- timestamps with a time zone become tz-aware ``datetime64`` columns;
- dictionary columns become ``pandas.Categorical`` (null index -> code -1);
- everything else becomes an object column of Python values.

From pandas (:func:`batch_from_pandas`): numpy columns are wrapped without copying (float
NaN and NaT become nulls, as with pyarrow's ``from_pandas``); pandas' masked dtypes
(``Int64``, ``boolean``, ``Float64``) keep their mask; ``Categorical`` becomes a dictionary
column; tz-aware datetimes become timestamps with that zone; strings and objects are built
from their Python values.  The index is dropped unless ``preserve_index=True``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import types as t
from ..array.base import Array, make_array
from ..errors import ArrowTypeError, NotSupported


def _pandas() -> Any:
    try:
        import pandas as pd
    except ImportError:
        raise NotSupported("pandas is not installed; install pandas to convert") from None
    return pd


def _column_to_pandas(pd: Any, col: Array) -> Any:
    st = t.storage_of(col.type)
    if isinstance(st, t.DictionaryType):
        dictionary = col.dictionary
        index_array = make_array(
            st.index_type, len(col), col.buffers, (), col.null_count, col.offset
        )
        values = index_array.to_numpy(zero_copy_only=False)
        if index_array.null_count:
            values = np.where(np.isnan(values), -1, values)
        categories = _column_to_pandas(pd, dictionary) if dictionary is not None else []
        return pd.Categorical.from_codes(
            np.asarray(values, dtype=np.int64), categories=pd.Index(categories),
            ordered=st.ordered,
        )
    values = col.to_numpy(zero_copy_only=False)
    if isinstance(st, t.TimestampType) and st.tz:
        return pd.Series(values).dt.tz_localize("UTC").dt.tz_convert(st.tz)
    return values


def batch_to_pandas(data: Any) -> Any:
    """A ``pandas.DataFrame`` of a quiver RecordBatch or Table (see the module rules).

    >>> import quiver as qv
    >>> from quiver.batch import RecordBatch
    >>> sch = qv.schema([qv.field("a", qv.int64())])
    >>> batch_to_pandas(RecordBatch(sch, [qv.array([1, None, 3])]))["a"].tolist()
    [1.0, nan, 3.0]
    """
    pd = _pandas()
    schema = getattr(data, "schema", None)
    columns = getattr(data, "columns", None)
    if not isinstance(schema, t.Schema) or columns is None:
        raise ArrowTypeError(
            f"expected a quiver RecordBatch or Table, found {type(data).__name__}"
        )
    if len(set(schema.names)) != len(schema.names):
        raise NotSupported("duplicate column names cannot become a DataFrame; rename first")
    out = {}
    for f, col in zip(schema.fields, columns):
        if not isinstance(col, Array):
            col = col.combine_chunks()  # a Table's ChunkedArray
        out[f.name] = _column_to_pandas(pd, col)
    return pd.DataFrame(out, columns=schema.names, copy=False)


def _column_from_pandas(pd: Any, series: Any) -> Array:
    from ..array.build import from_numpy

    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        codes = series.cat.codes.to_numpy()
        index = from_numpy(codes, mask=codes < 0)
        dictionary = _column_from_pandas(pd, pd.Series(series.cat.categories))
        dict_type = t.DictionaryType(index.type, dictionary.type, bool(dtype.ordered))
        return make_array(
            dict_type, len(index), index.buffers, (), index.null_count, index.offset, dictionary
        )
    if isinstance(dtype, pd.DatetimeTZDtype):
        utc = series.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy()
        unit = np.datetime_data(utc.dtype)[0]
        return from_numpy(utc, t.timestamp(unit, str(dtype.tz)))
    if isinstance(dtype, pd.StringDtype):
        values = series.to_numpy(dtype=object, na_value=None)
        return from_numpy(values, t.string())
    numpy_dtype = getattr(dtype, "numpy_dtype", None)
    if numpy_dtype is not None and not isinstance(dtype, np.dtype):
        # pandas' masked extension dtypes (Int64, Float64, boolean): values plus mask
        mask = series.isna().to_numpy()
        fill = False if numpy_dtype.kind == "b" else 0
        values = series.to_numpy(dtype=numpy_dtype, na_value=fill)
        return from_numpy(values, mask=mask if mask.any() else None)
    values = series.to_numpy()
    return from_numpy(values, from_pandas=True)


def batch_from_pandas(df: Any, *, preserve_index: bool = False) -> Any:
    """A quiver RecordBatch from a ``pandas.DataFrame`` (see the module rules).

    >>> import pandas as pd
    >>> b = batch_from_pandas(pd.DataFrame({"x": [1.5, float("nan")], "y": ["a", None]}))
    >>> b.to_pydict()
    {'x': [1.5, None], 'y': ['a', None]}
    """
    pd = _pandas()
    if not isinstance(df, pd.DataFrame):
        raise ArrowTypeError(f"expected a pandas DataFrame, found {type(df).__name__}")
    from .import_ import new_record_batch

    names: list[str] = []
    columns: list[Array] = []
    for i, name in enumerate(df.columns):
        names.append(str(name))
        columns.append(_column_from_pandas(pd, df.iloc[:, i]))
    if preserve_index:
        index = df.index
        for level in range(index.nlevels):
            values = index.get_level_values(level)
            name = values.name if values.name is not None else f"__index_level_{level}__"
            names.append(str(name))
            columns.append(_column_from_pandas(pd, pd.Series(values)))
    schema = t.schema([t.field(n, col.type) for n, col in zip(names, columns)])
    return new_record_batch(schema, columns, len(df))
