"""Spark Structured Streaming: rows per second through quiver's stream source and sink.

One ``readStream -> writeStream`` query with ``Trigger.AvailableNow`` over a directory of
Arrow IPC files (N rows in total of int64, float64, string; ``--files`` files), on
``local[2]``, side by side in one run with:

- the floors any Python streaming source and sink pay: a Python source that reads nothing
  (one batch made in memory, yielded until the same rows) into a Python sink that only
  iterates over its batches: Spark's cost of moving Arrow batches through Python workers;
- quiver's source into the do-nothing sink, and the read-nothing source into quiver's
  sink: where quiver's time beyond the floors goes;
- Spark's own Parquet file stream source and sink over the same rows, for the record.

Each case runs ``--repeat`` times, the sides alternating (a fresh checkpoint and output
each time); medians and the ratio quiver / floor are printed.  Target: <= 1.2x.

Spark plans each streaming query in a fresh Python interpreter that unpickles the data
source, so what quiver imports there is paid once per query on the driver: the run also
times that planner process alone (start, unpickle, plan the whole directory), quiver's
source beside the floor's.
Run: ``python benchmarks/bench_spark_streaming.py [--rows N] [--files F] [--repeat K]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time


def _floor_source_and_sink(rows: int, batch_rows: int):
    from pyspark.sql.datasource import (
        DataSource,
        DataSourceStreamArrowWriter,
        DataSourceStreamReader,
        InputPartition,
        WriterCommitMessage,
    )

    class NothingReader(DataSourceStreamReader):
        def initialOffset(self):
            return {"batch": 0}

        def latestOffset(self, start=None, limit=None):
            return {"batch": 1}

        def partitions(self, start, end):
            if start == end:
                return []
            per = rows // 2
            return [InputPartition(per), InputPartition(rows - per)]

        def read(self, partition):
            import numpy as np
            import pyarrow as pa

            n = batch_rows
            ids = pa.array(np.arange(n, dtype=np.int64))
            xs = pa.array(np.arange(n, dtype=np.float64))
            names = pa.array([f"name-{i % 1000}" for i in range(n)])
            batch = pa.record_batch([ids, xs, names], names=["id", "x", "name"])
            left = partition.value
            while left > 0:
                yield batch.slice(0, min(n, left))
                left -= n

    class NothingWriter(DataSourceStreamArrowWriter):
        def write(self, iterator):
            for _ in iterator:
                pass
            return WriterCommitMessage()

        def commit(self, messages, batchId):
            pass

        def abort(self, messages, batchId):
            pass

    class Floor(DataSource):
        @classmethod
        def name(cls):
            return "floor"

        def schema(self):
            return "id long, x double, name string"

        def streamReader(self, schema):
            return NothingReader()

        def streamWriter(self, schema, overwrite):
            return NothingWriter()

    return Floor


def _make_input(spark, directory: str, rows: int, files: int) -> None:
    import numpy as np

    import quiver as qv
    import quiver.ipc as ipc

    os.makedirs(os.path.join(directory, "arrow"))
    per = rows // files
    for i in range(files):
        n = per if i < files - 1 else rows - per * (files - 1)
        ids = np.arange(i * per, i * per + n, dtype=np.int64)
        batch = qv.record_batch({
            "id": qv.array(ids), "x": qv.array(ids.astype(np.float64)),
            "name": qv.array(np.char.add("name-", (ids % 1000).astype(str)).astype(object)),
        })
        with ipc.new_file(os.path.join(directory, "arrow", f"part-{i:04d}.arrow"),
                          batch.schema) as w:
            for start in range(0, n, 65_536):
                w.write_batch(batch.slice(start, 65_536))
    spark.read.format("arrow").load(os.path.join(directory, "arrow")) \
        .write.parquet(os.path.join(directory, "parquet"))


def _run(spark, reader_format: str, source: str | None, writer_format: str,
         out_root: str) -> float:
    ck = tempfile.mkdtemp(dir=out_root)
    out = tempfile.mkdtemp(dir=out_root)
    reader = spark.readStream.format(reader_format)
    if reader_format != "floor":
        reader = reader.schema("id long, x double, name string")
    df = reader.load(source) if source else reader.load()
    writer = df.writeStream.format(writer_format).option("checkpointLocation", ck)
    t0 = time.perf_counter()
    q = writer.trigger(availableNow=True).start(out)
    q.awaitTermination()
    elapsed = time.perf_counter() - t0
    if q.exception() is not None:
        raise RuntimeError(str(q.exception()))
    shutil.rmtree(ck, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    return elapsed


_PLANNER = r"""
import pickle, sys, time
t0 = time.perf_counter()
import pyspark.sql.streaming.python_streaming_source_runner  # what Spark's planner loads
from pyspark.sql.types import StructType, StructField, LongType, DoubleType, StringType
ds = pickle.loads(open(sys.argv[1], "rb").read())
schema = StructType([StructField("id", LongType()), StructField("x", DoubleType()),
                     StructField("name", StringType())])
