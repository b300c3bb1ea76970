"""Tests for quiver.ipc.flatbuf: the hand-written flatbuffer reader and builder."""

from __future__ import annotations

import random
import struct

import numpy as np
import pytest

from quiver.errors import LimitExceeded, MetadataError
from quiver.ipc import metadata as md
from quiver.ipc import tensor as it
from quiver.ipc.flatbuf import BOOL, F64, I8, I16, I32, I64, U8, Builder, Reader
from quiver.ipc.flatvec import int64_matrix
from quiver.ipc.metadata import Message, decode_message, encode_message
from tests.unit._tensor_helpers import _pa_bytes


def _sample() -> bytes:
    b = Builder()
    s = b.create_string("héllo")
    ints = b.create_scalar_vector("q", [1, -2, 3])
    pairs = b.create_struct_vector(np.array([[1, 2], [3, 4], [5, 6]], dtype="<i8"))
    kids = [b.table([(0, "<i", k), (1, "offset", b.create_string(f"k{k}"))]) for k in range(3)]
    kid_vec = b.create_offset_vector(kids)
    names = b.create_offset_vector([b.create_string("a"), b.create_string("bc")])
    member = b.table([(0, "<q", 99)])
    root = b.table(
        [
            (0, "offset", s),
            (1, "<b", -5),
            (2, "<h", 300),
            (3, "<q", 1 << 40),
            (4, "<d", 2.5),
            (5, "<?", True, False),
            (6, "offset", ints),
            (7, "offset", pairs),
            (8, "offset", kid_vec),
            (9, "offset", names),
            (10, "<B", 7),
            (11, "offset", member),
            (12, "struct", struct.pack("<qq", 10, 20), 8),
            (13, "<i", 0, 0),  # equal to its default: not written
        ]
    )
    return b.finish(root)


def test_builder_output_round_trips_through_reader():
    t = Reader(_sample()).root()
    assert t.string(0) == "héllo"
    assert t.get(1, I8, 0) == -5
    assert t.get(2, I16, 0) == 300
    assert t.get(3, I64, 0) == 1 << 40
    assert t.get(4, F64, 0.0) == 2.5
    assert t.get(5, BOOL, False) is True
    assert t.scalars(6, "q") == (1, -2, 3)
    assert int64_matrix(t, 7, 2).tolist() == [[1, 2], [3, 4], [5, 6]]
    kids = t.tables(8)
    assert [(k.get(0, I32, -1), k.string(1)) for k in kids] == [(0, "k0"), (1, "k1"), (2, "k2")]
    assert t.strings(9) == ["a", "bc"]
    code, member = t.union(10)
    assert code == 7 and member is not None and member.get(0, I64, 0) == 99
    pos = t.struct_pos(12, 16)
    assert struct.unpack_from("<qq", t.buf, pos) == (10, 20)


def test_absent_fields_give_defaults_and_none():
    t = Reader(_sample()).root()
    assert not t.has(13) and t.get(13, I32, 42) == 42
    assert t.get(50, I32, 7) == 7
    assert t.table(50) is None and t.string(50) is None and t.scalars(50, "q") is None
    assert t.tables(50) == [] and t.strings(50) == []
    assert int64_matrix(t, 50, 2) is None
    assert t.union(50) == (0, None)


def test_builder_aligns_buffer_scalars_and_vectors():
    data = _sample()
    assert len(data) % 8 == 0
    t = Reader(data).root()
    for i, width in [(2, 2), (3, 8), (4, 8), (12, 8)]:
        assert t.field_pos(i, width) % width == 0
    start, n = t.vector(7, 16)
    assert start % 8 == 0 and (start - 4) % 4 == 0 and n == 3
    start, _ = t.vector(6, 8)
    assert start % 8 == 0


def test_strings_are_nul_terminated():
    b = Builder()
    data = b.finish(b.table([(0, "offset", b.create_string("xyz"))]))
    t = Reader(data).root()
    pos = t.ref(0)
    assert data[pos + 4 : pos + 8] == b"xyz\0"


def test_identical_vtables_are_shared():
    def build(n: int) -> bytes:
        b = Builder()
        kids = [b.table([(0, "<i", k + 1)]) for k in range(n)]
        return b.finish(b.table([(0, "offset", b.create_offset_vector(kids))]))

    one, many = build(1), build(50)
    # each extra table costs its 8 bytes plus a 4-byte offset, never another vtable
    assert len(many) - len(one) <= 49 * 12 + 8
    assert [k.get(0, I32, 0) for k in Reader(many).root().tables(0)] == list(range(1, 51))


def test_struct_vector_is_a_zero_copy_view():
    data = _sample()
    arr = int64_matrix(Reader(data).root(), 7, 2)
    assert arr.shape == (3, 2) and arr.dtype == np.dtype("<i8")
    assert np.shares_memory(arr, np.frombuffer(data, np.uint8))


def test_reader_accepts_memoryview_bytearray_and_numpy():
    data = _sample()
    for source in (memoryview(data), bytearray(data), np.frombuffer(data, np.uint8)):
        assert Reader(source).root().string(0) == "héllo"


def test_base_offset_is_added_to_error_offsets():
    with pytest.raises(MetadataError, match="byte offset 1000"):
        Reader(b"\x01\x02", base_offset=1000).root()


def test_rejects_root_offset_past_end():
    data = struct.pack("<I", 1000) + bytes(12)
    with pytest.raises(MetadataError, match="expected a table inside"):
        Reader(data).root()


