"""The ``quiver`` command line (``quiver ...`` or ``python -m quiver ...``).

Commands for people who hold an Arrow IPC file or stream: ``schema``, ``inspect``,
``cat``/``head``, ``validate``, ``convert``, ``recover``, plus what Arrow's integration
harness (archery, Integration.rst "Running integration tests") asks of an implementation:
``integration``, ``file-to-stream`` and ``stream-to-file``.

Each command is one entry of :data:`COMMANDS`: a name, its help with an example, a function
adding its arguments and the module that runs it.  The module is imported only when the
command runs, so ``quiver schema`` does not pay for tables, progress bars or writers.

Exit codes: 0 success, 1 invalid or failed input, 2 usage.  Errors quiver raises on purpose
(:class:`~quiver.errors.ArrowError`) and I/O errors print one line, ``quiver: <file>:
<what>``; anything else is a bug and shows its traceback.  A closed pipe ends quietly.

>>> main(["integration", "--mode", "nonsense", "--json", "j", "--arrow", "a"])
Traceback (most recent call last):
...
SystemExit: 2
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


@dataclass(frozen=True, slots=True)
class Command:
    """One subcommand: its name, help, an example, argument setup and the module whose
    ``run(ns) -> int`` runs it (imported when the command runs)."""

    name: str
    help: str
    example: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    module: str

    def run(self, ns: argparse.Namespace) -> int:
        """Import the command's module and run it; returns the exit status."""
        return int(importlib.import_module(f"{__name__}.{self.module}").run(ns))


# --------------------------------------------------------------------------------------
# arguments (kept here, cheap to build: the command modules load only when they run)


