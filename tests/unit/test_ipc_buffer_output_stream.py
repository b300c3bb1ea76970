"""BufferOutputStream: every write copied once, into a bytearray while small and into one
growing block of anonymous memory after; getvalue() a read-only memoryview that readers
accept."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.ipc as pipc
import pytest

import quiver as qv
import quiver.ipc as ipc
from quiver.ipc import writer as writer_module


def test_interleaved_small_and_large_writes_keep_their_order() -> None:
    rng = np.random.default_rng(0)
    sink = ipc.BufferOutputStream()
    expected = bytearray()
    for size in [3, 70_000, 1, 0, 65_535, 65_536, 5, 200_000, 17, 9]:
        piece = rng.integers(0, 256, size, dtype=np.uint8)
        assert sink.write(piece if size % 2 else piece.tobytes()) == size
        expected += piece.tobytes()
        assert sink.tell() == len(expected)
    value = sink.getvalue()
    assert isinstance(value, memoryview) and value.readonly
    assert value == bytes(expected) and bytes(value) == bytes(expected)
    assert len(value) == len(expected) and value[3:8] == expected[3:8]


@pytest.mark.parametrize("in_place", [True, False])
def test_many_small_writes_grow_the_block(in_place: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # in place: mremap on Linux; otherwise (and on other systems) a new block and a copy
    monkeypatch.setattr(writer_module, "_GROW_IN_PLACE", in_place and writer_module._GROW_IN_PLACE)
    sink = ipc.BufferOutputStream()
    pieces = [bytes([i % 251]) * (1 + i % 4000) for i in range(4000)]
    for p in pieces:
        sink.write(p)
    expected = b"".join(pieces)
    assert len(expected) > 4 * writer_module._MAP_FROM  # the block grew several times
    assert sink.getvalue() == expected


def test_a_small_stream_is_bytes_and_maps_no_memory() -> None:
    sink = ipc.BufferOutputStream()
    sink.write(b"x" * 1000)
    value = sink.getvalue()
    assert sink._block is None and isinstance(value.obj, bytes) and value == b"x" * 1000
    sink.write(b"y" * writer_module._MAP_FROM)  # past the threshold: into a block
    assert sink._block is not None
    assert value == b"x" * 1000
    assert sink.getvalue() == b"x" * 1000 + b"y" * writer_module._MAP_FROM


def test_a_value_held_while_the_block_grows_keeps_its_bytes() -> None:
    size = writer_module._MAP_FROM
    sink = ipc.BufferOutputStream()
    sink.write(b"a" * (size + 1))
    held = sink.getvalue()  # an export of the block: it cannot be resized under it
    first = sink._block
    sink.write(b"b" * (4 * size))
    assert sink._block is not first  # a new block, the old one kept alive by the value
    assert held == b"a" * (size + 1)
    assert sink.getvalue() == b"a" * (size + 1) + b"b" * (4 * size)
    del held
    second = sink._block
    sink.write(b"c" * (16 * size))
    if writer_module._GROW_IN_PLACE:  # nothing exported any more: grown in place
        assert sink._block is second
    assert sink.getvalue()[-3:] == b"ccc" and sink.tell() == 21 * size + 1


def test_written_arrays_may_change_after_the_write() -> None:
    values = np.arange(100_000, dtype=np.uint8)
    sink = ipc.BufferOutputStream()
    sink.write(values)
    values[:] = 0
    assert sink.getvalue()[:3] == bytes([0, 1, 2])


def test_getvalue_is_cached_until_the_next_write() -> None:
    sink = ipc.BufferOutputStream()
    sink.write(b"abc")
    first = sink.getvalue()
    assert sink.getvalue() is first
    sink.write(b"de")
    second = sink.getvalue()
    assert first == b"abc" and second == b"abcde"  # the first value is not changed
    sink.write(np.zeros(100_000, np.uint8))
    third = sink.getvalue()
    assert third[:5] == b"abcde" and len(third) == 100_005 and first == b"abc"


def test_values_of_other_formats_and_layouts_are_written_as_their_bytes() -> None:
    sink = ipc.BufferOutputStream()
    ints = np.arange(6, dtype="<i4")
    assert sink.write(ints) == 24
    strided = memoryview(np.arange(10, dtype=np.uint8))[::2]  # not contiguous
    assert sink.write(strided) == 5
    grid = np.arange(200_000, dtype="<i2").reshape(2, -1)  # 2-D and large
    assert sink.write(grid) == 400_000
    assert sink.getvalue() == ints.tobytes() + bytes([0, 2, 4, 6, 8]) + grid.tobytes()


def test_getbuffer_and_empty_stream() -> None:
    sink = ipc.BufferOutputStream()
    assert sink.getvalue() == b"" and len(sink.getbuffer()) == 0
    sink.write(b"12")
    assert sink.getbuffer() == b"12"


def test_value_goes_to_every_reader() -> None:
    batch = qv.record_batch({"a": qv.array([1, 2, 3]), "s": qv.array(["x", None, "zz"])})
    for new, open_, pa_open in [
        (ipc.new_stream, ipc.open_stream, pipc.open_stream),
        (ipc.new_file, ipc.open_file, pipc.open_file),
    ]:
        sink = ipc.BufferOutputStream()
        with new(sink, batch.schema) as w:
            w.write_batch(batch)
        value = sink.getvalue()
        assert open_(value).read_all().to_pylist() == batch.to_pylist()
        assert pa_open(pa.py_buffer(value)).read_all().to_pylist() == batch.to_pylist()
        assert open_(bytes(value)).read_all().to_pylist() == batch.to_pylist()


def test_refuses_what_is_not_bytes_like() -> None:
    with pytest.raises(qv.ArrowTypeError, match="expected a bytes-like object"):
        ipc.BufferOutputStream().write("text")


def test_running_out_of_memory_is_a_memory_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_memory(*args: object, **kw: object) -> None:
        raise OSError(12, "Cannot allocate memory")

    monkeypatch.setattr(writer_module.mmap, "mmap", no_memory)
    with pytest.raises(MemoryError, match=r"expected \d+ bytes of memory"):
        ipc.BufferOutputStream().write(bytes(writer_module._MAP_FROM + 1))


def test_arrays_read_from_a_value_survive_later_writes() -> None:
    batch = qv.record_batch({"a": qv.array(np.arange(writer_module._MAP_FROM // 4))})
    sink = ipc.BufferOutputStream()
    with ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch)
    (read,) = list(ipc.open_stream(sink.getvalue()))  # zero-copy views of the block
    with memoryview(sink._block) as block:
        assert np.shares_memory(read.column(0).buffers[1], np.frombuffer(block, np.uint8))
    for _ in range(4):  # grow the block well past its size while the views live
        sink.write(np.full(1 << 20, 0xAB, np.uint8))
    assert read.column(0).to_pylist() == list(range(writer_module._MAP_FROM // 4))
