"""Tests for quiver.ipc.statistics.decode: statistics read back from the file footer."""

from __future__ import annotations

import base64
import io

import numpy as np
import pyarrow as pa
import pytest
import zstandard

import quiver.ipc as ipc
from quiver import errors as E
from quiver.ipc.statistics import STATISTICS_KEY, decode_statistics
from tests.unit._statistics_helpers import (
    _footer_value,
    _many_batches_table,
    _stream_bytes,
    _write_stats,
)


def test_reader_statistics_round_trip_and_the_standard_array():
    table = pa.table({"a": pa.array(range(10)), "s": pa.array([str(i) for i in range(10)])})
    reader = ipc.open_file(_write_stats(table, 4))
    stats = reader.statistics
    assert [s.row_count for s in stats] == [4, 4, 2]
    assert [(c.min, c.max) for c in (s.columns[0] for s in stats)] == [(0, 3), (4, 7), (8, 9)]
    arrays = reader.statistics_array()
    assert len(arrays) == 3 and pa.record_batch(arrays[1]).to_pylist()[1]["column"] == 0


def test_corrupt_statistics_value_is_a_format_error():
    with pytest.raises(E.FormatError):
        decode_statistics("not base64 at all!")
    with pytest.raises(E.FormatError):
        decode_statistics(base64.b64encode(b"\xff\xff\xff\xff\x10\x00\x00\x00junk").decode())


def test_a_foreign_statistics_value_is_a_format_error_on_every_reader_path():
    sink = io.BytesIO()
    table = pa.table({"a": [1, 2]})
    with pa.ipc.new_file(sink, table.schema,
                         metadata={STATISTICS_KEY: "not base64!"}) as writer:
        writer.write_table(table)
    reader = ipc.open_file(sink.getvalue())
    with pytest.raises(E.FormatError, match="base64"):
        reader.statistics  # noqa: B018 - the property decodes
    with pytest.raises(E.FormatError, match="base64"):
        reader.statistics_array()


def _message_by_message(value, monkeypatch):
    from quiver.ipc.statistics import decode as S

    with monkeypatch.context() as m:
        m.setattr(S, "_bulk_columns", lambda stream, columns=None: None)
        return decode_statistics(value)


def _same_statistics(a, b) -> None:
    assert list(a) == list(b)
    for name in ("row_counts", "indices"):
        assert getattr(a, name).tolist() == getattr(b, name).tolist()
    for name in ("null_counts", "nan_counts", "min_exact", "max_exact", "has_bounds"):
        assert [x.tolist() for x in getattr(a, name)] == [x.tolist() for x in getattr(b, name)]
    for name in ("mins", "maxs"):
        for x, y in zip(getattr(a, name), getattr(b, name)):
            assert (x is None) == (y is None)
            if x is not None:
                assert x.equals(y)


def test_bulk_and_message_by_message_decoding_agree(monkeypatch):
    from quiver.ipc.statistics import decode as S

    value = _footer_value(_write_stats(_many_batches_table(), 1))
    assert S._bulk_columns(S.statistics_stream(value)) is not None  # the bulk path reads it
    bulk = decode_statistics(value)
    assert len(bulk) == 120 and bulk.indices.tolist() == list(range(120))
    _same_statistics(bulk, _message_by_message(value, monkeypatch))


def test_damaged_statistics_decode_the_same_on_both_paths_or_raise_format_errors(
        monkeypatch):
    rng = np.random.default_rng(5)
    stream = bytearray(_stream_bytes(_footer_value(_write_stats(_many_batches_table()[:40], 1))))
    for _ in range(150):
        damaged = bytearray(stream)
        for at in rng.integers(0, len(damaged), rng.integers(1, 4)):
            damaged[at] = int(rng.integers(0, 256))
        value = base64.b64encode(bytes(damaged))
        outcomes = []
        for decode in (decode_statistics, lambda v: _message_by_message(v, monkeypatch)):
            try:
                outcomes.append(decode(value))
            except E.ArrowError as exc:
                outcomes.append(type(exc))
        bulk, general = outcomes
        if isinstance(general, type):
            assert bulk is general
        else:
            assert not isinstance(bulk, type)
            _same_statistics(bulk, general)


def test_the_value_is_one_zstd_frame_much_smaller_than_its_stream_and_plain_streams_read_too():
    value = _footer_value(_write_stats(_many_batches_table(), 1))
    stream = _stream_bytes(value)  # base64, then one zstd frame stating its content size
    assert len(value) * 5 < len(base64.b64encode(stream))
    plain = decode_statistics(base64.b64encode(stream))  # the stream itself, uncompressed
    _same_statistics(decode_statistics(value), plain)
    assert len(plain) == 120


