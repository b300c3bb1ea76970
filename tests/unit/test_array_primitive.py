"""Tests for quiver.array.primitive: fixed-width arrays."""

from __future__ import annotations

import datetime as dt
import zoneinfo
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

import quiver as qv
from quiver.errors import ArrowInvalid
from tests.roundtrip.pa_types import from_pyarrow
from tests.unit._helpers import same_as_pyarrow

# -- to_pylist matches pyarrow -----------------------------------------------------------


def test_integers_and_floats_convert_like_pyarrow() -> None:
    assert same_as_pyarrow(pa.array([1, None, -3], pa.int8())) == [1, None, -3]
    assert same_as_pyarrow(pa.array([2**64 - 1, None], pa.uint64())) == [2**64 - 1, None]
    got = same_as_pyarrow(pa.array([1.5, None], pa.float16()))
    assert type(got[0]) is float
    assert same_as_pyarrow(pa.array([1.1], pa.float32())) == [1.100000023841858]


def test_decimals_of_every_width_convert_to_decimal() -> None:
    for make, p in [(pa.decimal32, 7), (pa.decimal64, 15), (pa.decimal128, 30),
                    (pa.decimal256, 70)]:
        vals = [Decimal("-1.25"), None, Decimal("3.00"), Decimal(f"{'9' * (p - 2)}.99")]
        assert same_as_pyarrow(pa.array(vals, make(p, 2))) == vals


def test_negative_scale_decimal_keeps_the_exponent() -> None:
    assert same_as_pyarrow(pa.array([Decimal("100")], pa.decimal128(5, -2))) == [
        Decimal("1E+2")
    ]


@pytest.mark.parametrize("tz", ["UTC", "+01:00", "-05:30", "America/New_York"])
def test_timestamps_with_a_time_zone_are_aware_like_pyarrow(tz: str) -> None:
    pa_arr = pa.array([0, None, 1_600_000_000], pa.timestamp("s", tz))
    got = same_as_pyarrow(pa_arr)
    assert got[0].tzinfo is not None
    assert got[0].utcoffset() == pa_arr.to_pylist()[0].utcoffset()


def test_utc_and_named_zones_use_zoneinfo() -> None:
    got = qv.array([0], qv.timestamp("ms", "UTC")).to_pylist()[0]
    assert got.tzinfo == zoneinfo.ZoneInfo("UTC")
    got = qv.array([0], qv.timestamp("ms", "+01:00")).to_pylist()[0]
    assert got.tzinfo == dt.timezone(dt.timedelta(hours=1))
    assert got.hour == 1


def test_naive_timestamps_in_every_unit() -> None:
    for unit in ("s", "ms", "us", "ns"):
        same_as_pyarrow(pa.array([dt.datetime(2020, 1, 2, 3, 4, 5), None], pa.timestamp(unit)))


def test_nanoseconds_convert_like_pyarrow_without_pandas(monkeypatch) -> None:
    from quiver.array import primitive as prim

    monkeypatch.setattr(prim, "_pandas", lambda: None)
    with pytest.raises(ArrowInvalid, match="whole microseconds"):
        qv.array([1], qv.timestamp("ns")).to_pylist()
    with pytest.raises(ArrowInvalid, match="whole microseconds"):
        qv.array([1], qv.duration("ns")).to_pylist()
    # a time of day truncates to microseconds, as pyarrow does
    assert qv.array([1001], qv.time64("ns")).to_pylist() == [dt.time(0, 0, 0, 1)]
    # null slots never fail the conversion
    assert qv.array([None, 1000], qv.timestamp("ns")).to_pylist()[1] == dt.datetime(
        1970, 1, 1, 0, 0, 0, 1
    )


def test_nanoseconds_convert_to_pandas_scalars_like_pyarrow_with_pandas() -> None:
    pd = pytest.importorskip("pandas")
    for qtype, ptype in [
        (qv.timestamp("ns"), pa.timestamp("ns")),
        (qv.timestamp("ns", "UTC"), pa.timestamp("ns", "UTC")),
        (qv.duration("ns"), pa.duration("ns")),
    ]:
        got = qv.array([1001, None, -5], qtype).to_pylist()
        want = pa.array([1001, None, -5], ptype).to_pylist()
        assert got == want
        assert isinstance(got[0], (pd.Timestamp, pd.Timedelta))


def test_the_smallest_duration_is_a_value_not_null() -> None:
    low = -(2**63)
    assert qv.array([low], qv.duration("us")).to_pylist() == pa.array(
        [low], pa.duration("us")
    ).to_pylist()


def test_out_of_range_timestamp_raises_a_quiver_error() -> None:
    with pytest.raises(ArrowInvalid, match="expected"):
        qv.array([2**62], qv.timestamp("us")).to_pylist()
    with pytest.raises(ArrowInvalid, match="expected"):
        qv.array([2**62], qv.timestamp("s")).to_pylist()


def test_dates_times_durations_like_pyarrow() -> None:
    same_as_pyarrow(pa.array([dt.date(2020, 1, 2), None, dt.date(1, 1, 1)]))
    same_as_pyarrow(pa.array([0, -1, None, 86_400_000 * 3 + 5], pa.date64()))
    for typ in (pa.time32("s"), pa.time32("ms"), pa.time64("us"), pa.time64("ns")):
        same_as_pyarrow(pa.array([dt.time(1, 2, 3), None, dt.time(23, 59, 59)], typ))
    for unit in ("s", "ms", "us", "ns"):
        same_as_pyarrow(pa.array([dt.timedelta(days=-3, seconds=5), None], pa.duration(unit)))


def test_month_day_nano_is_a_named_tuple_with_pyarrow_fields() -> None:
    pa_arr = pa.array([(1, -2, 3), None], pa.month_day_nano_interval())
    got = from_pyarrow(pa_arr).to_pylist()
    assert got[0] == (1, -2, 3)
    assert (got[0].months, got[0].days, got[0].nanoseconds) == (1, -2, 3)
    assert got[1] is None
    assert got == pa_arr.to_pylist()


def test_other_intervals_give_ints_and_day_time_pairs() -> None:
    assert qv.array([5, None], qv.month_interval()).to_pylist() == [5, None]
    got = qv.array([(1, 500)], qv.day_time_interval()).to_pylist()
    assert got == [(1, 500)]
    assert got[0].days == 1 and got[0].milliseconds == 500


def test_null_array_is_all_null() -> None:
    arr = qv.array([None, None])
    assert arr.type == qv.null()
    assert arr.null_count == 2
    assert arr.to_pylist() == [None, None]


def test_to_numpy_views_are_read_only_unless_a_copy_is_asked() -> None:
    import quiver as qv

    arr = qv.array([1, 2, 3])
    view = arr.to_numpy()
    assert not view.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        view[0] = 99
    copy = arr.to_numpy(writable=True)
    copy[0] = 99
    assert arr.to_pylist() == [1, 2, 3]
    assert np.shares_memory(view, arr.buffers[1])  # still zero-copy
    assert not np.asarray(arr).flags.writeable
