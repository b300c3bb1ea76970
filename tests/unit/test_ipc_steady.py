"""The steady-state fast path (quiver.ipc.steady): taken when it should be, and never
different from the general path, for good input and for every corruption of a message."""

from __future__ import annotations

import re
import struct

import numpy as np
import pyarrow as pa
import pyarrow.ipc as pipc
import pytest

import quiver as qv
import quiver.ipc as ipc
from quiver import errors as E
from quiver.array.base import array_class_for, unchecked_new_source
from quiver.ipc import metadata as md
from quiver.ipc import steady
from quiver.ipc.batch_loader import forget_plans
from quiver.ipc.decoder import MessageDecoder
from quiver.ipc.file_decoder import forget_footers


@pytest.fixture(autouse=True, params=["compiled", "loop"])
def take_variant(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test runs with the generated ``take`` (from the first batch on) and with the
    loop over the plan.  Footers and schema plans kept from other tests' reads are
    dropped, so that no steady path set up under other settings carries over."""
    forget_footers()
    forget_plans()
    if request.param == "compiled":
        monkeypatch.setattr(steady, "COMPILE_AFTER", 1)
        monkeypatch.setattr(steady, "COMPILE_AFTER_NESTED", 1)
    else:
        monkeypatch.setattr(steady, "COMPILE_MAX_COLUMNS", 0)
    return request.param


def _pa_stream(batches: list[pa.RecordBatch], **kwargs) -> bytes:
    sink = pa.BufferOutputStream()
    with pipc.new_stream(sink, batches[0].schema, **kwargs) as w:
        for b in batches:
            w.write_batch(b)
    return sink.getvalue().to_pybytes()


def _leaf_batches(n: int = 6) -> list[pa.RecordBatch]:
    rng = np.random.default_rng(1)
    out = []
    for k in range(n):
        rows = 5 + k % 3  # lengths differ from batch to batch: numbers, not shape
        ints = rng.integers(-50, 50, rows)
        out.append(
            pa.record_batch(
                {
                    "i": pa.array([None if v % 7 == 0 else int(v) for v in ints], pa.int64()),
                    "f": pa.array(rng.random(rows), pa.float32()),
                    "s": pa.array([None if v % 5 == 0 else f"s{v}" for v in ints]),
                    "ls": pa.array([f"x{v}" * (k + 1) for v in ints], pa.large_string()),
                    "b": pa.array(ints > 0),
                    "bin": pa.array([bytes([k]) * (k % 4) for _ in ints], pa.binary()),
                    "fsb": pa.array([b"ab"] * rows, pa.binary(2)),
                    "d": pa.array([1] * rows, pa.decimal128(5, 2)),
                    "ts": pa.array(ints, pa.timestamp("ms", "UTC")),
                }
            )
        )
    return out


def _assert_same_arrays(a: qv.Array, b: qv.Array) -> None:
    """The same class, type, length, null count, offset and buffer bytes, at every level."""
    assert (type(a), a.type, len(a), a.null_count, a.offset) == (
        type(b), b.type, len(b), b.null_count, b.offset
    )
    assert [None if x is None else bytes(x) for x in a.buffers] == [
        None if x is None else bytes(x) for x in b.buffers
    ]
    assert len(a.children) == len(b.children)
    for x, y in zip(a.children, b.children):
        _assert_same_arrays(x, y)


def _nested_batches(n: int = 6) -> list[pa.RecordBatch]:
    """Lists, large lists, maps, structs and fixed-size lists of leaves, nested two deep,
    with nulls at every level and lengths that differ from batch to batch."""
    rng = np.random.default_rng(2)
    out = []
    for k in range(n):
        rows = 4 + k % 3
        ints = [int(v) for v in rng.integers(-9, 9, rows)]
        out.append(
            pa.record_batch(
                {
                    "l": pa.array(
                        [None if v == 0 else [v, None, v * 2][: abs(v) % 4] for v in ints],
                        pa.list_(pa.int64()),
                    ),
                    "ll": pa.array(
                        [[f"s{v}"] * (abs(v) % 3) for v in ints], pa.large_list(pa.string())
                    ),
                    "st": pa.array(
                        [
                            None if v == 1 else {"a": v, "b": [v > 0, None][: abs(v) % 3]}
                            for v in ints
                        ],
                        pa.struct([("a", pa.int32()), ("b", pa.list_(pa.bool_()))]),
                    ),
                    "m": pa.array(
                        [[(f"k{v}", v)] * (abs(v) % 2) for v in ints],
                        pa.map_(pa.string(), pa.int64()),
                    ),
                    "fl": pa.array(
                        [None if v < -5 else [float(v), 0.5] for v in ints],
                        pa.list_(pa.float32(), 2),
                    ),
                    "ln": pa.array(
                        [[[v], [], None][: abs(v) % 4] for v in ints],
                        pa.list_(pa.list_(pa.int16())),
                    ),
                    "i": pa.array(ints, pa.int8()),
                }
            )
        )
    return out


class _Spy:
    """Counts the batches the fast path gives."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.hits = 0
        whole = MessageDecoder.whole_messages

        def counting(decoder: MessageDecoder, reader):
            for item in whole(decoder, reader):
                self.hits += 1
                yield item

        monkeypatch.setattr(MessageDecoder, "whole_messages", counting)


def _outcome(data: bytes, **kwargs) -> object:
    """The batches read, or the error raised (class, message, where)."""
    try:
        with ipc.open_stream(data, **kwargs) as r:
            return [(b.to_pylist(), b.schema) for b in r]
    except E.ArrowError as exc:
        return (type(exc), str(exc), exc.offset, exc.message_index, exc.field_path)


def _general(data: bytes, monkeypatch: pytest.MonkeyPatch, **kwargs) -> object:
    with monkeypatch.context() as m:
        m.setattr(steady, "STEADY_TRIES", 0)
        return _outcome(data, **kwargs)


def _assert_general_only(data: bytes, monkeypatch: pytest.MonkeyPatch, **kwargs) -> None:
    """``data`` reads as the general path reads it, without the fast path taking a batch."""
    spy = _Spy(monkeypatch)
    assert _outcome(data, **kwargs) == _general(data, monkeypatch, **kwargs)
    assert spy.hits == 0


def test_fast_path_reads_what_pyarrow_wrote(monkeypatch: pytest.MonkeyPatch) -> None:
    batches = _leaf_batches()
    data = _pa_stream(batches)
    spy = _Spy(monkeypatch)
    got = list(ipc.open_stream(data))
    assert spy.hits == len(batches) - 1  # all but the first, which sets the path up
    assert [b.to_pylist() for b in got] == [b.to_pylist() for b in batches]
    assert _outcome(data) == _general(data, monkeypatch)


def test_fast_path_reads_what_quiver_wrote(monkeypatch: pytest.MonkeyPatch) -> None:
    batches = [qv.record_batch(b) for b in _leaf_batches()]
    sink = ipc.BufferOutputStream()
    with ipc.new_stream(sink, batches[0].schema) as w:
        for b in batches:
            w.write_batch(b)
    data = bytes(sink.getvalue())
    spy = _Spy(monkeypatch)
    got = list(ipc.open_stream(data))
    assert spy.hits == len(batches) - 1
    assert all(a.equals(b) for a, b in zip(got, batches))


def test_buffers_are_views_of_the_source() -> None:
    data = _pa_stream(_leaf_batches())
    src = np.frombuffer(data, np.uint8)
    lo = src.__array_interface__["data"][0]
    last = list(ipc.open_stream(data))[-1]
    for col in last.columns:
        for buf in col.buffers:
            if buf is not None and buf.nbytes:
                addr = buf.__array_interface__["data"][0]
                assert lo <= addr and addr + buf.nbytes <= lo + len(data)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"validate": "full"},
        {"columns": ["s", "b"]},
    ],
)
def test_options_that_rule_it_out(monkeypatch: pytest.MonkeyPatch, kwargs: dict) -> None:
    _assert_general_only(_pa_stream(_leaf_batches()), monkeypatch, **kwargs)


