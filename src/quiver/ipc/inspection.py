"""Inspection of record batch bodies: where each field's buffers lie, without loading.

The command line (``quiver validate`` pointing a finding at its bytes) asks this module
rather than the body loader's internals: :func:`buffer_fields` walks a RecordBatch
message's nodes and buffers as the loader does (the same checks, no buffer read) and
names the field each buffer belongs to.

>>> import quiver as qv, quiver.ipc as ipc
>>> from quiver.ipc.options import IpcReadOptions
>>> sink = ipc.BufferOutputStream()
>>> batch = qv.record_batch({"s": qv.array(["ab", None])})
>>> with ipc.new_stream(sink, batch.schema) as w:
...     w.write_batch(batch)
>>> dec = ipc.MessageDecoder()
>>> dec.feed(sink.getvalue())
>>> schema, raw = dec.next_message(), dec.next_message()
>>> loader = BatchLoader(schema.message.header, IpcReadOptions(), file_format=False)
>>> sorted(buffer_fields(loader, raw))
['s']
"""

from __future__ import annotations

from .. import errors as E
from .batch_loader import BatchLoader
from .body import BodyLoader
from .decoder import RawMessage
from .plan import preorder


def buffer_fields(loader: BatchLoader, raw: RawMessage) -> dict[str, list[tuple[int, int]]]:
    """Each field's own buffers in one record batch as (absolute offset, length), keyed by
    field path (``a``, ``a.item``, ...), from a dry walk of the body loader that reads no
    buffer; empty when the walk cannot name them."""
    try:
        header = raw.message.header
        walk = BodyLoader(header, raw.body, raw.body_offset, loader.context(raw))
        paths: dict[int, str] = {}  # buffers the walk names (not those of plain leaves)
        walk.buffer_paths = paths
        ranges: dict[str, range] = {}
        for node in loader.plan:
            start = walk.i_buf
            walk.load(node, False)
            # fields below a column, in pre-order; trusted only where the count agrees
            # with the walk's (variadic view buffers and V4 union slots vary per batch)
            tree = {n.name: range(j, j + n.nbuf) for n, _, j in preorder([node], start)}
            if max(r.stop for r in tree.values()) == walk.i_buf:
                ranges.update(tree)
            else:
                ranges[node.name] = range(start, start + node.nbuf)
    except (E.ArrowError, AttributeError, TypeError):
        return {}
    specs = header.buffers.tolist()
    out: dict[str, list[tuple[int, int]]] = {}
    for i in sorted(paths):
        out.setdefault(paths[i], []).append((raw.body_offset + specs[i][0], specs[i][1]))
    for name, own in ranges.items():
        if name not in out:
            out[name] = [(raw.body_offset + o, n) for o, n in specs[own.start : own.stop]]
    return out


__all__ = ["buffer_fields"]
