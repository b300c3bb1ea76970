"""Interop: the Arrow PyCapsule protocol (C data + C stream interfaces), both ways.

Spec: CDataInterface.rst, CStreamInterface.rst, PyCapsuleInterface.rst.

- Export: :func:`export_schema`, :func:`export_array`, :func:`export_stream` return the
  capsules that ``__arrow_c_schema__`` / ``__arrow_c_array__`` / ``__arrow_c_stream__``
  hand out; :func:`attach_dunders` installs those methods on quiver's classes once.
- Import: :func:`import_type`, :func:`import_field`, :func:`import_schema`,
  :func:`import_array`, :func:`import_batch`, :func:`import_table`, :func:`import_stream`
  accept any object that speaks the protocol (pyarrow, polars, duckdb, nanoarrow, ...) or
  raw capsules.
- pandas: :func:`batch_to_pandas` and :func:`batch_from_pandas`, built with numpy.

>>> import pyarrow as pa
>>> import quiver as qv
>>> attach_dunders()
>>> pa.field(qv.field("a", qv.int8(), nullable=False))
pyarrow.Field<a: int8 not null>
"""

from __future__ import annotations

from typing import Any

from .export import export_array, export_schema, export_stream, live_exports
from .import_ import (
    ArrowStreamReader,
    import_array,
    import_batch,
    import_field,
    import_schema,
    import_stream,
    import_table,
    import_type,
    is_capsule_pair,
)
from .numpy_pandas import batch_from_pandas, batch_to_pandas

_ATTACHED = False


def _c_schema(self: Any) -> Any:
    """Export this type, field or schema as an ``arrow_schema`` PyCapsule."""
    return export_schema(self)


def _c_array(self: Any, requested_schema: Any = None) -> tuple[Any, Any]:
    """Export as ``(arrow_schema, arrow_array)`` PyCapsules, zero-copy."""
    return export_array(self, requested_schema)


def _c_stream(self: Any, requested_schema: Any = None) -> Any:
    """Export as an ``arrow_array_stream`` PyCapsule that yields batches lazily."""
    return export_stream(self, requested_schema)


def _c_schema_of_data(self: Any) -> Any:
    """Export the schema of this batch or table as an ``arrow_schema`` PyCapsule."""
    return export_schema(self.schema)


def _array_to_pandas(self: Any, **options: Any) -> Any:
    """A pandas Series of this array (see :func:`quiver.interop.numpy_pandas.array_to_pandas`;
    ``types_mapper``, ``date_as_object``, ``timestamp_as_object`` as in ``to_pandas``)."""
    from .numpy_pandas import array_to_pandas

    return array_to_pandas(self, **options)


def attach_dunders() -> None:
    """Install the PyCapsule protocol methods on quiver's classes (idempotent).

    ``__arrow_c_schema__`` on DataType, Field, Schema, RecordBatch and Table;
    ``__arrow_c_array__`` on Array and RecordBatch; ``__arrow_c_stream__`` on RecordBatch,
    ChunkedArray, Table and the IPC readers (when those modules exist).
    """
    global _ATTACHED
    if _ATTACHED:
        return
    from .. import types as t
    from ..array.base import Array

    for cls in (t.DataType, t.Field, t.Schema):
        cls.__arrow_c_schema__ = _c_schema  # type: ignore[attr-defined]
    Array.__arrow_c_array__ = _c_array  # type: ignore[attr-defined]
    Array.to_pandas = _array_to_pandas  # type: ignore[attr-defined]
    try:
        from .. import batch
    except ImportError:
        batch = None  # type: ignore[assignment]
    if batch is not None:
        record_batch = getattr(batch, "RecordBatch", None)
        if record_batch is not None:
            record_batch.__arrow_c_array__ = _c_array
            record_batch.__arrow_c_stream__ = _c_stream
            record_batch.__arrow_c_schema__ = _c_schema_of_data
        chunked = getattr(batch, "ChunkedArray", None)
        if chunked is not None:
            chunked.__arrow_c_stream__ = _c_stream
        table = getattr(batch, "Table", None)
        if table is not None:
            table.__arrow_c_stream__ = _c_stream
            table.__arrow_c_schema__ = _c_schema_of_data
        reader_cls = getattr(batch, "RecordBatchReader", None)
        if reader_cls is not None:
            reader_cls.__arrow_c_stream__ = _c_stream
    try:
        from ..ipc import reader
    except ImportError:
        reader = None  # type: ignore[assignment]
    for name in ("RecordBatchStreamReader", "RecordBatchFileReader", "StreamReader",
                 "FileReader"):
        cls = getattr(reader, name, None) if reader is not None else None
        if cls is not None and hasattr(cls, "schema"):
            cls.__arrow_c_stream__ = _c_stream
    _ATTACHED = True


__all__ = [
    "ArrowStreamReader",
    "attach_dunders",
    "batch_from_pandas",
    "batch_to_pandas",
    "export_array",
    "export_schema",
    "export_stream",
    "import_array",
    "import_batch",
    "import_field",
    "import_schema",
    "import_stream",
    "import_table",
    "import_type",
    "is_capsule_pair",
    "live_exports",
]
