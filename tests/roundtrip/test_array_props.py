"""Property tests: arrays of every type (nested to depth 3, with nulls and slices) built by
quiver and by pyarrow from the same Python values agree on ``to_pylist``; slices agree;
quiver's arrays pass full validation and equal pyarrow's buffers read back by quiver.
"""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal
from typing import Any

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import quiver as qv
from quiver import types as t
from tests.roundtrip.pa_types import from_pyarrow, to_pyarrow_type

SETTINGS = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

_US_PER = {"s": 1_000_000, "ms": 1_000, "us": 1, "ns": 1}

# -- types ------------------------------------------------------------------------------

LEAF_TYPES = [
    t.null(), t.bool_(),
    t.int8(), t.int16(), t.int32(), t.int64(),
    t.uint8(), t.uint16(), t.uint32(), t.uint64(),
    t.float16(), t.float32(), t.float64(),
    t.decimal32(7, 2), t.decimal64(15, 3), t.decimal128(30, 5), t.decimal256(60, 10),
    t.decimal128(5, -2),
    t.date32(), t.date64(),
    t.time32("s"), t.time32("ms"), t.time64("us"), t.time64("ns"),
    t.timestamp("s"), t.timestamp("ms", "UTC"), t.timestamp("us", "+01:00"),
    t.timestamp("ns", "America/New_York"),
    t.duration("s"), t.duration("ms"), t.duration("us"), t.duration("ns"),
    t.month_day_nano_interval(),
    t.binary(), t.string(), t.large_binary(), t.large_string(),
    t.binary_view(), t.string_view(), t.binary(3),
    t.uuid(), t.extension("my.ext", t.int32(), b"meta"),
]

HASHABLE_LEAVES = [
    t.int8(), t.int32(), t.uint16(), t.float64(), t.string(), t.binary(), t.large_string(),
    t.date32(), t.timestamp("us"), t.decimal128(10, 2), t.binary(3), t.string_view(),
]


def _nested(children: st.SearchStrategy[t.DataType]) -> st.SearchStrategy[t.DataType]:
    names = st.sampled_from(["a", "b", "c", "item", "x y", ""])
    return st.one_of(
        children.map(t.list_),
        children.map(t.large_list),
        children.map(t.list_view),
        children.map(t.large_list_view),
        st.tuples(children, st.integers(0, 3)).map(lambda p: t.list_(p[0], p[1])),
        st.lists(st.tuples(names, children), min_size=1, max_size=3,
                 unique_by=lambda p: p[0]).map(lambda fs: t.struct(fs)),
        st.tuples(st.sampled_from([t.string(), t.int32()]), children).map(
            lambda p: t.map_(p[0], p[1])
        ),
        st.tuples(st.sampled_from([t.int16(), t.int32(), t.int64()]), children).map(
            lambda p: t.run_end_encoded(p[0], p[1])
        ),
    )


def _dictionaries() -> st.SearchStrategy[t.DataType]:
    return st.tuples(
        st.sampled_from([t.int8(), t.int16(), t.int32(), t.uint32(), t.int64()]),
        st.sampled_from(HASHABLE_LEAVES),
    ).map(lambda p: t.dictionary(p[0], p[1]))


LEAVES = st.one_of(st.sampled_from(LEAF_TYPES), _dictionaries())
TYPES = st.recursive(LEAVES, _nested, max_leaves=6)


def _depth(qt: t.DataType) -> int:
    fields = t.storage_of(qt).fields
    return 1 + max((_depth(f.type) for f in fields), default=0)


# -- values -----------------------------------------------------------------------------

_DATES = st.dates(dt.date(1900, 1, 1), dt.date(2100, 12, 31))
_DATETIMES = st.datetimes(dt.datetime(1900, 1, 1), dt.datetime(2100, 12, 31))


