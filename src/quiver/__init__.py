"""quiver: the Apache Arrow columnar format and its IPC serialization, in Python.

This module only re-exports, lazily (PEP 562): ``import quiver`` loads nothing but this
file and :mod:`quiver.hooks` (whose providers it names), and each name loads its module on
first use, so a command that reads a schema does not pay for numpy, arrays or IPC writers.
The code lives in the submodules, in layers (see docs/ARCHITECTURE.md): errors, types,
layout/buffers, array, batch, cdata, ipc, interop/integration, and at the top the public
factories of :mod:`quiver.constructors` (which also take other libraries' objects),
spark and the command line.

>>> import quiver as qv
>>> qv.array([1, None, 3]).to_pylist()
[1, None, 3]
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from . import hooks

# the module that answers each hook of a lower layer (quiver.hooks): a hook's first call
# imports it, so ``import quiver`` loads none of them
hooks.provide({
    "cdata.export_schema_node": "quiver.cdata.capsule",
    "cdata.export_array": "quiver.cdata.array",
    "cdata.export_batch": "quiver.cdata.stream",
    "cdata.export_stream": "quiver.cdata.stream",
    "cdata.import_type": "quiver.cdata.schema",
    "cdata.import_schema": "quiver.cdata.schema",
    "cdata.import_array": "quiver.cdata.import_array",
    "cdata.reader_from_stream": "quiver.cdata.import_batch",
    "pandas.array_to_pandas": "quiver.pandas_out",
    "pandas.batch_to_pandas": "quiver.pandas_out",
    "pandas.frame_parts": "quiver.pandas_in",
})

# public name -> the module that defines it
_NAMES: dict[str, str] = {
    "__version__": "quiver._version",
    # quiver.errors
    "ArrowError": "quiver.errors",
    "ArrowIndexError": "quiver.errors",
    "ArrowInvalid": "quiver.errors",
    "ArrowInvalidArgument": "quiver.errors",
    "ArrowKeyError": "quiver.errors",
    "ArrowTypeError": "quiver.errors",
    "BodyError": "quiver.errors",
    "CompressionError": "quiver.errors",
    "DictionaryError": "quiver.errors",
    "FormatError": "quiver.errors",
    "FramingError": "quiver.errors",
    "LimitExceeded": "quiver.errors",
    "MetadataError": "quiver.errors",
    "NotSupported": "quiver.errors",
    "TruncatedError": "quiver.errors",
    # quiver.types
    "binary": "quiver.types",
    "binary_view": "quiver.types",
    "BinaryType": "quiver.types",
    "BinaryViewType": "quiver.types",
    "bool_": "quiver.types",
    "BoolType": "quiver.types",
    "DataType": "quiver.types",
    "date32": "quiver.types",
    "date64": "quiver.types",
    "DateType": "quiver.types",
    "day_time_interval": "quiver.types",
    "decimal128": "quiver.types",
    "decimal256": "quiver.types",
    "decimal32": "quiver.types",
    "decimal64": "quiver.types",
    "DecimalType": "quiver.types",
    "dense_union": "quiver.types",
    "dictionary": "quiver.types",
    "DictionaryType": "quiver.types",
    "duration": "quiver.types",
    "DurationType": "quiver.types",
    "extension": "quiver.types",
    "ExtensionType": "quiver.types",
    "Field": "quiver.types",
    "field": "quiver.types",
    "fixed_size_binary": "quiver.types",
    "fixed_size_list": "quiver.types",
    "FixedSizeBinaryType": "quiver.types",
    "FixedSizeListType": "quiver.types",
    "float16": "quiver.types",
    "float32": "quiver.types",
    "float64": "quiver.types",
    "FloatingPointType": "quiver.types",
    "int16": "quiver.types",
    "int32": "quiver.types",
    "int64": "quiver.types",
    "int8": "quiver.types",
    "IntegerType": "quiver.types",
    "INTERVAL_UNITS": "quiver.types",
    "IntervalType": "quiver.types",
    "is_binary_like": "quiver.types",
    "is_fixed_width": "quiver.types",
    "is_integer": "quiver.types",
    "is_nested": "quiver.types",
    "KeyValueMetadata": "quiver.types",
    "large_binary": "quiver.types",
    "large_list": "quiver.types",
    "large_list_view": "quiver.types",
    "large_string": "quiver.types",
    "large_utf8": "quiver.types",
    "LargeListType": "quiver.types",
    "LargeListViewType": "quiver.types",
    "list_": "quiver.types",
    "list_view": "quiver.types",
    "ListType": "quiver.types",
    "ListViewType": "quiver.types",
    "map_": "quiver.types",
    "MapType": "quiver.types",
    "month_day_nano_interval": "quiver.types",
    "month_interval": "quiver.types",
    "null": "quiver.types",
    "NullType": "quiver.types",
    "run_end_encoded": "quiver.types",
    "RunEndEncodedType": "quiver.types",
    "Schema": "quiver.types",
    "sparse_union": "quiver.types",
    "storage_of": "quiver.types",
    "string": "quiver.types",
    "string_view": "quiver.types",
    "StringType": "quiver.types",
    "StringViewType": "quiver.types",
    "struct": "quiver.types",
    "StructType": "quiver.types",
    "time32": "quiver.types",
    "time64": "quiver.types",
    "TIME_UNITS": "quiver.types",
    "timestamp": "quiver.types",
    "TimestampType": "quiver.types",
    "TimeType": "quiver.types",
    "uint16": "quiver.types",
    "uint32": "quiver.types",
    "uint64": "quiver.types",
    "uint8": "quiver.types",
    "union": "quiver.types",
    "UnionType": "quiver.types",
    "utf8": "quiver.types",
    "uuid": "quiver.types",
    # quiver.array
    "Array": "quiver.array",
    "BinaryArray": "quiver.array",
    "BinaryViewArray": "quiver.array",
    "BooleanArray": "quiver.array",
    "DayTime": "quiver.array",
    "DictionaryArray": "quiver.array",
    "ExtensionArray": "quiver.array",
    "FixedSizeBinaryArray": "quiver.array",
    "FixedSizeListArray": "quiver.array",
    "from_numpy": "quiver.array",
    "infer_type": "quiver.array",
    "LargeListArray": "quiver.array",
    "LargeListViewArray": "quiver.array",
    "ListArray": "quiver.array",
    "ListViewArray": "quiver.array",
    "make_array": "quiver.array",
    "MapArray": "quiver.array",
    "MonthDayNano": "quiver.array",
    "NullArray": "quiver.array",
    "PrimitiveArray": "quiver.array",
    "RunEndEncodedArray": "quiver.array",
    "StringArray": "quiver.array",
    "StringViewArray": "quiver.array",
    "StructArray": "quiver.array",
    "UnionArray": "quiver.array",
    # quiver.array.concat
    "concat_arrays": "quiver.array.concat",
    # quiver.batch
    "ChunkedArray": "quiver.batch",
    "concat_tables": "quiver.batch",
    "RecordBatch": "quiver.batch",
    "RecordBatchReader": "quiver.batch",
    "Table": "quiver.batch",
    # quiver.constructors
    "array": "quiver.constructors",
    "chunked_array": "quiver.constructors",
    "record_batch": "quiver.constructors",
    "schema": "quiver.constructors",
    "table": "quiver.constructors",
    # quiver.tensor
    "SparseCOOTensor": "quiver.tensor",
    "SparseCSCMatrix": "quiver.tensor",
    "SparseCSFTensor": "quiver.tensor",
    "SparseCSRMatrix": "quiver.tensor",
    "Tensor": "quiver.tensor",
}

# submodules reachable as attributes (``quiver.ipc``, ``quiver.types``, ...)
_SUBMODULES = frozenset({
    "batch", "buffers", "cdata", "cli", "compute", "constructors", "errors", "filters",
    "hooks", "integration", "interop", "ipc", "job", "layout", "spark", "tensor", "types",
})

__all__ = sorted(n for n in _NAMES if not n.startswith("_"))


def __getattr__(name: str) -> Any:
    module = _NAMES.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value  # later lookups skip this function
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"quiver.{name}")
    raise AttributeError(f"module 'quiver' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_NAMES) | _SUBMODULES)


class _Package(ModuleType):
    """``quiver.array`` is the function (like ``pyarrow.array``), not the subpackage that
    the import system binds on the package when ``quiver.array.*`` is first imported; the
    subpackage stays importable as ``from quiver.array import ...`` through sys.modules."""

    @property
    def array(self) -> Any:
        """:func:`quiver.constructors.array`."""
        value = globals().get("array")  # bound by the first look-up: one dict access after
        return value if value is not None else __getattr__("array")

    @array.setter
    def array(self, value: Any) -> None:
        if not isinstance(value, ModuleType):  # the subpackage binding is ignored
            globals()["array"] = value


import sys as _sys  # noqa: E402

_sys.modules[__name__].__class__ = _Package
