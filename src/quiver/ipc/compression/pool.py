"""Body compression, many buffers: a small shared thread pool (every codec releases the
GIL), used when the total is large enough to pay for the hand-off; the largest buffers go
to the pool first and the small ones are done on the calling thread meanwhile.

>>> default_threads() >= 1
True
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from ...buffers import empty_buffer
from ...errors import ArrowError, ArrowInvalidArgument, LimitExceeded
from .buffer import (
    StoredRange,
    as_u8,
    compress_one,
    decode_stored,
    decompress_buffer,
    read_prefix,
)
from .codecs import LZ4_FRAME, PREFIX_BYTES, ZSTD, check_level, normalize_codec, where_suffix

#: below this total size the thread hand-off costs more than it saves
PARALLEL_THRESHOLD = 1 << 20


#: buffers below these sizes are not sent to the pool (the calling thread does them while
#: the pool works): for smaller ones the hand-off, and the GIL taken back after each codec
#: call, cost more than a second core saves.  Measured with many equal buffers, pool of 2
#: vs serial: compress gains 1.3-1.6x from 64 KiB; zstd decompress 1.1-1.3x from 64-128
#: KiB; lz4 decompress, which runs at memory speed, loses below 256 KiB (0.4-0.9x) and
#: gains 1.6x at 1 MiB.
POOL_MIN_BYTES = {"compress": 1 << 16, ZSTD: 1 << 17, LZ4_FRAME: 1 << 20}


_pools: dict[int, ThreadPoolExecutor] = {}


_pools_lock = threading.Lock()


def default_threads() -> int:
    """How many worker threads ``threads=True`` uses (CPU count, at most 8)."""
    return max(1, min(8, os.cpu_count() or 1))


def _workers(threads: bool | int) -> int:
    if isinstance(threads, bool):
        return default_threads() if threads else 1
    if not isinstance(threads, (int, np.integer)) or threads < 0:
        raise ArrowInvalidArgument(
            f"expected threads as a bool or a non-negative int, found {threads!r}"
        )
    return max(1, int(threads))


def _pool(workers: int) -> ThreadPoolExecutor:
    with _pools_lock:
        pool = _pools.get(workers)
        if pool is None:
            pool = _pools[workers] = ThreadPoolExecutor(
                max_workers=workers, thread_name_prefix="quiver-codec"
            )
        return pool


def run_parallel(
    fn: Callable[[int], Any], sizes: Sequence[int], threads: bool | int, min_bytes: int
) -> list[Any]:
    """``[fn(i) for i in range(len(sizes))]``, the items of at least ``min_bytes`` on the
    pool, largest first, and the small ones on the calling thread meanwhile.

    Largest first, because with as few workers as two cores give, a large buffer that
    starts last finishes alone.  When several items fail, the first one's error (by
    index) is raised, as a serial run would.
    """
    count = len(sizes)
    workers = _workers(threads)
    big = [i for i in range(count) if sizes[i] >= min_bytes]
    if workers <= 1 or len(big) <= 1 or sum(sizes) < PARALLEL_THRESHOLD:
        return [fn(i) for i in range(count)]
    big.sort(key=sizes.__getitem__, reverse=True)
    pool = _pool(min(workers, len(big)))
    futures = {i: pool.submit(fn, i) for i in big}
    results: list[Any] = [None] * count
    errors: dict[int, BaseException] = {}
    for i in range(count):
        if i not in futures:
            try:
                results[i] = fn(i)
            except Exception as exc:  # raised below, after the pool's work is done
                errors[i] = exc
    for i, future in futures.items():
        exc = future.exception()
        if exc is None:
            results[i] = future.result()
        else:
            errors[i] = exc
    if errors:
        raise errors[min(errors)]
    return results


def run_pooled(
    fn: Callable[[int], Any], sizes: Sequence[int], *, threads: bool | int, min_bytes: int
) -> list[Any]:
    """``[fn(i) for i in range(len(sizes))]`` on the codec thread pool as :func:`run_parallel`
    schedules it (the items of at least ``min_bytes``, largest first); the readers use it
    for large positional reads, which release the GIL as the codecs do."""
    return run_parallel(fn, sizes, threads, min_bytes)


def decompress_buffers(
    codec: str,
    buffers: Sequence[Any],
    *,
    max_uncompressed: int,
    bound_total: bool = True,
    threads: bool | int = True,
    where: str = "",
    names: Sequence[str] | None = None,
    locate: Callable[[int, ArrowError], None] | None = None,
) -> list[np.ndarray | None]:
    """Decode many stored buffers (``None`` entries stay ``None``).

    ``names``: what error messages call each buffer (default ``buffer <i>``); ``locate``
    is called with the index and the error of a failing buffer before it is raised.

    ``max_uncompressed`` bounds each buffer and, unless ``bound_total`` is false, the sum
    of all of them; every prefix is checked before any buffer is decompressed.
    ``threads``: True for the shared pool, False for serial, an int for at most that many
    workers.  A :class:`StoredRange` entry
    is read only when its turn comes, into a scratch array per thread: the compressed
    bytes then pass through a few reused arrays instead of one fresh array as large as
    the whole body, whose page faults cost as much as decoding lz4 (measured on 249 MB
    of lz4 frames, 8 columns: 106-116 ms instead of 117-126 ms, pyarrow 96-111 ms).

    >>> import numpy as np
    >>> from quiver.ipc.compression import compress_buffer
    >>> raw = np.frombuffer(b"hello" * 100, np.uint8)
    >>> stored = np.frombuffer(b"".join(bytes(p) for p in compress_buffer("lz4", raw)), np.uint8)
    >>> [None if b is None else len(b) for b in
    ...  decompress_buffers("lz4", [stored, None, stored], max_uncompressed=10_000)]
    [500, None, 500]
    """
    name = normalize_codec(codec)
    views = [
        None if b is None else b if isinstance(b, StoredRange) else as_u8(b) for b in buffers
    ]
    label = (where + ", ") if where else ""
    if names is None:
        names = [f"buffer {i}" for i in range(len(views))]
    sizes = [0] * len(views)
    prefixes = [0] * len(views)
    for i, v in enumerate(views):
        if v is None or v.nbytes == 0:
            continue
        try:
            head = v.head(PREFIX_BYTES) if isinstance(v, StoredRange) else v
            prefixes[i] = declared = read_prefix(head, max_uncompressed, label + names[i])
        except ArrowError as exc:
            if locate is not None:
                locate(i, exc)
            raise
        # work follows the output; a raw (-1) buffer is a view, no work at all
        sizes[i] = max(declared, 0)
    total = sum(sizes)
    if bound_total and total > max_uncompressed:
        raise LimitExceeded(
            f"expected the uncompressed buffers to total <= {max_uncompressed} (the limit), "
            f"found {total}{where_suffix(where)}"
        )

    scratch: dict[int, np.ndarray] = {}  # thread id -> its scratch array, for this call

    def one(i: int) -> np.ndarray | None:
        v = views[i]
        if v is None:
            return None
        try:
            if isinstance(v, StoredRange):
                if v.nbytes == 0:
                    return empty_buffer()
                return decode_stored(name, v, prefixes[i], scratch, label + names[i])
            return decompress_buffer(
                name, v, max_uncompressed=max_uncompressed, where=label + names[i]
            )
        except ArrowError as exc:
            if locate is not None:
                locate(i, exc)
            raise

    return run_parallel(one, sizes, threads, POOL_MIN_BYTES[name])


def compress_buffers(codec: str, buffers: Sequence[Any], *, level: int | None = None,
                     threads: bool | int = True) -> list[list[Any]]:
    """Compress many buffers; one list of parts per buffer (see :func:`compress_buffer`).

    ``None`` entries (absent buffers) give empty part lists.

    >>> import numpy as np
    >>> from quiver.ipc.compression import parts_length
    >>> out = compress_buffers("zstd", [np.zeros(100, np.uint8), None], threads=False)
    >>> [parts_length(p) for p in out]
    [25, 0]
    """
    name = normalize_codec(codec)
    lvl = check_level(name, level)
    raws = [empty_buffer() if b is None else as_u8(b) for b in buffers]
    sizes = [r.nbytes for r in raws]
    return run_parallel(
        lambda i: compress_one(name, raws[i], lvl), sizes, threads, POOL_MIN_BYTES["compress"]
    )


def compress_buffers_in_order(codec: str, buffers: Sequence[Any], *, level: int | None = None,
                              threads: bool | int = True) -> Iterator[list[Any]]:
    """:func:`compress_buffers`, one buffer's parts at a time, in order: the large ones are
    all handed to the pool at once, so that the caller can write buffer ``i`` while the
    pool compresses the buffers after it (the writers' pipelined path).

    Leaving the generator early cancels what the pool has not started; what it has
    started finishes, and the results are dropped.

    >>> import numpy as np
    >>> from quiver.ipc.compression import parts_length
    >>> [parts_length(p) for p in compress_buffers_in_order("zstd", [np.zeros(100, np.uint8)])]
    [25]
    """
    name = normalize_codec(codec)
    lvl = check_level(name, level)
    raws = [empty_buffer() if b is None else as_u8(b) for b in buffers]
    workers = _workers(threads)
    floor = POOL_MIN_BYTES["compress"]
    futures: dict[int, Future[list[Any]]] = {}
    if workers > 1:
        pool = _pool(workers)
        futures = {
            i: pool.submit(compress_one, name, r, lvl)
            for i, r in enumerate(raws)
            if r.nbytes >= floor
        }
    try:
        for i, raw in enumerate(raws):
            future = futures.get(i)
            yield compress_one(name, raw, lvl) if future is None else future.result()
    finally:
        for future in futures.values():  # left early: what has not started never will
            future.cancel()
