"""Export quiver types, arrays, batches and streams through the Arrow C data interface.

The machinery lives in :mod:`quiver.cdata`, beside the layer each part serves (the classes'
``__arrow_c_*__`` methods call it there); this module keeps the producer-side entry points
under their interop names.

>>> import quiver as qv
>>> cap = export_schema(qv.int32())
>>> type(cap).__name__
'PyCapsule'
"""

from __future__ import annotations

from ..cdata.capsule import live_exports
from ..cdata.schema import export_schema
from ..cdata.stream import export_array, export_stream

__all__ = ["export_array", "export_schema", "export_stream", "live_exports"]
