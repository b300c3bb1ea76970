"""The Spark sink on object storage: commit protocols that need no rename.

A store like S3, GCS or Azure Blob has no rename, so the local protocol (write under
``_temporary``, move into place at commit) does not carry over.  Two protocols share one
driver side (:class:`_ManifestWriter`): tasks leave their files where no reader looks,
the driver **publishes** the reported ones, writes ``_SUCCESS`` as a JSON manifest of the
path's data files, deletes what an overwrite replaced, and cleans what the job left.

``committer=multipart`` (the default on ``s3://``; :class:`MultipartWriter`, after the
S3A "magic" committer):

- **task**: each file (rolled and hive-partitioned by
  :class:`~quiver.spark.sink.TaskFiles`) is written straight into a multipart upload to
  its **final key** (:class:`~quiver.fs.upload.PartUpload`: a part goes up each time
  8 MiB are buffered; nothing is spooled to disk), and left uncompleted: the object does
  not exist for any reader.  The commit message reports ``(key, upload id, parts)``.
  A task that fails aborts its uploads.
- **publish**: complete each upload.  **clean**: abort the pending uploads of this job
  that no message reported (failed, retried, speculative attempts), found by listing
  the pending uploads under the path (keys carry the job id).

``committer=staging`` (the default on every other fsspec store — ``gs://``,
``abfs://``, ``az://``, ...; :class:`StagingWriter`):

- **task**: each file is written through the store's own upload (GCS resumable upload,
  Azure staged blocks, S3 multipart: an object appears only when its upload completes)
  under ``_temporary/<job>/<task>-<attempt>/``, which every reader skips (a ``_`` name).
  A task that fails deletes what its attempt staged.
- **publish**: a server-side ``fs.copy`` of each staged file to its final key.
  **clean**: delete ``_temporary/<job>/`` (every attempt's files, reported or not).

The driver's commit, for both: if the path has no manifest yet, one listing the data
already there is written first (so that quiver's reader keeps seeing only the old data);
then every reported file is published and ``_SUCCESS`` rewritten to list every data file
the path holds after the commit (the old ones too in append mode); overwrite then
deletes the old objects.  If a step fails, the objects published so far are deleted, the
rest dropped, and the old manifest stays.  ``abort`` drops every file of the job.

quiver's reader, finding a manifest, reads only the files it lists: it never sees a
task's object before the job commits, nor old and new files mixed.  Other readers
(pyarrow.dataset, polars, duckdb) skip ``_SUCCESS`` and ``_temporary`` and list the
prefix: they never see an uncompleted upload or a staged file, but while the driver
publishes they may list some new objects beside the old ones — the commit is not atomic
for them (docs/object-storage.md).
"""

from __future__ import annotations

import contextlib
import json
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)

from .. import errors as E
from ..fs.errors import ObjectNotFound, retrying
from ..fs.upload import PART_SIZE, PartUpload, Upload, s3_call
from ..fs.url import filesystem, redact
from ..ipc.writer import BufferOutputStream, new_file, new_stream
from .objstore import MANIFEST_VERSION, storage_options
from .options import WriteOptions, job_overwrite_mode
from .paths import hidden_name
from .policy import from_spark_schema
from .sink import TaskFiles, write_all
from .streaming import LOG_DIR, number_option, stream_output_path

#: the commit protocols by the ``committer`` option (``auto``: by the store)
COMMITTERS = ("auto", "multipart", "staging")
#: the hidden directory the staging protocol writes tasks' files under
STAGING = "_temporary"
#: seconds between the cleans of an abort after the first (tasks Spark is killing)
ABORT_RECLEANS = (0.5, 1.0, 2.0)
#: how long a stream's abort waits for the killed tasks of its micro-batch before it
#: cleans again (option ``abortSettleSeconds``; above Spark's python task kill timeout)
ABORT_SETTLE_SECONDS = 5.0


@dataclass(frozen=True)
class PendingFile:
    """One file a task left for the driver to publish: its key relative to the output
    path, how to publish it (``upload_id`` and ``parts`` of an uncompleted multipart
    upload, or ``staged``: where it was written, relative to the output path), rows and
    bytes."""

    relative: str
    rows: int
    nbytes: int
    upload_id: str = ""
    parts: tuple[tuple[int, str], ...] = ()
    staged: str = ""


