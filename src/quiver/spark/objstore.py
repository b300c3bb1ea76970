"""The Spark source over object storage (``load("s3://bucket/prefix/")``): listing,
layouts and reads through fsspec, each executor fetching its own byte ranges.

Options: every Spark option named ``storage.<key>`` is a storage option (fsspec's, as
pandas and polars take them: ``.option("storage.endpoint_url", "http://...")``; a dotted
key nests, ``storage.client_kwargs.region_name``); without them the environment's
standard variables (``AWS_ACCESS_KEY_ID``, ``AWS_ENDPOINT_URL``, ...) apply.

Listing follows the local rules (hidden and ``_`` names skipped, ``key=value``
directories as hive partitions, files recognised by their first bytes), with one
addition: a directory whose ``_SUCCESS`` object is a manifest written by quiver's
object-store commit (:mod:`quiver.spark.objstore_sink`) is read as exactly the files it
lists, so a reader never sees the objects of a job that has not committed, nor old and
new files mixed during an overwrite.

The storage options of a read reach the executors with the reader; the module keeps
them per URL root (``scheme://bucket``) for :mod:`quiver.spark.plan`'s hooks.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime
from typing import Any

from .. import errors as E
from ..fs.errors import ObjectNotFound, StorageError, retrying
from ..fs.ranged import RangedObject, ReadAheadBytes
from ..fs.url import filesystem, is_remote_url, is_url, parse_storage_options, redact
from ..ipc import index as ipc_index
from ..ipc.file_decoder import FileDecoder
from ..ipc.framing import describe_foreign
from ..ipc.index import detect_format
from .paths import DataFile, hidden_name, partition_of_directories

#: the prefix of the Spark options that are storage options
PREFIX = "storage."
#: the manifest version quiver writes in ``_SUCCESS``
MANIFEST_VERSION = 1

_OPTIONS: dict[str, dict[str, Any]] = {}
_LOCK = threading.Lock()


def storage_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The ``storage.*`` Spark options as fsspec storage options (Spark lower-cases
    option keys; values are strings, ``true``/``false`` and numbers converted)."""
    pairs = [f"{k[len(PREFIX):]}={v}" for k, v in options.items()
             if str(k).lower().startswith(PREFIX)]
    return parse_storage_options(pairs)


def root_of(url: str) -> str:
    """``scheme://bucket`` of a URL."""
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}"


def register(urls: Sequence[str], options: Mapping[str, Any]) -> None:
    """Remember ``options`` for the roots of ``urls`` (driver and executors alike)."""
    with _LOCK:
        for url in urls:
            if is_url(url):
                _OPTIONS[root_of(url)] = dict(options)


def options_for(url: str) -> dict[str, Any]:
    """The storage options registered for ``url``'s root (none: the environment's)."""
    with _LOCK:
        return dict(_OPTIONS.get(root_of(url), {}))


def any_url(paths: Sequence[str]) -> bool:
    """Whether the paths are URLs (all of them: a read mixes no local paths in)."""
    urls = [is_remote_url(p) for p in paths]
    if any(urls) and not all(urls):
        raise E.ArrowInvalidArgument(
            "expected paths that are all URLs or all local, found both")
    return bool(urls) and all(urls)


# -- listing ---------------------------------------------------------------------------


def _join(scheme: str, path: str) -> str:
    return f"{scheme}://{path}"


def _relative_parts(root: str, path: str) -> list[str]:
    rel = path[len(root):].strip("/") if path.startswith(root) else path.rsplit("/", 1)[-1]
    return rel.split("/") if rel else []


def _partition(parts: list[str], where: str) -> tuple[tuple[str, str | None], ...]:
    return partition_of_directories(parts[:-1], where)


