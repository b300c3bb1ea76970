"""Property test: the steady-state fast path (quiver.ipc.steady) reads random streams of
plain leaf columns exactly as the general path does, with the generated code and with the
loop, for streams written by quiver and by pyarrow."""

from __future__ import annotations

import itertools
from typing import Any

import pyarrow as pa
import pyarrow.ipc as pipc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import quiver as qv
import quiver.ipc as ipc
from quiver.errors import ArrowError
from quiver.ipc import steady
from quiver.ipc.body import PlanNode
from quiver.ipc.decoder import MessageDecoder
from tests.roundtrip.test_array_props import LEAF_TYPES, values_of


def _plain_leaf(qt: Any) -> bool:
    try:
        node = PlanNode(qt, (0,), "c", {})
    except ArrowError:  # dictionary-encoded: not a leaf
        return False
    return node.leaf and node.nbuf in (2, 3)


PLAIN_LEAVES = [qt for qt in LEAF_TYPES if _plain_leaf(qt)]


def _sliced_batch(draw: Any, types: list[Any], max_rows: int) -> list[qv.RecordBatch]:
    """One batch of random values of ``types`` (up to ``max_rows`` rows), cut into
    consecutive slices, so that lengths, offsets and null counts differ between them."""
    cols = [(qt, draw(st.lists(values_of(qt), max_size=max_rows))) for qt in types]
    n = min(len(v) for _, v in cols)
    arrays = [qv.array(v[:n], qt) for qt, v in cols]
    base = qv.RecordBatch(
        qv.schema([qv.field(f"c{i}", a.type) for i, a in enumerate(arrays)]), arrays
    )
    cuts = sorted(draw(st.lists(st.integers(0, n), min_size=1, max_size=5)))
    bounds = [0, *cuts, n]
    return [base.slice(a, b - a) for a, b in itertools.pairwise(bounds)]


@st.composite
def leaf_streams(draw: Any) -> list[qv.RecordBatch]:
    """2-6 batches of 1-4 plain leaf columns: consecutive slices of one batch, so that
    lengths, offsets and null counts differ from batch to batch."""
    types = draw(st.lists(st.sampled_from(PLAIN_LEAVES), min_size=1, max_size=4))
    return _sliced_batch(draw, types, max_rows=12)


def _nested_type(draw: Any, depth: int = 0) -> Any:
    """A plain leaf, or (up to two levels) a list, large list, struct, fixed-size list or
    map of such types: what the fast path's nested columns take."""
    kind = draw(st.sampled_from(["leaf", "list", "large", "struct", "fixed", "map"]))
    if depth >= 2 or kind == "leaf":
        return draw(st.sampled_from(PLAIN_LEAVES))
    inner = _nested_type(draw, depth + 1)
    if kind == "list":
        return qv.list_(inner)
    if kind == "large":
        return qv.large_list(inner)
    if kind == "fixed":
        return qv.fixed_size_list(inner, draw(st.integers(1, 3)))
    if kind == "map":
        return qv.map_(qv.string(), inner)
    return qv.struct([qv.field("a", inner), qv.field("b", draw(st.sampled_from(PLAIN_LEAVES)))])


@st.composite
def nested_streams(draw: Any) -> list[qv.RecordBatch]:
    """2-6 consecutive slices of one batch of 1-3 nested columns."""
    types = [_nested_type(draw) for _ in range(draw(st.integers(1, 3)))]
    return _sliced_batch(draw, types, max_rows=8)


def _read(data: Any, *, tries: int, compile_after: int) -> tuple[list, int]:
    """The batches read (as Python values) and how many the fast path gave."""
    saved = steady.STEADY_TRIES, steady.COMPILE_AFTER, steady.COMPILE_AFTER_NESTED
    taken = 0
    whole = MessageDecoder.whole_messages

    def counting(decoder: MessageDecoder, reader: Any):
        nonlocal taken
        for item in whole(decoder, reader):
            taken += 1
            yield item

    steady.STEADY_TRIES = tries
    steady.COMPILE_AFTER = steady.COMPILE_AFTER_NESTED = compile_after
    MessageDecoder.whole_messages = counting  # type: ignore[method-assign]
    try:
        return [b.to_pylist() for b in ipc.open_stream(data)], taken
    finally:
        steady.STEADY_TRIES, steady.COMPILE_AFTER, steady.COMPILE_AFTER_NESTED = saved
        MessageDecoder.whole_messages = whole  # type: ignore[method-assign]


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(leaf_streams(), st.sampled_from(["quiver", "pyarrow"]))
def test_fast_path_reads_as_the_general_path(batches: list, writer: str) -> None:
    if writer == "quiver":
        sink = ipc.BufferOutputStream()
        with ipc.new_stream(sink, batches[0].schema) as w:
            for b in batches:
                w.write_batch(b)
        data = bytes(sink.getvalue())
    else:
        pa_batches = [pa.record_batch(b) for b in batches]
        out = pa.BufferOutputStream()
        with pipc.new_stream(out, pa_batches[0].schema) as w:
            for b in pa_batches:
                w.write_batch(b)
        data = out.getvalue().to_pybytes()
    general, none = _read(data, tries=0, compile_after=64)
    assert none == 0
    assert general == [b.to_pylist() for b in batches]
    compiled, taken = _read(data, tries=4, compile_after=1)  # generated code from batch 2
    assert compiled == general
    looped, taken_by_loop = _read(data, tries=4, compile_after=10**9)  # the loop throughout
    assert looped == general
    assert taken == taken_by_loop
    if sum(1 for b in batches if len(b)) >= 3:
        assert taken  # batches of one shape after the first went the fast way


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(nested_streams(), st.sampled_from(["quiver", "pyarrow"]))
def test_fast_path_reads_nested_columns_as_the_general_path(batches: list, writer: str) -> None:
    test_fast_path_reads_as_the_general_path.hypothesis.inner_test(batches, writer)
