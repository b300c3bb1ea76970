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

from ..cdata.import_array import (
    VALIDATE_LEVELS,
    ArrayStreamReader,
    _array_capsules,
    _build,
    _concat,
    _import_array_field,
    _Memory,
    _move_array,
    _Owner,
    _validated,
    _view,
    import_array,
    is_capsule_pair,
    stream_capsule,
)
from ..cdata.import_batch import (
    _LEAF_PLANS,
    ArrowStreamReader,
    BatchImporter,
    _batch_from_struct,
    _import_leaves,
    _leaf_plan,
    _leaf_plan_of,
    _windows,
    import_batch,
    import_stream,
    import_table,
    new_record_batch,
)
from ..cdata.schema import (
    _FIELD_CACHE,
    MAX_DEPTH,
    _field_from_capsule,
    _field_from_struct,
    _schema_capsule,
    _schema_of,
    export_schema,
    import_field,
    import_schema,
    import_type,
    peek_field,
)

__all__ = [
    "MAX_DEPTH",
    "VALIDATE_LEVELS",
    "_FIELD_CACHE",
    "_LEAF_PLANS",
    "ArrayStreamReader",
    "ArrowStreamReader",
    "BatchImporter",
    "_Memory",
    "_Owner",
    "_array_capsules",
    "_batch_from_struct",
    "_build",
    "_concat",
    "_field_from_capsule",
    "_field_from_struct",
    "_import_array_field",
    "_import_leaves",
    "_leaf_plan",
    "_leaf_plan_of",
    "_move_array",
    "_schema_capsule",
    "_schema_of",
    "_validated",
    "_view",
    "_windows",
    "export_schema",
    "import_array",
    "import_batch",
    "import_field",
    "import_schema",
    "import_stream",
    "import_table",
    "import_type",
    "is_capsule_pair",
    "new_record_batch",
    "peek_field",
    "stream_capsule",
]
