"""Interop: the Arrow PyCapsule protocol (C data + C stream interfaces), both ways.

Spec: CDataInterface.rst, CStreamInterface.rst, PyCapsuleInterface.rst.

- Export: :func:`export_schema`, :func:`export_array`, :func:`export_stream` return the
  capsules that ``__arrow_c_schema__`` / ``__arrow_c_array__`` / ``__arrow_c_stream__``
  hand out (the classes' methods reach :mod:`quiver.cdata` through :mod:`quiver.hooks`).
- Import: :func:`import_type`, :func:`import_field`, :func:`import_schema`,
  :func:`import_array`, :func:`import_batch`, :func:`import_table`, :func:`import_stream`
  accept any object that speaks the protocol (pyarrow, polars, duckdb, nanoarrow, ...) or
  raw capsules.
- pandas: :func:`batch_to_pandas` and :func:`batch_from_pandas`, built with numpy.

This package only re-exports: the code lives in :mod:`quiver.cdata` (the C interfaces both
ways, one layer below IPC) and in :mod:`quiver.pandas_out` / :mod:`quiver.pandas_in` (this
layer); this package gives it one home for callers.

>>> import pyarrow as pa
>>> import quiver as qv
>>> pa.field(qv.field("a", qv.int8(), nullable=False))
pyarrow.Field<a: int8 not null>
"""

from __future__ import annotations

from . import export, import_
from .export import *
from .import_ import *
from .numpy_pandas import batch_from_pandas, batch_to_pandas

__all__ = sorted([*export.__all__, *import_.__all__, "batch_from_pandas", "batch_to_pandas"])
