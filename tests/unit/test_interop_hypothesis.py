"""Property tests: random nested pyarrow arrays cross pyarrow -> quiver -> pyarrow unchanged.

Cross-module on purpose: hypothesis round trips through the whole C data interface
(cdata.schema, import_array, array export and capsules) rather than one module."""

from __future__ import annotations

import datetime

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quiver.interop import export_array, import_array, import_type

LEAVES = [
    pa.int8(), pa.int64(), pa.uint32(), pa.float64(), pa.bool_(), pa.string(), pa.binary(),
    pa.large_string(), pa.string_view(), pa.binary_view(), pa.date32(), pa.timestamp("us"),
    pa.decimal128(10, 2),
]

types = st.recursive(
    st.sampled_from(LEAVES),
    lambda inner: st.one_of(
        inner.map(pa.list_),
        inner.map(pa.large_list),
        inner.map(pa.list_view),
        inner.map(lambda x: pa.list_(x, 2)),
        st.tuples(inner, inner).map(lambda ab: pa.struct([("a", ab[0]), ("b", ab[1])])),
        inner.map(lambda x: pa.map_(pa.string(), x)),
    ),
    max_leaves=4,
)


def values_for(ty: pa.DataType) -> st.SearchStrategy:
    """Python values (or None) that pyarrow accepts for ``ty``."""
    if pa.types.is_integer(ty):
        info = (ty.bit_width, pa.types.is_signed_integer(ty))
        lo, hi = (-(2 ** (info[0] - 1)), 2 ** (info[0] - 1) - 1) if info[1] else (
            0, 2 ** info[0] - 1
        )
        base = st.integers(lo, hi)
    elif pa.types.is_floating(ty):
        base = st.floats(allow_nan=False)
    elif pa.types.is_boolean(ty):
        base = st.booleans()
    elif pa.types.is_string(ty) or pa.types.is_large_string(ty) or ty == pa.string_view():
        base = st.text(max_size=20)
    elif pa.types.is_binary(ty) or ty == pa.binary_view():
        base = st.binary(max_size=20)
    elif pa.types.is_date32(ty):
        base = st.dates()
    elif pa.types.is_timestamp(ty):
        base = st.datetimes(min_value=datetime.datetime(1900, 1, 1))
    elif pa.types.is_decimal(ty):
        base = st.decimals(min_value=-10**7, max_value=10**7, places=2, allow_nan=False,
                           allow_infinity=False)
    elif pa.types.is_fixed_size_list(ty):
        base = st.lists(values_for(ty.value_type), min_size=ty.list_size,
                        max_size=ty.list_size)
    elif pa.types.is_map(ty):
        base = st.lists(st.tuples(st.text(max_size=3), values_for(ty.item_type)), max_size=3)
    elif pa.types.is_list(ty) or pa.types.is_large_list(ty) or pa.types.is_list_view(ty):
        base = st.lists(values_for(ty.value_type), max_size=4)
    elif pa.types.is_struct(ty):
        base = st.fixed_dictionaries({f.name: values_for(f.type) for f in ty})
    else:  # pragma: no cover - every type above is covered
        raise AssertionError(f"no strategy for {ty}")
    return st.none() | base


@st.composite
def arrays(draw: st.DrawFn) -> pa.Array:
    ty = draw(types)
    data = draw(st.lists(values_for(ty), max_size=12))
    arr = pa.array(data, ty)
    if draw(st.booleans()) and pa.types.is_string(ty):
        arr = arr.dictionary_encode()
    start = draw(st.integers(0, len(arr)))
    stop = draw(st.integers(start, len(arr)))
    return arr.slice(start, stop - start)


class Wrap:
    def __init__(self, obj):
        self.obj = obj

    def __arrow_c_array__(self, requested_schema=None):
        return export_array(self.obj, requested_schema)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arrays())
def test_random_arrays_round_trip_unchanged(arr):
    q = import_array(arr)
    assert q.type == import_type(arr.type)
    assert len(q) == len(arr)
    back = pa.array(Wrap(q))
    back.validate(full=True)
    assert back.equals(arr)
    assert q.to_pylist() == arr.to_pylist()
