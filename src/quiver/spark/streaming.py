"""Arrow IPC as a Structured Streaming source and sink.

``spark.readStream.format("arrow").load(dir_or_glob)`` and
``df.writeStream.format("arrow").option("checkpointLocation", ...).start(path)``.

Theory of operation: reading
----------------------------
Two ways of arriving are read:

* **New files** (the default).  A file joins the stream once it is complete: a file-format
  file when it ends with its magic (the footer is written), a stream-format file when it
  ends with the end-of-stream marker or has not changed for ``fileSettleSeconds``.
  Hidden, ``_``-prefixed and ``_temporary`` entries are skipped as in batch reads.
  Files are taken in the order of their modification time, then path.  An offset holds
  the last (time, path) taken, the paths taken within ``lateFileSeconds`` before it (a
  file that appears late with an older time is still taken, once), and the files the
  micro-batch ending at it reads, with their sizes: planning a micro-batch never lists the
  directory again, so a restart from the checkpoint reads exactly the same bytes.
* **Growing stream files** (``tail=true``).  A stream-format file that a producer keeps
  appending to is read message by message as it grows.  Its offset is the byte position
  after the last complete message, with the positions of the schema and of every
  dictionary message before it; a micro-batch replays those before its own byte range,
  so dictionaries (deltas and replacements) decode as a reader of the whole stream sees
  them.  A half-written message at the end is left for the next trigger.

Offsets are plain JSON (Spark keeps them in the checkpoint) and deterministic: the same
start and end always give the same byte ranges.  Read limits (``maxFilesPerTrigger``,
``maxBytesPerTrigger``, ``maxRowsPerTrigger``) and ``Trigger.AvailableNow`` are Spark's
``ReadLimit``\\ s; a micro-batch always takes at least one file or message, so a limit
smaller than one never stalls the stream.  Nothing depends on filters Spark pushes: the
batch source's rule (see :mod:`quiver.spark.source`) holds for streams too.

Theory of operation: writing
----------------------------
Each micro-batch's tasks write under ``<path>/_temporary/stream-<query>/`` and report
their files.  ``commit(messages, batch_id)`` on the driver first writes
``<path>/_quiver_log/<batch_id>`` (atomically: a temporary name, then a rename), listing
every move, then moves the files into place and removes the attempt directories.  A batch
id already in the log is not written twice: a replayed micro-batch (a restart after a
failure) finishes the moves its log entry lists, if a crash interrupted them, and drops
its own new files.  ``abort`` removes the micro-batch's attempt directories.  Readers skip
``_``-prefixed names, so they see only committed files.

Object storage
--------------
URLs (``s3://``, any fsspec store; ``storage.*`` options as in batch reads) are listed
through :func:`quiver.spark.objstore.list_objects` (objects a stream has taken are left
out before any byte of them is fetched), completeness is read from an object's last bytes
by one ranged GET, and splits are read by the batch source's ranged path.  ``tail=true``
is refused there (:func:`remote_storage` says why).  The sink on a URL is
:class:`quiver.spark.objstore_sink.ObjectStoreStreamWriter`: the same log, created
exclusively, over the object-store commit protocols.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import (
    DataSourceStreamArrowWriter,
    DataSourceStreamReader,
    WriterCommitMessage,
)

from .. import types as t
from ..errors import ArrowError, ArrowInvalid, ArrowInvalidArgument, NotSupported, TruncatedError
from ..fs.ranged import RangedObject, ReadAheadBytes
from ..fs.url import filesystem, is_url, redact
from ..ipc import index as ipc_index
from ..ipc.framing import EOS, LEGACY_EOS
from ..ipc.index import detect_format
from . import objstore
from . import options as opt
from . import plan as P
from .paths import (
    DataFile,
    glob_filter,
    hidden_name,
    partition_of,
    partition_schema,
    paths_from_options,
)
from .policy import from_spark_schema

try:  # Spark 4.2+: read limits and Trigger.AvailableNow for Python sources
    from pyspark.sql.streaming.datasource import (
        ReadAllAvailable,
        ReadMaxBytes,
        ReadMaxFiles,
        ReadMaxRows,
        SupportsTriggerAvailableNow,
    )
except ImportError:  # pragma: no cover - older Spark: no limits, no AvailableNow
    ReadAllAvailable = ReadMaxBytes = ReadMaxFiles = ReadMaxRows = None  # type: ignore

    class SupportsTriggerAvailableNow:  # type: ignore[no-redef]
        """Stand-in for Spark versions without the mix-in."""


OFFSET_VERSION = 1
_MAGIC = b"ARROW1"


def number_option(options: Any, key: str, default: float | None) -> float | None:
    """A non-negative number option (``default`` when absent or blank)."""
    value = options.get(key.lower())
    if value is None or str(value).strip() == "":
        return default
    try:
        n = float(str(value).strip())
    except ValueError:
        raise ArrowInvalidArgument(f"expected option {key} as a number, found {value!r}") from None
    if n < 0 or n != n:
        raise ArrowInvalidArgument(f"expected a non-negative option {key}, found {value!r}")
    return n


@dataclass(frozen=True, slots=True)
class StreamOptions:
    """The streaming source's own options (the batch source's apply too)."""

    tail: bool = False
    file_settle_seconds: float = 30.0
    late_file_seconds: float = 600.0
    max_files: int | None = None
    max_bytes: int | None = None
    max_rows: int | None = None

    @classmethod
    def parse(cls, options: Any) -> StreamOptions:
        """Options from Spark's case-insensitive option map."""
        if opt.flag_option(options, "mergeSchema", False):
            raise ArrowInvalidArgument(
                "expected mergeSchema=false for a stream: a streaming query's schema is "
                "fixed when it starts; give it with .schema(...) to read files whose "
                "schemas differ (missing columns read as null)"
            )
        max_files = number_option(options, "maxFilesPerTrigger", None)
        max_rows = number_option(options, "maxRowsPerTrigger", None)
        settle = number_option(options, "fileSettleSeconds", 30.0)
        late = number_option(options, "lateFileSeconds", 600.0)
        return cls(
            tail=opt.flag_option(options, "tail", False),
            file_settle_seconds=float(settle if settle is not None else 30.0),
            late_file_seconds=float(late if late is not None else 600.0),
            max_files=None if max_files is None else max(1, int(max_files)),
            max_bytes=(opt.size_option(options, "maxBytesPerTrigger", 1)
                       if options.get("maxbytespertrigger") else None),
            max_rows=None if max_rows is None else max(1, int(max_rows)),
        )


