"""Tests for quiver.ipc.endian: big-endian buffers swapped to native, checked against pyarrow.

Each case takes a pyarrow array (native little-endian), wraps its buffers in a quiver array,
builds a big-endian copy with an independent per-element reference written here (Python
``bytes`` slicing, not the module's numpy code), swaps it back with
``swap_array_to_native`` and compares every buffer with pyarrow's.
"""

from __future__ import annotations

import decimal

import numpy as np
import pyarrow as pa
import pytest

import quiver as qv
from quiver import types as t
from quiver.array import make_array
from quiver.array.base import Array
from quiver.errors import LimitExceeded
from quiver.ipc import endian
from quiver.layout import layout_of
from tests.conftest import INTEGRATION, require_shared

# --------------------------------------------------------------------------------------
# pyarrow -> quiver (native) and the independent big-endian reference


def from_pa(arr: pa.Array, qtype: t.DataType) -> Array:
    """Wrap a pyarrow array (unsliced children) as a quiver array sharing its buffers."""
    st = t.storage_of(qtype)
    lay = layout_of(qtype)
    bufs = arr.buffers()
    if isinstance(st, t.UnionType):
        own = bufs[1 : 1 + len(lay.buffers)]  # pyarrow lists an empty validity slot
    elif isinstance(st, (t.NullType, t.RunEndEncodedType)):
        own = []
    elif lay.variadic:
        own = bufs
    else:
        own = bufs[: len(lay.buffers)]
    own_np = [None if b is None else np.frombuffer(b, np.uint8) for b in own]
    children: list[Array] = []
    dictionary = None
    if isinstance(arr, pa.ExtensionArray):
        arr = arr.storage
    if isinstance(st, (t.ListType, t.LargeListType, t.ListViewType, t.LargeListViewType)):
        children = [from_pa(arr.values, st.value_type)]
    elif isinstance(st, t.MapType):
        children = [from_pa(arr.values, st.value_field.type)]
    elif isinstance(st, t.FixedSizeListType):
        children = [from_pa(arr.values, st.value_type)]
    elif isinstance(st, (t.StructType, t.UnionType)):
        children = [from_pa(arr.field(i), f.type) for i, f in enumerate(st.fields)]
    elif isinstance(st, t.RunEndEncodedType):
        children = [from_pa(arr.run_ends, st.run_end_type), from_pa(arr.values, st.value_type)]
    elif isinstance(st, t.DictionaryType):
        own_np = [
            None if b is None else np.frombuffer(b, np.uint8) for b in arr.indices.buffers()
        ]
        dictionary = from_pa(arr.dictionary, st.value_type)
    return make_array(qtype, len(arr), own_np, children, arr.null_count, arr.offset, dictionary)


def _reverse_each(data: bytes, width: int, components: tuple[int, ...]) -> bytes:
    out = bytearray(data)
    for start in range(0, len(data) - len(data) % width, width):
        pos = start
        for comp in components:
            out[pos : pos + comp] = data[pos : pos + comp][::-1]
            pos += comp
    return bytes(out)


def _views_to_big(data: bytes) -> bytes:
    out = bytearray(data)
    for start in range(0, len(data) - len(data) % 16, 16):
        length = int.from_bytes(data[start : start + 4], "little", signed=True)
        out[start : start + 4] = data[start : start + 4][::-1]
        if length > 12:
            for a in (start + 8, start + 12):
                out[a : a + 4] = data[a : a + 4][::-1]
    return bytes(out)


def reference_big_endian(arr: Array) -> Array:
    """A big-endian copy of a native quiver array, built element by element."""
    lay = layout_of(arr.type)
    bufs: list[np.ndarray | None] = []
    for i, b in enumerate(arr.buffers):
        if b is None or i >= len(lay.buffers):
            bufs.append(b)
            continue
        spec = lay.buffers[i]
        raw = b.tobytes()
        if spec.kind == "views":
            new = _views_to_big(raw)
        elif spec.swap:
            new = _reverse_each(raw, spec.byte_width, spec.swap)
        else:
            new = raw
        bufs.append(np.frombuffer(new, np.uint8))
    children = [reference_big_endian(c) for c in arr.children]
    dictionary = None if arr.dictionary is None else reference_big_endian(arr.dictionary)
    return make_array(arr.type, len(arr), bufs, children, arr.null_count, arr.offset, dictionary)