@pytest.mark.parametrize(
    "batches",
    [
        # list views, unions, dictionaries (also nested), views and nulls are not taken
        [pa.record_batch({"l": pa.array([[1], [2, 3]], pa.list_view(pa.int64()))})] * 3,
        [pa.record_batch({"u": pa.UnionArray.from_sparse(
            pa.array([0, 1], pa.int8()), [pa.array([1, 2]), pa.array(["a", "b"])])})] * 3,
        [pa.record_batch({"ld": pa.ListArray.from_arrays(
            [0, 1, 2], pa.array(["a", "b"]).dictionary_encode())})] * 3,
        [pa.record_batch({"d": pa.array(["a", "b"]).dictionary_encode()})] * 3,
        [pa.record_batch({"v": pa.array(["a", "b"], pa.string_view())})] * 3,
        [pa.record_batch({"n": pa.nulls(2)})] * 3,
    ],
    ids=["list view", "union", "list of dictionary", "dictionary", "view", "null"],
)
def test_schemas_that_rule_it_out(monkeypatch: pytest.MonkeyPatch, batches: list) -> None:
    _assert_general_only(_pa_stream(batches), monkeypatch)


def test_compressed_and_custom_metadata_messages_go_the_general_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    batches = _leaf_batches(4)
    data = _pa_stream(batches, options=pipc.IpcWriteOptions(compression="lz4"))
    spy = _Spy(monkeypatch)
    assert _outcome(data) == _general(data, monkeypatch)
    assert spy.hits == 0
    sink = pa.BufferOutputStream()
    with pipc.new_stream(sink, batches[0].schema) as w:
        for k, b in enumerate(batches):
            w.write_batch(b, custom_metadata={"k": str(k)})
    data = sink.getvalue().to_pybytes()
    with ipc.open_stream(data) as r:
        for k, _ in enumerate(r):
            assert r.custom_metadata == qv.KeyValueMetadata({"k": str(k)})
    assert spy.hits == 0


