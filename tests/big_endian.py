"""Test helper: re-encode a little-endian IPC stream as a big-endian one.

The schema says ``endianness: Big`` and every buffer of every message body is byte-swapped
in place, buffer by buffer, by the layout of the field it belongs to (walked exactly as
the reader walks it); pyarrow then serves as the oracle for what the stream means, for the
types it can swap.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from quiver.ipc import metadata as md
from quiver.ipc.body import PlanNode, compile_plan
from quiver.ipc.decoder import END, MessageDecoder
from quiver.ipc.dictionaries import DictionaryMemo
from quiver.ipc.endian import byteswap_buffer, swap_views_buffer
from quiver.ipc.framing import EOS, frame_message


def _swap_body(nodes: list[PlanNode], batch: md.RecordBatch, body: bytearray) -> None:
    specs = batch.buffers.tolist()
    variadic = list(batch.variadic_buffer_counts)
    state = {"buf": 0, "var": 0}

    def visit(node: PlanNode) -> None:
        for spec in node.specs:
            offset, length = specs[state["buf"]]
            state["buf"] += 1
            if not length:
                continue
            raw = np.frombuffer(bytes(body[offset : offset + length]), np.uint8)
            if spec.kind == "views":
                swapped = swap_views_buffer(raw, source_order="little")
            else:
                swapped = byteswap_buffer(raw, spec.byte_width, spec.swap)
            body[offset : offset + length] = swapped.tobytes()
        if node.variadic:
            state["buf"] += variadic[state["var"]]  # raw bytes: nothing to swap
            state["var"] += 1
        for child in node.children:
            visit(child)

    for node in nodes:
        visit(node)


def to_big_endian(little: bytes) -> bytes:
    """The same V5 stream with big-endian buffers and schema endianness."""
    dec = MessageDecoder()
    dec.feed(little)
    dec.feed_eof()
    out: list[bytes] = []
    schema_msg = None
    plan: list[PlanNode] = []
    while (raw := dec.next_message()) is not END:
        header = raw.message.header
        body = bytearray(raw.body)
        if isinstance(header, md.SchemaMessage):
            schema_msg = header
            plan = compile_plan(header.schema, header.dictionary_ids)
            header = dataclasses.replace(header, endianness="big")
        elif isinstance(header, md.DictionaryBatch):
            info = DictionaryMemo(schema_msg.schema, schema_msg.dictionary_ids)
            path, name = info._paths[header.id]
            node = PlanNode(info._types[header.id], path, name, schema_msg.dictionary_ids)
            _swap_body([node], header.data, body)
        else:
            _swap_body(plan, header, body)
        meta = md.encode_message(dataclasses.replace(raw.message, header=header))
        out.append(frame_message(meta) + bytes(body))
    return b"".join(out) + EOS
