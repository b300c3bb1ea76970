"""Structured Streaming: the Arrow IPC stream source and sink on local Spark.

Each query runs with ``Trigger.AvailableNow`` (or ``processAllAvailable``) so that a test
knows when a micro-batch is done; restarts reuse the checkpoint directory.  Rows carry an
``id`` so that "exactly once" is checked by counting ids: none missing, none twice.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import quiver as qv
import quiver.ipc as ipc
from quiver.ipc.framing import EOS

from .helpers import stream_batch

pytestmark = pytest.mark.xdist_group("spark")

SCHEMA_DDL = "id long, name string, x double"


def _write(path: Path, batches: list[qv.RecordBatch], fmt: str = "file",
           compression: str | None = None) -> None:
    """Write a complete file, under a temporary name first (a producer's usual way)."""
    temporary = path.parent / f".{path.name}.tmp"
    opener = ipc.new_file if fmt == "file" else ipc.new_stream
    with opener(str(temporary), batches[0].schema, compression=compression) as w:
        for b in batches:
            w.write_batch(b)
    os.replace(temporary, path)


def _ids(spark, path: Path) -> list[int]:
    return sorted(r.id for r in spark.read.format("arrow").load(str(path)).select("id").collect())


def _run_available_now(spark, source: Path, out: Path, checkpoint: Path, **options: str):
    reader = spark.readStream.format("arrow").schema(SCHEMA_DDL)
    for k, v in options.items():
        reader = reader.option(k, v)
    query = (reader.load(str(source)).writeStream.format("arrow")
             .option("checkpointLocation", str(checkpoint))
             .trigger(availableNow=True).start(str(out)))
    query.awaitTermination(120)
    assert query.exception() is None, query.exception()
    return query


def _log(out: Path) -> list[int]:
    log = out / "_quiver_log"
    return sorted(int(n) for n in os.listdir(log) if n.isdigit()) if log.exists() else []


def test_new_files_are_read_once_across_restarts(spark, tmp_path):
    src, out, ck = tmp_path / "in", tmp_path / "out", tmp_path / "ck"
    src.mkdir()
    _write(src / "a.arrow", [stream_batch(0, 100), stream_batch(100, 50)], "file", "zstd")
    _write(src / "b.arrows", [stream_batch(150, 70, dictionary=True),
                              stream_batch(220, 30, dictionary=True)], "stream", "lz4")
    # not Arrow yet, a hidden file and a _temporary directory: never read
    (src / "c.arrow").write_bytes(b"")
    (src / ".hidden.arrow").write_bytes(b"junk")
    (src / "_temporary").mkdir()
    _write(src / "_temporary" / "x.arrow", [stream_batch(10_000, 5)])
    _run_available_now(spark, src, out, ck)
    assert _ids(spark, out) == list(range(250))

    # the query stops; files arrive; a restart from the checkpoint reads only them
    _write(src / "d.arrow", [stream_batch(250, 40)], "file")
    os.remove(src / "c.arrow")
    _write(src / "c.arrow", [stream_batch(290, 10, dictionary=True)], "file", "zstd")
    _run_available_now(spark, src, out, ck)
    assert _ids(spark, out) == list(range(300))
    # a third run with nothing new adds nothing
    _run_available_now(spark, src, out, ck)
    assert _ids(spark, out) == list(range(300))


def test_incomplete_files_wait(spark, tmp_path):
    src, out, ck = tmp_path / "in", tmp_path / "out", tmp_path / "ck"
    src.mkdir()
    _write(src / "a.arrow", [stream_batch(0, 10)])
    whole = ipc.BufferOutputStream()
    with ipc.new_file(whole, stream_batch(10, 10).schema) as w:
        w.write_batch(stream_batch(10, 10))
    data = bytes(whole.getvalue())
    (src / "b.arrow").write_bytes(data[:-20])  # no footer yet
    stream = ipc.BufferOutputStream()
    with ipc.new_stream(stream, stream_batch(20, 10).schema) as w:
        w.write_batch(stream_batch(20, 10))
    sdata = bytes(stream.getvalue())
    assert sdata.endswith(EOS)
    (src / "c.arrows").write_bytes(sdata[:-8])  # no end-of-stream marker, just written
    _run_available_now(spark, src, out, ck, fileSettleSeconds="3600")
    assert _ids(spark, out) == list(range(10))
    (src / "b.arrow").write_bytes(data)
    _run_available_now(spark, src, out, ck, fileSettleSeconds="3600")
    assert _ids(spark, out) == list(range(20))
    # a stream file without its marker joins once it has settled
    _run_available_now(spark, src, out, ck, fileSettleSeconds="0")
    assert _ids(spark, out) == list(range(30))


@pytest.mark.parametrize(("option", "value", "batches"), [
    ("maxFilesPerTrigger", "1", 4),
    ("maxFilesPerTrigger", "3", 2),
    ("maxRowsPerTrigger", "25", 4),      # one 20-row file a batch (two would be 40)
    ("maxRowsPerTrigger", "45", 2),
    ("maxBytesPerTrigger", "1", 4),      # below one file: still one file a batch
])
def test_read_limits(spark, tmp_path, option, value, batches):
    src, out, ck = tmp_path / "in", tmp_path / "out", tmp_path / "ck"
    src.mkdir()
    for i in range(4):
        _write(src / f"f{i}.arrow", [stream_batch(20 * i, 20)])
        os.utime(src / f"f{i}.arrow", ns=(10**18 + i, 10**18 + i))
    _run_available_now(spark, src, out, ck, **{option: value})
    assert _ids(spark, out) == list(range(80))
    assert len(_log(out)) == batches


def _append_process(path: Path, start: int, n: int, *, cut: int = 0) -> None:
    """Another process appends one record batch message (less its last ``cut`` bytes)."""
    code = textwrap.dedent(f"""
        import numpy as np, quiver as qv, quiver.ipc as ipc
        from quiver.ipc.encoder import StreamEncoder
        ids = np.arange({start}, {start + n}, dtype=np.int64)
        b = qv.record_batch({{"id": qv.array(ids),
                              "name": qv.array([f"n{{i % 7}}" for i in ids.tolist()]),
                              "x": qv.array(ids.astype(np.float64) / 2)}})
        out = ipc.BufferOutputStream()
        with ipc.new_stream(out, b.schema) as w:
            w.write_batch(b)
        whole = bytes(out.getvalue())
        head = ipc.BufferOutputStream()
        with ipc.new_stream(head, b.schema) as w:
            pass
        schema_len = len(bytes(head.getvalue())) - 8
        message = whole[schema_len:-8]
        with open({str(path)!r}, "ab") as f:
            f.write(message[:len(message) - {cut}])
    """)
    env = dict(os.environ)
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=120)