def test_a_different_message_in_between_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch of another shape (no nulls: no validity buffer length) is read the general
    way, and the fast path picks up again after it."""
    batches = _leaf_batches(3)
    odd = pa.record_batch(
        {name: pa.array([], col.type) for name, col in zip(batches[0].schema.names,
                                                              batches[0].columns)}
    )
    data = _pa_stream([*batches, odd, *batches])
    spy = _Spy(monkeypatch)
    assert _outcome(data) == _general(data, monkeypatch)
    assert spy.hits == 2 + 3  # all but the first batch and the odd one


def _message_spans(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of each encapsulated message of a stream."""
    spans, pos = [], 0
    while pos + 8 <= len(data):
        n = int.from_bytes(data[pos + 4 : pos + 8], "little", signed=True)
        if n == 0:
            break
        msg = ipc.metadata.decode_message(data[pos + 8 : pos + 8 + n])
        end = pos + 8 + n + msg.body_length
        spans.append((pos, end))
        pos = end
    return spans


def _flip_the_fourth_message(data: bytes, monkeypatch: pytest.MonkeyPatch) -> int:
    """Flip each byte of the fourth message of ``data`` (a RecordBatch the fast path would
    take) three ways, assert that the fast path and the general path give the same
    batches or the same error, and count the corruptions the fast path still took."""
    start, end = _message_spans(data)[3]
    taken = 0
    spy = _Spy(monkeypatch)
    for pos in range(start, end):
        for flip in (0x01, 0x80, 0xFF):
            bad = bytearray(data)
            bad[pos] ^= flip
            bad = bytes(bad)
            before = spy.hits
            fast = _outcome(bad)
            taken += spy.hits - before == 3
            assert fast == _general(bad, monkeypatch), (pos - start, flip)
    return taken


