"""Unit tests of quiver.layout: the one table of buffers per type."""

from __future__ import annotations

import numpy as np
import pytest

from quiver import types as t
from quiver.layout import layout_of, logical_numpy_dtype, storage_numpy_dtype


@pytest.mark.parametrize(
    ("dtype", "kinds", "children"),
    [
        (t.null(), [], "none"),
        (t.bool_(), ["validity", "bits"], "none"),
        (t.int32(), ["validity", "values"], "none"),
        (t.string(), ["validity", "offsets", "data"], "none"),
        (t.binary_view(), ["validity", "views"], "none"),
        (t.list_(t.int8()), ["validity", "offsets"], "offsets"),
        (t.list_view(t.int8()), ["validity", "offsets", "sizes"], "views"),
        (t.list_(t.int8(), 2), ["validity"], "fixed"),
        (t.struct([("a", t.int8())]), ["validity"], "same"),
        (t.map_(t.string(), t.int8()), ["validity", "offsets"], "offsets"),
        (t.sparse_union([t.field("a", t.int8())]), ["type_ids"], "same"),
        (t.dense_union([t.field("a", t.int8())]), ["type_ids", "offsets"], "dense"),
        (t.dictionary(t.int16(), t.string()), ["validity", "values"], "none"),
        (t.run_end_encoded(t.int32(), t.int8()), [], "run_end"),
        (t.uuid(), ["validity", "values"], "none"),
    ],
)
def test_every_family_has_its_spec_buffers(dtype, kinds, children) -> None:
    lay = layout_of(dtype)
    assert [b.kind for b in lay.buffers] == kinds
    assert lay.children == children


def test_widths_follow_the_type() -> None:
    assert layout_of(t.large_string()).buffers[1].byte_width == 8
    assert layout_of(t.decimal256(40)).buffers[1].byte_width == 32
    assert layout_of(t.dictionary(t.int16(), t.string())).buffers[1].byte_width == 2
    assert layout_of(t.month_day_nano_interval()).buffers[1].swap == (4, 4, 8)
    assert layout_of(t.binary_view()).variadic
    assert not layout_of(t.string()).variadic


def test_numpy_dtypes() -> None:
    assert storage_numpy_dtype(t.uint16()) == np.dtype("<u2")
    assert storage_numpy_dtype(t.timestamp("ns")) == np.dtype("<i8")
    assert storage_numpy_dtype(t.decimal128(5)) is None
    assert logical_numpy_dtype(t.duration("ms")) == np.dtype("m8[ms]")
    assert logical_numpy_dtype(t.date64()) == np.dtype("M8[ms]")
    assert logical_numpy_dtype(t.float16()) == np.dtype("<f2")
