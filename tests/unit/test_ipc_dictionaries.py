"""Dictionary batches: ids, deltas, replacement, nesting, shared ids, file-format rules."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.ipc as pipc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import quiver as qv
import quiver.ipc as ipc
from quiver.array import make_array
from quiver.ipc import metadata as md
from quiver.ipc.decoder import END, MessageDecoder
from quiver.ipc.framing import EOS, frame_message

DICT = qv.dictionary(qv.int32(), qv.string())
SCHEMA = qv.schema([qv.field("d", DICT)])


def encoded(indices: list[int | None], values: list[str]) -> qv.Array:
    """A dictionary array with exactly these indices and dictionary values."""
    idx = qv.array(indices, qv.int32())
    return make_array(DICT, len(idx), idx.buffers, (), -1, 0, qv.array(values, qv.string()))


def batch(indices: list[int | None], values: list[str]) -> qv.RecordBatch:
    return qv.RecordBatch(SCHEMA, [encoded(indices, values)])


def write(batches, *, fmt: str = "stream", **kw) -> bytes:
    sink = ipc.BufferOutputStream()
    new = ipc.new_stream if fmt == "stream" else ipc.new_file
    with new(sink, SCHEMA, **kw) as w:
        for b in batches:
            w.write_batch(b)
    return sink.getvalue()


def dictionary_messages(data: bytes) -> list[tuple[int, bool, int]]:
    """(id, is_delta, length) of every DictionaryBatch in a stream."""
    dec = MessageDecoder()
    dec.feed(data)
    dec.feed_eof()
    out = []
    while (raw := dec.next_message()) is not END:
        h = raw.message.header
        if isinstance(h, md.DictionaryBatch):
            out.append((h.id, h.is_delta, h.data.length))
    return out


def values_of(data: bytes, fmt: str = "stream") -> list[list]:
    opener = ipc.open_stream if fmt == "stream" else ipc.open_file
    return [b.column(0).to_pylist() for b in opener(data)]


def pyarrow_values_of(data: bytes, fmt: str = "stream") -> list[list]:
    if fmt == "stream":
        return [b.column(0).to_pylist() for b in pipc.open_stream(pa.py_buffer(data))]
    r = pipc.open_file(pa.py_buffer(data))
    return [r.get_batch(i).column(0).to_pylist() for i in range(r.num_record_batches)]


def test_an_unchanged_dictionary_is_written_once() -> None:
    data = write([batch([0, 1], ["a", "b"]), batch([1, 1], ["a", "b"])])
    assert dictionary_messages(data) == [(0, False, 2)]
    assert values_of(data) == pyarrow_values_of(data) == [["a", "b"], ["b", "b"]]


@pytest.mark.parametrize("fmt", ["stream", "file"])
def test_a_growing_dictionary_is_written_as_deltas(fmt: str) -> None:
    batches = [batch([0], ["a"]), batch([1, 0], ["a", "b"]), batch([2], ["a", "b", "c"])]
    data = write(batches, fmt=fmt, emit_dictionary_deltas=True)
    if fmt == "stream":
        assert dictionary_messages(data) == [(0, False, 1), (0, True, 1), (0, True, 1)]
    assert values_of(data, fmt) == pyarrow_values_of(data, fmt) == [["a"], ["b", "a"], ["c"]]


def test_without_deltas_a_growing_dictionary_is_replaced_in_a_stream() -> None:
    data = write([batch([0], ["a"]), batch([1], ["a", "b"])])
    assert dictionary_messages(data) == [(0, False, 1), (0, False, 2)]
    assert values_of(data) == pyarrow_values_of(data) == [["a"], ["b"]]


def test_a_different_dictionary_is_a_replacement_in_a_stream() -> None:
    data = write([batch([0], ["a"]), batch([0, 1], ["x", "y"])], emit_dictionary_deltas=True)
    assert dictionary_messages(data) == [(0, False, 1), (0, False, 2)]
    assert values_of(data) == pyarrow_values_of(data) == [["a"], ["x", "y"]]


def test_the_file_format_refuses_to_write_a_replacement() -> None:
    with pytest.raises(qv.DictionaryError, match=r"dictionary id 0.*forbids"):
        write([batch([0], ["a"]), batch([0], ["z"])], fmt="file")


def test_a_file_with_two_full_dictionaries_for_one_id_is_rejected() -> None:
    sink = ipc.BufferOutputStream()
    w = ipc.new_file(sink, SCHEMA)
    w._encoder._dicts.file_format = False  # force the forbidden layout, as a broken writer would
    w.write_batch(batch([0], ["a"]))
    w.write_batch(batch([0], ["z"]))
    w.close()
    with pytest.raises(qv.DictionaryError, match="at most one non-delta dictionary batch for id 0"):
        ipc.open_file(sink.getvalue())


def test_a_delta_before_any_dictionary_is_rejected() -> None:
    data = bytearray(write([batch([0], ["a"])]))
    # flip the one DictionaryBatch to isDelta by re-encoding it
    dec = MessageDecoder()
    dec.feed(bytes(data))
    dec.feed_eof()
    parts = []
    while (raw := dec.next_message()) is not END:
        msg = raw.message
        if isinstance(msg.header, md.DictionaryBatch):
            msg = md.Message(msg.version, md.DictionaryBatch(0, msg.header.data, True),
                             msg.body_length)
        parts.append(frame_message(md.encode_message(msg)) + bytes(raw.body))
    with pytest.raises(qv.DictionaryError, match="before its delta"):
        list(ipc.open_stream(b"".join(parts) + EOS))


def test_one_dictionary_id_may_serve_two_fields() -> None:
    schema = qv.schema([qv.field("x", DICT), qv.field("y", DICT)])
    header = md.SchemaMessage(schema, {(0,): 7, (1,): 7})
    out = [frame_message(md.encode_message(md.Message(md.V5, header, 0)))]

    def message(header_obj, columns) -> bytes:
        from quiver.ipc.body import assemble, layout_body

        flat = assemble(columns)
        specs, parts, body_length = layout_body(flat.buffers)
        rb = md.RecordBatch(len(columns[0]), np.asarray(flat.nodes, "<i8").reshape(-1, 2), specs)
        h = header_obj(rb)
        meta = frame_message(md.encode_message(md.Message(md.V5, h, body_length)))
        return meta + b"".join(bytes(memoryview(p).cast("B")) for p in parts)

    dictionary = qv.array(["p", "q"])
    out.append(message(lambda rb: md.DictionaryBatch(7, rb, False), [dictionary]))
    idx = qv.array([1, 0], qv.int32())
    x = make_array(DICT, 2, idx.buffers, (), 0, 0, dictionary)
    out.append(message(lambda rb: rb, [x, x]))
    data = b"".join(out) + EOS
    got = next(iter(ipc.open_stream(data)))
    assert got.to_pylist() == [{"x": "q", "y": "q"}, {"x": "p", "y": "p"}]
    assert got.column(0).dictionary is got.column(1).dictionary


def test_nested_dictionaries_round_trip_both_ways() -> None:
    inner = pa.array(["u", "v", "u"]).dictionary_encode()
    values_struct = pa.StructArray.from_arrays([pa.array([1, 2]), pa.array(["k", "k"])
                                                .dictionary_encode()], ["n", "tag"])
    outer = pa.DictionaryArray.from_arrays(pa.array([1, 0, 1], pa.int8()), values_struct)
    listed = pa.ListArray.from_arrays(pa.array([0, 1, 3, 3], pa.int32()), inner)
    table = pa.table({"outer": outer, "listed": listed})
    sink = pa.BufferOutputStream()
    with pipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    ours = list(ipc.open_stream(sink.getvalue().to_pybytes()))
    assert ours[0].to_pylist() == table.to_pylist()
    again = ipc.BufferOutputStream()
    with ipc.new_stream(again, ours[0].schema) as w:
        w.write_batch(ours[0])
    back = pipc.open_stream(pa.py_buffer(again.getvalue())).read_all()
    assert back.equals(table)


def test_reader_keeps_indices_and_dictionary() -> None:
    got = next(iter(ipc.open_stream(write([batch([1, None, 0], ["a", "b"])]))))
    col = got.column(0)
    assert col.indices.to_pylist() == [1, None, 0]
    assert col.dictionary.to_pylist() == ["a", "b"]
    assert col.to_pylist() == ["b", None, "a"]


@st.composite
def dictionary_sequences(draw):
    """Batches whose dictionaries grow by appending, or are replaced outright."""
    words = st.text("abcdef", min_size=1, max_size=3)
    current: list[str] = []
    out = []
    for _ in range(draw(st.integers(1, 6))):
        if current and draw(st.booleans()):
            fresh = draw(st.lists(words, min_size=1, max_size=4))
            current = fresh if draw(st.booleans()) else current + fresh
        elif not current:
            current = draw(st.lists(words, min_size=1, max_size=4))
        n = draw(st.integers(0, 6))
        idx = draw(st.lists(st.one_of(st.none(), st.integers(0, len(current) - 1)),
                            min_size=n, max_size=n))
        out.append((idx, list(current)))
    return out


@settings(max_examples=40, deadline=None)
@given(dictionary_sequences(), st.booleans())
def test_any_sequence_of_deltas_and_replacements_reads_back_in_both_libraries(seq, deltas):
    data = write([batch(i, v) for i, v in seq], emit_dictionary_deltas=deltas)
    expected = [[None if k is None else v[k] for k in i] for i, v in seq]
    assert values_of(data) == expected
    assert pyarrow_values_of(data) == expected


@settings(max_examples=25, deadline=None)
@given(dictionary_sequences())
def test_pyarrow_delta_streams_read_in_quiver(seq):
    pa_type = pa.dictionary(pa.int32(), pa.string())
    sink = pa.BufferOutputStream()
    opts = pipc.IpcWriteOptions(emit_dictionary_deltas=True)
    schema = pa.schema([("d", pa_type)])
    with pipc.new_stream(sink, schema, options=opts) as w:
        for idx, values in seq:
            arr = pa.DictionaryArray.from_arrays(pa.array(idx, pa.int32()), pa.array(values))
            w.write_batch(pa.record_batch([arr], schema=schema))
    expected = [[None if k is None else v[k] for k in i] for i, v in seq]
    assert values_of(sink.getvalue().to_pybytes()) == expected


def test_unify_dictionaries_turns_a_file_replacement_into_a_delta() -> None:
    data = write(
        [batch([0, 1], ["a", "b"]), batch([0, 1, None], ["c", "a"]), batch([0], ["b"])],
        fmt="file",
        unify_dictionaries=True,
    )
    assert values_of(data, "file") == pyarrow_values_of(data, "file") == [
        ["a", "b"], ["c", "a", None], ["b"]
    ]
    reader = ipc.open_file(data)
    assert len(reader.footer.dictionaries) == 2  # the first dictionary and one delta
    assert reader.get_batch(2).column(0).dictionary.to_pylist() == ["a", "b", "c"]


def _listed(schema: qv.Schema, values: list[str], indices: list[int | None]) -> qv.RecordBatch:
    """A batch of one list<dictionary> column: one list of all ``indices``, then an
    empty list, the lists sliced to start at 1 so that offsets are exercised."""
    d = encoded(indices, values)
    offsets = qv.array([0, 0, len(indices), len(indices)], qv.int32())
    arr = make_array(schema.field("l").type, 3, [None, offsets.buffers[1]], [d], 0)
    return qv.RecordBatch(schema, [arr.slice(1)])


def test_unify_dictionaries_reencodes_nested_dictionaries() -> None:
    """pyarrow refuses this (a replacement in the file format); quiver unifies a
    dictionary inside a list like a top-level one: a delta, and re-encoded indices."""
    inner = qv.dictionary(qv.int32(), qv.string())
    schema = qv.schema([qv.field("l", qv.list_(inner))])
    sink = ipc.BufferOutputStream()
    with ipc.new_file(sink, schema, unify_dictionaries=True) as w:
        w.write_batch(_listed(schema, ["a", "b"], [0, 1, 1]))
        w.write_batch(_listed(schema, ["z", "a"], [0, None, 1]))
        w.write_batch(_listed(schema, ["b"], [0]))
    data = bytes(sink.getvalue())
    expected = [[["a", "b", "b"], []], [["z", None, "a"], []], [["b"], []]]
    reader = ipc.open_file(data)
    assert [reader.get_batch(i).column(0).to_pylist() for i in range(3)] == expected
    assert len(reader.footer.dictionaries) == 2  # the first dictionary and one delta
    theirs = pipc.open_file(pa.py_buffer(data))
    assert [theirs.get_batch(i).column(0).to_pylist() for i in range(3)] == expected
    values = theirs.get_batch(2).column(0).values
    assert values.dictionary.to_pylist() == ["a", "b", "z"]


def test_unify_dictionaries_reencodes_two_dictionaries_of_one_column() -> None:
    d = qv.dictionary(qv.int32(), qv.string())  # as encoded() builds them
    schema = qv.schema([qv.field("s", qv.struct([qv.field("x", d), qv.field("y", d)]))])

    def row(xs: list[str], ys: list[str]) -> qv.RecordBatch:
        x, y = encoded([0, 1], xs), encoded([1, 0], ys)
        arr = make_array(schema.field("s").type, 2, [None], [x, y], 0)
        return qv.RecordBatch(schema, [arr])

    sink = ipc.BufferOutputStream()
    with ipc.new_file(sink, schema, unify_dictionaries=True) as w:
        w.write_batch(row(["a", "b"], ["p", "q"]))
        w.write_batch(row(["c", "a"], ["r", "p"]))
    data = bytes(sink.getvalue())
    expected = [
        [{"x": "a", "y": "q"}, {"x": "b", "y": "p"}],
        [{"x": "c", "y": "p"}, {"x": "a", "y": "r"}],
    ]
    assert [b.column(0).to_pylist() for b in ipc.open_file(data)] == expected
    theirs = pipc.open_file(pa.py_buffer(data))
    assert [theirs.get_batch(i).column(0).to_pylist() for i in range(2)] == expected


def test_unify_dictionaries_refuses_dictionaries_inside_dictionary_values() -> None:
    inner = qv.dictionary(qv.int32(), qv.string())
    outer = qv.dictionary(qv.int32(), qv.list_(inner))
    schema = qv.schema([qv.field("d", outer)])

    def batch_of(word: str) -> qv.RecordBatch:
        words = encoded([0], [word])
        offsets = qv.array([0, 1], qv.int32())
        lists = make_array(qv.list_(inner), 1, [None, offsets.buffers[1]], [words], 0)
        idx = qv.array([0], qv.int32())
        column = make_array(outer, 1, [None, idx.buffers[1]], (), 0, 0, lists)
        return qv.RecordBatch(schema, [column])

    with pytest.raises(qv.NotSupported, match="inside another dictionary"):
        sink = ipc.BufferOutputStream()
        with ipc.new_file(sink, schema, unify_dictionaries=True) as w:
            w.write_batch(batch_of("a"))
            w.write_batch(batch_of("z"))


# -- float dictionaries: "the same dictionary" is the same bits ---------------------------

def _float_dictionary(indices: list, values: list) -> qv.Array:
    from quiver.interop import import_array

    return import_array(pa.DictionaryArray.from_arrays(pa.array(indices, pa.int32()),
                                                       pa.array(values)))


def _written(batches: list, writer, **kw) -> list[str]:
    schema = qv.schema([("x", batches[0].type)])
    sink = ipc.BufferOutputStream()
    with writer(sink, schema, **kw) as w:
        for column in batches:
            w.write_batch(qv.RecordBatch.from_arrays([column], schema=schema))
    return [str(v) for v in ipc.read_table(sink.getvalue()).column("x").to_pylist()]


@pytest.mark.parametrize("writer", [ipc.new_file, ipc.new_stream])
def test_a_float_dictionary_holding_nan_is_the_same_dictionary_in_every_batch(writer):
    # each batch imported with its own copy of one dictionary (as pyarrow hands them over):
    # NaN != NaN by value, but the dictionary did not change, and pyarrow writes this file
    first = _float_dictionary([0, 1], [1.0, float("nan")])
    second = _float_dictionary([1, 0], [1.0, float("nan")])
    assert _written([first, second], writer) == ["1.0", "nan", "nan", "1.0"]


def test_a_dictionary_changing_0_to_minus_0_is_a_replacement_not_the_same_dictionary():
    # -0.0 == 0.0 by value; skipping the second dictionary would read back -0.0 for the 0.0
    # written (pyarrow 26 does: its file reads ['1.0', '-0.0', '1.0', '-0.0'])
    first = _float_dictionary([0, 1], [1.0, -0.0])
    second = _float_dictionary([0, 1], [1.0, 0.0])
    assert _written([first, second], ipc.new_stream) == ["1.0", "-0.0", "1.0", "0.0"]
    assert _written([first, second], ipc.new_file, unify_dictionaries=True) == [
        "1.0", "-0.0", "1.0", "0.0"]
    with pytest.raises(qv.ArrowError, match="keep its values or grow by a delta"):
        _written([first, second], ipc.new_file)


def test_concatenated_float_dictionaries_keep_their_values_bit_for_bit():
    from quiver.array.concat import concat_arrays

    same = concat_arrays([_float_dictionary([0, 1], [1.0, float("nan")]),
                          _float_dictionary([1], [1.0, float("nan")])])
    assert len(same.dictionary) == 2  # one dictionary kept, not unified
    signs = concat_arrays([_float_dictionary([1], [1.0, -0.0]),
                           _float_dictionary([1], [1.0, 0.0])])
    assert [str(v) for v in signs.to_pylist()] == ["-0.0", "0.0"]
