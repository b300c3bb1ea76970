"""Validation and equality benchmarks: quiver against pyarrow in the same run.

Full validation (``validate(full=True)``) of about a million values per layout, side by side
with pyarrow's ``Array.validate(full=True)``, plus the structural level (which must not grow
with the row count) and logical equality against ``Array.equals``.  Each figure is the best
(minimum) of several repeats; machines are noisy, so read the ratios, not the absolute times.

The quiver arrays are zero-copy imports of the pyarrow ones (C data interface), so both
libraries look at the very same bytes.

Run: ``python benchmarks/bench_validate.py [--rows 1000000] [--repeat 5]``
"""

from __future__ import annotations

import argparse
import decimal

import numpy as np
import pyarrow as pa
from timing import best

from quiver.array.equal import array_equals
from quiver.array.validate import validate_array
from quiver.interop.import_ import import_array


def cases(rows: int) -> dict[str, pa.Array]:
    """One pyarrow array per layout, about ``rows`` values each, with some nulls."""
    rng = np.random.default_rng(0)
    nulls = rng.random(rows) < 0.1
    words = np.array([f"w{i}" for i in range(1000)] + ["héllo", "日本語"], dtype=object)
    picks = words[rng.integers(0, len(words), rows)]
    long_words = np.array([f"a longer value number {i}" for i in range(1000)], dtype=object)
    offsets = np.arange(0, rows + 1, dtype=np.int32) * 3
    list_child = pa.array(rng.integers(0, 100, rows * 3), pa.int32())
    dec_values = [decimal.Decimal(int(v)) / 100 for v in rng.integers(-10**6, 10**6, rows // 10)]
    return {
        "int64": pa.array(rng.integers(0, 1 << 40, rows), mask=nulls),
        "string (short, 1M)": pa.array(picks, pa.string(), mask=nulls),
        "string (no nulls)": pa.array(picks, pa.string()),
        "large_string": pa.array(picks, pa.large_string()),
        "string_view": pa.array(long_words[rng.integers(0, 1000, rows)], pa.string_view()),
        "list<int32>": pa.ListArray.from_arrays(pa.array(offsets), list_child),
        "dictionary<string>": pa.array(picks, pa.string()).dictionary_encode(),
        "run_end_encoded": pa.RunEndEncodedArray.from_arrays(
            pa.array(np.arange(1, rows + 1, dtype=np.int32) * 4), pa.array(picks, pa.string())
        ),
        "dense_union": pa.UnionArray.from_dense(
            pa.array(rng.integers(0, 2, rows).astype(np.int8)),
            pa.array(np.arange(rows, dtype=np.int32)),
            [pa.array(rng.integers(0, 9, rows)), pa.array(picks, pa.string())],
        ),
        "decimal128 (1/10 rows)": pa.array(dec_values, pa.decimal128(12, 2)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    print(f"{'case':<24}{'level':<12}{'quiver ms':>11}{'pyarrow ms':>12}{'ratio':>8}")
    for name, parr in cases(args.rows).items():
        arr = import_array(parr)
        copy = pa.concat_arrays([parr])  # pyarrow short-cuts equals() on identical arrays
        other = import_array(copy)
        checks = [
            ("structural", lambda a=arr: validate_array(a), lambda p=parr: p.validate()),
            (
                "full",
                lambda a=arr: validate_array(a, full=True),
                lambda p=parr: p.validate(full=True),
            ),
            (
                "equals",
                lambda a=arr, o=other: array_equals(a, o),
                lambda p=parr, c=copy: p.equals(c),
            ),
        ]
        if name.startswith("decimal"):
            checks.append(
                (
                    "precision",
                    lambda a=arr: validate_array(a, full=True, check_decimal_precision=True),
                    lambda p=parr: p.validate(full=True),
                )
            )
        for level, ours, theirs in checks:
            q = best(ours, args.repeat)
            p = best(theirs, args.repeat)
            ratio = q / p if p > 0 else float("inf")
            print(f"{name:<24}{level:<12}{q * 1e3:>11.3f}{p * 1e3:>12.3f}{ratio:>8.1f}")


if __name__ == "__main__":
    main()
