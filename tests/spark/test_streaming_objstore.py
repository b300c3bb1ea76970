"""Structured Streaming on object storage (moto's S3 server, Spark on local[2]): a prefix
gaining objects read exactly once across triggers and restarts, both formats; the sink's
micro-batches committed once per batch id through the object-store protocols (a replayed
batch writes nothing twice; a failed one leaves nothing visible and no pending upload).
"Exactly once" is checked by counting ids: none missing, none twice."""

from __future__ import annotations

import json
import time

import pyarrow as pa
import pytest

import quiver as qv
import quiver.ipc as ipc
from quiver.errors import NotSupported
from quiver.spark.objstore_sink import pending_uploads
from quiver.spark.streaming import committed_batches
from tests.objstore.conftest import key_of, s3  # noqa: F401 - the fixture

from .helpers import stream_batch

pytestmark = pytest.mark.xdist_group("spark")

SCHEMA_DDL = "id long, name string, x double"


def _put(s3, url: str, batches: list[qv.RecordBatch], fmt: str = "file",  # noqa: F811
         compression: str | None = None) -> None:
    """One object, whole (an object appears whole on S3)."""
    sink = ipc.BufferOutputStream()
    opener = ipc.new_file if fmt == "file" else ipc.new_stream
    with opener(sink, batches[0].schema, compression=compression) as w:
        for b in batches:
            w.write_batch(b)
    s3.fs().pipe_file(key_of(url), bytes(sink.getvalue()))


def _visible(s3, url: str) -> list[str]:  # noqa: F811
    fs = s3.fs()
    fs.invalidate_cache()
    root = key_of(url)
    try:
        return sorted(p[len(root) + 1:] for p in fs.find(root))
    except FileNotFoundError:
        return []


def _data(s3, url: str) -> list[str]:  # noqa: F811
    return [n for n in _visible(s3, url) if not n.startswith(("_", "."))]


def _log(s3, url: str) -> list[int]:  # noqa: F811
    return committed_batches(url, s3.options)


def _ids(spark, s3, url: str) -> list[int]:  # noqa: F811
    if not _data(s3, url):
        return []
    df = spark.read.format("arrow").options(**s3.spark_options).load(url)
    return sorted(r.id for r in df.select("id").collect())


def _reader(spark, s3, src: str, **options: str):  # noqa: F811
    reader = spark.readStream.format("arrow").schema(SCHEMA_DDL).options(**s3.spark_options)
    return reader.options(**options).load(src)


def _start(df, s3, out: str, checkpoint: str, *, available_now: bool = True,  # noqa: F811
           **options: str):
    writer = (df.writeStream.format("arrow").options(**s3.spark_options).options(**options)
              .option("checkpointLocation", checkpoint))
    if available_now:
        writer = writer.trigger(availableNow=True)
    return writer.start(out)


def _run(spark, s3, src: str, out: str, checkpoint: str,  # noqa: F811
         sink: dict[str, str] | None = None, **options: str) -> None:
    """One AvailableNow run: ``options`` for the source, ``sink`` for the sink."""
    query = _start(_reader(spark, s3, src, **options), s3, out, checkpoint, **(sink or {}))
    query.awaitTermination(120)
    assert query.exception() is None, query.exception()


