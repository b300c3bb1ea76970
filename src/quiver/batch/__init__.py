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

The modules: :mod:`~quiver.batch.record_batch`, :mod:`~quiver.batch.chunked`,
:mod:`~quiver.batch.table` (tables, their constructors, and batch readers),
:mod:`~quiver.batch.tabular` (the base RecordBatch and Table share) and
:mod:`~quiver.batch._common` (helpers); the classes keep ``quiver.batch`` as their module
name.
"""

from __future__ import annotations

from .._lazy import adopt_classes
from ._common import sort_spec
from .chunked import ChunkedArray, chunked_array
from .record_batch import RecordBatch, record_batch
from .table import RecordBatchReader, Table, concat_tables, table

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

adopt_classes(__name__, globals())  # pickles and reprs name the package