def _manifest(fs: Any, root: str, shown: str, options: Mapping[str, Any]) -> list[str] | None:
    """The files ``root/_SUCCESS`` lists, or None (no such object, or Spark's empty
    marker)."""
    marker = f"{root.rstrip('/')}/_SUCCESS"
    try:
        data = retrying(lambda: fs.cat_file(marker), shown + "/_SUCCESS", options=options)
    except ObjectNotFound:
        return None
    if not data.strip():
        return None
    try:
        manifest = json.loads(data)
        files = manifest["files"]
        if manifest.get("version") != MANIFEST_VERSION or not isinstance(files, list):
            raise ValueError("unknown manifest")
    except (ValueError, KeyError, TypeError):
        raise E.ArrowInvalid(
            f"{shown}/_SUCCESS: expected a manifest of quiver's object-store commit (JSON "
            "with version and files) or an empty marker, found other bytes") from None
    return [str(f) for f in files]


def _sniff_all(fs: Any, scheme: str, paths: list[str], options: Mapping[str, Any],
               empty: frozenset[str] = frozenset()) -> list[bytes]:
    """The first 64 bytes of each object (those in ``empty`` have none: a ranged GET of
    an empty object is refused)."""
    def head(path: str) -> bytes:
        if path in empty:
            return b""
        return retrying(lambda: fs.cat_file(path, start=0, end=64), _join(scheme, path),
                        (0, 64), options=options)

    if len(paths) <= 1:
        return [head(p) for p in paths]
    with ThreadPoolExecutor(max_workers=min(16, len(paths))) as pool:
        return list(pool.map(head, paths))


def list_files(paths: Sequence[str], options: Mapping[str, Any], *,
               keep: Callable[[str], bool] | None = None,
               partitions: bool = True, base_path: str | None = None) -> list[DataFile]:
    """Every Arrow IPC object under the URLs ``paths`` (objects, prefixes or globs), in
    sorted order per path; a ``_SUCCESS`` manifest limits a prefix to the files it
    lists.  ``keep``: objects it refuses are left out before their bytes are fetched;
    ``partitions``: false reads no partition values from the prefixes;
    ``base_path``: the URL below which ``key=value`` prefixes are partition values
    (Spark's ``basePath``; else below each path given), as
    :func:`quiver.spark.paths.list_files`."""
    skip = None if keep is None else (lambda url, mtime: not keep(url))
    files = [f for f, _ in list_objects(paths, options, skip=skip, base_path=base_path)]
    return files if partitions else [replace(f, partition=()) for f in files]


def list_objects(paths: Sequence[str], options: Mapping[str, Any], *,
                 missing_ok: bool = False, skip: Callable[[str, int], bool] | None = None,
                 base_path: str | None = None) -> list[tuple[DataFile, int]]:
    """:func:`list_files` with each object's modification time (ns since the epoch, as
    the listing gives it).  ``missing_ok``: a prefix, glob or object not there yet lists
    nothing (a stream's source before its first file).  ``skip(url, mtime_ns)``: objects
    it takes are left out before their first bytes are fetched (what a stream read
    already).  ``base_path``: as :func:`list_files`."""
    out: list[tuple[DataFile, int]] = []
    base = None if base_path is None else filesystem(base_path, options)[1].rstrip("/")
    for given in paths:
        shown = redact(given)
        fs, path = filesystem(given, options)
        fs.invalidate_cache()  # a listing cached by an earlier job is stale
        scheme = given.partition("://")[0]
        if any(c in path for c in "*?["):
            # a glob's matches are filtered as a prefix's objects are (_SUCCESS, .crc)
            matches = [m for m in sorted(retrying(lambda p=path, f=fs: f.glob(p), shown,
                                                  options=options))
                       if not hidden_name(m.rstrip("/").rsplit("/", 1)[-1])]
            if not matches and not missing_ok:
                raise E.ArrowInvalidArgument(f"{shown}: no such object or prefix")
        else:
            matches = [path]
        for match in matches:
            root = match.rstrip("/")
            if base is not None:
                if root != base and not root.startswith(base + "/"):
                    raise E.ArrowInvalidArgument(
                        f"expected basePath {redact(base_path)} to be a parent of every "
                        f"path read, found {redact(_join(scheme, match))}")
                root = base
            info = _info(fs, match, _join(scheme, match), options)
            if info is None:
                if missing_ok:
                    continue
                raise E.ArrowInvalidArgument(f"{redact(_join(scheme, match))}: no such "
                                             "object or prefix")
            if info["type"] == "directory":
                out.extend(_walk(fs, scheme, match.rstrip("/"), options, skip, root))
                continue
            url, mtime = _join(scheme, match), mtime_ns(info)
            if skip is not None and skip(url, mtime):
                continue
            head = _sniff_all(fs, scheme, [match], options,
                              frozenset([match] if int(info["size"]) == 0 else []))[0]
            kind = detect_format(head[:8])
            if kind is None:
                raise E.ArrowInvalid(f"{redact(url)}: {_describe(head)}")
            out.append((DataFile(url, kind, int(info["size"]),
                                 _partition(_relative_parts(root, match), url)), mtime))
    return out