def test_every_corruption_of_a_later_message_reads_as_the_general_path_reads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Flip each byte of the fourth message (a RecordBatch the fast path would take):
    the fast path and the general path give the same batches or the same error."""
    batches = [
        pa.record_batch({"i": pa.array([1, None, 3], pa.int32()), "s": pa.array(["a", "bc", None])})
    ] * 4
    # some corruptions (e.g. in values) still take the fast path
    assert _flip_the_fourth_message(_pa_stream(batches), monkeypatch)


def test_nested_columns_take_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    batches = _nested_batches()
    data = _pa_stream(batches)
    spy = _Spy(monkeypatch)
    got = list(ipc.open_stream(data))
    assert spy.hits == len(batches) - 1
    assert [b.to_pylist() for b in got] == [b.to_pylist() for b in batches]
    assert _outcome(data) == _general(data, monkeypatch)
    with monkeypatch.context() as m:
        m.setattr(steady, "STEADY_TRIES", 0)
        general = list(ipc.open_stream(data))
    for fast_batch, general_batch in zip(got, general):
        for a, b in zip(fast_batch.columns, general_batch.columns):
            _assert_same_arrays(a, b)
    # sliced batches (offsets not starting at 0) from quiver's writer
    sink = ipc.BufferOutputStream()
    quiver_batches = [qv.record_batch(b).slice(1, 3) for b in batches]
    with ipc.new_stream(sink, quiver_batches[0].schema) as w:
        for b in quiver_batches:
            w.write_batch(b)
    sliced = bytes(sink.getvalue())
    spy.hits = 0
    assert _outcome(sliced) == _general(sliced, monkeypatch)
    assert spy.hits == len(batches) - 1


@pytest.mark.parametrize("kind", ["with nulls", "without nulls"])
def test_every_corruption_of_a_later_nested_message_reads_as_the_general_path_reads(
    monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """As for leaves: flip each byte of the fourth message of nested columns."""
    struct_type = pa.struct([("a", pa.int16()), ("b", pa.list_(pa.string()))])
    if kind == "with nulls":
        columns = {
            "l": pa.array([[1, None], None, []], pa.list_(pa.int32())),
            "st": pa.array([{"a": 1, "b": ["x"]}, None, {"a": None, "b": []}], struct_type),
            "fl": pa.array([[1, 2], None, [3, 4]], pa.list_(pa.int8(), 2)),
        }
    else:  # no validity bitmaps: other buffer lengths are zero
        columns = {
            "l": pa.array([[1, 2], [], [3]], pa.list_(pa.int32())),
            "st": pa.array(
                [{"a": 1, "b": ["x"]}, {"a": 2, "b": []}, {"a": 3, "b": ["yz", "w"]}],
                struct_type,
            ),
            "fl": pa.array([[1, 2], [5, 6], [3, 4]], pa.list_(pa.int8(), 2)),
        }
    assert _flip_the_fourth_message(_pa_stream([pa.record_batch(columns)] * 4), monkeypatch)


def test_split_feeds_give_the_same_batches() -> None:
    data = _pa_stream(_leaf_batches())
    whole = [b.to_pylist() for b in ipc.open_stream(data)]
    dec = ipc.StreamDecoder()
    got = []
    for i in range(0, len(data), 97):
        dec.feed(data[i : i + 97])
        while (b := dec.next_batch()) is not ipc.NEED_DATA and b is not ipc.END:
            got.append(b.to_pylist())
    dec.feed_eof()
    while (b := dec.next_batch()) is not ipc.END:
        got.append(b.to_pylist())
    assert got == whole


def test_unchecked_new_source_builds_what_the_constructor_builds() -> None:
    dtype = qv.int32()
    cls = array_class_for(dtype)
    bufs = (None, np.arange(3, dtype=np.int32).view(np.uint8))
    names = {"_object_new": object.__new__, "C": cls, "D": dtype, "B": bufs}
    exec(unchecked_new_source("a", "C", "D", "3", "B", "0"), names)
    made, built = names["a"], cls(dtype, 3, bufs, (), 0, 0, None)
    assert type(made) is cls
    for slot in ("_type", "_length", "_buffers", "_children", "_null_count", "_offset",
                 "_dictionary"):
        assert getattr(made, slot) == getattr(built, slot) or slot == "_buffers"
    assert made.buffers is bufs
    assert made.to_pylist() == [0, 1, 2] == built.to_pylist()


def test_array_classes_keep_the_slots_unchecked_new_source_sets() -> None:
    """unchecked_new_source sets Array's slots; no subclass may add slots or an __init__."""
    from quiver.array.base import _ARRAY_CLASSES, Array

    for cls in set(_ARRAY_CLASSES.values()):
        for klass in cls.__mro__[: cls.__mro__.index(Array)]:
            assert "__init__" not in vars(klass), klass
            assert vars(klass).get("__slots__", ()) == (), klass