def _zstd_value(payload: bytes, **kw) -> bytes:
    return base64.b64encode(zstandard.ZstdCompressor(**kw).compress(payload))


def test_zstd_values_that_hide_their_size_or_claim_too_much_are_refused():
    stream = _stream_bytes(_footer_value(_write_stats(_many_batches_table()[:10], 1)))
    with pytest.raises(E.FormatError, match="stating its content size"):
        decode_statistics(_zstd_value(stream, write_content_size=False))
    with pytest.raises(E.LimitExceeded, match=f"at most 1000 bytes.*claiming {len(stream)}"):
        decode_statistics(_zstd_value(stream), max_size=1000)
    # 8 MB of zeros in a small frame (a ratio past the one-shot bound): read in pieces,
    # then refused as a stream; under a 1 MB limit refused before reading
    big = zstandard.ZstdCompressor(level=1).compress(b"\0" * (8 << 20))
    assert len(big) < 4096
    with pytest.raises(E.ArrowError):
        decode_statistics(base64.b64encode(big))
    with pytest.raises(E.LimitExceeded):
        decode_statistics(base64.b64encode(big), max_size=1 << 20)


def test_damaged_zstd_values_raise_quiver_errors():
    rng = np.random.default_rng(11)
    raw = bytearray(base64.b64decode(_footer_value(_write_stats(_many_batches_table()[:40], 1))))
    errors: list[Exception] = []
    for _ in range(100):
        damaged = bytearray(raw)
        for at in rng.integers(4, len(damaged), rng.integers(1, 4)):
            damaged[at] = int(rng.integers(0, 256))
        try:
            found = decode_statistics(base64.b64encode(bytes(damaged)))
        except E.ArrowError as exc:  # any other exception type fails the test
            errors.append(exc)
        else:
            assert len(found) == 40  # damage zstd's checks and the stream's let through
    assert len(errors) > 50


def _statistics_batch(min_child: int) -> pa.RecordBatch:
    """A statistics batch of a one-column file whose minimum is in union child
    ``min_child`` (0: int64, 1: float64)."""
    names = pa.array(["ARROW:row_count:exact", "ARROW:null_count:exact",
                      "ARROW:min_value:exact", "ARROW:max_value:exact"])
    keys = pa.DictionaryArray.from_arrays(pa.array([0, 1, 2, 3], pa.int32()), names)
    ints, floats = pa.array([5, 0, 1, 4], pa.int64()), pa.array([1.0])
    types = pa.array([0, 0, min_child, 0], pa.int8())
    offsets = pa.array([0, 1, 0 if min_child else 2, 3], pa.int32())
    values = pa.UnionArray.from_dense(types, offsets, [ints, floats])
    stats = pa.MapArray.from_arrays(pa.array([0, 1, 4], pa.int32()), keys, values)
    return pa.record_batch({"column": pa.array([None, 0], pa.int32()), "statistics": stats})


def test_bounds_of_one_column_in_two_union_children_are_refused(monkeypatch):
    first, second = _statistics_batch(0), _statistics_batch(1)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, first.schema) as writer:
        writer.write_batch(first)
        writer.write_batch(second.cast(first.schema))
    value = base64.b64encode(sink.getvalue().to_pybytes())
    for decode in (decode_statistics, lambda v: _message_by_message(v, monkeypatch)):
        with pytest.raises(E.FormatError, match="column 0's bounds in one union child"):
            decode(value)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, first.schema) as writer:
        writer.write_batch(first)
        writer.write_batch(first)
    assert [b.columns[0].min for b in decode_statistics(
        base64.b64encode(sink.getvalue().to_pybytes()))] == [1, 1]


def test_statistics_of_some_columns_are_those_columns_statistics():
    value = _footer_value(_write_stats(_many_batches_table(), 7))
    whole = decode_statistics(value)
    ncols = len(whole.null_counts)
    for wanted in ({0}, {4, 5}, {ncols - 1}, {1, 2, 3, 9}, set()):
        some = decode_statistics(value, columns=wanted)
        assert some.row_counts.tolist() == whole.row_counts.tolist()
        assert some.indices.tolist() == whole.indices.tolist()
        assert len(some.null_counts) == ncols
        for c in range(ncols):
            if c not in wanted:  # not decoded: nothing known
                assert some.mins[c] is None and not some.null_counts[c].any()
                continue
            for name in ("null_counts", "nan_counts", "min_exact", "max_exact",
                         "has_bounds"):
                assert getattr(some, name)[c].tolist() == getattr(whole, name)[c].tolist()
            for side in ("mins", "maxs"):
                x, y = getattr(some, side)[c], getattr(whole, side)[c]
                assert (x is None) == (y is None) and (x is None or x.equals(y))


