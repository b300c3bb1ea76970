"""A quick run of the fuzz invariant in the suite, and the known crashers of Arrow C++."""

from __future__ import annotations

import random
import time
import tracemalloc
from pathlib import Path

import pytest

from tests.conftest import ARROW_TESTING, require_shared
from tests.fuzz.harness import (
    check,
    check_path,
    check_statistics,
    mutations,
    statistics_value,
)
from tests.fuzz.seeds import seed_files, statistics_seeds

MUTANTS_PER_SEED = 40


def _regression_inputs() -> list[Path]:
    found: list[Path] = []
    for sub in ("arrow-ipc-stream", "arrow-ipc-file", "arrow-ipc-tensor-stream"):
        folder = ARROW_TESTING / sub
        if folder.exists():
            found += sorted(
                p for p in folder.iterdir() if p.is_file() and p.suffix not in (".md",)
            )
    compat = ARROW_TESTING / "forward-compatibility" / "schema_v6.arrow"
    if compat.exists():
        found.append(compat)
    return found


REGRESSIONS = _regression_inputs()


@pytest.mark.parametrize("path", REGRESSIONS, ids=[p.name for p in REGRESSIONS])
def test_known_crasher_reads_or_raises_arrow_error_quickly_and_small(path: Path) -> None:
    data = path.read_bytes()
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        check(data)
    finally:
        elapsed = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert elapsed < 2.0, f"took {elapsed:.2f} s"
    assert peak < 256 * 1024 * 1024, f"peak {peak / 2**20:.0f} MiB"


def test_forward_compatibility_file_names_the_version() -> None:
    import quiver as qv
    import quiver.ipc as ipc

    path = require_shared(ARROW_TESTING / "forward-compatibility" / "schema_v6.arrow")
    opener = ipc.open_file if path.read_bytes()[:6] == b"ARROW1" else ipc.open_stream
    with pytest.raises(qv.ArrowError, match=r"V6|version"):
        list(opener(path))


SEEDS = seed_files()


@pytest.mark.parametrize("path", SEEDS, ids=[f"{p.parent.name}/{p.name}" for p in SEEDS])
def test_mutated_gold_file_decodes_or_raises_arrow_error(path: Path) -> None:
    rng = random.Random(path.name)
    base = path.read_bytes()
    for data in mutations(base, rng, MUTANTS_PER_SEED):
        check(data, chunk=rng.randrange(1, 64))


COMPRESSED_FILES = [p for p in SEEDS if p.suffix == ".arrow_file" and "compress" in p.name]


@pytest.mark.parametrize("pooled", [False, True])
@pytest.mark.parametrize("path", COMPRESSED_FILES, ids=[p.name for p in COMPRESSED_FILES])
def test_mutated_compressed_files_read_from_a_path_as_from_memory(
    path: Path, pooled: bool, tmp_path: Path
) -> None:
    rng = random.Random(path.name)
    base = path.read_bytes()
    assert check_path(base, tmp_path / "f.arrow", pooled=pooled).ok
    for data in mutations(base, rng, MUTANTS_PER_SEED):
        check_path(data, tmp_path / "f.arrow", pooled=pooled)


FOUND = sorted((Path(__file__).parent / "regressions").glob("*"))


@pytest.mark.parametrize("path", FOUND, ids=[p.name for p in FOUND])
def test_input_the_long_fuzz_run_once_broke_now_holds(path: Path) -> None:
    check(path.read_bytes())


def test_mutated_footer_statistics_decode_or_raise_arrow_error() -> None:
    rng = random.Random(15)
    kinds = set()
    for k, base in enumerate(statistics_seeds()):
        assert check_statistics(statistics_value(base, random.Random(k))).ok
        for data in mutations(base, rng, 150):
            kinds.add(check_statistics(statistics_value(data, rng)).kind)
    assert "ok" in kinds and len(kinds) > 1  # both outcomes were reached


STATISTICS_FOUND = sorted((Path(__file__).parent / "regressions-statistics").glob("*"))


@pytest.mark.parametrize("path", STATISTICS_FOUND, ids=[p.name for p in STATISTICS_FOUND])
def test_statistics_value_the_long_fuzz_run_once_broke_now_holds(path: Path) -> None:
    assert not check_statistics(path.read_bytes()).ok  # each was damaged: an ArrowError
