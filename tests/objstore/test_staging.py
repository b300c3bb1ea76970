"""The Spark sink's staging commit protocol (any fsspec store: GCS, Azure, ...), step by
step without a Spark session (the writer's task and driver sides called as Spark calls
them), on fsspec's ``memory://`` filesystem and on S3 with ``committer=staging``; and
how :func:`object_store_writer` picks a protocol."""

from __future__ import annotations

import json
import uuid

import pyarrow as pa
import pytest

import quiver as qv
import quiver.ipc as ipc

pytest.importorskip("pyspark")

from quiver.spark import objstore
from quiver.spark import objstore_sink as sink_module
from quiver.spark.objstore_sink import (
    STAGING,
    MultipartWriter,
    StagingWriter,
    object_store_writer,
    pending_uploads,
)
from quiver.spark.source import WriteOptions

from .conftest import SECRET, TaskStandIn


class _Store:
    """A place to write: a fresh URL, its options, its filesystem."""

    def __init__(self, url: str, options: dict, fs) -> None:
        self.url, self.options, self.fs = url, options, fs

    @property
    def root(self) -> str:
        return self.fs._strip_protocol(self.url)

    def names(self) -> list[str]:
        """Every object under the URL (hidden ones too), relative to it."""
        self.fs.invalidate_cache()
        try:
            return sorted(p[len(self.root) + 1:] for p in self.fs.find(self.root))
        except FileNotFoundError:
            return []

    def seen(self) -> set[int]:
        """What quiver's reader sees at the URL now (manifest or listing)."""
        self.fs.invalidate_cache()
        out: set[int] = set()
        for f in objstore.list_files([self.url], self.options):
            out |= set(ipc.read_table(f.path, storage_options=self.options)
                       .column("v").to_pylist())
        return out


@pytest.fixture(params=["memory", "s3"])
def store(request) -> _Store:
    if request.param == "memory":
        import fsspec

        return _Store(f"memory://quiver-tests/{uuid.uuid4().hex[:12]}/ds", {},
                      fsspec.filesystem("memory"))
    s3 = request.getfixturevalue("s3")
    return _Store(s3.url("ds"), s3.options, s3.fs())


def _writer(store: _Store, overwrite: bool = True, **options) -> StagingWriter:
    w = object_store_writer(store.url, WriteOptions(**options),
                            qv.schema([("v", qv.int64())]), overwrite, store.options,
                            "staging")
    assert isinstance(w, StagingWriter)
    return w


def _write(w, monkeypatch, task: int, values, attempt: int = 0):
    import pyspark

    monkeypatch.setattr(pyspark.TaskContext, "get",
                        staticmethod(lambda: TaskStandIn(task, attempt)))
    return w.write(iter([pa.record_batch({"v": pa.array(values, pa.int64())})]))


def _data(names: list[str]) -> list[str]:
    return [n for n in names if n != "_SUCCESS" and not n.startswith(STAGING)]


def test_tasks_stage_then_commit_publishes(store, monkeypatch):
    w = _writer(store)
    messages = [_write(w, monkeypatch, k, range(10 * k, 10 * k + 10)) for k in range(3)]
    # staged under _temporary/<job>/ only: nothing else is there
    assert store.names() and all(n.startswith(f"{STAGING}/{w.job}/") for n in store.names())
    assert store.seen() == set()
    w.commit(messages)
    names = store.names()
    assert not any(n.startswith(STAGING) for n in names)
    manifest = json.loads(store.fs.cat_file(f"{store.root}/_SUCCESS"))
    assert manifest["files"] == _data(names) and len(manifest["files"]) == 3
    assert store.seen() == set(range(30))


def test_append_keeps_the_old_files_and_an_empty_job_writes_one_file(store, monkeypatch):
    w = _writer(store)
    w.commit([_write(w, monkeypatch, 0, range(5))])
    w2 = _writer(store, overwrite=False)
    w2.commit([_write(w2, monkeypatch, 0, range(5, 9))])
    assert store.seen() == set(range(9))
    w3 = _writer(store)
    w3.commit([])  # an empty overwrite: one file with the schema and no rows
    assert store.seen() == set()
    assert len(json.loads(store.fs.cat_file(f"{store.root}/_SUCCESS"))["files"]) == 1


def test_a_failed_task_removes_what_it_staged(store, monkeypatch):
    import pyspark

    w = _writer(store, max_records_per_file=5)  # the first file is closed before the failure
    monkeypatch.setattr(pyspark.TaskContext, "get", staticmethod(lambda: TaskStandIn(0)))

    def batches():
        yield pa.record_batch({"v": pa.array(range(12), pa.int64())})
        raise RuntimeError("the task dies")

    with pytest.raises(RuntimeError, match="dies"):
        w.write(batches())
    assert store.names() == []


