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

# Submodules and names loaded on first use (PEP 562), so that ``import quiver`` costs
# the core (types, arrays, batches) and not IPC, JSON integration, tensors, interop or
# the command line until they are asked for.
_LAZY_MODULES = {"cli", "compute", "integration", "interop", "ipc", "tensor"}
_LAZY_NAMES = {
    "concat_arrays": "quiver.array.concat",
    "SparseCOOTensor": "quiver.tensor",
    "SparseCSCMatrix": "quiver.tensor",
    "SparseCSFTensor": "quiver.tensor",
    "SparseCSRMatrix": "quiver.tensor",
    "Tensor": "quiver.tensor",
}


def __getattr__(name: str) -> object:
    import importlib

    if name in _LAZY_MODULES:
        return importlib.import_module(f"quiver.{name}")
    module = _LAZY_NAMES.get(name)
    if module is not None:
        return getattr(importlib.import_module(module), name)
    raise AttributeError(f"module 'quiver' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _LAZY_MODULES | set(_LAZY_NAMES))
