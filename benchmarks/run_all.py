"""Run every benchmark in turn (``make bench``); each prints quiver/pyarrow ratios.

``--quick`` passes small sizes to the scripts that take them, for a smoke run.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = [
    ("bench_arrays.py", ["--rows", "100000"]),
    ("bench_validate.py", ["--rows", "100000"]),
    ("bench_ipc.py", ["--quick"]),
    ("bench_compression.py", ["--quick"]),
    ("bench_interop.py", ["--quick"]),
    ("bench_api.py", ["--quick"]),
    ("bench_pandas.py", ["--quick"]),
    ("bench_cli.py", ["--repeat", "5"]),
    ("bench_statistics.py", ["--rows", "500000", "--repeat", "3"]),
    ("bench_spark.py", ["--rows", "500000", "--repeat", "1"]),
    ("bench_s3.py", ["--rows", "1000000", "--repeat", "3"]),
]


def main() -> int:
    quick = "--quick" in sys.argv[1:]
    failed = 0
    for script, quick_args in SCRIPTS:
        print(f"\n=== {script}", flush=True)
        args = quick_args if quick else []
        failed += subprocess.call([sys.executable, str(HERE / script), *args]) != 0
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
