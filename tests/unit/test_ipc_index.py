"""quiver.ipc.index: message offsets and lengths from headers only, agreeing with the
footer's Blocks and with pyarrow's writer; damage reported with its offset."""

from __future__ import annotations

import io
import itertools

import pyarrow as pa
import pytest

import quiver as qv
import quiver.ipc as ipc
from quiver import errors as E
from quiver.ipc.index import detect_format, scan_messages


def _pa_table() -> pa.Table:
    dic = pa.array(["x", "y", "x", None]).dictionary_encode()
    return pa.table({"a": pa.array([1, 2, None, 4]), "d": dic, "s": ["p", "qq", "", None]})


def _pa_stream(table: pa.Table, batches: int = 3, **kw) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema, **kw) as w:
        for _ in range(batches):
            w.write_table(table)
    return sink.getvalue()


def _pa_file(table: pa.Table, batches: int = 3) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_file(sink, table.schema) as w:
        for _ in range(batches):
            w.write_table(table)
    return sink.getvalue()


def test_stream_messages_tile_the_stream_up_to_eos():
    data = _pa_stream(_pa_table())
    infos = list(scan_messages(data))
    assert [m.kind for m in infos] == ["schema", "dictionary"] + ["record_batch"] * 3
    assert infos[0].offset == 0
    for before, after in itertools.pairwise(infos):
        assert after.offset == before.end
    assert data[infos[-1].end :] == b"\xff\xff\xff\xff\x00\x00\x00\x00"
    assert [m.num_rows for m in infos[2:]] == [4, 4, 4]
    assert infos[1].dictionary_id is not None and not infos[1].is_delta


def test_file_messages_agree_with_footer_blocks():
    data = _pa_file(_pa_table(), batches=4)
    infos = list(scan_messages(data))
    assert infos[0].offset == 8
    footer = ipc.open_file(data).footer
    batches = [m for m in infos if m.kind == "record_batch"]
    dicts = [m for m in infos if m.kind == "dictionary"]
    assert [(m.offset, m.metadata_length, m.body_length) for m in batches] == [
        (b.offset, b.meta_data_length, b.body_length) for b in footer.record_batches
    ]
    assert [(m.offset, m.metadata_length, m.body_length) for m in dicts] == [
        (b.offset, b.meta_data_length, b.body_length) for b in footer.dictionaries
    ]


def test_bodies_are_never_read():
    data = _pa_stream(_pa_table(), batches=5)
    infos = list(scan_messages(data))
    bodies = {range(m.body_offset, m.end) for m in infos if m.body_length}
    touched: list[tuple[int, int]] = []

    def read_at(offset: int, n: int) -> memoryview:
        touched.append((offset, n))
        return memoryview(data)[offset : offset + n]

    assert [m.offset for m in scan_messages(read_at, len(data))] == [m.offset for m in infos]
    for offset, n in touched:
        for body in bodies:
            assert offset + n <= body.start or offset >= body.stop


def test_compression_is_reported():
    data = _pa_stream(_pa_table(), options=pa.ipc.IpcWriteOptions(compression="zstd"))
    kinds = {(m.kind, m.compression) for m in scan_messages(data)}
    assert ("record_batch", "zstd") in kinds


def test_legacy_stream_without_continuation_markers():
    sink = io.BytesIO()
    opts = pa.ipc.IpcWriteOptions(use_legacy_format=True)
    with pa.ipc.new_stream(sink, _pa_table().schema, options=opts) as w:
        w.write_table(_pa_table())
    infos = list(scan_messages(sink.getvalue()))
    assert [m.kind for m in infos] == ["schema", "dictionary", "record_batch"]
    assert infos[1].offset == infos[0].end


def test_truncated_body_names_offset_and_message():
    data = _pa_stream(_pa_table())
    infos = list(scan_messages(data))
    cut = infos[3].body_offset + 3
    with pytest.raises(E.TruncatedError, match="expected a body of") as err:
        list(scan_messages(data[:cut]))
    assert err.value.offset == infos[3].body_offset
    assert err.value.message_index == 3


def test_negative_length_is_a_framing_error():
    data = bytearray(_pa_stream(_pa_table()))
    second = list(scan_messages(bytes(data)))[1].offset
    data[second + 4 : second + 8] = (-16).to_bytes(4, "little", signed=True)
    with pytest.raises(E.FramingError, match="non-negative metadata length"):
        list(scan_messages(bytes(data)))


def test_metadata_over_the_limit_is_refused_before_reading_it():
    data = _pa_stream(_pa_table())
    with pytest.raises(E.LimitExceeded, match="max_metadata_size"):
        list(scan_messages(data, limits=ipc.IpcLimits(max_metadata_size=64)))


def test_body_over_the_limit_is_refused():
    data = _pa_stream(_pa_table())
    with pytest.raises(E.LimitExceeded, match="max_body_size"):
        list(scan_messages(data, limits=ipc.IpcLimits(max_body_size=8)))


def test_garbage_metadata_is_a_format_error_with_offset():
    data = bytearray(_pa_stream(_pa_table()))
    infos = list(scan_messages(bytes(data)))
    start = infos[2].offset + 8
    data[start : start + 16] = b"\x7f" * 16
    with pytest.raises(E.FormatError) as err:
        list(scan_messages(bytes(data)))
    assert err.value.message_index == 2


def test_read_at_needs_a_size():
    with pytest.raises(E.ArrowInvalidArgument):
        list(scan_messages(lambda offset, n: b""))


def test_detect_format():
    batch = qv.record_batch({"a": qv.array([1])})
    sink = ipc.BufferOutputStream()
    with ipc.new_file(sink, batch.schema) as w:
        w.write_batch(batch)
    assert detect_format(sink.getvalue()) == "file"
    assert detect_format(_pa_stream(_pa_table())) == "stream"
    assert detect_format(b"PAR1\x15\x04\x15\x10") is None
    assert detect_format(b"a,b,c\n1,2,3\n") is None
    assert detect_format(b"") is None
    # before Arrow 0.15: no continuation marker, 4 + metadata length a multiple of 8
    legacy = _pa_stream(_pa_table(), options=pa.ipc.IpcWriteOptions(use_legacy_format=True))
    assert legacy[:4] != b"\xff\xff\xff\xff"
    assert detect_format(legacy) == "stream"