@dataclass(frozen=True)
class PendingCommitMessage(WriterCommitMessage):
    """What a successful task attempt reports: its files, not yet published."""

    files: tuple[PendingFile, ...]
    # spark.sql.sources.partitionOverwriteMode as the task saw it (the driver's Python
    # process that commits does not see session settings)
    overwrite_mode: str | None = None


def object_store_writer(path: str, options: Any, arrow_schema: Any, overwrite: bool,
                        storage_options: Mapping[str, Any], committer: str | None = None,
                        *, unique_attempts: bool = False) -> _ManifestWriter:
    """The sink's writer for ``path`` on object storage: ``committer`` (``auto``,
    ``multipart`` or ``staging``; see the module doc) picks the protocol; ``auto`` takes
    multipart uploads where the store has them (S3) and staging elsewhere.
    ``unique_attempts``: files are named by Spark's task attempt id, unique in the
    application (a stream's writer serves many micro-batches), not the attempt number."""
    choice = str(committer or "auto").strip().lower()
    if choice not in COMMITTERS:
        raise E.ArrowInvalidArgument(
            f"expected committer={', '.join(COMMITTERS[:-1])} or {COMMITTERS[-1]}, "
            f"found {committer!r}")
    fs, _ = filesystem(path, storage_options)
    s3 = hasattr(fs, "call_s3")
    if choice == "multipart" and not s3:
        raise E.NotSupported(
            f"expected a store with multipart uploads for committer=multipart at "
            f"{redact(path)} (s3:// through s3fs), found {type(fs).__name__}; leave the "
            "committer option out (staging is taken)")
    if choice == "multipart" or (choice == "auto" and s3):
        writer: _ManifestWriter = MultipartWriter(path, options, arrow_schema, overwrite,
                                                  storage_options)
    else:
        writer = StagingWriter(path, options, arrow_schema, overwrite, storage_options)
    writer.unique_attempts = unique_attempts
    return writer


