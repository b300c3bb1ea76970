"""Timing helpers shared by the benchmark scripts (run as ``python benchmarks/<script>``,
which puts this folder first on the import path)."""

from __future__ import annotations

import time
from collections.abc import Callable


def best(fn: Callable[[], object], repeat: int) -> float:
    """Minimum wall time of ``repeat`` calls."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def paired(
    ours: Callable[[], object],
    theirs: Callable[[], object],
    repeat: int,
    prepare: Callable[[int], object] | None = None,
) -> tuple[float, float]:
    """Minimum times of two functions measured alternately, so that both see the same
    machine (page cache, other load) as far as possible.  ``prepare(side)`` runs untimed
    before every timed call (side 0 before ``ours``, 1 before ``theirs``)."""
    qs, ps = [], []
    for _ in range(repeat):
        for side, fn, acc in ((0, ours, qs), (1, theirs, ps)):
            if prepare is not None:
                prepare(side)
            t0 = time.perf_counter()
            fn()
            acc.append(time.perf_counter() - t0)
    return min(qs), min(ps)


def paired_median(
    ours: Callable[[], object],
    theirs: Callable[[], object],
    repeat: int,
) -> tuple[float, float]:
    """Median times of two functions measured alternately (as :func:`paired`); the
    median is what issue 14's figures quote."""
    qs, ps = [], []
    for _ in range(repeat):
        for fn, acc in ((ours, qs), (theirs, ps)):
            t0 = time.perf_counter()
            fn()
            acc.append(time.perf_counter() - t0)
    return sorted(qs)[len(qs) // 2], sorted(ps)[len(ps) // 2]