r = ds.streamReader(schema)
start = r.initialOffset()
pickle.dumps(r.partitions(start, r.latestOffset(start, None)))
print(time.perf_counter() - t0)
"""


def _planner_seconds(source: object, root: str, repeat: int) -> float:
    """The median time of a fresh interpreter unpickling ``source`` and planning one
    micro-batch over everything there is (what Spark's streaming planner process does)."""
    import subprocess

    from pyspark import cloudpickle

    pickled = os.path.join(root, "source.pkl")
    with open(pickled, "wb") as f:
        f.write(cloudpickle.dumps(source))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    times = []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", _PLANNER, pickled], env=env,
                             capture_output=True, text=True, check=True)
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--files", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from quiver.spark import session

    spark = session("local[2]", "bench-streaming", **{
        "spark.sql.shuffle.partitions": "2", "spark.ui.showConsoleProgress": "false"})
    spark.dataSource.register(_floor_source_and_sink(args.rows, 10_000))
    root = tempfile.mkdtemp(prefix="quiver-bench-stream-")
    try:
        _make_input(spark, root, args.rows, args.files)
        cases = {
            "quiver -> quiver": ("arrow", os.path.join(root, "arrow"), "arrow"),
            "floor (Python source reading nothing -> Python sink doing nothing)":
                ("floor", None, "floor"),
            "quiver source -> the do-nothing sink": ("arrow", os.path.join(root, "arrow"),
                                                      "floor"),
            "the read-nothing source -> quiver sink": ("floor", None, "arrow"),
            "Parquet -> Parquet (Spark's file stream)":
                ("parquet", os.path.join(root, "parquet"), "parquet"),
        }
        times: dict[str, list[float]] = {name: [] for name in cases}
        for case in cases.values():  # warm-up, untimed
            _run(spark, *case, root)
        for _ in range(args.repeat):
            for name, case in cases.items():
                times[name].append(_run(spark, *case, root))
        print(f"{args.rows:,} rows in {args.files} files, local[2], "
              f"median of {args.repeat} (sides alternating)")
        medians = {name: statistics.median(ts) for name, ts in times.items()}
        for name, m in medians.items():
            print(f"  {name:<70} {m:7.2f} s  {args.rows / m / 1e6:6.2f} M rows/s")
        floor = medians["floor (Python source reading nothing -> Python sink doing nothing)"]
        print(f"  quiver / floor: {medians['quiver -> quiver'] / floor:.2f}x (target <= 1.2x)")
        from quiver.spark.source import ArrowDataSource

        floor_source = _floor_source_and_sink(args.rows, 10_000)({})
        ours = _planner_seconds(ArrowDataSource({"path": os.path.join(root, "arrow")}),
                                root, 2 * args.repeat + 1)
        theirs = _planner_seconds(floor_source, root, 2 * args.repeat + 1)
        print(f"  planner process (start, unpickle the source, plan): quiver {ours:.2f} s, "
              f"floor {theirs:.2f} s, paid once per query")
        parquet = medians["Parquet -> Parquet (Spark's file stream)"]
        print(f"  quiver / Parquet: {medians['quiver -> quiver'] / parquet:.2f}x (for the record)")
    finally:
        shutil.rmtree(root, ignore_errors=True)
        spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
