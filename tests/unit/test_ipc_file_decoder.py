"""quiver.ipc.file_decoder: the sans-IO FileDecoder reads what the file reader reads, from
bytes its caller hands over, and names the block and offset of every problem."""

from __future__ import annotations

import dataclasses
import struct

import pytest

import quiver as qv
import quiver.ipc as ipc
from quiver import errors as E
from quiver.ipc.file_decoder import MIN_FILE_SIZE, TRAILER_SIZE, FileDecoder
from quiver.ipc.metadata import Block
from tests.conftest import INTEGRATION, require_shared
from tests.unit._ipc_helpers import TABLE, _stream


def _file(batches: int = 3, **kw) -> bytes:
    sink = ipc.BufferOutputStream()
    batch = qv.record_batch({"a": qv.array([1, 2, None]), "s": qv.array(["x", None, "zz"])})
    with ipc.new_file(sink, batch.schema, **kw) as w:
        for _ in range(batches):
            w.write_batch(batch)
    return bytes(sink.getvalue())


def _decode_all(data: bytes, **kw) -> tuple[FileDecoder, list]:
    """Every batch, reading only the ranges the decoder names (as an I/O loop would)."""
    reads: list[tuple[int, int]] = []

    def read_at(offset: int, n: int) -> bytes:
        reads.append((offset, n))
        return data[offset : offset + n]

    dec = FileDecoder(**kw)
    dec.check_header(read_at(0, 8))
    start, length = dec.footer_range(read_at(len(data) - TRAILER_SIZE, TRAILER_SIZE), len(data))
    footer = dec.read_footer(read_at(start, length), start)
    for i, block in enumerate(footer.dictionaries):
        dec.read_dictionary(i, read_at(*dec.block_range(block, i, "dictionary")))
    out = [dec.read_record_batch(i, read_at(*dec.block_range(b, i)))
           for i, b in enumerate(footer.record_batches)]
    assert sum(n for _, n in reads) <= len(data)
    return dec, out


def _gold_files() -> list[str]:
    if not INTEGRATION.exists():
        return ["missing"]
    return sorted(str(p.relative_to(INTEGRATION)) for p in INTEGRATION.glob("*/*.arrow_file"))


@pytest.mark.parametrize("name", _gold_files())
def test_reads_every_gold_file_like_the_file_reader(name: str) -> None:
    path = require_shared(INTEGRATION / name)
    data = path.read_bytes()
    reader = ipc.open_file(data)
    dec, batches = _decode_all(data)
    assert dec.schema == reader.schema
    assert len(batches) == reader.num_record_batches
    for i, b in enumerate(batches):
        assert b.equals(reader.get_batch(i))


def test_projection_and_compression_go_through_the_options() -> None:
    data = _file(compression="zstd")
    dec, batches = _decode_all(data, columns=["s"])
    assert dec.schema.names == ["s"]
    assert [b.to_pylist() for b in batches] == [[{"s": "x"}, {"s": None}, {"s": "zz"}]] * 3


def test_the_footer_alone_needs_no_batch_loader() -> None:
    data = _file()
    dec = FileDecoder()
    start, length = dec.footer_range(data[-TRAILER_SIZE:], len(data))
    footer = dec.read_footer(data[start : start + length], start)
    assert dec._batch_loader is None  # made when a batch or the schema is asked for
    assert len(footer.record_batches) == 3 and dec.data_end == start
    assert dec.schema.names == ["a", "s"] and dec._batch_loader is not None


def test_a_stream_is_refused_with_a_hint() -> None:
    with pytest.raises(E.FramingError, match="this looks like an IPC stream"):
        FileDecoder.check_header(b"\xff\xff\xff\xff\x10\x00\x00\x00")


def test_truncated_and_short_files_name_the_offset() -> None:
    data = _file()
    dec = FileDecoder()
    with pytest.raises(E.FramingError, match="at the end") as exc:
        dec.footer_range(data[-TRAILER_SIZE - 5 : -5], len(data) - 5)
    assert exc.value.offset == len(data) - 5 - 6
    with pytest.raises(E.TruncatedError, match=f"at least {MIN_FILE_SIZE} bytes"):
        dec.footer_range(b"\x00" * TRAILER_SIZE, MIN_FILE_SIZE - 1)


@pytest.mark.parametrize("length", [0, -4, 1 << 20])
def test_footer_length_out_of_range_is_a_framing_error(length: int) -> None:
    data = _file()
    trailer = struct.pack("<i", length) + b"ARROW1"
    with pytest.raises(E.FramingError, match="expected a footer length between 1 and"):
        FileDecoder().footer_range(trailer, len(data))


def test_footer_over_the_metadata_limit_is_a_limit_error() -> None:
    data = _file()
    small = ipc.IpcLimits(max_metadata_size=64)
    opts = ipc.IpcReadOptions(limits=small)
    with pytest.raises(E.LimitExceeded, match=r"IpcLimits\.max_metadata_size"):
        FileDecoder(opts).footer_range(data[-TRAILER_SIZE:], len(data))


