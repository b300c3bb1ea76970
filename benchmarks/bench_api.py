"""The Python API as pyarrow users meet it (issue 14): quiver against pyarrow in the same
run, medians of alternating runs, as ratios (quiver / pyarrow).

Rows and targets:
- writing pyarrow RecordBatches with quiver's writer (the Spark sink's path): about as
  fast as writing quiver batches (ratio to quiver's own batches <= ~1.1, and shown vs
  pyarrow writing the same batches); the batches are slices of one table (each column
  in its own allocation) and, as a Spark worker gets them, batches read from a stream;
- casting float64 to string (no target: shown for the record);
- reading a stream from a path (4M rows, 40 batches; pyarrow through ``OSFile``): <= 1.5;
- ``import quiver`` vs ``import pyarrow`` in a fresh interpreter: <= 1.0.

Run: ``python benchmarks/bench_api.py [--rows 4000000] [--repeat 7] [--quick]``
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa
import pyarrow.ipc as pipc
from timing import paired_median

import quiver.ipc as ipc
from quiver.interop import import_batch


def row(name: str, ours: float, theirs: float, unit: str = "ms", scale: float = 1e3,
        who: str = "pyarrow") -> None:
    print(
        f"{name:<52} quiver {ours * scale:>9.3f} {unit}  {who} {theirs * scale:>9.3f} {unit}"
        f"  ratio {ours / theirs:>5.2f}",
        flush=True,
    )


def make_table(rows: int) -> pa.Table:
    rng = np.random.default_rng(0)
    words = np.array([f"value-{i}" for i in range(1000)], dtype=object)
    return pa.table(
        {
            "i1": rng.integers(0, 1 << 40, rows),
            "f1": rng.random(rows),
            "s1": pa.array(words[rng.integers(0, 1000, rows)], pa.string()),
            "b": rng.random(rows) > 0.5,
            "ts": pa.array(rng.integers(0, 1 << 50, rows), pa.timestamp("us")),
            "i2": pa.array(np.where(rng.random(rows) > 0.1, rng.integers(0, 9, rows), 0)),
        }
    )


def _read_back(table: pa.Table, batch_rows: int) -> list[pa.RecordBatch]:
    """The table's batches as pyarrow reads them from a stream (each batch's buffers in
    one body, as the batches a Spark worker receives)."""
    sink = pa.BufferOutputStream()
    with pipc.new_stream(sink, table.schema) as w:
        w.write_table(table, max_chunksize=batch_rows)
    return list(pipc.open_stream(sink.getvalue()))


def bench_write_pyarrow_batches(rows: int, batch_rows: int, repeat: int,
                                read_back: bool = False) -> None:
    """``read_back``: batches read from a stream; otherwise slices of the table (every
    column's buffers in allocations of their own, often far apart)."""
    table = make_table(rows)
    pa_batches = (_read_back(table, batch_rows) if read_back
                  else table.to_batches(max_chunksize=batch_rows))
    q_batches = [import_batch(b) for b in pa_batches]
    schema = table.schema

    def write(batches: list) -> None:
        sink = ipc.BufferOutputStream()
        with ipc.new_stream(sink, schema) as w:
            for b in batches:
                w.write_batch(b)

    def pa_write() -> None:
        sink = pa.BufferOutputStream()
        with pipc.new_stream(sink, schema) as w:
            for b in pa_batches:
                w.write_batch(b)

    n = len(pa_batches)
    label = f"write {n} pyarrow batches of {batch_rows} rows" + (" read" if read_back else "")
    ours, mine = paired_median(lambda: write(pa_batches), lambda: write(q_batches), repeat)
    row(label + " vs quiver batches", ours, mine, who="quiver-batches")
    row(label + " vs pyarrow", *paired_median(lambda: write(pa_batches), pa_write, repeat))


def bench_float_text(rows: int, repeat: int) -> None:
    """cast float64 -> string: quiver takes the shortest digits from Python's repr, one
    value at a time (numpy has no vectorized shortest formatting), the layout with numpy."""
    import quiver as qv
    from quiver.interop import import_array

    rng = np.random.default_rng(0)
    for name, values in (("uniform", rng.random(rows) * 1e5),
                         ("wide exponents",
                          rng.standard_normal(rows) * 10.0 ** rng.integers(-30, 30, rows))):
        theirs = pa.array(values)
        ours = import_array(theirs)
        row(f"cast {rows} float64 ({name}) to string",
            *paired_median(lambda ours=ours: ours.cast(qv.string()),
                           lambda theirs=theirs: theirs.cast(pa.string()), repeat))


def bench_stream_from_path(rows: int, repeat: int) -> None:
    table = make_table(rows)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "s.arrows")
        with pipc.new_stream(path, table.schema) as w:
            w.write_table(table, max_chunksize=max(rows // 40, 1))

        def ours() -> None:
            with ipc.open_stream(path) as r:
                for _ in r:
                    pass

        def theirs() -> None:
            with pa.OSFile(path) as f:
                for _ in pipc.open_stream(f):
                    pass

        row(f"read a stream from a path ({rows} rows, 40 batches)",
            *paired_median(ours, theirs, repeat))


def bench_small_batches(n: int, repeat: int) -> None:
    """The issue's figure: ``n`` batches of 100 rows (bench_ipc's 8-column table)."""
    from bench_ipc import make_table as ipc_table
    from bench_ipc import quiver_batches, stream_readers

    schema, batches, small = quiver_batches(ipc_table(100))
    q_batch, p_batch = batches[0], small.to_batches()[0]

    def q_write() -> object:
        sink = ipc.BufferOutputStream()
        with ipc.new_stream(sink, schema) as w:
            for _ in range(n):
                w.write_batch(q_batch)
        return sink.getvalue()

    def p_write() -> None:
        sink = pa.BufferOutputStream()
        with pipc.new_stream(sink, small.schema) as w:
            for _ in range(n):
                w.write_batch(p_batch)
        sink.getvalue()

    row(f"write {n} batches of 100 rows (8 columns)", *paired_median(q_write, p_write, repeat))
    data = bytes(q_write())  # type: ignore[arg-type]
    row(f"read {n} batches of 100 rows (8 columns)",
        *paired_median(*stream_readers(data), repeat))


def _import_time(module: str) -> float:
    code = f"import time; t0 = time.perf_counter(); import {module}; " \
           "print(time.perf_counter() - t0)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return float(out.stdout.strip())


def bench_import(repeat: int) -> None:
    # warm the page cache, and write quiver's .pyc files as an installed package has them
    # (this machine sets PYTHONDONTWRITEBYTECODE, which otherwise makes every run compile
    # quiver's sources while pyarrow's wheel ships its bytecode)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for module in ("quiver", "quiver.ipc", "pyarrow"):
        subprocess.run([sys.executable, "-c", f"import {module}"], check=True, env=env)
    qs, ps = [], []
    for _ in range(repeat):
        qs.append(_import_time("quiver"))
        ps.append(_import_time("pyarrow"))
    q, p = sorted(qs)[len(qs) // 2], sorted(ps)[len(ps) // 2]
    row("import quiver vs import pyarrow (fresh interpreter)", q, p)
    qs = sorted(_import_time("quiver.ipc") for _ in range(repeat))
    row("import quiver.ipc vs import pyarrow", qs[len(qs) // 2], p)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=4_000_000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    args = ap.parse_args()
    rows = 200_000 if args.quick else args.rows
    repeat = 3 if args.quick else args.repeat
    t0 = time.perf_counter()
    print(f"rows={rows} repeat={repeat} (medians)")
    bench_write_pyarrow_batches(rows, 10_000, repeat)
    bench_write_pyarrow_batches(rows // 10, 100, repeat)
    bench_write_pyarrow_batches(rows, 10_000, repeat, read_back=True)
    bench_write_pyarrow_batches(rows // 10, 100, repeat, read_back=True)
    bench_float_text(rows // 4, repeat)
    bench_stream_from_path(rows, repeat)
    bench_small_batches(1_000 if args.quick else 10_000, repeat)
    bench_import(max(repeat, 5))
    print(f"({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