def test_the_loop_becomes_compiled_code_and_the_code_is_reused(
    monkeypatch: pytest.MonkeyPatch, take_variant: str
) -> None:
    """With the generated code allowed, the loop gives way to it after COMPILE_AFTER
    batches and later readers of the layout get it at once; with it ruled out (schemas
    wider than COMPILE_MAX_COLUMNS) the loop stays."""
    compiled = take_variant == "compiled"
    monkeypatch.setattr(steady, "COMPILE_AFTER", 3)
    monkeypatch.setattr(steady, "_code_cache", {})
    batches = _leaf_batches(8)
    data = _pa_stream(batches)

    def generated(reader) -> bool:
        take = reader._decoder._loader.steady_path.take
        return take.__code__.co_filename == "<quiver.ipc.steady take>"

    r = ipc.open_stream(data)
    it = iter(r)
    next(it), next(it)
    assert not generated(r)  # the loop (counting) so far
    rest = list(it)
    assert generated(r) is compiled
    assert len(steady._code_cache) == int(compiled)
    assert [b.to_pylist() for b in rest] == [b.to_pylist() for b in batches[2:]]
    again = ipc.open_stream(data)
    next(iter(again)), next(iter(again))
    assert generated(again) is compiled  # cached: compiled at once


def _file_outcome(data: bytes, **kwargs) -> object:
    try:
        with ipc.open_file(data, **kwargs) as r:
            return [(r.get_batch(i).to_pylist(), r.schema) for i in range(r.num_record_batches)]
    except E.ArrowError as exc:
        return (type(exc), str(exc), exc.offset, exc.message_index, exc.field_path)


def _pa_file(batches: list[pa.RecordBatch]) -> bytes:
    sink = pa.BufferOutputStream()
    with pipc.new_file(sink, batches[0].schema) as w:
        for b in batches:
            w.write_batch(b)
    return sink.getvalue().to_pybytes()


def test_file_reader_takes_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    from quiver.ipc.stream_decoder import BatchLoader

    batches = _leaf_batches()
    data = _pa_file(batches)
    general = BatchLoader.record_batch
    loads = []

    def counting(loader, raw):
        loads.append(raw.index)
        return general(loader, raw)

    monkeypatch.setattr(BatchLoader, "record_batch", counting)
    fast = _file_outcome(data)
    assert loads == [0]  # only the first batch went the general way
    assert [rows for rows, _ in fast] == [b.to_pylist() for b in batches]
    with monkeypatch.context() as m:
        m.setattr(steady, "STEADY_TRIES", 0)
        assert _file_outcome(data) == fast
    assert len(loads) == 1 + len(batches)


def test_every_corruption_of_a_later_file_block_reads_as_the_general_path_reads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    batches = [
        pa.record_batch({"i": pa.array([1, None, 3], pa.int32()), "s": pa.array(["a", "bc", None])})
    ] * 4
    data = _pa_file(batches)
    blocks = ipc.open_file(data).footer.record_batches
    start = blocks[3].offset
    end = start + blocks[3].meta_data_length + blocks[3].body_length
    from quiver.ipc.stream_decoder import BatchLoader

    general = BatchLoader.record_batch
    loads: list[int] = []

    def counting(loader, raw):
        loads.append(raw.index)
        return general(loader, raw)

    monkeypatch.setattr(BatchLoader, "record_batch", counting)
    taken = 0
    for pos in range(start, end):
        for flip in (0x01, 0x80, 0xFF):
            bad = bytearray(data)
            bad[pos] ^= flip
            bad = bytes(bad)
            loads.clear()
            fast = _file_outcome(bad)
            taken += loads == [0]  # blocks 1-3 all went the fast way
            with monkeypatch.context() as m:
                m.setattr(steady, "STEADY_TRIES", 0)
                assert fast == _file_outcome(bad), (pos - start, flip)
    assert taken  # some corruptions (e.g. in values) still take the fast path


