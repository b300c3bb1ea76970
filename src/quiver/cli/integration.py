"""``quiver integration``: the entry points Arrow's integration harness calls (archery,
Integration.rst "Running integration tests").

- ``--mode validate``: exit 0 when the IPC file or stream holds the same schema and data as
  the JSON file, 1 with the differences on stderr otherwise;
- ``--mode json-to-arrow``: write the IPC file from the JSON file;
- ``--mode arrow-to-json``: write the JSON file from the IPC file or stream.
"""

from __future__ import annotations

import argparse
import sys

from .. import integration
from ..errors import ArrowError


def run(ns: argparse.Namespace) -> int:
    """Run one integration mode; returns the exit status."""
    try:
        return _run(ns)
    except ArrowError as exc:
        # the JSON file is what a json-to-arrow failure is about
        exc.cli_subject = ns.json if ns.mode == "json-to-arrow" else ns.arrow  # type: ignore[attr-defined]
        raise


def _run(ns: argparse.Namespace) -> int:
    if ns.mode == "validate":
        diffs = integration.validate(ns.json, ns.arrow, limit=ns.limit)
        if diffs:
            for d in diffs:
                print(str(d), file=sys.stderr)
            print(
                f"quiver: {ns.arrow}: does not match {ns.json} "
                f"({len(diffs)} difference(s) shown)",
                file=sys.stderr,
            )
            return 1
        if ns.verbose:
            print(f"{ns.arrow} matches {ns.json}")
        return 0
    if ns.mode == "json-to-arrow":
        integration.json_to_arrow(ns.json, ns.arrow)
    else:
        integration.arrow_to_json(ns.arrow, ns.json)
    if ns.verbose:
        print(f"wrote {ns.arrow if ns.mode == 'json-to-arrow' else ns.json}")
    return 0
