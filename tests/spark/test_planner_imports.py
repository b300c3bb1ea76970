"""What a Spark planner process imports.

Spark runs a streaming query's planning (``initialOffset``, ``latestOffset``,
``partitions``) in a fresh Python interpreter that unpickles the data source: every module
quiver imports there is paid once per query, on the driver, before any row moves
(``benchmarks/bench_spark_streaming.py``).  Planning reads footers and stream headers
only, so it must not load the executors' read path (arrays, conversions to Spark's
types), the writers, or the footer statistics decoder when no ``filters`` option asks
for skipping.  No Spark session is started: the planner's calls are made directly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed (pip install -e '.[spark]')")

import quiver as qv
import quiver.ipc as ipc

# loaded only by executors (reading or writing rows) or by filtered planning
NOT_FOR_PLANNING = (
    "quiver.spark.sink", "quiver.spark.objstore_sink", "quiver.ipc.writer",
    "quiver.ipc.append", "quiver.spark.convert", "quiver.array.cast",
    "quiver.batch", "quiver.pandas_out", "quiver.cdata.stream",
)
STATISTICS = "quiver.ipc.statistics.decode"

_PLANNER = r"""
import json, pickle, sys
from pyspark.sql.types import StructType, StructField, LongType, StringType
ds = pickle.loads(open(sys.argv[1], "rb").read())
schema = StructType([StructField("id", LongType()), StructField("name", StringType())])
if sys.argv[2] == "stream":
    r = ds.streamReader(schema)
    start = r.initialOffset()
    end = r.latestOffset(start, r.getDefaultReadLimit())
    parts = r.partitions(start, end)
else:
    parts = ds.reader(schema).partitions()
pickle.dumps(parts)
print(json.dumps([len(parts), sorted(m for m in sys.modules if m.startswith("quiver"))]))
"""


def _planner_modules(tmp_path: Path, mode: str, options: dict[str, str]) -> tuple[int, set]:
    from pyspark import cloudpickle

    from quiver.spark.source import ArrowDataSource

    pickled = tmp_path / f"source-{mode}.pkl"
    pickled.write_bytes(cloudpickle.dumps(ArrowDataSource(options)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", _PLANNER, str(pickled), mode],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    count, modules = json.loads(out.stdout.strip().splitlines()[-1])
    return count, set(modules)


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("planner")
    ids = np.arange(1000, dtype=np.int64)
    batch = qv.record_batch({"id": qv.array(ids),
                             "name": qv.array([f"n{i}" for i in range(1000)])})
    for i in range(3):
        with ipc.new_file(str(root / f"part-{i}.arrow"), batch.schema, statistics=True) as w:
            w.write_batch(batch)
            w.write_batch(batch)
    with ipc.new_stream(str(root / "part-s.arrows"), batch.schema) as w:
        w.write_batch(batch)
    return root


@pytest.mark.parametrize("mode", ["stream", "batch"])
def test_planning_loads_no_read_or_write_path(data: Path, tmp_path: Path, mode: str) -> None:
    count, modules = _planner_modules(tmp_path, mode, {"path": str(data)})
    assert count >= 1
    loaded = sorted(m for m in modules
                    if any(m == x or m.startswith(x + ".") for x in NOT_FOR_PLANNING))
    assert loaded == [], f"the planner process loaded {loaded}"
    assert STATISTICS not in modules


def test_filtered_planning_reads_statistics(data: Path, tmp_path: Path) -> None:
    _, modules = _planner_modules(
        tmp_path, "stream", {"path": str(data), "filters": json.dumps([["id", "<", 5]])})
    assert STATISTICS in modules
    assert "quiver.spark.sink" not in modules
