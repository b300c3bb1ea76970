"""Import Arrow data into quiver through the C data and C stream interfaces: the names
under their interop home.

The code lives by layer in :mod:`quiver.cdata`: :mod:`quiver.cdata.schema` (types),
:mod:`quiver.cdata.import_array` (arrays and streams of arrays) and
:mod:`quiver.cdata.import_batch` (record batches, tables, batch streams and the writers'
:class:`BatchImporter`), so that ``RecordBatchReader.from_stream`` and the IPC writers can
import other libraries' data without reaching up into this package.

>>> import pyarrow as pa
>>> a = import_array(pa.array([1, None, 3]))
>>> a.type, len(a), a.null_count
(DataType(int64), 3, 1)
"""

from __future__ import annotations

from ..cdata.import_array import import_array, is_capsule_pair

# BatchImporter (the writers' importer) and three internals that the interop tests reach
# through this module stay importable here, outside __all__
from ..cdata.import_array import import_array_field as import_array_field
from ..cdata.import_batch import ArrowStreamReader, import_batch, import_stream, import_table
from ..cdata.import_batch import BatchImporter as BatchImporter
from ..cdata.import_batch import batch_from_struct as batch_from_struct
from ..cdata.schema import FIELD_CACHE as FIELD_CACHE
from ..cdata.schema import import_field, import_schema, import_type

__all__ = [
    "ArrowStreamReader",
    "import_array",
    "import_batch",
    "import_field",
    "import_schema",
    "import_stream",
    "import_table",
    "import_type",
    "is_capsule_pair",
]