def test_rejects_vtable_outside_buffer():
    data = struct.pack("<Ii", 4, -100) + bytes(8)
    with pytest.raises(MetadataError, match="expected a vtable inside"):
        Reader(data).root()


def test_rejects_odd_vtable_size():
    # vtable at 4 (size 5), table at 12 with soffset 8
    data = struct.pack("<IHHHxxi", 12, 5, 8, 0, 8) + bytes(8)
    with pytest.raises(MetadataError, match="expected a vtable size that is even"):
        Reader(data).root()


def test_rejects_field_past_table_end():
    # vtable: size 6, table size 8, field 0 at offset 6 (an int32 would end at 10 > 8)
    data = struct.pack("<IHHHxxi", 12, 6, 8, 6, 8) + bytes(8)
    t = Reader(data).root()
    with pytest.raises(MetadataError, match="inside the 8-byte table"):
        t.get(0, I32, 0)


def test_rejects_vector_longer_than_buffer():
    b = Builder()
    data = bytearray(b.finish(b.table([(0, "offset", b.create_scalar_vector("q", [1, 2]))])))
    t = Reader(bytes(data)).root()
    vec = t.ref(0)
    struct.pack_into("<I", data, vec, 1 << 30)
    with pytest.raises(MetadataError, match="expected a vector of at most"):
        Reader(bytes(data)).root().scalars(0, "q")
    with pytest.raises(MetadataError, match="found length 1073741824"):
        int64_matrix(Reader(bytes(data)).root(), 0, 2)


def test_rejects_string_longer_than_buffer_and_bad_utf8():
    b = Builder()
    data = bytearray(b.finish(b.table([(0, "offset", b.create_string("abc"))])))
    pos = Reader(bytes(data)).root().ref(0)
    bad_utf8 = bytearray(data)
    bad_utf8[pos + 4] = 0xFF
    with pytest.raises(MetadataError, match="expected a UTF-8 string"):
        Reader(bytes(bad_utf8)).root().string(0)
    assert Reader(bytes(bad_utf8)).root().bytes(0) == b"\xffbc"
    struct.pack_into("<I", data, pos, 999)
    with pytest.raises(MetadataError, match="expected a string of at most"):
        Reader(bytes(data)).root().string(0)


def test_nesting_deeper_than_max_depth_raises_limit_exceeded():
    b = Builder()
    h = b.table([])
    for _ in range(10):
        h = b.table([(0, "offset", h)])
    data = b.finish(h)
    t = Reader(data, max_depth=20).root()
    for _ in range(10):
        t = t.table(0)
    with pytest.raises(LimitExceeded, match="nested at most 5 deep"):
        t = Reader(data, max_depth=5).root()
        while t is not None:
            t = t.table(0)


def test_too_many_vector_elements_raise_limit_exceeded():
    b = Builder()
    vec = b.create_offset_vector([b.create_string(str(k)) for k in range(20)])
    data = b.finish(b.table([(0, "offset", vec)]))
    assert len(Reader(data).root().strings(0)) == 20
    with pytest.raises(LimitExceeded, match="at most 10 flatbuffer elements"):
        Reader(data, max_count=10).root().strings(0)


def test_random_and_mutated_bytes_raise_only_metadata_errors():
    rng = random.Random(1234)
    good = _sample()

    def walk(data: bytes) -> None:
        t = Reader(data, max_depth=8).root()
        t.string(0)
        t.get(2, I16, 0)
        t.get(3, I64, 0)
        t.scalars(6, "q")
        int64_matrix(t, 7, 2)
        for k in t.tables(8):
            k.get(0, I32, 0)
            k.string(1)
        t.strings(9)
        _, member = t.union(10)
        if member is not None:
            member.get(0, I64, 0)
        t.get(10, U8, 0)

    outcomes = {"ok": 0, "error": 0}
    for trial in range(3000):
        if trial % 3 == 0:
            data = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 64)))
        elif trial % 3 == 1:
            data = good[: rng.randrange(len(good))]
        else:
            buf = bytearray(good)
            for _ in range(rng.randrange(1, 4)):
                buf[rng.randrange(len(buf))] = rng.randrange(256)
            data = bytes(buf)
        try:
            walk(data)
            outcomes["ok"] += 1
        except (MetadataError, LimitExceeded):
            outcomes["error"] += 1
    # both outcomes happen: the loop exercises the checks and the happy path
    assert outcomes["ok"] > 100 and outcomes["error"] > 1000


def test_error_offsets_are_absolute():
    data = b"\0" * 16 + b"\x01\x02"
    with pytest.raises(MetadataError) as info:
        decode_message(memoryview(data)[16:], base_offset=16)
    assert info.value.offset == 16


def test_non_contiguous_input_is_a_metadata_error():
    data = np.frombuffer(encode_message(Message(md.V5, None, 0)) * 2, np.uint8)[::2]
    with pytest.raises(MetadataError, match="expected a contiguous flatbuffer"):
        decode_message(data)


def test_metadata_errors_carry_the_message_offset() -> None:
    data = bytearray(_pa_bytes(np.arange(4, dtype=np.int32)))
    data[8:12] = (0x7FFFFFF0).to_bytes(4, "little")  # the root table offset, out of bounds
    with pytest.raises(MetadataError) as e:
        it.read_tensor(bytes(data))
    assert e.value.offset is not None
