"""Spark: quiver's Arrow source and sink against native Parquet and a pyarrow-based source.

The case of the Spark issue: N rows (10 million by default) of (int64, float64, string,
bool, timestamp) on ``local[2]``.

- read: an aggregation (group by the bool, sum, avg, max, count) over quiver's source,
  over Spark's native Parquet reader, and over a reference Python source that reads the
  same Arrow files with ``pyarrow.ipc`` (one partition per file, pyarrow batches out);
- write: ``df.write.format("arrow")`` against ``df.write.parquet`` of the same DataFrame
  (cached, so that both time the write, not the generation);
- the floors of any Python source or sink, in the same run: a source that reads nothing
  (one batch made in memory, yielded until the same rows) and a sink that only iterates
  over its batches: what Spark spends moving Arrow batches to and from Python workers.

Two more cases (issue 24), each against a baseline measured in the same run:

- selective: an aggregation over 0.1% of ``--selective-rows`` rows (30 million by
  default; sorted ids, footer statistics, 8 files) read with the ``filters`` option,
  against the same aggregation over all rows (target <= 0.25x);
- one batch: an aggregation over a file of one record batch of about ``--one-batch-mb``
  (640 by default), against the same rows in 8 batches, on ``local[2]`` (target <= 1.2x):
  a batch larger than a split is read by several tasks as row ranges.

Each case runs ``--repeat`` times, the sides alternating; medians and ratios are printed.
Run: ``python benchmarks/bench_spark.py [--rows N] [--repeat K] [--max-records-per-batch N]
[--cases main,selective,one-batch] [--selective-rows N] [--one-batch-mb M]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time


def _reference_source():
    """A Python data source over Arrow IPC files built on pyarrow.ipc (the baseline)."""
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    class PyarrowIpcReader(DataSourceReader):
        def __init__(self, path, schema):
            from pyspark.sql.pandas.types import to_arrow_schema

            self.arrow_schema = to_arrow_schema(schema, timezone="UTC")
            self.files = sorted(
                os.path.join(path, f) for f in os.listdir(path)
                if not f.startswith(("_", "."))
            )

        def partitions(self):
            return [InputPartition(f) for f in self.files]

        def read(self, partition):
            import pyarrow as pa

            # Spark wants the declared schema exactly: the same columns, all nullable
            schema = pa.schema([(f.name, f.type) for f in self.arrow_schema])
            with pa.memory_map(partition.value) as source:
                reader = pa.ipc.open_file(source)
                for i in range(reader.num_record_batches):
                    batch = reader.get_batch(i)
                    yield pa.RecordBatch.from_arrays(batch.columns, schema=schema)

    class PyarrowIpcSource(DataSource):
        @classmethod
        def name(cls):
            return "pyarrowipc"

        def schema(self):
            return "id bigint, x double, s string, flag boolean, ts timestamp"

        def reader(self, schema):
            return PyarrowIpcReader(self.options["path"], schema)

    return PyarrowIpcSource


def _memory_source(rows: int, parts: int):
    """A Python source that reads nothing: each task yields one batch, made once in memory
    with the declared schema, until its share of ``rows``.  The floor of any Python source
    (what Spark spends taking Arrow batches from Python workers), as the null sink is for
    writes."""
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    class MemoryReader(DataSourceReader):
        def __init__(self, schema):
            from pyspark.sql.pandas.types import to_arrow_schema

            self.arrow_schema = to_arrow_schema(schema, timezone="UTC")

        def partitions(self):
            return [InputPartition(rows // parts) for _ in range(parts)]

        def read(self, partition):
            import numpy as np
            import pyarrow as pa

            n = 131_072
            ids = np.arange(n)
            batch = pa.RecordBatch.from_arrays([
                pa.array(ids), pa.array(ids * 0.5),
                pa.array([f"name-{i}" for i in range(1000)]).take(pa.array(ids % 1000)),
                pa.array(ids % 2 == 0),
                pa.array((1_700_000_000 + ids) * 1_000_000, pa.timestamp("us", tz="UTC")),
            ], schema=pa.schema([(f.name, f.type) for f in self.arrow_schema]))
            left = partition.value
            while left > 0:
                yield batch if left >= n else batch.slice(0, left)
                left -= n

    class MemorySource(DataSource):
        @classmethod
        def name(cls):
            return "memorysource"

        def schema(self):
            return "id bigint, x double, s string, flag boolean, ts timestamp"

        def reader(self, schema):
            return MemoryReader(schema)

    return MemorySource


def _null_sink():
    """A Python sink that only iterates over its batches: the floor of any Python sink
    (what Spark spends handing Arrow batches to Python workers)."""
    from pyspark.sql.datasource import DataSource, DataSourceArrowWriter, WriterCommitMessage

    class NullWriter(DataSourceArrowWriter):
        def write(self, iterator):
            for _ in iterator:
                pass
            return WriterCommitMessage()

    class NullSink(DataSource):
        @classmethod
        def name(cls):
            return "nullsink"

        def writer(self, schema, overwrite):
            return NullWriter()

    return NullSink


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _write_ids(path: str, rows: int, start: int, batches: int) -> None:
    """Sorted ids with a double and a small string column, in ``batches`` record batches,
    footer statistics on (written by quiver)."""
    import numpy as np
    import pyarrow as pa

    import quiver.ipc as ipc

    ids = np.arange(start, start + rows, dtype=np.int64)
    table = pa.table({"id": ids, "x": ids * 0.5,
                      "k": pa.array(ids % 100, pa.int32())})
    per = -(-rows // batches)
    with ipc.new_file(path, table.schema, statistics=True) as writer:
        for b in range(batches):
            part = table.slice(b * per, per)
            if part.num_rows:
                writer.write_batch(part.combine_chunks().to_batches()[0])


def _alternate(cases: dict, repeat: int) -> dict[str, float]:
    """Median seconds of each case, the cases alternating, after one untimed round."""
    times: dict[str, list[float]] = {name: [] for name in cases}
    for rep in range(repeat + 1):
        for name, fn in cases.items():
            seconds = _timed(fn)
            if rep:
                times[name].append(seconds)
    return {name: statistics.median(v) for name, v in times.items()}


def bench_selective(spark, rows: int, repeat: int, work: str) -> None:
    """0.1% of ``rows`` through the ``filters`` option against a full scan."""
    from pyspark.sql import functions as F

    root = os.path.join(work, "selective")
    os.makedirs(root)
    per_file = rows // 8
    for f in range(8):
        _write_ids(os.path.join(root, f"f{f}.arrow"), per_file, f * per_file,
                   max(1, per_file // 131_072))
    total = per_file * 8
    cut = total - total // 1000
    option = f'[["id", ">=", {cut}]]'

    def aggregate(df):
        return df.agg(F.count("id"), F.sum("x"), F.max("k")).collect()[0]

    def selective():
        return aggregate(spark.read.format("arrow").option("filters", option).load(root))

    def full():
        return aggregate(spark.read.format("arrow").load(root))

    assert selective()[0] == total - cut and full()[0] == total
    med = _alternate({"selective": selective, "full": full}, repeat)
    print(f"selective: {total:,} rows (int64, float64, int32), 8 files, statistics, "
          f"local[2], median of {repeat}")
    print(f"  0.1% through the filters option {med['selective']:6.2f} s, every row "
          f"{med['full']:6.2f} s: ratio {med['selective'] / med['full']:.3f} (target <= 0.25)")


def bench_one_batch(spark, megabytes: int, repeat: int, work: str) -> None:
    """A file of one record batch against the same rows in 8 batches."""
    from pyspark.sql import functions as F

    rows = megabytes * 1024 * 1024 // 20  # int64 + float64 + int32 per row
    one, eight = os.path.join(work, "one.arrow"), os.path.join(work, "eight.arrow")
    _write_ids(one, rows, 0, 1)
    _write_ids(eight, rows, 0, 8)

    def aggregate(path):
        df = spark.read.format("arrow").load(path)
        return df.groupBy("k").agg(F.sum("id"), F.avg("x")).collect()

    assert sorted(map(tuple, aggregate(one))) == sorted(map(tuple, aggregate(eight)))
    parts = [spark.read.format("arrow").load(p).rdd.getNumPartitions() for p in (one, eight)]
    med = _alternate({"one": lambda: aggregate(one), "eight": lambda: aggregate(eight)},
                     repeat)
    size = os.path.getsize(one) / 1e6
    print(f"one batch: {rows:,} rows, {size:.0f} MB in one record batch ({parts[0]} tasks) "
          f"or 8 ({parts[1]} tasks), local[2], median of {repeat}")
    print(f"  one batch {med['one']:6.2f} s, 8 batches {med['eight']:6.2f} s: ratio "
          f"{med['one'] / med['eight']:.3f} (target <= 1.2)")


def main(argv: list[str] | None = None) -> int:
    """Run the Spark benchmark; print medians and ratios."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--files", type=int, default=8, help="files written per format")
    ap.add_argument("--max-records-per-batch", type=int, default=None,
                    help="spark.sql.execution.arrow.maxRecordsPerBatch (Spark's default: "
                         "10,000): the size of the Arrow batches Spark hands a Python sink")
    ap.add_argument("--cases", default="main,selective,one-batch",
                    help="comma-separated: main, selective, one-batch")
    ap.add_argument("--selective-rows", type=int, default=30_000_000)
    ap.add_argument("--one-batch-mb", type=int, default=640)
    args = ap.parse_args(argv)
    cases = {c.strip() for c in args.cases.split(",")}
    from quiver.spark import session

    if cases & {"selective", "one-batch"}:
        spark = session("local[2]", "quiver-bench", **{"spark.ui.showConsoleProgress": "false"})
        work = tempfile.mkdtemp(prefix="quiver-bench-spark-")
        try:
            if "selective" in cases:
                bench_selective(spark, args.selective_rows, args.repeat, work)
            if "one-batch" in cases:
                bench_one_batch(spark, args.one_batch_mb, args.repeat, work)
        finally:
            spark.stop()
            shutil.rmtree(work, ignore_errors=True)
    if "main" not in cases:
        return 0
    return _main_case(args)


