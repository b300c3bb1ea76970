"""pandas <-> quiver record batches and arrays, under their interop names.

The conversions live in this layer: :mod:`quiver.pandas_out` (to pandas; ``Array`` and
``RecordBatch`` reach it from below through the hooks of :mod:`quiver.hooks`) and
:mod:`quiver.pandas_in` (from pandas: arrays and the parts of a batch, which
``RecordBatch.from_pandas`` builds); the rules and
the ``pandas`` metadata convention are in their module docstrings.
"""

from __future__ import annotations

from typing import Any

from .. import types as t
from ..batch import RecordBatch
from ..pandas_in import array_from_pandas, frame_parts
from ..pandas_out import array_to_pandas, batch_to_pandas

__all__ = [
    "array_from_pandas",
    "array_to_pandas",
    "batch_from_pandas",
    "batch_to_pandas",
    "frame_parts",
]


def batch_from_pandas(
    df: Any, *, preserve_index: bool | None = None, schema: t.Schema | None = None
) -> RecordBatch:
    """A quiver RecordBatch from a ``pandas.DataFrame`` (``RecordBatch.from_pandas``), with
    pyarrow's ``pandas`` schema metadata so that the frame comes back as it was; a
    ``schema`` chooses the columns and index levels by name and their types (see
    :func:`quiver.pandas_in.frame_parts`).

    >>> import pandas as pd
    >>> b = batch_from_pandas(pd.DataFrame({"x": [1.5, float("nan")], "y": ["a", None]}))
    >>> b.to_pydict()
    {'x': [1.5, None], 'y': ['a', None]}
    """
    return RecordBatch.from_pandas(df, schema, preserve_index=preserve_index)
