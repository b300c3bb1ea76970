"""Array benchmarks, side by side with pyarrow in the same run (median of several repeats).

Builds 1M int64 and 1M short strings from Python lists and from numpy (and, for reference,
non-ASCII strings and binary values with nulls), converts back with ``to_pylist``, runs full
validation and slices.  Prints quiver's time, pyarrow's and their
ratio.  Targets: within 3x of pyarrow for building from lists; from-numpy and slicing O(1)
(the 10x larger input must not take 10x longer).

Run: ``.venv/bin/python benchmarks/bench_arrays.py [--rows N] [--repeat R]``
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

import quiver as qv


def median_time(fn: Callable[[], Any], repeat: int) -> float:
    """Median CPU time of ``fn`` over ``repeat`` runs (GC paused while timing).

    CPU time (all threads of this process) rather than wall time keeps the ratios steady
    on a machine shared with other jobs.
    """
    times = []
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            start = time.process_time()
            fn()
            times.append(time.process_time() - start)
        finally:
            gc.enable()
    return statistics.median(times)


def row(name: str, q: float, p: float, target: str = "") -> None:
    ratio = q / p if p > 0 else float("inf")
    print(f"{name:<34} {q * 1e3:>10.3f} {p * 1e3:>10.3f} {ratio:>8.2f}x  {target}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    n, r = args.rows, args.repeat

    ints = list(range(n))
    ints_null = [None if i % 10 == 0 else i for i in range(n)]
    strs = [f"s{i % 1000}" for i in range(n)]
    strs_null = [None if i % 10 == 0 else s for i, s in enumerate(strs)]
    text_null = [None if i % 10 == 0 else f"é{i % 1000}" for i in range(n)]
    bytes_null = [None if s is None else s.encode() for s in strs_null]
    np_ints = np.arange(n, dtype=np.int64)
    np_big = np.arange(10 * n, dtype=np.int64)

    print(f"rows={n} repeat={r} (times in ms)")
    print(f"{'case':<34} {'quiver':>10} {'pyarrow':>10} {'ratio':>9}")
    for name, values in [("int64", ints), ("int64 with nulls", ints_null),
                         ("short strings", strs), ("short strings with nulls", strs_null)]:
        row(f"build {name} from list", median_time(lambda v=values: qv.array(v), r),
            median_time(lambda v=values: pa.array(v), r), "target <= 3x")
    for name, values in [("non-ASCII strings with nulls", text_null),
                         ("binary with nulls", bytes_null)]:
        row(f"build {name}", median_time(lambda v=values: qv.array(v), r),
            median_time(lambda v=values: pa.array(v), r))
    row("build int64 from numpy", median_time(lambda: qv.array(np_ints), r),
        median_time(lambda: pa.array(np_ints), r))
    row("build int64 from numpy (10x rows)", median_time(lambda: qv.array(np_big), r),
        median_time(lambda: pa.array(np_big), r), "O(1): same as the line above")

    q_ints, p_ints = qv.array(ints_null), pa.array(ints_null)
    q_strs, p_strs = qv.array(strs_null), pa.array(strs_null)
    row("to_pylist int64 with nulls", median_time(q_ints.to_pylist, r),
        median_time(p_ints.to_pylist, r))
    row("to_pylist strings with nulls", median_time(q_strs.to_pylist, r),
        median_time(p_strs.to_pylist, r))
    row("validate(full) int64", median_time(lambda: q_ints.validate(full=True), r),
        median_time(lambda: p_ints.validate(full=True), r))
    row("validate(full) strings", median_time(lambda: q_strs.validate(full=True), r),
        median_time(lambda: p_strs.validate(full=True), r))
    row("slice int64", median_time(lambda: q_ints.slice(n // 3, n // 3), r),
        median_time(lambda: p_ints.slice(n // 3, n // 3), r), "O(1)")
    row("slice strings", median_time(lambda: q_strs.slice(n // 3, n // 3), r),
        median_time(lambda: p_strs.slice(n // 3, n // 3), r), "O(1)")
    row("to_numpy int64 (no nulls)", median_time(lambda: qv.array(np_ints).to_numpy(), r),
        median_time(lambda: pa.array(np_ints).to_numpy(), r), "zero-copy")


if __name__ == "__main__":
    main()
