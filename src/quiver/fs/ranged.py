"""Ranged reads of one object: coalesced, split, concurrent, retried, counted.

:class:`RangedObject` fetches byte ranges of one object with ranged GETs.  Ranges closer
than :data:`HOLE_SIZE` are joined into one request (the bytes between are cheaper than
a round trip) up to :data:`RANGE_SIZE`, and a range larger than that is split; the
requests go to a bounded thread pool (as Arrow C++'s ``ReadRangeCache``: a hole size
limit and a range size limit).  Every fetched range lands in one read-only numpy buffer,
so what callers get are views.  ``requests`` and ``bytes_fetched`` count what went over
the wire.

:class:`SequentialReader` is a binary file object for streams: it reads the object in
large blocks, the next one in flight while the current one is consumed.
"""

from __future__ import annotations

import io
import threading
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from .. import errors as E
from .errors import retrying
from .url import filesystem, redact

#: ranges with fewer bytes than this between them are fetched in one request
HOLE_SIZE = 64 << 10
#: the largest single request: larger ranges are split, and run concurrently
RANGE_SIZE = 16 << 20
#: concurrent requests of one object
MAX_CONCURRENCY = 8
#: the block size of stream read-ahead
STREAM_BLOCK = 16 << 20
#: bytes :class:`ReadAheadBytes` fetches at the start and the end before it is read
READ_HEAD, READ_TAIL = 64, 64 << 10
#: bytes :class:`ReadAheadBytes` fetches from a block that has not been fetched
READ_AHEAD = 16 << 20


def coalesce(ranges: Sequence[tuple[int, int]], hole: int = HOLE_SIZE,
             limit: int = RANGE_SIZE) -> list[tuple[int, int]]:
    """``(start, end)`` ranges, sorted and joined where the gap is below ``hole`` and
    the joined range stays within ``limit`` (a range longer than ``limit`` alone stays
    whole here: :meth:`RangedObject.fetch` splits it).

    >>> coalesce([(0, 10), (20, 30), (1000, 1010)], hole=100, limit=1 << 20)
    [(0, 30), (1000, 1010)]
    """
    out: list[list[int]] = []
    for start, end in sorted(r for r in ranges if r[1] > r[0]):
        if out and start - out[-1][1] < hole and max(end, out[-1][1]) - out[-1][0] <= limit:
            out[-1][1] = max(out[-1][1], end)
        elif out and end <= out[-1][1]:
            continue
        else:
            out.append([start, end])
    return [(s, e) for s, e in out]


def _pieces(start: int, end: int, limit: int) -> list[tuple[int, int]]:
    return [(s, min(s + limit, end)) for s in range(start, end, limit)] or [(start, end)]


