"""The ``quiver`` command line (``quiver ...`` or ``python -m quiver ...``).

Subcommands follow what Arrow's integration harness (archery, Integration.rst "Running
integration tests") asks of an implementation:

- ``quiver integration --mode validate --json J --arrow A``: exit 0 when the IPC file or
  stream ``A`` holds the same schema and data as the JSON file ``J``, 1 with the differences
  on stderr otherwise;
- ``quiver integration --mode json-to-arrow --json J --arrow A``: write ``A`` from ``J``;
- ``quiver integration --mode arrow-to-json --json J --arrow A``: write ``J`` from ``A``;
- ``quiver file-to-stream IN OUT`` and ``quiver stream-to-file IN OUT`` (``-`` is
  stdout / stdin).

Each subcommand is one entry of :data:`COMMANDS` (a name, a function adding its arguments,
a function running it and returning the exit status), so new ones (inspect, cat, head,
schema, ...) are one function pair and one line.  Errors quiver raises on purpose
(:class:`~quiver.errors.ArrowError`) and I/O errors print one line and exit 1; usage errors
exit 2.

>>> main(["integration", "--mode", "nonsense", "--json", "j", "--arrow", "a"])
Traceback (most recent call last):
...
SystemExit: 2
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ArrowError

EXIT_OK = 0
EXIT_FAILED = 1


@dataclass(frozen=True, slots=True)
class Command:
    """One subcommand: its name, help, argument setup and runner (returns the exit code)."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def _err(message: str) -> None:
    print(f"quiver: {message}", file=sys.stderr)


# --------------------------------------------------------------------------------------
# integration


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


def _integration(ns: argparse.Namespace) -> int:
    from .. import integration

    if ns.mode == "validate":
        diffs = integration.validate(ns.json, ns.arrow, limit=ns.limit)
        if diffs:
            for d in diffs:
                print(str(d), file=sys.stderr)
            _err(f"{ns.arrow} does not match {ns.json} ({len(diffs)} difference(s) shown)")
            return EXIT_FAILED
        if ns.verbose:
            print(f"{ns.arrow} matches {ns.json}")
        return EXIT_OK
    if ns.mode == "json-to-arrow":
        integration.json_to_arrow(ns.json, ns.arrow)
    else:
        integration.arrow_to_json(ns.arrow, ns.json)
    if ns.verbose:
        print(f"wrote {ns.arrow if ns.mode == 'json-to-arrow' else ns.json}")
    return EXIT_OK


# --------------------------------------------------------------------------------------
# file <-> stream


def _in_out_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", metavar="IN", help="input path ('-' for stdin)")
    p.add_argument("output", metavar="OUT", help="output path ('-' for stdout)")


def _source(path: str) -> Any:
    return sys.stdin.buffer if path == "-" else path


def _sink(path: str) -> Any:
    return sys.stdout.buffer if path == "-" else path


def _file_to_stream(ns: argparse.Namespace) -> int:
    from .. import integration

    integration.file_to_stream(_source(ns.input), _sink(ns.output))
    return EXIT_OK


def _stream_to_file(ns: argparse.Namespace) -> int:
    from .. import integration

    integration.stream_to_file(_source(ns.input), _sink(ns.output))
    return EXIT_OK


#: every subcommand, in the order ``--help`` lists them; add new ones here
COMMANDS: list[Command] = [
    Command("integration", "the Arrow integration harness entry points (JSON <-> IPC)",
            _integration_args, _integration),
    Command("file-to-stream", "rewrite an IPC file as an IPC stream", _in_out_args,
            _file_to_stream),
    Command("stream-to-file", "rewrite an IPC stream as an IPC file", _in_out_args,
            _stream_to_file),
]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with one subparser per entry of :data:`COMMANDS`."""
    from .. import __version__

    parser = argparse.ArgumentParser(
        prog="quiver", description="Apache Arrow columnar format and IPC tools, in Python."
    )
    parser.add_argument("--version", action="version", version=f"quiver {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for cmd in COMMANDS:
        p = sub.add_parser(cmd.name, help=cmd.help, description=cmd.help)
        cmd.add_arguments(p)
        p.set_defaults(_run=cmd.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``quiver`` command line with ``argv`` (default: ``sys.argv[1:]``); returns
    the exit status."""
    ns = build_parser().parse_args(list(argv) if argv is not None else None)
    try:
        return int(ns._run(ns))
    except ArrowError as exc:
        _err(f"error: {exc}")
        return EXIT_FAILED
    except OSError as exc:
        _err(f"error: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "))
        return EXIT_FAILED


__all__ = ["COMMANDS", "Command", "build_parser", "main"]