def assert_same_buffers(got: Array, want: Array, path: str = "") -> None:
    assert got.type == want.type, path
    assert (len(got), got.offset, got.null_count) == (len(want), want.offset, want.null_count)
    assert len(got.buffers) == len(want.buffers), path
    for i, (g, w) in enumerate(zip(got.buffers, want.buffers)):
        if w is None:
            assert g is None, f"{path} buffer {i}"
        else:
            assert g.tobytes() == w.tobytes(), f"{path} buffer {i}"
    assert len(got.children) == len(want.children), path
    for i, (g, w) in enumerate(zip(got.children, want.children)):
        assert_same_buffers(g, w, f"{path}.{i}")
    assert (got.dictionary is None) == (want.dictionary is None), path
    if want.dictionary is not None:
        assert_same_buffers(got.dictionary, want.dictionary, f"{path}.<dict>")


# --------------------------------------------------------------------------------------
# the cases

LONG = "a string longer than twelve bytes"


def _cases() -> list[tuple[str, pa.Array, t.DataType]]:
    ints = [1, -2, None, 300, 70000]
    c: list[tuple[str, pa.Array, t.DataType]] = []
    for name, pt, qt, vals in [
        ("int8", pa.int8(), qv.int8(), [1, -2, None, 3]),
        ("int16", pa.int16(), qv.int16(), [1, -2, None, 300]),
        ("int32", pa.int32(), qv.int32(), ints),
        ("int64", pa.int64(), qv.int64(), [1, -2, None, 1 << 40]),
        ("uint16", pa.uint16(), qv.uint16(), [1, 2, None, 65000]),
        ("uint32", pa.uint32(), qv.uint32(), [1, 2, None, 1 << 31]),
        ("uint64", pa.uint64(), qv.uint64(), [1, 2, None, 1 << 63]),
        ("float16", pa.float16(), qv.float16(), [np.float16(1.5), None, np.float16(-2)]),
        ("float32", pa.float32(), qv.float32(), [1.5, None, -2.25]),
        ("float64", pa.float64(), qv.float64(), [1.5, None, -2.25e300]),
        ("date32", pa.date32(), qv.date32(), [1, None, 19000]),
        ("date64", pa.date64(), qv.date64(), [86400000, None]),
        ("time32", pa.time32("ms"), qv.time32("ms"), [1, None, 86399999]),
        ("time64", pa.time64("ns"), qv.time64("ns"), [1000, None, 86399999999000]),
        ("timestamp", pa.timestamp("us", "UTC"), qv.timestamp("us", "UTC"), [1, None, -5]),
        ("duration", pa.duration("s"), qv.duration("s"), [1, None, -5]),
        ("bool", pa.bool_(), qv.bool_(), [True, None, False, True]),
        ("string", pa.string(), qv.string(), ["a", None, "bcd", ""]),
        ("large_string", pa.large_string(), qv.large_string(), ["a", None, "bcd"]),
        ("binary", pa.binary(), qv.binary(), [b"\x00\x01", None, b""]),
        ("large_binary", pa.large_binary(), qv.large_binary(), [b"\x00\x01", None]),
        ("fsb", pa.binary(3), qv.fixed_size_binary(3), [b"abc", None, b"xyz"]),
        ("string_view", pa.string_view(), qv.string_view(), ["ab", None, LONG, LONG + "!"]),
        ("binary_view", pa.binary_view(), qv.binary_view(), [b"x" * 12, b"y" * 13, None]),
        ("null", pa.null(), qv.null(), [None, None, None]),
    ]:
        c.append((name, pa.array(vals, pt), qt))
    dec = [decimal.Decimal("1.25"), None, decimal.Decimal("-99999.99")]
    c.append(("decimal32", pa.array(dec, pa.decimal32(9, 2)), qv.decimal32(9, 2)))
    c.append(("decimal64", pa.array(dec, pa.decimal64(18, 2)), qv.decimal64(18, 2)))
    c.append(("decimal128", pa.array(dec, pa.decimal128(38, 2)), qv.decimal128(38, 2)))
    c.append(("decimal256", pa.array(dec, pa.decimal256(76, 2)), qv.decimal256(76, 2)))
    mdn = [pa.scalar((1, -2, 3), pa.month_day_nano_interval()).as_py(), None]
    c.append(
        (
            "month_day_nano",
            pa.array([*mdn, (-7, 8, -(1 << 40))], pa.month_day_nano_interval()),
            qv.month_day_nano_interval(),
        )
    )
    c.append(
        (
            "list",
            pa.array([[1, 2], None, [3]], pa.list_(pa.int32())),
            qv.list_(qv.int32()),
        )
    )
    c.append(
        (
            "large_list",
            pa.array([[1.5], None, []], pa.large_list(pa.float64())),
            qv.large_list(qv.float64()),
        )
    )
    c.append(
        (
            "list_view",
            pa.array([[1, 2], None, [3]], pa.list_view(pa.int16())),
            qv.list_view(qv.int16()),
        )
    )
    c.append(
        (
            "large_list_view",
            pa.array([["a"], None, [LONG]], pa.large_list_view(pa.string_view())),
            qv.large_list_view(qv.string_view()),
        )
    )
    c.append(
        (
            "fixed_size_list",
            pa.array([[1, 2], None, [3, 4]], pa.list_(pa.int64(), 2)),
            qv.list_(qv.int64(), 2),
        )
    )
    c.append(
        (
            "struct",
            pa.array(
                [{"a": 1, "b": "x"}, None, {"a": None, "b": LONG}],
                pa.struct([("a", pa.int32()), ("b", pa.string())]),
            ),
            qv.struct([("a", qv.int32()), ("b", qv.string())]),
        )
    )
    c.append(
        (
            "map",
            pa.array([[(1, 2.5)], None, [(3, 4.5), (5, None)]], pa.map_(pa.int32(), pa.float64())),
            qv.map_(qv.int32(), qv.float64()),
        )
    )
    c.append(
        (
            "sparse_union",
            pa.UnionArray.from_sparse(
                pa.array([0, 1, 0], pa.int8()),
                [pa.array([1, 2, 3], pa.int64()), pa.array(["a", None, "c"])],
            ),
            qv.sparse_union([qv.field("0", qv.int64()), qv.field("1", qv.string())]),
        )
    )
    c.append(
        (
            "dense_union",
            pa.UnionArray.from_dense(
                pa.array([0, 1, 0, 1], pa.int8()),
                pa.array([0, 0, 1, 1], pa.int32()),
                [pa.array([1, 2], pa.int64()), pa.array([1.5, 2.5], pa.float32())],
            ),
            qv.dense_union([qv.field("0", qv.int64()), qv.field("1", qv.float32())]),
        )
    )
    c.append(
        (
            "dictionary",
            pa.array(["a", "b", None, "a", LONG]).dictionary_encode().cast(
                pa.dictionary(pa.int16(), pa.string())
            ),
            qv.dictionary(qv.int16(), qv.string()),
        )
    )
    for width, prt, qrt in [(16, pa.int16(), qv.int16()), (32, pa.int32(), qv.int32()),
                            (64, pa.int64(), qv.int64())]:
        c.append(
            (
                f"ree{width}",
                pa.RunEndEncodedArray.from_arrays(
                    pa.array([2, 5, 300], prt), pa.array([1.5, None, 3.0])
                ),
                qv.run_end_encoded(qrt, qv.float64()),
            )
        )
    c.append(
        (
            "list_of_dictionary",
            pa.ListArray.from_arrays(
                pa.array([0, 2, 3], pa.int32()),
                pa.array(["x", "y", "x"]).dictionary_encode(),
            ),
            qv.list_(qv.dictionary(qv.int32(), qv.string())),
        )
    )
    c.append(
        (
            "uuid_extension",
            pa.array([b"\x01" * 16, None], pa.uuid()),
            qv.uuid(),
        )
    )
    return c