class RangedObject:
    """One object of a filesystem, read by byte ranges (thread-safe)."""

    def __init__(self, url: str, storage_options: Mapping[str, Any] | None = None, *,
                 fs: Any = None, path: str | None = None, size: int | None = None,
                 concurrency: int = MAX_CONCURRENCY, hole: int = HOLE_SIZE,
                 range_size: int = RANGE_SIZE) -> None:
        self.url = url
        self.shown = redact(url)
        self.options = storage_options
        if fs is None or path is None:
            fs, path = filesystem(url, storage_options)
        self.fs = fs
        self.path = path
        self.hole = hole
        self.range_size = range_size
        self.concurrency = max(1, concurrency)
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self.requests = 0
        self.bytes_fetched = 0
        self._size = size

    @property
    def size(self) -> int:
        """The object's size in bytes (one metadata request, the first time)."""
        if self._size is None:
            info = retrying(lambda: self.fs.info(self.path), self.url, doing="open",
                            options=self.options)
            self._count(1, 0)
            if info.get("type") == "directory":
                raise E.ArrowInvalidArgument(
                    f"expected an object to read, found a directory at {self.shown}")
            self._size = int(info["size"])
        return self._size

    def _count(self, requests: int, nbytes: int) -> None:
        with self._lock:
            self.requests += requests
            self.bytes_fetched += nbytes

    def get(self, start: int, end: int) -> bytes:
        """Bytes ``start..end`` in one ranged GET (retried when transient); fewer bytes
        than asked is a :class:`~quiver.errors.TruncatedError` naming the range."""
        def call() -> bytes:
            return self.fs.cat_file(self.path, start=start, end=end)

        data = retrying(call, self.url, (start, end), options=self.options)
        self._count(1, len(data))
        if len(data) != end - start:
            raise E.TruncatedError(
                f"expected bytes {start}..{end} of {self.shown} ({end - start} bytes), "
                f"found {len(data)}: the object is shorter than its footer claims (or "
                "changed while read)", offset=start)
        return data

    def fetch(self, ranges: Sequence[tuple[int, int]]) -> list[tuple[int, int, memoryview]]:
        """The coalesced ranges covering ``ranges`` as ``(start, end, bytes)``, fetched
        concurrently; each is one read-only buffer, whatever number of requests it took."""
        merged = coalesce(ranges, self.hole, self.range_size)
        if not merged:
            return []
        size = self.size if self._size is None else self._size
        for start, end in merged:
            if start < 0 or end > size:
                raise E.TruncatedError(
                    f"expected bytes {start}..{end} inside {self.shown}, found an object of "
                    f"{size} bytes: the object is shorter than its footer claims",
                    offset=start)
        outs = [np.empty(end - start, dtype=np.uint8) for start, end in merged]
        tasks = [(k, s, e) for k, (start, end) in enumerate(merged)
                 for s, e in _pieces(start, end, self.range_size)]

        def run(task: tuple[int, int, int]) -> None:
            k, s, e = task
            data = self.get(s, e)
            base = merged[k][0]
            outs[k][s - base : e - base] = np.frombuffer(data, dtype=np.uint8)

        if len(tasks) == 1:
            run(tasks[0])
        else:
            for f in [self.pool().submit(run, task) for task in tasks]:
                f.result()
        found = []
        for (start, end), out in zip(merged, outs):
            out.flags.writeable = False  # like every buffer read from IPC
            found.append((start, end, memoryview(out)))
        return found

    def pool(self) -> ThreadPoolExecutor:
        """The bounded pool this object's requests run on (made on first use)."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="quiver-io")
            return self._pool

    def close(self) -> None:
        """Let the pool's threads go (requests in flight finish first)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)


