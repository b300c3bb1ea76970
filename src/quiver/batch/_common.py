"""What the batch modules share: column lookup by index or name, zero-copy windows over
chunks, value previews for ``repr``, and the hooks to the layers above (the part
RecordBatch and Table have in common is :class:`~quiver.batch.tabular.Tabular`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .. import types as t
from ..array.base import Array
from ..errors import (
    ArrowError,
    ArrowIndexError,
    ArrowInvalidArgument,
    ArrowKeyError,
    ArrowTypeError,
)
from ..hooks import Hook

if TYPE_CHECKING:
    pass

# answered above the batch layer (quiver.hooks): the C data interface (ctypes loads on
# the first export or foreign object, not with this package) and the pandas conversions
export_c_batch = Hook("cdata.export_batch")
export_c_stream = Hook("cdata.export_stream")
import_c_type = Hook("cdata.import_type")
import_c_schema = Hook("cdata.import_schema")
reader_from_c_stream = Hook("cdata.reader_from_stream")
batch_to_pandas = Hook("pandas.batch_to_pandas")
frame_parts = Hook("pandas.frame_parts")


PREVIEW = 10


def column_index(schema: t.Schema, key: int | str, what: str = "column") -> int:
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


def window_of(parts: Sequence[Any], offset: int, length: int) -> list[Any]:
    """The pieces of ``parts`` (chunks or batches) that rows ``offset .. offset+length``
    of their concatenation cover, each sliced without copying.  No rows covered still
    gives one empty piece (of the part at ``offset``) when there are parts, as pyarrow
    keeps one empty chunk: a dictionary column keeps its dictionary."""
    out = []
    start = 0
    at = None  # the part holding row ``offset``, for an empty window
    for part in parts:
        end = start + len(part)
        if at is None and offset < end:
            at = (part, offset - start)
        lo, hi = max(offset, start), min(offset + length, end)
        if hi > lo:
            out.append(part.slice(lo - start, hi - lo))
        start = end
    if not out and parts:
        part, lo = at if at is not None else (parts[-1], len(parts[-1]))
        out.append(part.slice(lo, 0))
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


def preview(values: list[Any], total: int) -> str:
    more = ",..." if total > len(values) else ""
    return "[" + ",".join(_format_value(v) for v in values) + more + "]"


def preview_chunks(chunks: Iterable[Array]) -> str:
    """The first values of ``chunks``, chunk by chunk: ``[[1,2],[3,...]]``."""
    parts = []
    shown = 0
    for c in chunks:
        if shown >= PREVIEW:
            parts.append("...")
            break
        take = min(len(c), PREVIEW - shown)
        parts.append(preview(c.slice(0, take).to_pylist(), len(c)))
        shown += take
    return "[" + ",".join(parts) + "]"


def buffer_bytes(arr: Array, seen: set[int]) -> int:
    total = 0
    for buf in arr.buffers:
        if buf is not None and id(buf) not in seen:
            seen.add(id(buf))
            total += int(buf.nbytes)
    for child in arr.children:
        total += buffer_bytes(child, seen)
    if arr.dictionary is not None:
        total += buffer_bytes(arr.dictionary, seen)
    return total


def renamed_schema(schema: t.Schema, names: Sequence[str] | Mapping[str, str]) -> t.Schema:
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


def schema_from(names: Sequence[str], arrays: Sequence[Array], metadata: Any) -> t.Schema:
    return t.schema([t.field(n, a.type) for n, a in zip(names, arrays)], metadata=metadata)


def sort_spec(sorting: str | Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
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


def cast_type(target: Any) -> t.DataType:
    if isinstance(target, t.DataType):
        return target
    return import_c_type.call(target)  # another library's type (``__arrow_c_schema__``)


def columns_from_rows(rows: Sequence[Mapping[str, Any]], names: Sequence[str]) -> list[list]:
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise ArrowTypeError(f"expected row {i} as a mapping, found {type(row).__name__}")
    return [[row.get(name) for row in rows] for name in names]


# --------------------------------------------------------------------------------------
# RecordBatch


def _one_line(schema: t.Schema) -> str:
    return ", ".join(str(f) for f in schema.fields)


def check_schema(what: str, found: t.Schema, expected: t.Schema, whose: str) -> None:
    """``found`` (the schema of ``what``, e.g. "batch 2") equals ``expected`` (``whose``:
    "the table schema"), else an ArrowInvalidArgument showing both."""
    if not found.equals(expected):
        raise ArrowInvalidArgument(
            f"expected {what} with {whose} ({_one_line(expected)}), found ({_one_line(found)})"
        )


def is_rows(data: Any) -> bool:
    return isinstance(data, list) and bool(data) and isinstance(data[0], Mapping)


def column_values(f: t.Field, column: Array) -> list[Any]:
    """``column.to_pylist()``; a conversion error names the column it came from."""
    try:
        return column.to_pylist()
    except ArrowError as exc:
        path = exc.field_path
        exc.field_path = None
        exc.locate(field_path=f"{f.name}.{path}" if path else f.name)
        raise