# -- finding what is complete -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Candidate:
    """A data file seen by a listing: its path, format, size and modification time."""

    path: str
    format: str
    size: int
    mtime_ns: int
    partition: tuple[tuple[str, str | None], ...]

    @property
    def key(self) -> tuple[int, str]:
        """The order files join the stream in."""
        return (self.mtime_ns, self.path)


def _candidate(path: str, root: str | None) -> Candidate | None:
    """The file at ``path`` if it starts like Arrow IPC (files being created may be empty
    or hold a few bytes yet: they are simply not there yet); its partition values are
    found below ``root`` (none without it)."""
    try:
        with open(path, "rb") as f:
            head = f.read(8)
            st = os.fstat(f.fileno())
    except OSError:
        return None  # removed or unreadable between listing and opening
    kind = detect_format(head) if len(head) >= 8 else None
    if kind is None:
        return None
    return Candidate(path, kind, st.st_size, st.st_mtime_ns,
                     partition_of(root, path) if root is not None else ())


#: ``skip(path, mtime_ns)``: files a listing may leave out (a stream has read them)
Skip = Callable[[str, int], bool]


def list_candidates(paths: Sequence[str], storage: Mapping[str, Any] | None = None,
                    skip: Skip | None = None, read_options: opt.ReadOptions | None = None
                    ) -> list[Candidate]:
    """Every Arrow IPC file under ``paths`` (files, directories walked, globs; URLs of
    object storage listed through fsspec with the ``storage`` options), sorted in the
    order they join the stream; those ``skip`` takes are left out (on object storage
    before their first bytes are fetched).  ``read_options``: Spark's
    ``pathGlobFilter`` (files whose names do not match are left out unopened) and
    ``recursiveFileLookup`` (no partition values), as in batch reads."""
    keep = None
    if read_options is not None and read_options.path_glob_filter is not None:
        keep = glob_filter(read_options.path_glob_filter)
    partitions = read_options is None or not read_options.recursive_file_lookup
    if objstore.any_url(paths):
        def skip_object(url: str, mtime: int) -> bool:
            return (keep is not None and not keep(url)) or bool(skip and skip(url, mtime))

        return sorted((Candidate(f.path, f.format, f.size, mtime,
                                 f.partition if partitions else ())
                       for f, mtime in objstore.list_objects(paths, storage or {},
                                                             missing_ok=True,
                                                             skip=skip_object)),
                      key=lambda c: c.key)
    found: dict[str, Candidate] = {}

    def consider(path: str, root: str) -> None:
        if keep is not None and not keep(path):
            return
        c = _candidate(path, root if partitions else None)
        if c is not None and not (skip and skip(c.path, c.mtime_ns)):
            found[c.path] = c

    for given in paths:
        matches = sorted(glob.glob(given)) if glob.has_magic(given) else [given]
        for match in matches:
            if os.path.isdir(match):
                for dirpath, dirnames, filenames in os.walk(match):
                    dirnames[:] = sorted(d for d in dirnames if not hidden_name(d))
                    for name in filenames:
                        if not hidden_name(name):
                            consider(os.path.join(dirpath, name), match)
            elif os.path.isfile(match):
                consider(match, os.path.dirname(match))
    return sorted(found.values(), key=lambda c: c.key)


