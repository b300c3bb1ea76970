"""``quiver validate``: every gold file is valid; damaged copies give each kind of finding,
at the right byte offset, message index and field path; all findings up to a limit."""

from __future__ import annotations

import dataclasses
import json
import struct
from pathlib import Path

import numpy as np
import pytest

import quiver as qv
from quiver.cli import main
from quiver.ipc import metadata as md
from quiver.ipc.framing import EOS, FILE_HEADER, MAGIC, frame_message
from quiver.ipc.index import MessageInfo, scan_messages

from .conftest import INTEGRATION, batches_of, dictionary_stream, gold, write_ipc


def _all_gold() -> list[str]:
    if not INTEGRATION.exists():
        return ["missing"]
    return sorted(str(p.relative_to(INTEGRATION)) for p in INTEGRATION.glob("*/generated_*")
                  if p.suffix in (".stream", ".arrow_file"))


def findings(tmp_path: Path, data: bytes, capsys, *args: str, name: str = "x.arrows"
             ) -> tuple[int, dict]:
    p = tmp_path / name
    p.write_bytes(data)
    code = main(["validate", "--json", *args, str(p)])
    return code, json.loads(capsys.readouterr().out)


def messages(data: bytes) -> list[MessageInfo]:
    return list(scan_messages(data))


def reframe(data: bytes, index: int, *, header: md.RecordBatch | None = None,
            body: bytes | None = None, body_length: int | None = None) -> bytes:
    """The stream ``data`` with message ``index`` rebuilt: a new RecordBatch header and/or
    body (other messages kept byte for byte)."""
    out = []
    msgs = messages(data)
    for m in msgs:
        if m.index != index:
            out.append(data[m.offset : m.end])
            continue
        new_body = data[m.body_offset : m.end] if body is None else body
        length = len(new_body) if body_length is None else body_length
        msg = md.Message(m.message.version, header or m.message.header, length,
                         m.message.custom_metadata)
        out.append(frame_message(md.encode_message(msg)) + new_body)
    return b"".join(out) + data[msgs[-1].end :]


def file_from_stream(stream: bytes) -> bytes:
    """An IPC file around a stream, its footer listing the stream's messages as they are."""
    msgs = messages(stream)
    schema = msgs[0].message.header
    blocks = {"dictionary": [], "record_batch": []}
    for m in msgs[1:]:
        blocks[m.kind].append(md.Block(m.offset + 8, m.metadata_length, m.body_length))
    footer = md.encode_footer(md.Footer(msgs[0].message.version, schema,
                                        tuple(blocks["dictionary"]),
                                        tuple(blocks["record_batch"])))
    return FILE_HEADER + stream + footer + struct.pack("<i", len(footer)) + MAGIC


@pytest.mark.parametrize("name", _all_gold())
def test_every_gold_file_is_valid_at_both_levels(name: str, capsys) -> None:
    path = gold(name)
    for level in ("structure", "full"):
        assert main(["validate", "--level", level, str(path)]) == 0
        out = capsys.readouterr().out
        assert out.endswith(f"level {level})\n") and ": valid Arrow IPC " in out


def test_truncated_file_is_found_where_the_cut_message_starts(tmp_path: Path, capsys) -> None:
    data = write_ipc(batches_of(3), stream=False)
    cut = messages(data)[2]
    code, rep = findings(tmp_path, data[: cut.body_offset + 5], capsys, name="cut.arrow")
    assert code == 1 and not rep["valid"]
    by_rule = {f["rule"]: f for f in rep["findings"]}
    assert by_rule["footer"]["what"].startswith("the footer cannot be read: expected the file "
                                                "magic b'ARROW1' at the end")
    truncated = by_rule["truncated"]
    assert truncated["offset"] == cut.body_offset and truncated["message_index"] == 2
    assert truncated["what"] == f"expected a body of {cut.body_length} bytes, found 5"
    assert "quiver recover" in truncated["fix"]