CASES = _cases()


@pytest.mark.parametrize(("name", "pa_arr", "qtype"), CASES, ids=[c[0] for c in CASES])
def test_big_endian_copy_swaps_back_to_pyarrow_buffers(name, pa_arr, qtype) -> None:
    native = from_pa(pa_arr, qtype)
    big = reference_big_endian(native)
    swapped = endian.swap_array_to_native(big)
    assert_same_buffers(swapped, native, name)


@pytest.mark.parametrize(("name", "pa_arr", "qtype"), CASES, ids=[c[0] for c in CASES])
def test_swap_from_native_matches_reference(name, pa_arr, qtype) -> None:
    native = from_pa(pa_arr, qtype)
    assert_same_buffers(endian.swap_array_from_native(native), reference_big_endian(native), name)


@pytest.mark.parametrize(("name", "pa_arr", "qtype"), CASES, ids=[c[0] for c in CASES])
def test_swapped_array_reads_like_pyarrow(name, pa_arr, qtype) -> None:
    swapped = endian.swap_array_to_native(reference_big_endian(from_pa(pa_arr, qtype)))
    got = swapped.to_pylist()
    want = pa_arr.to_pylist()
    if isinstance(t.storage_of(qtype), t.MapType):
        want = [None if v is None else [tuple(kv) for kv in v] for v in want]
        got = [None if v is None else [tuple(kv) for kv in v] for v in got]
    assert got == want


