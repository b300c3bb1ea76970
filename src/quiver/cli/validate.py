"""``quiver validate FILE``: every rule of the format that can be checked, all findings.

The rules, from the Columnar spec ("Encapsulated message format", "IPC Streaming Format",
"IPC File Format", "Physical Memory Layout", "Dictionary Messages") and Schema.fbs:

- framing: the continuation marker, a non-negative metadata length within the input, a
  metadata length that keeps the body on an 8-byte boundary, a body length that is a
  multiple of 8, messages starting on 8-byte boundaries, the end-of-stream marker;
- the file format: ``ARROW1`` and its padding at both ends, a footer that decodes, whose
  schema is the stream's and whose Blocks point at the messages of the stream;
- message order: a Schema first, then dictionaries and record batches only;
- bodies: every buffer inside the body and 8-byte aligned, and (through quiver's loader and
  :func:`~quiver.array.validate.validate_array`) buffer sizes, offsets, UTF-8, dictionary
  ids defined before use and indices in range, no dictionary replacement in files, union
  type codes, run ends, views, map keys, and times of day within a day (``--level full``).

The walk goes on after a finding whenever the framing lets it find the next message, and
a batch that fails is checked again column by column, so one bad column does not hide the
others.  Each finding carries its byte offset, message index and field path, the words
"expected X, found Y", and what would fix it; a finding about values points at the field's
buffer that holds them (the offsets for an offsets finding, else the data, values, indices
or type ids), found by a dry walk of the body loader.  A part quiver cannot check (an
unknown metadata version, a feature it does not read) is ``unchecked``: the input is then
not shown valid.  Exit status 0 when nothing was found (notes such as an old framing do not
count), 1 otherwise (an error, or a part that could not be checked).
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from typing import Any

from .. import errors as E
from ..ipc import metadata as md
from ..ipc.batch_loader import BatchLoader
from ..ipc.body import load_record_batch
from ..ipc.decoder import DEFAULT_LIMITS, RawMessage
from ..ipc.framing import FILE_HEADER
from ..ipc.index import MessageInfo
from ..ipc.inspection import buffer_fields
from ..ipc.options import IpcReadOptions
from ..types.checks import type_problems
from ._common import Input, open_input, progress
from ._read import kind_of, open_file_decoder
from ._resync import resync

_I32 = struct.Struct("<i")

FIX_RECOVER = "quiver recover IN OUT saves every complete record batch into a valid file"
FIX_CONVERT = "quiver convert IN OUT rewrites it with correct framing, padding and alignment"
FIX_STATISTICS = ("quiver convert IN OUT rewrites the file with statistics computed from its "
                  "data (--no-statistics leaves them out)")
FIX_WRITER = ("the writer produced invalid data here; fix the writer, or leave the column out "
              "with quiver convert --columns")


@dataclass(frozen=True, slots=True)
class Finding:
    """One broken rule: where (byte offset, message index, field path), what (expected X,
    found Y), which rule, and what would fix it.  ``severity`` is ``error``, ``unchecked``
    (quiver could not check this part, so the input is not shown valid) or ``note``
    (informational: it does not make the input invalid)."""

    rule: str
    what: str
    offset: int | None = None
    message_index: int | None = None
    field_path: str | None = None
    fix: str | None = None
    severity: str = "error"

    def location(self) -> str:
        """``byte 1234, message 5, field 'a.b'`` (the parts that are known).

        >>> Finding("utf8", "bad", 1234, 5, "a.b").location()
        "byte 1234, message 5, field 'a.b'"
        """
        parts = []
        if self.offset is not None:
            parts.append(f"byte {self.offset}")
        if self.message_index is not None:
            parts.append(f"message {self.message_index}")
        if self.field_path:
            parts.append(f"field {self.field_path!r}")
        return ", ".join(parts)


_RULES: list[tuple[type, str, str]] = [
    (E.TruncatedError, "truncated", FIX_RECOVER),
    (E.DictionaryError, "dictionary", FIX_WRITER),
    (E.CompressionError, "compression", FIX_WRITER),
    (E.LimitExceeded, "limit", "raise quiver's IpcLimits if the input is trusted"),
    (E.FramingError, "framing", FIX_RECOVER),
    (E.MetadataError, "metadata", FIX_RECOVER),
    (E.BodyError, "bounds", FIX_WRITER),
    (E.ArrowInvalid, "values", FIX_WRITER),
    (E.NotSupported, "unsupported", "quiver cannot check this part; another reader may"),
]


def finding_of(exc: E.ArrowError, *, offset: int | None = None,
               message_index: int | None = None, field_path: str | None = None) -> Finding:
    """A finding from one of quiver's errors (its location filled in where unknown)."""
    rule, fix = "format", FIX_RECOVER
    for cls, name, hint in _RULES:
        if isinstance(exc, cls):
            rule, fix = name, hint
            break
    words = exc.reason.lower()
    if rule == "values":
        for key, name in (("utf-8", "utf8"), ("offset", "offsets"), ("union", "union"),
                          ("run end", "run_ends"), ("one day", "time_of_day"),
                          ("dictionary", "dictionary"), ("view", "views")):
            if key in words:
                rule = name
                break
    return Finding(
        rule, exc.reason,
        exc.offset if exc.offset is not None else offset,
        exc.message_index if exc.message_index is not None else message_index,
        exc.field_path or field_path,
        fix,
        "unchecked" if rule == "unsupported" else "error",
    )