def test_negative_metadata_length_is_a_framing_finding_and_the_walk_goes_on(
    tmp_path: Path, capsys
) -> None:
    data = bytearray(write_ipc(batches_of(4), stream=True))
    bad = messages(bytes(data))[2]
    data[bad.offset + 4 : bad.offset + 8] = struct.pack("<i", -16)
    code, rep = findings(tmp_path, bytes(data), capsys)
    assert code == 1
    framing = rep["findings"][0]
    assert (framing["rule"], framing["offset"], framing["message_index"]) == (
        "framing", bad.offset + 4, 2)
    assert framing["what"] == "expected a non-negative metadata length, found -16"
    resync = rep["findings"][1]
    assert resync["rule"] == "resync" and resync["severity"] == "note"
    assert resync["what"] == f"skipped bytes {bad.offset}..{bad.end} to the next message that reads"
    assert len(rep["findings"]) == 2
    assert rep["record_batches"] == 3  # the two after the damage were checked too


def test_garbled_metadata_is_a_metadata_finding_at_the_flatbuffer(tmp_path: Path,
                                                                 capsys) -> None:
    data = bytearray(write_ipc(batches_of(3), stream=True))
    bad = messages(bytes(data))[1]
    data[bad.offset + 8 : bad.offset + 24] = b"\x7f" * 16
    code, rep = findings(tmp_path, bytes(data), capsys)
    assert code == 1
    f = rep["findings"][0]
    assert f["rule"] == "metadata" and f["message_index"] == 1
    assert bad.offset + 8 <= f["offset"] < bad.body_offset


def test_missing_end_of_stream_marker(tmp_path: Path, capsys) -> None:
    data = write_ipc(batches_of(2), stream=True)
    assert data.endswith(EOS)
    code, rep = findings(tmp_path, data[:-8], capsys)
    assert code == 1
    [f] = rep["findings"]
    assert (f["rule"], f["offset"], f["message_index"]) == ("eos", len(data) - 8, 3)
    assert f["what"] == ("expected the end-of-stream marker 0xFFFFFFFF 00000000, found the "
                         "end of the input")


def _string_batch(values: list[str]) -> qv.RecordBatch:
    return qv.record_batch({"n": qv.array(list(range(len(values)))), "s": qv.array(values)})


def test_bad_utf8_is_found_in_every_batch_with_its_field_path(tmp_path: Path, capsys) -> None:
    data = bytearray(write_ipc([_string_batch(["abc", "def"]), _string_batch(["ghi", "jkl"])],
                               stream=True))
    starts = []
    for word in (b"abcdef", b"ghijkl"):
        at = data.find(word)  # the start of the column's data buffer
        data[at + 1] = 0xFF
        starts.append(at)
    code, rep = findings(tmp_path, bytes(data), capsys)
    assert code == 1
    assert [(f["rule"], f["message_index"], f["field_path"], f["offset"])
            for f in rep["findings"]] == [("utf8", 1, "s", starts[0]),
                                          ("utf8", 2, "s", starts[1])]
    assert rep["findings"][0]["what"] == ("expected valid UTF-8 in slot 0, found invalid byte "
                                          "0xff at byte 1 of the value")
    code, rep = findings(tmp_path, bytes(data), capsys, "--level", "structure")
    assert code == 0 and rep["findings"] == []


def test_decreasing_offsets_and_a_second_bad_column_are_both_reported(tmp_path: Path,
                                                                     capsys) -> None:
    batch = qv.record_batch({"a": qv.array(["xy", "z"]), "b": qv.array(["pq", "r"])})
    data = write_ipc([batch], stream=True)
    m = messages(data)[1]
    body = bytearray(data[m.body_offset : m.end])
    rb = m.record_batch
    # column a's offsets [0, 2, 3] -> [0, 3, 2]; column b's data gets a bad byte
    a_offsets = int(rb.buffers[1][0])
    body[a_offsets + 4 : a_offsets + 8] = struct.pack("<i", 3)
    body[a_offsets + 8 : a_offsets + 12] = struct.pack("<i", 2)
    b_data = int(rb.buffers[5][0])
    body[b_data] = 0xC0
    bad = data[: m.body_offset] + bytes(body) + data[m.end :]
    code, rep = findings(tmp_path, bad, capsys)
    assert code == 1
    assert [(f["rule"], f["field_path"], f["offset"]) for f in rep["findings"]] == [
        ("offsets", "a", m.body_offset + a_offsets), ("utf8", "b", m.body_offset + b_data)]
    assert "expected offsets[2] >= 3, found 2" in rep["findings"][0]["what"]