def _crafted_message(length: int, field: str) -> bytes:
    """A valid RecordBatch message (one int64 column) whose Message table is declared to
    cover the whole metadata, with ``field`` (the version, the header type or the header
    offset) placed inside the first FieldNode's length: a layout no writer produces but
    flatbuffers allow, where a structural field changes with a per-batch number."""
    tmpl = md.RecordBatchTemplate(4, 1, 2)
    meta = bytearray(tmpl.encode(8 * length, length, [length, 0], [0, 0, 0, 8 * length]))
    root = md.follow(meta, 0)
    vt = root - struct.unpack_from("<i", meta, root)[0]
    rb = md.follow(meta, md.field_position(bytes(meta), root, 2))
    nodes_at = md.follow(meta, md.field_position(bytes(meta), rb, 1)) + 4
    struct.pack_into("<H", meta, vt + 2, len(meta) - root)  # the table covers to the end
    slot = {"version": 0, "header type": 1}[field]
    struct.pack_into("<H", meta, vt + 4 + 2 * slot, nodes_at - root)
    body = np.arange(length, dtype="<i8").tobytes()
    return struct.pack("<ii", -1, len(meta)) + bytes(meta) + body


@pytest.mark.parametrize(
    ("field", "lengths"),
    # versions 4, 4, 260 (V5, V5, unknown); header types 3, 3, 4 (RecordBatch, then Tensor)
    [("version", (4, 4, 0x0104)), ("header type", (3, 3, 4))],
)
def test_a_structural_field_inside_a_number_rules_the_shape_out(
    monkeypatch: pytest.MonkeyPatch, field: str, lengths: tuple[int, int, int]
) -> None:
    """Found in review: a crafted first message put the version inside node 0's length, so
    later messages matched the fixed bytes while their version changed with the length."""
    sink = ipc.BufferOutputStream()
    with ipc.new_stream(sink, qv.schema([("x", qv.int64())])):
        pass
    schema_part = bytes(sink.getvalue())[:-8]
    first, second, third = (_crafted_message(n, field) for n in lengths)
    assert md.record_batch_shape(first[8:]) is None
    data = schema_part + first + second + third + b"\xff\xff\xff\xff\x00\x00\x00\x00"
    _assert_general_only(data, monkeypatch)