def _complete_cut(path: Path, start: int, n: int, cut: int) -> None:
    """Write the last ``cut`` bytes of the message ``_append_process`` left unfinished."""
    ids = np.arange(start, start + n, dtype=np.int64)
    b = qv.record_batch({"id": qv.array(ids),
                         "name": qv.array([f"n{i % 7}" for i in ids.tolist()]),
                         "x": qv.array(ids.astype(np.float64) / 2)})
    out = ipc.BufferOutputStream()
    with ipc.new_stream(out, b.schema) as w:
        w.write_batch(b)
    whole = bytes(out.getvalue())
    with path.open("ab") as f:
        f.write(whole[len(whole) - 8 - cut : len(whole) - 8])


def test_tail_reads_a_growing_stream(spark, tmp_path):
    src, out, ck = tmp_path / "in", tmp_path / "out", tmp_path / "ck"
    src.mkdir()
    growing = src / "events.arrows"
    head = ipc.BufferOutputStream()
    with ipc.new_stream(head, stream_batch(0, 1).schema) as w:
        w.write_batch(stream_batch(0, 10))
    growing.write_bytes(bytes(head.getvalue())[:-8])  # schema + one batch, no marker
    options = {"tail": "true"}
    _run_available_now(spark, src, out, ck, **options)
    assert _ids(spark, out) == list(range(10))

    _append_process(growing, 10, 15)
    _append_process(growing, 25, 5, cut=40)  # half a message: left for later
    _run_available_now(spark, src, out, ck, **options)
    assert _ids(spark, out) == list(range(25))

    _complete_cut(growing, 25, 5, 40)
    _append_process(growing, 30, 3)
    with growing.open("ab") as f:
        f.write(EOS)
    _run_available_now(spark, src, out, ck, **options)
    assert _ids(spark, out) == list(range(33))
    _run_available_now(spark, src, out, ck, **options)  # ended: nothing more
    assert _ids(spark, out) == list(range(33))


