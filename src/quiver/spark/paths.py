"""Finding the Arrow IPC files of a dataset, and hive-style partition directories.

A path may be a file, a directory (walked recursively), a glob, or a list of these.
Hidden (``.``) and ``_``-prefixed files and directories are skipped, as Spark does
(``_SUCCESS``, ``_temporary``).  Files are recognised by their first bytes, not their
extension.  Directories named ``key=value`` give partition columns; their types are
inferred as Spark infers them (int, then long, then double, then date, else string;
``__HIVE_DEFAULT_PARTITION__`` is null), or left as strings when inference is off.
"""

from __future__ import annotations

import datetime as dt
import glob
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from urllib.parse import unquote

from .. import types as t
from ..errors import ArrowInvalid, ArrowInvalidArgument
from ..fs.url import is_remote_url
from ..ipc.framing import describe_foreign
from ..ipc.index import detect_format

HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# the characters Spark escapes in partition directory names (ExternalCatalogUtils)
_ESCAPED = set('"#%\'*/:=?\\\x7f{[]^') | {chr(c) for c in range(0x20)}


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


def _hidden(name: str) -> bool:
    # Spark's rule: '.' names always, '_' names unless they are key=value directories
    return name.startswith(".") or (name.startswith("_") and "=" not in name)


def _partition_of(root: str, path: str) -> tuple[tuple[str, str | None], ...]:
    rel = os.path.relpath(os.path.dirname(path), root)
    out = []
    for part in rel.split(os.sep):
        if "=" in part:
            key, _, value = part.partition("=")
            text = unquote(value)
            out.append((unquote(key), None if text == HIVE_NULL else text))
    return tuple(out)


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


def list_files(paths: Sequence[str]) -> list[DataFile]:
    """Every Arrow IPC file under ``paths``, in sorted order per path.

    Files under a directory that do not start like an Arrow file or stream are skipped;
    a file named directly that is not Arrow is an error saying what it looks like.
    """
    out: list[DataFile] = []
    for given in paths:
        matches = sorted(glob.glob(given)) if glob.has_magic(given) else [given]
        if not matches:
            raise ArrowInvalidArgument(f"{given}: no such file or directory")
        for match in matches:
            if os.path.isdir(match):
                out.extend(_walk(match))
            elif os.path.isfile(match):
                kind, size = _sniff(match)
                if kind is None:
                    raise ArrowInvalid(f"{match}: {describe_non_arrow(match)}")
                out.append(DataFile(match, kind, size, ()))
            else:
                raise ArrowInvalidArgument(f"{match}: no such file or directory")
    return out


def _walk(root: str) -> list[DataFile]:
    found: list[DataFile] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not _hidden(d))
        for name in sorted(filenames):
            if _hidden(name):
                continue
            path = os.path.join(dirpath, name)
            kind, size = _sniff(path)
            if kind is not None:
                found.append(DataFile(path, kind, size, _partition_of(root, path)))
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


# -- partition values -------------------------------------------------------------------


_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)
_FLOAT = re.compile(
    r"[+-]?(NaN|Infinity|([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)[dDfF]?", re.ASCII
)


def _infer_one(text: str) -> t.DataType:
    """Spark's order: int, bigint, double (Java's grammar: no '_', no spaces, ASCII
    digits), date, else string."""
    if _INTEGER.fullmatch(text):
        value = int(text)
        if -(2**31) <= value < 2**31:
            return t.int32()
        return t.int64() if -(2**63) <= value < 2**63 else t.string()
    if _FLOAT.fullmatch(text):
        return t.float64()
    if _DATE.match(text):
        try:
            dt.date.fromisoformat(text)
            return t.date32()
        except ValueError:
            pass
    return t.string()


_NUMERIC_ORDER = (t.int32(), t.int64(), t.float64())


def _common(a: t.DataType, b: t.DataType) -> t.DataType:
    if a == b:
        return a
    if a in _NUMERIC_ORDER and b in _NUMERIC_ORDER:
        return max(a, b, key=_NUMERIC_ORDER.index)
    return t.string()


def partition_schema(files: Sequence[DataFile], infer: bool = True) -> list[t.Field]:
    """The partition columns of ``files`` with their inferred (or string) types.

    Every file must name the same partition keys in the same order.
    """
    keys: tuple[str, ...] | None = None
    types: dict[str, t.DataType | None] = {}
    for f in files:
        names = tuple(k for k, _ in f.partition)
        if keys is None:
            keys = names
            types = dict.fromkeys(names)
        elif names != keys:
            raise ArrowInvalid(
                f"{f.path}: expected partition directories {'/'.join(keys) or '(none)'}, "
                f"found {'/'.join(names) or '(none)'}"
            )
        for key, text in f.partition:
            if text is None:
                continue
            found = _infer_one(text) if infer else t.string()
            known = types[key]
            types[key] = found if known is None else _common(known, found)
    return [t.field(k, types[k] or t.string(), nullable=True) for k in keys or ()]


def partition_value(text: str | None, dtype: t.DataType) -> Any:
    """The Python value of a partition directory's text under its column type."""
    if text is None:
        return None
    try:
        if isinstance(dtype, t.IntegerType):
            return int(text)
        if isinstance(dtype, t.FloatingPointType):
            return float(text.rstrip("dDfF"))
        if isinstance(dtype, t.DateType):
            return dt.date.fromisoformat(text)
        if isinstance(dtype, t.BoolType):
            return {"true": True, "false": False}[text.lower()]
        if isinstance(dtype, t.DecimalType):
            return Decimal(text)
    except (ValueError, KeyError, ArithmeticError):
        raise ArrowInvalid(
            f"expected a partition value of type {dtype}, found {text!r}"
        ) from None
    if isinstance(dtype, (t.StringType, t.BinaryType)):
        return text if isinstance(dtype, t.StringType) else text.encode()
    raise ArrowInvalid(f"expected a partition column of a plain type, found {dtype}")


def escape_partition_text(text: str) -> str:
    """A partition value as Spark writes it in a directory name (``%XX`` escapes)."""
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in text)
