"""The fuzz invariant, applied to Arrow IPC (h11's idea).

Any byte string given to quiver's readers either decodes -- and every column of every
batch converts to Python values -- or raises :class:`quiver.ArrowError`; the outcome is
the same whether the bytes are fed whole or in chunks; and it happens in bounded time and
memory.  :func:`mutations` is a seeded mutator over valid files (bit flips, int32 boundary
values written over lengths and offsets, deletions, insertions, truncations, splices);
:func:`check` runs one input through the stream reader, the file reader and the chunked
sans-IO decoder and returns the outcome, raising :class:`InvariantBroken` when quiver
lets anything else escape; :func:`check_path` reads a file input from a real file too,
which must end as reading it from memory does.
"""

from __future__ import annotations

import base64
import contextlib
import random
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import quiver as qv
import quiver.ipc as ipc
from quiver.ipc import body, file_decoder
from quiver.ipc.decoder import END, NEED_DATA

BOUNDARY_INT32 = [0, 1, -1, 7, 8, 255, 256, 0x7FFF, 0x8000, 0xFFFF, 2**31 - 1, -(2**31),
                  2**30, 2**24]


class InvariantBroken(AssertionError):
    """quiver raised something other than ArrowError, or chunking changed the outcome."""


@dataclass(frozen=True)
class Outcome:
    """What reading one input gave: rows converted, or the ArrowError class name."""

    kind: str  # "ok" or an ArrowError subclass name
    detail: object

    @property
    def ok(self) -> bool:
        return self.kind == "ok"


def _convert_all(batches) -> list:
    # convert each batch as soon as it is read, so that errors come in stream order
    return [[c.to_pylist() for c in b.columns] for b in batches]


def _run(fn) -> Outcome:
    try:
        return Outcome("ok", fn())
    except qv.ArrowError as exc:
        return Outcome(type(exc).__name__, exc.offset)
    except Exception as exc:  # the invariant is about exactly this branch
        raise InvariantBroken(f"{type(exc).__name__}: {exc}") from exc


def read_stream_whole(data: bytes) -> list:
    """Every batch of ``data`` read as a stream, converted to Python values."""
    return _convert_all(ipc.open_stream(data))


def read_stream_chunked(data: bytes, chunk: int) -> list:
    """The same through the sans-IO decoder fed ``chunk`` bytes at a time."""
    def batches():
        dec = ipc.StreamDecoder()
        for i in range(0, len(data), chunk):
            dec.feed(data[i : i + chunk])
            while (b := dec.next_batch()) is not NEED_DATA and b is not END:
                yield b
        dec.feed_eof()
        while (b := dec.next_batch()) is not END:
            yield b

    return _convert_all(batches())


def read_file(data: bytes | Path) -> list:
    """Every batch of ``data`` (or the file at that path) read as an IPC file, converted
    to Python values."""
    return _convert_all(ipc.open_file(data))


@contextlib.contextmanager
def _deferring(pooled: bool) -> Iterator[None]:
    """Every compressed record batch body of a file read from a path is left in the file
    (FileDecoder.read_batch), and with ``pooled`` every compressed body takes the pooled
    decode (body.predecompress), whatever their sizes."""
    saved = (file_decoder._DEFERRED_BODY, file_decoder._DEFERRED_BUFFER, body.PARALLEL_BODY_SIZE)
    file_decoder._DEFERRED_BODY = file_decoder._DEFERRED_BUFFER = 0
    if pooled:
        body.PARALLEL_BODY_SIZE = 0
    try:
        yield
    finally:
        file_decoder._DEFERRED_BODY, file_decoder._DEFERRED_BUFFER, body.PARALLEL_BODY_SIZE = saved


