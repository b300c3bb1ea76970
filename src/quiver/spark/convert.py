"""Arrays into the Arrow types Spark reads (:mod:`quiver.spark.policy`), with numpy.

:func:`to_spark_array` walks an array and its type together and returns an array of
``spark_arrow_type(array.type)``.  Columns already of that type come back as they are
(no copy); the rest are rebuilt with vectorized numpy: unsigned integers widened,
temporal units rescaled with overflow and range checks, large and view layouts gathered
into 32-bit offsets, dictionaries and run-end encoded columns decoded, unions turned
into a struct of the type code and one field per child.  A value Spark cannot represent
raises :class:`~quiver.errors.ArrowInvalid` naming where it is (:class:`Where`: the file
and batch the caller gives, the column path, the row within the batch), unless the policy
says to make it null.

:func:`take` gathers rows of a Spark-compatible array (the types the policy produces);
the dictionary, run-end and union decoders and the sink's hive partitioning use it.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import numpy as np

from .. import registry
from .. import types as t
from ..array import make_array
from ..array.base import Array
from ..array.build import array as build
from ..array.decimal import beyond_digits, limbs, to_ints, widen
from ..array.take import gather
from ..array.validate import ragged_indices
from ..buffers import pack_bits
from ..errors import ArrowInvalid, NotSupported
from ..filters import valid_mask
from .policy import DEFAULT_POLICY, ReadPolicy, spark_arrow_type

_INT32_MAX = 2**31 - 1
_US_PER_DAY = 86_400_000_000
# Spark's TIMESTAMP range: 0001-01-01T00:00:00 to 9999-12-31T23:59:59.999999 (UTC)
_MIN_US = -62_135_596_800_000_000
_MAX_US = 253_402_300_799_999_999
_MIN_DAY, _MAX_DAY = _MIN_US // _US_PER_DAY, _MAX_US // _US_PER_DAY
_NS_PER_DAY = 86_400_000_000_000
_TO_US = {"s": 1_000_000, "ms": 1_000, "us": 1}
_TO_NS = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}


@dataclass(frozen=True, slots=True)
class Where:
    """Where a column comes from, for error messages: file, field path, first row."""

    file: str = ""
    path: str = ""
    row: int = 0

    def child(self, name: str) -> Where:
        """The same place, one field deeper."""
        return Where(self.file, f"{self.path}.{name}" if self.path else name, self.row)

    def describe(self, index: int) -> str:
        """``file, column c, row r`` for the ``index``-th value of this column."""
        parts = [self.file] if self.file else []
        parts.append(f"column {self.path or '?'}")
        parts.append(f"row {self.row + index}")
        return ", ".join(parts)


# -- small numpy helpers --------------------------------------------------------------


def validity_bitmap(mask: np.ndarray | None) -> np.ndarray | None:
    """A validity bitmap of a boolean mask of valid slots (None: all valid)."""
    return None if mask is None else pack_bits(mask)


def _values(arr: Array, dtype: str | np.dtype, width: int = 1) -> np.ndarray:
    """The value buffer of a fixed-width array as ``dtype``, ``width`` per slot."""
    view = arr.buffers[1].view(dtype)
    return view[arr.offset * width : (arr.offset + len(arr)) * width]


def _fixed(dtype: t.DataType, values: np.ndarray, mask: np.ndarray | None) -> Array:
    n = len(values) if values.ndim == 1 else values.shape[0]
    data = np.ascontiguousarray(values).reshape(-1).view(np.uint8)
    return make_array(dtype, n, [validity_bitmap(mask), data], (), -1 if mask is not None else 0)


class _Invalid:
    """Collects out-of-range values: an error, or nulls when the policy says so."""

    def __init__(self, policy: ReadPolicy, where: Where) -> None:
        self.policy = policy
        self.where = where

    def check(self, bad: np.ndarray, mask: np.ndarray | None, what: str) -> np.ndarray | None:
        """``bad`` marks unrepresentable slots; returns the mask with them made null."""
        if mask is not None:
            bad = bad & mask
        if not bad.any():
            return mask
        if self.policy.invalid_values == "null":
            return ~bad if mask is None else mask & ~bad
        row = int(np.argmax(bad))
        raise ArrowInvalid(
            f"{self.where.describe(row)}: expected {what}, found a value outside it "
            f"(read such values as null with .option('invalidValues', 'null'))"
        )


# -- gathering (Spark-compatible types only) ----------------------------------------------


def _offsets32(arr: Array) -> np.ndarray:
    return arr.buffers[1].view(np.int32)[arr.offset : arr.offset + len(arr) + 1]


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """New int32 offsets for runs of ``lengths``, and the source index of every element."""
    total = int(lengths.sum(dtype=np.int64))
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if total > _INT32_MAX:
        raise NotSupported(
            f"expected at most {_INT32_MAX} bytes or elements in one column of one batch, "
            f"found {total}; write smaller batches"
        )
    return offsets.astype(np.int32), ragged_indices(starts, lengths)


def take(arr: Array, indices: np.ndarray, mask: np.ndarray | None = None) -> Array:
    """Rows ``indices`` of ``arr`` (positions within it); slots where ``mask`` is False
    come out null.  The gather is :func:`quiver.array.take.gather` (every type); the caller
    has checked the indices.

    >>> import quiver as qv
    >>> take(qv.array(["a", None, "ccc"]), np.array([2, 0, 1])).to_pylist()
    ['ccc', 'a', None]
    """
    if mask is not None and mask.all():
        mask = None
    if mask is not None:
        if len(arr) == 0:
            return all_null(arr.type, len(indices))
        indices = np.where(mask, indices, 0)
    return gather(arr, np.asarray(indices, dtype=np.int64), mask)


def all_null(dtype: t.DataType, n: int) -> Array:
    """An array of ``n`` nulls of a Spark-compatible type."""
    if isinstance(dtype, t.NullType):
        return make_array(dtype, n, [], (), n)
    validity = np.zeros((n + 7) // 8, dtype=np.uint8)
    if isinstance(dtype, t.StructType):
        return make_array(dtype, n, [validity], [all_null(f.type, n) for f in dtype.fields], n)
    if isinstance(dtype, t.BoolType):
        return make_array(dtype, n, [validity, validity.copy()], (), n)
    if isinstance(dtype, (t.StringType, t.BinaryType, t.ListType, t.MapType)):
        offsets = np.zeros((n + 1) * 4, dtype=np.uint8)
        if isinstance(dtype, (t.StringType, t.BinaryType)):
            return make_array(dtype, n, [validity, offsets, np.zeros(0, np.uint8)], (), n)
        child = all_null(dtype.fields[0].type, 0)
        return make_array(dtype, n, [validity, offsets], [child], n)
    return make_array(dtype, n, [validity, np.zeros(n * dtype.byte_width, np.uint8)], (), n)


# -- the walk ---------------------------------------------------------------------------


def to_spark_array(
    arr: Array, policy: ReadPolicy = DEFAULT_POLICY, where: Where | None = None
) -> Array:
    """``arr`` as an array of ``spark_arrow_type(arr.type)`` (itself when it already is)."""
    where = where or Where()
    dtype = arr.type
    target = spark_arrow_type(dtype, policy)
    if target == dtype and not t.is_nested(dtype):
        return _checked_as_is(arr, policy, where)
    convert = registry.table("spark_convert").get(type(dtype))
    if convert is None:
        raise NotSupported(f"expected a type Spark can read, found {dtype} ({where.path})")
    return convert(arr, target, policy, where)


def _checked_as_is(arr: Array, policy: ReadPolicy, where: Where) -> Array:
    """A column Spark takes as it is, after the checks its values need: the ranges Spark
    can represent (times of day, timestamps and dates in years 1-9999), and offsets the
    JVM will follow without bounds checks (monotonic)."""
    dtype = arr.type
    invalid = _Invalid(policy, where)
    mask = valid_mask(arr)
    checked = mask
    if isinstance(dtype, t.TimeType):  # time64[ns]
        ns = _values(arr, "<i8")
        checked = invalid.check((ns < 0) | (ns >= _NS_PER_DAY), mask,
                                "a time of day from 00:00 to before 24:00")
        if (ns % 1000).any():  # Spark's time(6): cut to microseconds, as timestamps are
            return _fixed(dtype, ns - ns % 1000, checked)
    elif isinstance(dtype, t.DecimalType):  # decimal128 of at most 38 digits
        lmb = limbs(arr.buffers[1], 128, arr.offset, len(arr))
        checked = _check_digits(lmb, dtype.precision, mask, invalid)
    elif isinstance(dtype, t.TimestampType):  # microseconds, with or without UTC
        us = _values(arr, "<i8")
        checked = invalid.check((us < _MIN_US) | (us > _MAX_US), mask,
                                "a timestamp in years 1 to 9999")
    elif isinstance(dtype, t.DateType):  # date32
        days = _values(arr, "<i4")
        checked = invalid.check((days < _MIN_DAY) | (days > _MAX_DAY), mask,
                                "a date in years 1 to 9999")
    elif isinstance(dtype, (t.StringType, t.BinaryType)):
        _check_offsets(_offsets32(arr), mask, where)
    if checked is not mask:  # invalid values made null: a new validity, same values
        return make_array(dtype, len(arr), [_bitmap_at(checked, arr.offset), *arr.buffers[1:]],
                          arr.children, -1, arr.offset)
    return arr


def _bitmap_at(mask: np.ndarray, offset: int) -> np.ndarray:
    """A validity bitmap whose bit ``offset + i`` is ``mask[i]``."""
    return pack_bits(np.concatenate([np.zeros(offset, dtype=bool), mask]))


def _check_offsets(offsets: np.ndarray, mask: np.ndarray | None, where: Where) -> None:
    """Offsets must not decrease (the JVM reads values between them unchecked)."""
    step = np.diff(offsets.astype(np.int64))
    bad = step < 0
    if bad.any():
        row = int(np.argmax(bad))
        raise ArrowInvalid(
            f"{where.describe(row)}: expected offsets that do not decrease, found "
            f"{int(offsets[row])} then {int(offsets[row + 1])}"
        )


def _integer(arr: Array, target: t.DataType, policy: ReadPolicy, where: Where) -> Array:
    dtype = arr.type
    values = _values(arr, f"<u{dtype.width // 8}")
    mask = valid_mask(arr)
    if isinstance(target, t.DecimalType):  # uint64 -> decimal(20, 0): low word, high word 0
        pair = np.zeros((len(values), 2), dtype=np.uint64)
        pair[:, 0] = values
        return _fixed(target, pair, mask)
    return _fixed(target, values.astype(f"<i{target.width // 8}"), mask)


def _float(arr: Array, target: t.DataType, policy: ReadPolicy, where: Where) -> Array:
    return _fixed(target, _values(arr, "<f2").astype(np.float32), valid_mask(arr))


def _check_digits(lmb: np.ndarray, precision: int, mask: np.ndarray | None,
                  invalid: _Invalid) -> np.ndarray | None:
    """Values of more digits than the column's precision are invalid values (Spark refuses
    them: NUMERIC_VALUE_OUT_OF_RANGE)."""
    return invalid.check(beyond_digits(lmb, precision), mask,
                         f"a decimal of at most {precision} digits (its precision)")


def _decimal(arr: Array, target: t.DataType, policy: ReadPolicy, where: Where) -> Array:
    dtype = arr.type
    mask = valid_mask(arr)
    lmb = limbs(arr.buffers[1], dtype.width, arr.offset, len(arr))
    if isinstance(target, t.StringType):  # wider than Spark's, or a scale it refuses
        return _decimal_strings(to_ints(lmb), dtype.scale, mask)
    if dtype.width == 128:
        return make_array(target, len(arr), arr.buffers, (), arr.null_count, arr.offset)
    # narrower: sign-extended; decimal256 of at most 38 digits: a value of at most 38
    # digits has the sign of its low 128 bits in the high 128, so the low limbs hold it
    checked = _check_digits(lmb, dtype.precision, mask, _Invalid(policy, where))
    return _fixed(target, widen(lmb, 2)[:, :2], checked)


def _decimal_strings(ints: np.ndarray, scale: int, mask: np.ndarray | None) -> Array:
    # the opt-in fallback for decimals wider than Spark's: formatted one value at a time
    out: list[str | None] = [
        None if mask is not None and not mask[i] else format(Decimal(f"{value}e{-scale}"), "f")
        for i, value in enumerate(ints.tolist())  # exact, any scale
    ]
    return build(out, t.string())


def _date(arr: Array, target: t.DataType, policy: ReadPolicy, where: Where) -> Array:
    ms = _values(arr, "<i8")
    mask = valid_mask(arr)
    days = np.floor_divide(ms, 86_400_000)
    mask = _Invalid(policy, where).check(
        (days < _MIN_DAY) | (days > _MAX_DAY), mask, "a date in years 1 to 9999"
    )
    return _fixed(target, days.astype(np.int32), mask)


def _time(arr: Array, target: t.DataType, policy: ReadPolicy, where: Where) -> Array:
    dtype = arr.type
    raw = _values(arr, f"<i{dtype.width // 8}").astype(np.int64)
    mask = valid_mask(arr)
    factor = _TO_NS[dtype.unit]
    bad = (raw < 0) | (raw >= _NS_PER_DAY // factor)
    mask = _Invalid(policy, where).check(bad, mask, "a time of day from 00:00 to before 24:00")
    return _fixed(target, np.where(bad, 0, raw) * factor, mask)


def _truncate_div(values: np.ndarray, divisor: int) -> np.ndarray:
    quotient = np.floor_divide(values, divisor)
    return quotient + ((values < 0) & (quotient * divisor != values))


def _scale_to_us(
    raw: np.ndarray, unit: str, mask: np.ndarray | None, invalid: _Invalid, what: str,
    low: int | None = None, high: int | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    if unit == "ns":  # truncated toward zero, as Spark converts pandas' nanoseconds
        us = _truncate_div(raw, 1000)
    else:
        factor = _TO_US[unit]
        limit = np.iinfo(np.int64).max // factor
        over = (raw > limit) | (raw < -limit)
        mask = invalid.check(over, mask, what)
        us = np.where(over, 0, raw) * factor
    if low is not None:
        bad = (us < low) | (us > high)
        mask = invalid.check(bad, mask, what)
    return us, mask


def _timestamp(arr: Array, target: t.DataType, policy: ReadPolicy, where: Where) -> Array:
    if arr.type.unit == "us":  # values are UTC microseconds whatever the zone: a new label
        mask = valid_mask(arr)
        us = _values(arr, "<i8")
        checked = _Invalid(policy, where).check(
            (us < _MIN_US) | (us > _MAX_US), mask, "a timestamp in years 1 to 9999"
        )
        if checked is mask:
            return _same(arr, target, policy, where)
        return _fixed(target, us, checked)
    us, mask = _scale_to_us(
        _values(arr, "<i8"), arr.type.unit, valid_mask(arr), _Invalid(policy, where),
        "a timestamp in years 1 to 9999", _MIN_US, _MAX_US,
    )
    return _fixed(target, us, mask)


def _duration(arr: Array, target: t.DataType, policy: ReadPolicy, where: Where) -> Array:
    us, mask = _scale_to_us(
        _values(arr, "<i8"), arr.type.unit, valid_mask(arr), _Invalid(policy, where),
        "a duration that fits in 64-bit microseconds",
    )
    return _fixed(target, us, mask)


def _interval(arr: Array, target: t.DataType, policy: ReadPolicy, where: Where) -> Array:
    unit = arr.type.unit
    n = len(arr)
    mask = valid_mask(arr)
    if unit == "month_day_nano":
        raw = _values(arr, "<i4", 4).reshape(-1, 4)
        parts = [raw[:, 0].copy(), raw[:, 1].copy(), raw[:, 2:].copy().view("<i8").reshape(-1)]
    elif unit == "day_time":
        raw = _values(arr, "<i4", 2).reshape(-1, 2)
        parts = [raw[:, 0].copy(), raw[:, 1].copy()]
    else:
        parts = [_values(arr, "<i4").copy()]
    children = [_fixed(f.type, p, None) for f, p in zip(target.fields, parts)]
    return make_array(target, n, [validity_bitmap(mask)], children, -1 if mask is not None else 0)


def _binary_like(arr: Array, target: t.DataType, policy: ReadPolicy, where: Where) -> Array:
    dtype = arr.type
    n = len(arr)
    mask = valid_mask(arr)
    validity = validity_bitmap(mask)
    if isinstance(dtype, t.FixedSizeBinaryType):
        width = dtype.width
        if n * width > _INT32_MAX:
            raise NotSupported(f"expected under 2 GiB per column and batch ({where.path})")
        offsets = (np.arange(n + 1, dtype=np.int64) * width).astype(np.int32)
        data = arr.buffers[1][arr.offset * width : (arr.offset + n) * width]
        return make_array(target, n, [validity, offsets.view(np.uint8), data], (), arr.null_count)
    if isinstance(dtype, (t.StringType, t.BinaryType)):  # large: 64-bit offsets
        wide = arr.buffers[1].view(np.int64)[arr.offset : arr.offset + n + 1]
        _check_offsets(wide, mask, where)
        start = int(wide[0]) if n else 0
        if n and int(wide[-1]) - start > _INT32_MAX:
            raise NotSupported(
                f"expected under 2 GiB of values per column and batch for Spark's 32-bit "
                f"offsets, found {int(wide[-1]) - start} bytes ({where.path})"
            )
        offsets = (wide - start).astype(np.int32)
        data = arr.buffers[2][start : int(wide[-1]) if n else start]
        return make_array(target, n, [validity, offsets.view(np.uint8), data], (), arr.null_count)
    return _views(arr, target, mask, where)


def _views(arr: Array, target: t.DataType, mask: np.ndarray | None, where: Where) -> Array:
    """Binary/string views into one data buffer: inline values are in the views
    themselves, the others in the variadic buffers; one gather over both."""
    n = len(arr)
    views = arr.buffers[1][arr.offset * 16 : (arr.offset + n) * 16]
    words = views.view("<i4").reshape(-1, 4)
    lengths = words[:, 0].astype(np.int64)
    if mask is not None:
        lengths = np.where(mask, lengths, 0)
    data_buffers = [b if b is not None else np.zeros(0, np.uint8) for b in arr.buffers[2:]]
    sizes = np.array([len(b) for b in data_buffers], dtype=np.int64)
    bases = np.concatenate([[len(views)], len(views) + np.cumsum(sizes)])
    inline = lengths <= 12
    buffer_index = words[:, 2].astype(np.int64)
    offset = words[:, 3].astype(np.int64)
    outside = ~inline
    bad = (lengths < 0) | (
        outside
        & ((buffer_index < 0) | (buffer_index >= len(data_buffers)) | (offset < 0))
    )
    if not bad.any() and outside.any():
        ends = offset[outside] + lengths[outside]
        bad[outside] = ends > sizes[buffer_index[outside]]
    if bad.any():
        row = int(np.argmax(bad))
        raise ArrowInvalid(
            f"{where.describe(row)}: expected a view inside its data buffers, found length "
            f"{int(lengths[row])}, buffer {int(buffer_index[row])}, offset {int(offset[row])}"
        )
    starts = np.where(
        inline,
        np.arange(n, dtype=np.int64) * 16 + 4,
        bases[np.clip(buffer_index, 0, len(data_buffers))] + offset,
    )
    pool = np.concatenate([views, *data_buffers]) if data_buffers else views
    offsets, index = _ranges(starts, lengths)
    return make_array(
        target, n, [validity_bitmap(mask), offsets.view(np.uint8), pool[index]], (), arr.null_count
    )


def _list_like(arr: Array, target: t.DataType, policy: ReadPolicy, where: Where) -> Array:
    dtype = arr.type
    n = len(arr)
    mask = valid_mask(arr)
    child_where = where.child(dtype.value_field.name)
    child = arr.children[0]
    if isinstance(dtype, t.FixedSizeListType):
        size = dtype.list_size
        values = to_spark_array(child.slice(arr.offset * size, n * size), policy, child_where)
        offsets = (np.arange(n + 1, dtype=np.int64) * size).astype(np.int32)
    elif isinstance(dtype, (t.ListViewType, t.LargeListViewType)):
        width = "<i8" if isinstance(dtype, t.LargeListViewType) else "<i4"
        starts = arr.buffers[1].view(width)[arr.offset : arr.offset + n].astype(np.int64)
        sizes = arr.buffers[2].view(width)[arr.offset : arr.offset + n].astype(np.int64)
        if mask is not None:
            sizes = np.where(mask, sizes, 0)
        bad = (sizes < 0) | (starts < 0) | (starts + sizes > len(child))
        if bad.any():
            row = int(np.argmax(bad))
            raise ArrowInvalid(
                f"{where.describe(row)}: expected a list view inside its {len(child)} "
                f"values, found offset {int(starts[row])} and size {int(sizes[row])}"
            )
        offsets, index = _ranges(starts, sizes)
        values = take(to_spark_array(child, policy, child_where), index)
    else:
        width = "<i8" if isinstance(dtype, t.LargeListType) else "<i4"
        raw = arr.buffers[1].view(width)[arr.offset : arr.offset + n + 1].astype(np.int64)
        start = int(raw[0]) if n else 0
        stop = int(raw[-1]) if n else 0
        if stop - start > _INT32_MAX:
            raise NotSupported(f"expected under 2**31 list values per batch ({where.path})")
        _check_offsets(raw, mask, where)
        values = to_spark_array(child.slice(start, stop - start), policy, child_where)
        offsets = (raw - start).astype(np.int32)
    values = _renamed(values, target.value_field.type)
    return make_array(target, n, [validity_bitmap(mask), offsets.view(np.uint8)], [values], -1)


def _renamed(arr: Array, target: t.DataType) -> Array:
    """The same buffers under ``target`` (equal but for child names and nullability)."""
    if arr.type == target:
        return arr
    children = arr.children
    if isinstance(target, (t.ListType, t.MapType)):
        children = [_renamed(children[0], target.fields[0].type)]
    elif isinstance(target, t.StructType):
        children = [_renamed(c, f.type) for c, f in zip(children, target.fields)]
    return make_array(target, len(arr), arr.buffers, children, arr.null_count, arr.offset)


def _map(arr: Array, target: t.DataType, policy: ReadPolicy, where: Where) -> Array:
    n = len(arr)
    raw = _offsets32(arr).astype(np.int64)
    _check_offsets(raw, valid_mask(arr), where)
    start = int(raw[0]) if n else 0
    stop = int(raw[-1]) if n else 0
    entries = arr.children[0].slice(start, stop - start)
    converted = _struct(entries, target.entries_field.type, policy, where)
    offsets = (raw - start).astype(np.int32)
    mask = valid_mask(arr)
    keys = valid_mask(converted.children[0])
    if keys is not None and not keys.all():
        # a null key (in the file, or a key made null as an invalid value): pyarrow's
        # import aborts the Python worker on it, Spark allows none
        lengths = np.diff(offsets.astype(np.int64))
        nulls = np.concatenate([[0], np.cumsum(~keys, dtype=np.int64)])
        holds_null = nulls[offsets[1:]] - nulls[offsets[:-1]] > 0
        mask = _Invalid(policy, where).check(holds_null, mask, "a map without null keys")
        lengths = np.where(holds_null, 0, lengths)  # such maps are null now: no entries
        kept = np.repeat(~holds_null, np.diff(offsets.astype(np.int64)))
        converted = take(converted, np.flatnonzero(kept))
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    return make_array(target, n, [validity_bitmap(mask), offsets.view(np.uint8)], [converted], -1)


def _struct(arr: Array, target: t.DataType, policy: ReadPolicy, where: Where) -> Array:
    n = len(arr)
    children = [
        _renamed(to_spark_array(c.slice(arr.offset, n), policy, where.child(f.name)), tf.type)
        for c, f, tf in zip(arr.children, arr.type.fields, target.fields)
    ]
    mask = valid_mask(arr)
    return make_array(target, n, [validity_bitmap(mask)], children, -1 if mask is not None else 0)


def _with_mask(arr: Array, mask: np.ndarray) -> Array:
    """``arr`` (offset 0 or not) with the slots where ``mask`` is False made null."""
    if isinstance(arr.type, t.NullType):
        return arr
    own = valid_mask(arr)
    combined = mask if own is None else own & mask
    bits = np.concatenate([np.zeros(arr.offset, dtype=bool), combined])
    buffers = (pack_bits(bits), *arr.buffers[1:])
    return make_array(arr.type, len(arr), buffers, arr.children, -1, arr.offset, arr.dictionary)


def _union(arr: Array, target: t.DataType, policy: ReadPolicy, where: Where) -> Array:
    dtype = arr.type
    n = len(arr)
    codes = arr.buffers[0].view(np.int8)[arr.offset : arr.offset + n]
    known = np.isin(codes, np.array(dtype.type_codes, dtype=np.int8))
    if not known.all():
        row = int(np.argmin(known))
        raise ArrowInvalid(
            f"{where.describe(row)}: expected a union type code in {list(dtype.type_codes)}, "
            f"found {int(codes[row])}"
        )
    children = [_fixed(t.int8(), codes.copy(), None)]
    for child, field, code, tf in zip(arr.children, dtype.fields, dtype.type_codes,
                                      target.fields[1:]):
        chosen = codes == code
        converted = to_spark_array(
            child if dtype.mode == "dense" else child.slice(arr.offset, n),
            policy, where.child(field.name),
        )
        if dtype.mode == "dense":
            offsets = arr.buffers[1].view("<i4")[arr.offset : arr.offset + n].astype(np.int64)
            bad = chosen & ((offsets < 0) | (offsets >= len(child)))
            if bad.any():
                row = int(np.argmax(bad))
                raise ArrowInvalid(
                    f"{where.describe(row)}: expected a dense union offset below "
                    f"{len(child)}, found {int(offsets[row])}"
                )
            part = take(converted, np.where(chosen, offsets, 0), chosen)
        else:
            part = _with_mask(converted, chosen)
        children.append(_renamed(part, tf.type))
    return make_array(target, n, [None], children, 0)


def _dictionary(arr: Array, target: t.DataType, policy: ReadPolicy, where: Where) -> Array:
    dtype = arr.type
    indices = _values(arr, f"<{'i' if dtype.index_type.signed else 'u'}"
                      f"{dtype.index_type.width // 8}").astype(np.int64)
    mask = valid_mask(arr)
    values = to_spark_array(arr.dictionary, policy, where)
    bad = (indices < 0) | (indices >= len(values))
    if mask is not None:
        bad &= mask
    if bad.any():
        row = int(np.argmax(bad))
        raise ArrowInvalid(
            f"{where.describe(row)}: expected a dictionary index below {len(values)}, "
            f"found {int(indices[row])}"
        )
    if mask is not None:
        indices = np.where(mask, indices, 0)
    return _renamed(take(values, indices, mask), target)


def _run_end(arr: Array, target: t.DataType, policy: ReadPolicy, where: Where) -> Array:
    run_ends_arr, values_arr = arr.children
    ends = run_ends_arr.buffers[1].view(
        f"<i{run_ends_arr.type.width // 8}"
    )[run_ends_arr.offset : run_ends_arr.offset + len(run_ends_arr)].astype(np.int64)
    logical = np.arange(arr.offset, arr.offset + len(arr), dtype=np.int64)
    physical = np.searchsorted(ends, logical, side="right")
    if len(physical) and int(physical[-1]) >= len(values_arr):
        raise ArrowInvalid(
            f"{where.describe(len(arr) - 1)}: expected run ends covering "
            f"{arr.offset + len(arr)} values, found {len(ends)} runs ending at "
            f"{int(ends[-1]) if len(ends) else 0}"
        )
    values = to_spark_array(values_arr, policy, where)
    return _renamed(take(values, physical), target)


def _same(arr: Array, target: t.DataType, policy: ReadPolicy, where: Where) -> Array:
    return make_array(target, len(arr), arr.buffers, arr.children, arr.null_count, arr.offset)


def _storage(arr: Array, target: t.DataType, policy: ReadPolicy, where: Where) -> Array:
    storage = make_array(arr.type.storage_type, len(arr), arr.buffers, arr.children,  # type: ignore[attr-defined]
                         arr.null_count, arr.offset, arr.dictionary)
    return to_spark_array(storage, policy, where)


def _as_is(arr: Array, target: t.DataType, policy: ReadPolicy, where: Where) -> Array:
    # (Spark reads these types as they are: to_spark_array takes them before any lookup)
    return _checked_as_is(arr, policy, where)


# one converter per type class (the registry's spark_convert piece), for an array whose
# Spark type (spark_arrow_type) is not its own, or that is nested
for _convert, _classes in (
    (_as_is, (t.NullType, t.BoolType)),
    (_storage, (t.ExtensionType,)),
    (_integer, (t.IntegerType,)),
    (_float, (t.FloatingPointType,)),
    (_decimal, (t.DecimalType,)),
    (_date, (t.DateType,)),
    (_time, (t.TimeType,)),
    (_timestamp, (t.TimestampType,)),
    (_duration, (t.DurationType,)),
    (_interval, (t.IntervalType,)),
    (_binary_like, (t.BinaryType, t.StringType, t.BinaryViewType, t.StringViewType,
                    t.FixedSizeBinaryType)),
    (_list_like, (t.ListType, t.LargeListType, t.ListViewType, t.LargeListViewType,
                  t.FixedSizeListType)),
    (_map, (t.MapType,)),
    (_struct, (t.StructType,)),
    (_union, (t.UnionType,)),
    (_dictionary, (t.DictionaryType,)),
    (_run_end, (t.RunEndEncodedType,)),
):
    registry.register("spark_convert", _convert, *_classes)
