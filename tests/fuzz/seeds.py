"""Seed inputs for the fuzzer: valid gold files, small enough to mutate quickly."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import INTEGRATION, SUPPLEMENT

MAX_SEED_BYTES = 64 * 1024


def seed_files() -> list[Path]:
    """Valid IPC streams and files from the gold folders (under MAX_SEED_BYTES)."""
    found: list[Path] = []
    for folder in (INTEGRATION, SUPPLEMENT):
        if not folder.exists():
            continue
        for p in sorted(folder.rglob("*")):
            if p.suffix in (".stream", ".arrow_file") and p.stat().st_size <= MAX_SEED_BYTES:
                found.append(p)
    return found


def statistics_seeds() -> list[bytes]:
    """The IPC streams inside the footer statistics of a few files quiver writes (columns
    of every bounded kind, nulls, NaN, a dictionary), decompressed: what the statistics
    fuzz target mutates.  Made here, so they need no shared material."""
    import base64
    import datetime as dt
    import decimal

    import zstandard

    import quiver as qv
    import quiver.ipc as ipc
    from quiver import types as t
    from quiver.ipc.statistics import STATISTICS_KEY

    columns = {
        "i": qv.array([5, None, -3, 12, 0, 7]),
        "f": qv.array([1.5, float("nan"), None, -2.25, 8.0, 0.0]),
        "s": qv.array(["pear", None, "apple", "", "zebra", "p" * 70]),
        "b": qv.array([False, None, True, False, False, True]),
        "d": qv.array([dt.date(2020, 1, 1), None, dt.date(1999, 12, 31), dt.date(2030, 5, 5),
                       dt.date(2020, 1, 2), None]),
        "m": qv.array([decimal.Decimal("1.50"), None, decimal.Decimal("-3.25"),
                       decimal.Decimal("10.00"), decimal.Decimal("-0.01"),
                       decimal.Decimal("2.00")], t.decimal128(10, 2)),
        "k": qv.array(["a", "b", None, "a", "c", "b"], t.dictionary(t.int32(), t.string())),
    }
    table = qv.table(columns)
    found = []
    for rows in (1, 2, 6):
        sink = ipc.BufferOutputStream()
        with ipc.new_file(sink, table.schema, statistics=True) as writer:
            writer.write_table(table, max_chunksize=rows)
        value = ipc.open_file(sink.getvalue()).footer.custom_metadata[STATISTICS_KEY]
        found.append(zstandard.ZstdDecompressor().decompress(base64.b64decode(value)))
    return found