def test_abort_removes_every_attempt_reported_or_not(store, monkeypatch):
    w = _writer(store)
    reported = _write(w, monkeypatch, 0, range(10))
    _write(w, monkeypatch, 1, range(10, 20))  # killed: its message never came
    _write(w, monkeypatch, 0, range(10), attempt=1)  # a speculative twin
    assert len(store.names()) == 3
    w.abort([reported, None])
    assert store.names() == []


def test_commit_drops_unreported_attempts(store, monkeypatch):
    w = _writer(store)
    reported = _write(w, monkeypatch, 0, range(10))
    _write(w, monkeypatch, 0, range(100, 110), attempt=1)  # a twin the driver did not take
    w.commit([reported])
    assert store.seen() == set(range(10))
    assert len(_data(store.names())) == 1 and not any(
        n.startswith(STAGING) for n in store.names())


def test_overwrite_is_all_old_or_all_new_for_quiver_at_every_step(store, monkeypatch):
    w = _writer(store)
    w.commit([_write(w, monkeypatch, k, range(10 * k, 10 * k + 10)) for k in range(2)])
    old, new = set(range(20)), set(range(100, 130))
    states: list[set[int]] = []
    real_publish, real_remove = StagingWriter._publish, sink_module._remove

    def spying_publish(self, fs, root, pending):
        real_publish(self, fs, root, pending)
        states.append(store.seen())

    def spying_remove(fs, path):
        states.append(store.seen())
        real_remove(fs, path)

    w2 = _writer(store)
    messages = [_write(w2, monkeypatch, k, range(100 + 10 * k, 110 + 10 * k))
                for k in range(3)]
    monkeypatch.setattr(StagingWriter, "_publish", spying_publish)
    monkeypatch.setattr(sink_module, "_remove", spying_remove)
    w2.commit(messages)
    states.append(store.seen())
    assert len(states) >= 3 + 2 + 1
    assert all(s in (old, new) for s in states), states
    assert states[0] == old and states[-1] == new
    assert len(_data(store.names())) == 3  # the old objects are gone


def test_a_failed_commit_keeps_the_old_data(store, monkeypatch):
    w = _writer(store)
    w.commit([_write(w, monkeypatch, 0, range(5))])
    w2 = _writer(store)
    messages = [_write(w2, monkeypatch, k, range(50 + 10 * k, 60 + 10 * k))
                for k in range(2)]
    real_publish = StagingWriter._publish
    calls: list[str] = []

    def failing(self, fs, root, pending):
        calls.append(pending.relative)
        if len(calls) == 2:
            raise OSError("the store went away")
        real_publish(self, fs, root, pending)

    monkeypatch.setattr(StagingWriter, "_publish", failing)
    with pytest.raises(OSError, match="went away"):
        w2.commit(messages)
    w2.abort(messages)
    assert store.seen() == set(range(5))
    assert len(_data(store.names())) == 1
    assert not any(n.startswith(STAGING) for n in store.names())


def test_the_protocol_is_picked_by_the_store_and_the_option(s3):
    schema = qv.schema([("v", qv.int64())])
    memory = "memory://quiver-tests/pick"

    def pick(url, options, committer=None):
        return type(object_store_writer(url, WriteOptions(), schema, True, options,
                                        committer))

    assert pick(s3.url("x"), s3.options) is MultipartWriter
    assert pick(s3.url("x"), s3.options, "Staging") is StagingWriter
    assert pick(memory, {}) is StagingWriter
    assert pick(memory, {}, "auto") is StagingWriter
    with pytest.raises(qv.errors.NotSupported, match="committer=multipart"):
        pick(memory, {}, "multipart")
    with pytest.raises(qv.errors.ArrowInvalidArgument, match="found 'rename'"):
        pick(memory, {}, "rename")
    shown = s3.url("x").replace("s3://", f"s3://k:{SECRET}@")
    with pytest.raises(Exception) as info:
        object_store_writer(shown, WriteOptions(), schema, True, s3.options, "bogus")
    assert SECRET not in str(info.value)


def test_staging_on_s3_leaves_no_pending_upload(s3, monkeypatch):
    store = _Store(s3.url("ds"), s3.options, s3.fs())
    w = _writer(store)
    w.commit([_write(w, monkeypatch, 0, range(7))])
    assert pending_uploads(s3.fs(), store.root) == []
    assert store.seen() == set(range(7))