def test_any_zeroed_byte_decodes_some_columns_or_raises_quivers_error():
    import quiver as qv

    schema = qv.schema([("a", qv.int64())])
    sink = io.BytesIO()
    with ipc.new_file(sink, schema, statistics=True) as writer:
        writer.write_batch(qv.record_batch({"a": [1, 2, 3]}, schema=schema))
    stream = _stream_bytes(_footer_value(sink.getvalue()))
    outcomes = set()
    for at in range(len(stream)):  # (zeroing the column's null count once divided by 0)
        damaged = bytearray(stream)
        damaged[at] = 0
        for columns in ({0}, {1}, set()):
            try:
                found = decode_statistics(base64.b64encode(bytes(damaged)), columns=columns)
            except E.ArrowError:
                outcomes.add("refused")
            else:
                outcomes.add("decoded" if len(found) == 1 else len(found))
    assert outcomes == {"decoded", "refused"}  # anything else raised would fail the test


def test_bounds_of_another_type_than_the_files_column_are_not_used():
    from quiver.ipc.statistics import statistics_for_skipping

    strings = _footer_value(_write_stats(pa.table({"a": ["x", "y"]}), 1))
    numbers = ipc.open_file(_write_stats(pa.table({"a": [1, 2]}), 1)).schema
    stats, why = statistics_for_skipping(strings, numbers, 2)
    assert stats is None and "bounds of column 0 ('a') of type int64, found string" in why
    stats, why = statistics_for_skipping(strings, numbers, 2, columns=set())
    assert stats is not None and why is None  # (no column asked for: nothing to check)
    two = ipc.open_file(_write_stats(pa.table({"a": [1, 2], "b": [3, 4]}), 1)).schema
    stats, why = statistics_for_skipping(strings, two, 2)
    assert stats is None and "the file's 2 columns, found 1" in why


def test_template_groups_read_back_every_digit_count_and_refuse_other_rows():
    # indices of 1 to 9 digits put the digits (and their count) at other bytes; each
    # group of one message size must tell its rows apart and read all their numbers
    from quiver.ipc import metadata as md
    from quiver.ipc.statistics.templates import TemplateGroup, template_for

    rng = np.random.default_rng(7)
    num_nodes, num_buffers = 12, 30
    by_size: dict[int, list] = {}
    for digits in range(1, 10):
        tm = template_for(md.V5, num_nodes, num_buffers, digits)
        by_size.setdefault(tm.size, []).append(tm)
    assert len(by_size) > 1  # (several groups, one with digits at two places)
    for templates in by_size.values():
        group = TemplateGroup(templates)
        rows, want = [], []
        for tm in templates:
            m = 6
            indices = rng.integers(10 ** (tm.digits - 1), 10 ** tm.digits, m)
            body = rng.integers(0, 1 << 40, m) * 8
            nodes = rng.integers(0, 1 << 40, (m, num_nodes, 2))
            buffers = rng.integers(0, 1 << 40, (m, num_buffers, 2))
            raw = tm.encode(body, 7, nodes, buffers, indices)
            rows.append(raw.view(np.int64))
            want.append((body, nodes, buffers, indices))
        order = rng.permutation(sum(len(r) for r in rows))
        matrix = np.concatenate(rows)[order]
        body_lengths, lengths, nodes, buffers, indices = group.decode(matrix)
        for found, expected in zip((body_lengths, nodes, buffers, indices),
                                   (np.concatenate(w)[order] for w in zip(*want))):
            assert np.array_equal(found, expected)
        assert (lengths == 7).all()
        # a digit that is not one, a digit count no template has, a changed fixed byte
        first = templates[-1]
        for at in (first.value_at, first.value_at - 4, 8):
            damaged = matrix.copy()
            damaged.view(np.uint8).reshape(len(matrix), -1)[3, at] ^= 0x40
            assert group.decode(damaged) is None