def _main_case(args: argparse.Namespace) -> int:
    from pyspark.sql import functions as F

    from quiver.spark import session

    conf = {"spark.ui.showConsoleProgress": "false"}
    if args.max_records_per_batch:
        conf["spark.sql.execution.arrow.maxRecordsPerBatch"] = str(args.max_records_per_batch)
    spark = session("local[2]", "quiver-bench", **conf)
    spark.dataSource.register(_reference_source())
    spark.dataSource.register(_null_sink())
    spark.dataSource.register(_memory_source(args.rows, args.files))
    work = tempfile.mkdtemp(prefix="quiver-bench-spark-")
    try:
        df = spark.range(0, args.rows, numPartitions=args.files).selectExpr(
            "id", "cast(id * 0.5 as double) as x",
            "concat('name-', cast(id % 1000 as string)) as s",
            "id % 2 = 0 as flag", "timestamp_seconds(1700000000 + id) as ts",
        ).cache()
        df.count()
        arrow_dir, parquet_dir = os.path.join(work, "arrow"), os.path.join(work, "parquet")
        writes: dict[str, list[float]] = {"arrow": [], "arrow, no statistics": [],
                                          "null sink": [], "parquet": []}
        bare_dir = os.path.join(work, "arrow-bare")
        for rep in range(args.repeat + 1):  # the first round warms both sides up, untimed
            for side in writes:
                target = {"arrow": arrow_dir, "parquet": parquet_dir}.get(side, bare_dir)
                shutil.rmtree(target, ignore_errors=True)
                writer = df.write.mode("overwrite")
                if side == "parquet":
                    def run(w=writer, p=target):
                        w.parquet(p)
                elif side == "null sink":
                    def run(w=writer):
                        w.format("nullsink").mode("append").save()
                else:
                    stats_on = "true" if side == "arrow" else "false"

                    def run(w=writer, p=target, on=stats_on):
                        w.format("arrow").option("statistics", on).save(p)
                seconds = _timed(run)
                if rep:
                    writes[side].append(seconds)

        def aggregate(frame):
            return (frame.groupBy("flag").agg(F.sum("id"), F.avg("x"), F.max("ts"),
                                              F.count("s")).collect())

        readers = {
            "quiver source": lambda: spark.read.format("arrow").load(arrow_dir),
            "pyarrow.ipc source": lambda: spark.read.format("pyarrowipc").load(arrow_dir),
            "parquet": lambda: spark.read.parquet(parquet_dir),
        }
        results = {name: aggregate(make()) for name, make in readers.items()}
        first = sorted(map(tuple, results["parquet"]))
        for name, got in results.items():
            assert sorted(map(tuple, got)) == first, f"{name} disagrees with parquet"
        # the floor: other values (not compared), the same rows, columns and types
        readers["a Python source reading nothing"] = (
            lambda: spark.read.format("memorysource").load())
        reads: dict[str, list[float]] = {name: [] for name in readers}
        for _ in range(args.repeat):
            for name, make in readers.items():
                reads[name].append(_timed(lambda m=make: aggregate(m())))
        sizes = {
            side: sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(d)
                      for f in fs if not f.startswith(("_", ".")))
            for side, d in (("arrow", arrow_dir), ("parquet", parquet_dir))
        }
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)

    med = {k: statistics.median(v) for k, v in {**reads, **{f"write {k}": v
                                                            for k, v in writes.items()}}.items()}
    print(f"{args.rows:,} rows x (int64, float64, string, bool, timestamp), local[2], "
          f"{args.files} files, median of {args.repeat}, maxRecordsPerBatch "
          f"{args.max_records_per_batch or 'default (10,000)'}")
    print(f"  aggregation, quiver source        {med['quiver source']:6.2f} s")
    print(f"  aggregation, pyarrow.ipc source   {med['pyarrow.ipc source']:6.2f} s")
    print(f"  aggregation, native Parquet       {med['parquet']:6.2f} s")
    print(f"  aggregation, a Python source reading nothing "
          f"{med['a Python source reading nothing']:5.2f} s")
    print(f"  write, quiver sink                {med['write arrow']:6.2f} s "
          f"({sizes['arrow'] / 1e6:.0f} MB)")
    print(f"  write, quiver sink, no statistics {med['write arrow, no statistics']:6.2f} s")
    print(f"  write, a Python sink doing nothing {med['write null sink']:5.2f} s")
    print(f"  write, Parquet                    {med['write parquet']:6.2f} s "
          f"({sizes['parquet'] / 1e6:.0f} MB)")
    print("ratios (target):")
    print(f"  source / pyarrow.ipc source  {med['quiver source'] / med['pyarrow.ipc source']:.2f}"
          "  (<= 1.0)")
    print(f"  source / Parquet             {med['quiver source'] / med['parquet']:.2f}  (<= 1.3)")
    print(f"  source / the read-nothing source  "
          f"{med['quiver source'] / med['a Python source reading nothing']:.2f}"
          "  (what quiver itself adds)")
    print(f"  read-nothing source / Parquet     "
          f"{med['a Python source reading nothing'] / med['parquet']:.2f}"
          "  (Spark's floor for any Python source)")
    print(f"  sink / Parquet write         {med['write arrow'] / med['write parquet']:.2f}"
          "  (<= 1.3)")
    print(f"  do-nothing sink / Parquet write  "
          f"{med['write null sink'] / med['write parquet']:.2f}"
          "  (Spark's floor for any Python sink)")
    print(f"  sink / the do-nothing sink   {med['write arrow'] / med['write null sink']:.2f}"
          "  (what quiver itself adds)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
