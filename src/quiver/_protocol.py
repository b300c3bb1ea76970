"""The Arrow PyCapsule protocol methods (PyCapsuleInterface.rst) and ``Array.to_pandas``,
installed on quiver's classes at import as small stubs that load :mod:`quiver.interop`
(ctypes, the C structs) on first call, so that ``import quiver`` does not pay for it.

>>> import quiver as qv
>>> hasattr(qv.array([1]), "__arrow_c_array__")
True
"""

from __future__ import annotations

from typing import Any


def _c_schema(self: Any) -> Any:
    """Export this type, field or schema as an ``arrow_schema`` PyCapsule."""
    from .interop.export import export_schema

    return export_schema(self)


def _c_schema_of_data(self: Any) -> Any:
    """Export the schema of this batch or table as an ``arrow_schema`` PyCapsule."""
    from .interop.export import export_schema

    return export_schema(self.schema)


def _c_array(self: Any, requested_schema: Any = None) -> tuple[Any, Any]:
    """Export as ``(arrow_schema, arrow_array)`` PyCapsules, zero-copy."""
    from .interop.export import export_array

    return export_array(self, requested_schema)


def _c_stream(self: Any, requested_schema: Any = None) -> Any:
    """Export as an ``arrow_array_stream`` PyCapsule that yields batches lazily."""
    from .interop.export import export_stream

    return export_stream(self, requested_schema)


def _to_pandas(self: Any, **options: Any) -> Any:
    """A pandas Series of this array (``types_mapper``, ``date_as_object``,
    ``timestamp_as_object`` as in ``Table.to_pandas``)."""
    from .interop.numpy_pandas import array_to_pandas

    return array_to_pandas(self, **options)


def install() -> None:
    """Put the protocol methods on the classes (idempotent)."""
    from . import batch
    from . import types as t
    from .array.base import Array

    for cls in (t.DataType, t.Field, t.Schema):
        cls.__arrow_c_schema__ = _c_schema  # type: ignore[attr-defined]
    Array.__arrow_c_array__ = _c_array  # type: ignore[attr-defined]
    Array.to_pandas = _to_pandas  # type: ignore[attr-defined]
    batch.RecordBatch.__arrow_c_array__ = _c_array  # type: ignore[attr-defined]
    batch.RecordBatch.__arrow_c_stream__ = _c_stream  # type: ignore[attr-defined]
    batch.RecordBatch.__arrow_c_schema__ = _c_schema_of_data  # type: ignore[attr-defined]
    batch.ChunkedArray.__arrow_c_stream__ = _c_stream  # type: ignore[attr-defined]
    batch.Table.__arrow_c_stream__ = _c_stream  # type: ignore[attr-defined]
    batch.Table.__arrow_c_schema__ = _c_schema_of_data  # type: ignore[attr-defined]
    # the IPC readers are RecordBatchReaders and inherit it
    batch.RecordBatchReader.__arrow_c_stream__ = _c_stream  # type: ignore[attr-defined]