def test_a_template_group_reads_messages_in_order_by_one_comparison_and_others_too():
    from quiver.ipc import metadata as md
    from quiver.ipc.statistics.templates import TemplateGroup, template_for

    num_nodes, num_buffers, m = 12, 30, 1_200  # indices of 1 to 4 digits
    templates = [template_for(md.V5, num_nodes, num_buffers, d) for d in range(1, 8)]
    assert len({tm.size for tm in templates}) == 1
    rng = np.random.default_rng(3)
    body = rng.integers(0, 1 << 30, m) * 8
    nodes = rng.integers(0, 1 << 40, (m, num_nodes, 2))
    buffers = rng.integers(0, 1 << 40, (m, num_buffers, 2))
    index = np.arange(m)
    digits = np.array([len(str(i)) for i in index])
    matrix = np.zeros((m, templates[0].size // 8), np.int64)
    for tm in templates[:4]:
        rows = digits == tm.digits
        matrix[rows] = tm.encode(body[rows], 9, nodes[rows], buffers[rows],
                                 index[rows]).view(np.int64)
    group = TemplateGroup(templates)
    own = matrix[:, group.own]
    assert np.array_equal(group.in_order(m), own)  # the one comparison
    assert np.array_equal(group.in_order(m - 700), own[: m - 700])  # (kept, sliced)
    for order in (np.arange(m), rng.permutation(m), np.arange(m)[::-1]):
        found = group.decode(matrix[order])
        assert np.array_equal(found[4], index[order])
        assert np.array_equal(found[0], body[order]) and np.array_equal(found[3],
                                                                        buffers[order])
    skipped = np.delete(np.arange(m), 17)  # not in order: read message by message
    assert np.array_equal(group.decode(matrix[skipped])[4], skipped)
    damaged = matrix.copy()
    damaged.view(np.uint8).reshape(m, -1)[500, templates[2].value_at + 1] = ord("x")
    assert group.decode(damaged) is None


def test_buffer_offsets_and_lengths_that_overflow_when_added_are_refused_by_the_bulk_path():
    # offset 8 and length 2**63 - 1 wrap below zero when added: each must be compared with
    # the body on its own, or the bulk path gathers what the lengths merely claim
    import struct
    import tracemalloc

    from quiver.ipc.framing import read_frame
    from quiver.ipc.statistics import decode as S

    stream = _stream_bytes(_footer_value(_write_stats(_many_batches_table(), 1)))
    meta, schema_end, _ = read_frame(stream, 0)
    size, group = min(S._stream_plan(stream, bytes(meta), schema_end)[5].items())
    tm = group.first
    words = np.frombuffer(stream, "<i8")
    prefix = struct.unpack("<q", struct.pack("<Ii", 0xFFFFFFFF, size - 8))[0]
    first = int(np.flatnonzero(words == prefix)[0])
    message = words[first : first + size // 8].copy()
    body, count = 65536, 40
    rows = body // 4 - 4
    message[tm.length_at] = rows
    message[tm.nodes_at : tm.nodes_at + 2 * tm.num_nodes] = 0
    message[tm.nodes_at] = message[tm.nodes_at + 2] = rows
    buffers = message[tm.buffers_at : tm.buffers_at + 2 * tm.num_buffers]
    buffers[:] = 0
    buffers[2:4] = buffers[6:8] = (8, 2**63 - 1)
    parts = [stream[: first * 8]]
    for k in range(count):  # all but the last without a body: they read the ones after
        message[tm.body_at] = body if k == count - 1 else 0
        parts.append(message.tobytes())
    crafted = b"".join([*parts, b"\0" * body, b"\xff\xff\xff\xff\0\0\0\0"])
    tracemalloc.start()
    try:
        assert S._bulk_columns(crafted) is None
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * len(crafted)  # (it gathered count x rows x 4 bytes, 10 MB, before)
    with pytest.raises(E.ArrowError):
        decode_statistics(base64.b64encode(crafted))


def test_windows_are_rows_of_the_flat_array_and_never_reach_outside_it():
    from quiver.ipc.statistics.templates import windows

    flat = np.arange(10, dtype=np.int64)
    assert windows(flat, np.array([0, 3, 7]), 3).tolist() == [[0, 1, 2], [3, 4, 5],
                                                               [7, 8, 9]]
    assert windows(flat, np.array([], np.int64), 4).shape == (0, 4)
    for starts, width in (([8], 3), ([-1], 3), ([0], 11)):
        with pytest.raises(IndexError):
            windows(flat, np.array(starts), width)


def test_a_template_group_of_other_digit_counts_has_no_order_from_zero():
    from quiver.ipc import metadata as md
    from quiver.ipc.statistics.templates import TemplateGroup, template_for

    wide = [template_for(md.V5, 12, 30, d) for d in (8, 9)]  # indices from 10,000,000 on
    assert len({tm.size for tm in wide}) == 1
    assert TemplateGroup(wide).in_order(5) is None