def test_sliced_array_keeps_offset_length_and_values() -> None:
    pa_arr = pa.array([1, 2, None, 4, 5, 6], pa.int32())
    native = from_pa(pa_arr, qv.int32()).slice(2, 3)
    swapped = endian.swap_array_to_native(reference_big_endian(native))
    assert (swapped.offset, len(swapped), swapped.null_count) == (2, 3, 1)
    assert swapped.buffers[1].view("<i4")[2:5].tolist()[1:] == [4, 5]


def test_sliced_string_array_swaps_its_whole_offsets_buffer() -> None:
    pa_arr = pa.array(["a", "bb", "ccc", "dddd"])
    native = from_pa(pa_arr, qv.string()).slice(1, 2)
    swapped = endian.swap_array_to_native(reference_big_endian(native))
    assert swapped.buffers[1].view("<i4").tolist()[:5] == [0, 1, 3, 6, 10]
    assert swapped.offset == 1


def test_bitmaps_and_raw_bytes_are_shared_not_copied() -> None:
    native = from_pa(pa.array(["a", None, "bcd"]), qv.string())
    big = reference_big_endian(native)
    swapped = endian.swap_array_to_native(big)
    assert swapped.buffers[0] is big.buffers[0]
    assert swapped.buffers[2] is big.buffers[2]
    assert swapped.buffers[1] is not big.buffers[1]


def test_union_type_ids_are_untouched_and_dense_offsets_swapped() -> None:
    qt = qv.dense_union([qv.field("a", qv.int8())])
    ids = np.zeros(3, np.uint8)
    offs = np.array([0, 1, 2], ">i4").view(np.uint8)
    child = make_array(qv.int8(), 3, [None, np.arange(3, dtype=np.uint8)])
    out = endian.swap_array_to_native(make_array(qt, 3, [ids, offs], [child]))
    assert out.buffers[0] is ids
    assert out.buffers[1].view("<i4").tolist() == [0, 1, 2]


def test_day_time_interval_swaps_each_half() -> None:
    be = np.array([(1, -2), (300, 70000)], dtype=[("d", ">i4"), ("ms", ">i4")]).view(np.uint8)
    arr = make_array(qv.day_time_interval(), 2, [None, be.reshape(-1)])
    out = endian.swap_array_to_native(arr).buffers[1].view("<i4").tolist()
    assert out == [1, -2, 300, 70000]


def test_decimal_is_reversed_as_one_integer() -> None:
    value = -(10**30) + 7
    be = np.frombuffer(value.to_bytes(16, "big", signed=True), np.uint8)
    arr = make_array(qv.decimal128(38, 0), 1, [None, be])
    got = endian.swap_array_to_native(arr).buffers[1].tobytes()
    assert int.from_bytes(got, "little", signed=True) == value


def test_padding_bytes_after_the_last_element_are_kept() -> None:
    raw = np.frombuffer(b"\x00\x00\x00\x05" + b"\xaa\xbb", np.uint8)
    out = endian.byteswap_buffer(raw, 4, (4,))
    assert out.tobytes() == b"\x05\x00\x00\x00\xaa\xbb"


def test_views_short_ones_keep_inline_bytes() -> None:
    inline = b"abcdefghijkl"
    raw = np.frombuffer((12).to_bytes(4, "big") + inline, np.uint8)
    out = endian.swap_views_buffer(raw)
    assert out[:4].view("<i4")[0] == 12
    assert out[4:].tobytes() == inline


