"""The statistics keys, the per-batch results, and the statistics batches' value types."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ... import types as t

STATISTICS_KEY = "quiver:statistics"
BATCH_KEY = "quiver:batch"
PREFIX_BYTES = 64
#: how the footer value (base64) starts when it holds a zstd frame, as quiver writes it
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
#: the zstd level of the footer value: the stream is ~20x smaller at any level; 1 is fastest
ZSTD_LEVEL = 1

ROW_COUNT = "ARROW:row_count:exact"
NULL_COUNT = "ARROW:null_count:exact"
NAN_COUNT = "quiver:nan_count:exact"
MIN_EXACT, MIN_APPROX = "ARROW:min_value:exact", "ARROW:min_value:approximate"
MAX_EXACT, MAX_APPROX = "ARROW:max_value:exact", "ARROW:max_value:approximate"


@dataclass(frozen=True, slots=True)
class ColumnStatistics:
    """What one batch's column holds: null and NaN counts and bounds (None: unknown; a
    null count the statistics do not state is None, an unstated NaN count 0)."""

    null_count: int | None
    min: Any = None
    max: Any = None
    min_exact: bool = True
    max_exact: bool = True
    nan_count: int = 0
    has_bounds: bool = False


@dataclass(frozen=True, slots=True)
class BatchStatistics:
    """The statistics of one record batch: its index, rows (None when the statistics do
    not state them) and columns."""

    index: int
    row_count: int | None
    columns: tuple[ColumnStatistics, ...]


# -- the statistics array and its IPC encoding -----------------------------------------

_BOUNDED = (t.IntegerType, t.FloatingPointType, t.DateType, t.TimeType, t.TimestampType,
            t.DurationType, t.DecimalType, t.BoolType, t.StringType, t.BinaryType)
KEYS = sorted([ROW_COUNT, NULL_COUNT, NAN_COUNT, MIN_EXACT, MIN_APPROX, MAX_EXACT,
                MAX_APPROX])
KEY_INDEX = {k: i for i, k in enumerate(KEYS)}  # a key's code in the statistics batches
# the codes the writer and the reader use: the three counts', and per side (min, max) the
# exact and the approximate bound's
ROW_CODE, NULL_CODE, NAN_CODE = (KEY_INDEX[k] for k in (ROW_COUNT, NULL_COUNT, NAN_COUNT))
BOUND_CODES = tuple(
    (KEY_INDEX[exact], KEY_INDEX[approx])
    for exact, approx in ((MIN_EXACT, MIN_APPROX), (MAX_EXACT, MAX_APPROX))
)


def value_type(dtype: t.DataType) -> t.DataType:
    """The type whose values the statistics of a ``dtype`` column hold: an extension's
    storage, a dictionary's value type, else ``dtype``."""
    dtype = t.storage_of(dtype) if isinstance(dtype, t.ExtensionType) else dtype
    return dtype.value_type if isinstance(dtype, t.DictionaryType) else dtype


def union_value_types(schema: t.Schema) -> list[t.DataType]:
    """The dense union's children for a file's schema: int64 (the counts) first, then
    each type whose min and max quiver computes, once (fixed per file, so that every
    statistics batch has one schema)."""
    out: list[t.DataType] = [t.int64()]
    for f in schema.fields:
        vt = value_type(f.type)
        if isinstance(t.storage_of(vt), _BOUNDED) and vt not in out:
            out.append(vt)
    return out


def is_float(dtype: t.DataType) -> bool:
    """Whether the statistics of a ``dtype`` column count NaNs (floating-point values)."""
    return isinstance(t.storage_of(value_type(dtype)), t.FloatingPointType)
