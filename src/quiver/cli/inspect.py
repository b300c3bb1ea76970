"""``quiver inspect FILE``: the layout of an IPC file or stream.

Every encapsulated message with its byte offset, kind, metadata length (prefix, flatbuffer
and padding, as a footer Block counts it), body length, row count, compression, dictionary
id and delta flag; where the stream ends; for a file, the footer's Blocks and whether they
agree with the messages found in the stream; custom metadata; totals.  ``--buffers`` adds
each buffer's absolute offset and length and, when compressed, the uncompressed length
that its first 8 bytes declare (Columnar spec, "Compression": -1 means "left
uncompressed").  It reads headers only (:func:`quiver.ipc.index.scan_messages` and the
sans-IO :class:`~quiver.ipc.file_decoder.FileDecoder`), never decodes a body.
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
from typing import Any

from .. import errors as E
from ..ipc import metadata as md
from ..ipc.file_decoder import TRAILER_SIZE
from ..ipc.framing import EOS, FILE_HEADER, LEGACY_EOS
from ..ipc.index import MessageInfo, scan_messages
from ._common import Input, open_input
from ._read import kind_of, open_file_decoder
from .schema import metadata_pairs

_I64 = struct.Struct("<q")
_VERSIONS = {3: "V4", 4: "V5"}


def _meta(pairs: Any) -> list[list[str]] | None:
    if not pairs:
        return None
    return [[k.decode("utf-8", "backslashreplace"), v.decode("utf-8", "backslashreplace")]
            for k, v in metadata_pairs(pairs)]


def buffers_of(info: MessageInfo, data: Any) -> list[dict[str, Any]]:
    """Each buffer of a record or dictionary batch: absolute offset, length and, for a
    compressed body, the uncompressed length its prefix declares (None when the bytes are
    not there)."""
    rb = info.record_batch
    if rb is None:
        return []
    out = []
    body = info.body_offset
    for off, length in rb.buffers.tolist():
        entry: dict[str, Any] = {"offset": body + off, "length": length}
        if rb.compression is not None and length >= 8:
            at = body + off
            if off >= 0 and at + 8 <= min(info.end, len(data)):
                (n,) = _I64.unpack_from(data, at)
                entry["uncompressed_length"] = n
        out.append(entry)
    return out


def message_json(info: MessageInfo, data: Any, with_buffers: bool) -> dict[str, Any]:
    """One message as JSON."""
    out: dict[str, Any] = {
        "index": info.index,
        "offset": info.offset,
        "kind": kind_of(info.message.header),
        "version": _VERSIONS.get(info.message.version, info.message.version),
        "metadata_length": info.metadata_length,
        "body_length": info.body_length,
        "rows": info.num_rows,
        "compression": info.compression,
        "dictionary_id": info.dictionary_id,
        "is_delta": info.is_delta if info.dictionary_id is not None else None,
        "custom_metadata": _meta(info.message.custom_metadata),
    }
    if with_buffers:
        out["buffers"] = buffers_of(info, data)
    return out


def _block(b: md.Block) -> dict[str, int]:
    return {"offset": b.offset, "metadata_length": b.meta_data_length,
            "body_length": b.body_length}


def footer_problems(footer: md.Footer, messages: list[MessageInfo]) -> list[str]:
    """How the footer's Blocks disagree with the messages found in the stream (empty when
    they agree)."""
    by_offset = {m.offset: m for m in messages}
    problems = []
    listed = set()
    for what, kind, blocks in (("dictionary", "dictionary", footer.dictionaries),
                               ("record batch", "record_batch", footer.record_batches)):
        for i, b in enumerate(blocks):
            m = by_offset.get(b.offset)
            listed.add(b.offset)
            if m is None:
                problems.append(f"{what} block {i} points at offset {b.offset}, where no "
                                "message starts")
                continue
            if m.kind != kind:
                problems.append(f"{what} block {i} points at message {m.index}, a "
                                f"{kind_of(m.message.header)} message")
            if (b.meta_data_length, b.body_length) != (m.metadata_length, m.body_length):
                problems.append(
                    f"{what} block {i} says metaDataLength {b.meta_data_length}, bodyLength "
                    f"{b.body_length}; message {m.index} at offset {b.offset} has "
                    f"{m.metadata_length} and {m.body_length}")
    for m in messages:
        if m.kind in ("dictionary", "record_batch") and m.offset not in listed:
            problems.append(f"message {m.index} ({kind_of(m.message.header)} at offset "
                            f"{m.offset}) is not listed in the footer")
    return problems


def layout(inp: Input, with_buffers: bool) -> dict[str, Any]:
    """Everything ``inspect`` shows, as JSON-ready data; ``error`` holds what stopped the
    scan, if anything."""
    data = inp.whole()
    size = len(data)
    out: dict[str, Any] = {"file": inp.display, "format": inp.format, "size": size}
    footer = None
    end = size
    start = 0
    if inp.format == "file":
        start = len(FILE_HEADER)
        try:
            dec = open_file_decoder(data)
            footer = dec.footer
            end = dec.data_end
        except E.ArrowError as exc:
            out["footer_error"] = str(exc)
    messages: list[MessageInfo] = []
    error = None
    try:
        for info in scan_messages(lambda o, n: data[o : o + n], end, start=start):
            messages.append(info)
    except E.ArrowError as exc:
        error = str(exc)
    pos = messages[-1].end if messages else start
    tail = bytes(data[pos : pos + 8])
    if error is None and (tail == EOS or tail[:4] == LEGACY_EOS):
        out["end_of_stream"] = pos
    else:
        out["end_of_stream"] = None
    out["messages"] = [message_json(m, data, with_buffers) for m in messages]
    out["statistics"] = None
    if footer is not None:
        out["statistics"] = _statistics_json(footer)
        problems = footer_problems(footer, messages)
        out["footer"] = {
            "offset": end,
            "length": size - TRAILER_SIZE - end,
            "version": _VERSIONS.get(footer.version, footer.version),
            "dictionaries": [_block(b) for b in footer.dictionaries],
            "record_batches": [_block(b) for b in footer.record_batches],
            "custom_metadata": _meta(footer.custom_metadata),
            "agrees": not problems,
            "problems": problems,
        }
    kinds = [m.kind for m in messages]
    out["totals"] = {
        "messages": len(messages),
        "dictionary_batches": kinds.count("dictionary"),
        "record_batches": kinds.count("record_batch"),
        "rows": sum(m.num_rows or 0 for m in messages if m.kind == "record_batch"),
        "metadata_bytes": sum(m.metadata_length for m in messages),
        "body_bytes": sum(m.body_length for m in messages),
    }
    out["error"] = error
    if error is None and (not kinds or kinds[0] != "schema"):
        # as validate: a stream (or file) begins with its Schema message
        found = f"a {messages[0].kind} message" if messages else "the end of the stream"
        out["schema_error"] = f"expected a Schema message first, found {found}"
    return out


def _statistics_json(footer: md.Footer) -> list[dict[str, Any]] | str | None:
    """The footer's per-batch statistics (quiver.ipc.statistics) as JSON-ready data, a
    message when they do not decode, or None when there are none."""
    meta = footer.custom_metadata
    value = meta.get("quiver:statistics") if meta is not None else None
    if value is None:
        return None  # (checked before importing the statistics module: start-up)
    from ..ipc.statistics import decode_statistics

    try:
        stats = decode_statistics(value)
    except E.ArrowError as exc:
        return f"unreadable: {exc}"
    names = footer.schema.schema.names
    out = []
    for batch in stats:
        columns = []
        for name, col in zip(names, batch.columns):
            entry: dict[str, Any] = {"column": name, "null_count": col.null_count}
            if col.nan_count:
                entry["nan_count"] = col.nan_count
            if col.has_bounds:
                entry["min"] = _scalar(col.min)
                entry["max"] = _scalar(col.max)
                entry["exact"] = col.min_exact and col.max_exact
            columns.append(entry)
        out.append({"batch": batch.index, "rows": batch.row_count, "columns": columns})
    return out


def _scalar(value: Any) -> Any:
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v)


def _table(header: list[str], rows: list[list[Any]], right: set[int]) -> list[str]:
    cells = [[_cell(v) for v in r] for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(header)]

    def line(values: list[str]) -> str:
        parts = [v.rjust(w) if i in right else v.ljust(w)
                 for i, (v, w) in enumerate(zip(values, widths))]
        return "  ".join(parts).rstrip()

    return [line(header)] + [line(r) for r in cells]


def layout_text(lay: dict[str, Any]) -> str:
    """The layout for people: one line per message, then the footer and the totals."""
    lines = [f"{lay['file']}: Arrow IPC {lay['format']}, {lay['size']} bytes"]
    header = ["#", "offset", "kind", "metadata", "body", "rows", "compression", "dict id",
              "delta"]
    rows = []
    for m in lay["messages"]:
        rows.append([m["index"], m["offset"], m["kind"], m["metadata_length"],
                     m["body_length"], m["rows"], m["compression"], m["dictionary_id"],
                     m["is_delta"]])
    table = _table(header, rows, {0, 1, 3, 4, 5, 7})
    lines.append(table[0])
    stats = lay.get("statistics")
    batch_number = 0
    for m, row in zip(lay["messages"], table[1:]):
        lines.append(row)
        if m["kind"] in ("RecordBatch", "record_batch") and isinstance(stats, list):
            if batch_number < len(stats):
                for c in stats[batch_number]["columns"]:
                    bounds = "" if "min" not in c else (
                        f", min {c['min']!r}, max {c['max']!r}"
                        + ("" if c["exact"] else " (bounds, not exact)"))
                    nans = f", {c['nan_count']} NaN" if c.get("nan_count") else ""
                    nulls = ("nulls not stated" if c["null_count"] is None
                             else f"{c['null_count']} null")
                    lines.append(f"      statistics {c['column']}: {nulls}{nans}{bounds}")
            batch_number += 1
        for k, v in m["custom_metadata"] or ():
            lines.append(f"      custom metadata: {k} = {v!r}")
        if m.get("buffers"):
            brows = [[i, b["offset"], b["length"], b.get("uncompressed_length")]
                     for i, b in enumerate(m["buffers"])]
            for bl in _table(["buffer", "offset", "length", "uncompressed"], brows,
                             {0, 1, 2, 3}):
                lines.append("      " + bl)
    if lay["error"]:
        lines.append(f"stopped: {lay['error']}")
    elif lay["end_of_stream"] is not None:
        lines.append(f"end of stream at offset {lay['end_of_stream']}")
    else:
        lines.append("no end-of-stream marker")
    if "schema_error" in lay:
        lines.append(f"schema: {lay['schema_error']}")
    if "footer_error" in lay:
        lines.append(f"footer: {lay['footer_error']}")
    footer = lay.get("footer")
    if footer is not None:
        nd, nr = len(footer["dictionaries"]), len(footer["record_batches"])
        agree = ("agree with the messages" if footer["agrees"]
                 else "DISAGREE with the messages")
        lines.append(f"footer at offset {footer['offset']} ({footer['length']} bytes, "
                     f"metadata {footer['version']}): {nd} dictionary block"
                     f"{'' if nd == 1 else 's'}, {nr} record batch block"
                     f"{'' if nr == 1 else 's'}, {agree}")
        lines.extend(f"  {p}" for p in footer["problems"])
        for k, v in footer["custom_metadata"] or ():
            if k == "quiver:statistics" and isinstance(stats, list):
                v = f"(statistics of {len(stats)} batches, shown with them above)"
            lines.append(f"  footer custom metadata: {k} = {v!r}")
        if isinstance(stats, str):
            lines.append(f"  statistics: {stats}")
    tot = lay["totals"]
    lines.append(f"totals: {tot['messages']} messages, {tot['dictionary_batches']} dictionary "
                 f"batches, {tot['record_batches']} record batches, {tot['rows']} rows, "
                 f"{tot['metadata_bytes']} metadata bytes, {tot['body_bytes']} body bytes")
    return "\n".join(lines) + "\n"


def run(ns: argparse.Namespace) -> int:
    """Print the layout of ``ns.input``; 1 when the scan stopped on an error, there is no
    Schema message first, the footer is missing or unreadable, or it disagrees with the
    messages."""
    inp = open_input(ns.input, whole=True)
    lay = layout(inp, ns.buffers)
    if ns.json:
        sys.stdout.write(json.dumps(lay, indent=2) + "\n")
    else:
        sys.stdout.write(layout_text(lay))
    bad = lay["error"] is not None or "footer_error" in lay or "schema_error" in lay or (
        lay.get("footer") is not None and not lay["footer"]["agrees"])
    return 1 if bad else 0
