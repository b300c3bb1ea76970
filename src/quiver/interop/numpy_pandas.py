"""pandas <-> quiver record batches and arrays, built with numpy (pyarrow does no work here).

Not an Arrow spec format: the rules follow pyarrow's ``to_pandas`` / ``from_pandas`` and its
pandas metadata convention (the ``pandas`` key of the schema metadata, a JSON document with
``index_columns``, ``column_indexes`` and one entry per column giving its ``pandas_type``
and ``numpy_type``), so that files round-trip between quiver, pyarrow and pandas:

From pandas (:func:`batch_from_pandas`, :func:`array_from_pandas`):

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

To pandas (:func:`batch_to_pandas`, :func:`array_to_pandas`):

- numeric and temporal columns without nulls are zero-copy (read-only) numpy views;
- with nulls: integers become float64 with NaN, floats NaN, timestamps NaT, booleans
  objects, unless the metadata (or ``types_mapper``) names a masked dtype;
- strings become the pandas string dtype the metadata names (pandas 3: ``str``), built
  from one decode of the data buffer; dictionaries become ``Categorical``; dates become
  ``datetime.date`` objects unless ``date_as_object=False``; other types object columns;
- the index and the column index names are rebuilt from the metadata.
"""

from __future__ import annotations

import ast
import itertools
import json
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import types as t
from .._version import __version__
from ..array.base import Array, make_array
from ..array.build import _bitmap, _build_binary, _MixedKinds, array, from_numpy
from ..array.cast import _offsets_and_data
from ..array.select import _null_mask
from ..errors import ArrowInvalid, ArrowTypeError, NotSupported
from ..layout import storage_numpy_dtype
from .import_ import import_array, new_record_batch

_PANDAS_KEY = b"pandas"


def _pandas() -> Any:
    try:
        import pandas as pd
    except ImportError:
        raise NotSupported("pandas is not installed; install pandas to convert") from None
    return pd


# --------------------------------------------------------------------------------------
# to pandas


def _strings(col: Array) -> np.ndarray:
    """An object array of Python str (None for nulls) from a string-like array, with one
    decode of the data buffer; only the creation of each str is per value."""
    st = t.storage_of(col.type)
    if isinstance(st, t.StringViewType):
        offsets, data = _offsets_and_data(col)
    else:
        w = 8 if st.large else 4  # type: ignore[attr-defined]
        n = len(col)
        if n == 0:
            return np.empty(0, dtype=object)
        raw = col.buffers[1][col.offset * w : (col.offset + n + 1) * w].view(f"<i{w}")  # type: ignore[index]
        offsets = raw.astype(np.int64)
        data = col.buffers[2] if col.buffers[2] is not None else np.zeros(0, np.uint8)
        data = data[int(offsets[0]) : int(offsets[-1])]
        offsets = offsets - offsets[0]
    text = bytes(data).decode("utf-8", "replace")
    if len(text) != len(data):  # multi-byte characters: character offsets differ
        continuation = (data & 0xC0) == 0x80
        before = np.zeros(len(data) + 1, dtype=np.int64)
        np.cumsum(continuation, out=before[1:])
        offsets = offsets - before[offsets]
    bounds = offsets.tolist()
    out = np.empty(len(bounds) - 1, dtype=object)
    out[:] = [text[a:b] for a, b in itertools.pairwise(bounds)]
    valid = col.is_valid_mask()
    if valid is not None:
        out[~valid] = None
    return out


def _arrow_strings(pd: Any, col: Array, target: Any) -> Any:
    """The column as pandas' own Arrow-backed string array, handed over through the
    Arrow PyCapsule protocol without a copy, when that is the dtype asked for (pandas 3's
    ``str`` keeps its strings in Arrow memory); None otherwise."""
    if target is object or not hasattr(pd.Series, "from_arrow"):
        return None
    if getattr(target, "storage", None) != "pyarrow":
        return None
    try:
        handed = pd.Series.from_arrow(col).array
    except (TypeError, ValueError, ImportError):
        return None
    return handed if handed.dtype == target else None


def _string_dtype(pd: Any, numpy_type: str | None) -> Any:
    """The pandas dtype a string column becomes: the metadata's, else pandas' default."""
    if numpy_type == "string":
        return pd.StringDtype()
    if numpy_type == "object":
        return object
    if numpy_type == "str" or _infers_str(pd):
        return pd.StringDtype(na_value=np.nan)
    return object