class _ManifestWriter(DataSourceArrowWriter):
    """The driver side both protocols share (see the module doc); subclasses say how a
    task's file is written (:meth:`_sink`, :meth:`_pending`), published
    (:meth:`_publish`), dropped (:meth:`_drop`) and what the job leaves is cleaned
    (:meth:`_clean`)."""

    unique_attempts = False

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
        options.check_columns(names)
        missing = [c for c in options.partition_by if c not in names]
        if missing:
            raise E.ArrowInvalidArgument(
                f"expected partitionBy columns among {names}, found {missing}")
        if options.partition_by and len(options.partition_by) == len(names):
            raise E.ArrowInvalidArgument("expected at least one column outside partitionBy")

    # -- helpers ----------------------------------------------------------------------------
    def _fs(self) -> tuple[Any, str]:
        fs, root = filesystem(self.url, self.storage_options)
        fs.invalidate_cache()  # listings cached before this job are stale
        return fs, root.rstrip("/")

    def _url_of(self, relative: str) -> str:
        return f"{self.url}/{relative}"

    def _retrying(self, call: Any, relative: str) -> Any:
        return retrying(call, self._url_of(relative), doing="write",
                        options=self.storage_options)

    # -- executor side --------------------------------------------------------------------
    def write(self, iterator: Iterator[Any]) -> PendingCommitMessage:
        """Write this task's files where no reader looks (see the module doc); report
        them.  A failure drops every file of the attempt."""
        from pyspark import TaskContext

        ctx = TaskContext.get()
        task = ctx.partitionId() if ctx is not None else 0
        attempt = 0 if ctx is None else (
            ctx.taskAttemptId() if self.unique_attempts else ctx.attemptNumber())
        fs, root = self._fs()
        sinks: dict[str, Any] = {}

        def opener(relative: str) -> Any:
            sinks[relative] = self._sink(fs, root, task, attempt, relative)
            return sinks[relative]

        files = TaskFiles("", f"part-{task:05d}-{attempt}-{self.job}", self.options,
                          opener=opener)
        try:
            written = write_all(files, iterator)
            return PendingCommitMessage(tuple(
                self._pending(w.relative, sinks[w.relative], w.rows, w.nbytes)
                for w in written), None if ctx is None else
                ctx.getLocalProperty("spark.sql.sources.partitionOverwriteMode"))
        except BaseException:
            for relative, sink in sinks.items():
                self._drop(fs, root, self._pending(relative, sink, 0, 0))
            raise

    def _sink(self, fs: Any, root: str, task: int, attempt: int, relative: str) -> Any:
        raise NotImplementedError

    def _pending(self, relative: str, sink: Any, rows: int, nbytes: int) -> PendingFile:
        raise NotImplementedError

    # -- driver side ------------------------------------------------------------------------
    def _publish(self, fs: Any, root: str, pending: PendingFile) -> None:
        raise NotImplementedError

    def _drop(self, fs: Any, root: str, pending: PendingFile) -> None:
        raise NotImplementedError

    def _clean(self, fs: Any, root: str) -> None:
        raise NotImplementedError

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
        self._retrying(lambda: fs.pipe_file(f"{root}/_SUCCESS", body), "_SUCCESS")

    def _empty_file(self, fs: Any, root: str) -> str:
        name = f"part-00000-0-{self.job}" + (".arrows" if self.options.format == "stream"
                                             else ".arrow")
        sink = BufferOutputStream()
        opener = new_stream if self.options.format == "stream" else new_file
        opener(sink, self.arrow_schema).close()
        data = bytes(sink.getvalue())
        self._retrying(lambda: fs.pipe_file(f"{root}/{name}", data), name)
        return name

    def commit(self, messages: list[PendingCommitMessage | None]) -> None:
        """Publish the reported files and write the manifest (see the module doc)."""
        fs, root = self._fs()
        reported = [m for m in messages if m is not None]
        pending = [p for m in reported for p in m.files]
        had_manifest = _has_manifest(fs, root)
        old = self._data_files(fs, root)
        replaced = set(old) if self.overwrite else set()
        if self.overwrite and self.options.partition_by and job_overwrite_mode(
                self.options.partition_overwrite_mode,
                (getattr(m, "overwrite_mode", None) for m in reported)) == "dynamic":
            # only the partition directories this job writes are replaced
            written = {_directory(p.relative) for p in pending}
            replaced = {rel for rel in old if _directory(rel) in written}
        if not had_manifest and old:
            # quiver's readers see only the old data while the new objects appear
            self._manifest(fs, root, old)
        published: list[str] = []
        try:
            for p in pending:
                self._publish(fs, root, p)
                published.append(p.relative)
            if not pending:
                published.append(self._empty_file(fs, root))
            new = set(published)
            self._manifest(fs, root, sorted(new | (set(old) - replaced)))
        except BaseException:
            done = set(published)
            for p in pending:
                if p.relative not in done:
                    self._drop(fs, root, p)
            for rel in published:
                _remove(fs, f"{root}/{rel}")
            with contextlib.suppress(Exception):
                self._clean(fs, root)
            raise
        for rel in sorted(replaced - new):
            _remove(fs, f"{root}/{rel}")
        self._clean(fs, root)

    def abort(self, messages: list[PendingCommitMessage | None]) -> None:
        """Drop every file of this job, reported or not.  Spark calls abort as soon as a
        stage fails, while it is still killing the stage's other tasks: one of them may
        finish a file after the first clean, so the job's leftovers are cleaned again
        over the next few seconds (:data:`ABORT_RECLEANS`)."""
        fs, root = self._fs()
        for m in messages:
            if m is not None:
                for p in m.files:
                    self._drop(fs, root, p)
        self._clean(fs, root)
        for delay in ABORT_RECLEANS:
            time.sleep(delay)
            self._clean(fs, root)