def _tail_bytes(path: str, size: int, n: int) -> bytes:
    if is_url(path):  # object storage: one ranged GET (spark/objstore.py)
        return bytes(objstore.tail_bytes(path, size, n))
    with open(path, "rb") as f:
        f.seek(max(0, size - n))
        return f.read(n)


def is_complete(c: Candidate, settle_seconds: float, now_ns: int) -> bool:
    """Whether a file may join the stream: a file-format file ends with its magic; a
    stream ends with its end-of-stream marker or has not changed for ``settle_seconds``."""
    if c.format == "file":
        return c.size >= 12 and _tail_bytes(c.path, c.size, 6) == _MAGIC
    end = _tail_bytes(c.path, c.size, 8)
    if end == EOS or end[-4:] == LEGACY_EOS:
        return True
    return now_ns - c.mtime_ns >= settle_seconds * 1e9


# -- growing streams: complete messages after a position ----------------------------------


@dataclass(frozen=True, slots=True)
class StreamTail:
    """What one stream file holds after ``start`` up to its last complete message."""

    end: int  # the byte after the last complete message
    schema: tuple[int, int] | None
    dictionaries: tuple[tuple[int, int], ...]
    batches: tuple[tuple[int, int, int], ...]  # (offset, end, rows)
    ended: bool  # the end-of-stream marker was read


