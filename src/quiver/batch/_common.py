"""What the batch modules share: column lookup by index or name, zero-copy windows over
chunks, value previews for ``repr``, and :class:`_Tabular`, the part RecordBatch and
Table have in common."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Self

from .. import types as t
from ..array import select as _select
from ..array.base import Array, step_one_slice
from ..errors import (
    ArrowError,
    ArrowIndexError,
    ArrowInvalidArgument,
    ArrowKeyError,
    ArrowTypeError,
)
from ..pandas_in import frame_parts
from ..pandas_out import batch_to_pandas

if TYPE_CHECKING:
    import pandas as pd

_PREVIEW = 10


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


def _preview_chunks(chunks: Iterable[Array]) -> str:
    """The first values of ``chunks``, chunk by chunk: ``[[1,2],[3,...]]``."""
    parts = []
    shown = 0
    for c in chunks:
        if shown >= _PREVIEW:
            parts.append("...")
            break
        take = min(len(c), _PREVIEW - shown)
        parts.append(_preview(c.slice(0, take).to_pylist(), len(c)))
        shown += take
    return "[" + ",".join(parts) + "]"


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
    from ..cdata.schema import import_type

    return import_type(target)


def _columns_from_rows(rows: Sequence[Mapping[str, Any]], names: Sequence[str]) -> list[list]:
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise ArrowTypeError(f"expected row {i} as a mapping, found {type(row).__name__}")
    return [[row.get(name) for row in rows] for name in names]


# --------------------------------------------------------------------------------------
# RecordBatch


def _one_line(schema: t.Schema) -> str:
    return ", ".join(str(f) for f in schema.fields)


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


class _Tabular:
    """What RecordBatch and Table share: a schema, a row count, columns by position or
    name, pandas conversions, and the Arrow PyCapsule protocol (the schema and a stream).

    Subclasses keep ``_schema`` and ``_num_rows`` and give ``column``, ``slice``,
    ``select``, ``add_column``, ``take`` and :meth:`_of_parts`.
    """

    __slots__ = ()
    _schema: t.Schema
    _num_rows: int

    @classmethod
    def _of_parts(cls, schema: t.Schema, columns: list[Array], num_rows: int) -> Self:
        """An object of this class with the rows of one record batch's parts."""
        raise NotImplementedError

    # -- the pyarrow attributes --------------------------------------------------------

    @property
    def schema(self) -> t.Schema:
        """The schema."""
        return self._schema

    @property
    def num_rows(self) -> int:
        """Number of rows (over all batches, for a table)."""
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

    def __len__(self) -> int:
        return self._num_rows

    def field(self, i: int | str) -> t.Field:
        """A field by position or name."""
        return self._schema.fields[_column_index(self._schema, i)]

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
        drop = {_column_index(self._schema, c) for c in columns}
        keep = [j for j in range(len(self._schema.fields)) if j not in drop]
        return self.select(keep)  # type: ignore[attr-defined]

    def filter(self, mask: Any) -> Self:
        """The rows where ``mask`` is True (a null in the mask drops the row)."""
        return self.take(_select._selection(mask, self._num_rows))  # type: ignore[attr-defined]

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
        if not isinstance(other, _Tabular):
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
        return cls._of_parts(*frame_parts(df, preserve_index=preserve_index))

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
        # ctypes and the C structs load on the first export, not with this module
        from ..cdata.stream import export_stream

        return export_stream(self, requested_schema)
