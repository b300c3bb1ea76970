"""The main job behind ``make run``: a real pipeline on Spark through quiver's Arrow source.

1. generate an events dataset of a few million rows with varied types (integers,
   decimals, doubles, strings, booleans, timestamps, dates, arrays, maps, structs);
2. write it with the sink (``df.write.format("arrow")``), zstd-compressed and partitioned
   by country, and a small countries table as an Arrow stream;
3. read both back with the source (``spark.read.format("arrow")``), run an aggregation
   and a join, and check them against the same queries on the generated data;
4. validate every written file with quiver's own reader at the "full" level;
5. print a summary: rows, files, bytes and the time of each step.

Local Spark (``local[*]``) is the default; ``--master spark://HOST:PORT`` runs the same job
on a cluster whose executors can see ``--out`` (a shared filesystem), or ``--out
s3://bucket/prefix`` on object storage (credentials from the environment, or
``--storage-option KEY=VALUE``).

Run: ``python -m quiver.job [--rows N] [--out DIR|URL] [--master URL]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

JAVA_HINT = (
    "quiver.job: Spark needs Java 17, and no java was found on PATH or in JAVA_HOME; "
    "install it with: apt-get install openjdk-17-jre-headless"
)

EVENTS_SQL = """
    id,
    cast(id % 50000 as int)                                   as user_id,
    element_at(array('DE','FR','US','CN','BR','IN','JP','NG'),
               cast(id % 8 as int) + 1)                        as country,
    element_at(array('click','view','purchase','refund'),
               cast((id div 8) % 4 as int) + 1)                as kind,
    cast((id * 37) % 100000 as decimal(12, 2)) / 100           as amount,
    ((id * 13) % 1000) / 7.0d                                  as price,
    (id % 3) = 0                                               as flag,
    timestamp_seconds(1700000000 + id)                         as ts,
    date_add(date'2024-01-01', cast(id % 365 as int))          as day,
    array(concat('t', cast(id % 10 as string)),
          concat('t', cast(id % 7 as string)))                 as tags,
    map('a', cast(id % 5 as int), 'b', cast(id % 11 as int))   as attrs,
    named_struct('os', element_at(array('linux','ios','android'),
                                  cast(id % 3 as int) + 1),
                 'version', cast(id % 20 as int))              as device
