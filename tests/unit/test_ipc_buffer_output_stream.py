"""BufferOutputStream: small writes copied into chunks, large ones kept by reference,
one copy on getvalue() into a read-only memoryview that readers accept."""

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


def test_many_small_writes_cross_chunk_boundaries() -> None:
    sink = ipc.BufferOutputStream()
    pieces = [bytes([i % 251]) * (1 + i % 4000) for i in range(3000)]
    for p in pieces:
        sink.write(p)
    expected = b"".join(pieces)
    assert len(expected) > 4 * writer_module._FIRST_CHUNK  # several chunks were used
    assert sink.getvalue() == expected


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


def test_a_large_bytearray_is_copied_when_written() -> None:
    data = bytearray(b"x" * 100_000)
    sink = ipc.BufferOutputStream()
    sink.write(data)
    data[:1] = b"y"
    assert sink.getvalue()[:1] == b"x"


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
