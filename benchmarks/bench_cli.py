"""Start-up of the command line: ``quiver schema FILE`` against ``python -c "import pyarrow"``.

Issue 13 asks that ``quiver schema FILE`` cost no more than importing pyarrow on the same
machine.  Each row is the median over ``--repeat`` fresh processes of the CPU time (user +
system) they used, which stays steady on a machine shared with other jobs, and of their wall
time.  The ratio row is ``quiver schema`` over ``import pyarrow`` (target: at most 1.0).

For reference it also times ``import quiver`` alone (a lazy package import: the command
loads only what it uses).

Run: ``.venv/bin/python benchmarks/bench_cli.py [--repeat R] [--file F]``
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
GOLD = (ROOT.parent / "shared" / "gold" / "arrow-testing" / "arrow-ipc-stream" / "integration"
        / "cpp-21.0.0" / "generated_nested.arrow_file")

def run_once(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {done.stderr.decode()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def median_run(cmd: list[str], env: dict[str, str], repeat: int) -> tuple[float, float]:
    """Median CPU and wall seconds over ``repeat`` runs (after one warm-up run)."""
    run_once(cmd, env)
    runs = [run_once(cmd, env) for _ in range(repeat)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--file", type=Path, default=None)
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=str(SRC))
    with tempfile.TemporaryDirectory() as tmp:
        path = args.file
        if path is None:
            path = GOLD
            if not path.exists():  # no shared gold files: a small file of our own
                sys.path.insert(0, str(SRC))
                import quiver as qv
                import quiver.ipc as ipc

                path = Path(tmp) / "sample.arrow"
                batch = qv.record_batch({"a": qv.array([1, 2]), "b": qv.array(["x", "y"])})
                with ipc.new_file(str(path), batch.schema) as w:
                    w.write_batch(batch)
        script = Path(sys.executable).parent / "quiver"
        quiver = [str(script)] if script.exists() else [sys.executable, "-m", "quiver"]
        rows = [
            ("python -c 'import pyarrow'", [sys.executable, "-c", "import pyarrow"], env),
            ("python -c 'import quiver'", [sys.executable, "-c", "import quiver"], env),
            ("quiver schema FILE", [*quiver, "schema", str(path)], env),
        ]
        print(f"start-up, median of {args.repeat} runs ({' '.join(quiver)}; {path.name})")
        print(f"{'command':<44} {'cpu ms':>8} {'wall ms':>8}")
        results = {}
        for name, cmd, e in rows:
            cpu, wall = median_run(cmd, e, args.repeat)
            results[name] = (cpu, wall)
            print(f"{name:<44} {cpu * 1e3:>8.1f} {wall * 1e3:>8.1f}")
    base_cpu, base_wall = results["python -c 'import pyarrow'"]
    cpu, wall = results["quiver schema FILE"]
    print(f"ratio quiver schema FILE / import pyarrow: cpu {cpu / base_cpu:.2f}x, "
          f"wall {wall / base_wall:.2f}x  (target <= 1.0)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
