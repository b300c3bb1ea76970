"""quiver: the Apache Arrow columnar format and its IPC serialization, in Python.

This module only re-exports; the code lives in the submodules.

>>> import quiver as qv
>>> qv.array([1, None, 3]).to_pylist()
[1, None, 3]
"""

from . import errors, layout, types
from .array import (
    Array,
    BinaryArray,
    BinaryViewArray,
    BooleanArray,
    DayTime,
    DictionaryArray,
    ExtensionArray,
    FixedSizeBinaryArray,
    FixedSizeListArray,
    LargeListArray,
    LargeListViewArray,
    ListArray,
    ListViewArray,
    MapArray,
    MonthDayNano,
    NullArray,
    PrimitiveArray,
    RunEndEncodedArray,
    StringArray,
    StringViewArray,
    StructArray,
    UnionArray,
    from_numpy,
    infer_type,
    make_array,
)
from .batch import (
    ChunkedArray,
    RecordBatch,
    RecordBatchReader,
    Table,
    chunked_array,
    concat_tables,
    record_batch,
    table,
)
from .errors import *
from .types import *
from .types import (
    DataType,
    Field,
    KeyValueMetadata,
    Schema,
)

# ``quiver.array`` is the function (like ``pyarrow.array``); it shadows the subpackage
# attribute, which stays importable as ``from quiver.array import ...`` via sys.modules.
from .array.build import array  # isort: skip

__version__ = "0.1.0"

from . import integration, interop, ipc
from .array.concat import concat_arrays
from .tensor import (
    SparseCOOTensor,
    SparseCSCMatrix,
    SparseCSFTensor,
    SparseCSRMatrix,
    Tensor,
)

# the Arrow PyCapsule protocol methods on types, arrays, batches, tables and IPC readers
interop.attach_dunders()
