"""Finding the Arrow IPC files of a dataset, and hive-style partition directories.

A path may be a file, a directory (walked recursively), a glob, or a list of these.
Hidden (``.``) and ``_``-prefixed files and directories are skipped, as Spark does
(``_SUCCESS``, ``_temporary``), also where a glob matches them.  Files are recognised by
their first bytes, not their extension.  Directories named ``key=value`` give partition
columns, found as Spark's ``PartitioningUtils`` finds them: from each file's directory
upwards while the names are ``key=value``, not above the path given (or the
``basePath`` option); names compare case-insensitively.  Their values are kept as the
raw (escaped) directory text; :mod:`quiver.spark.hive` holds how Spark spells, parses
and infers them.
"""

from __future__ import annotations

import glob
import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .. import types as t
from ..errors import ArrowInvalid, ArrowInvalidArgument
from ..fs.url import is_remote_url
from ..ipc.framing import describe_foreign
from ..ipc.index import detect_format
from .hive import (
    HIVE_NULL,
    escape_partition_text,
    infer_partition_type,
    partition_value,
    unescape_partition_text,
    wider_partition_type,
)


@dataclass(frozen=True, slots=True)
class DataFile:
    """One Arrow IPC file of a dataset: where it is, its format and partition values."""

    path: str
    format: str  # "file" or "stream"
    size: int
    partition: tuple[tuple[str, str | None], ...] = ()  # (column, raw text or None)


def local_path(path: str) -> str:
    """A local filesystem path from a Spark path (``file:`` URIs accepted), made absolute."""
    if path.startswith("file://"):
        path = path[len("file://") :]
    elif path.startswith("file:"):
        path = path[len("file:") :]
    elif re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", path):
        raise ArrowInvalidArgument(
            f"expected a local or shared filesystem path, found {path!r}; quiver's Spark "
            "source reads paths every executor can open (local disks, NFS, mounted buckets)"
        )
    return os.path.abspath(os.path.expanduser(path))


def paths_from_options(options: Any) -> list[str]:
    """The paths of ``load(p)`` (``options["path"]``) or ``load([a, b])`` (``"paths"``)."""
    if options.get("paths"):
        raw = json.loads(options["paths"])
    elif options.get("path"):
        raw = [options["path"]]
    else:
        raise ArrowInvalidArgument("expected a path: spark.read.format('arrow').load(path)")
    return [p if is_remote_url(p) else local_path(p) for p in raw]  # URLs: spark/objstore.py


def hidden_name(name: str) -> bool:
    """Whether Spark skips a file or directory of this name when listing a dataset."""
    # Spark's rule: '.' names always, '_' names unless they are key=value directories
    return name.startswith(".") or (name.startswith("_") and "=" not in name)


def partition_of(root: str, path: str) -> tuple[tuple[str, str | None], ...]:
    """Spark's ``parsePartition`` of a local file below ``root`` (see below)."""
    rel = os.path.relpath(os.path.dirname(path), root)
    if rel == os.curdir:
        return ()
    return partition_of_directories(rel.split(os.sep), path)


def partition_of_directories(directories: Sequence[str], where: str
                             ) -> tuple[tuple[str, str | None], ...]:
    """Spark's ``parsePartition``: from a file's directory (the last of ``directories``)
    upwards, the ``key=value`` names met before the first other name (key unescaped,
    value raw: it is read as its column's type later).  ``where`` names the file in
    errors."""
    out = []
    for part in reversed(directories):
        if "=" not in part:
            break
        key, _, value = part.partition("=")
        if not key or not value:
            raise ArrowInvalid(
                f"{where}: expected a partition directory key=value, found {part!r} "
                "(an empty column name or value)"
            )
        out.append((unescape_partition_text(key), None if value == HIVE_NULL else value))
    return tuple(reversed(out))


def _partition_base(path: str, depth: int) -> str:
    """The directory where partition discovery stopped for a file (Spark's discovered
    base path): ``depth`` levels above the file's directory."""
    directory = os.path.dirname(path)
    for _ in range(depth):
        directory = os.path.dirname(directory)
    return directory


def _sniff(path: str) -> tuple[str | None, int]:
    try:
        with open(path, "rb") as f:
            head = f.read(8)
            size = os.fstat(f.fileno()).st_size
    except OSError as exc:
        raise ArrowInvalidArgument(f"{path}: cannot open: {exc.strerror}") from None
    if size == 0:
        return None, 0
    return detect_format(head), size


