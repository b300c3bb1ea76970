"""``quiver inspect``: golden outputs on gold files; offsets, lengths and kinds checked
against pyarrow's message reader; footer blocks against the stream; buffers."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from quiver.cli import main
from quiver.ipc import metadata as md

from .conftest import INTEGRATION, batches_of, dictionary_stream, gold, write_ipc

GOLDEN = Path(__file__).parent / "golden"

INSPECT_GOLDEN = {
    ("cpp-21.0.0/generated_dictionary.arrow_file", False):
        "inspect-generated_dictionary.arrow_file.txt",
    ("cpp-21.0.0/generated_custom_metadata.arrow_file", False):
        "inspect-generated_custom_metadata.arrow_file.txt",
    ("cpp-21.0.0/generated_primitive_no_batches.stream", False):
        "inspect-generated_primitive_no_batches.stream.txt",
    ("1.0.0-bigendian/generated_primitive.arrow_file", False):
        "inspect-generated_primitive.arrow_file.txt",
    ("2.0.0-compression/generated_lz4.stream", True): "inspect-buffers-generated_lz4.stream.txt",
    ("2.0.0-compression/generated_uncompressible_zstd.arrow_file", True):
        "inspect-buffers-generated_uncompressible_zstd.arrow_file.txt",
}


@pytest.mark.parametrize(("name", "buffers"), sorted(INSPECT_GOLDEN))
def test_inspect_matches_its_golden_output(name: str, buffers: bool, capsys) -> None:
    path = gold(name)
    assert main(["inspect", *(["--buffers"] if buffers else []), str(path)]) == 0
    out = capsys.readouterr().out.replace(f"{path}:", "<FILE>:", 1)
    assert out == (GOLDEN / INSPECT_GOLDEN[(name, buffers)]).read_text()


def _all_gold() -> list[str]:
    if not INTEGRATION.exists():
        return ["missing"]
    return sorted(str(p.relative_to(INTEGRATION)) for p in INTEGRATION.glob("*/generated_*")
                  if p.suffix in (".stream", ".arrow_file"))


_PA_KINDS = {"schema": "Schema", "dictionary": "DictionaryBatch",
             "record batch": "RecordBatch"}


@pytest.mark.parametrize("name", _all_gold())
def test_inspect_agrees_with_pyarrow_message_reader(name: str, capsys) -> None:
    pa = pytest.importorskip("pyarrow")
    path = gold(name)
    assert main(["inspect", "--json", str(path)]) == 0
    lay = json.loads(capsys.readouterr().out)
    data = path.read_bytes()
    start = 8 if name.endswith(".arrow_file") else 0
    reader = pa.ipc.MessageReader.open_stream(pa.py_buffer(data[start:]))
    offset = start
    expected = []
    for m in reader:
        expected.append((offset, _PA_KINDS[m.type], 8 + m.metadata.size, m.body.size))
        offset += 8 + m.metadata.size + m.body.size
    got = [(m["offset"], m["kind"], m["metadata_length"], m["body_length"])
           for m in lay["messages"]]
    assert got == expected
    assert lay["end_of_stream"] == offset
    assert lay["error"] is None
    if name.endswith(".arrow_file"):
        f = pa.ipc.open_file(path)
        assert len(lay["footer"]["record_batches"]) == f.num_record_batches
        assert lay["footer"]["agrees"] is True
        assert lay["totals"]["rows"] == sum(f.get_batch(i).num_rows
                                            for i in range(f.num_record_batches))
        assert lay["footer"]["offset"] + lay["footer"]["length"] + 10 == len(data)


def test_buffers_give_the_uncompressed_length_of_each_compressed_buffer(capsys) -> None:
    import lz4.frame

    path = gold("2.0.0-compression/generated_lz4.stream")
    data = path.read_bytes()
    assert main(["inspect", "--buffers", "--json", str(path)]) == 0
    lay = json.loads(capsys.readouterr().out)
    checked = 0
    for m in lay["messages"]:
        for b in m.get("buffers", []):
            if b["length"] == 0:
                assert "uncompressed_length" not in b
                continue
            raw = data[b["offset"] : b["offset"] + b["length"]]
            (n,) = struct.unpack_from("<q", raw)
            assert b["uncompressed_length"] == n
            if n >= 0:
                assert len(lz4.frame.decompress(raw[8:])) == n
                checked += 1
    assert checked >= 4


def test_inspect_reports_footer_blocks_that_disagree_with_the_stream(tmp_path: Path,
                                                                      capsys) -> None:
    data = bytearray(write_ipc(batches_of(3), stream=False))
    (footer_len,) = struct.unpack_from("<i", data, len(data) - 10)
    start = len(data) - 10 - footer_len
    footer = md.decode_footer(bytes(data[start : len(data) - 10]))
    blocks = list(footer.record_batches)
    blocks[1] = md.Block(blocks[1].offset + 8, blocks[1].meta_data_length,
                         blocks[1].body_length)
    bad = md.encode_footer(md.Footer(footer.version, footer.schema, footer.dictionaries,
                                     tuple(blocks[:2]), footer.custom_metadata))
    out = bytes(data[:start]) + bad + struct.pack("<i", len(bad)) + b"ARROW1"
    p = tmp_path / "bad-footer.arrow"
    p.write_bytes(out)
    assert main(["inspect", str(p)]) == 1
    text = capsys.readouterr().out
    assert "DISAGREE with the messages" in text
    assert (f"record batch block 1 points at offset {blocks[1].offset}, where no message "
            "starts") in text
    assert "message 3 (RecordBatch at offset" in text and "is not listed in the footer" in text


def test_inspect_of_a_cut_stream_lists_what_is_there_and_exits_one(tmp_path: Path,
                                                                   capsys) -> None:
    data = write_ipc(batches_of(4), stream=True)
    p = tmp_path / "cut.arrows"
    p.write_bytes(data[:-50])
    assert main(["inspect", "--json", str(p)]) == 1
    lay = json.loads(capsys.readouterr().out)
    assert [m["kind"] for m in lay["messages"]] == ["Schema"] + ["RecordBatch"] * 3
    assert lay["error"].startswith("expected a body of")
    assert "message 4" in lay["error"]
    assert lay["end_of_stream"] is None


def test_inspect_shows_dictionary_ids_and_delta_flags(tmp_path: Path,
                                                                     capsys) -> None:
    p = tmp_path / "delta.arrows"
    p.write_bytes(dictionary_stream([([0, 1], ["a", "b"]), ([2, 0], ["a", "b", "c"])],
                                    deltas=True))
    assert main(["inspect", "--json", str(p)]) == 0
    msgs = json.loads(capsys.readouterr().out)["messages"]
    dicts = [m for m in msgs if m["kind"] == "DictionaryBatch"]
    assert [(m["dictionary_id"], m["is_delta"], m["rows"]) for m in dicts] == [
        (0, False, 2), (0, True, 1)]


def test_inspect_shows_each_message_custom_metadata(tmp_path: Path, capsys) -> None:
    import quiver.ipc as ipc

    batch = batches_of(1)[0]
    sink = ipc.BufferOutputStream()
    with ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch, custom_metadata={"origin": "sensor 7"})
    p = tmp_path / "meta.arrows"
    p.write_bytes(bytes(sink.getvalue()))
    assert main(["inspect", str(p)]) == 0
    assert "      custom metadata: origin = 'sensor 7'\n" in capsys.readouterr().out


def _no_schema_streams() -> list[bytes]:
    """An end-of-stream marker alone, and a stream whose Schema message was cut out."""
    import quiver as qv
    from quiver.ipc.index import scan_messages

    stream = write_ipc([qv.record_batch({"a": [1, 2]})], stream=True)
    first = next(iter(scan_messages(stream)))
    return [b"\xff\xff\xff\xff\x00\x00\x00\x00", stream[first.end:]]


@pytest.mark.parametrize("data", _no_schema_streams(), ids=["eos", "batch-first"])
def test_a_stream_without_a_schema_message_exits_1_as_validate(tmp_path: Path, capsys,
                                                               data: bytes) -> None:
    path = tmp_path / "no_schema.arrows"
    path.write_bytes(data)
    assert main(["validate", str(path)]) == 1
    capsys.readouterr()
    assert main(["inspect", str(path)]) == 1
    assert "expected a Schema message first" in capsys.readouterr().out
    assert main(["inspect", "--json", str(path)]) == 1
    assert "Schema message first" in json.loads(capsys.readouterr().out)["schema_error"]