def test_buffer_outside_the_body_is_a_bounds_finding(tmp_path: Path, capsys) -> None:
    data = write_ipc(batches_of(2), stream=True)
    m = messages(data)[1]
    rb = m.record_batch
    buffers = rb.buffers.copy()
    buffers[1][1] = m.body_length + 64
    data = reframe(data, 1, header=dataclasses.replace(rb, buffers=buffers))
    code, rep = findings(tmp_path, data, capsys)
    assert code == 1
    first = rep["findings"][0]
    assert first["rule"] == "bounds" and first["message_index"] == 1
    assert first["what"] == (f"expected buffer 1 inside the body of {m.body_length} bytes, "
                             f"found offset {int(buffers[1][0])} and length "
                             f"{m.body_length + 64}")
    assert first["offset"] == m.body_offset + int(buffers[1][0])
    assert any(f["field_path"] == "id" for f in rep["findings"][1:])


def test_unaligned_buffer_and_unpadded_body_are_found(tmp_path: Path, capsys) -> None:
    batch = qv.record_batch({"a": qv.array([1, 2, 3], type=qv.int32())})
    data = write_ipc([batch], stream=True)
    m = messages(data)[1]
    rb = m.record_batch
    # the values moved 4 bytes into the body (still inside it), body length 20
    values = data[m.body_offset + int(rb.buffers[1][0]) :][:12]
    body = b"\x00" * 4 + values + b"\x00" * 4
    buffers = np.array([[0, 0], [4, 12]], dtype=np.int64)
    data = reframe(data, 1, header=dataclasses.replace(rb, buffers=buffers), body=body)
    code, rep = findings(tmp_path, data, capsys)
    assert code == 1
    new = messages(data)[1]
    assert [(f["rule"], f["offset"], f["message_index"], f["what"]) for f in rep["findings"]] == [
        ("padding", new.offset + 8, 1, "expected a body length that is a multiple of 8, found 20"),
        ("alignment", new.body_offset + 4, 1, "expected buffer 1 to start on an 8-byte boundary "
         "of the body, found body offset 4"),
        # and so the end-of-stream marker after it is out of step
        ("alignment", new.end, 2, f"expected message 2 to start on an 8-byte boundary, found "
         f"offset {new.end}"),
    ]


def test_footer_blocks_that_disagree_are_found(tmp_path: Path, capsys) -> None:
    stream = write_ipc(batches_of(3), stream=True)
    good = file_from_stream(stream)
    code, rep = findings(tmp_path, good, capsys, name="ok.arrow")
    assert code == 0, rep
    msgs = messages(stream)
    footer = md.encode_footer(md.Footer(
        msgs[0].message.version, msgs[0].message.header, (),
        (md.Block(msgs[1].offset + 8, msgs[1].metadata_length, msgs[1].body_length),
         md.Block(msgs[2].offset + 8, msgs[2].metadata_length, msgs[2].body_length + 8))))
    bad = FILE_HEADER + stream + footer + struct.pack("<i", len(footer)) + MAGIC
    code, rep = findings(tmp_path, bad, capsys, name="bad.arrow")
    assert code == 1
    whats = [f["what"] for f in rep["findings"]]
    assert all(f["rule"] == "footer" for f in rep["findings"])
    assert {f["offset"] for f in rep["findings"]} == {len(FILE_HEADER) + len(stream)}
    assert any(f"record batch block 1 says metaDataLength {msgs[2].metadata_length}, "
               f"bodyLength {msgs[2].body_length + 8}" in w for w in whats)
    assert any(f"message 3 (RecordBatch at offset {msgs[3].offset + 8}) is not listed" in w
               for w in whats)