class MultipartWriter(_ManifestWriter):
    """``committer=multipart``: uncompleted multipart uploads to the final keys, completed
    by the driver (S3; see the module doc)."""

    part_size = PART_SIZE

    def _s3(self, fs: Any, op: str, key: str, **kw: Any) -> Any:
        return s3_call(fs, op, key, url=f"{self.url.split('://')[0]}://{key}",
                       options=self.storage_options, **kw)

    def _sink(self, fs: Any, root: str, task: int, attempt: int, relative: str) -> Any:
        return PartUpload(fs, f"{root}/{relative}", url=self._url_of(relative),
                          options=self.storage_options, part_size=self.part_size)

    def _pending(self, relative: str, sink: Any, rows: int, nbytes: int) -> PendingFile:
        return PendingFile(relative, rows, nbytes, upload_id=sink.upload_id,
                           parts=sink.parts)

    def _publish(self, fs: Any, root: str, pending: PendingFile) -> None:
        self._s3(fs, "complete_multipart_upload", f"{root}/{pending.relative}",
                 UploadId=pending.upload_id,
                 MultipartUpload={"Parts": [{"PartNumber": n, "ETag": tag}
                                            for n, tag in pending.parts]})

    def _drop(self, fs: Any, root: str, pending: PendingFile) -> None:
        self._abort_one(fs, f"{root}/{pending.relative}", pending.upload_id)

    def _abort_one(self, fs: Any, key: str, upload_id: str) -> None:
        # (gone already: fine; a later listing of pending uploads catches the rest)
        with contextlib.suppress(E.ArrowError):
            self._s3(fs, "abort_multipart_upload", key, UploadId=upload_id)

    def _clean(self, fs: Any, root: str) -> None:
        """Abort the pending uploads of this job under the path (attempts that failed,
        were retried or were speculative, and were never reported)."""
        bucket = root.split("/", 1)[0]
        for key, upload in pending_uploads(fs, root):
            if self.job in key.rsplit("/", 1)[-1]:
                self._abort_one(fs, f"{bucket}/{key}", upload)


#: the name the commit protocol of s3:// had before the staging protocol came
ObjectStoreWriter = MultipartWriter


class StagingWriter(_ManifestWriter):
    """``committer=staging``: files staged under ``_temporary/<job>/``, copied into place
    by the driver (any fsspec store; see the module doc)."""

    def _staging(self, root: str) -> str:
        return f"{root}/{STAGING}/{self.job}"

    def _sink(self, fs: Any, root: str, task: int, attempt: int, relative: str) -> Any:
        staged = f"{STAGING}/{self.job}/{task:05d}-{attempt}/{relative}"
        return Upload(self._url_of(staged), self.storage_options, block_size=PART_SIZE)

    def _pending(self, relative: str, sink: Any, rows: int, nbytes: int) -> PendingFile:
        staged = sink.url[len(self.url) + 1:]
        return PendingFile(relative, rows, nbytes, staged=staged)

    def _publish(self, fs: Any, root: str, pending: PendingFile) -> None:
        source, target = f"{root}/{pending.staged}", f"{root}/{pending.relative}"
        self._retrying(lambda: fs.copy(source, target), pending.relative)

    def _drop(self, fs: Any, root: str, pending: PendingFile) -> None:
        _remove(fs, f"{root}/{pending.staged}")

    def _clean(self, fs: Any, root: str) -> None:
        """Delete ``_temporary/<job>/``: every attempt's staged files."""
        staging = self._staging(root)
        with contextlib.suppress(FileNotFoundError):
            self._retrying(lambda: fs.rm(staging, recursive=True), f"{STAGING}/{self.job}")
        with contextlib.suppress(Exception):  # the parent, when no other job stages there
            if not fs.ls(f"{root}/{STAGING}"):
                fs.rmdir(f"{root}/{STAGING}")


# -- the stream sink -------------------------------------------------------------------------


