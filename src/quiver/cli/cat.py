"""``quiver cat FILE`` and ``quiver head FILE``: rows for people or for pipes.

``--format table`` (the default on a terminal) draws a table sized to the terminal with long
values cut; ``jsonl`` (the default in a pipe) writes one JSON object per row, nested values
as JSON; ``csv`` writes a header and one line per row, nested values as JSON text,
a null as an empty field and an empty string as ``""`` (as pyarrow's CSV writer).  Batches
are read one at a time and ``--head N`` stops reading after N rows, so ``quiver head`` on a
huge file or an endless pipe returns at once.

Values that JSON has no word for are written as text: timestamps and dates in ISO 8601
(``Z`` after a timestamp with a time zone: the values are UTC instants), times of day as
``HH:MM:SS.fff``, durations as a number and a unit, decimals exactly, binary as hex, and
NaN and infinities as the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import decimal
import json
import math
import re
import sys
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from .. import types as t
from ..errors import ArrowError
from ._common import open_input
from ._read import open_batches

#: rows per drawn table (a long ``cat`` is drawn as several tables, header repeated)
TABLE_ROWS = 1000
DEFAULT_WIDTH = 40


def _temporal(array: Any) -> list[Any] | None:
    """Text for a temporal column (any int64 value, where Python's datetime stops at year
    9999), or None for other types."""
    dt = array.type
    if not isinstance(dt, (t.TimestampType, t.DateType, t.TimeType, t.DurationType)):
        return None
    if isinstance(dt, t.TimeType):  # (to_numpy gives datetime.time, whole microseconds)
        storage = t.int32() if dt.width == 32 else t.int64()
        values = array.cast(storage).fill_null(0).to_numpy(zero_copy_only=False)
        values = np.datetime64(0, dt.unit) + values.astype(f"m8[{dt.unit}]")
    else:
        values = array.to_numpy(zero_copy_only=False)
    if values.dtype.kind not in "mM":
        return None
    if isinstance(dt, t.DurationType):
        unit = dt.unit
        ints = values.view(np.int64).tolist()
        texts = [f"{v} {unit}" for v in ints]
    elif isinstance(dt, t.TimeType):  # to the digits of its unit, as timestamps are
        stamps = np.datetime_as_string(values)
        texts = [s[11:] if s.startswith("1970-01-01T") else s for s in stamps.tolist()]
    else:
        unit = "D" if isinstance(dt, t.DateType) and dt.unit == "day" else None
        stamps = np.datetime_as_string(values, unit=unit) if unit else np.datetime_as_string(
            values)
        texts = stamps.tolist()
        if isinstance(dt, t.TimestampType) and dt.tz:
            texts = [s + "Z" for s in texts]
    mask = np.isnat(values).tolist()
    valid = array.is_valid_mask()
    if valid is not None:
        mask = (np.asarray(mask) | ~valid).tolist()
    return [None if m else s for s, m in zip(texts, mask)]


def column_values(array: Any) -> list[Any]:
    """The Python values of one column for printing (see the module docstring)."""
    got = None
    try:
        got = _temporal(array)
    except (ArrowError, ValueError, OverflowError):
        got = None
    if got is not None:
        return got
    return array.to_pylist()


def _plain(value: Any) -> Any:
    """A JSON-ready value (recursively)."""
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return _json_default(value) if not isinstance(value, (str, int, bool, type(None))) else value


def _json_default(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, _dt.timedelta):
        return f"{value.days * 86_400_000_000 + value.seconds * 1_000_000 + value.microseconds} us"
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, dict):
        return value
    return str(value)


def to_json(value: Any) -> str:
    """One value (or row) as compact JSON text, always valid JSON.

    >>> to_json({"f": float("inf"), "b": b"\\x01\\xff", "l": [1, None]})
    '{"f":"Infinity","b":"01ff","l":[1,null]}'
    """
    try:
        return json.dumps(value, default=_json_default, ensure_ascii=False, allow_nan=False,
                          separators=(",", ":"))
    except ValueError:  # NaN or an infinity somewhere inside
        return json.dumps(_plain(value), default=_json_default, ensure_ascii=False,
                          separators=(",", ":"))


def cell_text(value: Any) -> str:
    """A value as CSV or table text: nested values as JSON, binary as hex, null empty.

    >>> [cell_text(v) for v in (None, True, 2.5, "x", {"a": [1]})]
    ['', 'true', '2.5', 'x', '{"a":[1]}']
    """
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, decimal.Decimal)):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    if isinstance(value, (list, tuple, dict)):
        return to_json(value)
    out = _json_default(value)
    return out if isinstance(out, str) else str(out)


def located(exc: ArrowError, message_index: int | None, name: str) -> ArrowError:
    """``exc`` again, of its class, at ``message_index`` and under the column ``name`` (a
    field path inside the column is kept below it); the caller raises it from ``exc``.

    >>> str(located(ArrowError("bad", field_path="item"), 3, "s"))
    "bad (at message 3, field 's.item')"
    """
    path = f"{name}.{exc.field_path}" if exc.field_path else name
    index = exc.message_index if exc.message_index is not None else message_index
    try:
        return type(exc)(exc.reason, offset=exc.offset, message_index=index, field_path=path)
    except TypeError:  # a class made otherwise
        return ArrowError(exc.reason, offset=exc.offset, message_index=index, field_path=path)


def rows(batches: Iterable[Any], columns: list[str] | None, head: int | None
         ) -> Iterator[tuple[list[str], list[list[Any]]]]:
    """``(names, columns of values)`` per batch, up to ``head`` rows in all.  A value that
    cannot be read raises quiver's error naming the column and, when ``batches`` says
    (``message_index``, as :class:`~quiver.cli._read.Batches` does), the message."""
    left = head
    for batch in batches:
        if left is not None and left <= 0:
            return
        if columns is not None:
            batch = batch.select(columns)
        if left is not None and batch.num_rows > left:
            batch = batch.slice(0, left)
        if left is not None:
            left -= batch.num_rows
        names = [f.name for f in batch.schema.fields]
        values = []
        for name, column in zip(names, batch.columns):
            try:
                values.append(column_values(column))
            except ArrowError as exc:
                where = getattr(batches, "message_index", None)
                raise located(exc, where, name) from exc
        yield names, values


def _write_jsonl(chunks: Iterator[tuple[list[str], list[list[Any]]]]) -> None:
    out = sys.stdout
    for names, cols in chunks:
        lines = [to_json(dict(zip(names, row))) for row in zip(*cols)]
        if lines:
            out.write("\n".join(lines) + "\n")
            out.flush()  # a batch at a time, for a reader following a live stream


#: characters that make a CSV field quoted (the delimiter, the quote, line ends)
_CSV_SPECIAL = re.compile(r'[,"\r\n]')


def csv_field(value: Any) -> str:
    """One value as a CSV field, as ``pyarrow.csv.write_csv`` tells them apart: a null is
    an empty field, an empty string (or binary) is ``""``; a field holding a comma, a
    quote or a line end is quoted, its quotes doubled (a carriage return too: a reader
    would end the row at a bare one).

    >>> [csv_field(v) for v in (None, "", "x", "a,b", 2)]
    ['', '""', 'x', '"a,b"', '2']
    """
    if value is None:
        return ""
    text = cell_text(value)
    if text and _CSV_SPECIAL.search(text) is None:
        return text
    return '"' + text.replace('"', '""') + '"'


def _write_csv(chunks: Iterator[tuple[list[str], list[list[Any]]]], names: list[str]) -> None:
    """A header and the rows, lines ended by ``\n``, fields as :func:`csv_field` writes
    them (the csv module of Python 3.11 cannot quote an empty string but not a null:
    QUOTE_NOTNULL came in 3.12)."""
    out = sys.stdout
    out.write(",".join(csv_field(str(n)) for n in names) + "\n")
    for _, cols in chunks:
        lines = [",".join([csv_field(v) for v in row]) for row in zip(*cols)]
        if lines:
            out.write("\n".join(lines) + "\n")
        out.flush()


def _cut(text: str, width: int) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= width else text[: max(width - 1, 1)] + "…"


def _write_table(chunks: Iterator[tuple[list[str], list[list[Any]]]], schema: Any,
                 names: list[str], width: int) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(soft_wrap=False, highlight=False)
    types = {f.name: str(f.type) for f in schema.fields}
    pending: list[list[tuple[str, str]]] = []  # (markup, plain text) per cell
    shown = 0

    def flush() -> None:
        # as many columns as the terminal holds, each at most ``width`` wide; the rest
        # are named below the table
        keep, used = [], 4
        for i, n in enumerate(names):
            want = max([len(n), len(types.get(n, ""))] + [len(r[i][1]) for r in pending])
            want = min(max(want, 4), width) + 3
            if keep and used + want > console.width:
                break
            keep.append(i)
            used += want
        table = Table(show_lines=False, header_style="bold")
        for i in keep:
            n = names[i]
            table.add_column(f"{_escape(n)}\n[dim]{_escape(_cut(types.get(n, ''), width))}[/dim]",
                             overflow="ellipsis", no_wrap=True, max_width=width,
                             min_width=min(len(n), width, 12))
        for r in pending:
            table.add_row(*(r[i][0] for i in keep))
        console.print(table)
        if len(keep) < len(names):
            console.print(f"[dim]{len(names) - len(keep)} more columns: "
                          f"{_escape(', '.join(names[len(keep):]))} (see --columns)[/dim]")
        pending.clear()

    for _, cols in chunks:
        for row in zip(*cols):
            cells = []
            for v in row:
                text = "null" if v is None else _cut(cell_text(v), width)
                cells.append((f"[dim]{text}[/dim]" if v is None else _escape(text), text))
            pending.append(cells)
            shown += 1
            if len(pending) >= TABLE_ROWS:
                flush()
    if pending or shown == 0:
        flush()


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def run(ns: argparse.Namespace) -> int:
    """Print the rows of ``ns.input``."""
    inp = open_input(ns.input)
    batches = open_batches(inp, columns=ns.columns, without_footer=True)
    if batches.warning:  # said first: the rows may stop where the writer did
        print(f"quiver: {inp.display}: {batches.warning}", file=sys.stderr)
    names = list(ns.columns) if ns.columns else [f.name for f in batches.schema.fields]
    fmt = ns.format or ("table" if sys.stdout.isatty() else "jsonl")
    chunks = rows(batches, ns.columns, ns.head)
    if fmt == "jsonl":
        _write_jsonl(chunks)
    elif fmt == "csv":
        _write_csv(chunks, names)
    else:
        _write_table(chunks, batches.schema, names, ns.width or DEFAULT_WIDTH)
    sys.stdout.flush()
    return 1 if batches.warning else 0


__all__ = ["cell_text", "column_values", "csv_field", "located", "rows", "run", "to_json"]
