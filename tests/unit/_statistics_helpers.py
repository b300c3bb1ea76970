"""Helpers shared by the ipc.statistics, filters and writer tests."""

from __future__ import annotations

import base64
import datetime as dt
import decimal

import pyarrow as pa
import zstandard

import quiver.ipc as ipc
from quiver.ipc.statistics import STATISTICS_KEY

COLUMNS = {
    "i64": pa.array([5, None, -3, 12, 0], pa.int64()),
    "u8": pa.array([200, 3, None, 7, 255], pa.uint8()),
    "i16": pa.array([None, None, None, None, None], pa.int16()),
    "f64": pa.array([1.5, float("nan"), None, -2.25, 8.0]),
    "f32": pa.array([float("nan"), float("nan"), None, None, None], pa.float32()),
    "s": pa.array(["pear", None, "apple", "", "zebra"]),
    "ls": pa.array(["b", "a", None, "c", "b"], pa.large_string()),
    "bin": pa.array([b"\x01\x02", b"\x00", None, b"\xff", b""]),
    "b": pa.array([False, None, False, False, False]),
    "d32": pa.array([dt.date(2020, 1, 1), None, dt.date(1999, 12, 31), dt.date(2030, 5, 5),
                     dt.date(2020, 1, 2)]),
    "ts": pa.array([1, 2, None, -5, 100], pa.timestamp("ms", "Europe/Paris")),
    "t64": pa.array([1, 2, None, 5, 100], pa.time64("us")),
    "dur": pa.array([1, -2, None, 5, 100], pa.duration("s")),
    "dec": pa.array([decimal.Decimal("1.50"), decimal.Decimal("-3.25"), None,
                     decimal.Decimal("10.00"), decimal.Decimal("-0.01")], pa.decimal128(10, 2)),
    "dec256": pa.array([decimal.Decimal("1e30"), decimal.Decimal("-7"), None,
                        decimal.Decimal("0"), decimal.Decimal("5")], pa.decimal256(40, 0)),
}


def _write_stats(table: pa.Table, batch_rows: int, **kw) -> bytes:
    kw.setdefault("statistics", True)
    sink = ipc.BufferOutputStream()
    with ipc.new_file(sink, table.schema, **kw) as writer:
        for batch in table.to_batches(max_chunksize=batch_rows):
            writer.write_batch(batch)
    return bytes(sink.getvalue())


# -- statistics of many batches: written and read as a matrix of messages ----------------

def _many_batches_table() -> pa.Table:
    table = pa.table(COLUMNS)
    table = table.append_column(
        "dict", pa.array(["a", "b", None, "a", "c"]).dictionary_encode())
    table = table.append_column("long", pa.array(["x" * 100, "y" * 70 + "\U0010ffff", None,
                                                  "a", "z" * 65]))
    return pa.concat_tables([table] * 24)  # 120 rows: batches with 1, 2 and 3 digits


def _footer_value(data: bytes) -> bytes:
    return pa.ipc.open_file(data).metadata[STATISTICS_KEY.encode()]


def _stream_bytes(value: bytes | str) -> bytes:
    """The IPC stream of a footer value, decoded as another implementation would: base64,
    then the zstd frame quiver writes (docs/statistics-format.md)."""
    raw = base64.b64decode(value)
    assert raw[:4] == b"\x28\xb5\x2f\xfd", "expected one zstd frame"
    return zstandard.ZstdDecompressor().decompress(raw)