def test_a_prefix_gaining_objects_is_read_once_across_triggers_and_restarts(
        spark, s3, tmp_path):  # noqa: F811
    src, out, ck = s3.url("in"), s3.url("out"), str(tmp_path / "ck")
    _put(s3, f"{src}/a.arrow", [stream_batch(0, 100), stream_batch(100, 50)], "file", "zstd")
    _put(s3, f"{src}/b.arrows", [stream_batch(150, 70, dictionary=True),
                                 stream_batch(220, 30, dictionary=True)], "stream", "lz4")
    # never read: an empty object, a hidden one, one under _temporary
    s3.fs().pipe_file(key_of(f"{src}/c.arrow"), b"")
    s3.fs().pipe_file(key_of(f"{src}/.hidden.arrow"), b"junk")
    _put(s3, f"{src}/_temporary/x.arrow", [stream_batch(10_000, 5)])

    query = _start(_reader(spark, s3, src), s3, out, ck, available_now=False)
    try:
        query.processAllAvailable()
        assert _ids(spark, s3, out) == list(range(250))
        # objects arrive between triggers of the running query
        _put(s3, f"{src}/d.arrow", [stream_batch(250, 40)])
        _put(s3, f"{src}/e.arrows", [stream_batch(290, 10)], "stream")
        query.processAllAvailable()
    finally:
        query.stop()
    assert _ids(spark, s3, out) == list(range(300))

    # the query stops; objects arrive (one replaces the empty one); a restart from the
    # checkpoint reads only them
    _put(s3, f"{src}/c.arrow", [stream_batch(300, 10, dictionary=True)], "file", "zstd")
    _put(s3, f"{src}/p=1/f.arrows", [stream_batch(310, 20)], "stream")
    _run(spark, s3, src, out, ck)
    assert _ids(spark, s3, out) == list(range(330))
    _run(spark, s3, src, out, ck)  # nothing new: nothing added
    assert _ids(spark, s3, out) == list(range(330))
    assert len(_log(s3, out)) >= 3
    assert pending_uploads(s3.fs(), key_of(out)) == []


def test_incomplete_objects_wait_and_read_limits_hold(spark, s3, tmp_path):  # noqa: F811
    """A stream object without its end-of-stream marker joins once settled; a file-format
    object without its magic never does; maxFilesPerTrigger makes one batch a file."""
    src, out, ck = s3.url("in"), s3.url("out"), str(tmp_path / "ck")
    _put(s3, f"{src}/a.arrow", [stream_batch(0, 10)])
    _put(s3, f"{src}/b.arrow", [stream_batch(10, 10)])
    whole = ipc.BufferOutputStream()
    with ipc.new_stream(whole, stream_batch(20, 10).schema) as w:
        w.write_batch(stream_batch(20, 10))
    s3.fs().pipe_file(key_of(f"{src}/c.arrows"), bytes(whole.getvalue())[:-8])
    broken = ipc.BufferOutputStream()
    with ipc.new_file(broken, stream_batch(30, 10).schema) as w:
        w.write_batch(stream_batch(30, 10))
    s3.fs().pipe_file(key_of(f"{src}/d.arrow"), bytes(broken.getvalue())[:-20])
    _run(spark, s3, src, out, ck, fileSettleSeconds="3600", maxFilesPerTrigger="1")
    assert _ids(spark, s3, out) == list(range(20))
    assert _log(s3, out) == [0, 1]
    _run(spark, s3, src, out, ck, fileSettleSeconds="0")
    assert _ids(spark, s3, out) == list(range(30))


@pytest.mark.parametrize("committer", ["auto", "staging"])
def test_a_replayed_batch_is_not_written_twice(spark, s3, tmp_path, committer):  # noqa: F811
    """A micro-batch whose commit was logged but not marked done in the checkpoint runs
    again after a restart: its log entry keeps it from being written twice."""
    import os

    src, out, ck = s3.url("in"), s3.url("out"), tmp_path / "ck"
    _put(s3, f"{src}/a.arrow", [stream_batch(0, 50)])
    _run(spark, s3, src, out, str(ck), {"committer": committer})
    first = _data(s3, out)
    for name in os.listdir(ck / "commits"):
        if name in ("0", ".0.crc"):  # as if Spark had stopped before marking it done
            os.remove(ck / "commits" / name)
    _run(spark, s3, src, out, str(ck), {"committer": committer})
    assert _ids(spark, s3, out) == list(range(50))
    assert _data(s3, out) == first
    assert _log(s3, out) == [0]
    assert pending_uploads(s3.fs(), key_of(out)) == []
    assert not any(n.startswith("_temporary") for n in _visible(s3, out))