def test_dictionary_replacement_is_fine_in_a_stream_and_a_finding_in_a_file(
    tmp_path: Path, capsys
) -> None:
    stream = dictionary_stream([([0, 1], ["a", "b"]), ([1, 0], ["c", "d"])])
    code, rep = findings(tmp_path, stream, capsys)
    assert code == 0, rep
    code, rep = findings(tmp_path, file_from_stream(stream), capsys, name="r.arrow")
    assert code == 1
    [f] = rep["findings"]
    dict_msgs = [m for m in messages(stream) if m.kind == "dictionary"]
    assert f["rule"] == "dictionary" and f["message_index"] == dict_msgs[1].index
    assert "replacement is only allowed in streams" in f["what"]


def test_dictionary_used_before_it_is_defined_is_found(tmp_path: Path, capsys) -> None:
    stream = dictionary_stream([([0, 1], ["a", "b"])])
    msgs = messages(stream)
    assert [m.kind for m in msgs] == ["schema", "dictionary", "record_batch"]
    without = stream[: msgs[1].offset] + stream[msgs[2].offset :]
    code, rep = findings(tmp_path, without, capsys)
    assert code == 1
    [f] = rep["findings"]
    assert (f["rule"], f["message_index"], f["field_path"]) == ("dictionary", 1, "d")


def test_undeclared_union_type_code_is_found(tmp_path: Path, capsys) -> None:
    data = gold("cpp-21.0.0/generated_union.stream").read_bytes()
    msgs = messages(data)
    m = next(x for x in msgs if x.kind == "record_batch" and x.num_rows)
    types_at = m.body_offset + int(m.record_batch.buffers[0][0])  # sparse_1's type ids
    bad = bytearray(data)
    bad[types_at] = 99
    code, rep = findings(tmp_path, bytes(bad), capsys)
    assert code == 1
    f = rep["findings"][0]
    assert (f["rule"], f["message_index"], f["field_path"]) == ("union", m.index, "sparse_1")
    assert f["offset"] == types_at
    assert "99" in f["what"]


def test_run_ends_that_do_not_increase_are_found(tmp_path: Path, capsys) -> None:
    data = gold("cpp-21.0.0/generated_run_end_encoded.stream").read_bytes()
    msgs = messages(data)
    m = next(x for x in msgs if x.kind == "record_batch" and int(x.record_batch.nodes[1][0]) >= 2)
    run_ends_at = m.body_offset + int(m.record_batch.buffers[1][0])  # ree16_int32 run ends
    bad = bytearray(data)
    bad[run_ends_at + 2 : run_ends_at + 4] = struct.pack("<h", 0)
    code, rep = findings(tmp_path, bytes(bad), capsys)
    assert code == 1
    f = rep["findings"][0]
    assert (f["rule"], f["message_index"]) == ("run_ends", m.index)
    assert f["field_path"].startswith("ree16_int32")
    assert f["field_path"] == "ree16_int32.run_ends" and f["offset"] == run_ends_at


def test_time_of_day_out_of_range_is_found_at_the_full_level_only(tmp_path: Path,
                                                                  capsys) -> None:
    batch = qv.record_batch({"t": qv.array([3600, 86_400, 90_000], type=qv.time32("s"))})
    data = write_ipc([batch], stream=True)
    code, rep = findings(tmp_path, data, capsys)
    assert code == 1
    [f] = rep["findings"]
    assert (f["rule"], f["field_path"], f["message_index"]) == ("time_of_day", "t", 1)
    m = messages(data)[1]
    assert f["offset"] == m.body_offset + int(m.record_batch.buffers[1][0])  # the values
    assert f["what"] == ("expected time32[s] values from 0 to 86399 (one day) at slot 1, "
                         "found 86400 (2 values out of range)")
    code, rep = findings(tmp_path, data, capsys, "--level", "structure")
    assert code == 0


