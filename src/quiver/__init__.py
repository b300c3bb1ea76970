"""quiver: the Apache Arrow columnar format and its IPC serialization, in Python.

This module only re-exports; the code lives in the submodules.
"""

from . import errors, layout, types
from .array import Array, make_array
from .errors import *
from .types import *
from .types import (
    DataType,
    Field,
    KeyValueMetadata,
    Schema,
)

__version__ = "0.1.0"
