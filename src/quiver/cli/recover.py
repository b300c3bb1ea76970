"""``quiver recover IN OUT``: save every complete record batch of a damaged input.

A writer that dies half-way leaves a file without its footer, or a stream without its
end-of-stream marker, cut anywhere; a disk or a network can spoil a region in the middle.
The file footer is not needed: the stream inside a file (Columnar spec, "IPC File Format")
carries the schema and every message in order, so recovery walks the messages from the
start, headers first (:func:`quiver.ipc.index.scan_messages`), and keeps each record batch
that decodes and validates in full, with the dictionaries it needs.

Where a message cannot be framed or decoded, the walk resynchronises: it looks for the next
8-byte aligned continuation marker (0xFFFFFFFF) from which a whole message decodes (the
footer's Blocks, when the footer can be read, point at them directly), and carries on from
there.  A message that claims more bytes than remain is a cut only when no readable
message follows it; otherwise it is damage, skipped like any other.  In a file whose footer
reads, the footer's schema (and dictionary ids) is used, so a damaged Schema message loses
nothing else, and an end-of-stream marker before the footer's data end is damage too.

Dictionaries may have been lost in a skipped region, so from then on a batch with
dictionary-encoded columns is kept only once every dictionary it may use has been sent
again whole (not as a delta): recovery never pairs indices with the wrong values.  In a
file whose footer reads, only a skipped region holding one of the footer's Dictionary
blocks loses dictionaries (a file cannot replace them, so none is sent again).

The batches go to OUT as a valid IPC file, with the input's compression.  The report says
what was recovered, what was lost and where, and where and why the data stops.  Exit 0 when
nothing was lost (the end-of-stream marker was reached, or in a file the data end its
readable footer gives, and every batch kept), 1 otherwise.

OUT may not be IN (recover never writes over the damaged original), and ``--json`` with
OUT ``-`` is refused (standard output holds the file), both with exit status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .. import errors as E
from ..ipc import metadata as md
from ..ipc.batch_loader import BatchLoader
from ..ipc.decoder import RawMessage
from ..ipc.framing import EOS, FILE_HEADER, LEGACY_EOS
from ..ipc.index import MessageInfo, scan_messages
from ..ipc.options import IpcReadOptions
from ._common import CliError, Input, display_name, message, open_input, output_path, progress
from ._read import kind_of, open_file_decoder
from ._resync import resync

_CODEC_OPTION = {"lz4_frame": "lz4", "zstd": "zstd"}


@dataclass(frozen=True, slots=True)
class Loss:
    """Something not recovered: where, what and why."""

    offset: int
    message_index: int | None
    kind: str
    reason: str


@dataclass
class Salvage:
    """What a walk over a damaged input found."""

    schema_message: md.SchemaMessage | None = None
    num_batches: int = 0
    rows: int = 0
    batch_offsets: list[int] = field(default_factory=list)
    dictionaries: int = 0
    losses: list[Loss] = field(default_factory=list)
    skipped: list[tuple[int, int]] = field(default_factory=list)  # byte ranges jumped over
    stop_offset: int = 0
    stop_reason: str = ""
    reached_eos: bool = False
    reached_footer: bool = False  # a file's data ended where its readable footer begins
    compression: str | None = None
    footer_metadata: Any = None
    footer_batches: int | None = None

    @property
    def complete(self) -> bool:
        """Nothing lost: end of stream (or of a file's data, by its footer) reached, every
        message kept, and as many batches as a readable footer lists."""
        return (
            (self.reached_eos or self.reached_footer)
            and not self.losses
            and not self.skipped
            and (self.footer_batches is None or self.footer_batches == self.num_batches)
        )


class _Walk:
    def __init__(self, inp: Input, ns: Any, sink: BatchSink | None = None) -> None:
        self.sink = sink
        self.data = inp.whole()
        self.inp = inp
        self.ns = ns
        self.out = Salvage()
        self.loader: BatchLoader | None = None
        self.stale: set[int] = set()  # dictionary ids that may have been lost
        self.index = 0
        self.end = len(self.data)
        self.block_offsets: list[int] = []
        self.dictionary_offsets: list[int] | None = None  # a readable footer's

    def read_at(self, offset: int, n: int) -> Any:
        """``n`` bytes from ``offset`` (for :func:`scan_messages`)."""
        return self.data[offset : offset + n]

    def run(self) -> Salvage:
        """Walk the whole input; the salvage says what was kept and lost."""
        start = 0
        footer = None
        if self.inp.format == "file":
            start = len(FILE_HEADER)
            try:
                dec = open_file_decoder(self.data)
                footer = dec.footer
                self.end = dec.data_end
            except E.ArrowError:
                footer = None
        if footer is not None:
            self.out.footer_metadata = footer.custom_metadata
            self.out.footer_batches = len(footer.record_batches)
            self.dictionary_offsets = [b.offset for b in footer.dictionaries]
            self.block_offsets = sorted(
                self.dictionary_offsets + [b.offset for b in footer.record_batches])
            # the footer repeats the schema: batches read even when the stream's Schema
            # message is damaged
            self._schema(footer.schema)
        with progress(self.ns, self.end, "recover") as bar:
            pos = start
            while pos is not None:
                pos = self._scan_from(pos, bar)
        return self.out

    def _schema(self, schema: md.SchemaMessage) -> None:
        self.out.schema_message = schema
        # (the type rules that need no data are validate's to report: recover salvages
        # damaged bytes and keeps the schema as written)
        self.loader = BatchLoader(schema, IpcReadOptions(validate="full"), file_format=False,
                                  check_types=False)

    def _scan_from(self, pos: int, bar: Any) -> int | None:
        """Walk messages from ``pos``; returns where to resynchronise, or None at the end."""
        last_end = pos
        try:
            for info in scan_messages(self.read_at, self.end, start=pos):
                info = MessageInfo(self.index, info.offset, info.metadata_length,
                                   info.body_length, info.message)
                self._message(info)
                self.index += 1
                last_end = info.end
                bar.update(last_end)
        except E.ArrowError as exc:
            # a message claiming more bytes than remain is a real cut only when nothing
            # readable follows it: else a damaged length, skipped like other damage
            cut = isinstance(exc, E.TruncatedError)
            nxt = self._resync(last_end)
            if nxt is not None:
                return self._skip(last_end, nxt, (
                    "it claims more bytes than come before the next readable message" if cut
                    else "it cannot be read") + f" ({exc.reason})")
            if cut:
                self._lost_at(last_end, f"the input ends inside this message ({exc.reason})")
                self._stop(last_end, f"the input ends inside message {self.index} "
                           f"({exc.reason})")
            else:
                self._lost_at(last_end, f"it cannot be read ({exc.reason})")
                self._stop(last_end, f"message {self.index} at offset {last_end} cannot be "
                           f"read ({exc.reason}) and no later message could be found")
            return None
        # scan_messages stops at end of stream or at the end of the data
        tail = bytes(self.data[last_end : last_end + 8])
        if last_end < self.end and (tail == EOS or tail[:4] == LEGACY_EOS):
            size = len(EOS) if tail == EOS else len(LEGACY_EOS)
            nxt = None
            if self.dictionary_offsets is not None and last_end + size < self.end:
                # a file's stream ends where its footer begins: a marker before that,
                # with readable messages after it, is a damaged message
                nxt = self._resync(last_end)
            if nxt is not None:
                return self._skip(last_end, nxt, "an end-of-stream marker where the file's "
                                  f"data goes on to byte {self.end} (a zeroed length?)")
            if self.dictionary_offsets is None and last_end + size < self.end:
                # a stream ends at its marker (two streams may follow each other), but
                # readable messages after it are not called nothing
                later = self._resync(last_end)
                if later is not None:
                    self.out.losses.append(Loss(later, None, "message", "readable messages "
                                                f"follow the end-of-stream marker at byte "
                                                f"{last_end}; a stream ends at its marker, "
                                                "so they were not recovered"))
            self.out.reached_eos = True
            self._stop(last_end, "end of stream")
        elif self.dictionary_offsets is not None and last_end == self.end:
            self.out.reached_footer = True
            self._stop(last_end, "the file's data ends without the end-of-stream marker, "
                       "where its readable footer begins")
        else:
            self._stop(last_end, "the input ends without the end-of-stream marker (a writer "
                       "that stopped early?): anything written after this was lost")
        return None

    def _skip(self, start: int, nxt: int, reason: str) -> int:
        """Lose the message at ``start`` and skip to ``nxt``; returns ``nxt``."""
        self._lost_at(start, reason)
        self.out.skipped.append((start, nxt))
        self.index += 1
        footer_dicts = self.dictionary_offsets
        if footer_dicts is None or any(start <= o < nxt for o in footer_dicts):
            self.stale.update(self._all_ids())
        return nxt

    def _all_ids(self) -> set[int]:
        return set() if self.loader is None else set(self.loader.schema_msg.dictionary_ids.values())

    def _lost_at(self, offset: int, reason: str) -> None:
        self.out.losses.append(Loss(offset, self.index, "message", reason))

    def _stop(self, offset: int, reason: str) -> None:
        self.out.stop_offset = offset
        self.out.stop_reason = reason

    def _resync(self, after: int) -> int | None:
        """The offset of the next message that frames and decodes whole."""
        return resync(self.data, after, self.end, self.block_offsets)

    def _message(self, info: MessageInfo) -> None:
        msg = info.message
        header = msg.header
        prefix = 8 if bytes(self.data[info.offset : info.offset + 4]) == b"\xff" * 4 else 4
        raw = RawMessage(info.index, info.offset, msg,
                         self.data[info.body_offset : info.end], info.body_offset,
                         self.data[info.offset + prefix : info.body_offset])
        if isinstance(header, md.SchemaMessage):
            if self.loader is None:
                self._schema(header)
            return
        if self.loader is None:
            self.out.losses.append(Loss(info.offset, info.index, kind_of(header),
                                        "no schema message came before it"))
            return
        misaligned = _misaligned(header)
        if misaligned is not None:
            self.out.losses.append(Loss(info.offset, info.index, kind_of(header), misaligned))
            if isinstance(header, md.DictionaryBatch):
                self.stale.add(header.id)
            return
        if isinstance(header, md.DictionaryBatch):
            try:
                self.loader.dictionary(raw)
            except E.ArrowError as exc:
                self.out.losses.append(Loss(info.offset, info.index, "DictionaryBatch",
                                            f"it does not decode ({exc.reason})"))
                self.stale.add(header.id)
                return
            self.out.dictionaries += 1
            if not header.is_delta:
                self.stale.discard(header.id)
            return
        if not isinstance(header, md.RecordBatch):
            self.out.losses.append(Loss(info.offset, info.index, kind_of(header),
                                        "not a record batch or dictionary"))
            return
        if self.stale:
            self.out.losses.append(Loss(
                info.offset, info.index, "RecordBatch",
                f"the dictionaries {sorted(self.stale)} it may use were lost before it"))
            return
        try:
            batch = self.loader.record_batch(raw)
        except E.ArrowError as exc:
            self.out.losses.append(Loss(info.offset, info.index, "RecordBatch",
                                        f"it does not decode or validate ({exc})"))
            return
        if self.out.num_batches == 0 and header.compression is not None:
            self.out.compression = header.compression.codec
        self.out.num_batches += 1
        self.out.rows += batch.num_rows
        self.out.batch_offsets.append(info.offset)
        if self.sink is not None:
            self.sink.write(batch, self.out)


def _misaligned(header: Any) -> str | None:
    """Why a batch whose buffers break the 8-byte alignment rule is not kept (None when
    they keep it): writers align every buffer, so an offset off the rule is damage, and
    reading at it would give shifted values that no check catches (validate calls it an
    alignment error)."""
    rb = header.data if isinstance(header, md.DictionaryBatch) else header
    if not isinstance(rb, md.RecordBatch) or not len(rb.buffers):
        return None
    buffers = np.asarray(rb.buffers).reshape(-1, 2)
    bad = np.flatnonzero((buffers[:, 0] % 8 != 0) & (buffers[:, 1] > 0))
    if not len(bad):
        return None
    i = int(bad[0])
    return (f"its buffer {i} starts at body offset {int(buffers[i, 0])}, off the 8-byte "
            f"alignment every writer keeps: damage that would shift its values")


class BatchSink:
    """Writes recovered batches to OUT as they are found (so that memory holds one batch,
    not all of them): the file writer is made at the first batch, whose codec it keeps."""

    def __init__(self, target: Any) -> None:
        self.target = target  # a binary file object
        self.writer: Any = None

    def write(self, batch: Any, out: Salvage) -> None:
        """Write one recovered batch."""
        self._open(out)
        self.writer.write_batch(batch)

    def _open(self, out: Salvage) -> None:
        if self.writer is None:
            from ..ipc.writer import new_file

            assert out.schema_message is not None
            self.writer = new_file(self.target, out.schema_message.schema,
                                   compression=_CODEC_OPTION.get(out.compression or ""),
                                   unify_dictionaries=True, metadata=out.footer_metadata,
                                   statistics=True)  # as convert: a repaired file filters

    def close(self, out: Salvage) -> None:
        """Finish the file (a file with no batches when none could be saved)."""
        self._open(out)
        self.writer.close()


def salvage(inp: Input, ns: Any = None, sink: BatchSink | None = None) -> Salvage:
    """Walk an input and keep every record batch that can be saved (written to ``sink``
    as found)."""
    return _Walk(inp, ns, sink).run()


def report(out: Salvage, name: str, path: str) -> dict[str, Any]:
    """What was recovered, lost and skipped, as JSON-ready data."""
    return {
        "input": name,
        "output": path,
        "complete": out.complete,
        "record_batches": out.num_batches,
        "rows": out.rows,
        "dictionaries": out.dictionaries,
        "batch_offsets": out.batch_offsets,
        "footer_record_batches": out.footer_batches,
        "lost": [asdict(x) for x in out.losses],
        "skipped": [list(r) for r in out.skipped],
        "stop": {"offset": out.stop_offset, "reason": out.stop_reason,
                 "end_of_stream": out.reached_eos},
    }


def _refuse(ns: argparse.Namespace) -> None:
    """Usage that would lose the report or the original (exit status 2)."""
    if ns.json and ns.output == "-":
        raise CliError("--json writes the report to standard output, which OUT '-' holds for "
                       "the recovered file: name an output file (or leave out --json: the "
                       "summary goes to standard error)", status=2)
    if "-" not in (ns.input, ns.output) and os.path.exists(ns.output) and os.path.samefile(
            ns.input, ns.output):
        raise CliError(f"OUT {display_name(ns.output)!r} is the same file as IN: recover "
                       "never writes over the damaged original; name another output",
                       status=2)


def run(ns: argparse.Namespace) -> int:
    """Recover ``ns.input`` into ``ns.output``: 0 when nothing was lost, else 1 (2 for
    usage :func:`_refuse` refuses)."""
    _refuse(ns)
    inp = open_input(ns.input, whole=True)
    with output_path(ns.output) as f:
        sink = BatchSink(f)
        out = salvage(inp, ns, sink)
        if out.schema_message is None:
            raise CliError("no schema message could be read: there is nothing to recover "
                           f"({out.stop_reason})")
        sink.close(out)
    name = inp.display
    if ns.json:
        sys.stdout.write(json.dumps(report(out, name, display_name(ns.output)), indent=2)
                         + "\n")
    else:
        target = "standard output" if ns.output == "-" else display_name(ns.output)
        message(ns, f"quiver: {name}: recovered {out.num_batches} record batch"
                f"{'' if out.num_batches == 1 else 'es'} ({out.rows} rows, "
                f"{out.dictionaries} dictionary batches) into {target}")
        for loss in out.losses:
            message(ns, f"  lost message {loss.message_index} ({loss.kind}) at byte "
                    f"{loss.offset}: {loss.reason}")
        for a, b in out.skipped:
            message(ns, f"  skipped bytes {a}..{b} ({b - a} bytes) to the next readable "
                    "message")
        if out.footer_batches is not None and out.footer_batches != out.num_batches:
            message(ns, f"  the footer lists {out.footer_batches} record batches")
        message(ns, f"  data stops at byte {out.stop_offset}: {out.stop_reason}")
    return 0 if out.complete else 1