def test_findings_stop_at_the_limit_and_say_so(tmp_path: Path, capsys) -> None:
    data = bytearray(write_ipc([_string_batch(["abc", "def"])] * 5, stream=True))
    start = 0
    for _ in range(5):
        at = data.find(b"abcdef", start)
        data[at] = 0xFF
        start = at + 1
    code, rep = findings(tmp_path, bytes(data), capsys, "--limit", "3")
    assert code == 1 and rep["limited"] is True
    assert [f["message_index"] for f in rep["findings"]] == [1, 2, 3]
    p = tmp_path / "x.arrows"
    assert main(["validate", "--limit", "3", str(p)]) == 1
    out = capsys.readouterr().out
    assert out.count(" error [utf8] at byte ") == 3
    # the walk stopped at the fourth finding, in message 4
    assert out.rstrip().endswith("3 errors, stopped at --limit 3 (5 messages, 4 record "
                                 "batches, 8 rows; level full)")
    assert "    fix: the writer produced invalid data here" in out


def test_legacy_framing_is_a_note_not_an_error(tmp_path: Path, capsys) -> None:
    data = write_ipc(batches_of(1), stream=True)
    # before Arrow 0.15: a bare int32 length, the flatbuffer padded so the body stays aligned
    legacy = b"".join(
        struct.pack("<i", m.metadata_length - 8 + 4) + data[m.offset + 8 : m.body_offset]
        + b"\x00" * 4 + data[m.body_offset : m.end]
        for m in messages(data)
    ) + b"\x00" * 4
    code, rep = findings(tmp_path, legacy, capsys)
    assert code == 0
    assert {f["severity"] for f in rep["findings"]} == {"note"}
    assert rep["findings"][0]["rule"] == "framing"


def test_bad_values_in_an_unused_dictionary_are_found(tmp_path: Path, capsys) -> None:
    stream = dictionary_stream([([0, 1], ["ab", "cd"])])
    bad = bytearray(stream)
    at = bad.find(b"abcd")
    bad[at] = 0xFF
    msgs = messages(stream)
    without_batch = bytes(bad[: msgs[2].offset]) + EOS  # the dictionary is never used
    code, rep = findings(tmp_path, without_batch, capsys)
    assert code == 1
    [f] = rep["findings"]
    assert (f["rule"], f["message_index"], f["field_path"]) == ("utf8", 1, "<dictionary 0>")


# -- found by a review: damage a later message or the footer shows is not a cut ----------


@pytest.mark.parametrize("length", [1_000_000, 0])
@pytest.mark.parametrize("stream", [False, True], ids=["file", "stream"])
def test_a_length_past_the_end_is_damage_when_readable_messages_follow(
        tmp_path: Path, capsys, stream: bool, length: int) -> None:
    data = bytearray(write_ipc(batches_of(5), stream=stream))
    msgs = list(scan_messages(bytes(data), start=0 if stream else 8))
    struct.pack_into("<i", data, msgs[2].offset + 4, length)  # the second record batch
    code, rep = findings(tmp_path, bytes(data), capsys,
                         name="x.arrows" if stream else "x.arrow")
    rules = [f["rule"] for f in rep["findings"]]
    if stream and length == 0:  # a stream ends at its marker, as every reader sees it
        assert rep["record_batches"] == 1
        return
    assert code == 1
    assert rules[:2] == ["truncated" if length else "eos", "resync"], rules
    assert rep["record_batches"] == 4
    # only the damaged block is where no message starts; the statistics of the batches
    # after it are those of their own blocks
    footer = [f["what"] for f in rep["findings"] if f["rule"] == "footer"]
    assert footer == [] if stream else len(footer) == 1 and "block 1 points" in footer[0]
    assert "statistics" not in rules


def test_a_cut_input_is_still_one_truncated_finding(tmp_path: Path, capsys) -> None:
    data = write_ipc(batches_of(5), stream=True)
    m = list(scan_messages(data))[3]
    code, rep = findings(tmp_path, data[: m.offset + 30], capsys)
    assert code == 1
    assert [f["rule"] for f in rep["findings"]] == ["truncated"]


def _unknown_version(data: bytearray, m: MessageInfo) -> None:
    """Flip the byte of ``m``'s metadata version (V5 = 4) that makes it unknown (V252)."""
    from quiver.errors import ArrowError, NotSupported

    for i in range(m.offset + 8, m.offset + 64):
        if data[i] != 4:
            continue
        data[i] = 4 ^ 0xFF
        try:
            md.decode_message(bytes(data[m.offset + 8 : m.body_offset]))
        except NotSupported:
            return
        except ArrowError:
            pass
        data[i] = 4
    raise AssertionError(f"no version byte found in message {m.index}")


