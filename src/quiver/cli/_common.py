"""What every command shares: opening an input and telling what it is, writing an output
safely, one-line errors, and progress bars that show only on a terminal.

Inputs are recognised by their bytes, never by their names (Columnar spec, "IPC File
Format": a file starts with ``ARROW1``; a stream with the continuation marker 0xFFFFFFFF,
or before Arrow 0.15 with a bare int32 length).  Anything else is named for what it is in
one sentence, so that nobody reads "Expected to read 1330795073 metadata bytes" again.

>>> describe_non_arrow(b"PAR1\\x15\\x04\\x15")
'is a Parquet file (it starts with PAR1), not Arrow IPC; read it with a Parquet reader \
(pyarrow.parquet, duckdb, polars) and write Arrow from there'
>>> describe_non_arrow(b"id,name\\n1,x\\n")
'looks like CSV text, not Arrow IPC'
"""

from __future__ import annotations

import contextlib
import mmap
import os
import stat
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

from ..ipc.index import detect_format

#: bytes of a non-Arrow input read to name what it is
_SNIFF = 512

#: ``--storage-option KEY=VALUE`` of the command running (for URL inputs and outputs)
STORAGE_OPTIONS: dict[str, Any] = {}


def is_url(name: str) -> bool:
    """Whether a command's input or output is a URL (``s3://...``); quiver.fs loads only
    then (the start-up budget of local commands)."""
    if "://" not in name:
        return False
    from ..fs.url import is_url as url

    return url(name)


class CliError(Exception):
    """A failure the command reports in one line (``quiver: <file>: <what>``)."""

    def __init__(self, message: str, *, subject: str | None = None, status: int = 1) -> None:
        super().__init__(message)
        self.cli_subject = subject
        self.status = status


def display_name(path: str) -> str:
    """How an input or output is named in messages (``-`` is ``<stdin>``; a URL without
    its credentials, :func:`quiver.fs.url.redact`)."""
    if path == "-":
        return "<stdin>"
    if is_url(path):
        from ..fs.url import redact

        return redact(path)
    return path


def shown_text(text: str, urls: Sequence[Any] = ()) -> str:
    """``text`` as the command line may print it: every URL in it without credentials,
    the secret values of ``--storage-option`` blanked, and what :func:`display_name`
    hides of each of ``urls`` (the command's input and output) blanked wherever it is
    quoted."""
    urls = [u for u in urls if isinstance(u, str) and is_url(u)]
    if "://" not in text and not STORAGE_OPTIONS and not urls:
        return text
    from ..fs.url import scrub

    return scrub(text, STORAGE_OPTIONS, urls)


def describe_non_arrow(head: bytes) -> str:
    """One sentence saying what the first bytes of a non-Arrow input look like."""
    if not head:
        return "is empty (0 bytes), not an Arrow IPC file or stream"
    if head[:4] == b"PAR1":
        return (
            "is a Parquet file (it starts with PAR1), not Arrow IPC; read it with a Parquet "
            "reader (pyarrow.parquet, duckdb, polars) and write Arrow from there"
        )
    if head[:4] == b"FEA1":
        return (
            "is a Feather version 1 file (it starts with FEA1), an older format than Arrow "
            "IPC; rewrite it with pyarrow.feather.write_feather(table, path, version=2)"
        )
    if head[:2] == b"\x1f\x8b":
        return "is gzip-compressed; decompress it first (gzip -dc FILE | quiver ... -)"
    if head[:4] == b"\x28\xb5\x2f\xfd":
        return "is zstd-compressed; decompress it first (zstd -dc FILE | quiver ... -)"
    if head[:6] == b"ARROW1"[: len(head)] or head[:4] == b"\xff\xff\xff\xff"[: len(head)]:
        return f"is too short ({len(head)} bytes) to be an Arrow IPC file or stream"
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # a multi-byte character cut by the sniff window is still text
        text = head[: exc.start].decode("utf-8") if exc.start >= len(head) - 3 else ""
    if text and all(c.isprintable() or c in "\r\n\t" for c in text):
        stripped = text.lstrip()
        if stripped[:1] in ("{", "["):
            return (
                "looks like JSON text, not Arrow IPC (an Arrow integration JSON file is "
                "read with quiver integration --mode json-to-arrow)"
            )
        first_line = stripped.split("\n", 1)[0]
        if "," in first_line or "\t" in first_line or ";" in first_line:
            return "looks like CSV text, not Arrow IPC"
        return "looks like text, not Arrow IPC"
    return (
        "is not Arrow IPC: expected the file magic ARROW1 or a stream's continuation marker "
        f"0xFFFFFFFF at the start, found {head[:8]!r}"
    )


class _Prefixed:
    """A binary reader that returns ``head`` first, then the rest of ``f``."""

    def __init__(self, head: bytes, f: BinaryIO) -> None:
        self._head = head
        self._f = f

    def read(self, n: int = -1) -> bytes:
        if self._head:
            if n is None or n < 0:
                out = self._head + self._f.read()
                self._head = b""
                return out
            out, self._head = self._head[:n], self._head[n:]
            return out
        return self._f.read(n)

    def read1(self, n: int = -1) -> bytes:
        if self._head:
            return self.read(n)
        read1 = getattr(self._f, "read1", None)
        return read1(n) if read1 is not None else self._f.read(n)

    def readable(self) -> bool:
        return True