def mtime_ns(info: Mapping[str, Any]) -> int:
    """An object's modification time from an fsspec listing entry (s3fs
    ``LastModified``, gcsfs ``updated``, adlfs ``last_modified``, local ``mtime``,
    memory ``created``), ns since the epoch; 0 when the store gives none."""
    for key in ("LastModified", "last_modified", "updated", "mtime", "created"):
        value = info.get(key)
        if value is None:
            continue
        if isinstance(value, datetime):
            return int(value.timestamp() * 1e9)
        if isinstance(value, (int, float)):
            return int(value * 1e9)
        with contextlib.suppress(ValueError):
            return int(datetime.fromisoformat(str(value).replace("Z", "+00:00"))
                       .timestamp() * 1e9)
    return 0


def tail_bytes(url: str, size: int, n: int) -> bytes:
    """The last ``n`` bytes of the object ``url`` of ``size`` bytes (one ranged GET)."""
    options = options_for(url)
    fs, path = filesystem(url, options)
    start = max(0, size - n)
    return retrying(lambda: fs.cat_file(path, start=start, end=size), url, (start, size),
                    options=options)


def _info(fs: Any, path: str, url: str, options: Mapping[str, Any]) -> dict | None:
    try:
        return retrying(lambda: fs.info(path), url, options=options)
    except ObjectNotFound:
        return None


def _describe(head: bytes) -> str:
    if not head:
        return "expected an Arrow IPC file or stream, found an empty object"
    what = describe_foreign(head) or f"bytes {head[:8].hex(' ')}"
    return f"expected an Arrow IPC file or stream, found {what}"


def _walk(fs: Any, scheme: str, root: str, options: Mapping[str, Any],
          skip: Callable[[str, int], bool] | None = None, base: str | None = None
          ) -> list[tuple[DataFile, int]]:
    """The objects under the prefix ``root``; partition values from the prefixes below
    ``base`` (default ``root``)."""
    shown = redact(_join(scheme, root))
    listed = _manifest(fs, root, shown, options)
    found = retrying(lambda: fs.find(root, detail=True), shown, options=options)
    sizes = {p.rstrip("/"): int(i.get("size") or 0) for p, i in found.items()
             if i.get("type") != "directory"}
    times = {p.rstrip("/"): mtime_ns(i) for p, i in found.items()}
    if listed is not None:
        names = [f"{root}/{name}" for name in listed]
        missing = [n for n in names if n not in sizes]
        if missing:
            raise E.ArrowInvalid(
                f"{shown}/_SUCCESS: expected the files it lists, found "
                f"{redact(_join(scheme, missing[0]))} missing")
    else:
        names = sorted(p for p in sizes
                       if not any(hidden_name(part) for part in _relative_parts(root, p)))
    if skip is not None:
        names = [n for n in names if not skip(_join(scheme, n), times[n])]
    heads = _sniff_all(fs, scheme, names, options,
                       frozenset(n for n in names if sizes[n] == 0))
    out = []
    for name, head in zip(names, heads):
        kind = detect_format(head[:8])
        url = _join(scheme, name)
        if kind is None:
            if not head or describe_foreign(head) is not None:
                continue  # something a dataset may hold beside its data
            raise E.ArrowInvalid(f"{redact(url)}: {_describe(head)}; it is neither an "
                                 "Arrow IPC file nor a known other format")
        out.append((DataFile(url, kind, sizes[name],
                             _partition(_relative_parts(base or root, name), url)),
                    times[name]))
    return out


