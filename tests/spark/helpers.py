"""Small helpers shared by the Spark tests."""

from __future__ import annotations

import os

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


def rows(df, *order) -> list[tuple]:
    """The DataFrame's rows as tuples, ordered by ``order`` columns."""
    if order:
        df = df.orderBy(*order)
    return [tuple(r) for r in df.collect()]
