"""Statistics: what computing them costs a file write, and what they save a selective read.

- write: the same batches written with and without footer statistics (alternating, new
  files); goal: at most 5% more time.  For scale, pyarrow.compute's min/max of the same
  batches against pyarrow's own write of them;
- Python read: ``ipc.read_table(path, filters=...)`` keeping ~1% of a file of many batches
  of a sorted key, against reading the whole file; goal: at most 0.2 of the full read;
- Spark read (``--spark``): a count through the ``filters`` read option keeping ~1% of a
  multi-file dataset, against a count of every row; goal: at most 0.5 of the full read
  (Spark's pushed filters skip nothing: see quiver.spark.pushdown).

Run: ``python benchmarks/bench_statistics.py [--rows N] [--repeat K] [--spark]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable

import bench_ipc
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import quiver.ipc as ipc


def make_table(rows: int) -> pa.Table:
    """bench_ipc's table, its first column replaced by a sorted key (what filters pick)."""
    return bench_ipc.make_table(rows).set_column(0, "id", pa.array(np.arange(rows)))


def main(argv: list[str] | None = None) -> int:
    """Print the statistics benchmarks' medians and ratios."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--batch-rows", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--spark", action="store_true")
    args = ap.parse_args(argv)
    table = make_table(args.rows)
    work = tempfile.mkdtemp(prefix="quiver-bench-stats-")
    try:
        _measure(args, table, work)
    finally:  # (each run writes a few hundred MB)
        shutil.rmtree(work, ignore_errors=True)
    return 0


def _measure(args: argparse.Namespace, table: pa.Table, work: str) -> None:
    """The runs :func:`main` prints, writing under ``work``."""
    batches = table.to_batches(max_chunksize=args.batch_rows)
    counter = iter(range(10**9))

    def write(statistics_on: bool) -> str:
        path = os.path.join(work, f"w{next(counter)}.arrow")
        with ipc.new_file(path, table.schema, statistics=statistics_on) as writer:
            for batch in batches:
                writer.write_batch(batch)
        return path

    def clean(_side: int) -> None:
        for name in os.listdir(work):
            if name.startswith("w"):
                os.remove(os.path.join(work, name))

    print(f"{args.rows:,} rows x 8 columns in {len(batches)} batches; medians of "
          f"{args.repeat}, sides alternating (wall time; CPU time of all threads)")
    (with_stats, without), (cpu_with, cpu_without) = _medians(
        lambda: write(True), lambda: write(False), args.repeat, clean)
    print(f"  file write with statistics {with_stats * 1e3:8.1f} ms, without "
          f"{without * 1e3:8.1f} ms: ratio {with_stats / without:.3f} (goal <= 1.05); "
          f"CPU {cpu_with * 1e3:.1f} / {cpu_without * 1e3:.1f} ms: {cpu_with / cpu_without:.3f}")

    # for scale: the same statistics computed by pyarrow.compute (C++), against
    # pyarrow's own write of the batches
    def pyarrow_write() -> None:
        target = os.path.join(work, f"w{next(counter)}.arrow")
        with pa.OSFile(target, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            for batch in batches:
                writer.write_batch(batch)

    def pyarrow_statistics() -> None:
        for batch in batches:
            for column in batch.columns:
                pc.min_max(column)
                _ = column.null_count

    (pa_stats, pa_write), _ = _medians(pyarrow_statistics, pyarrow_write, args.repeat, clean)
    print(f"  for scale, pyarrow.compute's min/max of every column of the same batches "
          f"{pa_stats * 1e3:8.1f} ms, pyarrow's write {pa_write * 1e3:8.1f} ms: "
          f"{pa_stats / pa_write:.3f} of its write")

    path = write(True)
    cut = int(args.rows * 0.99)
    filters = [("id", ">=", cut)]
    check = ipc.read_table(path, filters=filters)
    assert check.num_rows == args.rows - cut
    (selective, full), (cpu_selective, cpu_full) = _medians(
        lambda: ipc.read_table(path, filters=filters), lambda: ipc.read_table(path),
        args.repeat)
    print(f"  read keeping 1%: {selective * 1e3:8.1f} ms, full read {full * 1e3:8.1f} ms: "
          f"ratio {selective / full:.3f} (goal <= 0.2); CPU "
          f"{cpu_selective * 1e3:.1f} / {cpu_full * 1e3:.1f} ms: {cpu_selective / cpu_full:.3f}")
    if args.spark:
        _spark(work, table, args)


def _medians(ours: Callable[[], object], theirs: Callable[[], object], repeat: int,
             prepare: Callable[[int], object] | None = None
             ) -> tuple[tuple[float, float], tuple[float, float]]:
    """Median wall and CPU (process) times of two functions measured alternately, after
    one untimed call of each; ``prepare(side)`` runs untimed before every call."""
    wall: list[list[float]] = [[], []]
    cpu: list[list[float]] = [[], []]
    for round_ in range(repeat + 1):
        for side, fn in enumerate((ours, theirs)):
            if prepare is not None:
                prepare(side)
            w0, c0 = time.perf_counter(), time.process_time()
            fn()
            if round_:
                wall[side].append(time.perf_counter() - w0)
                cpu[side].append(time.process_time() - c0)
    med = statistics.median
    return (med(wall[0]), med(wall[1])), (med(cpu[0]), med(cpu[1]))


def _spark(work: str, table: pa.Table, args: argparse.Namespace) -> None:
    from quiver.spark import session

    spark = session("local[2]", "quiver-bench-statistics",
                    **{"spark.ui.showConsoleProgress": "false"})
    try:
        root = os.path.join(work, "dataset")
        per_file = len(table) // 8
        for f in range(8):
            part = table.slice(f * per_file, per_file)
            os.makedirs(root, exist_ok=True)
            with ipc.new_file(os.path.join(root, f"f{f}.arrow"), part.schema,
                              statistics=True) as writer:
                for batch in part.to_batches(max_chunksize=args.batch_rows):
                    writer.write_batch(batch)
        cut = int(len(table) * 0.99)

        def selective() -> int:
            return (spark.read.format("arrow").option("filters", f'[["id", ">=", {cut}]]')
                    .load(root).count())

        def full() -> int:
            return spark.read.format("arrow").load(root).filter("i2 > -2000").count()

        assert selective() == len(table) - cut and full() == len(table)
        times: dict[str, list[float]] = {"selective": [], "full": []}
        for _ in range(args.repeat):
            for name, fn in (("selective", selective), ("full", full)):
                t0 = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)
        s, f = statistics.median(times["selective"]), statistics.median(times["full"])
        print(f"  Spark count keeping 1% (filters option): {s:6.2f} s, a filter keeping all "
              f"{f:6.2f} s: ratio {s / f:.3f} (goal <= 0.5)")
    finally:
        spark.stop()


if __name__ == "__main__":
    raise SystemExit(main())