def test_block_outside_the_data_and_short_bytes_are_errors_naming_the_block() -> None:
    data = _file()
    dec = FileDecoder()
    start, length = dec.footer_range(data[-TRAILER_SIZE:], len(data))
    footer = dec.read_footer(data[start : start + length], start)
    block = footer.record_batches[1]
    bad = Block(block.offset, block.meta_data_length, start)
    with pytest.raises(E.FramingError, match="expected record batch block 1 inside the file"):
        dec.block_range(bad, 1)
    offset, n = dec.block_range(block, 1)
    with pytest.raises(E.TruncatedError, match="in record batch block 1") as exc:
        dec.message(data[offset : offset + n - 9], block, 1)
    assert exc.value.offset == block.offset + block.meta_data_length


def test_a_block_pointing_at_the_wrong_kind_of_message_is_a_format_error() -> None:
    data = _file()
    dec = FileDecoder()
    start, length = dec.footer_range(data[-TRAILER_SIZE:], len(data))
    footer = dec.read_footer(data[start : start + length], start)
    schema_block = Block(8, footer.record_batches[0].offset - 8, 0)  # the Schema message
    dec.footer = dataclasses.replace(footer, record_batches=(schema_block,))
    offset, n = dec.block_range(schema_block, 0)
    with pytest.raises(E.FormatError, match="expected a RecordBatch message at record batch "
                       "block 0, found SchemaMessage") as exc:
        dec.read_record_batch(0, data[offset : offset + n])
    assert exc.value.offset == 8


def test_nothing_before_the_footer() -> None:
    with pytest.raises(E.ArrowInvalidArgument, match="read_footer"):
        FileDecoder().record_batches  # noqa: B018


@pytest.mark.parametrize(
    ("length", "error", "at"),
    [(1 << 20, E.FramingError, 4), (-16, E.FramingError, 4)],
)
def test_a_bad_metadata_length_names_the_block_in_the_decoder_and_the_reader(
    length: int, error: type, at: int
) -> None:
    data = bytearray(_file())
    block = ipc.open_file(bytes(data)).footer.record_batches[1]
    data[block.offset + 4 : block.offset + 8] = struct.pack("<i", length)
    dec = FileDecoder()
    start, n = dec.footer_range(data[-TRAILER_SIZE:], len(data))
    dec.read_footer(bytes(data[start : start + n]), start)
    offset, n = dec.block_range(block, 1)
    with pytest.raises(error, match=r"metaDataLength .* of record batch block 1") as got:
        dec.read_record_batch(1, bytes(data[offset : offset + n]))
    assert got.value.offset == block.offset + at
    with pytest.raises(error, match=r"metaDataLength .* of record batch block 1") as again:
        ipc.open_file(bytes(data)).get_batch(1)
    assert str(again.value) == str(got.value)


def test_the_reader_checks_the_block_limits_through_the_decoder() -> None:
    data = _file()
    with pytest.raises(E.LimitExceeded, match=r"IpcLimits\.max_body_size\) in record batch "
                       "block 0"):
        ipc.open_file(data, limits=ipc.IpcLimits(max_body_size=8)).get_batch(0)


def test_the_reader_hints_at_the_stream_reader_and_foreign_bytes() -> None:
    with pytest.raises(E.FramingError, match=r"looks like an IPC stream: open it with "
                       r"quiver\.ipc\.open_stream"):
        FileDecoder.check_header(b"\xff\xff\xff\xff\x10\x00\x00\x00", hint_reader=True)
    with pytest.raises(E.FramingError, match="a Parquet file"):
        FileDecoder.check_header(b"PAR1\x15\x04\x15\x00", hint_reader=True)
    with pytest.raises(E.FramingError, match=r"found b'PAR1\\x15\\x04' \(at byte offset 0\)$"):
        FileDecoder.check_header(b"PAR1\x15\x04\x15\x00")


def test_stream_given_to_file_reader_is_explained() -> None:
    with pytest.raises(qv.FramingError, match="open_stream"):
        ipc.open_file(_stream(TABLE))


def test_messages_are_numbered_as_the_stream_inside_the_file_numbers_them() -> None:
    from quiver.ipc.index import scan_messages

    pa = pytest.importorskip("pyarrow")
    from quiver.interop import import_batch

    batch = import_batch(pa.record_batch({"a": [1, 2],
                                          "d": pa.array(["x", "y"]).dictionary_encode()}))
    sink = ipc.BufferOutputStream()
    with ipc.new_file(sink, batch.schema) as w:
        for _ in range(3):
            w.write_batch(batch)
    data = bytes(sink.getvalue())
    stream = {m.offset: m.index for m in scan_messages(data, start=8)}
    dec = FileDecoder()
    dec.check_header(data[:8])
    start, length = dec.footer_range(data[-TRAILER_SIZE:], len(data))
    footer = dec.read_footer(data[start : start + length], start)
    blocks = [*footer.dictionaries, *footer.record_batches]
    assert [dec.message_index(b.offset) for b in blocks] == [stream[b.offset] for b in blocks]
    assert [dec.message_index(b.offset) for b in footer.record_batches] == [2, 3, 4]
