"""The long fuzz run: ``python -m tests.fuzz --minutes 30 [--seed N]``.

Mutates every seed file in turn until the time is up and prints the count of inputs tried
and how they ended; exits 1 on the first input that breaks the invariant (saved under
``fuzz-failures/``).
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
import tempfile
import time
from pathlib import Path

from tests.fuzz.harness import (
    InvariantBroken,
    check,
    check_path,
    check_statistics,
    mutations,
    statistics_value,
)
from tests.fuzz.seeds import seed_files, statistics_seeds


def _broken(exc: InvariantBroken, data: bytes, name: str, tried: int) -> int:
    """Save the input that broke the invariant under ``fuzz-failures/``, say so; exit 1."""
    out = Path("fuzz-failures")
    out.mkdir(exist_ok=True)
    path = out / name
    path.write_bytes(data)
    print(f"INVARIANT BROKEN after {tried} inputs: {exc} (saved {path})")
    return 1


def main() -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.fuzz")
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    seeds = [p.read_bytes() for p in seed_files()]
    if not seeds:
        print("no seed files: ../shared/gold is missing", file=sys.stderr)
        return 2
    stats_seeds = statistics_seeds()
    rng = random.Random(args.seed)
    deadline = time.monotonic() + args.minutes * 60
    tally: collections.Counter[str] = collections.Counter()
    tried = 0
    with tempfile.TemporaryDirectory(prefix="quiver-fuzz-") as where:
        scratch = Path(where)  # file inputs are also read from a real file here
        while time.monotonic() < deadline:
            base = seeds[tried % len(seeds)]
            for data in mutations(base, rng, 20):
                tried += 1
                try:
                    stream, as_file = check(data, chunk=rng.randrange(1, 64))
                    if data[:6] == b"ARROW1" and rng.random() < 0.25:
                        tally["file read from a path too"] += 1
                        check_path(data, scratch / "input.arrow", pooled=rng.random() < 0.5)
                except InvariantBroken as exc:
                    return _broken(exc, data, f"case-{args.seed}-{tried}.bin", tried)
                tally[f"stream:{stream.kind}"] += 1
                tally[f"file:{as_file.kind}"] += 1
            # every round, mutants of a footer statistics stream too
            base = stats_seeds[tried % len(stats_seeds)]
            for data in mutations(base, rng, 5):
                tried += 1
                value = statistics_value(data, rng)
                try:
                    outcome = check_statistics(value)
                except InvariantBroken as exc:
                    return _broken(exc, value, f"statistics-{args.seed}-{tried}.txt", tried)
                tally[f"statistics:{outcome.kind}"] += 1
    print(f"{tried} inputs tried in {args.minutes} min, 0 broke the invariant")
    for key, n in sorted(tally.items()):
        print(f"  {key:<40} {n}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