"""


def _java_available() -> bool:
    home = os.environ.get("JAVA_HOME")
    return shutil.which("java") is not None or bool(home and Path(home, "bin", "java").exists())


def _files(root: Path) -> list[Path]:
    return sorted(
        p for p in root.rglob("*")
        if p.is_file()
        and not any(part.startswith(("_", ".")) for part in p.relative_to(root).parts)
    )


def _url_files(root: str, storage: dict) -> list:
    """The data files of a dataset at a URL (as quiver's Spark source lists them)."""
    from .spark import objstore

    return objstore.list_files([root], storage)


def _validate(paths: list, storage: dict | None = None) -> tuple[int, int]:
    """Read every file fully validated with quiver; (rows, batches).  ``paths`` are
    local paths, or DataFiles at URLs (read with ``storage`` options)."""
    from . import ipc
    from .ipc.index import detect_format

    rows = batches = 0
    for path in paths:
        if storage is not None:  # a DataFile at a URL: its format is known
            kind, where, kw = path.format, path.path, {"storage_options": storage}
        else:
            with open(path, "rb") as f:
                kind = detect_format(f.read(8))
            where, kw = str(path), {}
        opener = ipc.open_file if kind == "file" else ipc.open_stream
        with opener(where, validate="full", **kw) as reader:
            for batch in reader:
                rows += batch.num_rows
                batches += 1
    return rows, batches


def _shown(out: Any) -> str:
    """The output as printed (a URL without credentials)."""
    from .fs.url import is_url, redact

    return redact(out) if is_url(str(out)) else str(out)


def _step(name: str, times: dict[str, float]):
    class _Timer:
        def __enter__(self):
            self.start = time.perf_counter()
            print(f"-- {name}", flush=True)

        def __exit__(self, *exc):
            times[name] = time.perf_counter() - self.start

    return _Timer()


def main(argv: list[str] | None = None) -> int:
    """Run the job; returns a process exit code."""
    ap = argparse.ArgumentParser(prog="python -m quiver.job", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=3_000_000, help="events to generate")
    ap.add_argument("--out", default="out",
                    help="output directory, or an s3:// (fsspec) URL")
    ap.add_argument("--storage-option", action="append", dest="storage_options", default=[],
                    metavar="KEY=VALUE", help="a storage option for an --out URL (repeat)")
    ap.add_argument("--master", default="local[*]", help="Spark master URL (local[*])")
    args = ap.parse_args(argv)
    if not _java_available():
        print(JAVA_HINT, file=sys.stderr)
        return 1
    try:
        import pyspark  # noqa: F401
    except ImportError:
        print("quiver.job: pyspark is not installed; run: pip install -e '.[spark]'",
              file=sys.stderr)
        return 1

    from .fs.url import is_remote_url, parse_storage_options

    remote = is_remote_url(args.out)
    storage = parse_storage_options(args.storage_options) if remote else None
    # the Spark source and sink take storage options as storage.KEY options
    spark_options = {f"storage.{pair.partition('=')[0]}": pair.partition("=")[2]
                     for pair in args.storage_options} if remote else {}
    if remote:
        out: Any = args.out.rstrip("/")
        events_dir, countries_dir = f"{out}/events", f"{out}/countries"
    else:
        out = Path(args.out).resolve()
        events_dir, countries_dir = out / "events", out / "countries"
    times: dict[str, float] = {}
    with _step("start Spark", times):
        from .spark import session

        spark = session(args.master, "quiver-job", **{"spark.sql.shuffle.partitions": "8"})
    try:
        from pyspark.sql import functions as F

        with _step(f"generate and write {args.rows:,} events (zstd, partitioned by country)",
                   times):
            events = spark.range(0, args.rows).selectExpr(
                *[e.strip() for e in _split_sql(EVENTS_SQL)]
            )
            (events.write.format("arrow").options(**spark_options).mode("overwrite")
             .option("compression", "zstd")
             .option("partitionBy", "country").save(str(events_dir)))
            countries = spark.createDataFrame(
                [("DE", "Europe"), ("FR", "Europe"), ("US", "Americas"), ("BR", "Americas"),
                 ("CN", "Asia"), ("IN", "Asia"), ("JP", "Asia"), ("NG", "Africa")],
                "country string, region string",
            )
            (countries.coalesce(1).write.format("arrow").options(**spark_options)
             .mode("overwrite")
             .option("format", "stream").save(str(countries_dir)))

        with _step("read back and aggregate by country and kind", times):
            back = spark.read.format("arrow").options(**spark_options).load(str(events_dir))
            by_kind = (back.groupBy("country", "kind")
                       .agg(F.count("*").alias("n"), F.sum("amount").alias("amount"),
                            F.avg("price").alias("avg_price"))
                       .orderBy("country", "kind").collect())
            expected = (events.groupBy("country", "kind")
                        .agg(F.count("*").alias("n"), F.sum("amount").alias("amount"),
                             F.avg("price").alias("avg_price"))
                        .orderBy("country", "kind").collect())
        with _step("join with countries and aggregate by region", times):
            regions = (spark.read.format("arrow").options(**spark_options)
                       .load(str(countries_dir)))
            by_region = (back.join(regions, "country").groupBy("region")
                         .agg(F.count("*").alias("n"), F.countDistinct("user_id").alias("users"))
                         .orderBy("region").collect())
        with _step("validate every written file with quiver (full)", times):
            if remote:
                paths: list = (_url_files(events_dir, storage)
                               + _url_files(countries_dir, storage))
            else:
                paths = _files(events_dir) + _files(countries_dir)
            rows, batches = _validate(paths, storage)
    finally:
        spark.stop()

    nbytes = sum(p.size if remote else p.stat().st_size for p in paths)
    same = len(by_kind) == len(expected) and all(
        tuple(a)[:4] == tuple(b)[:4] and abs(a["avg_price"] - b["avg_price"]) <= 1e-9 * abs(
            b["avg_price"])
        for a, b in zip(by_kind, expected)
    )
    total = sum(r["n"] for r in by_region)
    ok = same and total == args.rows and rows == args.rows + 8
    print()
    print("region       events    users")
    for r in by_region:
        print(f"{r['region']:<10} {r['n']:>8,} {r['users']:>8,}")
    print()
    print(f"rows generated   {args.rows:,}")
    print(f"files written    {len(paths)} ({batches} record batches, {nbytes / 1e6:.1f} MB) "
          f"under {_shown(out)}")
    print(f"rows validated   {rows:,} (events + 8 countries)")
    print(f"aggregation      {len(by_kind)} groups, "
          f"{'equal to' if same else 'DIFFERENT FROM'} the query on the generated data")
    for name, seconds in times.items():
        print(f"  {seconds:7.2f} s  {name}")
    print("job finished:", "all outputs verified" if ok else "VERIFICATION FAILED")
    return 0 if ok else 1


def _split_sql(select_list: str) -> list[str]:
    """Top-level comma-separated expressions of a select list."""
    parts, depth, current = [], 0, []
    for ch in select_list:
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        depth += ch == "("
        depth -= ch == ")"
        current.append(ch)
    parts.append("".join(current))
    return [p for p in parts if p.strip()]


if __name__ == "__main__":
    raise SystemExit(main())
