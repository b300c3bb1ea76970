"""pandas to quiver arrays and record batch parts, built with numpy (pyarrow does no work
here); the other way is :mod:`quiver.pandas_out`, whose module docstring gives the pandas
metadata convention both follow.

From pandas (:func:`frame_parts`, :func:`array_from_pandas`):

- numpy columns are viewed, not copied; float NaN and NaT become nulls;
- the masked dtypes (``Int64``, ``boolean``, ``Float64``, ...) keep their mask, and the
  metadata records the dtype so that it comes back;
- ``Categorical`` becomes a dictionary column; tz-aware datetimes a timestamp with that zone;
- string columns: those pandas holds as Arrow memory (the pandas 3 ``str`` dtype with
  pyarrow storage) are taken zero-copy through pandas' ``__arrow_c_stream__`` (the Arrow
  PyCapsule protocol: the memory is already Arrow, nothing is converted); others are
  encoded from their Python values;
- the index: ``preserve_index=None`` (default) stores a RangeIndex in the metadata only and
  any other index as columns (``__index_level_0__`` when unnamed); True always as columns;
  False drops it.

:func:`frame_parts` returns the schema (with the ``pandas`` metadata), the columns and the
row count; ``RecordBatch.from_pandas`` builds the batch of them.  pandas loads on the first
conversion, ctypes only for a column pandas holds as Arrow memory.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from . import types as t
from ._version import __version__
from .array.base import Array, make_array
from .array.build import MixedKinds, array, bitmap_of, build_binary, from_numpy
from .array.infer import tz_name
from .cdata.import_array import import_array
from .errors import ArrowInvalid, ArrowKeyError, ArrowTypeError
from .hooks import register
from .pandas_out import PANDAS_KEY, pandas_module


def _arrow_backed(pd: Any, dtype: Any) -> bool:
    """Whether pandas holds this column as Arrow memory already (str/string with pyarrow
    storage, or an ArrowDtype)."""
    if getattr(dtype, "storage", None) == "pyarrow":
        return True
    arrow_dtype = getattr(pd, "ArrowDtype", None)
    return arrow_dtype is not None and isinstance(dtype, arrow_dtype)


def _numpy_name(dtype: Any) -> str:
    return str(dtype)


def array_from_pandas(series: Any,
                      type: t.DataType | None = None) -> tuple[Array, dict[str, Any]]:
    """A quiver Array of a ``pandas.Series`` (or Index) and its pandas metadata entry
    (``pandas_type``, ``numpy_type``, ``metadata``), by the rules of the module docstring.
    ``type`` (a schema's field type) builds an object column's Python values with that
    type, as pyarrow does; other columns are built by their dtype (the caller casts).

    >>> import pandas as pd
    >>> arr, meta = array_from_pandas(pd.Series([1, None], dtype="Int64"))
    >>> arr.to_pylist(), meta["numpy_type"]
    ([1, None], 'Int64')
    """
    pd = pandas_module()
    if isinstance(series, pd.Index):
        series = pd.Series(series, copy=False)
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        codes = series.cat.codes.to_numpy()
        index = from_numpy(codes, mask=codes < 0)
        dictionary, _ = array_from_pandas(pd.Series(series.cat.categories, copy=False))
        dict_type = t.DictionaryType(index.type, dictionary.type, bool(dtype.ordered))
        arr = make_array(dict_type, len(index), index.buffers, (), index.null_count,
                         index.offset, dictionary)
        return arr, _entry("categorical", str(codes.dtype), {
            "num_categories": len(series.cat.categories), "ordered": bool(dtype.ordered)})
    if isinstance(dtype, pd.DatetimeTZDtype):
        utc = series.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy()
        unit = np.datetime_data(utc.dtype)[0]
        zone = _zone(dtype.tz)
        arr = from_numpy(utc, t.timestamp(unit, zone))
        return arr, _entry("datetimetz", str(utc.dtype), {"timezone": zone})
    if _arrow_backed(pd, dtype) and hasattr(series, "__arrow_c_stream__"):
        # the extension array's own pyarrow data (``__arrow_array__``, pandas' protocol
        # for pyarrow) imports in a third of the time of the Series' C stream, which
        # pandas builds anew on every call; the stream serves anything else
        data = getattr(series.array, "__arrow_array__", None)
        data = data() if data is not None else None
        arr = import_array(data if hasattr(data, "__arrow_c_stream__") else series)
        is_str = isinstance(dtype, pd.StringDtype)
        if is_str:  # (pyarrow's entry: the logical type of what it holds, large_string)
            numpy_type = "string" if dtype.na_value is pd.NA else "str"
            return arr, _entry(_logical_type(arr.type), numpy_type)
        # an ArrowDtype: pyarrow's entry (the logical type, and the dtype's name, which
        # to_pandas turns back into the ArrowDtype)
        return arr, _entry(_logical_type(arr.type), str(dtype))
    if isinstance(dtype, pd.StringDtype):
        values = series.to_numpy(dtype=object, na_value=None)
        arr = from_numpy(values, t.string())
        numpy_type = "string" if dtype.na_value is pd.NA else "str"
        return arr, _entry(_logical_type(arr.type) if numpy_type == "string" else "object",
                           numpy_type)
    numpy_dtype = getattr(dtype, "numpy_dtype", None)
    if numpy_dtype is not None and not isinstance(dtype, np.dtype):
        # pandas' masked extension dtypes (Int64, Float64, boolean): values plus mask;
        # BaseMaskedArray keeps both as numpy arrays (_data, _mask), viewed without a copy
        masked = series.array
        values = getattr(masked, "_data", None)
        mask = getattr(masked, "_mask", None)
        if not isinstance(values, np.ndarray) or not isinstance(mask, np.ndarray):
            mask = series.isna().to_numpy()
            fill = False if numpy_dtype.kind == "b" else 0
            values = series.to_numpy(dtype=numpy_dtype, na_value=fill)
        arr = from_numpy(values, mask=mask if mask.any() else None)
        pandas_type = "bool" if numpy_dtype.kind == "b" else str(numpy_dtype)
        return arr, _entry(pandas_type, str(dtype))
    values = series.to_numpy()
    if values.dtype == object:
        arr = _objects_from_pandas(values, type)
        st = t.storage_of(arr.type)
        meta = {"precision": st.precision, "scale": st.scale} if isinstance(
            st, t.DecimalType) else None
        return arr, _entry(_logical_type(arr.type), "object", meta)
    arr = from_numpy(values, from_pandas=True)
    return arr, _entry(_logical_type(arr.type), str(values.dtype))


def _logical_type(dtype: t.DataType) -> str:
    """The ``pandas_type`` pyarrow's metadata gives a column of ``dtype`` that pandas holds
    as an ArrowDtype (pyarrow's ``get_logical_type``)."""
    st = t.storage_of(dtype)
    if isinstance(st, t.FloatingPointType):
        return f"float{st.width}"
    if isinstance(st, (t.StringType, t.BinaryType)):
        return "object" if st.large else ("unicode" if isinstance(st, t.StringType) else "bytes")
    simple = [(t.NullType, "empty"), (t.BoolType, "bool"), (t.IntegerType, None),
              (t.DateType, "date"), (t.TimeType, "time"), (t.DecimalType, "decimal"),
              (t.FixedSizeBinaryType, "bytes"), (t.DictionaryType, "categorical")]
    for cls, name in simple:
        if isinstance(st, cls):
            return name or str(st)
    if isinstance(st, t.TimestampType):
        return "datetimetz" if st.tz else "datetime"
    if isinstance(st, t.ListType):
        return f"list[{_logical_type(st.value_type)}]"
    return "object"


def _zone(tz: Any) -> str:
    """The Arrow time zone string of a pandas zone (pyarrow's): the name of a named zone,
    ``+HH:MM`` of a fixed offset, ``UTC`` of dateutil's ``tzutc()`` too."""
    if type(tz).__name__ == "tzutc":  # dateutil's UTC: no key, a zero offset
        return "UTC"
    filename = getattr(tz, "_filename", None)  # dateutil's zone files: named by their path
    if type(tz).__name__ == "tzfile" and isinstance(filename, str) and "zoneinfo/" in filename:
        return filename.rsplit("zoneinfo/", 1)[1]
    return tz_name(tz)


def _objects_from_pandas(values: np.ndarray, type: t.DataType | None = None) -> Array:
    """An object column, of ``type`` or the inferred one: NaN and pd.NA are nulls (pyarrow's
    ``from_pandas``)."""
    pd = pandas_module()
    nulls = pd.isna(values)
    if type is not None:
        values = values.copy()
        values[nulls] = None
        return array(values.tolist(), type, from_pandas=True)  # (NaN nested in values too)
    if not nulls.any():
        return array(values.tolist(), from_pandas=True)
    # strings with nulls: the present values are joined as a column without nulls (one
    # join, no per-value None test) and the offsets spread over the null slots
    valid = ~nulls
    present = values[valid].tolist()
    if present and present[0].__class__ is str:
        try:
            dense = build_binary(present, t.string(), strict=True)
        except (MixedKinds, ArrowInvalid):  # other kinds, or more than int32 offsets
            dense = None
        if dense is not None:
            _, offsets, data = dense.buffers
            ends = offsets.view("<i4")[np.cumsum(valid)]
            spread = np.empty(len(values) + 1, "<i4")
            spread[0] = 0
            spread[1:] = ends
            bitmap, null_count = bitmap_of(valid)
            return make_array(t.string(), len(values), (bitmap, spread.view(np.uint8), data),
                              (), null_count)
    values = values.copy()
    values[nulls] = None
    return array(values.tolist(), from_pandas=True)


def _entry(pandas_type: str, numpy_type: str, metadata: Any = None) -> dict[str, Any]:
    return {"pandas_type": pandas_type, "numpy_type": numpy_type, "metadata": metadata}


def _label(name: Any) -> Any:
    """A column or index label as the metadata stores it (pyarrow's rule): text as it is,
    bytes decoded, a tuple (a MultiIndex label) as the text of the tuple of its parts'
    labels, None and NaN as they are, anything else ``str``."""
    if isinstance(name, str):
        return name
    if isinstance(name, bytes):
        return name.decode("utf-8")
    if isinstance(name, tuple):
        return str(tuple(_label(part) for part in name))
    if name is None or (isinstance(name, float) and name != name):
        return name
    return str(name)


def _index_field_name(name: Any, level: int, taken: list[Any]) -> str:
    """The field name of an index level (pyarrow's rule): its label, unless it has none or
    the label is taken by a column or an earlier level; then ``__index_level_<j>__``, j the
    first from the level's position that is not taken."""
    label = _label(name)
    if label is not None and label not in taken:
        return str(label)
    j = level
    while f"__index_level_{j}__" in taken:
        j += 1
    return f"__index_level_{j}__"


def frame_parts(
    df: Any, *, preserve_index: bool | None = None, schema: t.Schema | None = None
) -> tuple[t.Schema, list[Array], int]:
    """The schema, columns and row count of a record batch of a ``pandas.DataFrame`` (see
    the module rules), the schema with pyarrow's ``pandas`` metadata so that the frame
    comes back as it was.

    A ``schema`` (pyarrow's ``from_pandas(df, schema=...)``) chooses the columns and index
    levels by its field names, in its order, and their types (each column cast, safely);
    its fields and metadata are kept, the ``pandas`` key added.

    >>> import pandas as pd
    >>> schema, columns, n = frame_parts(pd.DataFrame({"x": [1.5, float("nan")]}))
    >>> schema.names, columns[0].to_pylist(), n
    (['x'], [1.5, None], 2)
    """
    pd = pandas_module()
    if not isinstance(df, pd.DataFrame):
        raise ArrowTypeError(f"expected a pandas DataFrame, found {type(df).__name__}")
    if schema is not None and not isinstance(schema, t.Schema):
        raise ArrowTypeError(f"expected a quiver Schema, found {type(schema).__name__}")
    names: list[str] = []
    columns: list[Array] = []
    entries: list[dict[str, Any]] = []
    labels: list[Any] = []
    index = df.index
    index_columns: list[Any] = []
    if schema is not None:
        for f in schema:
            series, is_index = _by_schema_name(pd, df, f.name, preserve_index)
            arr, entry = array_from_pandas(series, f.type)
            arr = _as_field(arr, f)
            label = _label(series.name) if is_index else f.name
            names.append(f.name)
            columns.append(arr)
            entries.append({"name": label, "field_name": f.name, **entry})
            if is_index:
                index_columns.append(f.name)
    else:
        for name, series in df.items():  # by position, duplicate names included
            arr, entry = array_from_pandas(series)
            label = _label(name)
            labels.append(label)
            names.append(str(label))
            columns.append(arr)
            entries.append({"name": label, "field_name": str(label), **entry})
    # (with a schema, the index levels kept are those the schema names, taken above)
    keep_range = preserve_index is None and isinstance(index, pd.RangeIndex)
    by_frame = schema is None
    if by_frame and keep_range:
        index_columns.append({"kind": "range", "name": _label(index.name),
                              "start": int(index.start), "stop": int(index.stop),
                              "step": int(index.step)})
    elif by_frame and preserve_index is not False:
        for level in range(index.nlevels):
            values = index.get_level_values(level)
            # (compared with the labels as stored, so that an index named 0 and a column
            # named 0 get two names; pyarrow compares the raw name and gives both '0')
            field_name = _index_field_name(values.name, level, labels + index_columns)
            arr, entry = array_from_pandas(values)
            names.append(field_name)
            columns.append(arr)
            entries.append({"name": _label(values.name), "field_name": field_name, **entry})
            index_columns.append(field_name)
    column_indexes = []
    for level in range(df.columns.nlevels):
        values = df.columns.get_level_values(level)
        kind = values.dtype.kind
        textual = kind in "OUS" or isinstance(values.dtype, pd.StringDtype)
        inferred = pd.api.types.infer_dtype(values) if textual else str(values.dtype)
        textual = inferred == "string"
        column_indexes.append({
            "name": _label(values.name), "field_name": _label(values.name),
            "pandas_type": "unicode" if textual else inferred,
            "numpy_type": "object" if kind in "OUS" or textual else str(values.dtype),
            "metadata": {"encoding": "UTF-8"} if textual else None,
        })
    meta = {
        "index_columns": index_columns,
        "column_indexes": column_indexes,
        "columns": entries,
        "attributes": {},
        "creator": {"library": "quiver", "version": _version()},
        "pandas_version": pd.__version__,
    }
    pandas_meta = {PANDAS_KEY: json.dumps(meta).encode()}
    if schema is not None:
        return schema.with_metadata({**(schema.metadata or {}), **pandas_meta}), columns, len(df)
    schema = t.schema(
        [t.field(n, col.type) for n, col in zip(names, columns)], metadata=pandas_meta
    )
    return schema, columns, len(df)


def _by_schema_name(
    pd: Any, df: Any, name: str, preserve_index: bool | None
) -> tuple[Any, bool]:
    """The column, else the index level, a schema's field names (pyarrow's lookup), and
    whether it is an index level."""
    if name in df.columns:
        series = df[name]
        if isinstance(series, pd.DataFrame):
            raise ArrowInvalid(f"expected one column named {name!r}, found {series.shape[1]}")
        return series, False
    index = df.index
    level: Any = name
    unnamed = [f"__index_level_{i}__" for i, n in enumerate(index.names) if n is None]
    if name in unnamed:  # an unnamed level, by the field name from_pandas gives it
        level = int(name[len("__index_level_"):-2])
    elif name not in [n for n in index.names if n is not None]:
        raise ArrowKeyError(
            f"expected the schema's field {name!r} among the columns or index levels, "
            "found none"
        )
    if preserve_index is False:
        raise ArrowInvalid(
            f"expected no index level in the schema with preserve_index=False, found {name!r}"
        )
    if preserve_index is None and isinstance(index, pd.RangeIndex):
        raise ArrowInvalid(
            f"expected a column or an index stored as a column for the schema's field "
            f"{name!r}, found a RangeIndex (kept in the metadata only; preserve_index=True "
            "stores it)"
        )
    return index.get_level_values(level), True


def _as_field(arr: Array, f: t.Field) -> Array:
    """``arr`` cast to the field's type, refused when the field is not nullable and
    ``arr`` has nulls (pyarrow's from_pandas with a schema)."""
    if arr.type != f.type:
        _check_text_target(arr.type, f)
        arr = arr.cast(f.type)  # type: ignore[attr-defined]
    if not f.nullable and arr.null_count:
        raise ArrowInvalid(
            f"expected no nulls in the non-nullable field {f.name!r}, found {arr.null_count}"
        )
    return arr


_TEXT = (t.StringType, t.BinaryType, t.StringViewType, t.BinaryViewType,
         t.FixedSizeBinaryType)


def _check_text_target(have: t.DataType, f: t.Field) -> None:
    """A schema's text or binary field takes text or binary columns only, as pyarrow's
    ``from_pandas(df, schema=...)`` converts the column's values to the field's type (a
    number or bool is no text; ``compute.cast`` would spell it)."""
    want = t.storage_of(f.type)
    st = t.storage_of(have)
    if isinstance(st, t.DictionaryType):
        st = st.value_type
    if isinstance(want, _TEXT) and not isinstance(st, (*_TEXT, t.NullType)):
        raise ArrowTypeError(
            f"expected a text or binary column for the schema's field {f.name!r} of type "
            f"{f.type}, found {have}"
        )


def _version() -> str:
    return __version__


# the hooks this module answers for the layers below (quiver.hooks)
register("pandas.frame_parts", frame_parts)