def glob_filter(pattern: str) -> Callable[[str], bool]:
    """Spark's ``pathGlobFilter``: whether a file's path has a name (its last part) that
    matches ``pattern`` as Hadoop's ``GlobPattern`` reads it (``*``, ``?``, ``[...]``
    with ``!`` or ``^`` negating, ``{a,b}``, ``\\`` escaping; the whole name).

    >>> keep = glob_filter("part-{0,1}.arr*")
    >>> keep("/d/k=1/part-1.arrow"), keep("/d/part-2.arrow")
    (True, False)
    """
    regex: list[str] = []
    braces = 0
    in_set = False
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            if i + 1 == len(pattern):
                raise ArrowInvalidArgument(
                    f"expected a character after \\ in pathGlobFilter, found the end of "
                    f"{pattern!r}")
            regex.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        if in_set:
            if c == "]":
                in_set = False
            regex.append("^" if c == "!" and pattern[i - 1] == "[" else
                         "\\[" if c == "[" else c)
        elif c == "*":
            regex.append(".*")
        elif c == "?":
            regex.append(".")
        elif c == "{":
            braces += 1
            regex.append("(?:")
        elif c == "}" and braces:
            braces -= 1
            regex.append(")")
        elif c == "," and braces:
            regex.append("|")
        elif c == "[":
            in_set = True
            regex.append("[")
        else:
            regex.append(re.escape(c))
        i += 1
    if in_set or braces:
        raise ArrowInvalidArgument(
            f"expected a closed {'[...]' if in_set else '{...}'} in pathGlobFilter, found "
            f"{pattern!r}")
    try:
        compiled = re.compile("".join(regex), re.DOTALL)
    except re.error as exc:
        raise ArrowInvalidArgument(
            f"expected a glob in pathGlobFilter, found {pattern!r} ({exc})") from None
    return lambda path: compiled.fullmatch(path.rstrip("/").rsplit("/", 1)[-1]) is not None


def base_path_from_options(options: Any) -> str | None:
    """The ``basePath`` option (partition columns are found below it), if given."""
    value = options.get("basepath")
    return local_path(value) if value else None


def list_files(paths: Sequence[str], base_path: str | None = None, *,
               keep: Callable[[str], bool] | None = None,
               partitions: bool = True) -> list[DataFile]:
    """Every Arrow IPC file under ``paths``, in sorted order per path, with the
    partition values of its directories (found below ``base_path``, else below each
    path given; none when ``partitions`` is false, Spark's ``recursiveFileLookup``).
    ``keep``: files it refuses are left out before they are opened (``pathGlobFilter``).

    Files under a directory that do not start like an Arrow file or stream are skipped;
    a file named directly that is not Arrow is an error saying what it looks like.
    """
    out: list[DataFile] = []
    bases: list[tuple[str, str]] = []  # (discovered base, file) of each file
    for given in paths:
        if glob.has_magic(given):
            # a glob's matches are filtered as a directory's entries are (_SUCCESS, .crc)
            matches = [m for m in sorted(glob.glob(given))
                       if not hidden_name(os.path.basename(m))]
        else:
            matches = [given]
        if not matches:
            raise ArrowInvalidArgument(f"{given}: no such file or directory")
        for match in matches:
            root = match if base_path is None else base_path
            if base_path is not None and os.path.relpath(match, base_path).startswith(
                    os.pardir):
                raise ArrowInvalidArgument(
                    f"expected basePath {base_path} to be a parent of every path read, "
                    f"found {match}"
                )
            if os.path.isdir(match):
                found = _walk(match, root if partitions else None, keep)
            elif os.path.isfile(match):
                if keep is not None and not keep(match):
                    continue
                kind, size = _sniff(match)
                if kind is None:
                    raise ArrowInvalid(f"{match}: {describe_non_arrow(match)}")
                found = [DataFile(match, kind, size,
                                  partition_of(root, match) if partitions else ())]
            else:
                raise ArrowInvalidArgument(f"{match}: no such file or directory")
            out.extend(found)
            bases.extend((_partition_base(f.path, len(f.partition)), f.path)
                         for f in found)
    if any(f.partition for f in out):
        distinct = {base.lower(): (base, path) for base, path in bases}
        if len(distinct) > 1:
            (a, pa), (b, pb) = list(distinct.values())[:2]
            raise ArrowInvalid(
                f"expected every file's partition directories below one base directory, "
                f"found {pa} below {a} and {pb} below {b} (read them separately, or set "
                "the basePath option to the table's root)"
            )
    return _canonical_keys(out)


