"""numpy views of flatbuffer vectors: the vector reads of :mod:`quiver.ipc.flatbuf` that
return arrays, kept apart so that the reading core (and with it schema and footer
decoding) does not import numpy.

>>> import numpy as np
>>> from quiver.ipc.flatbuf import Builder, Reader
>>> b = Builder()
>>> pairs = b.create_struct_vector(np.array([[1, 2], [3, 4]], dtype="<i8"))
>>> int64_matrix(Reader(b.finish(b.table([(0, "offset", pairs)]))).root(), 0, 2).tolist()
[[1, 2], [3, 4]]
"""

from __future__ import annotations

import numpy as np

from .flatbuf import Table


def int64_matrix(tbl: Table, i: int, columns: int) -> np.ndarray | None:
    """Vector field ``i`` of ``tbl``, of structs made of ``columns`` int64s, as one zero-copy
    (n, columns) view; None when absent.  Bounds are checked by :meth:`Table.vector`."""
    v = tbl.vector(i, 8 * columns)
    if v is None:
        return None
    start, n = v
    return np.frombuffer(tbl.buf, "<i8", count=n * columns, offset=start).reshape(n, columns)


__all__ = ["int64_matrix"]