# -- layouts (driver) and reads (executors) --------------------------------------------


def read_layout(data_file: DataFile, layout: Any, from_footer: Any) -> Any:
    """The :class:`~quiver.spark.plan.Layout` (the class is ``layout``; ``from_footer``
    makes a file format file's from its footer) of one object: a file's
    head, tail and footer (two GETs, three for a large footer); a stream's message
    headers, read in large blocks."""
    obj = RangedObject(data_file.path, options_for(data_file.path))
    try:
        data = ReadAheadBytes(obj)
        size = len(data)
        if data_file.format == "file":
            dec = FileDecoder()
            footer = dec.open(data.read_at, size)
            return from_footer(data_file, footer)
        infos = list(ipc_index.scan_messages(data.read_at, size))
    except StorageError:
        raise  # (it names the object and the range already)
    except E.ArrowError as exc:
        raise type(exc)(f"{redact(data_file.path)}: {exc}") from None
    finally:
        obj.close()
    if not infos or infos[0].kind != "schema":
        raise E.ArrowInvalid(f"{redact(data_file.path)}: expected a Schema message first")
    batches: list[tuple[int, int]] = []
    rows: list[int] = []
    dictionaries: list[tuple[int, int, int]] = []
    for info in infos[1:]:
        if info.kind == "record_batch":
            batches.append((info.offset, info.end))
            rows.append(int(info.num_rows or 0))
        elif info.kind == "dictionary":
            dictionaries.append((info.offset, info.end, len(batches)))
    return layout(data_file, infos[0].message.header.schema, tuple(batches),
                  tuple(dictionaries), (infos[0].offset, infos[0].end), rows=tuple(rows))


#: how much of a record batch message :func:`batch_rows` fetches for its header
HEADER_BYTES = 64 * 1024


def batch_rows(url: str, offset: int, end: int) -> int | None:
    """Rows of the record batch message at ``[offset, end)`` of the object ``url``, from
    its header (one ranged GET of its first bytes); None when they do not say."""
    options = options_for(url)
    fs, path = filesystem(url, options)
    stop = min(end, offset + HEADER_BYTES)
    try:
        data = retrying(lambda: fs.cat_file(path, start=offset, end=stop), url,
                        (offset, stop), options=options)
        info = next(iter(ipc_index.scan_messages(lambda p, n: data[p : p + n],
                                                 end - offset, start=0)), None)
    except E.ArrowError:
        return None  # the executor reads the batch whole, and reports any damage
    return info.num_rows if info is not None and info.kind == "record_batch" else None


def stream_pieces(split: Any) -> list[memoryview]:
    """A stream split's prelude (schema, dictionaries) and body, fetched concurrently."""
    obj = RangedObject(split.path, options_for(split.path))
    try:
        ranges = [*split.prelude, split.body]
        fetched = {(s, e): v for s, e, v in obj.fetch(ranges)}
        return [_slice(fetched, start, end) for start, end in ranges]
    finally:
        obj.close()


def _slice(fetched: dict[tuple[int, int], memoryview], start: int, end: int) -> memoryview:
    for (s, e), view in fetched.items():
        if s <= start and end <= e:
            return view[start - s : end - s]
    raise AssertionError("a range fetched is not covered")  # pragma: no cover


__all__ = ["PREFIX", "any_url", "batch_rows", "list_files", "list_objects", "mtime_ns",
           "options_for", "read_layout", "register", "storage_options", "stream_pieces",
           "tail_bytes"]