def _input(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", metavar="FILE", help="Arrow IPC file or stream ('-' for stdin)")


def _json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print JSON for machines")


def _quiet(p: argparse.ArgumentParser) -> None:
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar, no summary")


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, found {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, found {n}")
    return n


def _columns(text: str) -> list[str]:
    names = [c.strip() for c in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(
            f"expected column names separated by commas, found {text!r}"
        )
    return names


def _schema_args(p: argparse.ArgumentParser) -> None:
    _input(p)
    _json(p)


def _inspect_args(p: argparse.ArgumentParser) -> None:
    _input(p)
    p.add_argument("--buffers", action="store_true",
                   help="list each buffer's offset, length and uncompressed length")
    _json(p)


def _cat_args(p: argparse.ArgumentParser, *, head: bool = False) -> None:
    _input(p)
    p.add_argument("-n", "--head", type=_positive, default=10 if head else None, metavar="N",
                   help="print the first N rows" + (" (default 10)" if head else " only"))
    p.add_argument("--columns", type=_columns, metavar="a,b", help="only these columns")
    p.add_argument("--format", choices=("table", "jsonl", "csv"),
                   help="table (default on a terminal), jsonl (default in a pipe) or csv")
    p.add_argument("--width", type=_positive, default=None, metavar="W",
                   help="cut longer values to W characters in tables (default 40)")


def _validate_args(p: argparse.ArgumentParser) -> None:
    _input(p)
    p.add_argument("--level", choices=("structure", "full"), default="full",
                   help="structure: framing, layout and bounds; full (default): also every "
                   "value (offsets, UTF-8, indices, union codes, run ends, times of day)")
    p.add_argument("--limit", type=_positive, default=50, metavar="N",
                   help="report at most N findings (default 50)")
    _json(p)
    _quiet(p)


def _out(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", metavar="IN", help="input file or stream ('-' for stdin)")
    p.add_argument("output", metavar="OUT", help="output path ('-' for stdout)")


def _compression(p: argparse.ArgumentParser) -> None:
    p.add_argument("--compression", choices=("lz4", "zstd", "none"),
                   help="body compression of the output (default: that of the input)")


def _convert_args(p: argparse.ArgumentParser) -> None:
    _out(p)
    p.add_argument("--to", choices=("file", "stream"),
                   help="output format (default: file, or stream when OUT is '-' or ends in "
                   ".arrows/.stream)")
    _compression(p)
    p.add_argument("--columns", type=_columns, metavar="a,b", help="only these columns")
    p.add_argument("--batch-size", type=_positive, metavar="N",
                   help="rows per output batch (default: as in the input)")
    _no_statistics(p)
    _quiet(p)


def _no_statistics(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-statistics", dest="statistics", action="store_false",
                   help="leave out the per-batch statistics a file output keeps in its footer "
                   "by default (a stream has no footer, so it never has them)")


def _stream_to_file_args(p: argparse.ArgumentParser) -> None:
    _out(p)
    _compression(p)
    _no_statistics(p)
    _quiet(p)


def _file_to_stream_args(p: argparse.ArgumentParser) -> None:
    _out(p)
    _compression(p)
    _quiet(p)


def _recover_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", metavar="IN", help="damaged input file or stream ('-' for stdin)")
    p.add_argument("output", metavar="OUT", help="output path ('-' for stdout), never IN: "
                   "the damaged original is kept")
    p.add_argument("--json", action="store_true", help="print the report as JSON on standard "
                   "output (so OUT cannot be '-')")
    _quiet(p)


_MODES = ("validate", "json-to-arrow", "arrow-to-json")


def _mode(text: str) -> str:
    return text.strip().lower().replace("_", "-")


def _integration_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mode", required=True, choices=_MODES, type=_mode,
                   help="what to do (Arrow C++'s VALIDATE / JSON_TO_ARROW / ARROW_TO_JSON "
                   "spellings are accepted too)")
    p.add_argument("--json", required=True, metavar="J", help="integration JSON file")
    p.add_argument("--arrow", required=True, metavar="A", help="Arrow IPC file (or stream)")
    p.add_argument("--limit", type=int, default=20,
                   help="report at most this many differences (default 20)")
    p.add_argument("-v", "--verbose", action="store_true", help="say what was done")


#: every subcommand, in the order ``--help`` lists them; add new ones here
COMMANDS: list[Command] = [
    Command("schema", "print the schema: fields as a tree, types, nullability, metadata, "
            "dictionaries, extensions", "quiver schema data.arrow", _schema_args, "schema"),
    Command("inspect", "print the layout: every message with its offset and lengths, the "
            "footer's blocks, totals", "quiver inspect --buffers data.arrow", _inspect_args,
            "inspect"),
    Command("cat", "print rows as a table, JSON lines or CSV",
            "quiver cat data.arrow --columns a,b --format csv", _cat_args, "cat"),
    Command("head", "print the first rows (10 unless -n N)", "cat data.arrows | quiver head -",
            lambda p: _cat_args(p, head=True), "cat"),
    Command("validate", "check every rule of the format that can be checked; list all "
            "findings (exit 1 when there are any)", "quiver validate --level full data.arrow",
            _validate_args, "validate"),
    Command("convert", "rewrite as a file or a stream, with another compression, columns or "
            "batch size, one batch at a time",
            "quiver convert data.arrows data.arrow --compression zstd", _convert_args,
            "convert"),
    Command("recover", "salvage every complete record batch of a cut or damaged input into "
            "a valid file (exit 1 when something was lost)",
            "quiver recover broken.arrow saved.arrow", _recover_args, "recover"),
    Command("integration", "the Arrow integration harness entry points (JSON <-> IPC)",
            "quiver integration --mode validate --json a.json --arrow a.arrow",
            _integration_args, "integration"),
    Command("file-to-stream", "rewrite an IPC file as an IPC stream (keeps its compression)",
            "quiver file-to-stream data.arrow - > data.arrows", _file_to_stream_args,
            "convert"),
    Command("stream-to-file", "rewrite an IPC stream as an IPC file (keeps its compression)",
            "quiver stream-to-file - data.arrow < data.arrows", _stream_to_file_args,
            "convert"),
]


class _Version(argparse.Action):
    """``--version``: the package's version, looked up only when asked for."""

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        from .._version import __version__

        print(f"quiver {__version__}")
        parser.exit()


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser with one subparser per entry of :data:`COMMANDS`; given the
    arguments, only the command named in them gets its options (start-up time)."""
    names = {cmd.name for cmd in COMMANDS}
    named = next((a for a in argv or () if not a.startswith("-")), None)
    wanted = named if named in names else None
    parser = argparse.ArgumentParser(
        prog="quiver",
        description="Look inside, validate, convert and repair Apache Arrow IPC files and "
        "streams.",
        epilog="exit status: 0 success, 1 invalid or failed input, 2 usage; "
        "'quiver COMMAND --help' shows an example",
    )
    parser.add_argument("--version", action=_Version, nargs=0, help="print the version")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for cmd in COMMANDS:
        p = sub.add_parser(cmd.name, help=cmd.help, description=cmd.help,
                           epilog=f"example: {cmd.example}")
        if wanted is None or cmd.name == wanted:
            cmd.add_arguments(p)
            p.add_argument("--storage-option", action="append", dest="storage_options",
                           metavar="KEY=VALUE", help="an fsspec storage option for s3:// "
                           "(or other URL) inputs and outputs, e.g. endpoint_url=http://... "
                           "(repeat for more; a.b=x nests)")
        p.set_defaults(_command=cmd)
    return parser


def _subject(ns: argparse.Namespace, exc: BaseException) -> str:
    """The file an error is about: the one an OSError names, else the command's input."""
    name = getattr(exc, "filename", None) or getattr(exc, "cli_subject", None)
    if name is None:
        name = getattr(ns, "input", None) or getattr(ns, "arrow", None)
    if name is None:
        return ""
    from ._common import display_name

    return display_name(os.fsdecode(name))


def _say(ns: argparse.Namespace, exc: BaseException, what: str) -> None:
    from ._common import shown_text

    subject = _subject(ns, exc)
    prefix = f"quiver: {subject}: " if subject else "quiver: "
    # (a message quoting a URL, an OSError's text: never a credential)
    given = [getattr(ns, k, None) for k in ("input", "output", "arrow", "json")]
    print(shown_text(prefix + " ".join(what.split("\n")), given), file=sys.stderr)


#: commands that read batches and so stop at damage that ``quiver recover`` gets past
_READS_BATCHES = {"cat", "head", "convert", "file-to-stream", "stream-to-file"}


def _recover_hint(ns: argparse.Namespace, exc: BaseException) -> str:
    from ..errors import FramingError, MetadataError, TruncatedError

    if ns.command in _READS_BATCHES and isinstance(
        exc, (FramingError, MetadataError, TruncatedError)
    ):
        return "; quiver recover IN OUT saves every complete record batch"
    return ""


def _quiet_pipe() -> None:
    # the reader went away: point stdout at /dev/null so that the interpreter's final
    # flush does not complain on stderr
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``quiver`` command line with ``argv`` (default: ``sys.argv[1:]``); returns
    the exit status."""
    args = list(argv) if argv is not None else sys.argv[1:]
    ns = build_parser(args).parse_args(args)
    from ..errors import ArrowError
    from . import _common
    from ._common import CliError

    try:
        _common.STORAGE_OPTIONS = {}
        if getattr(ns, "storage_options", None):  # (quiver.fs loads only then)
            from ..fs.url import parse_storage_options

            _common.STORAGE_OPTIONS = parse_storage_options(ns.storage_options)
        return ns._command.run(ns)
    except BrokenPipeError:
        _quiet_pipe()
        return EXIT_OK
    except CliError as exc:
        _say(ns, exc, str(exc))
        return exc.status
    except ArrowError as exc:
        _say(ns, exc, str(exc) + _recover_hint(ns, exc))
        return EXIT_FAILED
    except OSError as exc:
        _say(ns, exc, exc.strerror or str(exc))
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("quiver: interrupted", file=sys.stderr)
        return 130


__all__ = ["COMMANDS", "EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "Command", "build_parser", "main"]