def test_tail_replays_dictionaries(spark, tmp_path):
    """Batches of a later trigger decode with the dictionaries written before them,
    deltas included."""
    src, out, ck = tmp_path / "in", tmp_path / "out", tmp_path / "ck"
    src.mkdir()
    path = src / "dict.arrows"
    d = qv.dictionary(qv.int32(), qv.utf8())
    schema = qv.schema([qv.field("id", qv.int64()), qv.field("name", d),
                        qv.field("x", qv.float64())])
    sink = ipc.BufferOutputStream()

    def batch(start: int, names: list[str]) -> qv.RecordBatch:
        ids = np.arange(start, start + len(names), dtype=np.int64)
        return qv.record_batch([qv.array(ids), qv.array(names, type=d),
                                qv.array(ids.astype(np.float64))], schema=schema)

    writer = ipc.new_stream(sink, schema, emit_dictionary_deltas=True)
    writer.write_batch(batch(0, ["a", "b", "a"]))
    path.write_bytes(bytes(sink.getvalue()))
    _run_available_now(spark, src, out, ck, tail="true")
    writer.write_batch(batch(3, ["b", "c", "d"]))  # a delta: c and d
    path.write_bytes(bytes(sink.getvalue()))
    _run_available_now(spark, src, out, ck, tail="true")
    writer.close()
    rows = sorted((r.id, r.name) for r in
                  spark.read.format("arrow").load(str(out)).collect())
    assert rows == [(0, "a"), (1, "b"), (2, "a"), (3, "b"), (4, "c"), (5, "d")]


def test_sink_failure_and_restart_leave_no_duplicate(spark, tmp_path):
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType

    src, out, ck = tmp_path / "in", tmp_path / "out", tmp_path / "ck"
    src.mkdir()
    marker = tmp_path / "fail"
    marker.write_text("x")
    marker_path = str(marker)

    def check(i: int) -> int:
        if i == 130 and os.path.exists(marker_path):
            raise ValueError("injected failure")
        return i

    udf = F.udf(check, LongType())
    for i in range(3):
        _write(src / f"f{i}.arrow", [stream_batch(100 * i, 100)])
        os.utime(src / f"f{i}.arrow", ns=(10**18 + i, 10**18 + i))

    def start():
        df = (spark.readStream.format("arrow").schema(SCHEMA_DDL)
              .option("maxFilesPerTrigger", "1").load(str(src))
              .withColumn("id", udf("id")))
        return (df.writeStream.format("arrow").option("checkpointLocation", str(ck))
                .trigger(availableNow=True).start(str(out)))

    q = start()
    with pytest.raises(Exception, match="injected failure"):
        q.awaitTermination(120)  # the second micro-batch fails
    assert _ids(spark, out) == list(range(100))  # the first is committed, nothing else
    left = [p for p in (out / "_temporary").rglob("*") if p.is_file()]
    assert left == []
    marker.unlink()
    q = start()
    q.awaitTermination(120)
    assert q.exception() is None
    assert _ids(spark, out) == list(range(300))
    assert _log(out) == [0, 1, 2]


def test_replayed_batch_is_not_written_twice(spark, tmp_path):
    """A micro-batch whose commit was logged but whose offsets were not marked done (a
    crash between the two) runs again after a restart: the log keeps it from being written
    twice."""
    src, out, ck = tmp_path / "in", tmp_path / "out", tmp_path / "ck"
    src.mkdir()
    _write(src / "a.arrow", [stream_batch(0, 50)])
    _run_available_now(spark, src, out, ck)
    # forget that Spark finished batch 0: it will run it again from its offsets
    for name in os.listdir(ck / "commits"):
        if name in ("0", ".0.crc"):  # the entry and its checksum, as if never written
            os.remove(ck / "commits" / name)
    _run_available_now(spark, src, out, ck)
    assert _ids(spark, out) == list(range(50))


def test_sink_output_is_read_by_other_readers(spark, tmp_path):
    import pyarrow.dataset as ds

    src, out, ck = tmp_path / "in", tmp_path / "out", tmp_path / "ck"
    src.mkdir()
    _write(src / "a.arrow", [stream_batch(0, 30)])
    reader = spark.readStream.format("arrow").schema(SCHEMA_DDL).load(str(src))
    q = (reader.writeStream.format("arrow").option("checkpointLocation", str(ck))
         .option("compression", "zstd")
         .option("partitionBy", "name").start(str(out)))
    try:
        q.processAllAvailable()
        _write(src / "b.arrow", [stream_batch(30, 12)])
        q.processAllAvailable()
    finally:
        q.stop()
    assert sorted(p.name for p in out.glob("name=*")) == [f"name=n{i}" for i in range(7)]
    table = ds.dataset(str(out), format="arrow", partitioning="hive",
                       exclude_invalid_files=False).to_table()
    assert sorted(table.column("id").to_pylist()) == list(range(42))
    assert sorted(r.id for r in spark.read.format("arrow").load(str(out)).collect()) == \
        list(range(42))
    polars = pytest.importorskip("polars")
    frame = polars.scan_ipc(str(out / "name=*" / "*.arrow"), hive_partitioning=True).collect()
    assert sorted(frame["id"].to_list()) == list(range(42))
    entries = [json.loads((out / "_quiver_log" / str(b)).read_text()) for b in _log(out)]
    assert sum(len(e["moves"]) for e in entries) >= 2
    # each commit takes its attempt directories and, once empty, the query's and
    # _temporary (Spark makes a writer for each commit: none leaves a directory behind)
    assert not (out / "_temporary").exists()


