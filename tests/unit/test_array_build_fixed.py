"""Tests for quiver.array.build_fixed: fixed-width builders, the temporal table above all."""

from __future__ import annotations

import datetime

import numpy as np
import pytest

import quiver as qv
from quiver import registry
from quiver import types as t
from quiver.array import build_fixed


def test_one_temporal_builder_serves_every_temporal_type_class() -> None:
    for cls in (t.DateType, t.TimestampType, t.TimeType, t.DurationType):
        assert registry.lookup("builder", cls) is build_fixed._build_temporal
        assert cls in build_fixed._TEMPORAL


@pytest.mark.parametrize(
    ("dtype", "obj", "raw"),
    [
        (t.date32(), datetime.date(1970, 1, 3), 2),
        (t.date64(), datetime.datetime(1970, 1, 2, 5), 86_400_000),
        (t.timestamp("ms"), datetime.datetime(1970, 1, 1, 0, 0, 1), 1000),
        (t.time32("s"), datetime.time(0, 1), 60),
        (t.duration("ns"), datetime.timedelta(microseconds=2), 2000),
    ],
)
def test_temporal_objects_and_raw_ints(dtype: t.DataType, obj: object, raw: int) -> None:
    width = np.dtype(f"<i{dtype.bit_width // 8}")
    for values in ([obj, None], [raw, None]):
        arr = qv.array(values, dtype)
        assert arr.buffers[1].view(width)[0] == raw
        assert arr.null_count == 1
    if not isinstance(dtype, t.DateType):  # dates take objects or ints, not both in one list
        assert qv.array([obj, raw], dtype).buffers[1].view(width).tolist() == [raw, raw]


def test_temporal_kind_errors_name_the_value() -> None:
    with pytest.raises(qv.ArrowTypeError, match="found 'x' of type str"):
        qv.array(["x"], t.time64("us"))


def test_temporal_builders_refuse_bools_with_quiver_errors():
    import pytest

    import quiver as qv
    from quiver import types as t

    for dtype in (t.time32("s"), t.timestamp("us"), t.duration("s"), t.date32()):
        with pytest.raises(qv.ArrowTypeError, match="found True of type bool"):
            qv.array([True, None], dtype)
