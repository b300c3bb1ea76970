"""Object storage: quiver's ranged reads of IPC files on S3 against pyarrow's, on moto's
S3 server (``ThreadedMotoServer`` on 127.0.0.1, offline, started here and stopped at the
end).

1. full read of a file of ``--rows`` rows x (int64, float64) in ``--batches`` batches
   (5M rows: 80 MB): ``quiver.ipc.read_table("s3://...")`` against
   ``pyarrow.ipc.open_file(pyarrow.fs.S3FileSystem(...).open_input_file(key)).read_all()``,
   sides alternating, medians; goal: at most 0.3x;
2. ``columns=`` 1 of 8 int64 columns: bytes fetched over the file size; goal: at most 20%;
3. ``filters=`` keeping 1% of the rows of a file with statistics (a sorted key):
   bytes fetched over the file size; goal: at most 5%;
4. with ``--spark``: an aggregation on ``local[2]`` through quiver's Spark source over the
   same files on S3 and on a local disk (``--spark-files`` files of ``--rows`` rows in all),
   sides alternating, medians; the ratio is reported (no goal: it shows what S3 costs).
5. with ``--sink``: ``df.write.format("arrow").save(...)`` of ``--sink-rows`` rows x
   (int64, float64) on ``local[2]`` to a local directory, to S3 with the multipart
   committer (tasks stream parts into uncompleted uploads) and to S3 with the staging
   committer (what gs://, abfs:// take: staged objects copied into place), sides
   alternating, medians, ratios to local;
6. with ``--sink``: one task's writer (``MultipartWriter.write``, in this process) of a
   ``--sink-rows``-row file: peak memory traced by ``tracemalloc`` (numpy and bytes
   buffers included) against the file size; the goal is a few 8 MiB parts, not the file.

Bytes and requests are counted by a wrapper around the fsspec filesystem (every
``cat_file`` and ``info`` call, with the bytes it returned), not by quiver's own counters.

Run: ``python benchmarks/bench_s3.py [--rows N] [--batches B] [--repeat K] [--spark]
[--sink [--sink-rows N] [--no-reads]]``
"""

from __future__ import annotations

import argparse
import logging
import socket
import threading
import time
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.ipc as pa_ipc
from timing import paired_median

import quiver as qv
import quiver.ipc as ipc
from quiver.fs.ranged import RangedObject
from quiver.ipc.remote import RemoteFileReader

BUCKET = "bench"
KEY, SECRET = "bench-key", "bench-secret"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class CountingFS:
    """An fsspec filesystem's ``cat_file`` and ``info``, counted (thread-safe)."""

    def __init__(self, fs: Any) -> None:
        self.fs = fs
        self.requests = 0
        self.bytes = 0
        self._lock = threading.Lock()

    def cat_file(self, path: str, start: int | None = None, end: int | None = None) -> bytes:
        data = self.fs.cat_file(path, start=start, end=end)
        with self._lock:
            self.requests += 1
            self.bytes += len(data)
        return data

    def info(self, path: str) -> dict:
        with self._lock:
            self.requests += 1
        return self.fs.info(path)


