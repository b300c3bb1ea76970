"""Big-endian streams read with pyarrow's values: every type, deltas, nested dictionaries.

Cross-module on purpose: big-endian end to end through the reader, the body, ipc.endian
and the dictionaries (ipc.endian's own unit tests are in test_ipc_endian)."""

from __future__ import annotations

import contextlib

import pyarrow as pa
import pyarrow.ipc as pipc
import pytest

import quiver.ipc as ipc
from tests.big_endian import to_big_endian
from tests.ipc_cases import all_type_arrays

CASES = all_type_arrays()


def _little(table: pa.Table, **opts) -> bytes:
    sink = pa.BufferOutputStream()
    with pipc.new_stream(sink, table.schema, options=pipc.IpcWriteOptions(**opts)) as w:
        for b in table.to_batches():
            w.write_batch(b)
    return sink.getvalue().to_pybytes()


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_type_reads_from_big_endian_like_pyarrow(name: str) -> None:
    big = to_big_endian(_little(pa.table({name: CASES[name]})))
    expected = CASES[name].to_pylist()
    # pyarrow confirms the helper made a faithful stream, for the types it can swap
    # (not views nor run-end encoded arrays)
    with contextlib.suppress(pa.ArrowNotImplementedError):
        assert pipc.open_stream(pa.py_buffer(big)).read_all().column(0).to_pylist() == expected
    got = [v for b in ipc.open_stream(big, validate="full") for v in b.column(0).to_pylist()]
    assert got == expected


def test_big_endian_delta_dictionaries_keep_earlier_values() -> None:
    d1 = pa.DictionaryArray.from_arrays(pa.array([0, 1], pa.int8()), pa.array([10, 20], pa.int32()))
    d2 = pa.DictionaryArray.from_arrays(pa.array([0, 1, 2], pa.int8()),
                                        pa.array([10, 20, 30], pa.int32()))
    schema = pa.schema([("d", d1.type)])
    table = pa.Table.from_batches([pa.record_batch([d1], schema=schema),
                                   pa.record_batch([d2], schema=schema)])
    big = to_big_endian(_little(table, emit_dictionary_deltas=True))
    got = [b.column(0).to_pylist() for b in ipc.open_stream(big)]
    assert got == [[10, 20], [10, 20, 30]]
    assert pipc.open_stream(pa.py_buffer(big)).read_all().column(0).to_pylist() == [
        10, 20, 10, 20, 30
    ]


def test_big_endian_dictionary_of_dictionary_encoded_values() -> None:
    inner = pa.array(["x", "y"]).dictionary_encode()
    values = pa.StructArray.from_arrays([inner], ["tag"])
    outer = pa.DictionaryArray.from_arrays(pa.array([0, 1, 0], pa.int8()), values)
    big = to_big_endian(_little(pa.table({"o": outer})))
    got = next(iter(ipc.open_stream(big))).column(0).to_pylist()
    assert got == [{"tag": "x"}, {"tag": "y"}, {"tag": "x"}]
