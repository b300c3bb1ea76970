"""Record batches, chunked arrays and tables (Columnar spec, "Record Batches"; IPC format).

A :class:`RecordBatch` is a :class:`~quiver.types.Schema` plus one array per field, all of
the same length.  A :class:`Table` is a schema plus a list of record batches of that schema;
its columns are :class:`ChunkedArray` objects (one chunk per batch).  Names and behaviour
follow pyarrow (``from_pydict``, ``from_arrays``, ``from_pylist``, ``to_pylist``,
``column(i or name)``, ``num_rows``, ``slice``, ``select``...).  Slicing and selecting are
zero-copy; equality is by logical value (:func:`quiver.array.equal.array_equals`), and a
table's equality ignores how it is chunked.

>>> import numpy as np
>>> from quiver import types as t
>>> from quiver.array import make_array
>>> ints = make_array(t.int64(), 3, [None, np.array([1, 2, 3], "<i8").view(np.uint8)])
>>> batch = RecordBatch.from_arrays([ints], names=["n"])
>>> batch.num_rows, batch.column_names, batch.slice(1).column("n").to_pylist()
(3, ['n'], [2, 3])
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Self

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

from . import types as t
from .array import select as _select
from .array.base import Array, make_array, slice_bounds
from .array.build import array as array_from_values
from .array.concat import concat_arrays
from .array.equal import array_equals
from .array.validate import validate_array
from .errors import (
    ArrowError,
    ArrowIndexError,
    ArrowInvalid,
    ArrowInvalidArgument,
    ArrowKeyError,
    ArrowTypeError,
)
from .pandas_in import frame_parts
from .pandas_out import batch_to_pandas

__all__ = [
    "ChunkedArray",
    "RecordBatch",
    "RecordBatchReader",
    "Table",
    "chunked_array",
    "concat_tables",
    "record_batch",
    "table",
]

_PREVIEW = 10


# --------------------------------------------------------------------------------------
# helpers


def _build(values: Any, dtype: t.DataType | None, name: str) -> Array:
    """An Array from ``values`` (an Array, a ChunkedArray, or Python / numpy data)."""
    if isinstance(values, ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, Array):
        if dtype is not None and not values.type.equals(dtype):
            raise ArrowTypeError(
                f"expected column {name!r} of type {dtype}, found {values.type}"
            )
        return values
    try:
        return array_from_values(values, type=dtype)
    except ArrowError as exc:
        raise exc.locate(field_path=name or None) from None


def _column_index(schema: t.Schema, key: int | str, what: str = "column") -> int:
    """Position of a column given by index (negative allowed) or unique name."""
    n = len(schema.fields)
    if isinstance(key, str):
        hits = schema.get_all_field_indices(key)
        if len(hits) != 1:
            found = "none" if not hits else f"{len(hits)} {what}s with that name"
            raise ArrowKeyError(f"expected one {what} named {key!r}, found {found}")
        return hits[0]
    if isinstance(key, bool) or not hasattr(key, "__index__"):
        raise ArrowTypeError(f"expected a {what} index or name, found {key!r}")
    i = key.__index__()
    if not -n <= i < n:
        raise ArrowIndexError(f"expected a {what} index below {n}, found {key}")
    return i % n


def _window(parts: Sequence[Any], offset: int, length: int) -> list[Any]:
    """The pieces of ``parts`` (chunks or batches) that rows ``offset .. offset+length``
    of their concatenation cover, each sliced without copying."""
    out = []
    start = 0
    for part in parts:
        end = start + len(part)
        lo, hi = max(offset, start), min(offset + length, end)
        if hi > lo:
            out.append(part.slice(lo - start, hi - lo))
        start = end
    return out


def _format_value(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ",".join(_format_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}: {_format_value(v)}" for k, v in value.items()) + "}"
    return str(value)


def _preview(values: list[Any], total: int) -> str:
    more = ",..." if total > len(values) else ""
    return "[" + ",".join(_format_value(v) for v in values) + more + "]"


def _buffer_bytes(arr: Array, seen: set[int]) -> int:
    total = 0
    for buf in arr.buffers:
        if buf is not None and id(buf) not in seen:
            seen.add(id(buf))
            total += int(buf.nbytes)
    for child in arr.children:
        total += _buffer_bytes(child, seen)
    if arr.dictionary is not None:
        total += _buffer_bytes(arr.dictionary, seen)
    return total


def _rename(schema: t.Schema, names: Sequence[str] | Mapping[str, str]) -> t.Schema:
    if isinstance(names, Mapping):
        unknown = [k for k in names if k not in schema.names]
        if unknown:
            raise ArrowKeyError(f"expected existing column names to rename, found {unknown}")
        new = [names.get(f.name, f.name) for f in schema.fields]
    else:
        new = list(names)
        if len(new) != len(schema.fields):
            raise ArrowInvalidArgument(
                f"expected {len(schema.fields)} new column names, found {len(new)}"
            )
    return t.Schema(tuple(f.with_name(n) for f, n in zip(schema.fields, new)), schema.metadata)


def _schema_from(names: Sequence[str], arrays: Sequence[Array], metadata: Any) -> t.Schema:
    return t.schema([t.field(n, a.type) for n, a in zip(names, arrays)], metadata=metadata)


def _sort_spec(sorting: str | Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    if isinstance(sorting, str):
        return [(sorting, "ascending")]
    keys = []
    for item in sorting:
        if not (isinstance(item, tuple) and len(item) == 2):
            raise ArrowTypeError(
                f"expected a column name or (name, order) pairs to sort by, found {item!r}"
            )
        keys.append((str(item[0]), str(item[1])))
    if not keys:
        raise ArrowInvalidArgument("expected at least one column to sort by, found none")
    return keys


def _cast_type(target: Any) -> t.DataType:
    if isinstance(target, t.DataType):
        return target
    # another library's type (``__arrow_c_schema__``); ctypes loads only for one
    from .cdata.schema import import_type

    return import_type(target)


def _columns_from_rows(rows: Sequence[Mapping[str, Any]], names: Sequence[str]) -> list[list]:
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise ArrowTypeError(f"expected row {i} as a mapping, found {type(row).__name__}")
    return [[row.get(name) for row in rows] for name in names]


# --------------------------------------------------------------------------------------
# RecordBatch


class _PandasConversions:
    """``to_pandas`` / ``from_pandas`` for RecordBatch and Table (numpy and pandas only)."""

    __slots__ = ()

    def to_pandas(
        self,
        *,
        types_mapper: Any = None,
        date_as_object: bool = True,
        timestamp_as_object: bool = False,
        ignore_metadata: bool = False,
        **ignored: Any,
    ) -> pd.DataFrame:
        """A pandas DataFrame, built with numpy and pandas (not through pyarrow), following
        pyarrow's ``pandas`` metadata (index, nullable and string dtypes); pyarrow's
        memory options (``split_blocks``, ``self_destruct``, ...) are accepted and
        ignored.  See :func:`quiver.pandas_out.batch_to_pandas`."""
        return batch_to_pandas(
            self,
            types_mapper=types_mapper,
            date_as_object=date_as_object,
            timestamp_as_object=timestamp_as_object,
            ignore_metadata=ignore_metadata,
            **ignored,
        )

    @classmethod
    def from_pandas(cls, df: pd.DataFrame, *, preserve_index: bool | None = None) -> Self:
        """From a pandas DataFrame (numpy-backed columns are viewed, not copied), with
        pyarrow's ``pandas`` metadata; ``preserve_index`` as pyarrow's (None: a RangeIndex
        in the metadata only, another index as columns); see
        :func:`quiver.pandas_in.frame_parts`."""
        batch = RecordBatch(*frame_parts(df, preserve_index=preserve_index))
        return batch if cls is RecordBatch else Table.from_batches([batch])  # type: ignore[return-value]


class _TabularCData:
    """The Arrow PyCapsule protocol for RecordBatch and Table: the schema and a stream."""

    __slots__ = ()

    def __arrow_c_schema__(self) -> Any:
        """The schema as an ``arrow_schema`` PyCapsule (the Arrow PyCapsule protocol).

        >>> import pyarrow as pa
        >>> pa.schema(record_batch({"a": [1]})).names
        ['a']
        """
        return self.schema.__arrow_c_schema__()  # type: ignore[attr-defined]

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """An ``arrow_array_stream`` PyCapsule that hands out the batches one at a time,
        zero-copy, as the consumer pulls them.

        >>> import pyarrow as pa
        >>> pa.table(table({"a": [1, 2]})).num_rows
        2
        """
        # ctypes and the C structs load on the first export, not with this module
        from .cdata.stream import export_stream

        return export_stream(self, requested_schema)


class RecordBatch(_PandasConversions, _TabularCData):
    """A schema and equal-length columns (quiver Arrays), like ``pyarrow.RecordBatch``.

    ``num_rows`` is needed only for a batch without columns (IPC allows those).

    >>> batch = record_batch({"a": [1, 2], "b": ["x", None]})
    >>> batch.to_pylist()
    [{'a': 1, 'b': 'x'}, {'a': 2, 'b': None}]
    >>> print(batch)
    quiver.RecordBatch
    a: int64
    b: string
    ----
    a: [1,2]
    b: ["x",null]
    """

    __slots__ = ("_columns", "_num_rows", "_schema")

    def __init__(
        self, schema: t.Schema, columns: Sequence[Array], num_rows: int | None = None
    ) -> None:
        if not isinstance(schema, t.Schema):
            raise ArrowTypeError(f"expected a Schema, found {type(schema).__name__}")
        columns = tuple(columns)
        fields = schema.fields
        if len(columns) != len(fields):
            raise ArrowInvalidArgument(
                f"expected {len(fields)} columns for the schema, found {len(columns)}"
            )
        if num_rows is None:
            num_rows = len(columns[0]) if columns and isinstance(columns[0], Array) else 0
        elif not isinstance(num_rows, int) or num_rows < 0:
            raise ArrowInvalidArgument(f"expected a non-negative num_rows, found {num_rows!r}")
        for i, (f, col) in enumerate(zip(fields, columns)):
            if not isinstance(col, Array):
                raise ArrowTypeError(
                    f"expected column {i} ({f.name!r}) as a quiver Array, "
                    f"found {type(col).__name__}"
                )
            if col.type is not f.type and col.type != f.type and not col.type.equals(f.type):
                raise ArrowInvalidArgument(
                    f"expected column {i} ({f.name!r}) of type {f.type}, found {col.type}"
                )
            if len(col) != num_rows:
                raise ArrowInvalidArgument(
                    f"expected column {i} ({f.name!r}) of length {num_rows}, found {len(col)}"
                )
        self._schema = schema
        self._columns = columns
        self._num_rows = num_rows

    @classmethod
    def _trusted(cls, schema: t.Schema, columns: Sequence[Array], num_rows: int) -> RecordBatch:
        """A batch from parts already known to agree (the IPC reader's loaded columns)."""
        self = cls.__new__(cls)
        self._schema = schema
        self._columns = tuple(columns)
        self._num_rows = num_rows
        return self

    @classmethod
    def _from_struct_array(cls, schema: t.Schema, array: Array) -> RecordBatch:
        """The batch a struct array carries (how the C data interface passes one): its
        children, sliced to its rows; a batch has no nulls of its own."""
        if array.null_count:
            raise ArrowInvalid(
                f"expected a record batch struct without nulls, found {array.null_count} nulls"
            )
        n = len(array)
        columns = [
            col if array.offset == 0 and len(col) == n else col.slice(array.offset, n)
            for col in array.children
        ]
        return cls(schema, columns, n)

    # -- construction ------------------------------------------------------------------

    @classmethod
    def from_arrays(
        cls,
        arrays: Sequence[Any],
        names: Sequence[str] | None = None,
        schema: t.Schema | None = None,
        metadata: Any = None,
    ) -> RecordBatch:
        """A batch from arrays and either ``names`` or a ``schema``."""
        arrays = list(arrays)
        if schema is not None:
            if names is not None:
                raise ArrowInvalidArgument("expected names or schema, found both")
            if len(arrays) != len(schema.fields):
                raise ArrowInvalidArgument(
                    f"expected {len(schema.fields)} arrays for the schema, found {len(arrays)}"
                )
            cols = [_build(a, f.type, f.name) for a, f in zip(arrays, schema.fields)]
            if metadata is not None:
                schema = schema.with_metadata(metadata)
            return cls(schema, cols)
        if names is None:
            raise ArrowInvalidArgument("expected names or schema to name the arrays, found neither")
        names = list(names)
        if len(names) != len(arrays):
            raise ArrowInvalidArgument(
                f"expected {len(arrays)} names for the arrays, found {len(names)}"
            )
        cols = [_build(a, None, n) for a, n in zip(arrays, names)]
        return cls(_schema_from(names, cols, metadata), cols)

    @classmethod
    def from_pydict(
        cls, mapping: Mapping[str, Any], schema: t.Schema | None = None, metadata: Any = None
    ) -> RecordBatch:
        """A batch from ``{name: values}`` (Arrays, lists or numpy arrays)."""
        if not isinstance(mapping, Mapping):
            raise ArrowTypeError(f"expected a mapping of columns, found {type(mapping).__name__}")
        if schema is None:
            return cls.from_arrays(list(mapping.values()), [str(k) for k in mapping], None,
                                   metadata)
        missing = [f.name for f in schema.fields if f.name not in mapping]
        if missing:
            raise ArrowKeyError(f"expected a column for every schema field, found none for "
                                f"{missing}")
        return cls.from_arrays([mapping[f.name] for f in schema.fields], schema=schema,
                               metadata=metadata)

    @classmethod
    def from_pylist(
        cls,
        rows: Sequence[Mapping[str, Any]],
        schema: t.Schema | None = None,
        metadata: Any = None,
    ) -> RecordBatch:
        """A batch from a list of row dicts (names from the schema or the first row)."""
        rows = list(rows)
        if schema is not None:
            names = schema.names
        elif rows:
            if not isinstance(rows[0], Mapping):
                raise ArrowTypeError(
                    f"expected rows as mappings, found {type(rows[0]).__name__}"
                )
            names = [str(k) for k in rows[0]]
        else:
            names = []
        columns = _columns_from_rows(rows, names)
        if schema is not None:
            return cls.from_arrays(columns, schema=schema, metadata=metadata)
        return cls.from_arrays(columns, names=names, metadata=metadata)

    # -- the pyarrow attributes --------------------------------------------------------

    @property
    def schema(self) -> t.Schema:
        """The batch's schema."""
        return self._schema

    @property
    def columns(self) -> list[Array]:
        """The columns in schema order."""
        return list(self._columns)

    @property
    def num_rows(self) -> int:
        """Number of rows."""
        return self._num_rows

    @property
    def num_columns(self) -> int:
        """Number of columns."""
        return len(self._columns)

    @property
    def shape(self) -> tuple[int, int]:
        """(num_rows, num_columns)."""
        return self._num_rows, len(self._columns)

    @property
    def column_names(self) -> list[str]:
        """The column names in order."""
        return self._schema.names

    @property
    def nbytes(self) -> int:
        """Total size of the buffers the columns reference (each buffer counted once)."""
        seen: set[int] = set()
        return sum(_buffer_bytes(c, seen) for c in self._columns)

    def __len__(self) -> int:
        return self._num_rows

    def field(self, i: int | str) -> t.Field:
        """A field by position or name."""
        return self._schema.fields[_column_index(self._schema, i)]

    def column(self, i: int | str) -> Array:
        """A column by position or name."""
        return self._columns[_column_index(self._schema, i)]

    def __getitem__(self, key: int | str | slice) -> Any:
        if isinstance(key, slice):
            start, stop, step = key.indices(self._num_rows)
            if step != 1:
                raise ArrowInvalidArgument(f"expected a slice step of 1, found {step}")
            return self.slice(start, max(stop - start, 0))
        return self.column(key)

    def __iter__(self) -> Iterator[Array]:
        return iter(self._columns)

    # -- conversion --------------------------------------------------------------------

    def to_pydict(self) -> dict[str, list[Any]]:
        """``{name: values}`` with Python values (later duplicate names win, like pyarrow)."""
        return {f.name: _column_values(f, c) for f, c in zip(self._schema.fields, self._columns)}

    def to_pylist(self) -> list[dict[str, Any]]:
        """One dict per row, like pyarrow."""
        names = self._schema.names
        values = [_column_values(f, c) for f, c in zip(self._schema.fields, self._columns)]
        if not values:
            return [{} for _ in range(self._num_rows)]
        return [dict(zip(names, row)) for row in zip(*values)]

    # -- zero-copy transformations -----------------------------------------------------

    def slice(self, offset: int = 0, length: int | None = None) -> RecordBatch:
        """Rows ``offset .. offset + length`` without copying (clamped like pyarrow)."""
        offset, length = slice_bounds(self._num_rows, offset, length)
        return RecordBatch(
            self._schema, [c.slice(offset, length) for c in self._columns], length
        )

    def select(self, columns: Iterable[int | str]) -> RecordBatch:
        """A batch of the given columns (by index or name), in that order."""
        idx = [_column_index(self._schema, c) for c in columns]
        schema = t.Schema(tuple(self._schema.fields[i] for i in idx), self._schema.metadata)
        return RecordBatch(schema, [self._columns[i] for i in idx], self._num_rows)

    def rename_columns(self, names: Sequence[str] | Mapping[str, str]) -> RecordBatch:
        """A batch with new column names (a list of all names, or a mapping old -> new)."""
        return RecordBatch(_rename(self._schema, names), self._columns, self._num_rows)

    def add_column(self, i: int, field_: str | t.Field, column: Any) -> RecordBatch:
        """A batch with ``column`` inserted at position ``i``."""
        if not isinstance(i, int) or not 0 <= i <= len(self._columns):
            raise ArrowIndexError(
                f"expected a column position in 0..{len(self._columns)}, found {i!r}"
            )
        if isinstance(field_, t.Field):
            col = _build(column, field_.type, field_.name)
            fld = field_
        else:
            col = _build(column, None, str(field_))
            fld = t.field(str(field_), col.type)
        fields = list(self._schema.fields)
        fields.insert(i, fld)
        cols = list(self._columns)
        cols.insert(i, col)
        if self._columns and len(col) != self._num_rows:
            raise ArrowInvalidArgument(
                f"expected column {fld.name!r} of length {self._num_rows}, found {len(col)}"
            )
        return RecordBatch(t.Schema(tuple(fields), self._schema.metadata), cols)

    def append_column(self, field_: str | t.Field, column: Any) -> RecordBatch:
        """A batch with ``column`` added at the end."""
        return self.add_column(len(self._columns), field_, column)

    def remove_column(self, i: int) -> RecordBatch:
        """A batch without column ``i``."""
        i = _column_index(self._schema, i)
        fields = self._schema.fields[:i] + self._schema.fields[i + 1 :]
        cols = self._columns[:i] + self._columns[i + 1 :]
        return RecordBatch(t.Schema(fields, self._schema.metadata), cols, self._num_rows)

    def set_column(self, i: int, field_: str | t.Field, column: Any) -> RecordBatch:
        """A batch with column ``i`` replaced."""
        return self.remove_column(i).add_column(_column_index(self._schema, i), field_, column)

    def drop_columns(self, columns: str | int | Iterable[int | str]) -> RecordBatch:
        """A batch without the given columns (names or indices)."""
        if isinstance(columns, (str, int)):
            columns = [columns]
        drop = {_column_index(self._schema, c) for c in columns}
        return self.select([i for i in range(len(self._columns)) if i not in drop])

    def to_struct_array(self) -> Array:
        """The rows as one struct array (no copy: the columns become its children)."""
        struct_type = t.struct(list(self._schema.fields))
        return make_array(struct_type, self._num_rows, [None], self._columns, 0, 0)

    @classmethod
    def from_struct_array(cls, array: Array) -> RecordBatch:
        """A batch whose columns are the fields of a struct array (which must have no nulls).

        The children are sliced to the struct's range, so no data is copied.
        """
        storage = t.storage_of(array.type) if isinstance(array, Array) else None
        if not isinstance(storage, t.StructType):
            found = array.type if isinstance(array, Array) else type(array).__name__
            raise ArrowTypeError(f"expected a struct array, found {found}")
        if array.null_count:
            raise ArrowInvalidArgument(
                f"expected a struct array without nulls, found {array.null_count} nulls"
            )
        cols = [c.slice(array.offset, len(array)) for c in array.children]
        return cls(t.Schema(storage.fields), cols, len(array))

    # -- selection (quiver.array.select) -------------------------------------------------

    def take(self, indices: Any) -> RecordBatch:
        """The rows at ``indices`` (a null index gives a row of nulls).

        >>> record_batch({"a": [1, 2, 3]}).take([2, 0]).to_pydict()
        {'a': [3, 1]}
        """
        idx, valid = _select._indices(indices, self._num_rows)
        cols = [_select._take(c, idx, valid) for c in self._columns]
        return RecordBatch(self._schema, cols, len(idx))

    def filter(self, mask: Any) -> RecordBatch:
        """The rows where ``mask`` is True (a null in the mask drops the row)."""
        return self.take(_select._selection(mask, self._num_rows))

    def sort_by(self, sorting: str | Sequence[tuple[str, str]]) -> RecordBatch:
        """The rows sorted by one column name, or by ``[(name, "ascending" |
        "descending"), ...]`` (stable; nulls last), like pyarrow's ``sort_by``.

        >>> record_batch({"a": [2, None, 1]}).sort_by([("a", "descending")]).to_pydict()
        {'a': [2, 1, None]}
        """
        keys = _sort_spec(sorting)
        cols = [self.column(name) for name, _ in keys]
        return self.take(_select.sort_indices(cols, [order for _, order in keys]))

    def replace_schema_metadata(self, metadata: Any = None) -> RecordBatch:
        """A batch whose schema carries ``metadata`` (None removes it)."""
        return RecordBatch(self._schema.with_metadata(metadata), self._columns, self._num_rows)

    with_schema_metadata = replace_schema_metadata

    # -- checks ------------------------------------------------------------------------

    def validate(self, *, full: bool = False, check_decimal_precision: bool = False) -> None:
        """Validate every column (see :func:`quiver.array.validate.validate_array`).

        Errors name the column as the root of the field path (``col.item.a``).
        """
        for f, c in zip(self._schema.fields, self._columns):
            if len(c) != self._num_rows:
                raise ArrowInvalid(
                    f"expected length {self._num_rows}, found {len(c)}", field_path=f.name
                )
            validate_array(
                c, full=full, check_decimal_precision=check_decimal_precision, path=f.name
            )

    def equals(self, other: object, check_metadata: bool = False) -> bool:
        """Same schema (metadata only if ``check_metadata``) and logically equal columns."""
        if not isinstance(other, RecordBatch):
            return False
        if not self._schema.equals(other._schema, check_metadata=check_metadata):
            return False
        if self._num_rows != other._num_rows:
            return False
        return all(array_equals(a, b) for a, b in zip(self._columns, other._columns))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RecordBatch):
            return NotImplemented
        return self.equals(other)

    __hash__ = None  # type: ignore[assignment]

    def __arrow_c_array__(self, requested_schema: Any = None) -> tuple[Any, Any]:
        """This batch as ``(arrow_schema, arrow_array)`` PyCapsules: a struct array whose
        children are the columns, zero-copy (the Arrow PyCapsule protocol).

        >>> import pyarrow as pa
        >>> pa.record_batch(record_batch({"a": [1, 2]})).num_rows
        2
        """
        # ctypes and the C structs load on the first export, not with this module
        from .cdata.stream import export_batch

        return export_batch(self, requested_schema)

    def __repr__(self) -> str:
        lines = ["quiver.RecordBatch"]
        if self._schema.fields:
            lines.append(str(self._schema))
        lines.append("----")
        head = min(self._num_rows, _PREVIEW)
        for f, c in zip(self._schema.fields, self._columns):
            lines.append(f"{f.name}: {_preview(c.slice(0, head).to_pylist(), len(c))}")
        return "\n".join(lines)