class _Limit(Exception):
    """Enough findings (``--limit``)."""


class Checker:
    """Collects findings over one input (see the module docstring)."""

    def __init__(self, inp: Input, *, full: bool, limit: int, ns: Any = None) -> None:
        self.inp = inp
        self.ns = ns
        self.data = inp.whole()
        self.full = full
        self.limit = limit
        self.findings: list[Finding] = []
        self.limited = False
        self.messages: list[MessageInfo] = []
        self.record_batches = 0
        self.rows = 0
        self.position = 0
        self.index = 0
        self.lost_at: int | None = None
        options = IpcReadOptions(validate="structural")
        self.options = options
        self.loader: BatchLoader | None = None
        self.statistics: Any = None  # the footer's per-batch statistics (full level)
        self.statistics_index: dict[int, int] = {}  # record batch offset -> footer block
        self.footer_at = 0

    def add(self, finding: Finding) -> None:
        """Keep one finding; stop the walk when the limit is reached."""
        if finding.offset is not None and finding.offset > len(self.data):
            # a flatbuffer reference pointing far away: say where the message is instead
            finding = replace(finding, offset=None)
        if len(self.findings) >= self.limit:
            self.limited = True
            raise _Limit
        self.findings.append(finding)

    @property
    def valid(self) -> bool:
        """No error was found and every part could be checked."""
        return not any(f.severity != "note" for f in self.findings)

    # -- the whole input ------------------------------------------------------------------

    def run(self) -> None:
        """Check everything (stops quietly at the limit)."""
        try:
            if self.inp.format == "file":
                self._file()
            else:
                self._stream(0, len(self.data), file_format=False)
            # (a message quiver could not check may be the Schema: that is said already)
            if self.loader is None and not any(
                f.rule == "order" or f.severity == "unchecked" for f in self.findings
            ):
                start = len(FILE_HEADER) if self.inp.format == "file" else 0
                self.add(Finding("order", "expected a Schema message first, found "
                                 + ("no readable message" if self.findings
                                    else "the end of the stream"), start, 0, fix=FIX_WRITER))
        except _Limit:
            pass

    def _file(self) -> None:
        data = self.data
        size = len(data)
        if bytes(data[6:8]) != b"\x00\x00":
            self.add(Finding("padding", f"expected 2 zero bytes of padding after the magic, "
                             f"found {bytes(data[6:8])!r}", 6, fix=FIX_CONVERT))
        footer = None
        end = size
        try:
            dec = open_file_decoder(data)
            footer, end = dec.footer, dec.data_end
        except E.ArrowError as exc:
            f = finding_of(exc)
            self.add(Finding("footer", f"the footer cannot be read: {f.what}", f.offset,
                             fix=FIX_RECOVER))
        if footer is not None and self.full:
            self._read_statistics(footer, end)
        self._stream(len(FILE_HEADER), end, file_format=True)
        if footer is not None:
            self._footer(footer, end)

    def _read_statistics(self, footer: md.Footer, at: int) -> None:
        from ..ipc.statistics import STATISTICS_KEY, decode_statistics, footer_value

        value = footer_value(footer.custom_metadata)
        if value is None:
            return
        try:
            self.statistics = decode_statistics(value)
        except E.ArrowError as exc:
            self.add(Finding("statistics", f"expected readable statistics under the footer key "
                             f"{STATISTICS_KEY!r}, found: {exc}", at, fix=FIX_STATISTICS))
            return
        if len(self.statistics) != len(footer.record_batches):
            self.add(Finding("statistics", f"expected statistics for each of the "
                             f"{len(footer.record_batches)} record batches, found "
                             f"{len(self.statistics)}", at, fix=FIX_STATISTICS))
            self.statistics = None
        self.footer_at = at
        blocks = footer.record_batches
        offsets = getattr(blocks, "offsets", None) or [b.offset for b in blocks]
        # by the footer's block, not by count: a lost batch does not shift the others
        self.statistics_index = {o: k for k, o in enumerate(offsets)}

    def _check_statistics(self, columns: list[Any], num_rows: int, raw: RawMessage,
                          index: int) -> None:
        """The footer's statistics of this batch against its data (full level)."""
        from ..ipc.statistics import columns_statistics

        k = self.statistics_index.get(raw.offset, -1)
        if self.statistics is None or not 0 <= k < len(self.statistics):
            return
        from ..ipc.statistics import compare_values

        file_stats = self.statistics
        stored = file_stats[k]
        written = columns_statistics(columns, num_rows, k)
        actual = written.to_statistics()
        names = self.loader.schema.names if self.loader is not None else []
        problems = []
        # (a count the statistics do not state is not compared)
        if stored.row_count is not None and stored.row_count != actual.row_count:
            problems.append(("", f"{stored.row_count} rows", f"{actual.row_count}"))
        for c, (name, want, got) in enumerate(zip(names, stored.columns, actual.columns)):
            if want.null_count is not None and want.null_count != got.null_count:
                problems.append((name, f"{want.null_count} nulls", f"{got.null_count}"))
            if file_stats.nan_known[c][k] and want.nan_count != got.nan_count:
                problems.append((name, f"{want.nan_count} NaN", f"{got.nan_count}"))
            if not bool(file_stats.has_bounds[c][k]):
                continue
            bounds = written.columns[c]
            if bounds.low is None or bounds.high is None:
                problems.append((name, "bounds", "no values"))
                continue
            # compared as stored values (not Python objects, which cannot hold them all)
            low = compare_values(file_stats.mins[c].slice(k, 1), bounds.low)
            high = compare_values(file_stats.maxs[c].slice(k, 1), bounds.high)
            low_ok = low == 0 if file_stats.min_exact[c][k] else low <= 0
            high_ok = high == 0 if file_stats.max_exact[c][k] else high >= 0
            if not (low_ok and high_ok):
                problems.append((name, f"min {want.min!r} and max {want.max!r}"
                                 + ("" if want.min_exact and want.max_exact else " (bounds)"),
                                 f"{got.min!r} and {got.max!r}"))
        for field, expected, found in problems:
            self.add(Finding("statistics", f"expected the footer's statistics of record batch "
                             f"{k} ({expected}) to agree with its data, found {found}",
                             raw.offset, index, field, fix=FIX_STATISTICS))

    def _footer(self, footer: md.Footer, at: int) -> None:
        """The footer against the stream (``at``: where the footer starts)."""
        from .inspect import footer_problems

        if self.loader is not None:
            stream_schema = self.loader.schema_msg
            if not footer.schema.schema.equals(stream_schema.schema, check_metadata=True):
                self.add(Finding("footer", f"expected the footer's schema to be the stream's "
                                 f"({stream_schema.schema}), found {footer.schema.schema}",
                                 at, fix=FIX_RECOVER))
            elif footer.schema.dictionary_ids != stream_schema.dictionary_ids:
                self.add(Finding("footer", "expected the footer's dictionary ids to be the "
                                 f"stream's ({stream_schema.dictionary_ids}), found "
                                 f"{footer.schema.dictionary_ids}", at, fix=FIX_RECOVER))
        for p in footer_problems(footer, self.messages):
            self.add(Finding("footer", f"expected the footer's blocks to match the messages: {p}",
                             at, fix=FIX_RECOVER))

    # -- the stream -----------------------------------------------------------------------

    def _frames(self, start: int, end: int) -> Iterator[tuple[int, int, int, int]]:
        """``(offset, metadata start, metadata length, index)`` of each message; findings
        for the framing; stops at end of stream, at the end, or where framing is lost
        (then ``self.lost_at`` says where, for resynchronising)."""
        data = self.data
        pos, index = start, self.index
        while True:
            self.index = index
            if pos >= end:
                self.add(Finding("eos", "expected the end-of-stream marker 0xFFFFFFFF "
                                 "00000000, found the end of the "
                                 f"{'stream data' if self.inp.format == 'file' else 'input'}",
                                 pos, index, fix="quiver convert IN OUT writes it"))
                return
            if pos % 8:
                self.add(Finding("alignment", f"expected message {index} to start on an 8-byte "
                                 f"boundary, found offset {pos}", pos, index, fix=FIX_CONVERT))
            if end - pos < 4:
                self.add(Finding("truncated", f"expected a 4-byte message prefix, found "
                                 f"{end - pos} bytes", pos, index, fix=FIX_RECOVER))
                return
            (first,) = _I32.unpack_from(data, pos)
            if first == -1:
                if end - pos < 8:
                    self.add(Finding("truncated", "expected an int32 metadata length, found "
                                     f"{end - pos - 4} bytes", pos + 4, index, fix=FIX_RECOVER))
                    return
                (length,) = _I32.unpack_from(data, pos + 4)
                meta = pos + 8
            else:
                length, meta = first, pos + 4
                if length > 0:
                    self.add(Finding("framing", "expected the continuation marker 0xFFFFFFFF "
                                     "(written since Arrow 0.15), found a bare metadata length",
                                     pos, index, fix=FIX_CONVERT, severity="note"))
            if length == 0:
                self.position = meta
                tail = end - meta
                if tail and self.inp.format == "file" and resync(data, pos, end) is not None:
                    # the file's data goes on to its footer: a zeroed length, not the end
                    self.add(Finding("eos", "expected the end-of-stream marker at the end of "
                                     f"the file's data (byte {end - 8}), found one at byte "
                                     f"{pos} with messages after it", pos, index,
                                     fix=FIX_RECOVER))
                    self.lost_at = pos
                    return
                if tail and self.inp.format == "stream":
                    self.add(Finding("eos", f"expected nothing after the end-of-stream marker, "
                                     f"found {tail} bytes", meta, fix=FIX_CONVERT,
                                     severity="note"))
                return
            if length < 0 or meta + length > end:
                cls = E.FramingError if length < 0 else E.TruncatedError
                what = (f"expected a non-negative metadata length, found {length}" if length < 0
                        else f"expected {length} bytes of metadata, found {end - meta}")
                self.add(finding_of(cls(what), offset=meta - 4, message_index=index))
                # a damaged prefix, or a cut: resynchronising tells them apart
                self.lost_at = pos
                return
            if (meta + length) % 8:
                self.add(Finding("alignment", f"expected the metadata length to end on an 8-byte "
                                 f"boundary (padding included), found {length} bytes ending at "
                                 f"offset {meta + length}", meta - 4, index, fix=FIX_CONVERT))
            yield pos, meta, length, index
            pos = self.position
            index += 1

    def _stream(self, start: int, end: int, *, file_format: bool) -> None:
        with progress(self.ns, len(self.data), "validate") as bar:
            pos: int | None = start
            while pos is not None:
                self.lost_at = None
                self._walk(pos, end, file_format, bar)
                if self.lost_at is None:
                    return
                pos = resync(self.data, self.lost_at, end)
                if pos is not None:
                    self.add(Finding("resync", f"skipped bytes {self.lost_at}..{pos} to the "
                                     "next message that reads", self.lost_at,
                                     fix=FIX_RECOVER, severity="note"))
                    self.index += 1

    def _walk(self, start: int, end: int, file_format: bool, bar: Any) -> None:
        data = self.data
        limits = DEFAULT_LIMITS.metadata_limits()
        for pos, meta, length, index in self._frames(start, end):
            try:
                message = md.decode_message(data[meta : meta + length], base_offset=meta,
                                            limits=limits)
            except E.ArrowError as exc:
                found = finding_of(exc, offset=meta, message_index=index)
                if found.offset is None or found.offset > len(data):
                    found = replace(found, offset=meta)  # not where a bad reference points
                self.add(found)
                self.lost_at = pos
                return
            body_start = meta + length
            body_end = body_start + message.body_length
            if body_end > end:
                self.add(Finding("truncated", f"expected a body of {message.body_length} "
                                 f"bytes, found {end - body_start}", body_start, index,
                                 fix=FIX_RECOVER))
                self.lost_at = pos  # a cut, unless a readable message follows
                return
            if message.body_length % 8:
                self.add(Finding("padding", "expected a body length that is a multiple of "
                                 f"8, found {message.body_length}", meta, index,
                                 fix=FIX_CONVERT))
            self.position = body_end
            info = MessageInfo(index, pos, body_start - pos, message.body_length, message)
            self.messages.append(info)
            raw = RawMessage(index, pos, message, data[body_start:body_end], body_start,
                             data[meta : meta + length])
            self._message(raw, index, file_format=file_format)
            bar.update(body_end)

    def _message(self, raw: RawMessage, index: int, *, file_format: bool) -> None:
        header = raw.message.header
        if self.loader is None:
            if not isinstance(header, md.SchemaMessage):
                self.add(Finding("order", f"expected a Schema message first, found a "
                                 f"{kind_of(header)} message", raw.offset, index,
                                 fix=FIX_WRITER))
                return
            for f in header.schema.fields:
                for path, problem in type_problems(f.type, f.name, full=self.full):
                    self.add(Finding("type", problem, raw.offset, index, field_path=path,
                                     fix=FIX_WRITER))
            self.loader = BatchLoader(header, self.options, file_format=file_format,
                                      check_types=False)
            return
        if isinstance(header, (md.RecordBatch, md.DictionaryBatch)):
            self._buffers(raw, header if isinstance(header, md.RecordBatch) else header.data)
        if isinstance(header, md.DictionaryBatch):
            try:
                self.loader.dictionary(raw)
            except E.ArrowError as exc:
                self.add(finding_of(exc, offset=raw.offset, message_index=index))
            else:
                self._dictionary_values(header.id, raw, index)
        elif isinstance(header, md.RecordBatch):
            self.record_batches += 1
            self.rows += header.length
            self._record_batch(raw, header, index)
        else:
            self.add(Finding("order", "expected a DictionaryBatch or RecordBatch message "
                             f"after the Schema, found a {kind_of(header)} message",
                             raw.offset, index, fix=FIX_WRITER))

    def _dictionary_values(self, dictionary_id: int, raw: RawMessage, index: int) -> None:
        """At the full level, the values of a dictionary as they now stand (a batch that
        uses them checks them again; one that is never used is checked here)."""
        assert self.loader is not None
        values = self.loader.memo.get(dictionary_id)
        if not self.full or values is None or self.loader.kept_foreign:
            return
        from ..array.validate import validate_array

        try:
            validate_array(values, full=True, check_time_of_day=True,
                           path=f"<dictionary {dictionary_id}>")
        except E.ArrowError as exc:
            self.add(finding_of(exc, offset=raw.offset, message_index=index))

    def _buffers(self, raw: RawMessage, rb: md.RecordBatch) -> None:
        body = len(raw.body)
        for i, (off, length) in enumerate(rb.buffers.tolist()):
            if off < 0 or length < 0 or off + length > body:
                self.add(Finding("bounds", f"expected buffer {i} inside the body of {body} "
                                 f"bytes, found offset {off} and length {length}",
                                 raw.body_offset + max(off, 0), raw.index, fix=FIX_WRITER))
            elif off % 8:
                self.add(Finding("alignment", f"expected buffer {i} to start on an 8-byte "
                                 f"boundary of the body, found body offset {off}",
                                 raw.body_offset + off, raw.index, fix=FIX_CONVERT))

    def _record_batch(self, raw: RawMessage, header: md.RecordBatch, index: int) -> None:
        loader = self.loader
        assert loader is not None
        schema = loader.schema
        try:
            columns = load_record_batch(loader.plan, header, raw.body, raw.body_offset,
                                        loader.context(raw))
        except E.ArrowError as exc:
            first = finding_of(exc, offset=raw.offset, message_index=index)
            # column by column, so that one bad column does not hide the others
            found = False
            for i, f in enumerate(schema.fields):
                try:
                    load_record_batch(loader.plan, header, raw.body, raw.body_offset,
                                      loader.context(raw), columns=[i])
                except E.ArrowError as col_exc:
                    found = True
                    self.add(finding_of(col_exc, offset=raw.offset, message_index=index,
                                        field_path=f.name))
            if not found:
                self.add(first)
            return
        if not self.full or loader.kept_foreign:
            return
        self._check_statistics(columns, header.length, raw, index)
        from ..array.validate import validate_array

        where: dict[str, list[tuple[int, int]]] | None = None
        for f, column in zip(schema.fields, columns):
            try:
                validate_array(column, full=True, check_time_of_day=True, path=f.name)
            except E.ArrowError as exc:
                found = finding_of(exc, offset=raw.offset, message_index=index,
                                   field_path=f.name)
                if where is None:
                    where = buffer_fields(loader, raw)
                # the field's buffers; a dictionary's values or a path the walk did not
                # name point at their column's
                own = where.get(found.field_path or "") or where.get(f.name) or []
                at = value_offset(own, found.rule)
                self.add(replace(found, offset=raw.offset if at is None else at))


