"""Malformed C data: every bad struct raises quiver's error and is released exactly once."""

from __future__ import annotations

import ctypes
import gc

import numpy as np
import pytest

import quiver as qv
from quiver.errors import ArrowInvalid, NotSupported
from quiver.interop import cdata as c
from quiver.interop import export_schema, import_array, import_field

RELEASED: list[str] = []
KEEP: list[object] = []


@c.SchemaRelease
def _release_schema(ptr):
    RELEASED.append("schema")
    ptr.contents.release = c.SchemaRelease()


@c.ArrayRelease
def _release_array(ptr):
    RELEASED.append("array")
    ptr.contents.release = c.ArrayRelease()


@pytest.fixture(autouse=True)
def _reset():
    RELEASED.clear()
    yield
    KEEP.clear()


def _cstr(value: bytes) -> int:
    buf = ctypes.create_string_buffer(value)
    KEEP.append(buf)
    return ctypes.addressof(buf)


def schema_struct(fmt: bytes | None, children=(), dictionary=None, metadata=None, flags=2):
    s = c.ArrowSchema()
    s.format = _cstr(fmt) if fmt is not None else None
    s.name = _cstr(b"col")
    if metadata is not None:
        buf = ctypes.create_string_buffer(metadata, len(metadata))
        KEEP.append(buf)
        s.metadata = ctypes.addressof(buf)
    s.flags = flags
    s.n_children = len(children)
    table = (ctypes.POINTER(c.ArrowSchema) * max(len(children), 1))(
        *[ctypes.pointer(ch) if ch is not None else None for ch in children]
    )
    KEEP.append(table)
    KEEP.extend(children)
    s.children = ctypes.cast(table, ctypes.POINTER(ctypes.POINTER(c.ArrowSchema)))
    if dictionary is not None:
        KEEP.append(dictionary)
        s.dictionary = ctypes.pointer(dictionary)
    s.release = _release_schema
    return s


def array_struct(length, buffers, children=(), null_count=0, offset=0, n_buffers=None):
    a = c.ArrowArray()
    a.length = length
    a.null_count = null_count
    a.offset = offset
    addresses = []
    for b in buffers:
        if b is None:
            addresses.append(None)
        else:
            KEEP.append(b)
            addresses.append(b.__array_interface__["data"][0])
    table = (ctypes.c_void_p * max(len(addresses), 1))(*addresses)
    KEEP.append(table)
    a.n_buffers = len(addresses) if n_buffers is None else n_buffers
    a.buffers = ctypes.cast(table, ctypes.POINTER(ctypes.c_void_p))
    a.n_children = len(children)
    ctable = (ctypes.POINTER(c.ArrowArray) * max(len(children), 1))(
        *[ctypes.pointer(ch) for ch in children]
    )
    KEEP.append(ctable)
    KEEP.extend(children)
    a.children = ctypes.cast(ctable, ctypes.POINTER(ctypes.POINTER(c.ArrowArray)))
    a.release = _release_array
    return a


def capsules(schema, array):
    return c.new_capsule(schema, c.SCHEMA_CAPSULE), c.new_capsule(array, c.ARRAY_CAPSULE)


def int64_buffer(values):
    return np.asarray(values, dtype="<i8").view(np.uint8)


def test_hand_built_struct_imports_and_releases_once():
    pair = capsules(schema_struct(b"l"), array_struct(3, [None, int64_buffer([1, 2, 3])]))
    arr = import_array(pair)
    assert arr.to_pylist() == [1, 2, 3]
    assert RELEASED == ["schema"]
    del arr, pair
    gc.collect()
    assert RELEASED == ["schema", "array"]


@pytest.mark.parametrize(
    ("fmt", "array", "words"),
    [
        (b"l", lambda: array_struct(3, [None]), "expected 2 buffers"),
        (b"l", lambda: array_struct(3, [None, None]), "non-NULL values buffer"),
        (b"l", lambda: array_struct(-1, [None, int64_buffer([])]), "non-negative length"),
        (b"l", lambda: array_struct(1, [None, int64_buffer([1])], offset=-2),
         "non-negative length and offset"),
        (b"l", lambda: array_struct(2, [None, int64_buffer([1, 2])], null_count=1),
         "validity buffer for null_count 1"),
        (b"u", lambda: array_struct(1, [None, np.array([0, -5], "<i4").view(np.uint8),
                                        np.zeros(1, np.uint8)]),
         "non-negative last offset"),
        (b"vu", lambda: array_struct(1, [None, np.zeros(16, np.uint8)]),
         "at least 3 buffers"),
        (b"+s", lambda: array_struct(1, [None], children=[array_struct(1, [None])]),
         "expected 0 child arrays"),
    ],
)
def test_malformed_array_raises_invalid_and_releases_once(fmt, array, words):
    pair = capsules(schema_struct(fmt), array())
    with pytest.raises(ArrowInvalid, match=words):
        import_array(pair)
    del pair
    gc.collect()
    assert RELEASED.count("array") == 1
    assert RELEASED.count("schema") == 1


