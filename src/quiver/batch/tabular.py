"""What RecordBatch and Table share: :class:`Tabular`, their common base (construction
from arrays, dicts and rows; the pyarrow attributes; column lookup; pandas; the Arrow
PyCapsule protocol)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Self

from .. import types as t
from .._readonly import readonly
from ..array import select as _select
from ..array.base import Array, step_one_slice
from ..errors import ArrowInvalidArgument, ArrowKeyError, ArrowTypeError
from ._common import (
    batch_to_pandas,
    column_index,
    columns_from_rows,
    export_c_stream,
    frame_parts,
    schema_from,
)
from .chunked import build

if TYPE_CHECKING:
    import pandas as pd


class Tabular:
    """What RecordBatch and Table share: a schema, a row count, columns by position or
    name, pandas conversions, and the Arrow PyCapsule protocol (the schema and a stream).

    Subclasses keep ``_schema`` and ``_num_rows`` and give ``column``, ``slice``,
    ``select``, ``add_column``, ``take`` and :meth:`_of_parts`.
    """

    __slots__ = ()
    _schema: t.Schema
    _num_rows: int

    @classmethod
    def _of_parts(cls, schema: t.Schema, columns: list[Array], num_rows: int | None) -> Self:
        """An object of this class with the rows of one record batch's parts."""
        raise NotImplementedError

    # -- construction ------------------------------------------------------------------

    @classmethod
    def from_arrays(
        cls,
        arrays: Sequence[Any],
        names: Sequence[str] | None = None,
        schema: t.Schema | None = None,
        metadata: Any = None,
    ) -> Self:
        """From arrays (ChunkedArrays are combined) and either ``names`` or a ``schema``: a
        batch, or a table of one batch."""
        arrays = list(arrays)
        if schema is not None:
            if names is not None:
                raise ArrowInvalidArgument("expected names or schema, found both")
            if len(arrays) != len(schema.fields):
                raise ArrowInvalidArgument(
                    f"expected {len(schema.fields)} arrays for the schema, found {len(arrays)}"
                )
            cols = [build(a, f.type, f.name) for a, f in zip(arrays, schema.fields)]
            if metadata is not None:
                schema = schema.with_metadata(metadata)
            return cls._of_parts(schema, cols, None)
        if names is None:
            raise ArrowInvalidArgument("expected names or schema to name the arrays, found neither")
        names = list(names)
        if len(names) != len(arrays):
            raise ArrowInvalidArgument(
                f"expected {len(arrays)} names for the arrays, found {len(names)}"
            )
        cols = [build(a, None, n) for a, n in zip(arrays, names)]
        return cls._of_parts(schema_from(names, cols, metadata), cols, None)

    @classmethod
    def from_pydict(
        cls, mapping: Mapping[str, Any], schema: t.Schema | None = None, metadata: Any = None
    ) -> Self:
        """From ``{name: values}`` (Arrays, lists or numpy arrays)."""
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
    ) -> Self:
        """From a list of row dicts (names from the schema or the first row)."""
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
        columns = columns_from_rows(rows, names)
        if schema is not None:
            return cls.from_arrays(columns, schema=schema, metadata=metadata)
        return cls.from_arrays(columns, names=names, metadata=metadata)

    # -- the pyarrow attributes --------------------------------------------------------

    schema: t.Schema = readonly("_schema", "The schema.")

    num_rows: int = readonly("_num_rows", "Number of rows (over all batches, for a table).")

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

    def __len__(self) -> int:
        return self._num_rows

    def field(self, i: int | str) -> t.Field:
        """A field by position or name."""
        return self._schema.fields[column_index(self._schema, i)]

    def __getitem__(self, key: int | str | slice) -> Any:
        if isinstance(key, slice):
            return self.slice(*step_one_slice(key, self._num_rows))  # type: ignore[attr-defined]
        return self.column(key)  # type: ignore[attr-defined]

    # -- editing columns ---------------------------------------------------------------

    def append_column(self, field_: str | t.Field, column: Any) -> Self:
        """A copy with ``column`` added at the end."""
        return self.add_column(len(self._schema.fields), field_, column)  # type: ignore[attr-defined]

    def drop_columns(self, columns: str | int | Iterable[int | str]) -> Self:
        """A copy without the given columns (names or indices)."""
        if isinstance(columns, (str, int)):
            columns = [columns]
        drop = {column_index(self._schema, c) for c in columns}
        keep = [j for j in range(len(self._schema.fields)) if j not in drop]
        return self.select(keep)  # type: ignore[attr-defined]

    def filter(self, mask: Any) -> Self:
        """The rows where ``mask`` is True (a null in the mask drops the row)."""
        return self.take(_select.selection(mask, self._num_rows))  # type: ignore[attr-defined]

    # -- equality and printing -----------------------------------------------------------

    def _same_frame(self, other: object, kind: type, check_metadata: bool) -> bool:
        """``other`` is a ``kind`` with an equal schema and as many rows (equals' first
        half; the values are the other)."""
        return (
            isinstance(other, kind)
            and self._schema.equals(other._schema, check_metadata=check_metadata)
            and self._num_rows == other._num_rows
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tabular):
            return NotImplemented
        return self.equals(other)  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]

    def _repr(self, title: str, previews: Iterable[str]) -> str:
        """``title``, the schema, and one line per column: its name and preview."""
        lines = [title]
        if self._schema.fields:
            lines.append(str(self._schema))
        lines.append("----")
        lines.extend(f"{f.name}: {p}" for f, p in zip(self._schema.fields, previews))
        return "\n".join(lines)

    # -- pandas ------------------------------------------------------------------------

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
        return batch_to_pandas.call(
            self,
            types_mapper=types_mapper,
            date_as_object=date_as_object,
            timestamp_as_object=timestamp_as_object,
            ignore_metadata=ignore_metadata,
            **ignored,
        )

    @classmethod
    def from_pandas(
        cls, df: pd.DataFrame, schema: t.Schema | None = None, *,
        preserve_index: bool | None = None,
    ) -> Self:
        """From a pandas DataFrame (numpy-backed columns are viewed, not copied), with
        pyarrow's ``pandas`` metadata; ``preserve_index`` as pyarrow's (None: a RangeIndex
        in the metadata only, another index as columns); see
        :func:`quiver.pandas_in.frame_parts`, which also takes a ``schema``."""
        return cls._of_parts(*frame_parts.call(df, preserve_index=preserve_index, schema=schema))

    # -- the Arrow PyCapsule protocol ----------------------------------------------------

    def __arrow_c_schema__(self) -> Any:
        """The schema as an ``arrow_schema`` PyCapsule (the Arrow PyCapsule protocol).

        >>> import pyarrow as pa
        >>> from quiver.batch import record_batch
        >>> pa.schema(record_batch({"a": [1]})).names
        ['a']
        """
        return self._schema.__arrow_c_schema__()

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """An ``arrow_array_stream`` PyCapsule that hands out the batches one at a time,
        zero-copy, as the consumer pulls them.

        >>> import pyarrow as pa
        >>> from quiver.batch import table
        >>> pa.table(table({"a": [1, 2]})).num_rows
        2
        """
        return export_c_stream.call(self, requested_schema)