def _infers_str(pd: Any) -> bool:
    """Whether this pandas makes strings its ``str`` dtype (pandas 3; pandas 2 when
    ``future.infer_string`` is on)."""
    major = int(pd.__version__.split(".")[0])
    if major >= 3:
        return True
    return bool(getattr(pd.options.future, "infer_string", False))


_MASKED = {"Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64",
           "Float32", "Float64", "boolean"}


def _column_to_pandas(
    pd: Any,
    col: Array,
    meta: dict[str, Any] | None,
    options: dict[str, Any],
) -> Any:
    """One column as a numpy array or pandas extension array."""
    dtype = col.type
    mapper: Callable[[t.DataType], Any] | None = options.get("types_mapper")
    if mapper is not None:
        target = mapper(dtype)
        if target is not None:
            values = col.to_numpy(zero_copy_only=False) if t.storage_of(dtype) != t.string() \
                else _strings(col)
            if isinstance(values, np.ndarray) and values.dtype.kind == "f" and col.null_count:
                values = values.astype(object)
                values[~col.is_valid_mask()] = None  # type: ignore[operator]
            return pd.array(values, dtype=target)
    numpy_type = meta.get("numpy_type") if meta else None
    st = t.storage_of(dtype)
    if isinstance(st, t.DictionaryType):
        # the indices are the codes: viewed in their own width (signed, as pandas wants),
        # nulls set to -1 in one pass
        width = st.index_type.bit_width  # type: ignore[attr-defined]
        codes = _filled(make_array(st.index_type, len(col), col.buffers, (), col.null_count,
                                   col.offset))
        if not st.index_type.signed:  # type: ignore[attr-defined]
            codes = codes.astype(f"<i{min(2 * width // 8, 8)}")
        if col.null_count:
            codes = np.where(_null_mask(col), codes.dtype.type(-1), codes)
        dictionary = col.dictionary
        categories = _column_to_pandas(pd, dictionary, None, {}) if dictionary is not None \
            else []
        dtype = pd.CategoricalDtype(pd.Index(categories), ordered=st.ordered)
        if len(codes) and (int(codes.max(initial=-1)) >= len(dtype.categories)):
            raise ArrowInvalid(
                f"expected dictionary indices below {len(dtype.categories)}, found "
                f"{int(codes.max())}"
            )
        return pd.Categorical.from_codes(codes, dtype=dtype, validate=False)
    if isinstance(st, (t.StringType, t.StringViewType)):
        target = _string_dtype(pd, numpy_type)
        handed = _arrow_strings(pd, col, target)
        if handed is not None:
            return handed
        values = _strings(col)
        return values if target is object else pd.array(values, dtype=target)
    if isinstance(st, (t.IntegerType, t.FloatingPointType, t.BoolType)) and (
        numpy_type in _MASKED
    ):
        mask = col.is_valid_mask()
        if isinstance(st, t.BoolType):
            data = getattr(col, "storage", col).to_numpy_bool()  # type: ignore[attr-defined]
        else:
            data = _filled(col)
        nulls = np.zeros(len(col), bool) if mask is None else ~mask
        return pd.array(_masked(pd, numpy_type, data, nulls), dtype=numpy_type)
    if isinstance(st, t.DateType):
        if options.get("date_as_object", True):
            return _objects(col)
        return col.to_numpy(zero_copy_only=False).astype("M8[ms]")  # pyarrow's unit
    if isinstance(st, t.TimestampType):
        if options.get("timestamp_as_object", False):
            return _objects(col)
        values = col.to_numpy(zero_copy_only=False)
        if st.tz:
            return pd.arrays.DatetimeArray._from_sequence(
                values, dtype=pd.DatetimeTZDtype(unit=st.unit, tz="UTC")
            ).tz_convert(st.tz)
        return values
    if isinstance(st, t.BoolType) and col.null_count:
        return _objects(col)
    if isinstance(st, (t.TimeType, t.DecimalType)):
        return _objects(col)
    return col.to_numpy(zero_copy_only=False)


def _filled(col: Array) -> np.ndarray:
    """The values of a numeric column with nulls (whatever their slots hold)."""
    return col._fixed_values_view(storage_numpy_dtype(t.storage_of(col.type)))  # type: ignore[arg-type]