def test_offsets_are_deterministic(tmp_path):
    """The same start and end give the same partitions, whatever arrived since."""
    pytest.importorskip("pyspark")
    from quiver.spark.streaming import ArrowStreamReader

    src = tmp_path / "in"
    src.mkdir()
    _write(src / "a.arrow", [stream_batch(0, 10)])
    from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

    schema = StructType([StructField("id", LongType()), StructField("name", StringType()),
                         StructField("x", DoubleType())])
    reader = ArrowStreamReader({"path": str(src)}, schema)
    start = reader.initialOffset()
    end = reader.latestOffset(start, None)
    first = reader.partitions(start, end)
    _write(src / "b.arrow", [stream_batch(10, 10)])
    again = ArrowStreamReader({"path": str(src)}, schema).partitions(start, end)
    assert [p.splits for p in first] == [p.splits for p in again]
    assert json.loads(json.dumps(end)) == end
    assert reader.partitions(end, end) == []


def test_merge_schema_is_refused_for_streams(spark, tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    _write(src / "a.arrow", [stream_batch(0, 10)])
    with pytest.raises(Exception, match="mergeSchema=false for a stream"):
        q = (spark.readStream.format("arrow").schema(SCHEMA_DDL).option("mergeSchema", "true")
             .load(str(src)).writeStream.format("arrow")
             .option("checkpointLocation", str(tmp_path / "ck"))
             .trigger(availableNow=True).start(str(tmp_path / "out")))
        q.awaitTermination(60)
        if q.exception() is not None:
            raise RuntimeError(str(q.exception()))


def test_quiver_name_always_names_this_source(spark, tmp_path):
    """Another package's source registered as ``arrow`` (pyspark-data-sources has one)
    replaces quiver's ``arrow`` in that session: the last registration wins.  ``quiver``
    still names this source, and :func:`quiver.spark.register` takes ``arrow`` back."""
    from pyspark.sql.datasource import DataSource, DataSourceReader

    from quiver.spark import register

    class OtherReader(DataSourceReader):
        def read(self, partition):
            yield (-1,)

    class OtherArrow(DataSource):
        @classmethod
        def name(cls):
            return "arrow"

        def schema(self):
            return "id long"

        def reader(self, schema):
            return OtherReader()

    src = tmp_path / "in"
    src.mkdir()
    _write(src / "a.arrow", [stream_batch(0, 10)])
    spark.dataSource.register(OtherArrow)
    try:
        assert [r.id for r in spark.read.format("arrow").load(str(src)).collect()] == [-1]
        assert _ids_of(spark.read.format("quiver").load(str(src))) == list(range(10))
    finally:
        register(spark)
    assert _ids_of(spark.read.format("arrow").load(str(src))) == list(range(10))


def _ids_of(df) -> list[int]:
    return sorted(r.id for r in df.select("id").collect())


def test_filters_option_applies_to_streams(spark, tmp_path):
    """The ``filters`` read option is part of the stream's definition, as in batch reads:
    exactly the matching rows, with footer statistics skipping batches."""
    src, out, ck = tmp_path / "in", tmp_path / "out", tmp_path / "ck"
    src.mkdir()
    with ipc.new_file(str(src / "a.arrow"), stream_batch(0, 1).schema, statistics=True) as w:
        for start in range(0, 200, 20):
            w.write_batch(stream_batch(start, 20))
    _run_available_now(spark, src, out, ck,
                       filters=json.dumps([["id", ">=", 35], ["id", "<", 90]]))
    assert _ids(spark, out) == list(range(35, 90))


def test_path_glob_filter_and_recursive_file_lookup_apply_to_streams(spark, tmp_path):
    # as in batch reads (tests/spark/test_read.py): the stream's listing left both out,
    # taking every file (extra rows) and the k=... directories as a column
    src, out, ck = tmp_path / "in", tmp_path / "out", tmp_path / "ck"
    for k, name, start in ((1, "a.arrow", 0), (1, "b.arrowx", 100), (2, "c.arrow", 200)):
        (src / f"k={k}").mkdir(parents=True, exist_ok=True)
        _write(src / f"k={k}" / name, [stream_batch(start, 10)])
    inferred = spark.readStream.format("arrow").load(str(src)).schema.fieldNames()
    assert inferred == ["id", "name", "x", "k"]
    flat = (spark.readStream.format("arrow").option("recursiveFileLookup", "true")
            .load(str(src)).schema.fieldNames())
    assert flat == ["id", "name", "x"]
    _run_available_now(spark, src, out, ck, pathGlobFilter="*.arrow")
    assert _ids(spark, out) == [*range(10), *range(200, 210)]