def _read_upto(f: BinaryIO, n: int) -> bytes:
    parts: list[bytes] = []
    got = 0
    while got < n:
        data = f.read(n - got)
        if not data:
            break
        parts.append(data)
        got += len(data)
    return b"".join(parts)


@dataclass
class Input:
    """An opened input: its name, format (``file`` or ``stream``) and either all of its
    bytes (``data``: a memory map of a file, or what a pipe gave) or, for a stream from a
    pipe that the command reads as it comes, a file object (``stream``)."""

    name: str
    format: str
    data: memoryview | None
    stream: Any = None

    @property
    def display(self) -> str:
        """The name as messages show it."""
        return display_name(self.name)

    def whole(self) -> memoryview:
        """All the bytes (a pipe is read to its end)."""
        if self.data is None:
            self.data = memoryview(self.stream.read())
            self.stream = None
        return self.data


def _pipe_input(name: str, f: BinaryIO, *, whole: bool) -> Input:
    head = _read_upto(f, 8)
    fmt = detect_format(head)
    if fmt is None:
        head += _read_upto(f, _SNIFF - len(head))
        raise CliError(describe_non_arrow(head), subject=display_name(name))
    if fmt == "file" or whole:
        # the footer is at the end: a file from a pipe is buffered whole
        return Input(name, fmt, memoryview(head + f.read()))
    return Input(name, fmt, None, _Prefixed(head, f))


def open_input(name: str, *, whole: bool = False) -> Input:
    """Open ``name`` (``-``: standard input), detect its format from its bytes, and refuse
    anything that is not Arrow IPC with one sentence saying what it is.  A regular file is
    memory-mapped; a pipe is read as it comes unless ``whole`` (or it is a file)."""
    if name == "-":
        return _pipe_input(name, sys.stdin.buffer, whole=whole)
    if is_url(name):  # object storage (cli/_remote.py)
        from ._remote import open_url

        shown, fmt, data, stream, head = open_url(name, whole=whole,
                                                  storage_options=STORAGE_OPTIONS)
        if fmt is None:
            raise CliError(describe_non_arrow(head), subject=shown)
        return Input(shown, fmt, data, stream)
    fd = os.open(name, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(21, "Is a directory", name)
        if not stat.S_ISREG(st.st_mode):  # a named pipe, /dev/stdin, ...
            f = os.fdopen(fd, "rb")
            fd = -1
            return _pipe_input(name, f, whole=whole)
        if st.st_size == 0:
            raise CliError(describe_non_arrow(b""), subject=name)
        data = memoryview(mmap.mmap(fd, 0, access=mmap.ACCESS_READ))
    finally:
        if fd >= 0:
            os.close(fd)
    fmt = detect_format(data[:8])
    if fmt is None:
        raise CliError(describe_non_arrow(bytes(data[:_SNIFF])), subject=name)
    return Input(name, fmt, data)


@contextlib.contextmanager
def output_path(path: str) -> Iterator[Any]:
    """A binary file object a command writes to: standard output for ``-`` (never a
    terminal), else a temporary file beside ``path`` that replaces it only when the
    command succeeds, so a failure leaves no half-written output behind (and no file
    left open: it is closed here either way)."""
    if path == "-":
        if sys.stdout.isatty():
            raise CliError(
                "refusing to write binary Arrow data to a terminal; redirect standard "
                "output or name an output file",
                subject="<stdout>",
                status=2,
            )
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    if is_url(path):  # object storage (cli/_remote.py): an upload, completed on success
        from ._remote import url_output

        with url_output(path, STORAGE_OPTIONS) as upload:
            yield upload
        return
    directory = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(directory, f".{os.path.basename(path)}.quiver-{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            yield f
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and tmp in (exc.filename, exc.filename2):
            exc.filename = path  # name the output the user gave, not the temporary file
            exc.filename2 = None
        raise


class Progress:
    """A progress bar over a byte count on standard error, shown only on a terminal and
    not with ``--quiet``; otherwise every call does nothing."""

    def __init__(self, total: int, description: str, *, enabled: bool) -> None:
        self.total = total
        self.description = description
        self.enabled = enabled
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> Progress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                TimeRemainingColumn,
            )
            from rich.progress import (
                Progress as Bar,
            )

            self._bar = Bar(
                "[progress.description]{task.description}",
                BarColumn(),
                DownloadColumn(),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self._bar.__enter__()
            self._task = self._bar.add_task(self.description, total=self.total)
        return self

    def update(self, completed: int) -> None:
        """Say that ``completed`` bytes of ``total`` are done."""
        if self._bar is not None:
            self._bar.update(self._task, completed=completed)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)
            self._bar = None


#: inputs smaller than this finish before a bar would be worth drawing
PROGRESS_MIN_BYTES = 8 << 20


def progress(ns: Any, total: int | None, description: str) -> Progress:
    """The progress bar of a long command: on a terminal, without ``--quiet``, for inputs
    of at least :data:`PROGRESS_MIN_BYTES`."""
    enabled = (
        not getattr(ns, "quiet", False)
        and total is not None
        and total >= PROGRESS_MIN_BYTES
        and sys.stderr.isatty()
    )
    return Progress(total or 0, description, enabled=enabled)


def message(ns: Any, text: str) -> None:
    """A summary line on standard error (not with ``--quiet``)."""
    if not getattr(ns, "quiet", False):
        print(shown_text(text), file=sys.stderr)


__all__ = [
    "CliError",
    "Input",
    "Progress",
    "describe_non_arrow",
    "display_name",
    "message",
    "open_input",
    "output_path",
    "progress",
    "shown_text",
]
