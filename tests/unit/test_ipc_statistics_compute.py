"""Tests for quiver.ipc.statistics.compute: per-batch statistics, equal to pyarrow.compute's."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import quiver.ipc as ipc
from quiver import errors as E
from quiver import types as qt
from quiver.array import make_array
from quiver.interop import import_batch
from quiver.ipc.statistics import PREFIX_BYTES, batch_statistics
from quiver.ipc.statistics import compute as C
from tests.unit._statistics_helpers import COLUMNS


def _expected(column: pa.Array):
    if pa.types.is_floating(column.type):
        finite = pc.filter(column, pc.invert(pc.is_nan(column)))
        mm = pc.min_max(finite)
    elif pa.types.is_duration(column.type):  # no min_max kernel: through int64
        mm = pc.min_max(column.cast(pa.int64()))
        unit = column.type.unit
        as_py = [None if v.as_py() is None else pa.scalar(v.as_py(), pa.duration(unit)).as_py()
                 for v in (mm["min"], mm["max"])]
        return tuple(as_py)
    else:
        mm = pc.min_max(column)
    return mm["min"].as_py(), mm["max"].as_py()


@pytest.mark.parametrize("name", sorted(COLUMNS))
@pytest.mark.parametrize("window", [(0, 5), (1, 3)], ids=["whole", "sliced"])
def test_statistics_equal_pyarrow_compute(name, window):
    column = COLUMNS[name].slice(*window)
    batch = import_batch(pa.record_batch({name: column}))
    (stats,) = batch_statistics(batch, 0).columns
    assert stats.null_count == column.null_count
    low, high = _expected(column)
    if low is None:
        assert not stats.has_bounds
    else:
        assert stats.has_bounds and (stats.min, stats.max) == (low, high)
        assert stats.min_exact and stats.max_exact
    if pa.types.is_floating(column.type):
        assert stats.nan_count == int(pc.sum(pc.is_nan(column).cast(pa.int64())).as_py() or 0)


def test_empty_and_all_null_batches_have_no_bounds():
    empty = import_batch(pa.record_batch({"a": pa.array([], pa.int64())}))
    assert batch_statistics(empty, 0).columns[0].has_bounds is False
    nulls = import_batch(pa.record_batch({"a": pa.nulls(4, pa.string())}))
    (stats,) = batch_statistics(nulls, 0).columns
    assert stats.null_count == 4 and not stats.has_bounds


def test_long_strings_are_cut_and_marked_approximate():
    long_low = "a" * 200
    long_high = "\u00ff" * 100
    batch = import_batch(pa.record_batch({"s": pa.array([long_low, "m", long_high])}))
    (stats,) = batch_statistics(batch, 0).columns
    assert not stats.min_exact and not stats.max_exact
    assert len(stats.min.encode()) <= PREFIX_BYTES and long_low.startswith(stats.min)
    assert len(stats.max.encode()) <= PREFIX_BYTES and stats.max > long_high


def test_dictionary_columns_give_the_dictionary_range_approximately():
    column = pa.DictionaryArray.from_arrays(pa.array([1, 1, None], pa.int8()),
                                            pa.array(["q", "b", "z"]))
    (stats,) = batch_statistics(import_batch(pa.record_batch({"d": column})), 0).columns
    assert (stats.min, stats.max, stats.null_count) == ("b", "z", 1)
    assert not stats.min_exact and not stats.max_exact


def test_a_batch_whose_statistics_fail_is_refused_before_it_is_written():
    import quiver as qv
    from quiver import types as t
    from quiver.array import make_array
    from quiver.batch import RecordBatch

    good = qv.record_batch({"s": qv.array(["a", "b"])})
    offsets = np.array([0, 5, 1], "<i4").view(np.uint8)  # decreasing: no bounds to take
    bad = RecordBatch(good.schema, [make_array(
        t.string(), 2, [None, offsets, np.frombuffer(b"abcdef", np.uint8)], (), 0)])
    sink = ipc.BufferOutputStream()
    with ipc.new_file(sink, good.schema, statistics=True) as writer:
        writer.write_batch(good)
        with pytest.raises(E.ArrowInvalid, match="do not decrease"):
            writer.write_batch(bad)
        writer.write_batch(good)
    reader = ipc.open_file(sink.getvalue())
    assert reader.num_record_batches == 2
    assert [s.row_count for s in reader.statistics] == [2, 2]


@pytest.mark.parametrize("kind", ["string", "binary", "large_string"])
def test_string_bounds_in_chunks_equal_those_in_one_piece(kind, monkeypatch):
    from quiver.ipc.statistics import compute as C

    rng = np.random.default_rng(3)
    long = "p" * (PREFIX_BYTES + 3)
    pool = ["", "a", "ab", "zz", long, long + "x", "p" * PREFIX_BYTES, "é" * 40, "\U0010ffff" * 20]
    ties = [[long, "p" * PREFIX_BYTES], ["p" * PREFIX_BYTES, None, long],
            [long + "x", long], [None, "\U0010ffff" * 20, "zz"],
            [long, "p" * (PREFIX_BYTES - 1) + "q"]]  # a rounded-up max equal to an exact one
    for trial in range(60 + len(ties)):
        n = int(rng.integers(1, 40))
        values = ties[trial - 60] if trial >= 60 else [
            None if rng.random() < 0.2 else pool[int(rng.integers(len(pool)))]
            for _ in range(n)]
        if kind == "binary":
            top = b"\xff" * (PREFIX_BYTES + 1)
            values = [v if v is None else (top if v == "zz" and trial % 3 == 0 else v.encode())
                      for v in values]
        column = pa.array(values, getattr(pa, kind)())
        arr = import_batch(pa.record_batch({"c": column})).column(0)
        found = {}
        for chunk in (1 << 20, 1, 3, 7):
            monkeypatch.setattr(C, "BINARY_CHUNK", chunk)
            found[chunk] = C.column_raw(arr)
        assert found[1] == found[3] == found[7] == found[1 << 20], values


# -- string and binary bounds against a plain-Python reference ----------------------------


def _reference_round_up(prefix: bytes, is_text: bool) -> bytes | None:
    """The smallest value above every value starting with ``prefix``, worked out char by
    char (text) or byte by byte."""
    if is_text:
        chars = list(prefix.decode("utf-8", errors="ignore"))
        while chars and (chars[-1] == "\U0010ffff" or chars[-1] == "\ud7ff"):
            chars.pop()
        if not chars:
            return None
        chars[-1] = chr(ord(chars[-1]) + 1)
        return "".join(chars).encode()
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        return None
    return stripped[:-1] + bytes([stripped[-1] + 1])


def _reference_raw(values: list[bytes | None], is_text: bool) -> tuple:
    """column_raw's answer by sorting the values as bytes: bounds cut to PREFIX_BYTES, an
    inexact maximum rounded up, an inexact text minimum cut at a whole character."""
    nulls = sum(v is None for v in values)
    present = sorted(v for v in values if v is not None)
    if not present:
        return (nulls, 0, None, None, True, True)
    low, high = present[0], present[-1]
    low_cut, high_cut = len(low) > PREFIX_BYTES, len(high) > PREFIX_BYTES
    low_value, high_value = low[:PREFIX_BYTES], high
    if high_cut:
        high_value = _reference_round_up(high[:PREFIX_BYTES], is_text)
        if high_value is None:
            return (nulls, 0, None, None, True, True)
    if is_text and (low_cut or high_cut):
        low_value = low_value.decode("utf-8", errors="ignore").encode()
    return (nulls, 0, low_value, high_value, not low_cut, not high_cut)


def _column(values: list[bytes | None], *, text: bool, large: bool, lead: int = 0,
            trail: int = 0, room: int = 0, misalign: int = 0):
    """A string or binary array of ``values`` built by hand: a slice of a longer array
    (``lead``/``trail`` values around it), whose nulls hold bytes, whose data buffer ends
    ``room`` bytes after the last value and starts ``misalign`` bytes past an 8-aligned
    address."""
    around = [b"junk", None, b"\xff" * 70]
    full = [around[i % 3] for i in range(lead)] + list(values) + [b"zz"] * trail
    stored = [b"null" if v is None else v for v in full]  # nulls with bytes in them
    offsets = np.zeros(len(full) + 1, np.int64 if large else np.int32)
    np.cumsum([len(v) for v in stored], out=offsets[1:])
    data = b"".join(stored)
    backing = np.zeros(misalign + len(data) + room + 8, np.uint8)  # numpy aligns to 16
    buffer = backing[misalign : misalign + len(data) + room]
    buffer[: len(data)] = np.frombuffer(data, np.uint8)
    valid = np.array([v is not None for v in full], dtype=bool)
    bitmap = np.packbits(valid, bitorder="little")
    kind = (qt.large_string() if large else qt.string()) if text else (
        qt.large_binary() if large else qt.binary())
    arr = make_array(kind, len(full), [bitmap, offsets.view(np.uint8), buffer], (),
                     int(np.count_nonzero(~valid)))
    return arr.slice(lead, len(values))


_LONG = [b"", b"p" * 60, b"p" * 64, b"p" * 65, b"\xff" * 64, b"\xff" * 63 + b"\xfe",
         "\U0010ffff".encode() * 16, "é".encode() * 31 + b"p", b"\x00" * 8]
_small_alphabet = st.lists(st.sampled_from([0, 1, 0x61, 0x62, 0xC3, 0xA9, 0xFE, 0xFF]),
                           max_size=12).map(bytes)
_bytes_values = st.one_of(
    st.binary(max_size=80),
    _small_alphabet,
    st.builds(bytes.__add__, st.sampled_from(_LONG), _small_alphabet),
    st.text(st.sampled_from("ab\x00é\u07ff\ud7ff\ue000\U0010ffff"), max_size=30).map(
        lambda s: s.encode("utf-8", errors="surrogatepass")),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=st.lists(st.one_of(st.none(), _bytes_values), max_size=40),
       text=st.booleans(), large=st.booleans(), lead=st.integers(0, 3),
       trail=st.integers(0, 2), room=st.sampled_from([0, 1, 7, 8, 15, 16, 64]),
       misalign=st.integers(0, 7), chunk=st.sampled_from([1, 3, 7, C.BINARY_CHUNK]),
       few=st.sampled_from([0, C._FEW_ROWS]))
def test_string_bounds_equal_a_sorted_reference(values, text, large, lead, trail, room,
                                                misalign, chunk, few):
    if text:  # a string column holds UTF-8: keep the values that are
        values = [v if v is None or _is_utf8(v) else v.decode("latin-1").encode()
                  for v in values]
    arr = _column(values, text=text, large=large, lead=lead, trail=trail, room=room,
                  misalign=misalign)
    # few=0: every read through the aligned words, as a long column's are
    with mock.patch.object(C, "BINARY_CHUNK", chunk), mock.patch.object(C, "_FEW_ROWS", few):
        found = C.column_raw(arr)
    assert found == _reference_raw(values, text), values


def _is_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@pytest.mark.parametrize("text", [True, False])
def test_string_bounds_of_long_columns_in_many_chunks(text):
    rng = np.random.default_rng(7)
    pool = [b"", b"a", b"a\x00", b"a\x00\x00", b"value-7", b"value-70", b"p" * 70,
            b"p" * 64 + b"\x00", "é".encode() * 40, b"https://example.com/" + b"x" * 40]
    picks = rng.integers(len(pool), size=3 * C.BINARY_CHUNK + 11)
    values = [None if k % 11 == 0 else pool[k % len(pool)] for k in picks]
    for room, misalign, lead in ((0, 0, 0), (3, 5, 2), (64, 1, 1)):
        arr = _column(values, text=text, large=bool(misalign % 2), lead=lead, room=room,
                      misalign=misalign)
        assert C.column_raw(arr) == _reference_raw(values, text)


@pytest.mark.parametrize("short", [0.002, 0.02, 0.3], ids=["rare", "few", "many"])
@pytest.mark.parametrize("few", [0, 64, 100_000])
def test_string_bounds_of_shared_prefixes_past_many_words(short, few):
    # ties on the first words over many rows, values ending in every word: each way of
    # zeroing the bytes past the values' ends (a few rows, some, many; NUL bytes too)
    rng = np.random.default_rng(11)
    n = 3000
    prefix = b"https://example.com/\x00ab"
    letters = np.frombuffer(b"\x00\x01xyz\xff", np.uint8)
    sizes = np.where(rng.random(n) < short, rng.integers(0, 30, n), rng.integers(30, 60, n))
    values = [prefix[: int(k)] if k < len(prefix) else
              prefix + bytes(letters[rng.integers(len(letters), size=int(k) - len(prefix))])
              for k in sizes]
    for text, misalign, room in ((False, 0, 0), (False, 5, 1), (True, 0, 64)):
        vals = [v.replace(b"\xff", b"~") for v in values] if text else values
        arr = _column(vals, text=text, large=False, room=room, misalign=misalign)
        with mock.patch.object(C, "_FEW_ROWS", few):
            assert C.column_raw(arr) == _reference_raw(vals, text)


@pytest.mark.parametrize("values", [
    [b"a", b"a\x00"], [b"a\x00", b"a"], [b"", b"\x00"], [b"\x00" * 9, b"\x00" * 8],
    [b"x" * 64, b"x" * 64 + b"\x00"], [b"y" * 70] * 5, [b"same"] * 9, [b""] * 4,
    [b"q" * 65 + b"a", b"q" * 65 + b"b", b"q" * 64], [b"\xff" * 65, b"\xff" * 64],
    [b"value-7", b"value-70", b"value-8"], [b"p" * 15 + b"\x01", b"p" * 15, b"p" * 16 + b"a"],
    [b"abcdefgh"] * 40 + [b"abcdefgh" + b"\x00" * 8 + b"\x01"] * 40,  # ties past an end
])
@pytest.mark.parametrize("room", [0, 9])
@pytest.mark.parametrize("few", [0, 100_000])
def test_string_bounds_with_nul_bytes_ties_and_empty_values(values, room, few):
    for text in (True, False):
        for misalign in (0, 3):
            arr = _column(values, text=text, large=False, room=room, misalign=misalign)
            with mock.patch.object(C, "_FEW_ROWS", few):
                assert C.column_raw(arr) == _reference_raw(values, text)


@pytest.mark.parametrize("large", [False, True])
@pytest.mark.parametrize("offsets", [[0, 3, 11], [-1, 2, 3], [0, 4, 2], [2, 1, 3],
                                     [0, 2**31 - 1, -2, 5]])  # a fall int32 differences hide
def test_string_offsets_outside_the_data_are_refused(large, offsets):
    data = np.frombuffer(b"abcdefghij", np.uint8)  # 10 bytes
    raw = np.array(offsets, np.int64 if large else np.int32).view(np.uint8)
    kind = qt.large_string() if large else qt.string()
    n = len(offsets) - 1
    for arr in (make_array(kind, n, [None, raw, data], (), 0),
                make_array(kind, n + 1, [None, np.concatenate([raw[:8 if large else 4], raw]),
                                         data], (), 0).slice(1, n)):
        with pytest.raises(E.ArrowInvalid, match="do not decrease"):
            C.column_raw(arr)


# -- union slots outside their children (a review's fuzzing found ~110 such inputs) --------


def _dense_union(offsets: list[int], codes: list[int] | None = None) -> pa.Array:
    return pa.UnionArray.from_dense(pa.array(codes or [0, 1, 0], pa.int8()),
                                    pa.array([0, 0, 1], pa.int32()),
                                    [pa.array([5, 6], pa.int64()), pa.array(["a"])])


def _with_offsets(arr, offsets: list[int], children=None):
    """A quiver dense union like ``arr`` with other offsets (and children)."""
    raw = np.array(offsets, np.int32).view(np.uint8)
    return make_array(arr.type, len(arr), [arr.buffers[0], raw],
                      arr.children if children is None else children, 0, 0)


def _batch(column) -> object:
    from quiver.batch import RecordBatch

    return RecordBatch(qt.schema([qt.field("u", column.type)]), [column], len(column))


@pytest.mark.parametrize("bad", [[0, 0, 7], [0, 0, -1], [0, 1, 1], [-2**31, 0, 1],
                                 [0, 0, 2]])
def test_dense_union_offsets_outside_the_child_are_refused_not_an_index_error(bad):
    good = import_batch(pa.record_batch({"u": _dense_union([0, 0, 1])})).column(0)
    batch = _batch(_with_offsets(good, bad))
    with pytest.raises(E.ArrowInvalid, match="dense union offset out of range"):
        batch_statistics(batch, 0)
    # the writer (statistics on) refuses it with the column's name, before writing it
    sink = ipc.BufferOutputStream()
    with pytest.raises(E.ArrowInvalid, match="dense union offset") as info:
        ipc.new_file(sink, batch.schema, statistics=True).write_batch(batch)
    assert info.value.field_path == "u"


@pytest.mark.parametrize("where", ["union", "dictionary"])
def test_union_offsets_inside_a_nested_union_or_a_dictionary_are_checked(where):
    good = import_batch(pa.record_batch({"u": _dense_union([0, 0, 1])})).column(0)
    bad = _with_offsets(good, [0, 0, 9])
    if where == "union":
        outer = pa.UnionArray.from_dense(pa.array([0, 0, 0], pa.int8()),
                                         pa.array([0, 1, 2], pa.int32()),
                                         [_dense_union([0, 0, 1])], ["in"])
        outer = import_batch(pa.record_batch({"u": outer})).column(0)
        column, path = _with_offsets(outer, [0, 1, 2], [bad]), "u.in"
    else:
        column = qt.DictionaryType(qt.int8(), good.type)
        column = make_array(column, 2, [None, np.array([0, 2], np.int8).view(np.uint8)],
                            (), 0, 0, bad)
        path = "u.<dictionary>"
    sink = ipc.BufferOutputStream()
    with pytest.raises(E.ArrowInvalid, match="dense union offset") as info:
        ipc.new_file(sink, _batch(column).schema, statistics=True).write_batch(_batch(column))
    assert info.value.field_path == path


def test_valid_unions_keep_their_logical_null_counts():
    column = pa.UnionArray.from_dense(pa.array([0, 1, 0, 1], pa.int8()),
                                      pa.array([0, 0, 1, 1], pa.int32()),
                                      [pa.array([5, None], pa.int64()), pa.array(["a", None])])
    batch = import_batch(pa.record_batch({"u": column}))
    assert batch_statistics(batch, 0).columns[0].null_count == 2
