"""The Spark sink on object storage: a commit protocol that needs no rename.

A store like S3 has no rename, so the local protocol (write under ``_temporary``, move
into place at commit) does not carry over.  This one is the S3A "magic" committer's:

- **task**: each task attempt writes its files (rolled and hive-partitioned as locally:
  :class:`~quiver.spark.sink.TaskFiles`, spooled in a local temporary directory) and
  uploads each as a multipart upload to its **final key**, without completing it: the
  object does not exist yet for any reader.  The commit message reports
  ``(key, upload id, parts)`` of each file.  A task that fails aborts its uploads.
- **job commit** (driver): if the path has no manifest yet, one listing the data already
  there is written first (so that quiver's reader keeps seeing only the old data); then
  every reported upload is completed, and ``_SUCCESS`` is written as a JSON manifest of
  every data file the path holds after the commit (the old ones too in append mode).
  Overwrite then deletes the old objects.  Pending uploads of this job that no message
  reported (failed, retried or speculative attempts) are aborted.  If a step fails, the
  objects completed so far are deleted, the others aborted, and the old manifest stays.
- **abort**: the reported uploads are aborted, and the store's pending uploads under the
  prefix are listed to abort those of this job's unreported attempts.

quiver's reader, finding a manifest, reads only the files it lists: it never sees a
task's object before the job commits, nor old and new files mixed.  Other readers
(pyarrow.dataset, polars, duckdb) skip ``_SUCCESS`` and list the prefix: they never see
an uncompleted upload, but during an overwrite's commit they may list old and new
objects together (docs/object-storage.md).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage

from .. import errors as E
from ..fs.errors import ObjectNotFound, retrying
from ..fs.url import filesystem, redact
from ..ipc.writer import BufferOutputStream, new_file, new_stream
from .objstore import MANIFEST_VERSION
from .paths import hidden_name
from .sink import TaskFiles

#: the size of each uploaded part but the last (S3's minimum is 5 MiB)
PART_SIZE = 8 << 20


@dataclass(frozen=True)
class PendingFile:
    """One file a task uploaded without completing: its key relative to the output
    path, the upload id, the parts ``(number, ETag)``, rows and bytes."""

    relative: str
    upload_id: str
    parts: tuple[tuple[int, str], ...]
    rows: int
    nbytes: int


@dataclass(frozen=True)
class PendingCommitMessage(WriterCommitMessage):
    """What a successful task attempt reports: its pending uploads."""

    files: tuple[PendingFile, ...]


class ObjectStoreWriter(DataSourceArrowWriter):
    """``df.write.format("arrow").save("s3://...")``: see the module doc."""

    def __init__(self, path: str, options: Any, arrow_schema: Any, overwrite: bool,
                 storage_options: Mapping[str, Any]) -> None:
        self.url = path.rstrip("/")
        self.shown = redact(self.url)
        self.options = options
        self.arrow_schema = arrow_schema
        self.overwrite = overwrite
        self.storage_options = dict(storage_options)
        self.job = uuid.uuid4().hex[:16]
        names = arrow_schema.names
        missing = [c for c in options.partition_by if c not in names]
        if missing:
            raise E.ArrowInvalidArgument(
                f"expected partitionBy columns among {names}, found {missing}")
        if options.partition_by and len(options.partition_by) == len(names):
            raise E.ArrowInvalidArgument("expected at least one column outside partitionBy")
        fs, _ = self._fs()
        if not hasattr(fs, "call_s3"):
            raise E.NotSupported(
                f"expected a store with multipart uploads to write {self.shown} from Spark "
                "(s3:// through s3fs), found another filesystem; write to s3:// or a "
                "shared filesystem path")

    # -- helpers ----------------------------------------------------------------------------
    def _fs(self) -> tuple[Any, str]:
        fs, root = filesystem(self.url, self.storage_options)
        fs.invalidate_cache()  # listings cached before this job are stale
        return fs, root.rstrip("/")

    def _s3(self, fs: Any, op: str, key: str, **kw: Any) -> Any:
        bucket, _, name = key.partition("/")
        return retrying(lambda: fs.call_s3(op, Bucket=bucket, Key=name, **kw),
                        f"{self.url.split('://')[0]}://{key}", doing="write",
                        options=self.storage_options)

    # -- executor side --------------------------------------------------------------------
    def write(self, iterator: Iterator[Any]) -> PendingCommitMessage:
        """Write this task's files, each as an uncompleted multipart upload to its final
        key; report them."""
        from pyspark import TaskContext

        ctx = TaskContext.get()
        task = ctx.partitionId() if ctx is not None else 0
        attempt = ctx.attemptNumber() if ctx is not None else 0
        spool = tempfile.mkdtemp(prefix="quiver-task-")
        files = TaskFiles(spool, f"part-{task:05d}-{attempt}-{self.job}", self.options)
        fs, root = self._fs()
        staged: list[PendingFile] = []
        try:
            for batch in iterator:
                files.write(batch)
            for written in files.close():
                staged.append(self._stage(fs, root, spool, written))
        except BaseException:
            files.abort()
            for pending in staged:
                self._abort_one(fs, root, pending.relative, pending.upload_id)
            raise
        finally:
            shutil.rmtree(spool, ignore_errors=True)
        return PendingCommitMessage(tuple(staged))

    def _stage(self, fs: Any, root: str, spool: str, written: Any) -> PendingFile:
        relative = written.relative.replace("\\", "/")
        key = f"{root}/{relative}"
        upload = self._s3(fs, "create_multipart_upload", key)["UploadId"]
        parts: list[tuple[int, str]] = []
        try:
            with open(f"{spool}/{written.relative}", "rb") as f:
                number = 1
                while True:
                    data = f.read(PART_SIZE)
                    if not data and parts:
                        break
                    out = self._s3(fs, "upload_part", key, UploadId=upload,
                                   PartNumber=number, Body=data)
                    parts.append((number, out["ETag"]))
                    number += 1
                    if len(data) < PART_SIZE:
                        break
        except BaseException:
            self._abort_one(fs, root, relative, upload)
            raise
        return PendingFile(relative, upload, tuple(parts), written.rows, written.nbytes)

    def _abort_one(self, fs: Any, root: str, relative: str, upload_id: str) -> None:
        # (gone already: fine; a later listing of pending uploads catches the rest)
        with contextlib.suppress(E.ArrowError):
            self._s3(fs, "abort_multipart_upload", f"{root}/{relative}", UploadId=upload_id)

    # -- driver side ------------------------------------------------------------------------
    def _data_files(self, fs: Any, root: str) -> list[str]:
        """The data files the path holds now: the manifest's, or a listing's."""
        try:
            raw = fs.cat_file(f"{root}/_SUCCESS")
            manifest = json.loads(raw) if raw.strip() else None
        except FileNotFoundError:
            manifest = None
        except ValueError:
            manifest = None
        if isinstance(manifest, dict) and isinstance(manifest.get("files"), list):
            return [str(f) for f in manifest["files"]]
        try:
            found = retrying(lambda: fs.find(root), self.shown, options=self.storage_options)
        except ObjectNotFound:
            return []
        out = []
        for path in found:
            rel = path[len(root):].strip("/")
            if rel and not any(hidden_name(p) for p in rel.split("/")):
                out.append(rel)
        return sorted(out)

    def _manifest(self, fs: Any, root: str, files: list[str]) -> None:
        body = json.dumps({"version": MANIFEST_VERSION, "job": self.job,
                           "files": sorted(files)}, indent=1).encode()
        retrying(lambda: fs.pipe_file(f"{root}/_SUCCESS", body),
                 f"{self.url}/_SUCCESS", doing="write", options=self.storage_options)

    def _empty_file(self, fs: Any, root: str) -> str:
        name = f"part-00000-0-{self.job}" + (".arrows" if self.options.format == "stream"
                                             else ".arrow")
        sink = BufferOutputStream()
        opener = new_stream if self.options.format == "stream" else new_file
        opener(sink, self.arrow_schema).close()
        data = bytes(sink.getvalue())
        retrying(lambda: fs.pipe_file(f"{root}/{name}", data), f"{self.url}/{name}",
                 doing="write", options=self.storage_options)
        return name

    def commit(self, messages: list[PendingCommitMessage | None]) -> None:
        """Complete the reported uploads and write the manifest (see the module doc)."""
        fs, root = self._fs()
        pending = [p for m in messages if m is not None for p in m.files]
        had_manifest = _has_manifest(fs, root)
        old = self._data_files(fs, root)
        if not had_manifest and old:
            # quiver's readers see only the old data while the new objects appear
            self._manifest(fs, root, old)
        completed: list[str] = []
        try:
            for p in pending:
                self._s3(fs, "complete_multipart_upload", f"{root}/{p.relative}",
                         UploadId=p.upload_id,
                         MultipartUpload={"Parts": [{"PartNumber": n, "ETag": tag}
                                                    for n, tag in p.parts]})
                completed.append(p.relative)
            if not pending:
                completed.append(self._empty_file(fs, root))
            new = set(completed)
            self._manifest(fs, root, sorted(new if self.overwrite else new | set(old)))
        except BaseException:
            done = set(completed)
            for p in pending:
                if p.relative not in done:
                    self._abort_one(fs, root, p.relative, p.upload_id)
            for rel in completed:
                _remove(fs, f"{root}/{rel}")
            raise
        if self.overwrite:
            for rel in old:
                if rel not in new:
                    _remove(fs, f"{root}/{rel}")
        self._abort_unreported(fs, root)

    def abort(self, messages: list[PendingCommitMessage | None]) -> None:
        """Abort every upload of this job, reported or not."""
        fs, root = self._fs()
        for m in messages:
            if m is not None:
                for p in m.files:
                    self._abort_one(fs, root, p.relative, p.upload_id)
        self._abort_unreported(fs, root)

    def _abort_unreported(self, fs: Any, root: str) -> None:
        """Abort the pending uploads of this job under the path (attempts that failed,
        were retried or were speculative, and were never reported)."""
        for key, upload in pending_uploads(fs, root):
            if self.job in key.rsplit("/", 1)[-1]:
                bucket = root.split("/", 1)[0]
                self._abort_one(fs, bucket, key, upload)


def _has_manifest(fs: Any, root: str) -> bool:
    try:
        return bool(fs.cat_file(f"{root}/_SUCCESS").strip())
    except FileNotFoundError:
        return False


def _remove(fs: Any, path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        fs.rm_file(path)


def pending_uploads(fs: Any, root: str) -> list[tuple[str, str]]:
    """``(key, upload id)`` of the multipart uploads pending under ``root``
    (``bucket/prefix``)."""
    bucket, _, prefix = root.partition("/")
    out: list[tuple[str, str]] = []
    kw: dict[str, Any] = {"Bucket": bucket, "Prefix": prefix.rstrip("/") + "/" if prefix
                          else ""}
    while True:
        page = fs.call_s3("list_multipart_uploads", **kw)
        out += [(u["Key"], u["UploadId"]) for u in page.get("Uploads", [])]
        if not page.get("IsTruncated"):
            return out
        kw["KeyMarker"] = page.get("NextKeyMarker")
        kw["UploadIdMarker"] = page.get("NextUploadIdMarker")


__all__ = ["PART_SIZE", "ObjectStoreWriter", "PendingCommitMessage", "PendingFile",
           "pending_uploads"]
