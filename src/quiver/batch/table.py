"""Tables (a schema plus record batches of it), their constructors, and readers of
record batches."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from .. import types as t
from .._readonly import readonly
from ..array.base import Array, slice_bounds
from ..errors import ArrowIndexError, ArrowInvalidArgument, ArrowTypeError
from ._common import (
    buffer_bytes,
    check_schema,
    column_index,
    export_c_stream,
    import_c_schema,
    preview_chunks,
    reader_from_c_stream,
    renamed_schema,
    window_of,
)
from .chunked import ChunkedArray, build, chunks_equal
from .record_batch import RecordBatch, record_batch
from .tabular import Tabular


def _is_chunk_list(column: Any) -> bool:
    """Whether ``column`` is a list (or tuple) of chunks: every item an Array or a sequence
    of values (pyarrow's ``Table.add_column`` takes any list as chunks)."""
    return isinstance(column, (list, tuple)) and bool(column) and all(
        isinstance(c, (Array, list, tuple, np.ndarray)) for c in column)


class Table(Tabular):
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
            check_schema(f"batch {i}", b.schema, schema, "the table schema")
        self._schema = schema
        self._batches = batches
        self._num_rows = sum(b.num_rows for b in batches)

    # -- construction ------------------------------------------------------------------

    @classmethod
    def _of_parts(cls, schema: t.Schema, columns: list[Array], num_rows: int | None) -> Table:
        batch = RecordBatch(schema, columns, num_rows)
        return cls(batch.schema, [batch])

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

    # -- attributes --------------------------------------------------------------------

    @property
    def columns(self) -> list[ChunkedArray]:
        """Every column as a ChunkedArray."""
        return [self.column(i) for i in range(len(self._schema.fields))]

    @property
    def nbytes(self) -> int:
        """Total size of the buffers the batches reference (each buffer counted once)."""
        seen: set[int] = set()
        return sum(buffer_bytes(c, seen) for b in self._batches for c in b.columns)

    def column(self, i: int | str) -> ChunkedArray:
        """A column by position or name, one chunk per batch."""
        k = column_index(self._schema, i)
        return ChunkedArray([b.column(k) for b in self._batches], self._schema.fields[k].type)

    def to_batches(self, max_chunksize: int | None = None) -> list[RecordBatch]:
        """The batches (split into at most ``max_chunksize`` rows each when given); none
        for a table without rows, as pyarrow (its columns still keep an empty chunk)."""
        if self._num_rows == 0:
            return []
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
        return Table(self._schema, window_of(self._batches, offset, length))

    def select(self, columns: Iterable[int | str]) -> Table:
        """A table of the given columns (by index or name), in that order."""
        idx = [column_index(self._schema, c) for c in columns]
        schema = t.Schema(tuple(self._schema.fields[i] for i in idx), self._schema.metadata)
        return Table(schema, [b.select(idx) for b in self._batches])

    def rename_columns(self, names: Sequence[str] | Mapping[str, str]) -> Table:
        """A table with new column names."""
        schema = renamed_schema(self._schema, names)
        return Table(schema, [RecordBatch(schema, b.columns, b.num_rows) for b in self._batches])

    def add_column(self, i: int, field_: str | t.Field, column: Any) -> Table:
        """A table with ``column`` (an Array, ChunkedArray or values) inserted at ``i``.

        A list whose items are all arrays or sequences is a list of chunks, as in pyarrow
        (``[[1], [2]]`` is an int64 column of two chunks); a list of scalars is the values.
        The new column is split to follow the table's batches (zero-copy slices).
        """
        fld_type = field_.type if isinstance(field_, t.Field) else None
        name = field_.name if isinstance(field_, t.Field) else str(field_)
        if _is_chunk_list(column):
            chunks = [build(c, fld_type, name) for c in column]
            if fld_type is None and chunks:
                fld_type = chunks[0].type
            column = ChunkedArray(chunks, fld_type)
        if isinstance(column, ChunkedArray):
            column = column.combine_chunks()
        col = build(column, fld_type, name)
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

    def remove_column(self, i: int) -> Table:
        """A table without column ``i``."""
        k = column_index(self._schema, i)
        return self.select([j for j in range(len(self._schema.fields)) if j != k])

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
        cols = [build([], f.type, f.name) for f in self._schema.fields]
        return RecordBatch(self._schema, cols, 0)

    # -- checks ------------------------------------------------------------------------

    def validate(self, *, full: bool = False, check_decimal_precision: bool = False) -> None:
        """Validate every batch."""
        for b in self._batches:
            b.validate(full=full, check_decimal_precision=check_decimal_precision)

    def equals(self, other: object, check_metadata: bool = False) -> bool:
        """Same schema and logically equal values, whatever the chunking."""
        if not self._same_frame(other, Table, check_metadata):
            return False
        for i in range(len(self._schema.fields)):
            a = [b.column(i) for b in self._batches]
            b = [x.column(i) for x in other._batches]  # type: ignore[attr-defined]
            if not chunks_equal(a, b):
                return False
        return True

    def __repr__(self) -> str:
        columns = range(len(self._schema.fields))
        return self._repr("quiver.Table", (
            preview_chunks(b.column(i) for b in self._batches) for i in columns))


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
        check_schema(f"table {i}", tbl.schema, schema, "the schema of table 0")
        batches.extend(
            b if b.schema is schema else RecordBatch._trusted(schema, b.columns, b.num_rows)
            for b in tbl._batches
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
            # another library's schema (``__arrow_c_schema__``)
            schema = (import_c_schema.call(schema) if hasattr(schema, "__arrow_c_schema__")
                      else t.schema(schema))

        def checked() -> Iterator[RecordBatch]:
            for i, b in enumerate(batches):
                if not isinstance(b, RecordBatch):
                    b = record_batch(b)
                check_schema(f"batch {i}", b.schema, schema, "the reader's schema")
                yield b

        return cls(schema, checked())

    @classmethod
    def from_stream(cls, data: Any) -> RecordBatchReader:
        """A reader of any ``__arrow_c_stream__`` source (pyarrow, polars, duckdb), lazily."""
        schema, batches = reader_from_c_stream.call(data)
        return cls(schema, batches)

    schema: t.Schema = readonly("_schema", "The schema of every batch.")

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
        return export_c_stream.call(self, requested_schema)

    def __enter__(self) -> RecordBatchReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# these classes name quiver.batch as their module, so doctest finds their methods'
# examples only when pointed at them
__test__ = {"Table": Table, "RecordBatchReader": RecordBatchReader}
