"""Buffer compression benchmarks: quiver.ipc.compression against pyarrow in the same run.

For lz4 (frame) and zstd, on five kinds of 8 MB buffers (sorted int64, small random int64,
random int64, repetitive strings, random float64), times one-buffer compress through
``compress_buffer`` and ``pyarrow.compress``, and one-buffer decompress of *pyarrow's*
payload (what reading a file pyarrow wrote does; pyarrow compresses even when that does
not pay, so random data arrives as LZ4 frames of raw blocks) through ``decompress_buffer``
(8-byte prefix included) and ``pyarrow.decompress``; pyarrow's side returns its own
buffers (no ``asbytes`` copy), as its IPC reader and writer do.  It prints MB/s, the time ratio
quiver / pyarrow (lower is better, 1.0 = same) and the stored sizes (quiver leaves a
buffer raw, prefix -1, when compressing does not make it smaller).  A second table times
a batch's worth of buffers through ``compress_buffers`` / ``decompress_buffers`` serially
and on the thread pool.  Each figure is the best (minimum) of several repeats.

Read the decompress ratios knowing that pyarrow decodes into memory its pool has used
before, while quiver returns a fresh numpy array each time, whose first touch costs page
faults (~3.5 ms per 40 MB here): a floor that a pure-Python library does not get under.

Run: ``python benchmarks/bench_compression.py [--mb 8] [--repeat 5] [--quick]``
(``--mb 80`` shows buffers past the 64 MiB one-call limit of ``compression.ONE_SHOT_MAX``)
"""

from __future__ import annotations

import argparse
from functools import partial

import numpy as np
import pyarrow as pa
from timing import best

from quiver.ipc import compression as c

PA_NAME = {"lz4_frame": "lz4", "zstd": "zstd"}


def make_buffers(nbytes: int) -> dict[str, np.ndarray]:
    """Five kinds of buffers of about ``nbytes`` bytes each."""
    rng = np.random.default_rng(42)
    n = nbytes // 8
    ints = np.cumsum(rng.integers(0, 100, n)).astype("<i8").view(np.uint8)
    small = rng.integers(-1000, 1000, n).astype("<i8").view(np.uint8)
    wide = rng.integers(0, 1 << 40, n).astype("<i8").view(np.uint8)
    words = np.array([f"value-{i % 5000}-{i % 37}" for i in range(20_000)])
    text = "".join(words[rng.integers(0, len(words), nbytes // 12)]).encode()[:nbytes]
    strings = np.frombuffer(text, np.uint8)
    floats = rng.standard_normal(n).astype("<f8").view(np.uint8)
    return {
        "int64_sorted": ints,
        "int64_small": small,
        "int64_random": wide,
        "strings": strings,
        "float64_random": floats,
    }


def _stored(parts: list) -> np.ndarray:
    return np.frombuffer(b"".join(bytes(memoryview(p)) for p in parts), np.uint8)


def _prefixed(raw: np.ndarray, payload: bytes) -> np.ndarray:
    """A stored buffer as Arrow C++ writes it: the uncompressed length, then ``payload``."""
    return np.frombuffer(raw.nbytes.to_bytes(8, "little") + payload, np.uint8)


def one_buffer(bufs: dict[str, np.ndarray], repeat: int) -> None:
    """Single-buffer throughput and sizes, quiver vs pyarrow."""
    print(
        f"{'codec':10} {'buffer':15} {'MB':>5} | {'comp MB/s q':>11} {'pa':>7} {'ratio':>6} | "
        f"{'decomp MB/s q':>13} {'pa':>7} {'ratio':>6} | {'size q':>9} {'size pa':>9} "
        f"{'size ratio':>10}"
    )
    for codec in c.CODECS:
        pname = PA_NAME[codec]
        for name, buf in bufs.items():
            mb = buf.nbytes / 1e6
            stored = _stored(c.compress_buffer(codec, buf))
            theirs = pa.compress(buf, pname, asbytes=True)
            tq_c = best(partial(c.compress_buffer, codec, buf), repeat)
            tp_c = best(partial(pa.compress, buf, pname), repeat)
            read = _prefixed(buf, theirs)
            tq_d = best(
                partial(c.decompress_buffer, codec, read, max_uncompressed=buf.nbytes), repeat
            )
            tp_d = best(partial(pa.decompress, theirs, buf.nbytes, pname), repeat)
            out = c.decompress_buffer(codec, read, max_uncompressed=buf.nbytes)
            assert out.tobytes() == buf.tobytes()
            out = c.decompress_buffer(codec, stored, max_uncompressed=buf.nbytes)
            assert out.tobytes() == buf.tobytes()
            size_q = stored.nbytes
            size_p = len(theirs) + 8
            print(
                f"{codec:10} {name:15} {mb:5.1f} | {mb / tq_c:11.0f} {mb / tp_c:7.0f} "
                f"{tq_c / tp_c:6.2f} | {mb / tq_d:13.0f} {mb / tp_d:7.0f} {tq_d / tp_d:6.2f} | "
                f"{size_q:9d} {size_p:9d} {size_q / size_p:10.3f}"
            )


def _pa_compress_all(cols: list[np.ndarray], pname: str) -> list:
    return [pa.compress(b, pname) for b in cols]


def _pa_decompress_all(theirs: list[bytes], cols: list[np.ndarray], pname: str) -> list:
    return [pa.decompress(x, b.nbytes, pname) for x, b in zip(theirs, cols)]


def many_buffers(bufs: dict[str, np.ndarray], repeat: int) -> None:
    """A batch's worth of buffers, serial vs the thread pool, vs pyarrow one by one
    (pyarrow's payloads are the ones decompressed)."""
    cols = []
    for buf in bufs.values():
        step = max(buf.nbytes // 6, 1)
        cols.extend(buf[i : i + step] for i in range(0, buf.nbytes, step))
    total = sum(b.nbytes for b in cols) / 1e6
    print(f"\n{len(cols)} buffers, {total:.1f} MB in total")
    print(f"{'codec':10} {'mode':8} | {'comp MB/s':>9} {'decomp MB/s':>11}")
    for codec in c.CODECS:
        pname = PA_NAME[codec]
        theirs = [pa.compress(b, pname, asbytes=True) for b in cols]
        stored = [_prefixed(b, t) for b, t in zip(cols, theirs)]  # pyarrow's, as read
        limit = 1 << 40
        for mode, threads in [("serial", False), ("threads", True)]:
            tc = best(partial(c.compress_buffers, codec, cols, threads=threads), repeat)
            td = best(
                partial(
                    c.decompress_buffers, codec, stored, max_uncompressed=limit, threads=threads
                ),
                repeat,
            )
            print(f"{codec:10} {mode:8} | {total / tc:9.0f} {total / td:11.0f}")
        tc = best(partial(_pa_compress_all, cols, pname), repeat)
        td = best(partial(_pa_decompress_all, theirs, cols, pname), repeat)
        print(f"{codec:10} {'pyarrow':8} | {total / tc:9.0f} {total / td:11.0f}")


def main() -> None:
    """Parse options and print both tables."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=8.0, help="size of each buffer in MB")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="1 MB buffers, 2 repeats")
    args = ap.parse_args()
    mb, repeat = (1.0, 2) if args.quick else (args.mb, args.repeat)
    bufs = make_buffers(int(mb * (1 << 20)))
    one_buffer(bufs, repeat)
    many_buffers(bufs, repeat)


if __name__ == "__main__":
    main()