def test_limits_given_as_infinity_work_in_the_generated_code(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Found in review: math.inf limits made the code generation raise OverflowError."""
    import math

    monkeypatch.setattr(steady, "COMPILE_AFTER", 1)
    batches = _leaf_batches(4)
    limits = ipc.IpcLimits(max_body_size=math.inf, max_unbacked_rows=math.inf)
    got = [b.to_pylist() for b in ipc.open_stream(_pa_stream(batches), limits=limits)]
    assert got == [b.to_pylist() for b in batches]


def _with_numbers(data: bytes, index: int, nodes: dict, buffers: dict) -> bytes:
    """``data`` with message ``index``'s FieldNode and Buffer numbers changed in place:
    ``nodes[(i, 0 or 1)]`` is node ``i``'s new length or null count, ``buffers[(i, 0 or
    1)]`` buffer ``i``'s new offset or length (the shape, the other bytes and the body stay
    as they were)."""
    start, _ = _message_spans(data)[index]
    size = int.from_bytes(data[start + 4 : start + 8], "little")
    shape = md.record_batch_shape(data[start + 8 : start + 8 + size])
    assert shape is not None
    places, at = [], start + 8  # each number's position (the format: pad bytes and int64s)
    for count, code in re.findall(r"(\d*)([xq])", shape.numbers.format):
        for _ in range(int(count or 1) if code == "q" else 1):
            at += int(count or 1) if code == "x" else 0
            if code == "q":
                places.append(at)
                at += 8
    _, _, node_slice, buffer_slice = shape.slots
    out = bytearray(data)
    for (i, m), value in nodes.items():
        struct.pack_into("<q", out, places[node_slice.start + 2 * i + m], value)
    for (i, m), value in buffers.items():
        struct.pack_into("<q", out, places[buffer_slice.start + 2 * i + m], value)
    assert shape.numbers.unpack_from(out, start + 8) != shape.numbers.unpack_from(data, start + 8)
    return bytes(out)


# FieldNodes in pre-order: l 0, l.item 1, st 2, st.a 3, st.b 4, st.b.item 5, fl 6, fl.item 7,
# m 8, m.entries 9, m.key 10, m.value 11; Buffers: l 0-1, l.item 2-3, st 4, st.a 5-6,
# st.b 7-8, st.b.item 9-11, fl 12, fl.item 13-14, m 15-16, entries 17, key 18-20, value 21-22
@pytest.mark.parametrize(
    ("nodes", "buffers", "path", "message"),
    [
        ({(1, 0): 2}, {}, "l", "expected offsets[3] <= child length 2, found 3"),
        ({(5, 0): 2}, {}, "st.b", "expected offsets[3] <= child length 2, found 3"),
        ({(9, 0): 1}, {}, "m", "expected offsets[3] <= child length 1, found 2"),
        ({(3, 0): 2}, {}, "st", "child too short: expected length >= 3, found 2"),
        ({(4, 0): 2, (4, 1): 0}, {}, "st", "child too short: expected length >= 3, found 2"),
        ({(7, 0): 5}, {}, "fl", "child too short: expected length >= 6 (3 x list_size 2)"),
        ({}, {(0, 1): 0}, "l", "(validity) too small: expected at least 1 bytes for 3 slots"),
        ({(3, 1): 1}, {}, "st.a", "(validity) too small: expected at least 1 bytes for 3 slots"),
        ({}, {(12, 1): 0}, "fl", "(validity) too small: expected at least 1 bytes for 3 slots"),
        ({}, {(1, 1): 8}, "l", "(offsets) too small: expected at least 16 bytes for 3 slots"),
        ({(6, 1): 4}, {}, "", "expected 0 <= null_count <= length in FieldNode 6"),
    ],
    ids=[
        "list offsets past the child", "inner list offsets past the child",
        "map offsets past the entries", "struct child too short",
        "struct list child too short", "fixed-size list child too short",
        "list bitmap too short", "struct child bitmap too short",
        "fixed-size list bitmap too short", "list offsets buffer too short",
        "nulls above the length",
    ],
)  # fmt: skip
def test_a_corrupted_nested_message_is_refused_and_reported_by_the_general_path(
    monkeypatch: pytest.MonkeyPatch, nodes: dict, buffers: dict, path: str, message: str
) -> None:
    """Numbers changed so that one nested rule fails (the shape still matches): the fast
    path (generated code, or the loop of generated takes) refuses the message and the
    general path reports it, naming the field."""
    struct_type = pa.struct([("a", pa.int16()), ("b", pa.list_(pa.string()))])
    structs = [{"a": 1, "b": ["x"]}, None, {"a": 3, "b": ["y", "z"]}]
    batch = pa.record_batch(
        {
            "l": pa.array([[1, 2], None, [3]], pa.list_(pa.int32())),
            "st": pa.array(structs, struct_type),
            "fl": pa.array([[1, 2], None, [3, 4]], pa.list_(pa.int8(), 2)),
            "m": pa.array([[("k", 1)], None, [("j", 2)]], pa.map_(pa.string(), pa.int64())),
        }
    )
    data = _pa_stream([batch] * 4)
    spy = _Spy(monkeypatch)
    good = _outcome(data)
    assert isinstance(good, list) and [rows for rows, _ in good] == [batch.to_pylist()] * 4
    assert spy.hits == 3  # the good stream: all but the first batch the fast way
    bad = _with_numbers(data, 4, nodes, buffers)  # the last batch (message 0: the schema)
    spy.hits = 0
    got = _outcome(bad)
    assert spy.hits == 2  # the corrupted last batch was refused
    assert got == _general(bad, monkeypatch)
    assert isinstance(got, tuple) and issubclass(got[0], E.ArrowError)
    assert message in got[1] and got[4] == (path or None) and got[3] == 4, got
