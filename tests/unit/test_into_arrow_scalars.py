"""numpy scalars in Python lists, side by side with pyarrow (issue 25, the gaps the first
differential test left): the bytes of ``np.str_`` beside bytes, the type of numpy scalars
of several dtypes, and numpy datetime64 / timedelta64 scalars of a finer unit than the
type asked for."""

from __future__ import annotations

import numpy as np
import pytest

import quiver as qv
from quiver.errors import ArrowInvalid

pa = pytest.importorskip("pyarrow")


@pytest.mark.parametrize("values", [
    [np.str_("a"), b"x"],
    [np.str_("é"), None, b"xy"],
    [b"x", np.str_("abc")],
])
def test_numpy_str_beside_bytes_is_its_utf8(values: list) -> None:
    # np.str_ exports its UCS-4 memory as a buffer: joined as bytes it gave b"\x00"
    assert qv.array(values).to_pylist() == pa.array(values).to_pylist()
    assert qv.array(values, qv.binary()).to_pylist() == pa.array(values, pa.binary()).to_pylist()


@pytest.mark.parametrize("dtypes", [
    ("i1", "i2"), ("i2", "i1"), ("u1", "u4"), ("i2", "u1"), ("i8", "u4"), ("u2", "u1", "u4"),
    ("f4", "i8"), ("f4", "u1"), ("f8", "i1"), ("f2", "f8"), ("f4", "f8"), ("f2", "f2"),
])
def test_numpy_scalars_of_several_dtypes_unify_as_pyarrow(dtypes: tuple) -> None:
    values = [np.dtype(d).type(3) for d in dtypes]
    want = pa.array(values)
    got = qv.array(values)
    assert pa.array(got).type == want.type
    assert got.to_pylist() == want.to_pylist()


@pytest.mark.parametrize("dtypes", [("i1", "u1"), ("i4", "u4"), ("u8", "i8"), ("f2", "i1"),
                                    ("u2", "f2")])
def test_numpy_scalars_no_type_holds_are_refused_as_pyarrow(dtypes: tuple) -> None:
    values = [np.dtype(d).type(3) for d in dtypes]
    with pytest.raises(pa.ArrowInvalid):
        pa.array(values)
    with pytest.raises(ArrowInvalid, match="numpy"):
        qv.array(values)


@pytest.mark.parametrize(("value", "target"), [
    (np.datetime64(1500, "ms"), qv.timestamp("s")),
    (np.datetime64(1, "ns"), qv.timestamp("us", "UTC")),
    (np.timedelta64(1500, "us"), qv.duration("ms")),
    (np.timedelta64(-1, "ns"), qv.duration("s")),
])
def test_numpy_temporal_scalars_are_not_floored_to_a_coarser_unit(value, target) -> None:
    # pyarrow refuses any other unit; quiver floored them silently (1.5 s became 1 s)
    with pytest.raises(ArrowInvalid, match="exactly"):
        qv.array([value], target)


@pytest.mark.parametrize(("value", "target", "want"), [
    (np.datetime64(2000, "ms"), qv.timestamp("s"), 2),
    (np.datetime64(3, "s"), qv.timestamp("ns"), 3 * 10**9),
    (np.timedelta64(4000, "us"), qv.duration("ms"), 4),
])
def test_numpy_temporal_scalars_convert_exactly(value, target, want: int) -> None:
    arr = qv.array([value, None], target)
    assert pa.array(arr).cast(pa.int64()).to_pylist() == [want, None]


@pytest.mark.parametrize("values", [[None, -1], [np.int8(-1)], [np.int64(-5), None, 3]])
def test_negative_ints_to_uint64_are_refused(values: list) -> None:
    # both wrapped to 2**64 - n (a None took the float path, numpy ints numpy's cast)
    with pytest.raises((pa.ArrowInvalid, OverflowError)):
        pa.array(values, pa.uint64())
    with pytest.raises(ArrowInvalid, match="uint64"):
        qv.array(values, qv.uint64())


def test_numpy_datetime64_scalars_of_several_units_are_not_wrapped() -> None:
    # numpy put them in the finest unit, wrapping the coarse one past int64
    values = [np.datetime64(2305657466626506591, "s"), np.datetime64(159, "ms")]
    with pytest.raises(ArrowInvalid):
        qv.array(values, qv.date64())
    values = [np.datetime64(2305657466626506591, "us"), np.datetime64(159, "ns")]
    got = pa.array(qv.array(values, qv.date32()))
    assert got.view(pa.int32()).to_pylist() == [2305657466626506591 // 86_400_000_000, 0]


def test_pd_na_is_null_with_from_pandas_as_pyarrow() -> None:
    pd = pytest.importorskip("pandas")
    for values in ([pd.NA, 1], [pd.NA], ["a", pd.NA]):
        want = pa.array(values, from_pandas=True)
        got = pa.array(qv.array(values, from_pandas=True))
        assert got.type == want.type and got.to_pylist() == want.to_pylist()


def test_numpy_bools_to_floats_as_python_bools() -> None:
    # pyarrow takes Python bools for floats, numpy's for some widths only
    assert qv.array([np.False_, np.True_, None], qv.float16()).to_pylist() == pa.array(
        [False, True, None], pa.float16()).to_pylist()
    assert qv.array([np.True_], qv.float64()).to_pylist() == [1.0]


def test_ints_beside_dates_are_days_as_pyarrow() -> None:
    import datetime as dt

    values = [0, dt.date(2000, 1, 2), None, np.int8(3)]
    assert qv.array(values, qv.date32()).to_pylist() == pa.array(values, pa.date32()).to_pylist()


def test_numpy_datetime64_day_scalars_infer_date32() -> None:
    values = [np.datetime64(5, "D"), None, np.datetime64(-719163, "D")]
    got = pa.array(qv.array(values))
    assert got.type == pa.date32()
    assert got.view(pa.int32()).to_pylist() == [5, None, -719163]


@pytest.mark.parametrize(("values", "want"), [
    ([np.float16(0.0), 2**53 + 1], [0, 2**53 + 1]),  # was rounded through a double
    ([1.0, None, -(2**53) - 1], [1, None, -(2**53) - 1]),
])
def test_ints_beside_integral_floats_are_exact(values: list, want: list) -> None:
    assert qv.array(values, qv.int64()).to_pylist() == want


def test_an_int_past_int64_beside_floats_is_refused() -> None:
    # was wrapped to -2**63 through a double
    with pytest.raises(ArrowInvalid):
        qv.array([np.float16(0.0), 2**63], qv.int64())