@pytest.mark.parametrize("committer", ["auto", "staging"])
def test_a_failed_query_leaves_nothing_visible_and_nothing_pending(
        spark, s3, tmp_path, committer):  # noqa: F811
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType

    def check(i: int) -> int:
        if i == 130:
            raise ValueError("injected failure")
        return i

    src, out, ck = s3.url("in"), s3.url("out"), str(tmp_path / "ck")
    _put(s3, f"{src}/a.arrow", [stream_batch(0, 100)])
    _put(s3, f"{src}/b.arrow", [stream_batch(100, 100)])
    df = _reader(spark, s3, src).repartition(3).withColumn("id", F.udf(check, LongType())("id"))
    query = _start(df, s3, out, ck, committer=committer)
    with pytest.raises(Exception, match="injected failure"):
        query.awaitTermination(120)
    # the driver's abort drops what the batch's tasks reported and what they left; a
    # task Spark kills at that moment drops its own upload as it stops
    deadline = time.monotonic() + 20
    while pending_uploads(s3.fs(), key_of(out)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert pending_uploads(s3.fs(), key_of(out)) == []
    # nothing but the abort's hidden marker for tasks still running
    assert [n for n in _visible(s3, out) if not n.endswith(".aborted")] == []


# -- the sink's commit protocol, driven directly (no Spark job) --------------------------


def _writer(s3, url: str, committer: str):  # noqa: F811
    from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

    from quiver.spark.objstore_sink import ObjectStoreStreamWriter

    schema = StructType([StructField("id", LongType()), StructField("name", StringType()),
                         StructField("x", DoubleType())])
    return ObjectStoreStreamWriter({"path": url, "committer": committer,
                                    "abortsettleseconds": "0.1", **s3.spark_options},
                                   schema, False)


def _arrow(start: int, n: int) -> pa.RecordBatch:
    return pa.record_batch(stream_batch(start, n))


class _Attempt:
    """Spark's task context of a task attempt of micro-batch ``batch`` (task 0)."""

    def __init__(self, attempt: int, batch: int) -> None:
        self.attempt, self.batch = attempt, batch

    def partitionId(self) -> int:
        return 0

    def taskAttemptId(self) -> int:
        return self.attempt

    def getLocalProperty(self, key: str) -> str | None:
        return str(self.batch) if key == "streaming.sql.batchId" else None


@pytest.mark.parametrize("committer", ["multipart", "staging"])
def test_a_batch_logged_before_a_crash_is_finished_by_the_replay(s3, committer,  # noqa: F811
                                                                 monkeypatch):
    """The run before logged batch 0 and stopped before publishing it; the replay
    publishes the logged files (not its own), and nothing stays pending or staged."""
    pytest.importorskip("pyspark")
    out = s3.url("out")
    before = _writer(s3, out, committer)
    message = before.write(iter([_arrow(0, 20)]))
    fs, root = before.inner._fs()
    entry = before._entry(root, 0)
    body = {"batch": 0, "job": before.inner.job,
            "files": [dict(relative=p.relative, rows=p.rows, nbytes=p.nbytes,
                           upload_id=p.upload_id, parts=[list(x) for x in p.parts],
                           staged=p.staged) for p in message.files]}
    before._claim(fs, entry, json.dumps(body).encode())  # ... and the run stops here
    assert _data(s3, out) == []
    # an attempt of the run before that nobody reported (pending or staged)
    import pyspark

    monkeypatch.setattr(pyspark.TaskContext, "get", staticmethod(lambda: _Attempt(7, 0)))
    before.write(iter([_arrow(500, 5)]))
    monkeypatch.undo()

    replay = _writer(s3, out, committer)
    again = replay.write(iter([_arrow(0, 20)]))
    replay.commit([again], 0)
    names = _data(s3, out)
    assert names == sorted(p.relative for p in message.files)
    assert before.inner.job in names[0]
    table = ipc.read_table(f"{out}/{names[0]}", storage_options=s3.options)
    assert table.column("id").to_pylist() == list(range(20))
    assert pending_uploads(s3.fs(), key_of(out)) == []
    assert not any(n.startswith("_temporary") for n in _visible(s3, out))
    # the same batch id once more (a second replay): nothing changes
    third = _writer(s3, out, committer)
    third.commit([third.write(iter([_arrow(0, 20)]))], 0)
    assert _data(s3, out) == names
    assert pending_uploads(s3.fs(), key_of(out)) == []


@pytest.mark.parametrize("committer", ["multipart", "staging"])
def test_abort_drops_the_batch_unless_it_is_logged(s3, committer,  # noqa: F811
                                                   monkeypatch):
    """Spark makes a new writer for each commit and abort: the driver's writer is not
    the tasks'."""
    pytest.importorskip("pyspark")
    import pyspark

    out = s3.url("out")
    tasks = _writer(s3, out, committer)
    monkeypatch.setattr(pyspark.TaskContext, "get", staticmethod(lambda: _Attempt(1, 0)))
    reported = tasks.write(iter([_arrow(0, 10)]))
    monkeypatch.setattr(pyspark.TaskContext, "get", staticmethod(lambda: _Attempt(2, 0)))
    tasks.write(iter([_arrow(0, 10)]))  # an attempt nobody reports
    _writer(s3, out, committer).abort([reported, None], 0)
    assert _visible(s3, out) == ["_temporary/0.aborted"]
    assert pending_uploads(s3.fs(), key_of(out)) == []
    # a task of the aborted batch that finishes after the abort drops its own files
    monkeypatch.setattr(pyspark.TaskContext, "get", staticmethod(lambda: _Attempt(3, 0)))
    assert tasks.write(iter([_arrow(0, 10)])).files == ()
    assert _visible(s3, out) == ["_temporary/0.aborted"]
    assert pending_uploads(s3.fs(), key_of(out)) == []
    # the next run: the old marker does not apply to its tasks; its commit sweeps it
    tasks = _writer(s3, out, committer)
    monkeypatch.setattr(pyspark.TaskContext, "get", staticmethod(lambda: _Attempt(4, 0)))
    message = tasks.write(iter([_arrow(10, 10)]))
    assert len(message.files) == 1
    _writer(s3, out, committer).commit([message], 0)
    committed = _data(s3, out)
    assert len(committed) == 1
    assert [n for n in _visible(s3, out) if n.startswith("_temporary")] == []
    _writer(s3, out, committer).abort([message], 0)  # committed: it stays
    assert _data(s3, out) == committed
    assert _ids_of_objects(s3, out) == list(range(10, 20))


def _ids_of_objects(s3, url: str) -> list[int]:  # noqa: F811
    ids: list[int] = []
    for name in _data(s3, url):
        ids += ipc.read_table(f"{url}/{name}", storage_options=s3.options) \
            .column("id").to_pylist()
    return sorted(ids)


def test_tail_is_refused_on_object_storage(s3):  # noqa: F811
    pytest.importorskip("pyspark")
    from pyspark.sql.types import LongType, StructField, StructType

    from quiver.spark.streaming import ArrowStreamReader

    src = s3.url("in")
    _put(s3, f"{src}/a.arrows", [stream_batch(0, 10)], "stream")
    with pytest.raises(NotSupported, match=r"tail=true.*immutable"):
        ArrowStreamReader({"path": src, "tail": "true", **s3.spark_options},
                          StructType([StructField("id", LongType())]))


def test_a_batch_jobs_output_is_refused_as_a_stream_output(s3):  # noqa: F811
    """Its _SUCCESS manifest would hide the stream's files from quiver's readers."""
    pytest.importorskip("pyspark")
    from quiver.errors import ArrowInvalidArgument

    out = s3.url("out")
    s3.fs().pipe_file(key_of(f"{out}/_SUCCESS"), json.dumps({"version": 1, "files": []}).encode())
    with pytest.raises(ArrowInvalidArgument, match="without a _SUCCESS manifest"):
        _writer(s3, out, "auto")
