"""pandas conversions (issue 14): quiver against pyarrow in the same run, medians of
alternating runs, as ratios (quiver / pyarrow).

Targets: numeric columns within 1.2x pyarrow (without nulls: zero-copy both ways), string
columns within 3x.  Strings to pandas cannot be zero-copy without pyarrow: pyarrow hands
pandas' ``str`` dtype its own Arrow memory; quiver builds Python str objects (one decode
of the data buffer, then a str per value), see the note printed with that row.

Run: ``python benchmarks/bench_pandas.py [--rows 2000000] [--repeat 5] [--quick]``
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import pandas as pd
import pyarrow as pa
from timing import paired_median

import quiver as qv


def row(name: str, ours: float, theirs: float) -> None:
    print(f"{name:<46} quiver {ours * 1e3:>9.2f} ms  pyarrow {theirs * 1e3:>9.2f} ms"
          f"  ratio {ours / theirs:>6.2f}", flush=True)


def paired(ours: Callable[[], object], theirs: Callable[[], object],
           repeat: int) -> tuple[float, float]:
    """:func:`paired_median` per call; a call below a millisecond is timed as a loop of
    calls (a single sub-millisecond call is mostly timer and scheduler noise)."""
    t0 = time.perf_counter()
    theirs()
    loops = max(1, min(200, int(2e-3 / max(time.perf_counter() - t0, 1e-6))))
    if loops == 1:
        return paired_median(ours, theirs, repeat)
    ours()  # warm: the first call may import modules

    def many(fn: Callable[[], object]) -> Callable[[], None]:
        def run() -> None:
            for _ in range(loops):
                fn()
        return run

    q, p = paired_median(many(ours), many(theirs), repeat)
    return q / loops, p / loops


def frames(rows: int) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(0)
    words = np.array([f"value-{i}" for i in range(1000)], dtype=object)
    ints = rng.integers(0, 1 << 40, rows)
    return {
        "numeric (int64, float64, no nulls)": pd.DataFrame(
            {"i": ints, "f": rng.random(rows), "j": ints % 1000, "g": rng.normal(size=rows)}
        ),
        "numeric with NaN (float64)": pd.DataFrame(
            {"f": np.where(rng.random(rows) < 0.1, np.nan, rng.random(rows))}
        ),
        "nullable Int64": pd.DataFrame(
            {"I": pd.array(np.where(rng.random(rows) < 0.1, None, ints), dtype="Int64")}
        ),
        "string (pandas str)": pd.DataFrame(
            {"s": pd.array(words[rng.integers(0, 1000, rows)], dtype="str")}
        ),
        "string (object, 10% None)": pd.DataFrame(
            {"s": pd.Series(np.where(rng.random(rows) < 0.1, None,
                                     words[rng.integers(0, 1000, rows)]), dtype=object)}
        ),
        "string (pandas string[python], 10% NA)": pd.DataFrame(
            {"s": pd.array(np.where(rng.random(rows) < 0.1, None,
                                    words[rng.integers(0, 1000, rows)]),
                           dtype="string[python]")}
        ),
        "timestamp tz": pd.DataFrame(
            {"t": pd.to_datetime(ints % (1 << 30), unit="s").tz_localize("UTC")}
        ),
        "categorical": pd.DataFrame({"c": pd.Categorical(words[rng.integers(0, 1000, rows)])}),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    rows = 100_000 if args.quick else args.rows
    repeat = 3 if args.quick else args.repeat
    t0 = time.perf_counter()
    print(f"rows={rows} repeat={repeat} (medians)")
    for name, df in frames(rows).items():
        row(f"from_pandas {name}", *paired(
            lambda df=df: qv.Table.from_pandas(df), lambda df=df: pa.Table.from_pandas(df),
            repeat))
        ours, theirs = qv.Table.from_pandas(df), pa.Table.from_pandas(df)
        row(f"to_pandas {name}", *paired(ours.to_pandas, theirs.to_pandas, repeat))
    print(f"({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
