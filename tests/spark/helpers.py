"""Small helpers shared by the Spark tests."""

from __future__ import annotations

import os
import signal
from typing import Any

import numpy as np
import pyarrow as pa


def write_file(path, table: pa.Table, *, stream: bool = False, batch_rows: int | None = None,
               compression: str | None = None) -> str:
    """Write ``table`` with pyarrow as an IPC file (or stream) of ``batch_rows``-row batches."""
    os.makedirs(os.path.dirname(str(path)) or ".", exist_ok=True)
    options = pa.ipc.IpcWriteOptions(compression=compression)
    make = pa.ipc.new_stream if stream else pa.ipc.new_file
    with make(str(path), table.schema, options=options) as writer:
        for batch in table.to_batches(max_chunksize=batch_rows):
            writer.write_batch(batch)
    return str(path)


def data_files(root) -> list[str]:
    """Visible data files under ``root`` (what a reader would list), relative, sorted."""
    out = []
    for dirpath, dirnames, filenames in os.walk(str(root)):
        dirnames[:] = [d for d in dirnames if not d.startswith(("_", "."))]
        for name in filenames:
            if not name.startswith(("_", ".")):
                out.append(os.path.relpath(os.path.join(dirpath, name), str(root)))
    return sorted(out)


def stream_batch(start: int, n: int, *, dictionary: bool = False) -> Any:
    """Rows ``start`` to ``start + n`` of the streaming tests' data (id, name, x), as a
    quiver batch; ``dictionary``: the names dictionary-encoded."""
    import quiver as qv

    ids = np.arange(start, start + n, dtype=np.int64)
    names = [f"n{i % 7}" for i in range(start, start + n)]
    name = qv.array(names, type=qv.dictionary(qv.int32(), qv.utf8())) if dictionary \
        else qv.array(names)
    return qv.record_batch({"id": qv.array(ids), "name": name,
                            "x": qv.array(ids.astype(np.float64) / 2)})


def rows(df, *order) -> list[tuple]:
    """The DataFrame's rows as tuples, ordered by ``order`` columns."""
    if order:
        df = df.orderBy(*order)
    return [tuple(r) for r in df.collect()]


def _prctl() -> object:
    """libc's ``prctl`` (Linux), looked up here and not in the child: loading a library
    after fork in a process with threads can deadlock."""
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _prctl()


def die_with(parent: int):
    """What the child runs before exec (Linux): SIGTERM when the process that started it
    dies, so a test run killed from outside (no ``finally``) leaves no master or worker
    behind (a killed run had left both running for 38 minutes). spark-class execs the
    JVM, which keeps the setting."""

    def run() -> None:
        if _PRCTL is not None:
            _PRCTL(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the parent died before that: do not start at all
            os._exit(1)

    return run
