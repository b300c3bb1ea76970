"""Tests for quiver.array.encoded: dictionary and run-end encoded arrays."""

from __future__ import annotations

import uuid

import pyarrow as pa

import quiver as qv
from tests.unit._helpers import same_as_pyarrow


def test_dictionary_and_run_end_encoded_decode() -> None:
    d = pa.array(["a", "b", None, "a"]).dictionary_encode()
    assert same_as_pyarrow(d) == ["a", "b", None, "a"]
    assert same_as_pyarrow(d.slice(1, 2)) == ["b", None]
    ree = pa.RunEndEncodedArray.from_arrays(pa.array([2, 4, 5], pa.int32()),
                                            pa.array([1, None, 2]))
    assert same_as_pyarrow(ree) == [1, 1, None, None, 2]
    assert same_as_pyarrow(ree.slice(1, 3)) == [1, None, None]


def test_uuid_extension_gives_uuid_objects_like_pyarrow() -> None:
    raw = b"0123456789abcdef"
    pa_arr = pa.ExtensionArray.from_storage(pa.uuid(), pa.array([raw, None], pa.binary(16)))
    assert same_as_pyarrow(pa_arr) == [uuid.UUID(bytes=raw), None]
    other = qv.array([1, None], qv.extension("my.ext", qv.int32(), b"meta"))
    assert other.to_pylist() == [1, None]
    assert other.storage.type == qv.int32()


def test_dictionary_indices_share_the_buffers() -> None:
    d = qv.array(["x", "y", None, "x"], qv.dictionary(qv.int16(), qv.string())).slice(1)
    assert d.indices.to_pylist() == [1, None, 0]
    assert d.indices.type == qv.int16()
    assert d.indices.buffers[1] is d.buffers[1]
    assert d.dictionary.to_pylist() == ["x", "y"]


def test_run_end_encoded_accessors() -> None:
    r = qv.array(["a", "a", "b"], qv.run_end_encoded(qv.int16(), qv.string()))
    assert r.run_ends.to_pylist() == [2, 3]
    assert r.values.to_pylist() == ["a", "b"]
    assert r.null_count == 0


def test_run_end_encoded_from_children() -> None:
    ree = qv.Array.from_buffers(
        qv.run_end_encoded(qv.int32(), qv.string()), 3, [], offset=1,
        children=[qv.array([2, 4], qv.int32()), qv.array(["a", None])],
    )
    assert ree.to_pylist() == ["a", None, None]