def _masked(pd: Any, numpy_type: str, data: np.ndarray, nulls: np.ndarray) -> Any:
    """A pandas masked array (Int64, Float64, boolean, ...) of ``data`` and ``nulls``."""
    if numpy_type == "boolean":
        return pd.arrays.BooleanArray(data.astype(bool), nulls)
    npdt = np.dtype(numpy_type.lower())
    values = data.astype(npdt)
    if npdt.kind == "f":
        return pd.arrays.FloatingArray(values, nulls)
    return pd.arrays.IntegerArray(values, nulls)


def _objects(col: Array) -> np.ndarray:
    values = col.to_pylist()
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _pandas_metadata(schema: t.Schema) -> dict[str, Any] | None:
    raw = schema.metadata.get(_PANDAS_KEY) if schema.metadata else None
    if raw is None:
        return None
    try:
        meta = json.loads(raw)
    except ValueError:
        return None
    return meta if isinstance(meta, dict) else None


def _index_from(pd: Any, meta: dict[str, Any], frame: Any, num_rows: int) -> tuple[Any, list]:
    """The index the metadata describes and the column names it used (to drop)."""
    used: list[str] = []
    levels = []
    names = []
    by_field = {c.get("field_name"): c for c in meta.get("columns", []) if isinstance(c, dict)}
    for entry in meta.get("index_columns", []):
        if isinstance(entry, str):
            if entry not in frame.columns:
                return None, []
            levels.append(frame[entry])
            used.append(entry)
            name = by_field.get(entry, {}).get("name", entry)
            names.append(None if name is None or str(name).startswith("__index_level_")
                         else name)
        elif isinstance(entry, dict) and entry.get("kind") == "range":
            start, stop, step = entry.get("start", 0), entry.get("stop", 0), entry.get("step", 1)
            rng = pd.RangeIndex(start, stop, step, name=entry.get("name"))
            if len(rng) != num_rows:  # the table was sliced or filtered: pyarrow's fallback
                rng = pd.RangeIndex(num_rows, name=entry.get("name"))
            levels.append(rng)
            names.append(entry.get("name"))
    if not levels:
        return None, []
    if len(levels) == 1:
        level = levels[0]
        index = level if isinstance(level, pd.RangeIndex) else pd.Index(level, name=names[0])
        return index.rename(names[0]), used
    arrays = [lv if isinstance(lv, pd.RangeIndex) else pd.Index(lv) for lv in levels]
    return pd.MultiIndex.from_arrays(arrays, names=names), used