def _canonical_keys(files: list[DataFile]) -> list[DataFile]:
    """Partition keys spelled as the first file spells them (Spark compares them
    case-insensitively)."""
    spelling: dict[str, str] = {}
    for f in files:
        for key, _ in f.partition:
            spelling.setdefault(key.lower(), key)
    return [
        f if all(spelling[k.lower()] == k for k, _ in f.partition)
        else replace(f, partition=tuple((spelling[k.lower()], v) for k, v in f.partition))
        for f in files
    ]


def _walk(directory: str, root: str | None, keep: Callable[[str], bool] | None
          ) -> list[DataFile]:
    """The Arrow files under ``directory``; partition values found below ``root`` (none
    without it)."""
    found: list[DataFile] = []
    for dirpath, dirnames, filenames in os.walk(directory):
        dirnames[:] = sorted(d for d in dirnames if not hidden_name(d))
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if hidden_name(name) or (keep is not None and not keep(path)):
                continue
            kind, size = _sniff(path)
            if kind is not None:
                found.append(DataFile(path, kind, size,
                                      partition_of(root, path) if root is not None else ()))
            elif not _known_other(path):
                # not Arrow and not anything recognisable: a damaged Arrow file, maybe;
                # skipping it would lose its rows without a word
                raise ArrowInvalid(
                    f"{path}: {describe_non_arrow(path)}; it is neither an Arrow IPC file "
                    "nor a known other format (remove it, or name the files to read)"
                )
    return found


def _head(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read(64)
    except OSError:
        return None


def _known_other(path: str) -> bool:
    """Whether a file that is not Arrow is something a dataset directory may hold beside
    its data (empty, Parquet, Feather v1, text, compressed data, ...)."""
    head = _head(path)
    return head is not None and (not head or describe_foreign(head) is not None)


def describe_non_arrow(path: str) -> str:
    """One sentence on what a file that is not Arrow IPC looks like."""
    head = _head(path)
    if head is None:
        return "cannot open it"
    if not head:
        return "expected an Arrow IPC file or stream, found an empty file"
    what = describe_foreign(head)
    if what is None:
        what = f"bytes {head[:8].hex(' ')}"
    return f"expected an Arrow IPC file or stream, found {what}"


# -- partition columns -------------------------------------------------------------------


def partition_schema(files: Sequence[DataFile], infer: bool = True, *,
                     timestamp_tz: str | None = "UTC") -> list[t.Field]:
    """The partition columns of ``files`` with Spark's inferred types (strings when
    ``infer`` is off; ``void`` for a column that is always the default partition).

    Every file with partition directories must name the same keys in the same order
    (case-insensitively); files without any (beside them, as an empty job leaves) read
    the columns as null.
    """
    keys: tuple[str, ...] | None = None
    first = ""
    types: list[t.DataType] = []
    for f in files:
        if not f.partition:
            continue
        names = tuple(k for k, _ in f.partition)
        if keys is None:
            keys, first = names, f.path
            types = [t.null()] * len(names)
        elif tuple(n.lower() for n in names) != tuple(k.lower() for k in keys):
            raise ArrowInvalid(
                f"{f.path}: expected partition directories {'/'.join(keys)} (as "
                f"{first}), found {'/'.join(names)}"
            )
        for i, (_, text) in enumerate(f.partition):
            if text is None:
                continue
            found = (infer_partition_type(text, timestamp_tz=timestamp_tz) if infer
                     else t.string())
            types[i] = wider_partition_type(types[i], found)
    return [t.field(k, types[i], nullable=True) for i, k in enumerate(keys or ())]


__all__ = [
    "HIVE_NULL",
    "DataFile",
    "base_path_from_options",
    "escape_partition_text",
    "glob_filter",
    "list_files",
    "partition_schema",
    "partition_value",
    "paths_from_options",
]
