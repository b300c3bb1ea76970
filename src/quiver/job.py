"""The main job behind ``make run``.

Until the Spark pipeline lands, the job is a small real end-to-end run of quiver on its
own: it builds a synthetic table of events (integers, floats, strings, a dictionary
column, timestamps, nested lists), writes it as an Arrow IPC file and stream under
``out/`` (uncompressed, lz4 and zstd), reads every output back (memory-mapped, with a
column projection, and through the streaming decoder), validates it fully, checks the
values survived, and prints what it measured.

Run: ``python -m quiver.job [--rows N] [--out DIR]``
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from . import ipc
from . import types as t


def build_events(rows: int, seed: int = 7):
    """A synthetic events table as a quiver RecordBatch."""
    from . import array, record_batch
    from .array import make_array

    rng = np.random.default_rng(seed)
    kinds = array(["click", "view", "purchase", "refund"], t.string())
    kind_idx = rng.integers(0, 4, rows).astype(np.int8)
    kind = make_array(
        t.dictionary(t.int8(), t.string()), rows, [None, kind_idx.view(np.uint8)], (), 0, 0,
        kinds,
    )
    user = rng.integers(1, 50_000, rows).astype(np.int64)
    amount = np.round(rng.gamma(2.0, 20.0, rows), 2)
    ts = (1_700_000_000_000_000 + np.cumsum(rng.integers(0, 5_000_000, rows))).astype(np.int64)
    country = np.array(["DE", "FR", "US", "CN", "BR", "IN", "JP"], dtype=object)
    sizes = rng.integers(0, 4, rows)
    offsets = np.zeros(rows + 1, dtype=np.int32)
    np.cumsum(sizes, out=offsets[1:])
    tags_values = array(rng.integers(0, 100, int(offsets[-1])).astype(np.int32))
    tags = make_array(
        t.list_(t.int32()), rows, [None, offsets.view(np.uint8)], [tags_values], 0, 0
    )
    return record_batch(
        {
            "user_id": array(user),
            "kind": kind,
            "amount": array(amount),
            "country": array(list(country[rng.integers(0, len(country), rows)]), t.string()),
            "ts": array(ts.view("M8[us]")),
            "tags": tags,
        }
    )


def main(argv: list[str] | None = None) -> int:
    """Run the job; returns a process exit code."""
    ap = argparse.ArgumentParser(prog="python -m quiver.job", description=__doc__)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--batch-rows", type=int, default=100_000)
    ap.add_argument("--out", type=Path, default=Path("out"))
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    t0 = time.perf_counter()
    batch = build_events(args.rows)
    print(f"built {batch.num_rows:,} rows x {batch.num_columns} columns "
          f"in {time.perf_counter() - t0:.2f} s")
    schema = batch.schema
    slices = [batch.slice(i, args.batch_rows) for i in range(0, batch.num_rows, args.batch_rows)]
    ok = True
    for codec in (None, "lz4", "zstd"):
        for fmt in ("file", "stream"):
            suffix = "arrow" if fmt == "file" else "arrows"
            path = args.out / f"events{'-' + codec if codec else ''}.{suffix}"
            t0 = time.perf_counter()
            new = ipc.new_file if fmt == "file" else ipc.new_stream
            with new(path, schema, compression=codec) as w:
                for s in slices:
                    w.write_batch(s)
            wrote = time.perf_counter() - t0
            t0 = time.perf_counter()
            if fmt == "file":
                reader = ipc.open_file(path, memory_map=True, validate="full")
            else:
                reader = ipc.open_stream(path, validate="full")
            total = 0.0
            n = 0
            for b in reader:
                total += float(np.asarray(b.column("amount")).sum())
                n += b.num_rows
            read = time.perf_counter() - t0
            expected = float(np.asarray(batch.column("amount")).sum())
            same = n == batch.num_rows and np.isclose(total, expected)
            ok &= bool(same)
            size = path.stat().st_size
            print(f"{path.name:<24} {size / 1e6:8.1f} MB  write {wrote:6.2f} s  "
                  f"read+validate {read:6.2f} s  {'ok' if same else 'MISMATCH'}")
    proj = ipc.open_file(args.out / "events-zstd.arrow", columns=["kind", "ts"])
    first = proj.get_batch(0)
    print(f"projection {proj.schema.names}: first rows {first.slice(0, 2).to_pylist()}")
    print("job finished:", "all outputs verified" if ok else "VERIFICATION FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
