"""The object-store commit protocol of the Spark sink, step by step without a Spark
session (the writer's task and driver sides called directly, as Spark calls them): a
killed attempt's uploads are cleaned by abort, an unreported attempt's by commit, and
quiver's reader sees all-old or all-new data at every step of an overwrite."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import quiver.ipc as ipc

pytest.importorskip("pyspark")

from quiver.spark import objstore
from quiver.spark import objstore_sink as sink_module
from quiver.spark.objstore_sink import ObjectStoreWriter, pending_uploads
from quiver.spark.source import WriteOptions

from .conftest import TaskStandIn


def _batch(values) -> pa.RecordBatch:
    return pa.record_batch({"v": pa.array(values, pa.int64())})


def _writer(s3, url: str, overwrite: bool = True) -> ObjectStoreWriter:
    import quiver as qv

    return ObjectStoreWriter(url, WriteOptions(), qv.schema([("v", qv.int64())]), overwrite,
                             s3.options)


def _as_task(monkeypatch, task: int, attempt: int = 0) -> None:
    import pyspark

    monkeypatch.setattr(pyspark.TaskContext, "get",
                        staticmethod(lambda: TaskStandIn(task, attempt)))


def _write(w, monkeypatch, task: int, values, attempt: int = 0):
    """Task ``task``'s attempt writing ``values`` (what Spark's executor calls)."""
    _as_task(monkeypatch, task, attempt)
    return w.write(iter([_batch(values)]))


def _root(url: str) -> str:
    return url[len("s3://"):]


def _visible(s3, url: str) -> list[str]:
    fs = s3.fs()
    fs.invalidate_cache()
    try:
        return sorted(p[len(_root(url)) + 1:] for p in fs.find(_root(url)))
    except FileNotFoundError:
        return []


def _seen(s3, url: str) -> set[int]:
    """What quiver's reader sees at ``url`` now (listing, manifest, every file)."""
    s3.fs().invalidate_cache()
    files = objstore.list_files([url], s3.options)
    out: set[int] = set()
    for f in files:
        out |= set(ipc.read_table(f.path, storage_options=s3.options).column("v").to_pylist())
    return out


def test_abort_after_a_killed_attempt_cleans_its_uploads(s3):
    url = s3.url("killed")
    w = _writer(s3, url)
    w.write(iter([_batch(range(100))]))  # the message never reaches the driver
    assert len(pending_uploads(s3.fs(), _root(url))) == 1
    assert _visible(s3, url) == []  # an uncompleted upload is no object
    w.abort([])
    assert pending_uploads(s3.fs(), _root(url)) == []
    assert _visible(s3, url) == []


def test_commit_aborts_unreported_attempts(s3, monkeypatch):
    url = s3.url("spec")
    w = _writer(s3, url)
    reported = _write(w, monkeypatch, 0, range(10))
    _write(w, monkeypatch, 0, range(10, 20), attempt=1)  # a speculative twin, unreported
    assert len(pending_uploads(s3.fs(), _root(url))) == 2
    w.commit([reported, None])
    assert pending_uploads(s3.fs(), _root(url)) == []
    assert _seen(s3, url) == set(range(10))


def test_a_task_failure_aborts_its_own_uploads(s3):
    url = s3.url("taskfail")
    w = _writer(s3, url)

    def batches():
        yield _batch(range(10))
        raise RuntimeError("the task dies")

    with pytest.raises(RuntimeError):
        w.write(batches())
    assert pending_uploads(s3.fs(), _root(url)) == []


@pytest.mark.parametrize("old_with_manifest", [True, False])
def test_overwrite_is_all_old_or_all_new_at_every_step(s3, monkeypatch, old_with_manifest):
    url = s3.url("ow")
    old, new = set(range(0, 30)), set(range(100, 160))
    if old_with_manifest:
        w = _writer(s3, url)
        w.commit([_write(w, monkeypatch, 0, range(0, 15)),
                  _write(w, monkeypatch, 1, range(15, 30))])
    else:  # data some other tool wrote, no manifest
        for k, part in enumerate((range(0, 15), range(15, 30))):
            table = pa.table({"v": pa.array(part, pa.int64())})
            sink = pa.BufferOutputStream()
            with pa.ipc.new_file(sink, table.schema) as fw:
                fw.write_table(table)
            s3.fs().pipe_file(f"{_root(url)}/old-{k}.arrow", sink.getvalue().to_pybytes())
    assert _seen(s3, url) == old
    states: list[set[int]] = []
    real_s3, real_remove = ObjectStoreWriter._s3, sink_module._remove

    def spying_s3(self, fs, op, key, **kw):
        out = real_s3(self, fs, op, key, **kw)
        if op == "complete_multipart_upload":
            states.append(_seen(s3, url))
        return out

    def spying_remove(fs, path):
        states.append(_seen(s3, url))
        real_remove(fs, path)

    w = _writer(s3, url)
    messages = [_write(w, monkeypatch, k, np.arange(100 + 20 * k, 120 + 20 * k))
                for k in range(3)]
    states.append(_seen(s3, url))
    monkeypatch.setattr(ObjectStoreWriter, "_s3", spying_s3)
    monkeypatch.setattr(sink_module, "_remove", spying_remove)
    w.commit(messages)
    states.append(_seen(s3, url))
    assert len(states) >= 3 + 2 + 2
    assert all(s in (old, new) for s in states), states
    assert states[0] == old and states[-1] == new
    assert pending_uploads(s3.fs(), _root(url)) == []
    assert not any(n.startswith("old-") for n in _visible(s3, url))


def test_a_failed_commit_keeps_the_old_data(s3, monkeypatch):
    url = s3.url("failcommit")
    w = _writer(s3, url)
    w.commit([_write(w, monkeypatch, 0, range(5))])
    w2 = _writer(s3, url)
    messages = [_write(w2, monkeypatch, 0, range(50, 60)), _write(w2, monkeypatch, 1,
                                                                   range(60, 70))]
    real_s3 = ObjectStoreWriter._s3
    calls = []

    def failing(self, fs, op, key, **kw):
        if op == "complete_multipart_upload":
            calls.append(key)
            if len(calls) == 2:
                raise OSError("the store went away")
        return real_s3(self, fs, op, key, **kw)

    monkeypatch.setattr(ObjectStoreWriter, "_s3", failing)
    with pytest.raises(OSError, match="went away"):
        w2.commit(messages)
    monkeypatch.setattr(ObjectStoreWriter, "_s3", real_s3)
    w2.abort(messages)
    assert _seen(s3, url) == set(range(5))
    assert pending_uploads(s3.fs(), _root(url)) == []
