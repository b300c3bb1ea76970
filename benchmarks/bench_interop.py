"""C data interface benchmarks: export and import cost against row count, beside pyarrow.

Zero-copy exchange must cost O(1) in rows: the figures for 1k, 1M and 10M rows should be
about equal.  Each line times one crossing of an int64 + string batch (export to capsules
and import on the other side), for quiver and for pyarrow's own export/import in the same
run.  Each figure is the best (minimum) of several repeats of a batch of crossings.

Run: ``python benchmarks/bench_interop.py [--repeat 5] [--loops 200] [--quick]``
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import pyarrow as pa

import quiver as qv
from quiver.array import Array, make_array
from quiver.interop import export_array, import_array, import_batch


def best_us(fn: Callable[[], object], repeat: int, loops: int) -> float:
    """Minimum over ``repeat`` runs of the mean microseconds per call of ``fn``."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(loops):
            fn()
        times.append((time.perf_counter() - t0) / loops)
    return min(times) * 1e6


def make_pyarrow(rows: int) -> pa.RecordBatch:
    ints = pa.array(np.arange(rows, dtype=np.int64))
    offsets = pa.py_buffer(np.arange(rows + 1, dtype=np.int32))
    data = pa.py_buffer(np.full(rows, ord("x"), dtype=np.uint8))
    strings = pa.Array.from_buffers(pa.string(), rows, [None, offsets, data])
    return pa.record_batch([ints, strings], names=["i", "s"])


def make_quiver(rows: int) -> Array:
    ints = make_array(qv.int64(), rows, [None, np.arange(rows, dtype="<i8").view(np.uint8)])
    offsets = np.arange(rows + 1, dtype="<i4").view(np.uint8)
    data = np.full(rows, ord("x"), dtype=np.uint8)
    strings = make_array(qv.string(), rows, [None, offsets, data])
    st = qv.struct([qv.field("i", qv.int64()), qv.field("s", qv.string())])
    return make_array(st, rows, [None], [ints, strings], null_count=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--loops", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="fewer loops, sizes up to 1M")
    args = parser.parse_args()
    loops = 50 if args.quick else args.loops
    sizes = [1_000, 1_000_000] if args.quick else [1_000, 1_000_000, 10_000_000]

    print(f"{'rows':>10} {'quiver->pa':>11} {'pa->quiver':>11} {'pa->pa':>9} "
          f"{'quiver export':>14} {'quiver import':>14} {'__arrow_c_array__':>18}"
          "   (us per crossing)")
    for rows in sizes:
        p = make_pyarrow(rows)
        q = make_quiver(rows)

        def quiver_to_pa(q=q) -> object:
            return pa.Array._import_from_c_capsule(*export_array(q))

        def pa_to_quiver(p=p) -> object:
            return import_batch(p)

        def pa_to_pa(p=p) -> object:
            return pa.RecordBatch._import_from_c_capsule(*p.__arrow_c_array__())

        def quiver_export(q=q) -> object:
            return export_array(q)

        def quiver_import(p=p) -> object:
            return import_array(p)

        def quiver_method(q=q) -> object:  # the protocol method: through quiver.hooks
            return q.__arrow_c_array__()

        row = [
            best_us(fn, args.repeat, loops)
            for fn in (quiver_to_pa, pa_to_quiver, pa_to_pa, quiver_export, quiver_import,
                       quiver_method)
        ]
        print(f"{rows:>10} {row[0]:>11.1f} {row[1]:>11.1f} {row[2]:>9.1f} "
              f"{row[3]:>14.1f} {row[4]:>14.1f} {row[5]:>18.1f}")


if __name__ == "__main__":
    main()