def scan_tail(path: str, start: int, size: int, *, max_rows: int | None = None,
              max_bytes: int | None = None) -> StreamTail:
    """The complete messages of a stream file from ``start`` within its first ``size``
    bytes, stopping before a half-written message (left for later) or at a limit (at
    least one record batch is taken)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        def read_at(offset: int, n: int) -> bytes:
            return os.pread(fd, n, offset)

        schema = None
        dictionaries: list[tuple[int, int]] = []
        batches: list[tuple[int, int, int]] = []
        end, rows, ended = start, 0, False
        try:
            for info in ipc_index.scan_messages(read_at, size, start=start):
                if batches and ((max_rows is not None and rows + (info.num_rows or 0) > max_rows)
                                or (max_bytes is not None and info.end - start > max_bytes)):
                    break
                if info.kind == "schema":
                    if start != 0 or info.offset != 0:
                        raise ArrowInvalid(
                            f"expected one Schema message at the start, found another at "
                            f"byte {info.offset}")
                    schema = (info.offset, info.end)
                elif info.kind == "dictionary":
                    dictionaries.append((info.offset, info.end))
                elif info.kind == "record_batch":
                    rows += info.num_rows or 0
                    batches.append((info.offset, info.end, info.num_rows or 0))
                else:
                    raise ArrowInvalid(
                        f"expected a schema, dictionary or record batch message, found a "
                        f"{info.kind} at byte {info.offset}")
                end = info.end
            else:
                tail = os.pread(fd, 8, end)
                ended = tail == EOS or tail[:4] == LEGACY_EOS
        except TruncatedError:
            pass  # a message still being written: the next trigger takes it
    except ArrowError as exc:
        raise type(exc)(f"{path}: {exc}") from None
    finally:
        os.close(fd)
    return StreamTail(end, schema, tuple(dictionaries), tuple(batches), ended)


# -- the reader ------------------------------------------------------------------------------


def infer_schema(options: Any) -> t.Schema:
    """The schema of the first complete file (a stream's first message in tail mode)."""
    paths = paths_from_options(options)
    opts = StreamOptions.parse(options)
    storage = remote_storage(paths, opts, options)
    now = time.time_ns()
    read_options = opt.ReadOptions.parse(options)
    candidates = list_candidates(paths, storage, read_options=read_options)
    for c in candidates:
        if c.format == "stream" and opts.tail:
            found = scan_tail(c.path, 0, c.size, max_rows=0)
            if found.schema is None:
                continue
        elif not is_complete(c, opts.file_settle_seconds, now):
            continue
        layout = _layout(c, 0, c.size, None)
        schema = P.spark_schema_of(layout, read_options.policy, read_options.columns)
        fields = list(schema.fields)
        names = {f.name for f in fields}
        files = [DataFile(x.path, x.format, x.size, x.partition) for x in candidates]
        for f in partition_schema(files, read_options.infer_partition_types):
            if f.name not in names:
                fields.append(f)
        return t.schema(fields)
    raise ArrowInvalidArgument(
        f"expected a complete Arrow IPC file under {paths} to take the stream's schema "
        "from, found none; give the schema with spark.readStream.schema(...)"
    )


def remote_storage(paths: Sequence[str], opts: StreamOptions,
                   options: Any) -> dict[str, Any] | None:
    """The storage options of a stream of object-storage URLs (registered for the
    executors' reads, see :mod:`quiver.spark.objstore`), or None for local paths.
    ``tail=true`` is refused there: an object is never appended to, so a "growing"
    stream is a new object replacing the old, and byte positions in the old one say
    nothing certain about the new (see docs/object-storage.md)."""
    if not objstore.any_url(paths):
        return None
    if opts.tail:
        raise NotSupported(
            f"expected local paths for tail=true, found {redact(paths[0])}: objects on "
            "object storage are immutable (a growing stream is a new object replacing the "
            "old one each time, and positions read in the old one are not known to hold "
            "the same bytes); write each chunk as a new object and leave tail out")
    storage = objstore.storage_options(options)
    objstore.register(paths, storage)
    return storage


def _layout(c: Candidate, start: int, end: int,
            earlier_dictionaries: Sequence[tuple[int, int]] | None) -> P.Layout:
    """The layout of bytes ``[start, end)`` of a file (a stream's range is read as
    messages; the dictionaries before ``start`` are replayed before each split)."""
    data_file = DataFile(c.path, c.format, c.size, c.partition)
    if c.format == "file" or is_url(c.path):  # (objects are whole: tail=true is local)
        return P.read_layout(data_file)
    scan = scan_tail(c.path, 0, end) if start == 0 else None
    schema_range: tuple[int, int]
    if scan is not None:
        schema_range = scan.schema or (0, 0)
        earlier: list[tuple[int, int]] = []
    else:
        head = scan_tail(c.path, 0, end, max_rows=0)
        schema_range = head.schema or (0, 0)
        earlier = list(earlier_dictionaries or ())
        scan = scan_tail(c.path, start, end)
    if schema_range == (0, 0):
        raise ArrowInvalid(f"{c.path}: expected a Schema message first")
    schema_message = _read_schema(c.path, schema_range)
    dictionaries = [(a, b, 0) for a, b in earlier]
    batches: list[tuple[int, int]] = []
    # a dictionary message belongs before the record batches that follow it
    events = sorted([(a, b, "d", 0) for a, b in scan.dictionaries]
                    + [(a, b, "b", n) for a, b, n in scan.batches])
    rows: list[int] = []
    for a, b, kind, n in events:
        if kind == "d":
            dictionaries.append((a, b, len(batches)))
        else:
            batches.append((a, b))
            rows.append(n)
    return P.Layout(data_file, schema_message, tuple(batches), tuple(dictionaries),
                    schema_range, rows=tuple(rows))


def _read_schema(path: str, schema_range: tuple[int, int]) -> t.Schema:
    fd = os.open(path, os.O_RDONLY)
    try:
        data = os.pread(fd, schema_range[1] - schema_range[0], schema_range[0])
    finally:
        os.close(fd)
    info = next(iter(ipc_index.scan_messages(data, len(data), start=0)))
    return info.message.header.schema


class ArrowStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """``spark.readStream.format("arrow")``: new files, or growing streams with tail=true."""

    def __init__(self, options: Any, schema: Any) -> None:
        self.paths = paths_from_options(options)
        self.stream_options = StreamOptions.parse(options)
        self.read_options = opt.ReadOptions.parse(options)
        self.storage = remote_storage(self.paths, self.stream_options, options)
        target = from_spark_schema(schema)
        # partition columns: the schema's fields named by key=value directories
        keys = {k for c in self._list() for k, _ in c.partition}
        partition_fields = tuple(f for f in target.fields if f.name in keys)
        data_names = [f.name for f in target.fields if f.name not in keys]
        opts = self.read_options
        self.job = P.ReadJob(
            schema=target,
            partition_fields=partition_fields,
            columns=tuple(data_names) if opts.columns is not None else None,
            policy=opts.policy,
            validate=opts.validate,
            # the filters option applies to streams exactly as to batch reads: rows are
            # filtered on the executors, and footer statistics skip batches
            filters=opt.parsed_filters(opts.filters, target),
            max_records=opts.max_records or opt.session_max_records(),
        )
        self._target: dict[str, Any] | None = None  # AvailableNow: what is there now

    def _list(self, skip: Skip | None = None) -> list[Candidate]:
        return list_candidates(self.paths, self.storage, skip, self.read_options)

    # -- offsets
    def initialOffset(self) -> dict:
        """Nothing read yet."""
        if self.stream_options.tail:
            return {"v": OFFSET_VERSION, "n": 0, "files": {}}
        return {"v": OFFSET_VERSION, "n": 0, "last": None, "recent": [], "new": []}

    def getDefaultReadLimit(self) -> Any:
        """The limit the options ask for (the tightest, when several are set)."""
        o = self.stream_options
        if ReadAllAvailable is None:
            return None
        if o.max_rows is not None:
            return ReadMaxRows(o.max_rows)
        if o.max_files is not None:
            return ReadMaxFiles(o.max_files)
        if o.max_bytes is not None:
            return ReadMaxBytes(o.max_bytes)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        """Fix what this run reads: what is complete now, nothing that arrives later."""
        now = time.time_ns()
        found = self._list()
        if self.stream_options.tail:
            self._target = {c.path: c.size for c in found}
        else:
            self._target = {c.path: c.size for c in found
                            if is_complete(c, self.stream_options.file_settle_seconds, now)}

    def _limits(self, limit: Any) -> tuple[int | None, int | None, int | None]:
        o = self.stream_options
        if limit is None:  # an older Spark without read limits: the options alone
            return o.max_files, o.max_bytes, o.max_rows
        if ReadAllAvailable is not None and isinstance(limit, ReadAllAvailable):
            return None, None, None
        if ReadMaxRows is not None and isinstance(limit, ReadMaxRows):
            return None, None, int(limit.max_rows)
        if ReadMaxFiles is not None and isinstance(limit, ReadMaxFiles):
            return int(limit.max_files), None, None
        if ReadMaxBytes is not None and isinstance(limit, ReadMaxBytes):
            return None, int(limit.max_bytes), None
        return o.max_files, o.max_bytes, o.max_rows

    def latestOffset(self, start: dict | None = None, limit: Any = None) -> dict:
        """The offset after the next micro-batch's data (``start`` when nothing is new)."""
        if start is None:  # pragma: no cover - Spark before 4.2 calls latestOffset()
            start = self.initialOffset()
        _check_offset(start)
        max_files, max_bytes, max_rows = self._limits(limit)
        if self.stream_options.tail:
            return self._latest_tail(start, max_files, max_bytes, max_rows)
        return self._latest_files(start, max_files, max_bytes, max_rows)

    def _latest_files(self, start: dict, max_files: int | None, max_bytes: int | None,
                      max_rows: int | None) -> dict:
        o = self.stream_options
        now = time.time_ns()
        last = tuple(start["last"]) if start["last"] else None
        recent = set(start["recent"])
        window = int(max(o.late_file_seconds, 2 * o.file_settle_seconds) * 1e9)
        floor = last[0] - window if last else None
        target = self._target

        def skip(path: str, mtime_ns: int) -> bool:
            taken = last is not None and (mtime_ns, path) <= last and (
                mtime_ns < floor or path in recent)
            return taken or (target is not None and path not in target)

        new = [c for c in self._list(skip) if is_complete(c, o.file_settle_seconds, now)]
        chosen: list[Candidate] = []
        total_bytes = total_rows = 0
        for c in new:
            if chosen and max_files is not None and len(chosen) >= max_files:
                break
            if chosen and max_bytes is not None and total_bytes + c.size > max_bytes:
                break
            rows = _rows_of(c) if max_rows is not None else 0
            if chosen and max_rows is not None and total_rows + rows > max_rows:
                break
            chosen.append(c)
            total_bytes += c.size
            total_rows += rows
        if not chosen:
            return start
        newest = max([c.key for c in chosen] + ([last] if last else []))
        keep_from = newest[0] - window
        recent_now = sorted({p for p in recent} | {c.path for c in chosen})
        mtimes = {c.path: c.mtime_ns for c in new}
        recent_now = [p for p in recent_now if mtimes.get(p, newest[0]) >= keep_from]
        return {
            "v": OFFSET_VERSION,
            "n": start["n"] + 1,
            "last": [newest[0], newest[1]],
            "recent": recent_now,
            "new": [[c.path, c.format, c.size, c.mtime_ns, [list(p) for p in c.partition]]
                    for c in chosen],
        }

    def _latest_tail(self, start: dict, max_files: int | None, max_bytes: int | None,
                     max_rows: int | None) -> dict:
        files: dict[str, dict] = {k: dict(v) for k, v in start["files"].items()}
        changed = False
        budget_rows, budget_bytes = max_rows, max_bytes
        touched = 0
        for c in self._list():
            if self._target is not None:
                if c.path not in self._target:
                    continue
                size = min(c.size, self._target[c.path])
            else:
                size = c.size
            if max_files is not None and touched >= max_files:
                break
            state = files.get(c.path)
            if c.format == "file":
                if state is not None or not is_complete(c, 0, 0):
                    continue
                files[c.path] = {"format": "file", "pos": c.size, "size": c.size,
                                 "partition": [list(p) for p in c.partition]}
                changed, touched = True, touched + 1
                continue
            pos = state["pos"] if state else 0
            if size <= pos or (state and state.get("ended")):
                continue
            found = scan_tail(c.path, pos, size, max_rows=budget_rows, max_bytes=budget_bytes)
            if found.end == pos:
                continue
            if pos == 0 and found.schema is None:
                continue
            dictionaries = list(state["dictionaries"]) if state else []
            files[c.path] = {
                "format": "stream",
                "pos": found.end,
                "start": pos,
                "dictionaries": dictionaries + [list(d) for d in found.dictionaries],
                "ended": found.ended,
                "partition": [list(p) for p in c.partition],
            }
            changed, touched = True, touched + 1
            rows = sum(r for _, _, r in found.batches)
            if budget_rows is not None:
                budget_rows = max(0, budget_rows - rows)
                if budget_rows == 0:
                    break
            if budget_bytes is not None:
                budget_bytes = max(0, budget_bytes - (found.end - pos))
                if budget_bytes == 0:
                    break
        if not changed:
            return start
        return {"v": OFFSET_VERSION, "n": start["n"] + 1, "files": files}

    # -- planning and reading
    def partitions(self, start: dict, end: dict) -> list[Any]:
        """The splits of the data between ``start`` and ``end`` (decided by the offsets
        alone: the directory is not listed again)."""
        _check_offset(start)
        _check_offset(end)
        if start == end:
            return []
        layouts: list[P.Layout] = []
        if "files" in end:
            before = start.get("files", {})
            for path, state in sorted(end["files"].items()):
                old = before.get(path)
                partition = tuple((k, v) for k, v in state["partition"])
                if state["format"] == "file":
                    if old is not None:
                        continue
                    c = Candidate(path, "file", state["size"], 0, partition)
                    layouts.append(_layout(c, 0, state["size"], None))
                    continue
                pos0 = old["pos"] if old else 0
                if state["pos"] <= pos0:
                    continue
                earlier = [tuple(d) for d in (old["dictionaries"] if old else [])]
                c = Candidate(path, "stream", state["pos"], 0, partition)
                layouts.append(_layout(c, pos0, state["pos"], earlier))
        else:
            for path, fmt, size, mtime_ns, partition in end["new"]:
                c = Candidate(path, fmt, size, mtime_ns, tuple((k, v) for k, v in partition))
                layouts.append(_layout(c, 0, size, None))
        return opt.planned_partitions(layouts, self.job, self.read_options)

    def read(self, partition: Any) -> Iterator[Any]:
        """The partition's rows as pyarrow RecordBatches (zero-copy, PyCapsule)."""
        import pyarrow as pa

        from .read import read_split  # the executors' half: never loaded by the planner

        if self.storage is not None:  # object storage: the options, on executors
            objstore.register(self.paths, self.storage)
        for split in partition.splits:
            for batch in read_split(split, self.job):
                yield pa.record_batch(batch)

    def commit(self, end: dict) -> None:
        """Nothing to release: files are never changed by the source."""

    def stop(self) -> None:
        """Nothing to release."""


def _check_offset(offset: dict) -> None:
    if not isinstance(offset, dict) or offset.get("v") != OFFSET_VERSION:
        raise ArrowInvalidArgument(
            f"expected a quiver stream offset of version {OFFSET_VERSION}, found {offset!r} "
            "(a checkpoint written by another source or version)"
        )


def _rows_of(c: Candidate) -> int:
    """Rows of a complete file, from its message headers alone."""
    with _reading(c.path) as read_at:
        start = 8 if c.format == "file" else 0
        size = c.size
        if c.format == "file":  # the stream inside ends before the footer
            size = c.size - 10
        rows = 0
        try:
            for info in ipc_index.scan_messages(read_at, size, start=start):
                if info.kind == "record_batch":
                    rows += info.num_rows or 0
        except TruncatedError:
            pass
        return rows


@contextlib.contextmanager
def _reading(path: str) -> Iterator[Callable[[int, int], Any]]:
    """``read_at(offset, n)`` over a local file or an object (read ahead in blocks)."""
    if is_url(path):
        obj = RangedObject(path, objstore.options_for(path))
        try:
            yield ReadAheadBytes(obj).read_at
        finally:
            obj.close()
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        yield lambda offset, n: os.pread(fd, n, offset)
    finally:
        os.close(fd)


# -- the sink ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class StreamCommitMessage(WriterCommitMessage):
    """What a task attempt of a micro-batch reports: its directory and files."""

    attempt_dir: str
    files: tuple[Any, ...]


LOG_DIR = "_quiver_log"


def committed_batches(path: str, storage_options: Mapping[str, Any] | None = None
                      ) -> list[int]:
    """The micro-batch ids committed into ``path`` (a URL with ``storage_options``, too),
    in order."""
    if is_url(path):
        fs, root = filesystem(path, storage_options)
        fs.invalidate_cache()
        try:
            found = fs.ls(f"{root.rstrip('/')}/{LOG_DIR}", detail=False)
        except FileNotFoundError:
            return []
        names = [p.rstrip("/").rsplit("/", 1)[-1] for p in found]
        return sorted(int(n) for n in names if n.isdigit())
    log = os.path.join(path, LOG_DIR)
    try:
        names = os.listdir(log)
    except FileNotFoundError:
        return []
    return sorted(int(n) for n in names if n.isdigit())


def stream_output_path(options: Any, overwrite: bool) -> str:
    """The one output path of a stream sink in append mode (what both sinks check)."""
    if overwrite:
        raise ArrowInvalidArgument(
            "expected outputMode('append') for an Arrow IPC stream sink, found complete "
            "(a file sink adds files; it cannot replace its output every micro-batch)"
        )
    paths = paths_from_options(options)
    if len(paths) != 1:
        raise ArrowInvalidArgument(f"expected one output path, found {len(paths)}")
    return paths[0]


class ArrowStreamWriter(DataSourceStreamArrowWriter):
    """``df.writeStream.format("arrow")``: each micro-batch committed once (module doc)."""

    def __init__(self, options: Any, schema: Any, overwrite: bool) -> None:
        self.path = stream_output_path(options, overwrite)
        self.options = opt.WriteOptions.parse(options)
        self.query = uuid.uuid4().hex[:16]
        self.arrow_schema = from_spark_schema(schema)
        names = self.arrow_schema.names
        self.options.check_columns(names)
        missing = [c for c in self.options.partition_by if c not in names]
        if missing:
            raise ArrowInvalidArgument(
                f"expected partitionBy columns among {names}, found {missing}")
        os.makedirs(os.path.join(self.path, LOG_DIR), exist_ok=True)
        # (the query's directory is made by the tasks that write into it: Spark makes a
        # writer for each commit too, whose directory would stay behind, empty)

    def _query_dir(self) -> str:
        return os.path.join(self.path, "_temporary", f"stream-{self.query}")

    # executor side
    def write(self, iterator: Iterator[Any]) -> StreamCommitMessage:
        """Write this task's batches under a new attempt directory; report the files."""
        from pyspark import TaskContext

        ctx = TaskContext.get()
        task = ctx.partitionId() if ctx is not None else 0
        unique = ctx.taskAttemptId() if ctx is not None else uuid.uuid4().int % 10**9
        attempt_dir = os.path.join(self._query_dir(), f"task-{task:05d}-{unique}")
        # the query's directory goes at each commit once empty: made again here (the
        # output path itself must exist: the log directory, made on the driver, is in it)
        if not os.path.isdir(os.path.join(self.path, LOG_DIR)):
            raise ArrowInvalid(
                f"expected the stream's output directory {self.path} with its "
                f"{LOG_DIR} to write into, found it gone")
        for _ in range(3):  # (a commit may remove it between the two calls)
            os.makedirs(self._query_dir(), exist_ok=True)
            try:
                os.mkdir(attempt_dir)
                break
            except FileNotFoundError:
                continue
        else:
            raise ArrowInvalid(
                f"expected the query's directory {self._query_dir()} to write into, "
                "found it removed three times")
        # names unique across micro-batches and restarts: the query id changes with each
        # start, Spark's attempt id is unique within it
        from .sink import TaskFiles, write_all  # (executors only)

        files = TaskFiles(attempt_dir, f"part-{task:05d}-{unique}-{self.query}", self.options)
        written = write_all(files, iterator)
        return StreamCommitMessage(attempt_dir, tuple(written))

    # driver side
    def commit(self, messages: list[StreamCommitMessage | None], batchId: int) -> None:
        """Log the micro-batch, then move its files into place (once per batch id)."""
        reported = [m for m in messages if m is not None]
        entry = os.path.join(self.path, LOG_DIR, str(int(batchId)))
        if os.path.exists(entry):
            # a replay of a committed micro-batch: finish its logged moves, drop ours
            _finish_moves(self.path, entry)
            _remove_attempts(self.path, reported)
            return
        moves = [[os.path.relpath(os.path.join(m.attempt_dir, w.relative), self.path),
                  w.relative] for m in reported for w in m.files]
        _write_atomically(entry, json.dumps({"batch": int(batchId), "moves": moves}))
        _finish_moves(self.path, entry)
        _remove_attempts(self.path, reported)

    def abort(self, messages: list[StreamCommitMessage | None], batchId: int) -> None:
        """Remove what this micro-batch's reporting tasks wrote; nothing became visible."""
        _remove_attempts(self.path, [m for m in messages if m is not None])


def _remove_attempts(root: str, reported: list[StreamCommitMessage]) -> None:
    """Remove the reporting tasks' attempt directories, then their query directories and
    ``_temporary`` where that left them empty (a task of a later micro-batch makes its
    query directory again)."""
    parents = set()
    for m in reported:
        shutil.rmtree(m.attempt_dir, ignore_errors=True)
        parents.add(os.path.dirname(m.attempt_dir))
    for parent in sorted(parents):
        with contextlib.suppress(OSError):  # not empty: another attempt is still there
            os.rmdir(parent)
    with contextlib.suppress(OSError):
        os.rmdir(os.path.join(root, "_temporary"))


def _write_atomically(path: str, text: str) -> None:
    temporary = f"{path}.{uuid.uuid4().hex[:8]}.tmp"
    with open(temporary, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(temporary, path)


def _finish_moves(root: str, entry: str) -> None:
    """Do the moves a log entry lists that are not done yet (idempotent)."""
    with open(entry, encoding="utf-8") as f:
        moves = json.load(f)["moves"]
    for source, target in moves:
        src = os.path.join(root, source)
        dst = os.path.join(root, target)
        if os.path.exists(src):
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            os.replace(src, dst)
        # else: moved by an earlier commit of this batch (or removed since by hand)
    with contextlib.suppress(OSError):
        os.rmdir(os.path.join(root, "_temporary"))


__all__ = [
    "ArrowStreamReader",
    "ArrowStreamWriter",
    "StreamOptions",
    "committed_batches",
    "infer_schema",
    "list_candidates",
    "number_option",
    "remote_storage",
    "scan_tail",
    "stream_output_path",
]
