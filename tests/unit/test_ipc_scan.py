"""The file read path: FileDecoder's open / read_dictionaries / read_batch, the footers
and schema plans kept for files read again, quiver.ipc.scan and quiver.ipc.inspection."""

from __future__ import annotations

import warnings

import pytest

import quiver as qv
import quiver.errors as E
import quiver.ipc as ipc
from quiver.filters import normalize
from quiver.ipc import batch_loader, file_decoder, scan
from quiver.ipc.file_decoder import FileDecoder, forget_footers
from quiver.ipc.inspection import buffer_fields
from quiver.ipc.options import IpcReadOptions


@pytest.fixture(autouse=True)
def _no_kept_footers() -> None:
    forget_footers()
    batch_loader.forget_plans()


def _file(columns: dict, batches: int = 1, **kw) -> bytes:
    batch = qv.record_batch(columns)
    sink = ipc.BufferOutputStream()
    with ipc.new_file(sink, batch.schema, **kw) as w:
        for _ in range(batches):
            w.write_batch(batch)
    return bytes(sink.getvalue())


def _read_at(data: bytes):
    view = memoryview(data)
    return lambda offset, n: view[offset : offset + n]


def test_file_decoder_reads_a_file_through_a_read_callable() -> None:
    words = qv.array(["x", "y", "x"], qv.dictionary(qv.int8(), qv.string()))
    data = _file({"a": qv.array([1, 2, 3]), "d": words}, batches=3)
    dec = FileDecoder()
    footer = dec.open(_read_at(data), len(data))
    assert len(footer.record_batches) == 3
    dec.read_dictionaries(_read_at(data))
    for i in range(3):
        batch, meta = dec.read_batch(i, _read_at(data))
        assert batch.to_pydict() == {"a": [1, 2, 3], "d": ["x", "y", "x"]}
        assert meta is None
    assert dec.columns is None and [n.name for n in dec.plan] == ["a", "d"]


def test_file_decoder_open_refuses_what_is_not_a_file() -> None:
    with pytest.raises(E.FramingError, match="expected the file magic"):
        FileDecoder().open(_read_at(b"\xff\xff\xff\xff" + bytes(40)), 44)
    with pytest.raises(E.TruncatedError, match="expected an IPC file of at least"):
        FileDecoder().open(_read_at(b"ARROW1"), 6)


def test_a_footer_read_again_is_the_same_object_and_its_schema_plan_too() -> None:
    data = _file({"a": qv.array([1, 2, 3])})
    first, second = ipc.open_file(data), ipc.open_file(data)
    assert first.footer is second.footer
    assert first._decoder.plan is second._decoder.plan
    # other options: another plan (the projection differs), same footer
    third = ipc.open_file(data, columns=["a"])
    assert third.footer is first.footer and third._decoder.columns == [0]


def test_same_footer_other_data_reads_its_own_data() -> None:
    one = _file({"a": qv.array([1, 2, 3], qv.int64())})
    two = _file({"a": qv.array([7, 8, 9], qv.int64())})
    # same layout: the footers are byte for byte the same, and decoded once
    start, length = FileDecoder().footer_range(one[-10:], len(one))
    assert one[start : start + length] == two[start : start + length]
    assert ipc.open_file(one).footer is ipc.open_file(two).footer
    for _ in range(3):  # the second and third opens take the kept footer, plan, steady path
        assert ipc.open_file(one).read_all().column("a").to_pylist() == [1, 2, 3]
        assert ipc.open_file(two).read_all().column("a").to_pylist() == [7, 8, 9]


def test_a_damaged_body_under_a_kept_footer_still_raises_where_it_is() -> None:
    good = _file({"s": qv.array(["ab", "cd", "ef"])})
    for _ in range(2):
        assert ipc.open_file(good).read_all().column("s").to_pylist() == ["ab", "cd", "ef"]
    block = ipc.open_file(good).footer.record_batches[0]
    # the last offset of the string column (at the end of its offsets buffer) made huge
    reader = ipc.open_file(good)
    raw = reader._raw(block, 0, "record batch")
    offsets_at = raw.body_offset + int(raw.message.header.buffers[1][0])
    bad = bytearray(good)
    bad[offsets_at + 12 : offsets_at + 16] = (1 << 20).to_bytes(4, "little")
    with pytest.raises(E.BodyError, match="offsets") as info:
        ipc.open_file(bytes(bad)).read_all()
    assert info.value.field_path == "s"