def check_path(data: bytes, path: Path, *, pooled: bool) -> Outcome:
    """The file invariant through a real file: reading ``data`` from ``path`` (compressed
    bodies left in the file and read buffer by buffer) ends as reading it from memory."""
    path.write_bytes(data)
    with _deferring(pooled):
        in_memory = _run(lambda: read_file(data))
        from_path = _run(lambda: read_file(path))  # type: ignore[arg-type]
    if (in_memory.kind, repr(in_memory.detail)) != (from_path.kind, repr(from_path.detail)):
        raise InvariantBroken(
            f"read from memory the file gave {in_memory.kind} ({in_memory.detail}), "
            f"from a path {from_path.kind} ({from_path.detail})"
        )
    return from_path


def check(data: bytes, *, chunk: int = 7) -> tuple[Outcome, Outcome]:
    """Run the invariant on one input; returns the (stream, file) outcomes."""
    whole = _run(lambda: read_stream_whole(data))
    pieces = _run(lambda: read_stream_chunked(data, chunk))
    # repr, not ==: NaN values are unequal to themselves
    if (whole.kind, repr(whole.detail) if whole.ok else None) != (
        pieces.kind,
        repr(pieces.detail) if pieces.ok else None,
    ):
        raise InvariantBroken(
            f"fed whole the stream gave {whole.kind}, fed in {chunk}-byte chunks {pieces.kind}"
        )
    as_file = _run(lambda: read_file(data))
    return whole, as_file


def _use_statistics(value: bytes) -> list:
    """Decode a footer statistics value, whole and for some columns, and use all of it:
    every batch's Python values, every column's bounds arrays as Python values."""
    from quiver.ipc.statistics import decode_statistics

    used: list = []
    for columns in (None, {0}, {1, 3}):  # all, and some (as a filtered read decodes them)
        stats = decode_statistics(value, columns=columns)
        used += [(b.index, b.row_count, b.columns) for b in stats]
        for side in (stats.mins, stats.maxs):
            used += [None if a is None else a.to_pylist() for a in side]
    return used


def statistics_value(stream: bytes, rng: random.Random) -> bytes:
    """A footer statistics value holding ``stream``: as quiver writes it (base64 of a zstd
    frame), now and then with the frame's own bytes damaged, or the stream uncompressed."""
    import zstandard

    if rng.random() < 0.3:
        return base64.b64encode(stream)
    frame = bytearray(zstandard.ZstdCompressor(level=1).compress(stream))
    if rng.random() < 0.2:
        frame = bytearray(next(mutations(bytes(frame), rng, 1)))
    return base64.b64encode(bytes(frame))


def check_statistics(value: bytes) -> Outcome:
    """The invariant for the footer's statistics (:mod:`quiver.ipc.statistics`): a value
    decodes and every part of it converts to Python values, or ArrowError; never any other
    exception."""
    return _run(lambda: _use_statistics(value))


def mutations(seed_input: bytes, rng: random.Random, count: int) -> Iterator[bytes]:
    """``count`` seeded mutants of ``seed_input``."""
    for _ in range(count):
        data = bytearray(seed_input)
        for _ in range(rng.choice((1, 1, 1, 2, 3, 8))):
            op = rng.randrange(7)
            if not data:
                break
            pos = rng.randrange(len(data))
            if op == 0:  # bit flip
                data[pos] ^= 1 << rng.randrange(8)
            elif op == 1:  # random byte
                data[pos] = rng.randrange(256)
            elif op in (2, 3):  # int32 boundary value over a 4-aligned word
                pos -= pos % 4
                if pos + 4 <= len(data):
                    value = rng.choice(BOUNDARY_INT32)
                    data[pos : pos + 4] = struct.pack("<I", value & 0xFFFFFFFF)
            elif op == 4:  # delete a run
                k = rng.randrange(1, 17)
                del data[pos : pos + k]
            elif op == 5:  # truncate
                del data[rng.randrange(len(data)) :]
            else:  # duplicate a run elsewhere
                k = rng.randrange(1, 33)
                chunk = data[pos : pos + k]
                at = rng.randrange(len(data))
                data[at:at] = chunk
        yield bytes(data)