def batch_to_pandas(
    data: Any,
    *,
    types_mapper: Callable[[t.DataType], Any] | None = None,
    date_as_object: bool = True,
    timestamp_as_object: bool = False,
    ignore_metadata: bool = False,
    **ignored: Any,
) -> Any:
    """A ``pandas.DataFrame`` of a quiver RecordBatch or Table (see the module rules).

    ``types_mapper`` maps a quiver DataType to a pandas dtype (or None for the default);
    ``split_blocks``, ``self_destruct`` and pyarrow's other memory options are accepted and
    ignored (quiver's columns are already separate, and views are never destroyed).

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
    meta = None if ignore_metadata else _pandas_metadata(schema)
    col_meta = {}
    if meta is not None:
        col_meta = {c.get("field_name", c.get("name")): c for c in meta.get("columns", [])
                    if isinstance(c, dict)}
    options = {
        "types_mapper": types_mapper,
        "date_as_object": date_as_object,
        "timestamp_as_object": timestamp_as_object,
    }
    names = schema.names
    if len(set(names)) != len(names):
        raise NotSupported("duplicate column names cannot become a DataFrame; rename first")
    out = {}
    for f, col in zip(schema.fields, columns):
        if not isinstance(col, Array):
            col = col.combine_chunks()  # a Table's ChunkedArray
        values = _column_to_pandas(pd, col, col_meta.get(f.name), options)
        if isinstance(values, np.ndarray) and values.dtype == object:
            # as pyarrow's blocks: pandas must not infer datetimes or str from objects
            values = pd.Series(values, dtype=object, copy=False)
        out[f.name] = values
    num_rows = getattr(data, "num_rows", 0)
    frame = pd.DataFrame(out, columns=names, copy=False)
    if len(frame) != num_rows:  # a frame without columns still has its rows
        frame = pd.DataFrame(index=pd.RangeIndex(num_rows))
    if meta is None:
        return frame
    index, used = _index_from(pd, meta, frame, num_rows)
    if index is not None:
        frame = frame.drop(columns=used)
        frame.index = index
    # the data columns' original names (non-string labels were stored as strings)
    renames = {fld: c.get("name") for fld, c in col_meta.items()
               if fld in frame.columns and c.get("name") is not None and c.get("name") != fld}
    if renames and not any(isinstance(v, (list, dict)) for v in renames.values()):
        frame = frame.rename(columns=renames)
    return _with_column_index(pd, frame, meta.get("column_indexes") or [])


def _with_column_index(pd: Any, frame: Any, levels: list[Any]) -> Any:
    """The frame's column labels as they were: a MultiIndex from the tuples pyarrow's
    convention writes as text, integer labels back to integers, the level names."""
    if not levels or not all(isinstance(level, dict) for level in levels):
        return frame
    labels = list(frame.columns)
    names = [level.get("name") for level in levels]
    try:
        if len(levels) > 1:
            tuples = [ast.literal_eval(label) for label in labels]
            frame.columns = pd.MultiIndex.from_tuples(tuples, names=names)
            return frame
        kind = str(levels[0].get("pandas_type", ""))
        if kind.startswith(("int", "uint")):
            frame.columns = pd.Index([int(label) for label in labels],
                                     dtype=levels[0].get("numpy_type") or "int64")
        elif kind.startswith("float"):
            frame.columns = pd.Index([float(label) for label in labels])
    except (ValueError, SyntaxError, TypeError):
        return frame  # labels that do not parse stay text, as they were stored
    frame.columns.name = names[0]
    return frame


def array_to_pandas(arr: Array, **options: Any) -> Any:
    """A ``pandas.Series`` of a quiver Array (the column rules of :func:`batch_to_pandas`).

    >>> import quiver as qv
    >>> array_to_pandas(qv.array(["a", None])).tolist()
    ['a', nan]
    """
    pd = _pandas()
    values = _column_to_pandas(pd, arr, None, {"date_as_object": True, **options})
    return pd.Series(values, copy=False)


# --------------------------------------------------------------------------------------
# from pandas


def _arrow_backed(pd: Any, dtype: Any) -> bool:
    """Whether pandas holds this column as Arrow memory already (str/string with pyarrow
    storage, or an ArrowDtype)."""
    if getattr(dtype, "storage", None) == "pyarrow":
        return True
    arrow_dtype = getattr(pd, "ArrowDtype", None)
    return arrow_dtype is not None and isinstance(dtype, arrow_dtype)


def _numpy_name(dtype: Any) -> str:
    return str(dtype)


def array_from_pandas(series: Any) -> tuple[Array, dict[str, Any]]:
    """A quiver Array of a ``pandas.Series`` (or Index) and its pandas metadata entry
    (``pandas_type``, ``numpy_type``, ``metadata``), by the rules of the module docstring.

    >>> import pandas as pd
    >>> arr, meta = array_from_pandas(pd.Series([1, None], dtype="Int64"))
    >>> arr.to_pylist(), meta["numpy_type"]
    ([1, None], 'Int64')
    """
    pd = _pandas()
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
        arr = from_numpy(utc, t.timestamp(unit, str(dtype.tz)))
        return arr, _entry("datetimetz", str(utc.dtype), {"timezone": str(dtype.tz)})
    if _arrow_backed(pd, dtype) and hasattr(series, "__arrow_c_stream__"):
        # the extension array's own pyarrow data (``__arrow_array__``, pandas' protocol
        # for pyarrow) imports in a third of the time of the Series' C stream, which
        # pandas builds anew on every call; the stream serves anything else
        data = getattr(series.array, "__arrow_array__", None)
        data = data() if data is not None else None
        arr = import_array(data if hasattr(data, "__arrow_c_stream__") else series)
        is_str = isinstance(dtype, pd.StringDtype)
        numpy_type = "string" if is_str and dtype.na_value is pd.NA else (
            "str" if is_str else str(dtype))
        return arr, _entry("unicode" if numpy_type == "string" else "object", numpy_type)
    if isinstance(dtype, pd.StringDtype):
        values = series.to_numpy(dtype=object, na_value=None)
        arr = from_numpy(values, t.string())
        numpy_type = "string" if dtype.na_value is pd.NA else "str"
        return arr, _entry("unicode" if numpy_type == "string" else "object", numpy_type)
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
        arr = _objects_from_pandas(values)
        pandas_type = "unicode" if isinstance(t.storage_of(arr.type), t.StringType) else (
            "bytes" if isinstance(t.storage_of(arr.type), t.BinaryType) else "object")
        return arr, _entry(pandas_type, "object")
    arr = from_numpy(values, from_pandas=True)
    kind = values.dtype.kind
    pandas_type = {"M": "datetime", "m": "timedelta", "b": "bool"}.get(kind, str(values.dtype))
    return arr, _entry(pandas_type, str(values.dtype))


def _objects_from_pandas(values: np.ndarray) -> Array:
    """An object column: NaN and pd.NA are nulls (pyarrow's ``from_pandas``)."""
    pd = _pandas()
    nulls = pd.isna(values)
    if not nulls.any():
        return array(values.tolist())
    # strings with nulls: the present values are joined as a column without nulls (one
    # join, no per-value None test) and the offsets spread over the null slots
    valid = ~nulls
    present = values[valid].tolist()
    if present and present[0].__class__ is str:
        try:
            dense = _build_binary(present, t.string(), strict=True)
        except (_MixedKinds, ArrowInvalid):  # other kinds, or more than int32 offsets
            dense = None
        if dense is not None:
            _, offsets, data = dense.buffers
            ends = offsets.view("<i4")[np.cumsum(valid)]
            spread = np.empty(len(values) + 1, "<i4")
            spread[0] = 0
            spread[1:] = ends
            bitmap, null_count = _bitmap(valid)
            return make_array(t.string(), len(values), (bitmap, spread.view(np.uint8), data),
                              (), null_count)
    values = values.copy()
    values[nulls] = None
    return array(values.tolist())


def _entry(pandas_type: str, numpy_type: str, metadata: Any = None) -> dict[str, Any]:
    return {"pandas_type": pandas_type, "numpy_type": numpy_type, "metadata": metadata}


def _label(name: Any) -> str | None:
    return None if name is None else str(name)


def batch_from_pandas(df: Any, *, preserve_index: bool | None = None) -> Any:
    """A quiver RecordBatch from a ``pandas.DataFrame`` (see the module rules), with
    pyarrow's ``pandas`` schema metadata so that the frame comes back as it was.

    >>> import pandas as pd
    >>> b = batch_from_pandas(pd.DataFrame({"x": [1.5, float("nan")], "y": ["a", None]}))
    >>> b.to_pydict()
    {'x': [1.5, None], 'y': ['a', None]}
    """
    pd = _pandas()
    if not isinstance(df, pd.DataFrame):
        raise ArrowTypeError(f"expected a pandas DataFrame, found {type(df).__name__}")
    names: list[str] = []
    columns: list[Array] = []
    entries: list[dict[str, Any]] = []
    for name, series in df.items():  # by position, duplicate names included
        arr, entry = array_from_pandas(series)
        names.append(str(name))
        columns.append(arr)
        entries.append({"name": _label(name), "field_name": str(name), **entry})
    index = df.index
    index_columns: list[Any] = []
    keep_range = preserve_index is None and isinstance(index, pd.RangeIndex)
    if keep_range:
        index_columns.append({"kind": "range", "name": _label(index.name),
                              "start": int(index.start), "stop": int(index.stop),
                              "step": int(index.step)})
    elif preserve_index is not False:
        for level in range(index.nlevels):
            values = index.get_level_values(level)
            field_name = (str(values.name) if values.name is not None
                          else f"__index_level_{level}__")
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
        column_indexes.append({
            "name": _label(values.name), "field_name": _label(values.name),
            "pandas_type": "unicode" if textual else str(values.dtype),
            "numpy_type": "object" if textual else str(values.dtype),
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
    schema = t.schema(
        [t.field(n, col.type) for n, col in zip(names, columns)],
        metadata={_PANDAS_KEY: json.dumps(meta).encode()},
    )
    return new_record_batch(schema, columns, len(df))


def _version() -> str:
    return __version__