def value_offset(buffers: list[tuple[int, int]], rule: str) -> int | None:
    """Where a value finding points: the offsets buffer for an offsets finding, else the
    field's last non-empty buffer (string data, values, indices, type ids).

    >>> value_offset([(100, 0), (104, 12), (120, 5)], "utf8"), value_offset(
    ...     [(100, 0), (104, 12), (120, 5)], "offsets")
    (120, 104)
    """
    if rule == "offsets" and len(buffers) >= 2 and buffers[1][1]:
        return buffers[1][0]
    filled = [o for o, n in buffers if n]
    return filled[-1] if filled else None


def report_text(checker: Checker, level: str) -> str:
    """Findings for people: one line each, then the fix; or one line saying it is valid."""
    name = checker.inp.display
    lines = []
    for f in checker.findings:
        where = f.location()
        lines.append(f"{name}: {f.severity} [{f.rule}]" + (f" at {where}" if where else "")
                     + f": {f.what}")
        if f.fix:
            lines.append(f"    fix: {f.fix}")
    summary = (f"{len(checker.messages)} messages, {checker.record_batches} record batches, "
               f"{checker.rows} rows; level {level}")
    errors = sum(f.severity == "error" for f in checker.findings)
    unchecked = sum(f.severity == "unchecked" for f in checker.findings)
    if checker.valid:
        lines.append(f"{name}: valid Arrow IPC {checker.inp.format} ({summary})")
    elif not errors:
        lines.append(f"{name}: NOT SHOWN VALID: {unchecked} part"
                     f"{' was' if unchecked == 1 else 's were'} not checked, nothing else found "
                     f"({summary})")
    else:
        more = f", stopped at --limit {checker.limit}" if checker.limited else ""
        lines.append(f"{name}: INVALID Arrow IPC {checker.inp.format}: {errors} error"
                     f"{'' if errors == 1 else 's'}{more} ({summary})")
    return "\n".join(lines) + "\n"


def report_json(checker: Checker, level: str) -> dict[str, Any]:
    """Findings for machines."""
    return {
        "file": checker.inp.display,
        "format": checker.inp.format,
        "level": level,
        "valid": checker.valid,
        "messages": len(checker.messages),
        "record_batches": checker.record_batches,
        "rows": checker.rows,
        "limited": checker.limited,
        "findings": [asdict(f) for f in checker.findings],
    }


def check(inp: Input, *, level: str = "full", limit: int = 50, ns: Any = None) -> Checker:
    """Run every check on an opened input; the checker holds the findings."""
    checker = Checker(inp, full=level == "full", limit=max(limit, 1), ns=ns)
    checker.run()
    return checker


def run(ns: argparse.Namespace) -> int:
    """Validate ``ns.input``: 0 when valid, 1 with the findings otherwise."""
    inp = open_input(ns.input, whole=True)
    checker = check(inp, level=ns.level, limit=ns.limit, ns=ns)
    if ns.json:
        sys.stdout.write(json.dumps(report_json(checker, ns.level), indent=2) + "\n")
    else:
        sys.stdout.write(report_text(checker, ns.level))
    return 0 if checker.valid else 1
