"""quiver arrays and record batches to pandas, built with numpy (pyarrow does no work here).

Not an Arrow spec format: the rules follow pyarrow's ``to_pandas`` / ``from_pandas`` and its
pandas metadata convention (the ``pandas`` key of the schema metadata, a JSON document with
``index_columns``, ``column_indexes`` and one entry per column giving its ``pandas_type``
and ``numpy_type``), so that files round-trip between quiver, pyarrow and pandas.  The
other way is :mod:`quiver.pandas_in`.  This module sits at the array layer
(``Array.to_pandas`` calls it); it knows record batches and tables only by their
``schema`` and ``columns``, and pandas loads on the first conversion.

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
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from . import registry
from . import types as t
from .array.data import ArrayData, null_mask, offsets_and_data
from .errors import ArrowInvalid, ArrowTypeError, NotSupported
from .hooks import register
from .layout import storage_numpy_dtype

PANDAS_KEY = b"pandas"


def pandas_module() -> Any:
    """pandas, imported on first use (an optional dependency)."""
    try:
        import pandas as pd
    except ImportError:
        raise NotSupported("pandas is not installed; install pandas to convert") from None
    return pd


# --------------------------------------------------------------------------------------
# to pandas


def _strings(col: ArrayData) -> np.ndarray:
    """An object array of Python str (None for nulls) from a string-like array, with one
    decode of the data buffer; only the creation of each str is per value."""
    st = t.storage_of(col.type)
    if isinstance(st, t.StringViewType):
        offsets, data = offsets_and_data(col)
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


def _arrow_strings(pd: Any, col: ArrayData, target: Any) -> Any:
    """The column as pandas' own Arrow-backed string array, handed over through the
    Arrow PyCapsule protocol without a copy, when that is the dtype asked for (pandas 3's
    ``str`` keeps its strings in Arrow memory); None otherwise."""
    if target is object or not hasattr(pd.Series, "from_arrow"):
        return None
    if getattr(target, "storage", None) != "pyarrow":
        return None
    try:
        # pandas keeps these strings in pyarrow arrays, so pyarrow is installed; handing
        # the dtype a pyarrow view of the column (imported through the PyCapsule
        # protocol, no copy) spares Series.from_arrow's frame building: 0.03 instead of
        # 0.39 ms per column
        import pyarrow

        handed = target.__from_arrow__(pyarrow.chunked_array(col))
    except (TypeError, ValueError, ImportError, AttributeError):
        try:
            handed = pd.Series.from_arrow(col).array
        except (TypeError, ValueError, ImportError):
            return None
    if handed.dtype != target and getattr(handed.dtype, "storage", None) == "pyarrow":
        # pandas hands back ``str`` (NaN for missing); ``string`` (pd.NA) is the same
        # Arrow memory under another dtype: astype rewraps it without a copy
        handed = handed.astype(target)
    return handed if handed.dtype == target else None


def _arrow_backed(pd: Any, col: ArrayData) -> Any:
    """The column as a pandas ``ArrowDtype`` array (what the metadata's ``...[pyarrow]``
    dtype names: pandas held the column as Arrow memory), handed over through the Arrow
    PyCapsule protocol without a copy; None when this pandas cannot take it."""
    arrow_array = getattr(getattr(pd, "arrays", None), "ArrowExtensionArray", None)
    if arrow_array is None:
        return None
    try:
        # an ArrowDtype is pyarrow memory: pandas has pyarrow when it made one
        import pyarrow

        return arrow_array(pyarrow.chunked_array(col))
    except (TypeError, ValueError, ImportError, NotImplementedError):
        return None


def _string_dtype(pd: Any, numpy_type: str | None) -> Any:
    """The pandas dtype a string column becomes: the metadata's, else pandas' default."""
    if numpy_type == "string":
        return pd.StringDtype()
    # pandas 3 makes every string column its ``str`` dtype, an object column's too, and
    # so does pyarrow's to_pandas (an object column comes back as ``str``)
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


# pyarrow's to_pandas options and their defaults; those of _MEMORY only steer memory and
# threads (quiver's columns are already separate blocks, views are never destroyed)
_OPTIONS: dict[str, Any] = {
    "types_mapper": None, "date_as_object": True, "timestamp_as_object": False,
    "strings_to_categorical": False, "categories": None, "integer_object_nulls": False,
    "zero_copy_only": False, "coerce_temporal_nanoseconds": False, "safe": True,
    "ignore_metadata": False, "maps_as_pydicts": None,
}
_MEMORY = frozenset({"split_blocks", "self_destruct", "use_threads", "memory_pool",
                     "deduplicate_objects"})


def _options(given: dict[str, Any]) -> dict[str, Any]:
    """The conversion options of a ``to_pandas`` call: pyarrow's, with their defaults; an
    unknown name is an error, and so is ``maps_as_pydicts`` (not supported)."""
    for name in given:
        if name not in _OPTIONS and name not in _MEMORY:
            raise ArrowTypeError(
                f"expected a to_pandas option among {sorted([*_OPTIONS, *_MEMORY])}, "
                f"found {name!r}"
            )
    if given.get("maps_as_pydicts") is not None:
        raise NotSupported(
            "maps_as_pydicts is not supported (maps become lists of (key, value) tuples); "
            f"found maps_as_pydicts={given['maps_as_pydicts']!r}"
        )
    options = {name: given.get(name, default) for name, default in _OPTIONS.items()}
    options["categories"] = frozenset(options["categories"] or ())
    return options


_TEXT = (t.StringType, t.StringViewType, t.BinaryType, t.BinaryViewType)
_ZERO_COPY = (t.IntegerType, t.FloatingPointType, t.TimestampType, t.DurationType)


def _copy_needed(pd: Any, col: ArrayData, meta: dict[str, Any] | None,
                 options: dict[str, Any], chunks: int) -> str | None:
    """Why the column cannot reach pandas without a copy (pyarrow's ``zero_copy_only``
    rules: one chunk, no nulls, a numeric or timestamp/duration type, or strings pandas
    keeps as Arrow memory), or None."""
    st = t.storage_of(col.type)
    numpy_type = meta.get("numpy_type") if meta else None
    if chunks > 1:
        return f"{chunks} chunks"
    if options.get("as_categorical") or (
        options["types_mapper"] is not None
        and mapped_dtype(options["types_mapper"], col.type) is not None
    ):
        return "a conversion to another pandas dtype"
    if isinstance(st, (t.StringType, t.StringViewType)):  # nulls included: Arrow's own
        target = _string_dtype(pd, numpy_type)
        if getattr(target, "storage", None) == "pyarrow" and hasattr(pd.Series, "from_arrow"):
            return None
        return "strings that pandas keeps as Python objects"
    if col.null_count:
        return f"{col.null_count} nulls"
    if not isinstance(st, _ZERO_COPY) or numpy_type in _MASKED:
        return f"type {col.type}" + (f" as pandas {numpy_type}" if numpy_type in _MASKED else "")
    if isinstance(st, t.TimestampType) and options["timestamp_as_object"]:
        return "timestamps as objects (timestamp_as_object=True)"
    if options["coerce_temporal_nanoseconds"] and getattr(st, "unit", "ns") != "ns":
        return "a change of unit to nanoseconds (coerce_temporal_nanoseconds=True)"
    return None


def _as_categorical(pd: Any, col: ArrayData, values: Any) -> Any:
    """A ``Categorical`` of the column (its categories in order of first appearance, as
    pyarrow's dictionary encoding), from its converted values; integers with nulls are
    encoded from their own values, not from the float column pandas would make."""
    st = t.storage_of(col.type)
    if isinstance(st, t.IntegerType) and col.null_count:
        present = ~null_mask(col)
        dense, uniques = pd.factorize(_filled(col)[present])
        codes = np.full(len(col), -1, dtype=dense.dtype)
        codes[present] = dense
    else:
        codes, uniques = pd.factorize(values)
    return pd.Categorical.from_codes(codes, dtype=pd.CategoricalDtype(uniques))


def _in_nanoseconds(values: np.ndarray, safe: bool) -> np.ndarray:
    """datetime64/timedelta64 values in nanoseconds (``coerce_temporal_nanoseconds``);
    with ``safe``, a value beyond the nanosecond range is an error, not wrapped."""
    unit = np.datetime_data(values.dtype)[0]
    if unit == "ns":
        return values
    if safe:
        factor = int(np.timedelta64(1, unit) // np.timedelta64(1, "ns"))
        ints = values.view(np.int64)
        bad = (np.abs(ints, where=ints != np.iinfo(np.int64).min, out=np.zeros_like(ints))
               > np.iinfo(np.int64).max // factor)
        if bad.any():
            row = int(np.argmax(bad))
            raise ArrowInvalid(
                f"expected values within the nanosecond range, found {values[row]} at row "
                f"{row} (coerce_temporal_nanoseconds=True; safe=False wraps)"
            )
    return values.astype(f"{values.dtype.kind}8[ns]")


_MASKED = {"Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64",
           "Float32", "Float64", "boolean"}


def _column_to_pandas(
    pd: Any,
    col: ArrayData,
    meta: dict[str, Any] | None,
    options: dict[str, Any],
    chunks: int = 1,
) -> Any:
    """One column as a numpy array or pandas extension array; ``chunks``: how many chunks
    it was combined from (``zero_copy_only`` refuses more than one)."""
    if options.get("zero_copy_only"):
        why = _copy_needed(pd, col, meta, options, chunks)
        if why is not None:
            raise ArrowInvalid(f"expected a zero-copy conversion (zero_copy_only=True), "
                               f"found a column that needs a copy: {why}")
    if options.get("as_categorical") and not isinstance(t.storage_of(col.type),
                                                        t.DictionaryType):
        values = _converted(pd, col, meta, options)
        return _as_categorical(pd, col, values)
    return _converted(pd, col, meta, options)


def _converted(
    pd: Any,
    col: ArrayData,
    meta: dict[str, Any] | None,
    options: dict[str, Any],
) -> Any:
    """One column as a numpy array or pandas extension array, by the module rules."""
    dtype = col.type
    mapper: Callable[[t.DataType], Any] | None = options.get("types_mapper")
    if mapper is not None:
        target = mapped_dtype(mapper, dtype)
        if target is not None:
            values = col.to_numpy(zero_copy_only=False) if t.storage_of(dtype) != t.string() \
                else _strings(col)
            if isinstance(values, np.ndarray) and values.dtype.kind == "f" and col.null_count:
                values = values.astype(object)
                values[~col.is_valid_mask()] = None  # type: ignore[operator]
            return pd.array(values, dtype=target)
    numpy_type = meta.get("numpy_type") if meta else None
    st = t.storage_of(dtype)
    if isinstance(numpy_type, str) and numpy_type.endswith("[pyarrow]") and not isinstance(
        st, (t.StringType, t.StringViewType)
    ):
        handed = _arrow_backed(pd, col)
        if handed is not None:
            return handed
    convert = registry.table("pandas").get(type(st))
    if convert is None:
        raise registry.missing_piece("pandas", type(st))
    return convert(pd, col, st, numpy_type, options)


# -- one conversion per type class (the registry's pandas piece) ------------------------
# each is ``(pd, column, storage type, numpy_type of the metadata or None, options)``


@registry.implements("pandas", t.DictionaryType)
def _categorical(pd: Any, col: ArrayData, st: Any, numpy_type: Any,
                 options: dict[str, Any]) -> Any:
    # the indices are the codes: viewed in their own width (signed, as pandas wants),
    # nulls set to -1 in one pass
    width = st.index_type.bit_width
    codes = _filled(ArrayData(st.index_type, len(col), col.buffers, (), col.null_count,
                              col.offset))
    if not st.index_type.signed:
        codes = codes.astype(f"<i{min(2 * width // 8, 8)}")
    if col.null_count:
        codes = np.where(null_mask(col), codes.dtype.type(-1), codes)
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


@registry.implements("pandas", t.StringType, t.StringViewType)
def _text(pd: Any, col: ArrayData, st: Any, numpy_type: Any, options: dict[str, Any]) -> Any:
    target = _string_dtype(pd, numpy_type)
    handed = _arrow_strings(pd, col, target)
    if handed is not None:
        return handed
    values = _strings(col)
    return values if target is object else pd.array(values, dtype=target)


def _masked_numbers(pd: Any, col: ArrayData, st: Any, numpy_type: str) -> Any:
    mask = col.is_valid_mask()
    if isinstance(st, t.BoolType):
        data = getattr(col, "storage", col).to_numpy_bool()  # type: ignore[attr-defined]
    else:
        data = _filled(col)
    nulls = np.zeros(len(col), bool) if mask is None else ~mask
    return pd.array(_masked(pd, numpy_type, data, nulls), dtype=numpy_type)


@registry.implements("pandas", t.IntegerType)
def _integers(pd: Any, col: ArrayData, st: Any, numpy_type: Any,
              options: dict[str, Any]) -> Any:
    if numpy_type in _MASKED:
        return _masked_numbers(pd, col, st, numpy_type)
    if col.null_count and options.get("integer_object_nulls"):
        values = _filled(col).astype(object)  # Python ints, made by numpy
        values[null_mask(col)] = None
        return values
    return col.to_numpy(zero_copy_only=False)


@registry.implements("pandas", t.FloatingPointType)
def _floats(pd: Any, col: ArrayData, st: Any, numpy_type: Any, options: dict[str, Any]) -> Any:
    if numpy_type in _MASKED:
        return _masked_numbers(pd, col, st, numpy_type)
    return col.to_numpy(zero_copy_only=False)


@registry.implements("pandas", t.BoolType)
def _booleans(pd: Any, col: ArrayData, st: Any, numpy_type: Any,
              options: dict[str, Any]) -> Any:
    if numpy_type in _MASKED:
        return _masked_numbers(pd, col, st, numpy_type)
    if col.null_count:
        return _objects(col)
    return col.to_numpy(zero_copy_only=False)


@registry.implements("pandas", t.DateType)
def _dates(pd: Any, col: ArrayData, st: Any, numpy_type: Any, options: dict[str, Any]) -> Any:
    if options.get("date_as_object", True):
        return _objects(col)
    values = col.to_numpy(zero_copy_only=False).astype("M8[ms]")  # pyarrow's unit
    if options.get("coerce_temporal_nanoseconds", False):
        return _in_nanoseconds(values, options.get("safe", True))
    return values


@registry.implements("pandas", t.TimestampType)
def _timestamps(pd: Any, col: ArrayData, st: Any, numpy_type: Any,
                options: dict[str, Any]) -> Any:
    if options.get("timestamp_as_object", False):
        return _objects(col)
    values = col.to_numpy(zero_copy_only=False)
    if options.get("coerce_temporal_nanoseconds", False):
        values = _in_nanoseconds(values, options.get("safe", True))
    if st.tz:
        return pd.arrays.DatetimeArray._from_sequence(
            values, dtype=pd.DatetimeTZDtype(unit=np.datetime_data(values.dtype)[0], tz="UTC")
        ).tz_convert(st.tz)
    return values


@registry.implements("pandas", t.DurationType)
def _durations(pd: Any, col: ArrayData, st: Any, numpy_type: Any,
               options: dict[str, Any]) -> Any:
    values = col.to_numpy(zero_copy_only=False)
    if options.get("coerce_temporal_nanoseconds", False):
        return _in_nanoseconds(values, options.get("safe", True))
    return values


@registry.implements("pandas", t.TimeType)
def _times(pd: Any, col: ArrayData, st: Any, numpy_type: Any, options: dict[str, Any]) -> Any:
    # datetime.time holds microseconds: as pyarrow, a time64[ns] value with nanoseconds
    # left over is an error, not dropped
    if st.unit == "ns" and len(col):
        ticks = _filled(col)
        lost = ticks % 1000 != 0
        valid = col.is_valid_mask()
        if valid is not None:
            lost &= valid
        if lost.any():
            row = int(np.argmax(lost))
            raise ArrowInvalid(
                f"expected time64[ns] values in whole microseconds (datetime.time), found "
                f"{int(ticks[row])} ns with non-zero nanoseconds at row {row}"
            )
    return _objects(col)


@registry.implements("pandas", t.DecimalType)
def _python_objects(pd: Any, col: ArrayData, st: Any, numpy_type: Any,
                    options: dict[str, Any]) -> Any:
    return _objects(col)


@registry.implements("pandas", t.NullType, t.IntervalType, t.BinaryType, t.BinaryViewType,
                     t.FixedSizeBinaryType, t.ListType, t.LargeListType, t.ListViewType,
                     t.LargeListViewType, t.FixedSizeListType, t.StructType, t.MapType,
                     t.UnionType, t.RunEndEncodedType)
def _to_numpy(pd: Any, col: ArrayData, st: Any, numpy_type: Any, options: dict[str, Any]) -> Any:
    return col.to_numpy(zero_copy_only=False)


def _filled(col: ArrayData) -> np.ndarray:
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


def _objects(col: ArrayData) -> np.ndarray:
    values = col.to_pylist()
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _pandas_metadata(schema: t.Schema) -> dict[str, Any] | None:
    raw = schema.metadata.get(PANDAS_KEY) if schema.metadata else None
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
            # (an index stored under its default name, by old writers without a name)
            names.append(None if name is None or (
                name == entry and entry.startswith("__index_level_")) else name)
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


def mapped_dtype(mapper: Callable[[Any], Any], dtype: t.DataType) -> Any:
    """``types_mapper``'s pandas dtype for a column of ``dtype`` (None: the default): asked
    with the quiver type, then, when that gives no answer and the caller has pyarrow
    loaded, with the same type as pyarrow's (a mapper written for pyarrow, such as
    ``{pa.int64(): pd.Int64Dtype()}.get`` or ``pd.ArrowDtype``, would otherwise be
    ignored silently, or fail on a type it does not know)."""
    try:
        found = mapper(dtype)
    except (TypeError, ValueError):
        if "pyarrow" not in sys.modules:
            raise
        found = None
    if found is not None or "pyarrow" not in sys.modules:
        return found
    # (pyarrow is the caller's here, already imported: the type crosses the boundary
    # through the C data interface, as any PyCapsule consumer would take it)
    theirs = sys.modules["pyarrow"].DataType._import_from_c_capsule(dtype.__arrow_c_schema__())
    return mapper(theirs)


def batch_to_pandas(
    data: Any,
    *,
    types_mapper: Callable[[t.DataType], Any] | None = None,
    date_as_object: bool = True,
    timestamp_as_object: bool = False,
    ignore_metadata: bool = False,
    **more: Any,
) -> Any:
    """A ``pandas.DataFrame`` of a quiver RecordBatch or Table (see the module rules).

    ``types_mapper`` maps a quiver DataType to a pandas dtype (or None for the default);
    one written for pyarrow's types is asked with those (:func:`mapped_dtype`).
    pyarrow's other options act as in pyarrow: ``strings_to_categorical``, ``categories``
    (field names to make ``Categorical``), ``integer_object_nulls``, ``zero_copy_only``
    (ArrowInvalid when a column needs a copy), ``coerce_temporal_nanoseconds`` with
    ``safe``; ``maps_as_pydicts`` is refused (NotSupported); ``split_blocks``,
    ``self_destruct``, ``use_threads``, ``memory_pool`` and ``deduplicate_objects`` only
    steer memory and are accepted and ignored (quiver's columns are already separate, and
    views are never destroyed); any other name is an ArrowTypeError.

    >>> import quiver as qv
    >>> from quiver.batch import RecordBatch
    >>> sch = qv.schema([qv.field("a", qv.int64())])
    >>> batch_to_pandas(RecordBatch(sch, [qv.array([1, None, 3])]))["a"].tolist()
    [1.0, nan, 3.0]
    """
    pd = pandas_module()
    schema = getattr(data, "schema", None)
    columns = getattr(data, "columns", None)
    if not isinstance(schema, t.Schema) or columns is None:
        raise ArrowTypeError(
            f"expected a quiver RecordBatch or Table, found {type(data).__name__}"
        )
    options = _options({"types_mapper": types_mapper, "date_as_object": date_as_object,
                        "timestamp_as_object": timestamp_as_object,
                        "ignore_metadata": ignore_metadata, **more})
    meta = None if ignore_metadata else _pandas_metadata(schema)
    col_meta = {}
    if meta is not None:
        col_meta = {c.get("field_name", c.get("name")): c for c in meta.get("columns", [])
                    if isinstance(c, dict)}
    names = schema.names
    if len(set(names)) != len(names):
        raise NotSupported("duplicate column names cannot become a DataFrame; rename first")
    out = {}
    categories, to_text = options["categories"], options["strings_to_categorical"]
    for f, col in zip(schema.fields, columns):
        chunks = 1
        if not isinstance(col, ArrayData):
            chunks = len(col.chunks)
            col = col.combine_chunks()  # a Table's ChunkedArray
        column_options = options
        if f.name in categories or (to_text and isinstance(t.storage_of(f.type), _TEXT)):
            column_options = {**options, "as_categorical": True}
        values = _column_to_pandas(pd, col, col_meta.get(f.name), column_options, chunks)
        if isinstance(values, np.ndarray) and values.dtype == object:
            # as pyarrow's blocks: pandas must not infer datetimes or str from objects
            values = pd.Series(values, dtype=object, copy=False)
        out[f.name] = values
    num_rows = getattr(data, "num_rows", 0)
    # (the dict holds the names in order, unique: naming the columns again costs pandas
    # a reindex, ~0.4 ms)
    frame = pd.DataFrame(out, copy=False) if out else pd.DataFrame(columns=names)
    if len(frame) != num_rows:  # a frame without columns still has its rows
        frame = pd.DataFrame(index=pd.RangeIndex(num_rows))
    if meta is None:
        return frame
    index, used = _index_from(pd, meta, frame, num_rows)
    if index is not None:
        if used:  # (dropping no columns still costs pandas ~0.5 ms)
            frame = frame.drop(columns=used)
        frame.index = index
    # the data columns' original labels (stored as text, None as None: pyarrow's rule)
    labels = [col_meta[fld].get("name", fld) if fld in col_meta else fld
              for fld in frame.columns]
    return _with_column_index(pd, frame, labels, meta.get("column_indexes") or [])


def _level_values(pd: Any, values: list[Any], level: dict[str, Any]) -> Any:
    """One level of column labels as it was, by its metadata's ``pandas_type``: integers,
    floats, booleans, naive datetimes and bytes back from their text."""
    kind = str(level.get("pandas_type", ""))
    index = pd.Index(values)
    if not len(index) or kind in ("unicode", "string", "empty") or "mixed" in kind:
        return index
    if kind.startswith(("int", "uint", "float")):
        return index.astype(str(level.get("numpy_type") or kind))
    if kind == "bool":
        return pd.Index([{"True": True, "False": False}[str(v)] for v in values])
    if kind.startswith("datetime64"):
        return pd.to_datetime(index).as_unit(np.datetime_data(np.dtype(kind))[0])
    if kind == "bytes":
        return pd.Index([v.encode() if isinstance(v, str) else v for v in values],
                        dtype=object)
    return index


def _with_column_index(pd: Any, frame: Any, labels: list[Any], levels: list[Any]) -> Any:
    """The frame with its column labels as they were: a MultiIndex from the tuples pyarrow's
    convention writes as text, each level's labels back to their type, the level names."""
    if not levels or not all(isinstance(level, dict) for level in levels):
        if labels != list(frame.columns):
            frame.columns = pd.Index(labels)
        return frame
    names = [level.get("name") for level in levels]
    try:
        if len(levels) > 1:
            tuples = [ast.literal_eval(label) for label in labels]
            parts = [_level_values(pd, [tup[i] for tup in tuples], level)
                     for i, level in enumerate(levels)]
            frame.columns = pd.MultiIndex.from_arrays(parts, names=names)
            return frame
        columns = _level_values(pd, labels, levels[0])
    except (ValueError, SyntaxError, TypeError, KeyError, IndexError):
        columns = pd.Index(labels)  # labels that do not parse stay text, as they were stored
    current = frame.columns
    if not columns.equals(current) or columns.dtype != current.dtype:
        frame.columns = columns
    frame.columns.name = names[0]
    return frame


def array_to_pandas(arr: ArrayData, **options: Any) -> Any:
    """A ``pandas.Series`` of a quiver Array (the column rules of :func:`batch_to_pandas`).

    >>> import quiver as qv
    >>> array_to_pandas(qv.array(["a", None])).tolist()
    ['a', nan]
    """
    pd = pandas_module()
    opts = _options(options)
    if opts["strings_to_categorical"] and isinstance(t.storage_of(arr.type), _TEXT):
        opts["as_categorical"] = True
    values = _column_to_pandas(pd, arr, None, opts)
    return pd.Series(values, copy=False)


# the hooks this module answers for the layers below (quiver.hooks)
register("pandas.array_to_pandas", array_to_pandas)
register("pandas.batch_to_pandas", batch_to_pandas)