@pytest.mark.parametrize("which", ["one", "all", "schema"])
def test_validate_fails_when_a_message_could_not_be_read(tmp_path: Path, capsys,
                                                         which: str) -> None:
    data = bytearray(write_ipc(batches_of(5), stream=True))
    msgs = messages(bytes(data))
    chosen = {"one": msgs[2:3], "all": msgs, "schema": msgs[:1]}[which]
    for m in chosen:
        _unknown_version(data, m)
    p = tmp_path / "future.arrows"
    p.write_bytes(bytes(data))
    code = main(["validate", str(p)])
    out = capsys.readouterr().out
    assert "not supported" in out and "unchecked [unsupported]" in out
    assert code == 1, out
    assert "valid Arrow IPC" not in out.replace("INVALID", "")
    code, rep = findings(tmp_path, bytes(data), capsys)
    assert code == 1 and rep["valid"] is False


def test_unchecked_parts_alone_say_not_shown_valid(tmp_path: Path, capsys) -> None:
    data = bytearray(write_ipc(batches_of(3), stream=True))
    _unknown_version(data, messages(bytes(data))[2])
    p = tmp_path / "future.arrows"
    p.write_bytes(bytes(data))
    assert main(["validate", str(p)]) == 1
    last = capsys.readouterr().out.splitlines()[-1]
    assert "NOT SHOWN VALID: 1 part was not checked" in last, last


@pytest.mark.parametrize("level", ["full", "structure"])
def test_validate_refuses_a_stream_without_a_schema(tmp_path: Path, capsys,
                                                    level: str) -> None:
    code, rep = findings(tmp_path, EOS, capsys, "--level", level)
    assert code == 1
    order = [f for f in rep["findings"] if f["rule"] == "order"]
    assert len(order) == 1 and "expected a Schema message first" in order[0]["what"]



def test_a_newer_versions_file_is_not_shown_valid_without_a_false_order_error(capsys) -> None:
    from tests.conftest import ARROW_TESTING, require_shared

    path = require_shared(ARROW_TESTING / "forward-compatibility" / "schema_v6.arrow")
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert "unchecked [unsupported]" in out
    assert "[order]" not in out  # the unreadable message may be the Schema: no second claim
    assert "NOT SHOWN VALID: 1 part was not checked" in out.splitlines()[-1]


def _ext_column_file(dtype: qv.DataType, values: list) -> bytes:
    from quiver.array import make_array

    base = qv.array(values, qv.types.storage_of(dtype))
    col = make_array(dtype, len(base), base.buffers, base.children, base.null_count)
    return write_ipc([qv.record_batch({"col": col})], stream=False)


@pytest.mark.parametrize(("dtype", "values", "words"), [
    (qv.types.ExtensionType("arrow.uuid", qv.int64()), [1], "arrow.uuid over"),
    (qv.types.ExtensionType("arrow.bool8", qv.string()), ["a"], "arrow.bool8 over"),
    (qv.types.ExtensionType("arrow.json", qv.int32()), [1], "arrow.json over"),
    (qv.types.TimestampType("s", "+25:00"), [1], "time zone"),
])
def test_types_that_cannot_be_valid_are_found_naming_the_field(
        tmp_path: Path, capsys, dtype: qv.DataType, values: list, words: str) -> None:
    code, report = findings(tmp_path, _ext_column_file(dtype, values), capsys,
                            "--level", "full", name="x.arrow")
    assert code == 1
    found = [f for f in report["findings"] if f["rule"] == "type"]
    assert len(found) == 1 and words in found[0]["what"] and found[0]["field_path"] == "col"
    # the extension storage is a problem at the structure level too; a zone is not
    code, report = findings(tmp_path, _ext_column_file(dtype, values), capsys,
                            "--level", "structure", name="x.arrow")
    assert code == (0 if words == "time zone" else 1)