def test_another_file_of_an_equal_schema_takes_the_kept_plan(monkeypatch) -> None:
    # two files of one dataset: the footers differ (their blocks do), the schema does not
    one = _file({"a": qv.array([1, 2, 3]), "s": qv.array(["x", "y", "z"])}, batches=1)
    two = _file({"a": qv.array([7, 8]), "s": qv.array(["p", "q"])}, batches=2)
    assert ipc.open_file(one).read_all().to_pydict() == {"a": [1, 2, 3], "s": ["x", "y", "z"]}
    compiled = []
    monkeypatch.setattr(batch_loader, "make_schema_plan",
                        lambda *a, **k: compiled.append(a) or pytest.fail("compiled again"))
    second = ipc.open_file(two)
    assert second.footer is not ipc.open_file(one).footer
    assert second._decoder.plan is ipc.open_file(one)._decoder.plan and not compiled
    assert second.read_all().to_pydict() == {"a": [7, 8, 7, 8], "s": ["p", "q", "p", "q"]}


def test_schemas_equal_but_for_metadata_or_a_child_name_keep_plans_of_their_own() -> None:
    # the plan's types become the arrays' types: only an exactly equal schema shares one
    item = qv.array([[1], [2]], qv.list_(qv.field("item", qv.int8())))
    renamed = qv.array([[1], [2]], qv.list_(qv.field("element", qv.int8())))
    files = [_file({"l": item}), _file({"l": renamed})]
    plain = qv.schema([qv.field("a", qv.int8())])
    tagged = qv.schema([qv.field("a", qv.int8(), metadata={"k": "v"})])
    for schema in (plain, tagged):
        sink = ipc.BufferOutputStream()
        with ipc.new_file(sink, schema) as w:
            w.write_batch(qv.RecordBatch.from_arrays([qv.array([1], qv.int8())], schema=schema))
        files.append(bytes(sink.getvalue()))
    types = [ipc.open_file(f).read_all().schema for f in files]
    assert types[0].field("l").type.value_field.name == "item"
    assert types[1].field("l").type.value_field.name == "element"
    assert types[2].field("a").metadata is None
    assert dict(types[3].field("a").metadata) == {b"k": b"v"}


def test_the_kept_caches_are_bounded() -> None:
    for k in range(file_decoder._FOOTERS_KEPT + 5):
        ipc.open_file(_file({f"c{k}": qv.array([k])})).read_all()
    assert len(file_decoder._FOOTERS) == file_decoder._FOOTERS_KEPT
    assert len(batch_loader._PLANS) <= batch_loader._PLANS_KEPT
    assert len(batch_loader._PLANS_BY_SCHEMA) <= batch_loader._PLANS_KEPT


def test_a_footer_gives_block_ranges_and_statistics() -> None:
    data = _file({"a": qv.array([1, 2, 3])}, batches=2, statistics=True)
    footer = file_decoder.FileDecoder().open(_read_at(data), len(data))
    blocks = ipc.open_file(data).footer.record_batches
    assert file_decoder.block_ranges(footer) == tuple(
        (b.offset, b.offset + b.meta_data_length + b.body_length) for b in blocks)
    stats, why = scan.footer_statistics(footer)
    assert footer.schema.schema.names == ["a"] and why is None
    assert len(stats) == 2


