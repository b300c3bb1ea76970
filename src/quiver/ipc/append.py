"""Appending record batches to an existing IPC file (``new_file(path, schema, append=True)``).

An IPC file is the magic, a stream of messages (the Schema, DictionaryBatches, record
batches), an end of stream, the Footer (the schema and a Block per message) and a trailer
(the footer's length and the magic).  Appending keeps every byte of the old messages where
it is: :func:`read_for_append` reads and checks the footer, the dictionaries and the
statistics first (a refused append leaves the file untouched); then the file is cut at
the end of its last block, dropping the old end of stream, footer and trailer, the new
messages are written from there, and ``close()`` writes an end of stream and a footer
that lists the old Blocks and the new ones.

Dictionaries: the IPC file format has no dictionary replacement, only deltas.  A batch
whose dictionary extends the file's current one (for that field's id) gets a delta; one
with other values is re-encoded against the file's dictionary extended by a delta of the
values it lacks (``unify_dictionaries``, on by default when appending); with
``unify_dictionaries=False`` a batch that would need a replacement is refused.

Crash safety: from the cut until ``close()`` the file has no footer (the format puts it
at the end, so the old one cannot stay readable while new bytes follow it short of
copying the file).  A writer that dies then (``kill -9``, a power cut) leaves every old
message intact and each new message complete or cut short; ``quiver recover FILE OUT``
walks the messages from the start, without the footer, and gives back every old batch and
every complete new one.  A writer that raises closes normally (the ``with`` block) and
leaves a complete file.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from itertools import zip_longest
from typing import Any

import numpy as np

from .. import errors as E
from .. import types as t
from ..array.base import Array
from ..buffers import unpack_bits
from ..layout import storage_numpy_dtype
from . import metadata as md
from .file_decoder import FileDecoder
from .framing import FILE_HEADER, parse_prefix
from .statistics.compute import Raw
from .statistics.decode import decode_statistics, footer_value
from .statistics.encode import StatisticsCollector
from .statistics.model import STATISTICS_KEY, is_float


@dataclass
class AppendState:
    """What appending to a file needs of it, read and checked before anything is
    written."""

    schema_message: md.SchemaMessage
    version: Any
    end: int  # where the new messages start: the end of the last block
    dictionary_blocks: list[md.Block]
    record_batch_blocks: list[md.Block]
    dictionaries: dict[int, Array]  # each id's current dictionary (deltas applied)
    metadata: t.KeyValueMetadata | None  # the footer's custom metadata, statistics left out
    has_statistics: bool
    statistics: tuple[list[int], list[list[Raw]]] | None  # merged into the new footer


def _pread(fd: int, offset: int, n: int) -> bytes:
    out = bytearray()
    while len(out) < n:
        got = os.pread(fd, n - len(out), offset + len(out))
        if not got:
            raise E.TruncatedError(
                f"expected {n} bytes at this offset, found {len(out)} (the file changed?)",
                offset=offset,
            )
        out += got
    return bytes(out)


def _field_text(f: t.Field | None) -> str:
    if f is None:
        return "no field"
    return f"{f.name!r}: {f.type}{'' if f.nullable else ' not null'}"


def check_same_schema(given: t.Schema, found: t.Schema, where: str) -> None:
    """Refuse to append batches of ``given`` to a file of ``found``: the error names the
    first field that differs (name, type or nullability; metadata is not compared, the
    file's is kept)."""
    for i, (ours, theirs) in enumerate(zip_longest(given.fields, found.fields)):
        if (ours is None or theirs is None or ours.name != theirs.name
                or ours.type != theirs.type or ours.nullable != theirs.nullable):
            raise E.ArrowInvalidArgument(
                f"expected field {i} as the file appended to has it, "
                f"{_field_text(theirs)}, found {_field_text(ours)} ({where})"
            )


def read_for_append(fd: int, schema: t.Schema, where: str, *,
                    statistics: bool | None) -> AppendState:
    """Read and check what appending to the file open at ``fd`` needs: its footer
    (little-endian, ``schema``'s fields), its dictionaries and, unless
    ``statistics=False``, its statistics (with ``statistics=True`` and none in the file,
    those of the old batches are computed from their data)."""
    dec = FileDecoder()
    footer = dec.open(lambda offset, n: _pread(fd, offset, n), os.fstat(fd).st_size)
    start = dec.data_end  # (where the footer starts)
    schema_msg = footer.schema
    if schema_msg.endianness != "little":
        raise E.NotSupported(
            f"expected a little-endian file to append to, found a {schema_msg.endianness}-"
            f"endian one ({where}): quiver writes little-endian batches only"
        )
    check_same_schema(schema, schema_msg.schema, where)
    dictionary_blocks = list(footer.dictionaries)
    record_batch_blocks = list(footer.record_batches)
    dec.read_dictionaries(lambda offset, n: _pread(fd, offset, n))
    dictionaries: dict[int, Array] = {}
    if dictionary_blocks:
        memo = dec.memo
        for did in set(schema_msg.dictionary_ids.values()):
            values = memo.get(did)
            if values is not None:
                dictionaries[did] = values
    end = _data_end(fd, dec, dictionary_blocks, record_batch_blocks, start)
    meta = footer.custom_metadata
    value = footer_value(meta)
    kept = None
    if meta is not None:
        key = STATISTICS_KEY.encode()
        pairs = [(k, v) for k, v in meta.items() if k != key]
        kept = t.KeyValueMetadata(pairs) if pairs else None
    merged = None
    if statistics is not False:
        if value is not None:
            merged = _old_statistics(value, schema_msg.schema, len(record_batch_blocks), where)
        elif statistics:
            merged = _computed_statistics(fd, dec, record_batch_blocks, schema_msg.schema)
    return AppendState(schema_msg, footer.version, end, dictionary_blocks,
                       record_batch_blocks, dictionaries, kept, value is not None, merged)


def _data_end(fd: int, dec: FileDecoder, dictionary_blocks: list[md.Block],
              record_batch_blocks: list[md.Block], footer_start: int) -> int:
    """The end of the file's last message: of its last block, or of the Schema message
    when it has none (what follows is the end of stream, the footer and the trailer)."""
    ends = [b.offset + b.meta_data_length + b.body_length
            for b in (*dictionary_blocks, *record_batch_blocks)]
    for i, block in enumerate(dictionary_blocks):
        dec.block_range(block, i, "dictionary")  # (checked to lie in the data)
    for i, block in enumerate(record_batch_blocks):
        dec.block_range(block, i)
    if ends:
        return max(ends)
    head = _pread(fd, len(FILE_HEADER), min(8, footer_start - len(FILE_HEADER)))
    prefix = parse_prefix(head, base_offset=len(FILE_HEADER))
    if prefix is None or prefix[0] <= 0:
        raise E.FramingError("expected a Schema message after the file magic, found none",
                             offset=len(FILE_HEADER))
    end = len(FILE_HEADER) + prefix[1] + prefix[0]
    if end > footer_start:
        raise E.FramingError(
            f"expected the Schema message to end before the footer at {footer_start}, "
            f"found it ending at {end}", offset=len(FILE_HEADER))
    return end


def _old_statistics(value: Any, schema: t.Schema, num_batches: int, where: str
                    ) -> tuple[list[int], list[list[Raw]]] | None:
    """The file's statistics as the writer's raw numbers, or None (with a warning) when
    they cannot be carried over whole: the new footer then has none, as a footer whose
    statistics leave out batches could not be used."""
    try:
        stats = decode_statistics(value)
        raws = _raws_of(stats, schema, num_batches)
    except E.ArrowError as exc:
        raws = None
        why = str(exc)
    else:
        why = "they leave out counts or batches quiver's statistics state"
    if raws is None:
        warnings.warn(f"the statistics of {where} were not carried over (the appended file "
                      f"has none): {why}", E.StatisticsWarning, stacklevel=4)
    return raws


def _raws_of(stats: Any, schema: t.Schema, num_batches: int
             ) -> tuple[list[int], list[list[Raw]]] | None:
    n = len(stats.row_counts)
    if (n != num_batches or not np.array_equal(stats.indices, np.arange(n))
            or not stats.row_known.all() or len(stats.null_counts) != len(schema.fields)):
        return None
    out: list[list[Raw]] = []
    for c, field in enumerate(schema.fields):
        floats = is_float(field.type)
        if not stats.null_known[c].all() or (floats and not stats.nan_known[c].all()):
            return None
        nulls = stats.null_counts[c].tolist()
        nans = stats.nan_counts[c].tolist() if floats else [0] * n
        has = stats.has_bounds[c]
        lows = _raw_values(stats.mins[c]) if stats.mins[c] is not None else None
        highs = _raw_values(stats.maxs[c]) if stats.maxs[c] is not None else None
        column: list[Raw] = []
        for b in range(n):
            if lows is not None and highs is not None and has[b]:
                column.append((nulls[b], nans[b], lows[b], highs[b],
                               bool(stats.min_exact[c][b]), bool(stats.max_exact[c][b])))
            else:
                column.append((nulls[b], nans[b], None, None, True, True))
        out.append(column)
    return [int(r) for r in stats.row_counts], out


def _raw_values(arr: Array) -> list[Any]:
    """The values of a bounds array as the statistics collector keeps them (storage
    numbers, bools, or bytes for decimals, strings and binaries; nulls as they lie)."""
    storage: Any = t.storage_of(arr.type)
    n, off = len(arr), arr.offset
    if isinstance(storage, t.BoolType):
        return unpack_bits(arr.buffers[1], off, n).tolist()
    np_dtype = storage_numpy_dtype(storage)
    if np_dtype is not None:
        return list(np.asarray(arr.buffers[1]).view(np_dtype)[off : off + n])
    data = np.asarray(arr.buffers[-1]).view(np.uint8)
    if isinstance(storage, t.DecimalType):
        width = storage.bit_width // 8
        return [bytes(data[(off + i) * width : (off + i + 1) * width]) for i in range(n)]
    offsets = np.asarray(arr.buffers[1]).view(np.int64 if storage.large else np.int32)
    offsets = offsets[off : off + n + 1].tolist()
    return [bytes(data[offsets[i] : offsets[i + 1]]) for i in range(n)]


def _computed_statistics(fd: int, dec: FileDecoder, blocks: list[md.Block],
                         schema: t.Schema) -> tuple[list[int], list[list[Raw]]]:
    """The statistics of the old batches from their data (``statistics=True`` on a file
    that has none: a footer's statistics cover every batch or none)."""
    collector = StatisticsCollector(schema)
    for i, block in enumerate(blocks):
        raw = dec.record_batch_message(i, _pread(fd, *dec.block_range(block, i)))
        batch = dec.load_record_batch(raw)
        collector.add(batch.columns, batch.num_rows)
    return list(collector.row_counts), collector.raws


def lock(fd: int, where: str) -> None:
    """An exclusive lock on the file for the appender's life (two appenders would write
    over each other's batches); refused at once if another holds it."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no advisory locks here
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise E.ArrowInvalidArgument(
            f"expected no other writer appending to {where}, found the file locked"
        ) from None
    except OSError:
        return  # (a file system without locks)


__all__ = ["AppendState", "check_same_schema", "lock", "read_for_append"]
