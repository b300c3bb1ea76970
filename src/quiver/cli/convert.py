"""``quiver convert IN OUT``, ``quiver file-to-stream`` and ``quiver stream-to-file``:
rewrite an input as a file or a stream, one batch at a time.

Memory stays near one batch whatever the input size: a file is memory-mapped and its
batches are decoded block by block through its footer; a stream is decoded message by
message as it is read; each batch goes to the writer, which hands its buffers to the
output without joining them, and is dropped.  The output keeps the input's compression
unless ``--compression`` says otherwise (the codec is that of the first record batch), and
a file's footer metadata.  Output goes to a temporary file renamed into place at the end,
so a failure leaves nothing half-written.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Any

from ..errors import ArrowError
from ..ipc.writer import new_file, new_stream
from ._common import display_name, message, open_input, output_path, progress
from ._read import open_batches

#: the codec names of the metadata (BodyCompression) -> the writer's option names
_CODEC_OPTION = {"lz4_frame": "lz4", "zstd": "zstd"}


def output_format(ns: argparse.Namespace) -> str:
    """``file`` or ``stream``: by command, by ``--to``, else by the output's name."""
    if ns.command == "file-to-stream":
        return "stream"
    if ns.command == "stream-to-file":
        return "file"
    if getattr(ns, "to", None):
        return str(ns.to)
    out = str(ns.output).lower()
    return "stream" if out == "-" or out.endswith((".arrows", ".stream")) else "file"


def rebatch(batches: Iterator[Any], size: int | None) -> Iterator[Any]:
    """Batches of ``size`` rows (the last one shorter) from batches of any size; holds at
    most ``size`` rows plus one input batch.

    >>> import quiver as qv
    >>> parts = [qv.record_batch({"a": qv.array(list(range(n)))}) for n in (3, 4, 2)]
    >>> [b.num_rows for b in rebatch(iter(parts), 4)]
    [4, 4, 1]
    """
    if not size:
        yield from batches
        return
    from ..array.concat import concat_arrays
    from ..batch import RecordBatch

    pending: list[Any] = []
    rows = 0

    def joined() -> Any:
        if len(pending) == 1:
            return pending[0]
        first = pending[0]
        columns = [concat_arrays([b.column(i) for b in pending]) for i in range(first.num_columns)]
        return RecordBatch(first.schema, columns, rows)

    for batch in batches:
        pos = 0
        while pos < batch.num_rows:
            take = min(size - rows, batch.num_rows - pos)
            pending.append(batch if take == batch.num_rows else batch.slice(pos, take))
            rows += take
            pos += take
            if rows == size:
                yield joined()
                pending, rows = [], 0
    if pending:
        yield joined()


def run(ns: argparse.Namespace) -> int:
    """Convert ``ns.input`` to ``ns.output``."""
    to = output_format(ns)
    inp = open_input(ns.input)
    columns = getattr(ns, "columns", None)
    batches = open_batches(inp, columns=columns)
    schema = batches.schema
    it: Iterator[Any] = iter(batches)
    if columns:  # in the order asked, whatever order the reader projects them in
        schema = type(schema)(tuple(schema.field(c) for c in columns), schema.metadata)
        it = (b.select(columns) for b in it)
    first = next(it, None)  # the first batch tells the input's codec
    if ns.compression is None:
        compression = _CODEC_OPTION.get(batches.compression or "")
    else:
        compression = None if ns.compression == "none" else ns.compression
    total = None if inp.data is None else len(inp.data)
    num_batches = rows = 0
    with output_path(ns.output) as sink, progress(ns, total, "convert") as bar:
        if to == "file":
            writer: Any = new_file(sink, schema, compression=compression,
                                   unify_dictionaries=True, metadata=batches.footer_metadata,
                                   statistics=getattr(ns, "statistics", True))
        else:
            writer = new_stream(sink, schema, compression=compression)
        source = it if first is None else _chain(first, it)
        del first  # held by the chain until it is written, then let go
        size = getattr(ns, "batch_size", None)
        for batch in rebatch(source, size):
            try:
                writer.write_batch(batch)
            except ArrowError as exc:
                # the writer refuses what reading left to the full level (statistics
                # follow union offsets): say which input message it came from
                if not size:
                    exc.locate(message_index=batches.message_index)
                raise
            num_batches += 1
            rows += batch.num_rows
            bar.update(batches.position)
            del batch  # before the next one is read: one batch in memory, not two
        writer.close()
    message(ns, f"quiver: wrote {num_batches} batch{'es' if num_batches != 1 else ''} "
            f"({rows} rows) as an IPC {to}"
            + (f" compressed with {compression}" if compression else "")
            + (" (a stream keeps no statistics)" if to == "stream" else "")
            + ("" if ns.output == "-" else f" to {display_name(ns.output)}"))
    return 0


def _chain(first: Any, rest: Iterator[Any]) -> Iterator[Any]:
    held = [first]
    del first
    yield held.pop()  # the generator keeps no reference once the batch is handed over
    yield from rest
