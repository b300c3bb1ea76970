"""The data and the comparison of the differential suite (tests/spark/test_differential.py).

One source DataFrame holds every Spark type quiver's source produces, with the values
that break readers: nulls, NaN, +-inf, -0.0, the ends of each integer type, decimals,
dates and timestamps before 1970 and with microseconds, empty strings and strings with
'/', '=', '%', ' ', ':' and non-ASCII, empty and null arrays, structs and maps.  It is
written once per module by quiver's sink (IPC file with footer statistics, IPC stream,
hive-partitioned) and by Spark's Parquet writer, from the same DataFrame, in small
batches so that statistics can skip.

:func:`canonical` turns collected rows into plain tuples in which NaN, None, -0.0 and
0.0, a decimal's scale and the Python type of every value are told apart, so that two
results compare equal only when Spark would show the same values.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import os
from typing import Any

ROWS = 2400  # ids 0 .. ROWS-1, sorted within each file so that each batch covers a range
TASKS = 3  # files per flat layout (one per write task)
BATCH_ROWS = 50  # rows per record batch written by quiver's sink
PARTITION_COLUMNS = ("pk", "ps")  # an int and a string (with null) partition column

# Each column as a Spark SQL expression over ``id`` (spark.range).  pk and ps come last so
# that the flat and the hive-partitioned layouts have the same column order.
COLUMNS: dict[str, str] = {
    "id": "id",
    "i8": "case when id % 17 = 0 then null when id % 97 = 1 then cast(127 as tinyint) "
          "when id % 97 = 2 then cast(-128 as tinyint) "
          "else cast(id % 200 - 100 as tinyint) end",
    "i16": "case when id % 19 = 0 then null when id % 89 = 1 then cast(32767 as smallint) "
           "when id % 89 = 2 then cast(-32768 as smallint) "
           "else cast((id * 7) % 60000 - 30000 as smallint) end",
    "i32": "case when id % 23 = 0 then null when id = 5 then 2147483647 "
           "when id = 6 then -2147483648 else cast((id * 7919) % 100000 - 50000 as int) end",
    "i64": "case when id % 29 = 0 then null when id = 7 then 9223372036854775807L "
           "when id = 8 then -9223372036854775808L else id * 1000000007L - 3000000000000L end",
    "f32": "case when id % 31 = 0 then null when id % 50 = 1 then float('NaN') "
           "when id % 50 = 2 then float('Infinity') when id % 50 = 3 then float('-Infinity') "
           "when id % 50 = 4 then float('-0.0') when id % 50 = 5 then float(0.0) "
           "when id % 50 = 6 then float(0.1) else cast(id / 8.0 - 100 as float) end",
    "f64": "case when id % 37 = 0 then null when id % 40 = 1 then double('NaN') "
           "when id % 40 = 2 then double('Infinity') "
           "when id % 40 = 3 then double('-Infinity') "
           "when id % 40 = 4 then double('-0.0') when id % 40 = 5 then 0.0D "
           "when id % 40 = 6 then 0.1D when id = 9 then 1.7976931348623157E308D "
           "when id = 10 then 4.9E-324D else (id - 1200) / 3.0D end",
    "dec": "case when id % 41 = 0 then null "
           "else cast((id - 1200) * 1.125 as decimal(12,3)) end",
    "s": "case when id % 13 = 0 then null when id % 13 = 1 then '' "
         "when id % 13 = 2 then 'a/b' when id % 13 = 3 then 'x=y' "
         "when id % 13 = 4 then 'p%q' when id % 13 = 5 then 'sp ace' "
         "when id % 13 = 6 then 'c:d' when id % 13 = 7 then concat('héllo', id % 7) "
         "else concat('k', cast(id % 37 as string)) end",
    "bin": "case when id % 43 = 0 then null when id % 43 = 1 then X'' "
           "else encode(concat('k', cast(id % 11 as string)), 'utf-8') end",
    "b": "case when id % 3 = 0 then true when id % 3 = 1 then false else null end",
    "d": "case when id % 47 = 0 then null when id = 11 then date'0001-01-01' "
         "when id = 12 then date'9999-12-31' "
         "else date_add(date'1969-12-01', cast(id % 400 as int)) end",
    "ts": "case when id % 53 = 0 then null when id = 13 then timestamp'1900-01-01 00:00:00' "
          "else timestamp_micros(id * 3600000123L - 1000000000000L) end",
    "ntz": "case when id % 59 = 0 then null "
           "else cast(timestamp_micros(id * 1800000077L - 500000000000L) as timestamp_ntz) end",
    "arr": "case when id % 11 = 0 then null when id % 7 = 0 then array() "
           "else array(cast(id % 5 as int), cast(null as int), cast(id % 3 as int)) end",
    "st": "case when id % 61 = 0 then null "
          "else named_struct('a', cast(id % 100 - 50 as int), 'b', "
          "case when id % 2 = 0 then null else concat('v', cast(id % 9 as string)) end) end",
    "m": "case when id % 67 = 0 then null when id % 5 = 0 then map() "
         "else map('k', cast(id % 3 as int), 'z', cast(id % 4 as int)) end",
    "pk": "cast(id % 3 as int)",
    "ps": "case when id % 5 = 0 then null when id % 5 < 3 then 'a' else 'b' end",
}


def source_frame(spark: Any) -> Any:
    """The source DataFrame: ``ROWS`` rows in ``TASKS`` partitions, sorted by id."""
    df = spark.range(0, ROWS).selectExpr(*[f"{expr} as {name}" for name, expr in COLUMNS.items()])
    return df.repartitionByRange(TASKS, "id").sortWithinPartitions("id")


def write_layouts(spark: Any, root: str) -> dict[str, tuple[str, str]]:
    """Write the source data in each layout: ``{layout: (quiver path, parquet path)}``.

    ``file``: IPC files with footer statistics; ``stream``: IPC streams; ``hive``: IPC files
    under ``pk=.../ps=.../`` directories.  The Parquet copies are written by Spark from the
    same DataFrame (flat, or partitioned the same way).
    """
    df = source_frame(spark).cache()
    df.count()
    flat_parquet = os.path.join(root, "parquet-flat")
    hive_parquet = os.path.join(root, "parquet-hive")
    df.write.mode("overwrite").parquet(flat_parquet)
    df.write.mode("overwrite").partitionBy(*PARTITION_COLUMNS).parquet(hive_parquet)
    out = {}
    for layout, fmt in (("file", "file"), ("stream", "stream")):
        path = os.path.join(root, f"arrow-{layout}")
        (df.write.format("arrow").option("format", fmt).option("batchRows", BATCH_ROWS)
         .mode("overwrite").save(path))
        out[layout] = (path, flat_parquet)
    path = os.path.join(root, "arrow-hive")
    (df.write.format("arrow").option("format", "file").option("batchRows", BATCH_ROWS)
     .option("partitionBy", ",".join(PARTITION_COLUMNS)).mode("overwrite").save(path))
    out["hive"] = (path, hive_parquet)
    df.unpersist()
    return out


# -- comparing results ------------------------------------------------------------------


def canonical(value: Any) -> Any:
    """A value as a hashable, orderable-by-repr tuple that tells apart what Spark tells
    apart: None from NaN, -0.0 from 0.0, Decimal('1.10') from Decimal('1.1'), a date from
    a timestamp, bytes from str, and keeps the order of arrays and of map entries."""
    if value is None:
        return ("null",)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, float):
        if math.isnan(value):
            return ("float", "NaN")
        return ("float", repr(value))  # repr keeps -0.0 and every digit
    if isinstance(value, decimal.Decimal):
        return ("decimal", str(value))
    if isinstance(value, dt.datetime):
        return ("datetime", value.isoformat(), str(value.tzinfo))
    if isinstance(value, dt.date):
        return ("date", value.isoformat())
    if isinstance(value, dt.time):
        return ("time", value.isoformat())
    if isinstance(value, dt.timedelta):
        return ("timedelta", value.days, value.seconds, value.microseconds)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return ("binary", bytes(value))
    if isinstance(value, str):
        return ("str", value)
    if hasattr(value, "asDict") and hasattr(value, "__fields__"):  # a Row
        return ("row", tuple((name, canonical(v)) for name, v in zip(value.__fields__, value)))
    if isinstance(value, (list, tuple)):
        return ("list", tuple(canonical(v) for v in value))
    if isinstance(value, dict):
        return ("map", tuple((canonical(k), canonical(v)) for k, v in value.items()))
    raise TypeError(f"no canonical form for {type(value).__name__}: {value!r}")


class Ordered(list):
    """Rows whose order is part of the result (the query ordered them)."""


def canonical_result(result: Any) -> Any:
    """A query's result in canonical form: a list of rows is compared as a multiset
    (sorted by repr) unless it is :class:`Ordered`; lists of results element by element."""
    if isinstance(result, Ordered):
        return ("ordered", tuple(canonical(r) for r in result))
    if isinstance(result, list) and all(hasattr(r, "__fields__") for r in result):
        return ("rows", tuple(sorted((canonical(r) for r in result), key=repr)))
    if isinstance(result, tuple):
        return ("results", tuple(canonical_result(r) for r in result))
    return canonical(result)


def describe_difference(got: Any, expected: Any, limit: int = 8) -> str:
    """A short account of how two canonical results differ (for assertion messages)."""
    if (isinstance(got, tuple) and isinstance(expected, tuple) and got and expected
            and got[0] == expected[0] == "results"):
        parts = []
        for i, (g, e) in enumerate(zip(got[1], expected[1])):
            if g != e:
                parts.append(f"result {i}: {describe_difference(g, e, limit)}")
        return "; ".join(parts) or "different number of results"
    if (isinstance(got, tuple) and isinstance(expected, tuple) and got and expected
            and got[0] == expected[0] and got[0] in ("rows", "ordered")):
        g_rows, e_rows = list(got[1]), list(expected[1])
        missing = [r for r in e_rows if r not in g_rows]
        extra = [r for r in g_rows if r not in e_rows]
        head = f"quiver gave {len(g_rows)} rows, Parquet {len(e_rows)}"
        if not missing and not extra:
            return head + " (same rows, different order or multiplicity)"
        return (f"{head}; missing {len(missing)} e.g. {missing[:limit]}; "
                f"extra {len(extra)} e.g. {extra[:limit]}")
    return f"quiver {got!r} != Parquet {expected!r}"