def _exact(unit: str) -> Any:
    step = _US_PER[unit]
    return lambda v: v.replace(microsecond=v.microsecond // step * step)


def values_of(qt: t.DataType, nullable: bool = True) -> st.SearchStrategy[Any]:
    """A strategy for one Python value of ``qt`` (None included when nullable)."""
    inner = _values_of(qt)
    if nullable and not isinstance(qt, t.NullType):
        return st.one_of(st.none(), inner)
    return inner


def _values_of(qt: t.DataType) -> st.SearchStrategy[Any]:
    if isinstance(qt, t.NullType):
        return st.none()
    if isinstance(qt, t.BoolType):
        return st.booleans()
    if isinstance(qt, t.IntegerType):
        bits = qt.width
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if qt.signed else (0, (1 << bits) - 1)
        return st.integers(lo, hi)
    if isinstance(qt, t.FloatingPointType):
        return st.floats(width=qt.width, allow_nan=False, allow_infinity=False)
    if isinstance(qt, t.DecimalType):
        top = 10**qt.precision - 1
        return st.integers(-top, top).map(lambda i, s=qt.scale: Decimal(f"{i}E{-s}"))
    if isinstance(qt, t.DateType):
        return _DATES
    if isinstance(qt, t.TimeType):
        return st.times().map(_exact(qt.unit))
    if isinstance(qt, t.TimestampType):
        return _DATETIMES.map(_exact(qt.unit))
    if isinstance(qt, t.DurationType):
        step = _US_PER[qt.unit]
        return st.integers(-(10**15), 10**15).map(
            lambda i, step=step: dt.timedelta(microseconds=i // step * step)
        )
    if isinstance(qt, t.IntervalType):
        return st.tuples(st.integers(-(2**31), 2**31 - 1), st.integers(-(2**31), 2**31 - 1),
                         st.integers(-(2**63), 2**63 - 1))
    if isinstance(qt, (t.BinaryType, t.BinaryViewType)):
        return st.binary(max_size=20)
    if isinstance(qt, (t.StringType, t.StringViewType)):
        return st.text(max_size=20)
    if isinstance(qt, t.FixedSizeBinaryType):
        return st.binary(min_size=qt.width, max_size=qt.width)
    if isinstance(qt, t.ExtensionType):
        return st.uuids() if qt.extension_name == "arrow.uuid" else _values_of(qt.storage_type)
    if isinstance(qt, t.FixedSizeListType):
        return st.lists(values_of(qt.value_type), min_size=qt.list_size, max_size=qt.list_size)
    if isinstance(qt, (t.ListType, t.LargeListType, t.ListViewType, t.LargeListViewType)):
        return st.lists(values_of(qt.value_type), max_size=4)
    if isinstance(qt, t.StructType):
        return st.fixed_dictionaries({f.name: values_of(f.type) for f in qt.fields})
    if isinstance(qt, t.MapType):
        return st.lists(st.tuples(values_of(qt.key_type, False), values_of(qt.item_type)),
                        max_size=3)
    if isinstance(qt, t.DictionaryType):
        return _values_of(qt.value_type)
    if isinstance(qt, t.RunEndEncodedType):
        return _values_of(qt.value_type)
    raise NotImplementedError(str(qt))


def _runs(values: st.SearchStrategy[Any]) -> st.SearchStrategy[list[Any]]:
    """Lists with runs of repeated values (for run-end encoding)."""
    return st.lists(st.tuples(values, st.integers(1, 4)), max_size=6).map(
        lambda runs: [v for v, n in runs for _ in range(n)]
    )


@st.composite
def typed_values(draw: Any) -> tuple[t.DataType, list[Any]]:
    qt = draw(TYPES.filter(lambda x: _depth(x) <= 3))
    one = values_of(qt)
    if isinstance(qt, t.RunEndEncodedType):
        values = draw(_runs(one))
    else:
        values = draw(st.lists(one, max_size=12))
    return qt, values


# -- the oracle ---------------------------------------------------------------------------


def decoded(qt: t.DataType) -> t.DataType:
    """The type pyarrow can build from Python values with the same to_pylist result."""
    if isinstance(qt, t.DictionaryType):
        return decoded(qt.value_type)
    if isinstance(qt, t.RunEndEncodedType):
        return decoded(qt.value_type)
    if isinstance(qt, t.ExtensionType):
        return decoded(qt.storage_type)
    fields = qt.fields
    if not fields or isinstance(qt, t.ExtensionType):
        return qt
    return qt.with_fields(tuple(f.with_type(decoded(f.type)) for f in fields))  # type: ignore[attr-defined]


def _normal(v: Any) -> Any:
    """pandas Timestamp/Timedelta (pyarrow's ns values when pandas is present) -> stdlib;
    UUIDs -> their bytes (pyarrow builds uuid arrays from Python only at the top level)."""
    if isinstance(v, uuid.UUID):
        return v.bytes
    if hasattr(v, "to_pydatetime"):
        return v.to_pydatetime()
    if hasattr(v, "to_pytimedelta"):
        return v.to_pytimedelta()
    if isinstance(v, list):
        return [_normal(x) for x in v]
    if isinstance(v, tuple):
        return tuple(_normal(x) for x in v)
    if isinstance(v, dict):
        return {k: _normal(x) for k, x in v.items()}
    return v


def _has_dictionary(qt: t.DataType) -> bool:
    """Dictionary arrays compare their dictionaries (pyarrow's rule), so a slice and the
    same values built afresh (a smaller dictionary) are not ``equals``."""
    st_ = t.storage_of(qt)
    if isinstance(st_, t.DictionaryType):
        return True
    return any(_has_dictionary(f.type) for f in st_.fields)


def _pa_values(values: list[Any]) -> list[Any]:
    return [_normal(v) for v in values]


# -- the properties -------------------------------------------------------------------------


@SETTINGS
@given(typed_values(), st.data())
def test_to_pylist_matches_pyarrow_for_every_type(case: Any, data: Any) -> None:
    qt, values = case
    q = qv.array(values, qt)
    assert q.type == qt
    assert len(q) == len(values)
    expected = _normal(
        pa.array(_pa_values(values), type=to_pyarrow_type(decoded(qt))).to_pylist()
    )
    got = _normal(q.to_pylist())
    assert got == expected
    assert q.null_count == sum(v is None for v in values) or isinstance(
        t.storage_of(qt), (t.RunEndEncodedType,)
    )
    q.validate(full=True)
    # slices
    off = data.draw(st.integers(0, len(values)))
    length = data.draw(st.integers(0, len(values) - off))
    sl = q.slice(off, length)
    assert _normal(sl.to_pylist()) == expected[off : off + length]
    sl.validate(full=True)
    if not _has_dictionary(qt):
        assert sl.equals(qv.array(values[off : off + length], qt))
    assert q.equals(qv.array(values, qt))


@SETTINGS
@given(typed_values(), st.data())
def test_quiver_reads_pyarrow_buffers_of_every_type(case: Any, data: Any) -> None:
    qt, values = case
    try:
        pa_arr = pa.array(values, type=to_pyarrow_type(qt))
    except (pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return  # pyarrow cannot build this type from Python values
    try:
        pa_arr.validate(full=True)
    except pa.ArrowInvalid:
        return  # pyarrow built something invalid (e.g. a struct child under a null slot)
    off = data.draw(st.integers(0, len(values)))
    length = data.draw(st.integers(0, len(values) - off))
    pa_slice = pa_arr.slice(off, length)
    q = from_pyarrow(pa_slice)
    q.validate(full=True)
    assert q.to_pylist() == _normal(pa_slice.to_pylist())
    if not _has_dictionary(qt):
        # non-uuid extension types reach pyarrow as their storage type
        assert q.equals(qv.array(values[off : off + length], q.type))


UNION_CHILDREN = [t.int64(), t.string(), t.binary(), t.bool_(), t.date32(), t.list_(t.int32()),
                  t.struct([("k", t.int8())])]


@st.composite
def unions(draw: Any) -> tuple[t.DataType, list[Any]]:
    kids = draw(st.lists(st.sampled_from(UNION_CHILDREN), min_size=1, max_size=4,
                         unique_by=str))
    codes = draw(st.lists(st.integers(0, 127), min_size=len(kids), max_size=len(kids),
                          unique=True))
    mode = draw(st.sampled_from(["sparse", "dense"]))
    ut = t.union([t.field(f"f{i}", k) for i, k in enumerate(kids)], mode, codes)
    one = st.one_of(st.none(), *[_values_of(k) for k in kids])
    return ut, draw(st.lists(one, max_size=12))


@SETTINGS
@given(unions(), st.data())
def test_unions_give_back_the_values_they_were_built_from(case: Any, data: Any) -> None:
    ut, values = case
    q = qv.array(values, ut)
    q.validate(full=True)
    assert q.to_pylist() == values
    off = data.draw(st.integers(0, len(values)))
    sl = q.slice(off)
    sl.validate(full=True)
    assert sl.to_pylist() == values[off:]
    assert sl.equals(qv.array(values[off:], ut))
    # the same buffers read through pyarrow decode to the same values
    pa_type = to_pyarrow_type(ut)
    kids = [to_pyarrow_type(f.type) for f in ut.fields]
    ids = pa.array(q.type_ids(), pa.int8())
    children = [pa.array(q.children[i].to_pylist(), kids[i]) for i in range(len(kids))]
    names = [f.name for f in ut.fields]
    if ut.mode == "sparse":
        pa_arr = pa.UnionArray.from_sparse(ids, children, names, list(ut.type_codes))
    else:
        offs = pa.array(q.value_offsets(), pa.int32())
        pa_arr = pa.UnionArray.from_dense(ids, offs, children, names, list(ut.type_codes))
    assert pa_arr.type == pa_type
    assert pa_arr.to_pylist() == values


@SETTINGS
@given(unions(), st.sampled_from(["list", "struct", "fixed"]), st.data())
def test_nested_unions_give_back_their_values(case: Any, wrapper: str, data: Any) -> None:
    ut, values = case
    if wrapper == "list":
        qt: t.DataType = t.list_(ut)
        nested: list[Any] = [values[i : i + 3] for i in range(0, len(values), 3)] + [None]
    elif wrapper == "struct":
        qt = t.struct([("u", ut), ("n", t.int8())])
        nested = [{"u": v, "n": i % 100} for i, v in enumerate(values)] + [None]
    else:
        qt = t.list_(ut, 1)
        nested = [[v] for v in values] + [None]
    q = qv.array(nested, qt)
    q.validate(full=True)
    expected = [
        {"u": v["u"], "n": v["n"]} if isinstance(v, dict) else v for v in nested
    ]
    assert q.to_pylist() == expected
    off = data.draw(st.integers(0, len(nested)))
    assert q.slice(off).to_pylist() == expected[off:]
    assert q.slice(off).equals(qv.array(nested[off:], qt))


NUMPY_DTYPES = ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "?",
                "M8[s]", "M8[ms]", "M8[us]", "M8[ns]", "M8[D]", "m8[s]", "m8[ms]", "m8[us]",
                "m8[ns]"]


@st.composite
def numpy_arrays(draw: Any) -> tuple[Any, Any]:
    import numpy as np
    from hypothesis.extra import numpy as hnp

    dtype = np.dtype(draw(st.sampled_from(NUMPY_DTYPES)))
    if dtype.kind in "Mm":
        unit = np.datetime_data(dtype)[0]
        limit = 700_000 if unit == "D" else 10**9  # keep dates within datetime.date range
        base = draw(hnp.arrays(np.int64, st.integers(0, 12),
                               elements=st.integers(-limit, limit)))
        if unit == "ns":  # whole microseconds: Python datetimes cannot hold the rest
            base = base * 1000
        arr = base.view(dtype)
    else:
        arr = draw(hnp.arrays(dtype, st.integers(0, 12),
                              elements=hnp.from_dtype(dtype, allow_nan=False)))
    mask = draw(st.none() | hnp.arrays(np.bool_, len(arr)))
    return arr, mask


@SETTINGS
@given(numpy_arrays(), st.data())
def test_numpy_input_matches_pyarrow(case: Any, data: Any) -> None:
    arr, mask = case
    q = qv.array(arr, mask=mask)
    p = pa.array(arr, mask=mask)
    assert str(q.type) == str(p.type)
    q.validate(full=True)
    assert _normal(q.to_pylist()) == _normal(p.to_pylist())
    off = data.draw(st.integers(0, len(arr)))
    assert _normal(q.slice(off).to_pylist()) == _normal(p.slice(off).to_pylist())
    if mask is None and arr.dtype.kind not in "?bM" and arr.dtype.str[1:] not in ("m8[D]",):
        # fixed-width numbers without nulls come back as the same memory
        import numpy as np

        assert np.shares_memory(q.to_numpy(), arr) or len(arr) == 0