# --------------------------------------------------------------------------------------
# ChunkedArray


def _chunks_equal(a: Sequence[Array], b: Sequence[Array]) -> bool:
    """Equality of two chunk lists of the same total length, whatever their chunking."""
    ia = ib = 0  # current chunk
    oa = ob = 0  # position inside it
    while ia < len(a) and ib < len(b):
        ra, rb = len(a[ia]) - oa, len(b[ib]) - ob
        if ra == 0:
            ia, oa = ia + 1, 0
            continue
        if rb == 0:
            ib, ob = ib + 1, 0
            continue
        n = min(ra, rb)
        if not array_equals(a[ia].slice(oa, n), b[ib].slice(ob, n)):
            return False
        oa += n
        ob += n
    return True


class ChunkedArray:
    """A column made of several arrays of one type, like ``pyarrow.ChunkedArray``."""

    __slots__ = ("_chunks", "_length", "_type")

    def __init__(self, chunks: Sequence[Array], type: t.DataType | None = None) -> None:
        chunks = tuple(chunks)
        if type is None:
            if not chunks:
                raise ArrowInvalidArgument("expected a type for a ChunkedArray without chunks")
            type = chunks[0].type if isinstance(chunks[0], Array) else None
        if not isinstance(type, t.DataType):
            raise ArrowTypeError(f"expected a DataType, found {type!r}")
        for i, c in enumerate(chunks):
            if not isinstance(c, Array):
                raise ArrowTypeError(f"expected chunk {i} as a quiver Array, found {c!r}")
            if not c.type.equals(type):
                raise ArrowInvalidArgument(f"expected chunk {i} of type {type}, found {c.type}")
        self._chunks = chunks
        self._type = type
        self._length = sum(len(c) for c in chunks)

    @property
    def type(self) -> t.DataType:
        """The type of every chunk."""
        return self._type

    @property
    def chunks(self) -> list[Array]:
        """The chunks in order."""
        return list(self._chunks)

    @property
    def num_chunks(self) -> int:
        """Number of chunks."""
        return len(self._chunks)

    @property
    def null_count(self) -> int:
        """Total nulls over all chunks."""
        return sum(c.null_count for c in self._chunks)

    def chunk(self, i: int) -> Array:
        """Chunk ``i``."""
        n = len(self._chunks)
        if not isinstance(i, int) or not -n <= i < n:
            raise ArrowIndexError(f"expected a chunk index below {n}, found {i!r}")
        return self._chunks[i]

    def __len__(self) -> int:
        return self._length

    def length(self) -> int:
        """Total number of values (pyarrow's spelling)."""
        return self._length

    def to_pylist(self) -> list[Any]:
        """All values as Python objects."""
        out: list[Any] = []
        for c in self._chunks:
            out.extend(c.to_pylist())
        return out

    def slice(self, offset: int = 0, length: int | None = None) -> ChunkedArray:
        """Values ``offset .. offset + length`` without copying."""
        offset, length = slice_bounds(self._length, offset, length)
        return ChunkedArray(_window(self._chunks, offset, length), self._type)

    def __getitem__(self, key: int | slice) -> Any:
        if isinstance(key, slice):
            start, stop, step = key.indices(self._length)
            if step != 1:
                raise ArrowInvalidArgument(f"expected a slice step of 1, found {step}")
            return self.slice(start, max(stop - start, 0))
        if isinstance(key, bool) or not hasattr(key, "__index__"):
            raise ArrowTypeError(f"expected an int or slice index, found {key!r}")
        i = key.__index__()
        if i < 0:
            i += self._length
        if not 0 <= i < self._length:
            raise ArrowIndexError(f"expected an index below {self._length}, found {key}")
        for c in self._chunks:
            if i < len(c):
                return c[i]
            i -= len(c)
        raise ArrowIndexError(f"expected an index below {self._length}, found {key}")

    def to_numpy(self, zero_copy_only: bool = False) -> Any:
        """All values as one numpy array (copies when there is more than one chunk)."""
        if len(self._chunks) == 1:
            return self._chunks[0].to_numpy(zero_copy_only=zero_copy_only)
        if zero_copy_only:
            raise ArrowInvalidArgument(
                f"expected one chunk for a zero-copy conversion, found {len(self._chunks)}"
            )
        if not self._chunks:
            return self.combine_chunks().to_numpy(zero_copy_only=False)
        return np.concatenate([c.to_numpy(zero_copy_only=False) for c in self._chunks])

    def combine_chunks(self) -> Array:
        """One array with every value (copies unless there is exactly one chunk)."""
        if not self._chunks:
            return _build([], self._type, "")
        return concat_arrays(list(self._chunks))

    def take(self, indices: Any) -> ChunkedArray:
        """The values at ``indices`` (one chunk)."""
        return ChunkedArray([self.combine_chunks().take(indices)], self._type)  # type: ignore[attr-defined]

    def filter(self, mask: Any) -> ChunkedArray:
        """The values where ``mask`` is True (one chunk)."""
        return self.take(_select._selection(mask, self._length))

    def is_null(self) -> ChunkedArray:
        """Booleans, True where a value is null (chunk by chunk)."""
        return ChunkedArray([_select.is_null(c) for c in self._chunks], t.bool_())

    def fill_null(self, fill_value: Any) -> ChunkedArray:
        """Nulls replaced by ``fill_value`` (chunk by chunk)."""
        return ChunkedArray([_select.fill_null(c, fill_value) for c in self._chunks], self._type)

    def cast(self, target_type: Any, safe: bool = True) -> ChunkedArray:
        """Every chunk cast to ``target_type``."""
        chunks = [c.cast(target_type, safe=safe) for c in self._chunks]  # type: ignore[attr-defined]
        dtype = chunks[0].type if chunks else _cast_type(target_type)
        return ChunkedArray(chunks, dtype)

    def to_pandas(self) -> Any:
        """A pandas Series of the values (see :func:`quiver.pandas_out.batch_to_pandas`)."""
        return self.combine_chunks().to_pandas()

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """An ``arrow_array_stream`` PyCapsule of the chunks (a stream of arrays of this
        type, the Arrow PyCapsule protocol), zero-copy.

        >>> import pyarrow as pa
        >>> pa.chunked_array(chunked_array([[1], [2, 3]])).num_chunks
        2
        """
        # ctypes and the C structs load on the first export, not with this module
        from .cdata.stream import export_stream

        return export_stream(self, requested_schema)

    def validate(self, *, full: bool = False) -> None:
        """Validate every chunk."""
        for c in self._chunks:
            validate_array(c, full=full)

    def equals(self, other: object) -> bool:
        """Same type and values, whatever the chunking."""
        if not isinstance(other, ChunkedArray):
            return False
        if not self._type.equals(other._type) or self._length != other._length:
            return False
        return _chunks_equal(self._chunks, other._chunks)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ChunkedArray):
            return NotImplemented
        return self.equals(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        parts = []
        shown = 0
        for c in self._chunks:
            if shown >= _PREVIEW:
                parts.append("...")
                break
            take = min(len(c), _PREVIEW - shown)
            parts.append(_preview(c.slice(0, take).to_pylist(), len(c)))
            shown += take
        return f"<quiver.ChunkedArray {self._type} length={self._length}> [" + ",".join(
            parts
        ) + "]"


def chunked_array(arrays: Sequence[Any], type: t.DataType | None = None) -> ChunkedArray:
    """A ChunkedArray from Arrays (or Python lists built with ``type``)."""
    chunks = [_build(a, type, "") for a in arrays]
    return ChunkedArray(chunks, type)


# --------------------------------------------------------------------------------------
# Table


class Table(_PandasConversions, _TabularCData):
    """A schema and a list of record batches of that schema, like ``pyarrow.Table``.

    >>> tbl = Table.from_batches([record_batch({"n": [1, 2]}), record_batch({"n": [3]})])
    >>> tbl.num_rows, tbl.column("n").num_chunks, tbl.to_pydict()
    (3, 2, {'n': [1, 2, 3]})
    >>> tbl.equals(table({"n": [1, 2, 3]}))  # chunking does not matter
    True
    """

    __slots__ = ("_batches", "_num_rows", "_schema")

    def __init__(self, schema: t.Schema, batches: Sequence[RecordBatch]) -> None:
        if not isinstance(schema, t.Schema):
            raise ArrowTypeError(f"expected a Schema, found {type(schema).__name__}")
        batches = tuple(batches)
        for i, b in enumerate(batches):
            if not isinstance(b, RecordBatch):
                raise ArrowTypeError(
                    f"expected batch {i} as a RecordBatch, found {type(b).__name__}"
                )
            if not b.schema.equals(schema):
                raise ArrowInvalidArgument(
                    f"expected batch {i} with the table schema ({_one_line(schema)}), "
                    f"found ({_one_line(b.schema)})"
                )
        self._schema = schema
        self._batches = batches
        self._num_rows = sum(b.num_rows for b in batches)

    # -- construction ------------------------------------------------------------------

    @classmethod
    def from_batches(
        cls, batches: Iterable[RecordBatch], schema: t.Schema | None = None
    ) -> Table:
        """A table of ``batches`` (the schema comes from the first when not given)."""
        batches = list(batches)
        if schema is None:
            if not batches:
                raise ArrowInvalidArgument("expected a schema for a table without batches")
            if not isinstance(batches[0], RecordBatch):
                raise ArrowTypeError(
                    f"expected batch 0 as a RecordBatch, found {type(batches[0]).__name__}"
                )
            schema = batches[0].schema
        return cls(schema, batches)

    @classmethod
    def from_arrays(
        cls,
        arrays: Sequence[Any],
        names: Sequence[str] | None = None,
        schema: t.Schema | None = None,
        metadata: Any = None,
    ) -> Table:
        """A one-batch table from arrays (ChunkedArrays are combined) and names or a schema."""
        batch = RecordBatch.from_arrays(arrays, names, schema, metadata)
        return cls(batch.schema, [batch])

    @classmethod
    def from_pydict(
        cls, mapping: Mapping[str, Any], schema: t.Schema | None = None, metadata: Any = None
    ) -> Table:
        """A one-batch table from ``{name: values}``."""
        batch = RecordBatch.from_pydict(mapping, schema, metadata)
        return cls(batch.schema, [batch])

    @classmethod
    def from_pylist(
        cls,
        rows: Sequence[Mapping[str, Any]],
        schema: t.Schema | None = None,
        metadata: Any = None,
    ) -> Table:
        """A one-batch table from row dicts."""
        batch = RecordBatch.from_pylist(rows, schema, metadata)
        return cls(batch.schema, [batch])

    # -- attributes --------------------------------------------------------------------

    @property
    def schema(self) -> t.Schema:
        """The table's schema."""
        return self._schema

    @property
    def num_rows(self) -> int:
        """Total rows over all batches."""
        return self._num_rows

    @property
    def num_columns(self) -> int:
        """Number of columns."""
        return len(self._schema.fields)

    @property
    def shape(self) -> tuple[int, int]:
        """(num_rows, num_columns)."""
        return self._num_rows, len(self._schema.fields)

    @property
    def column_names(self) -> list[str]:
        """The column names in order."""
        return self._schema.names

    @property
    def columns(self) -> list[ChunkedArray]:
        """Every column as a ChunkedArray."""
        return [self.column(i) for i in range(len(self._schema.fields))]

    @property
    def nbytes(self) -> int:
        """Total size of the buffers the batches reference (each buffer counted once)."""
        seen: set[int] = set()
        return sum(_buffer_bytes(c, seen) for b in self._batches for c in b.columns)

    def __len__(self) -> int:
        return self._num_rows

    def field(self, i: int | str) -> t.Field:
        """A field by position or name."""
        return self._schema.fields[_column_index(self._schema, i)]

    def column(self, i: int | str) -> ChunkedArray:
        """A column by position or name, one chunk per batch."""
        k = _column_index(self._schema, i)
        return ChunkedArray([b.column(k) for b in self._batches], self._schema.fields[k].type)

    def __getitem__(self, key: int | str | slice) -> Any:
        if isinstance(key, slice):
            start, stop, step = key.indices(self._num_rows)
            if step != 1:
                raise ArrowInvalidArgument(f"expected a slice step of 1, found {step}")
            return self.slice(start, max(stop - start, 0))
        return self.column(key)

    def to_batches(self, max_chunksize: int | None = None) -> list[RecordBatch]:
        """The batches (split into at most ``max_chunksize`` rows each when given)."""
        if max_chunksize is None:
            return list(self._batches)
        if not isinstance(max_chunksize, int) or max_chunksize <= 0:
            raise ArrowInvalidArgument(
                f"expected a positive max_chunksize, found {max_chunksize!r}"
            )
        out = []
        for b in self._batches:
            for start in range(0, b.num_rows, max_chunksize):
                out.append(b.slice(start, max_chunksize))
        return out

    @property
    def num_batches(self) -> int:
        """Number of record batches."""
        return len(self._batches)

    # -- conversion --------------------------------------------------------------------

    def to_pydict(self) -> dict[str, list[Any]]:
        """``{name: values}`` over all batches."""
        return {f.name: self.column(i).to_pylist() for i, f in enumerate(self._schema.fields)}

    def to_pylist(self) -> list[dict[str, Any]]:
        """One dict per row over all batches, like pyarrow."""
        out: list[dict[str, Any]] = []
        for b in self._batches:
            out.extend(b.to_pylist())
        return out

    # -- transformations ---------------------------------------------------------------

    def slice(self, offset: int = 0, length: int | None = None) -> Table:
        """Rows ``offset .. offset + length`` without copying."""
        offset, length = slice_bounds(self._num_rows, offset, length)
        return Table(self._schema, _window(self._batches, offset, length))

    def select(self, columns: Iterable[int | str]) -> Table:
        """A table of the given columns (by index or name), in that order."""
        idx = [_column_index(self._schema, c) for c in columns]
        schema = t.Schema(tuple(self._schema.fields[i] for i in idx), self._schema.metadata)
        return Table(schema, [b.select(idx) for b in self._batches])

    def rename_columns(self, names: Sequence[str] | Mapping[str, str]) -> Table:
        """A table with new column names."""
        schema = _rename(self._schema, names)
        return Table(schema, [RecordBatch(schema, b.columns, b.num_rows) for b in self._batches])

    def add_column(self, i: int, field_: str | t.Field, column: Any) -> Table:
        """A table with ``column`` (an Array, ChunkedArray or values) inserted at ``i``.

        The new column is split to follow the table's batches (zero-copy slices).
        """
        if isinstance(column, ChunkedArray):
            column = column.combine_chunks()
        fld_type = field_.type if isinstance(field_, t.Field) else None
        name = field_.name if isinstance(field_, t.Field) else str(field_)
        col = _build(column, fld_type, name)
        if len(col) != self._num_rows:
            raise ArrowInvalidArgument(
                f"expected column {name!r} of length {self._num_rows}, found {len(col)}"
            )
        if not self._batches:
            if not isinstance(i, int) or not 0 <= i <= len(self._schema.fields):
                raise ArrowIndexError(
                    f"expected a column position in 0..{len(self._schema.fields)}, found {i!r}"
                )
            fld = field_ if isinstance(field_, t.Field) else t.field(name, col.type)
            fields = list(self._schema.fields)
            fields.insert(i, fld)
            return Table(t.Schema(tuple(fields), self._schema.metadata), [])
        out, start = [], 0
        for b in self._batches:
            out.append(b.add_column(i, field_, col.slice(start, b.num_rows)))
            start += b.num_rows
        return Table(out[0].schema, out)

    def append_column(self, field_: str | t.Field, column: Any) -> Table:
        """A table with ``column`` added at the end."""
        return self.add_column(len(self._schema.fields), field_, column)

    def remove_column(self, i: int) -> Table:
        """A table without column ``i``."""
        k = _column_index(self._schema, i)
        return self.select([j for j in range(len(self._schema.fields)) if j != k])

    def drop_columns(self, columns: str | int | Iterable[int | str]) -> Table:
        """A table without the given columns (names or indices)."""
        if isinstance(columns, (str, int)):
            columns = [columns]
        drop = {_column_index(self._schema, c) for c in columns}
        return self.select([j for j in range(len(self._schema.fields)) if j not in drop])

    def replace_schema_metadata(self, metadata: Any = None) -> Table:
        """A table whose schema carries ``metadata`` (None removes it)."""
        schema = self._schema.with_metadata(metadata)
        return Table(schema, [b.replace_schema_metadata(metadata) for b in self._batches])

    with_schema_metadata = replace_schema_metadata

    def combine_chunks(self) -> Table:
        """A table of one batch (copies the data of multi-batch tables)."""
        if len(self._batches) == 1:
            return self
        cols = [self.column(i).combine_chunks() for i in range(len(self._schema.fields))]
        return Table(self._schema, [RecordBatch(self._schema, cols, self._num_rows)])

    def to_reader(self, max_chunksize: int | None = None) -> RecordBatchReader:
        """A :class:`RecordBatchReader` over the batches (split to ``max_chunksize``).

        >>> table({"a": [1, 2]}).to_reader().read_all().num_rows
        2
        """
        return RecordBatchReader.from_batches(self._schema, self.to_batches(max_chunksize))

    # -- selection (quiver.array.select) -------------------------------------------------

    def take(self, indices: Any) -> Table:
        """The rows at ``indices`` (a null index gives a row of nulls), as one batch."""
        return Table.from_batches([self.combine_chunks()._one_batch().take(indices)])

    def filter(self, mask: Any) -> Table:
        """The rows where ``mask`` is True (a null in the mask drops the row)."""
        return self.take(_select._selection(mask, self._num_rows))

    def sort_by(self, sorting: str | Sequence[tuple[str, str]]) -> Table:
        """The rows sorted by one column name or ``[(name, order), ...]`` (stable; nulls
        last), like pyarrow's ``Table.sort_by``.

        >>> table({"k": ["b", "a", "b"], "v": [1, 2, 0]}).sort_by(
        ...     [("k", "ascending"), ("v", "descending")]).to_pydict()
        {'k': ['a', 'b', 'b'], 'v': [2, 1, 0]}
        """
        return Table.from_batches([self.combine_chunks()._one_batch().sort_by(sorting)])

    def _one_batch(self) -> RecordBatch:
        if len(self._batches) == 1:
            return self._batches[0]
        cols = [_build([], f.type, f.name) for f in self._schema.fields]
        return RecordBatch(self._schema, cols, 0)

    # -- checks ------------------------------------------------------------------------

    def validate(self, *, full: bool = False, check_decimal_precision: bool = False) -> None:
        """Validate every batch."""
        for b in self._batches:
            b.validate(full=full, check_decimal_precision=check_decimal_precision)

    def equals(self, other: object, check_metadata: bool = False) -> bool:
        """Same schema and logically equal values, whatever the chunking."""
        if not isinstance(other, Table):
            return False
        if not self._schema.equals(other._schema, check_metadata=check_metadata):
            return False
        if self._num_rows != other._num_rows:
            return False
        for i in range(len(self._schema.fields)):
            a = [b.column(i) for b in self._batches]
            b = [x.column(i) for x in other._batches]
            if not _chunks_equal(a, b):
                return False
        return True

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Table):
            return NotImplemented
        return self.equals(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        lines = ["quiver.Table"]
        if self._schema.fields:
            lines.append(str(self._schema))
        lines.append("----")
        for i, f in enumerate(self._schema.fields):
            chunks = []
            shown = 0
            for b in self._batches:
                if shown >= _PREVIEW:
                    chunks.append("...")
                    break
                col = b.column(i)
                take = min(len(col), _PREVIEW - shown)
                chunks.append(_preview(col.slice(0, take).to_pylist(), len(col)))
                shown += take
            lines.append(f"{f.name}: [" + ",".join(chunks) + "]")
        return "\n".join(lines)


def _one_line(schema: t.Schema) -> str:
    return ", ".join(str(f) for f in schema.fields)


# --------------------------------------------------------------------------------------
# constructors


def _is_rows(data: Any) -> bool:
    return isinstance(data, list) and bool(data) and isinstance(data[0], Mapping)


def _column_values(f: t.Field, column: Array) -> list[Any]:
    """``column.to_pylist()``; a conversion error names the column it came from."""
    try:
        return column.to_pylist()
    except ArrowError as exc:
        path = exc.field_path
        exc.field_path = None
        exc.locate(field_path=f"{f.name}.{path}" if path else f.name)
        raise


def record_batch(
    data: Any,
    names: Sequence[str] | None = None,
    schema: t.Schema | None = None,
    metadata: Any = None,
) -> RecordBatch:
    """A RecordBatch from a dict of columns, a list of arrays plus names, or a list of rows
    (``quiver.record_batch``, :func:`quiver.constructors.record_batch`, also takes pandas
    frames and other libraries' data)."""
    if isinstance(data, RecordBatch):
        return data
    if isinstance(data, Mapping):
        return RecordBatch.from_pydict(data, schema, metadata)
    if _is_rows(data):
        return RecordBatch.from_pylist(data, schema, metadata)
    if isinstance(data, (list, tuple)):
        return RecordBatch.from_arrays(list(data), names, schema, metadata)
    raise ArrowTypeError(
        f"expected a dict, a list of arrays or a list of rows, found {type(data).__name__}"
    )


def table(
    data: Any,
    names: Sequence[str] | None = None,
    schema: t.Schema | None = None,
    metadata: Any = None,
) -> Table:
    """A Table from a dict of columns, arrays plus names, rows, or record batches
    (``quiver.table``, :func:`quiver.constructors.table`, also takes pandas frames and other
    libraries' data)."""
    if isinstance(data, Table):
        return data
    if isinstance(data, RecordBatch):
        return Table(data.schema, [data])
    if isinstance(data, (list, tuple)) and data and all(isinstance(b, RecordBatch) for b in data):
        return Table.from_batches(list(data), schema)
    return Table.from_batches([record_batch(data, names, schema, metadata)])


def concat_tables(tables: Iterable[Table]) -> Table:
    """One table of the batches of ``tables`` in order (no copy), whose schemas must agree
    (metadata of the first is kept), like ``pyarrow.concat_tables``.

    >>> concat_tables([table({"a": [1]}), table({"a": [2, 3]})]).to_pydict()
    {'a': [1, 2, 3]}
    """
    tables = list(tables)
    if not tables:
        raise ArrowInvalidArgument("expected at least one table to concatenate, found none")
    schema = tables[0].schema
    batches: list[RecordBatch] = []
    for i, tbl in enumerate(tables):
        if not isinstance(tbl, Table):
            raise ArrowTypeError(
                f"expected table {i} as a quiver Table, found {type(tbl).__name__}"
            )
        if not tbl.schema.equals(schema):
            raise ArrowInvalidArgument(
                f"expected table {i} with the schema of table 0 ({_one_line(schema)}), "
                f"found ({_one_line(tbl.schema)})"
            )
        batches.extend(
            b if b.schema is schema else RecordBatch._trusted(schema, b.columns, b.num_rows)
            for b in tbl.to_batches()
        )
    return Table(schema, batches)


class RecordBatchReader:
    """A schema and an iterator of record batches, read once, like
    ``pyarrow.RecordBatchReader``; the IPC readers are ones too.

    >>> reader = RecordBatchReader.from_batches(
    ...     record_batch({"a": [1]}).schema,
    ...     [record_batch({"a": [1]}), record_batch({"a": [2]})])
    >>> [b.num_rows for b in reader]
    [1, 1]
    """

    def __init__(self, schema: t.Schema, batches: Iterable[RecordBatch]) -> None:
        if not isinstance(schema, t.Schema):
            raise ArrowTypeError(f"expected a Schema, found {type(schema).__name__}")
        self._schema = schema
        self._iter: Iterator[RecordBatch] = iter(batches)
        self._closed = False

    @classmethod
    def from_batches(cls, schema: Any, batches: Iterable[Any]) -> RecordBatchReader:
        """A reader of ``batches`` (quiver RecordBatches of ``schema``, checked as they come;
        ``schema`` may be any ``__arrow_c_schema__`` object)."""
        if not isinstance(schema, t.Schema):
            # another library's schema (``__arrow_c_schema__``); ctypes loads only for one
            from .cdata.schema import import_schema

            schema = (import_schema(schema) if hasattr(schema, "__arrow_c_schema__")
                      else t.schema(schema))

        def checked() -> Iterator[RecordBatch]:
            for i, b in enumerate(batches):
                if not isinstance(b, RecordBatch):
                    b = record_batch(b)
                if not b.schema.equals(schema):
                    raise ArrowInvalidArgument(
                        f"expected batch {i} with the reader's schema ({_one_line(schema)}), "
                        f"found ({_one_line(b.schema)})"
                    )
                yield b

        return cls(schema, checked())

    @classmethod
    def from_stream(cls, data: Any) -> RecordBatchReader:
        """A reader of any ``__arrow_c_stream__`` source (pyarrow, polars, duckdb), lazily."""
        # ctypes and the C structs load only for such a source
        from .cdata.import_array import ArrayStreamReader, stream_capsule
        from .cdata.schema import _schema_of

        stream = ArrayStreamReader(stream_capsule(data))
        field = stream.field
        if not isinstance(field.type, t.StructType):
            raise ArrowTypeError(
                f"expected a stream of record batches, found a stream of {field.type}"
            )
        batches = (RecordBatch._from_struct_array(_schema_of(field), a) for a in stream)
        return cls(_schema_of(field), batches)

    @property
    def schema(self) -> t.Schema:
        """The schema of every batch."""
        return self._schema

    def read_next_batch(self) -> RecordBatch:
        """The next batch; ``StopIteration`` at the end."""
        if self._closed:
            raise ArrowInvalidArgument("expected an open reader, found it closed")
        return next(self._iter)

    def __iter__(self) -> Iterator[RecordBatch]:
        while True:
            try:
                yield self.read_next_batch()
            except StopIteration:
                return

    def read_all(self) -> Table:
        """Every remaining batch as a Table."""
        return Table.from_batches(list(self), schema=self._schema)

    def read_pandas(self, **options: Any) -> Any:
        """Every remaining batch as a pandas DataFrame (``options`` as ``Table.to_pandas``)."""
        return self.read_all().to_pandas(**options)

    def close(self) -> None:
        """Stop reading (idempotent)."""
        self._closed = True

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """An ``arrow_array_stream`` PyCapsule that reads this reader's batches as the
        consumer pulls them (the Arrow PyCapsule protocol); the IPC readers inherit it.

        >>> import pyarrow as pa
        >>> pa.RecordBatchReader.from_stream(table({"a": [1]}).to_reader()).read_all().num_rows
        1
        """
        # ctypes and the C structs load on the first export, not with this module
        from .cdata.stream import export_stream

        return export_stream(self, requested_schema)

    def __enter__(self) -> RecordBatchReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