def test_dictionary_type_without_dictionary_array_is_invalid():
    dict_schema = schema_struct(b"c", dictionary=schema_struct(b"u"))
    pair = capsules(dict_schema, array_struct(1, [None, np.zeros(1, np.uint8)]))
    with pytest.raises(ArrowInvalid, match="dictionary array"):
        import_array(pair)


def test_released_capsule_struct_is_refused():
    s = schema_struct(b"l")
    s.release = c.SchemaRelease()
    with pytest.raises(ArrowInvalid, match="released"):
        import_field(c.new_capsule(s, c.SCHEMA_CAPSULE))


@pytest.mark.parametrize(
    ("build", "error", "words"),
    [
        (lambda: schema_struct(None), ArrowInvalid, "format string, found NULL"),
        (lambda: schema_struct(b"+l"), ArrowInvalid, "expected 1 child"),
        (lambda: schema_struct(b"+l", children=[None]), ArrowInvalid, "non-NULL"),
        (lambda: schema_struct(b"+us:1,300", children=[schema_struct(b"c"),
                                                      schema_struct(b"c")]),
         ArrowInvalid, "type codes"),
        (lambda: schema_struct(b"+ud:1", children=[]), ArrowInvalid, "union type codes"),
        (lambda: schema_struct(b"u", dictionary=schema_struct(b"u")), ArrowInvalid,
         "integer dictionary index"),
        (lambda: schema_struct(b"+m", children=[schema_struct(b"l")]), ArrowInvalid,
         "map child struct"),
        (lambda: schema_struct(b"l", metadata=(-1).to_bytes(4, "little", signed=True)),
         ArrowInvalid, "metadata pair count"),
        (lambda: schema_struct(b"tsx:"), NotSupported, "tsx:"),
        (lambda: schema_struct(b"w:-1"), ArrowInvalid, "fixed_size_binary"),
    ],
)
def test_malformed_schema_raises_and_releases_once(build, error, words):
    capsule = c.new_capsule(build(), c.SCHEMA_CAPSULE)
    with pytest.raises(error, match=words):
        import_field(capsule)
    del capsule
    gc.collect()
    assert RELEASED.count("schema") >= 1
    assert RELEASED[0] == "schema"


def test_cyclic_schema_is_rejected_without_recursion_error():
    s = schema_struct(b"+l", children=[schema_struct(b"l")])
    # point the child table at the parent itself: an endless type
    table = (ctypes.POINTER(c.ArrowSchema) * 1)(ctypes.pointer(s))
    KEEP.append(table)
    s.children = ctypes.cast(table, ctypes.POINTER(ctypes.POINTER(c.ArrowSchema)))
    with pytest.raises(ArrowInvalid, match="nesting"):
        import_field(c.new_capsule(s, c.SCHEMA_CAPSULE))


def test_exported_schema_capsule_reads_back_through_raw_struct():
    capsule = export_schema(qv.field("n", qv.dictionary(qv.int8(), qv.string(), True)))
    address = c.capsule_address(capsule, c.SCHEMA_CAPSULE)
    s = c.ArrowSchema.from_address(address)
    assert c.c_string(s.format) == b"c"
    assert c.c_string(s.name) == b"n"
    assert s.flags == c.ARROW_FLAG_NULLABLE | c.ARROW_FLAG_DICTIONARY_ORDERED
    assert c.c_string(s.dictionary.contents.format) == b"u"
    assert import_field(capsule).type == qv.dictionary(qv.int8(), qv.string(), True)


def test_legacy_union_and_null_validity_buffer_is_accepted():
    pair = capsules(schema_struct(b"n"), array_struct(3, [None], null_count=3))
    arr = import_array(pair)
    assert len(arr) == 3 and arr.null_count == 3 and arr.buffers == ()
    child = array_struct(2, [None, np.array([7, 8], np.int8).view(np.uint8)])
    union = capsules(
        schema_struct(b"+us:4", children=[schema_struct(b"c")]),
        array_struct(2, [None, np.array([4, 4], np.int8).view(np.uint8)], children=[child]),
    )
    arr = import_array(union)
    assert arr.to_pylist() == [7, 8]
    assert len(arr.buffers) == 1


def test_validate_full_catches_offsets_past_the_child():
    child = array_struct(2, [None, int64_buffer([1, 2])])
    offsets = np.array([0, 1, 5], "<i4").view(np.uint8)  # 5 > child length 2
    pair = capsules(
        schema_struct(b"+l", children=[schema_struct(b"l")]),
        array_struct(2, [None, offsets], children=[child]),
    )
    with pytest.raises(ArrowInvalid):
        import_array(pair, validate="full")
    gc.collect()
    assert RELEASED.count("array") == 1


def test_validate_level_must_be_known():
    pair = capsules(schema_struct(b"l"), array_struct(1, [None, int64_buffer([1])]))
    with pytest.raises(ValueError, match="validate"):
        import_array(pair, validate="paranoid")


def test_validate_passes_good_data_through():
    import pyarrow as pa

    arr = import_array(pa.array([[1], None, [2, 3]]), validate="full")
    assert arr.to_pylist() == [[1], None, [2, 3]]
