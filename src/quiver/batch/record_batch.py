"""Record batches: a schema plus one array per field, all of the same length
(Columnar spec, "Record Batches")."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from .. import types as t
from ..array import select as _select
from ..array.base import Array, make_array, slice_bounds
from ..array.equal import array_equals
from ..array.take import gather
from ..array.validate import validate_array
from ..errors import (
    ArrowIndexError,
    ArrowInvalid,
    ArrowInvalidArgument,
    ArrowTypeError,
)
from ._common import (
    PREVIEW,
    buffer_bytes,
    column_index,
    column_values,
    export_c_batch,
    is_rows,
    preview,
    renamed_schema,
    sort_spec,
)
from .chunked import build
from .tabular import Tabular


class RecordBatch(Tabular):
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
    def _of_parts(
        cls, schema: t.Schema, columns: list[Array], num_rows: int | None
    ) -> RecordBatch:
        return cls(schema, columns, num_rows)

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

    # -- the pyarrow attributes --------------------------------------------------------

    @property
    def columns(self) -> list[Array]:
        """The columns in schema order."""
        return list(self._columns)

    @property
    def nbytes(self) -> int:
        """Total size of the buffers the columns reference (each buffer counted once)."""
        seen: set[int] = set()
        return sum(buffer_bytes(c, seen) for c in self._columns)

    def column(self, i: int | str) -> Array:
        """A column by position or name."""
        return self._columns[column_index(self._schema, i)]

    def __iter__(self) -> Iterator[Array]:
        return iter(self._columns)

    # -- conversion --------------------------------------------------------------------

    def to_pydict(self) -> dict[str, list[Any]]:
        """``{name: values}`` with Python values (later duplicate names win, like pyarrow)."""
        return {f.name: column_values(f, c) for f, c in zip(self._schema.fields, self._columns)}

    def to_pylist(self) -> list[dict[str, Any]]:
        """One dict per row, like pyarrow."""
        names = self._schema.names
        values = [column_values(f, c) for f, c in zip(self._schema.fields, self._columns)]
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
        idx = [column_index(self._schema, c) for c in columns]
        schema = t.Schema(tuple(self._schema.fields[i] for i in idx), self._schema.metadata)
        return RecordBatch(schema, [self._columns[i] for i in idx], self._num_rows)

    def rename_columns(self, names: Sequence[str] | Mapping[str, str]) -> RecordBatch:
        """A batch with new column names (a list of all names, or a mapping old -> new)."""
        return RecordBatch(renamed_schema(self._schema, names), self._columns, self._num_rows)

    def add_column(self, i: int, field_: str | t.Field, column: Any) -> RecordBatch:
        """A batch with ``column`` inserted at position ``i``."""
        if not isinstance(i, int) or not 0 <= i <= len(self._columns):
            raise ArrowIndexError(
                f"expected a column position in 0..{len(self._columns)}, found {i!r}"
            )
        if isinstance(field_, t.Field):
            col = build(column, field_.type, field_.name)
            fld = field_
        else:
            col = build(column, None, str(field_))
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

    def remove_column(self, i: int) -> RecordBatch:
        """A batch without column ``i``."""
        i = column_index(self._schema, i)
        fields = self._schema.fields[:i] + self._schema.fields[i + 1 :]
        cols = self._columns[:i] + self._columns[i + 1 :]
        return RecordBatch(t.Schema(fields, self._schema.metadata), cols, self._num_rows)

    def set_column(self, i: int, field_: str | t.Field, column: Any) -> RecordBatch:
        """A batch with column ``i`` replaced."""
        return self.remove_column(i).add_column(column_index(self._schema, i), field_, column)

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
        idx, valid = _select.checked_indices(indices, self._num_rows)
        cols = [gather(c, idx, valid) for c in self._columns]
        return RecordBatch(self._schema, cols, len(idx))

    def sort_by(self, sorting: str | Sequence[tuple[str, str]]) -> RecordBatch:
        """The rows sorted by one column name, or by ``[(name, "ascending" |
        "descending"), ...]`` (stable; nulls last), like pyarrow's ``sort_by``.

        >>> record_batch({"a": [2, None, 1]}).sort_by([("a", "descending")]).to_pydict()
        {'a': [2, 1, None]}
        """
        keys = sort_spec(sorting)
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
        return self._same_frame(other, RecordBatch, check_metadata) and all(
            array_equals(a, b) for a, b in zip(self._columns, other._columns)  # type: ignore[attr-defined]
        )

    def __arrow_c_array__(self, requested_schema: Any = None) -> tuple[Any, Any]:
        """This batch as ``(arrow_schema, arrow_array)`` PyCapsules: a struct array whose
        children are the columns, zero-copy (the Arrow PyCapsule protocol).

        >>> import pyarrow as pa
        >>> pa.record_batch(record_batch({"a": [1, 2]})).num_rows
        2
        """
        return export_c_batch.call(self, requested_schema)

    def __repr__(self) -> str:
        head = min(self._num_rows, PREVIEW)
        return self._repr("quiver.RecordBatch", (
            preview(c.slice(0, head).to_pylist(), len(c)) for c in self._columns))


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
    if is_rows(data):
        return RecordBatch.from_pylist(data, schema, metadata)
    if isinstance(data, (list, tuple)):
        return RecordBatch.from_arrays(list(data), names, schema, metadata)
    raise ArrowTypeError(
        f"expected a dict, a list of arrays or a list of rows, found {type(data).__name__}"
    )


# RecordBatch names quiver.batch as its module, so doctest finds its methods' examples
# only when pointed at them
__test__ = {"RecordBatch": RecordBatch}