def _median(xs: list[float]) -> float:
    return sorted(xs)[len(xs) // 2]


def main(argv: list[str] | None = None) -> int:
    """Print the three measurements and their goals."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--batches", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--spark", action="store_true", help="also case 4 (Spark over S3)")
    ap.add_argument("--spark-files", type=int, default=8)
    ap.add_argument("--sink", action="store_true", help="also cases 5 and 6 (the sink)")
    ap.add_argument("--sink-rows", type=int, default=4_000_000)
    ap.add_argument("--no-reads", action="store_true", help="skip cases 1 to 3")
    args = ap.parse_args(argv)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)

    from moto.server import ThreadedMotoServer

    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        endpoint = f"http://127.0.0.1:{port}"
        options = {"key": KEY, "secret": SECRET, "endpoint_url": endpoint,
                   "client_kwargs": {"region_name": "us-east-1"}}
        import fsspec

        fs = fsspec.filesystem("s3", **options)
        fs.call_s3("create_bucket", Bucket=BUCKET)
        pa_fs = pafs.S3FileSystem(access_key=KEY, secret_key=SECRET, region="us-east-1",
                                  endpoint_override=f"127.0.0.1:{port}", scheme="http")
        if not args.no_reads:
            _read_cases(options, fs, pa_fs, args.rows, args.batches,
                        np.random.default_rng(0), args.repeat)
        if args.spark:
            _spark_case(options, fs, args.rows, args.spark_files, args.repeat)
        if args.sink:
            _task_memory(args.sink_rows)
            _spark_sink_case(options, args.sink_rows, args.repeat)
    finally:
        server.stop()
    return 0


def _read_cases(options: dict[str, Any], fs: Any, pa_fs: Any, rows: int, nb: int,
                rng: Any, repeat: int) -> None:
    """Cases 1 to 3: a full read, columns=, filters=."""

    # 1. full read
    table = pa.table({"i": rng.integers(0, 1 << 60, rows), "f": rng.random(rows)})
    sink = pa.BufferOutputStream()
    with pa_ipc.new_file(sink, table.schema) as w:
        w.write_table(table, max_chunksize=rows // nb)
    data = sink.getvalue().to_pybytes()
    fs.pipe_file(f"{BUCKET}/full.arrow", data)
    url = f"s3://{BUCKET}/full.arrow"

    def ours() -> Any:
        return ipc.read_table(url, storage_options=options)

    def theirs() -> Any:
        with pa_fs.open_input_file(f"{BUCKET}/full.arrow") as f:
            return pa_ipc.open_file(f).read_all()

    assert pa.table(ours()).equals(theirs())
    q, p = paired_median(ours, theirs, repeat)
    counting = CountingFS(fs)
    with RemoteFileReader(RangedObject(url, options, fs=counting,
                                       path=f"{BUCKET}/full.arrow")) as reader:
        reader.read_all()
    one_get = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fs.cat_file(f"{BUCKET}/full.arrow")
        one_get.append(time.perf_counter() - t0)
    print(f"1. full read, {len(data) / 1e6:.0f} MB, {nb} batches: quiver {q:.3f} s "
          f"({counting.requests} requests, {counting.bytes / 1e6:.1f} MB), pyarrow "
          f"S3FileSystem {p:.3f} s: ratio {q / p:.3f}x (goal <= 0.3x); one GET of the "
          f"whole object {_median(one_get):.3f} s")

    # 2. columns= 1 of 8
    rows8 = rows // 4
    table8 = pa.table({f"c{k}": rng.integers(0, 1 << 60, rows8) for k in range(8)})
    sink = pa.BufferOutputStream()
    with pa_ipc.new_file(sink, table8.schema) as w:
        w.write_table(table8, max_chunksize=rows8 // nb)
    data8 = sink.getvalue().to_pybytes()
    fs.pipe_file(f"{BUCKET}/wide.arrow", data8)
    counting = CountingFS(fs)
    t0 = time.perf_counter()
    with RemoteFileReader(RangedObject(f"s3://{BUCKET}/wide.arrow", options, fs=counting,
                                       path=f"{BUCKET}/wide.arrow"),
                          columns=["c3"]) as reader:
        got = reader.read_all()
    took = time.perf_counter() - t0
    assert pa.table(got).equals(table8.select(["c3"]))
    share = counting.bytes / len(data8)
    print(f"2. columns=['c3'] of 8, {len(data8) / 1e6:.0f} MB: {counting.bytes / 1e6:.2f} MB "
          f"in {counting.requests} requests = {share:.1%} of the file (goal <= 20%), "
          f"{took:.3f} s")

    # 3. filters= keeping 1%, with footer statistics
    key = np.arange(rows)
    qt = qv.table({"k": qv.array(key), "v": qv.array(rng.random(rows))})
    furl = f"s3://{BUCKET}/stats.arrow"
    with ipc.new_file(furl, qt.schema, storage_options=options,
                      statistics=True) as w:
        w.write_table(qt, max_chunksize=rows // 100)
    size = fs.size(furl)
    lo = rows // 3
    hi = lo + rows // 100
    counting = CountingFS(fs)
    t0 = time.perf_counter()
    with RemoteFileReader(RangedObject(furl, options, fs=counting,
                                       path=f"{BUCKET}/stats.arrow"),
                          filters=[("k", ">=", lo), ("k", "<", hi)]) as reader:
        got = reader.read_all()
    took = time.perf_counter() - t0
    assert got.num_rows == hi - lo
    share = counting.bytes / size
    print(f"3. filters keeping 1% of {rows} rows, {size / 1e6:.0f} MB, 100 batches: "
          f"{counting.bytes / 1e6:.2f} MB in {counting.requests} requests = {share:.2%} "
          f"of the file (goal <= 5%), {took:.3f} s")


def _spark_case(options: dict[str, Any], fs: Any, rows: int, files: int, repeat: int) -> None:
    """4. the same aggregation through quiver's Spark source over S3 and over a local copy."""
    import os
    import shutil
    import sys
    import tempfile

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from quiver.spark import session

    local = tempfile.mkdtemp(prefix="quiver-bench-s3-")
    spark = session("local[2]", "bench-s3", **{"spark.ui.showConsoleProgress": "false"})
    try:
        rng = np.random.default_rng(1)
        per = rows // files
        for i in range(files):
            part = qv.table({"g": qv.array(rng.integers(0, 100, per)),
                             "v": qv.array(rng.random(per))})
            path = os.path.join(local, f"part-{i:03d}.arrow")
            with ipc.new_file(path, part.schema) as w:
                w.write_table(part, max_chunksize=max(1, per // 10))
            fs.put_file(path, f"{BUCKET}/spark/part-{i:03d}.arrow")
        storage = {f"storage.{k}": v for k, v in options.items() if k != "client_kwargs"}
        storage["storage.client_kwargs.region_name"] = "us-east-1"

        def run(path: str, opts: dict[str, str]) -> float:
            t0 = time.perf_counter()
            (spark.read.format("arrow").options(**opts).load(path)
             .groupBy("g").agg({"v": "sum"}).collect())
            return time.perf_counter() - t0

        run(local, {})
        run(f"s3://{BUCKET}/spark/", storage)  # warm-up, untimed
        s3_times, local_times = [], []
        for _ in range(repeat):
            s3_times.append(run(f"s3://{BUCKET}/spark/", storage))
            local_times.append(run(local, {}))
        s3_m, local_m = _median(s3_times), _median(local_times)
        print(f"4. Spark aggregation, {rows} rows in {files} files, local[2]: over S3 "
              f"{s3_m:.2f} s, over a local copy {local_m:.2f} s = {s3_m / local_m:.2f}x")
    finally:
        spark.stop()
        shutil.rmtree(local, ignore_errors=True)


def _task_memory(rows: int) -> None:
    """6. one task's writer to S3, in this process: peak traced memory over the file.  The
    S3 server runs in another process here (moto keeps the parts it receives in memory,
    which tracemalloc would count in this one)."""
    import subprocess
    import sys
    import tracemalloc

    import fsspec

    from quiver.spark.objstore_sink import MultipartWriter
    from quiver.spark.source import WriteOptions

    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1",
                               "-p", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        options = {"key": KEY, "secret": SECRET, "endpoint_url": f"http://127.0.0.1:{port}",
                   "client_kwargs": {"region_name": "us-east-1"}}
        fsspec.filesystem("s3", **options).call_s3("create_bucket", Bucket=BUCKET)
        per = 100_000
        writer = MultipartWriter(f"s3://{BUCKET}/task-memory", WriteOptions(),
                                 qv.schema([("i", qv.int64()), ("f", qv.float64())]), True,
                                 options)

        def batches() -> Any:  # made as the task asks, as Spark hands them over
            for start in range(0, rows, per):
                n = min(per, rows - start)
                yield pa.record_batch({"i": pa.array(np.arange(start, start + n)),
                                       "f": pa.array(np.linspace(0, 1, n))})

        tracemalloc.start()
        t0 = time.perf_counter()
        message = writer.write(batches())
        took = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        writer.commit([message])
        size = sum(f.nbytes for f in message.files)
        print(f"6. one task writing {rows} rows ({size / 1e6:.0f} MB) to S3, part by part: "
              f"peak traced memory {peak / 1e6:.1f} MB = {peak / size:.2f} of the file "
              f"(parts of {writer.part_size >> 20} MiB, 2 in flight; batchRows gathers "
              f"~2 MB of input), {took:.2f} s")
    finally:
        server.terminate()
        server.wait(timeout=30)


def _spark_sink_case(options: dict[str, Any], rows: int, repeat: int) -> None:
    """5. Spark's write to a local directory, to S3 (multipart) and to S3 (staging)."""
    import os
    import shutil
    import sys
    import tempfile

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from quiver.spark import session

    local = tempfile.mkdtemp(prefix="quiver-bench-sink-")
    spark = session("local[2]", "bench-s3-sink", **{"spark.ui.showConsoleProgress": "false"})
    storage = {f"storage.{k}": v for k, v in options.items() if k != "client_kwargs"}
    storage["storage.client_kwargs.region_name"] = "us-east-1"
    try:
        df = spark.range(0, rows, numPartitions=4).selectExpr(
            "id", "cast(id * 0.5 as double) as f").cache()
        df.count()
        sides = {
            "local": (os.path.join(local, "out"), {}),
            "S3 multipart": (f"s3://{BUCKET}/sink-multipart", storage),
            "S3 staging": (f"s3://{BUCKET}/sink-staging", {**storage,
                                                          "committer": "staging"}),
        }
        times: dict[str, list[float]] = {k: [] for k in sides}
        for k in range(repeat + 1):
            for name, (path, opts) in sides.items():
                t0 = time.perf_counter()
                df.write.format("arrow").options(**opts).mode("overwrite").save(path)
                if k:  # the first round warms up, untimed
                    times[name].append(time.perf_counter() - t0)
        base = _median(times["local"])
        shown = ", ".join(f"{name} {_median(ts):.2f} s ({_median(ts) / base:.2f}x)"
                          for name, ts in times.items())
        print(f"5. Spark write of {rows} rows x (int64, float64), 4 tasks, local[2]: {shown}")
    finally:
        spark.stop()
        shutil.rmtree(local, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
