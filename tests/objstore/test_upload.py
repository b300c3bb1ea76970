"""Uploads written as they are written: :class:`PartUpload` sends a part each time its
buffer fills (memory bounded by a few parts), leaves the upload uncompleted on close,
and aborts it on discard; the Spark sink's S3 tasks stream through it (no local spool),
and a task that fails leaves no object and no pending upload."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import quiver as qv
import quiver.ipc as ipc
from quiver.fs.upload import PARTS_IN_FLIGHT, PartUpload, Upload

pytest.importorskip("pyspark")

from quiver.spark.objstore_sink import MultipartWriter, pending_uploads
from quiver.spark.source import WriteOptions

from .conftest import TaskStandIn

MiB = 1 << 20
PART = 5 * MiB  # S3's smallest part


def _key(url: str) -> str:
    return url[len("s3://"):]


def _complete(s3, url: str, up: PartUpload) -> None:
    bucket, _, name = _key(url).partition("/")
    s3.fs().call_s3("complete_multipart_upload", Bucket=bucket, Key=name,
                    UploadId=up.upload_id,
                    MultipartUpload={"Parts": [{"PartNumber": n, "ETag": e}
                                               for n, e in up.parts]})


def test_parts_go_up_as_the_buffer_fills(s3, monkeypatch):
    url = s3.url("parts.bin")
    up = PartUpload(s3.fs(), _key(url), url=url, options=s3.options, part_size=PART)
    data = np.random.default_rng(1).integers(0, 256, 13 * MiB, dtype=np.uint8).tobytes()
    held, buffered = [], []
    for start in range(0, len(data), MiB // 2):
        up.write(data[start:start + MiB // 2])
        held.append(len(up._buffer) + PART * len(up._inflight))
        buffered.append(len(up._buffer))
    # two full parts were sent before close; the buffer never held a part and a half
    assert len(up._done) + len(up._inflight) == 2
    assert max(held) <= PART * (PARTS_IN_FLIGHT + 1)
    assert max(buffered) < PART
    assert up.tell() == len(data)
    up.close()
    assert [n for n, _ in up.parts] == [1, 2, 3]
    s3.fs().invalidate_cache()
    assert not s3.fs().exists(url)  # closed, not completed: no object yet
    assert len(pending_uploads(s3.fs(), _key(url).rsplit("/", 1)[0])) == 1
    _complete(s3, url, up)
    assert s3.fs().cat_file(url) == data


def test_an_empty_upload_is_one_empty_part(s3):
    url = s3.url("empty.bin")
    up = PartUpload(s3.fs(), _key(url), url=url, options=s3.options, part_size=PART)
    up.close()
    assert len(up.parts) == 1
    _complete(s3, url, up)
    assert s3.fs().cat_file(url) == b""


def test_discard_leaves_no_pending_upload(s3):
    url = s3.url("dropped.bin")
    up = PartUpload(s3.fs(), _key(url), url=url, options=s3.options, part_size=PART)
    up.write(b"x" * (PART + 10))
    up.discard()
    assert pending_uploads(s3.fs(), _key(url).rsplit("/", 1)[0]) == []
    with pytest.raises(qv.errors.ArrowInvalidArgument, match="closed"):
        up.write(b"more")


def test_an_ipc_writer_on_a_part_upload_never_seeks(s3):
    url = s3.url("w.arrow")
    up = PartUpload(s3.fs(), _key(url), url=url, options=s3.options, part_size=PART)
    assert not hasattr(up, "seek")  # the writers' pipelined path needs a real file
    table = qv.table({"x": np.arange(2_000_000, dtype=np.int64)})  # ~16 MiB: 3 parts
    with ipc.new_file(up, table.schema) as w:
        w.write_table(table)
    up.close()
    assert len(up.parts) == 4
    _complete(s3, url, up)
    assert ipc.read_table(url, storage_options=s3.options).equals(table)


def test_upload_tells_and_closes(s3):
    url = s3.url("plain.bin")
    up = Upload(url, s3.options)
    up.write(b"abc")
    assert up.tell() == 3
    up.close()
    assert s3.fs().cat_file(url) == b"abc"


def test_a_task_streams_its_file_part_by_part(s3, monkeypatch):
    import pyspark

    monkeypatch.setattr(pyspark.TaskContext, "get", staticmethod(lambda: TaskStandIn()))
    monkeypatch.setattr(MultipartWriter, "part_size", PART)
    sent: list[int] = []
    real_send = PartUpload._send

    def spying(self, part):
        sent.append(self.written)
        real_send(self, part)

    monkeypatch.setattr(PartUpload, "_send", spying)
    url = s3.url("stream")
    w = MultipartWriter(url, WriteOptions(batch_rows=100_000),
                        qv.schema([("v", qv.int64())]), True, s3.options)
    batches = [pa.record_batch({"v": pa.array(np.arange(k, k + 100_000))})
               for k in range(0, 2_000_000, 100_000)]  # 16 MB in 20 batches
    message = w.write(iter(batches))
    (pending,) = message.files
    # the first part went up while the task had most of its rows still to write
    assert sent[0] < pending.nbytes / 2 and len(pending.parts) == len(sent) >= 3
    w.commit([message])
    assert pending_uploads(s3.fs(), _key(url)) == []
    back = ipc.read_table(f"{url}/{pending.relative}", storage_options=s3.options)
    assert back.num_rows == 2_000_000


def test_a_task_failing_mid_file_aborts_its_uploads(s3, monkeypatch):
    import pyspark

    monkeypatch.setattr(pyspark.TaskContext, "get", staticmethod(lambda: TaskStandIn()))
    monkeypatch.setattr(MultipartWriter, "part_size", PART)
    url = s3.url("dies")
    w = MultipartWriter(url, WriteOptions(batch_rows=100_000, max_records_per_file=300_000),
                        qv.schema([("v", qv.int64())]), True, s3.options)

    def batches():
        for k in range(0, 1_000_000, 100_000):  # 3 closed files and one open
            yield pa.record_batch({"v": pa.array(np.arange(k, k + 100_000))})
        raise RuntimeError("the task dies")

    with pytest.raises(RuntimeError, match="dies"):
        w.write(batches())
    assert pending_uploads(s3.fs(), _key(url)) == []
    s3.fs().invalidate_cache()
    assert not s3.fs().exists(_key(url))