class SequentialReader(io.RawIOBase):
    """A read-only binary file object over a :class:`RangedObject` that reads ahead: one
    block of :data:`STREAM_BLOCK` bytes in flight while the one before is consumed."""

    def __init__(self, obj: RangedObject, block: int = STREAM_BLOCK) -> None:
        super().__init__()
        self._obj = obj
        self._block = block
        self._pos = 0
        self._buf = memoryview(b"")
        self._buf_start = 0
        self._next: Future | None = None
        self._next_start = 0

    def readable(self) -> bool:
        return True

    def _fetch(self, start: int) -> memoryview:
        end = min(start + self._block, self._obj.size)
        if end <= start:
            return memoryview(b"")
        return self._obj.fetch([(start, end)])[0][2]

    def _advance(self) -> None:
        start = self._buf_start + len(self._buf)
        if self._next is not None and self._next_start == start:
            buf = self._next.result()
        else:
            buf = self._fetch(start)
        self._buf, self._buf_start = buf, start
        after = start + len(buf)
        self._next = None
        if len(buf) and after < self._obj.size:
            self._next_start = after
            self._next = self._obj.pool().submit(self._fetch, after)

    def read(self, n: int = -1) -> memoryview:  # type: ignore[override]
        """Up to ``n`` bytes (all that is left when ``n`` < 0); empty at the end."""
        if n is None or n < 0:
            n = max(self._obj.size - self._pos, 0)
        out: list[memoryview] = []
        while n > 0:
            at = self._pos - self._buf_start
            if at >= len(self._buf):
                if self._pos >= self._obj.size:
                    break
                self._advance()
                continue
            piece = self._buf[at : at + n]
            out.append(piece)
            self._pos += len(piece)
            n -= len(piece)
        if len(out) == 1:
            return out[0]
        return memoryview(b"".join(out))

    def readinto(self, b: Any) -> int:
        data = self.read(len(memoryview(b).cast("B")))
        memoryview(b).cast("B")[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if self._next is not None:
            self._next.cancel()
            self._next = None
        self._buf = memoryview(b"")
        super().close()


class RangeCache:
    """A seekable, read-only file object over a :class:`RangedObject`: reads are views of
    ranges fetched before (a miss is one ranged GET)."""

    def __init__(self, obj: RangedObject) -> None:
        self.obj = obj
        self._chunks: list[tuple[int, int, memoryview]] = []  # sorted by start
        self._pos = 0

    # -- the file object the reader sees ------------------------------------------------
    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        base = (0, self._pos, self.obj.size)[whence]
        self._pos = max(base + offset, 0)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def read(self, n: int = -1) -> memoryview:
        end = self.obj.size if n is None or n < 0 else min(self._pos + n, self.obj.size)
        if end <= self._pos:
            return memoryview(b"")
        out = self.view(self._pos, end - self._pos)
        self._pos = end
        return out

    # -- the cache ------------------------------------------------------------------------
    def _find(self, start: int, end: int) -> memoryview | None:
        k = bisect_right(self._chunks, start, key=lambda c: c[0]) - 1
        while k >= 0:
            s, e, data = self._chunks[k]
            if e >= end:
                return data[start - s : end - s]
            k -= 1
        return None

    def has(self, start: int, end: int) -> bool:
        """Whether bytes ``start..end`` have been fetched."""
        return self._find(start, end) is not None

    def view(self, offset: int, n: int) -> memoryview:
        """Bytes ``offset .. offset + n``: a view of a fetched range, or one GET."""
        found = self._find(offset, offset + n)
        if found is None:
            self._add(self.obj.fetch([(offset, offset + n)]))
            found = self._find(offset, offset + n)
            assert found is not None
        return found

    def prefetch(self, ranges: Sequence[tuple[int, int]]) -> None:
        """Fetch the ranges not held yet, coalesced and concurrently."""
        missing = [(s, e) for s, e in ranges if e > s and not self.has(s, e)]
        if missing:
            self._add(self.obj.fetch(missing))

    def keep_only(self, ranges: Sequence[tuple[int, int]]) -> None:
        """Let go of fetched ranges that meet none of ``ranges`` (batches already made
        keep their own views)."""
        self._chunks = [c for c in self._chunks
                        if any(s < c[1] and c[0] < e for s, e in ranges)]

    def _add(self, chunks: list[tuple[int, int, memoryview]]) -> None:
        self._chunks = sorted(self._chunks + chunks, key=lambda c: c[0])

    def close(self) -> None:
        self._chunks = []


class ReadAheadBytes:
    """An object's bytes as readers slice them (``data[a:b]``, ``len(data)``), fetched
    by ranges on demand with read-ahead; slices are read-only memoryviews."""

    def __init__(self, obj: RangedObject) -> None:
        self._obj = obj
        self._size = obj.size
        self._cache = RangeCache(obj)
        self._tail = (max(0, self._size - READ_TAIL), self._size)
        self._cache.prefetch([(0, min(self._size, READ_HEAD)), self._tail])

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, where: slice) -> memoryview:
        if not isinstance(where, slice):
            raise TypeError("ReadAheadBytes takes slices")
        start, stop, step = where.indices(self._size)
        if step != 1:
            raise TypeError("ReadAheadBytes takes contiguous slices")
        if stop <= start:
            return memoryview(b"")
        if not self._cache.has(start, stop):
            ahead = (start, min(self._size, max(stop, start + READ_AHEAD)))
            self._cache.keep_only([ahead, self._tail])
            self._cache.prefetch([ahead])
        return self._cache.view(start, stop - start)

    def read_at(self, offset: int, n: int) -> memoryview:
        """``n`` bytes from ``offset`` (a ``read_at`` callable for index scans)."""
        return self[offset : offset + n]


__all__ = ["HOLE_SIZE", "MAX_CONCURRENCY", "RANGE_SIZE", "RangeCache", "RangedObject",
           "ReadAheadBytes", "SequentialReader", "coalesce"]