def test_selection_skips_batches_the_statistics_rule_out() -> None:
    batches = [qv.record_batch({"a": qv.array(list(range(k * 10, k * 10 + 10)))})
               for k in range(4)]
    sink = ipc.BufferOutputStream()
    with ipc.new_file(sink, batches[0].schema, statistics=True) as w:
        for b in batches:
            w.write_batch(b)
    reader = ipc.open_file(sink.getvalue())
    selection = scan.Selection(normalize([("a", ">=", 25)]), reader.footer, reader.schema)
    assert selection.keep.tolist() == [False, False, True, True]
    assert selection.whole.tolist() == [False, False, False, True]
    got = list(selection.batches(reader.get_batch, 0, 4))
    assert [i for i, _ in got] == [2, 3] and selection.skipped == 2
    assert got[0][1].column("a").to_pylist() == list(range(25, 30))
    with pytest.raises(E.ArrowInvalidArgument, match=r"expected the filter's columns \['b'\]"):
        scan.Selection(normalize([("b", "=", 1)]), reader.footer, reader.schema)


def test_selection_without_statistics_reads_every_batch() -> None:
    data = _file({"a": qv.array([1, 2, 3])}, batches=2)
    reader = ipc.open_file(data)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no statistics at all: nothing to warn about
        selection = scan.Selection(normalize([("a", "=", 2)]), reader.footer, reader.schema)
    rows = [b.column("a").to_pylist() for _, b in selection.batches(reader.get_batch, 0, 2)]
    assert rows == [[2], [2]] and selection.skipped == 0


def test_range_batches_closes_the_reader_even_on_an_error() -> None:
    reader = ipc.open_file(_file({"a": qv.array([1])}, batches=2))
    assert [b.num_rows for b in scan.range_batches(reader, 0, 2)] == [1, 1]
    assert reader._closed
    reader = ipc.open_file(_file({"a": qv.array([1])}, batches=2))
    with pytest.raises(E.ArrowIndexError):
        list(scan.range_batches(reader, 1, 3))
    assert reader._closed


def test_stream_batches_reads_pieces_then_ends() -> None:
    batch = qv.record_batch({"a": qv.array([1, 2]), "b": qv.array(["x", "y"])})
    sink = ipc.BufferOutputStream()
    with ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch)
        w.write_batch(batch)
    data = bytes(sink.getvalue())[:-8]  # without its end-of-stream: a split's pieces
    pieces = [data[: len(data) // 2], data[len(data) // 2 :]]
    got = list(scan.stream_batches(pieces, IpcReadOptions(columns=["b"])))
    assert [b.to_pydict() for b in got] == [{"b": ["x", "y"]}] * 2


def test_buffer_fields_names_each_fields_buffers() -> None:
    batch = qv.record_batch({"i": qv.array([1, None], qv.int32()),
                             "l": qv.array([[1], [2, 3]], qv.list_(qv.int8()))})
    data = _file({"i": batch.column("i"), "l": batch.column("l")})
    dec = FileDecoder()
    footer = dec.open(_read_at(data), len(data))
    block = footer.record_batches[0]
    raw = dec.record_batch_message(0, _read_at(data)(*dec.block_range(block, 0)))
    loader = batch_loader.BatchLoader(footer.schema, IpcReadOptions(), file_format=True)
    where = buffer_fields(loader, raw)
    assert set(where) == {"i", "l", "l.item"}
    specs = raw.message.header.buffers.tolist()
    assert where["i"] == [(raw.body_offset + o, n) for o, n in specs[0:2]]
    assert where["l.item"] == [(raw.body_offset + o, n) for o, n in specs[4:6]]
    assert all(o >= raw.body_offset for v in where.values() for o, _ in v)


def test_readers_in_threads_share_the_kept_footer_plan_and_steady_path() -> None:
    from concurrent.futures import ThreadPoolExecutor

    files = [_file({"a": qv.array([k, k + 1, k + 2], qv.int64()),
                    "s": qv.array([f"w{k}", None, "x"])}, batches=3) for k in range(4)]

    def read(k: int) -> list:
        return ipc.open_file(files[k % 4]).read_all().column("a").to_pylist()

    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(read, range(200)))
    assert got == [[k % 4, k % 4 + 1, k % 4 + 2] * 3 for k in range(200)]