def test_too_deep_type_tree_is_limit_exceeded_not_recursion_error() -> None:
    for depth in (endian.MAX_DEPTH + 1, 2000):
        qtype: t.DataType = qv.int32()
        arr = make_array(qtype, 0, [None, np.zeros(0, np.uint8)])
        for _ in range(depth):
            qtype = qv.list_(qtype)
            arr = make_array(qtype, 0, [None, np.zeros(4, np.uint8)], [arr])
        with pytest.raises(LimitExceeded, match="nesting depth"):
            endian.swap_array_to_native(arr)


def test_nesting_at_the_limit_swaps() -> None:
    qtype: t.DataType = qv.int32()
    arr = make_array(qtype, 1, [None, np.array([7], ">i4").view(np.uint8)])
    for _ in range(endian.MAX_DEPTH):
        qtype = qv.list_(qtype)
        offsets = np.array([0, 1], ">i4").view(np.uint8)
        arr = make_array(qtype, 1, [None, offsets], [arr])
    out = endian.swap_array_to_native(arr)
    for _ in range(endian.MAX_DEPTH):
        assert out.buffers[1].view("<i4").tolist() == [0, 1]
        out = out.children[0]
    assert out.buffers[1].view("<i4").tolist() == [7]


def test_big_arrays_swap_without_python_loops() -> None:
    n = 2_000_000
    values = np.arange(n, dtype=np.int64)
    arr = make_array(qv.int64(), n, [None, values.astype(">i8").view(np.uint8)])
    out = endian.swap_array_to_native(arr)
    assert np.array_equal(out.buffers[1].view("<i8"), values)


# --------------------------------------------------------------------------------------
# the big-endian gold streams, read with a minimal flat-schema loader written here so that
# only the swap is under test (the IPC reader has its own end-to-end tests)

BIG_ENDIAN = INTEGRATION / "1.0.0-bigendian"


def _flat_array(qtype, node, specs, body, dictionary=None) -> Array:
    lay = layout_of(qtype)
    bufs = []
    for off, length in specs[: len(lay.buffers)]:
        bufs.append(None if length == 0 else body[off : off + length])
    del specs[: len(lay.buffers)]
    length, null_count = node
    if lay.has_validity and bufs and bufs[0] is None:
        null_count = 0
    return make_array(qtype, length, bufs, (), null_count, 0, dictionary)


def _read_big_endian_stream(path) -> list[list[Array]]:
    from quiver.ipc import metadata as md
    from quiver.ipc.framing import read_frame

    data = memoryview(require_shared(path).read_bytes())
    pos, batches, dicts, schema_msg = 0, [], {}, None
    while True:
        meta, body_start, _ = read_frame(data, pos)
        if len(meta) == 0:
            return batches
        msg = md.decode_message(meta)
        body = np.frombuffer(data[body_start : body_start + msg.body_length], np.uint8)
        pos = body_start + msg.body_length
        h = msg.header
        if isinstance(h, md.SchemaMessage):
            assert h.endianness == "big"
            schema_msg = h
            continue
        if isinstance(h, md.DictionaryBatch):
            specs = h.data.buffers.tolist()
            value_type = next(
                f.type.value_type
                for i, f in enumerate(schema_msg.schema)
                if schema_msg.dictionary_ids.get((i,)) == h.id
            )
            dicts[h.id] = _flat_array(value_type, h.data.nodes.tolist()[0], specs, body)
            continue
        specs = h.buffers.tolist()
        nodes = h.nodes.tolist()
        cols = []
        for i, f in enumerate(schema_msg.schema):
            dictionary = None
            if isinstance(f.type, t.DictionaryType):
                dictionary = dicts[schema_msg.dictionary_ids[(i,)]]
            cols.append(_flat_array(f.type, nodes[i], specs, body, dictionary))
        batches.append(cols)


@pytest.mark.parametrize("name", ["generated_primitive.stream", "generated_dictionary.stream"])
def test_big_endian_gold_stream_swaps_to_pyarrows_values(name: str) -> None:
    path = BIG_ENDIAN / name
    batches = _read_big_endian_stream(path)
    theirs = list(pa.ipc.open_stream(str(path)))
    assert len(batches) == len(theirs) > 0
    checked = 0
    for cols, pb in zip(batches, theirs):
        for i, col in enumerate(cols):
            native = endian.swap_array_to_native(col)
            got = native.to_pylist()
            assert got == pb.column(i).to_pylist(), pb.schema.field(i).name
            checked += 1
    assert checked >= 2 * len(batches)
