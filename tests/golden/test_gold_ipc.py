"""The arrow-testing gold files and the supplement read with the values pyarrow reads.

Every ``.stream`` and ``.arrow_file`` under ``gold/arrow-testing/arrow-ipc-stream/
integration/*/`` is read by quiver and compared batch by batch with pyarrow's reading of
the same file: exactly (through the C data interface into pyarrow, then ``equals``) and as
Python values.  The supplement files are compared with the values in their manifest.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.ipc as pipc
import pytest

import quiver.ipc as ipc
from tests.conftest import INTEGRATION, SUPPLEMENT, require_shared


def _gold_files() -> list[Path]:
    if not INTEGRATION.exists():
        return []
    return sorted(p for p in INTEGRATION.glob("*/*") if p.suffix in (".stream", ".arrow_file"))


GOLD = _gold_files()
IDS = [f"{p.parent.name}/{p.name}" for p in GOLD]


def _pa_batches(path: Path) -> list[pa.RecordBatch]:
    if path.suffix == ".stream":
        return list(pipc.open_stream(str(path)))
    reader = pipc.open_file(str(path))
    return [reader.get_batch(i) for i in range(reader.num_record_batches)]


def _ours(path: Path, **kw) -> list:
    if path.suffix == ".stream":
        return list(ipc.open_stream(path, **kw))
    return list(ipc.open_file(path, **kw))


def _to_pyarrow(batch) -> pa.RecordBatch:
    return pa.record_batch(batch)


def test_gold_folder_is_present() -> None:
    require_shared(INTEGRATION)
    assert len(GOLD) >= 60


@pytest.mark.parametrize("path", GOLD, ids=IDS)
def test_gold_file_reads_exactly_what_pyarrow_reads(path: Path) -> None:
    expected = _pa_batches(path)
    got = _ours(path, validate="full")
    assert len(got) == len(expected)
    for ours, theirs in zip(got, expected):
        assert ours.num_rows == theirs.num_rows
        as_pa = _to_pyarrow(ours)
        assert as_pa.schema.equals(theirs.schema, check_metadata=True)
        # whole-batch equality: pyarrow cannot wrap some columns (day-time intervals) alone
        assert as_pa.equals(theirs)


@pytest.mark.parametrize("path", GOLD, ids=IDS)
def test_gold_file_values_convert_like_pyarrow(path: Path) -> None:
    expected = _pa_batches(path)
    for ours, theirs in zip(_ours(path), expected):
        for i in range(theirs.num_columns):
            try:
                want = theirs.column(i).to_pylist()
            except (ValueError, OverflowError, KeyError, pa.ArrowException):
                continue  # pyarrow itself cannot wrap or convert these values
            assert ours.column(i).to_pylist() == want, theirs.schema.field(i).name


@pytest.mark.parametrize("path", [p for p in GOLD if p.suffix == ".arrow_file"],
                         ids=[i for i in IDS if i.endswith(".arrow_file")])
def test_gold_file_rewritten_by_quiver_reads_equal_in_pyarrow(path: Path) -> None:
    reader = ipc.open_file(path)
    sink = ipc.BufferOutputStream()
    with ipc.new_file(sink, reader.schema) as w:
        for b in reader:
            w.write_batch(b)
    back = pipc.open_file(pa.py_buffer(sink.getvalue()))
    expected = _pa_batches(path)
    assert back.num_record_batches == len(expected)
    for i, theirs in enumerate(expected):
        assert back.get_batch(i).equals(theirs)


# -- the supplement -----------------------------------------------------------------------


def _manifest() -> list[dict]:
    path = SUPPLEMENT / "manifest.json"
    if not path.exists():
        return []
    return [f for f in json.loads(path.read_text())["files"] if not f["file"].endswith(".tensor")]


MANIFEST = _manifest()


def _column_repr(col) -> str:
    values = col.to_pylist()
    return repr(values)


@pytest.mark.parametrize("entry", MANIFEST, ids=[e["file"] for e in MANIFEST])
def test_supplement_file_reads_with_manifest_values(entry: dict) -> None:
    path = require_shared(SUPPLEMENT / entry["file"])
    batches = _ours(path, validate="full")
    assert len(batches) == len(entry["batches"])
    for batch, want in zip(batches, entry["batches"]):
        for name, text in want.items():
            col = batch.column(name)
            if name == "ts":
                # the manifest lists this nanosecond timestamp column by its int64 values
                got = repr(pa.array(col).cast(pa.int64()).to_pylist())
            else:
                got = _column_repr(col)
            assert got == text, f"{entry['file']}: column {name}"


@pytest.mark.parametrize("entry", MANIFEST, ids=[e["file"] for e in MANIFEST])
def test_supplement_file_reads_exactly_what_pyarrow_reads(entry: dict) -> None:
    path = require_shared(SUPPLEMENT / entry["file"])
    expected = _pa_batches(path)
    for ours, theirs in zip(_ours(path), expected):
        assert _to_pyarrow(ours).equals(theirs)


def test_supplement_delta_stream_counts_its_dictionary_messages() -> None:
    path = require_shared(SUPPLEMENT / "dict_delta_and_replacement.stream")
    reader = ipc.open_stream(path)
    list(reader)
    assert reader.stats["num_dictionary_batches"] >= 3
    assert reader.stats["num_record_batches"] == 3


def test_big_endian_gold_keeps_data_as_written_when_asked() -> None:
    path = require_shared(INTEGRATION / "1.0.0-bigendian" / "generated_primitive.arrow_file")
    native = ipc.open_file(path).get_batch(0)
    raw = ipc.open_file(path, ensure_native_endian=False)
    assert raw.schema_message.endianness == "big"
    kept = raw.get_batch(0)
    i = native.schema.get_field_index("int32_nullable")
    col_native, col_kept = native.column(i), kept.column(i)
    a = np.asarray(col_native.buffers[1][: 4 * len(col_native)]).view("<i4")
    b = np.asarray(col_kept.buffers[1][: 4 * len(col_kept)]).view(">i4")
    assert np.array_equal(a, b)