class ObjectStoreStreamWriter(DataSourceStreamArrowWriter):
    """``df.writeStream.format("arrow").start("s3://...")``: each micro-batch's files
    written by the object-store protocol of ``committer`` (as a batch job's, see the
    module doc), committed once per batch id through ``_quiver_log/<batch id>``.

    Spark makes a new writer for every commit and abort (and pickles the one it plans
    with to the tasks), so the driver side keeps no state and knows no job id of the
    tasks: what it cleans it finds by listing.

    Commit: the log entry, listing every reported file with what publishes it (upload id
    and parts, or staged key), is created **exclusively** (``If-None-Match: *`` on S3;
    fsspec's check-then-write elsewhere), then read back: the writer named in it holds the
    batch.  That entry is the commit point: the logged files are then published and
    everything else left unpublished under the path is dropped (unreported attempts,
    what earlier runs left; one query writes to a path, as with Spark's file sink).  A
    batch id whose entry another writer holds (a replay after a restart) drops its own
    files and finishes the logged ones not published yet.

    Abort: a hidden marker ``_temporary/<batch id>.aborted`` first, then every unlogged
    file under the path is dropped, and once more after ``abortSettleSeconds`` (a task
    killed as the batch fails may still have been starting one).  A task that finishes
    after the marker finds it and drops its own files.  Files of a batch whose entry
    exists (a commit that failed after its commit point) stay for the replay.  No
    ``_SUCCESS`` manifest is written: readers list the path, and see a batch's files
    appear one by one after its commit point, as with the local sink's moves."""

    def __init__(self, options: Any, spark_schema: Any, overwrite: bool) -> None:
        path = stream_output_path(options, overwrite)
        self.inner = object_store_writer(
            path, WriteOptions.parse(options), from_spark_schema(spark_schema), False,
            storage_options(options), options.get("committer"), unique_attempts=True)
        settle = number_option(options, "abortSettleSeconds", ABORT_SETTLE_SECONDS)
        self.abort_settle = float(ABORT_SETTLE_SECONDS if settle is None else settle)
        self.started = time.time()  # (markers older than the run do not apply to it)
        fs, root = self.inner._fs()
        if _has_manifest(fs, root):
            raise E.ArrowInvalidArgument(
                f"expected a stream's output path without a _SUCCESS manifest, found one at "
                f"{self.inner.shown}: a batch job's output, whose readers would see only the "
                "files it lists; write the stream to another path")

    # executor side
    def write(self, iterator: Iterator[Any]) -> PendingCommitMessage:
        """Write this task's files where no reader sees them; report them (none, and
        drop them, when the micro-batch was aborted while the task ran: the driver's
        abort may not have seen them)."""
        from pyspark import TaskContext

        message = self.inner.write(iterator)
        ctx = TaskContext.get()
        batch = ctx.getLocalProperty("streaming.sql.batchId") if ctx is not None else None
        if not message.files or batch is None or not batch.isdigit():
            return message
        fs, root = self.inner._fs()
        try:
            aborted_at = float(fs.cat_file(self._marker(root, int(batch))) or b"0")
        except (FileNotFoundError, ValueError):
            return message
        if aborted_at < self.started:
            return message  # an earlier run's abort of the same batch id
        for p in message.files:
            self.inner._drop(fs, root, p)
        return PendingCommitMessage(())

    # driver side
    def _marker(self, root: str, batch_id: int) -> str:
        return f"{root}/{STAGING}/{int(batch_id)}.aborted"

    def _entry(self, root: str, batch_id: int) -> str:
        return f"{root}/{LOG_DIR}/{int(batch_id)}"

    def _logged(self, fs: Any, entry: str) -> dict | None:
        relative = entry.rsplit("/", 2)[-2] + "/" + entry.rsplit("/", 1)[-1]
        try:
            raw = self.inner._retrying(lambda: fs.cat_file(entry), relative)
        except ObjectNotFound:
            return None
        try:
            logged = json.loads(raw)
            files = [PendingFile(f["relative"], int(f["rows"]), int(f["nbytes"]),
                                 f.get("upload_id", ""),
                                 tuple((int(n), str(tag)) for n, tag in f.get("parts", [])),
                                 f.get("staged", "")) for f in logged["files"]]
        except (ValueError, KeyError, TypeError):
            raise E.ArrowInvalid(
                f"{redact(self.inner._url_of(relative))}: expected a log entry of quiver's "
                "stream sink (JSON with batch, job and files), found other bytes") from None
        return {"job": logged.get("job"), "files": files}

    def _claim(self, fs: Any, entry: str, body: bytes) -> None:
        def create() -> None:
            try:
                fs.pipe_file(entry, body, mode="create")
            except FileExistsError:
                pass  # another writer's (or our earlier attempt's): read back below
            except TypeError:  # a filesystem whose pipe_file has no exclusive mode
                if not fs.exists(entry):
                    fs.pipe_file(entry, body)

        self.inner._retrying(create, f"{LOG_DIR}/{entry.rsplit('/', 1)[-1]}")

    def commit(self, messages: list[PendingCommitMessage | None], batchId: int) -> None:
        """Claim the batch id in the log, then publish its files (see the class doc)."""
        inner = self.inner
        fs, root = inner._fs()
        pending = [p for m in messages if m is not None for p in m.files]
        entry = self._entry(root, batchId)
        body = json.dumps({"batch": int(batchId), "job": inner.job,
                           "files": [asdict(p) for p in pending]}, indent=1).encode()
        self._claim(fs, entry, body)
        logged = self._logged(fs, entry)
        if logged is None:  # (a store that lost what it just acknowledged)
            raise E.ArrowInvalid(f"{redact(inner._url_of(LOG_DIR))}: expected the log "
                                 f"entry of batch {batchId} just written, found none")
        if logged["job"] != inner.job:  # a replay: the logged files are the batch's
            for p in pending:
                inner._drop(fs, root, p)
        for p in logged["files"]:
            self._finish(fs, root, p)
        self._sweep(fs, root, (), markers=True)

    def _finish(self, fs: Any, root: str, pending: PendingFile) -> None:
        """Publish one logged file unless it is published already (idempotent)."""
        try:
            self.inner._publish(fs, root, pending)
        except E.ArrowError:
            if not fs.exists(f"{root}/{pending.relative}"):
                raise  # neither published nor publishable: the error says why
        if pending.staged:
            _remove(fs, f"{root}/{pending.staged}")

    def _sweep(self, fs: Any, root: str, keep: Sequence[PendingFile], *,
               markers: bool) -> None:
        """Drop every unpublished file under the path but ``keep``: pending uploads of
        quiver's part files (S3), files under ``_temporary/`` (with the abort markers
        when ``markers``)."""
        kept_uploads = {p.upload_id for p in keep if p.upload_id}
        kept_staged = {f"{root}/{p.staged}" for p in keep if p.staged}
        if hasattr(fs, "call_s3"):
            bucket = root.split("/", 1)[0]
            for key, upload in pending_uploads(fs, root):
                if key.rsplit("/", 1)[-1].startswith("part-") and upload not in kept_uploads:
                    with contextlib.suppress(Exception):
                        fs.call_s3("abort_multipart_upload", Bucket=bucket, Key=key,
                                   UploadId=upload)
        fs.invalidate_cache()
        try:
            staged = fs.find(f"{root}/{STAGING}")
        except FileNotFoundError:
            staged = []
        for path in staged:
            if path in kept_staged or (path.endswith(".aborted") and not markers):
                continue
            _remove(fs, path)
        if markers and not kept_staged:
            with contextlib.suppress(Exception):
                fs.rm(f"{root}/{STAGING}", recursive=True)

    def abort(self, messages: list[PendingCommitMessage | None], batchId: int) -> None:
        """Drop this micro-batch's files (see the class doc)."""
        inner = self.inner
        fs, root = inner._fs()
        # first the marker, then the listing: a task that finishes after the listing
        # finds the marker and drops its own files
        inner._retrying(lambda: fs.pipe_file(self._marker(root, batchId),
                                             repr(time.time()).encode()),
                        f"{STAGING}/{int(batchId)}.aborted")
        logged = self._logged(fs, self._entry(root, batchId))
        keep = logged["files"] if logged is not None else []
        kept = {(p.relative, p.upload_id, p.staged) for p in keep}
        for m in messages:
            for p in (m.files if m is not None else ()):
                if (p.relative, p.upload_id, p.staged) not in kept:
                    inner._drop(fs, root, p)
        self._sweep(fs, root, keep, markers=False)
        # a task Spark kills as the batch fails may have started a file before the
        # marker and die (its Python worker is killed after spark.python.task.killTimeout,
        # 2 s) before it can drop it: once that time has passed, sweep again
        if self.abort_settle > 0:
            time.sleep(self.abort_settle)
            self._sweep(fs, root, keep, markers=False)

def _directory(relative: str) -> str:
    """The directory part of a path relative to the output path ("" at its root)."""
    return relative.rpartition("/")[0]


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


__all__ = ["COMMITTERS", "PART_SIZE", "STAGING", "MultipartWriter", "ObjectStoreStreamWriter",
           "ObjectStoreWriter",
           "PendingCommitMessage", "PendingFile", "StagingWriter", "object_store_writer",
           "pending_uploads"]
