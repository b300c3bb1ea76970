"""Property tests: random schemas and data cross the IPC formats between quiver and pyarrow.

Random column types (every type, nested to depth 3, dictionaries, extension types, field
and schema metadata) with random values, optionally sliced: quiver writes -> pyarrow reads
the same values, and pyarrow writes -> quiver reads the same values, in both formats,
with and without compression.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.ipc as pipc
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import quiver as qv
import quiver.ipc as ipc
from quiver import types as t
from tests.roundtrip.test_array_props import _normal, typed_values

PROPS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FORMATS = st.sampled_from(["stream", "file"])
CODECS = st.sampled_from([None, "lz4", "zstd"])
METADATA = st.one_of(
    st.none(), st.dictionaries(st.text("abc", min_size=1, max_size=3), st.text(max_size=4),
                               max_size=2)
)


@st.composite
def batches(draw: Any) -> qv.RecordBatch:
    """A quiver batch of 1-3 random columns (maybe sliced) with random metadata."""
    cols = draw(st.lists(typed_values(), min_size=1, max_size=3))
    n = min(len(v) for _, v in cols)
    arrays = [qv.array(v[:n], qt) for qt, v in cols]
    fields = [
        qv.field(f"c{i}", a.type, metadata=draw(METADATA)) for i, a in enumerate(arrays)
    ]
    batch = qv.RecordBatch(qv.schema(fields, metadata=draw(METADATA)), arrays)
    if n and draw(st.booleans()):
        off = draw(st.integers(0, n))
        batch = batch.slice(off, draw(st.integers(0, n - off)))
    return batch


def _quiver_bytes(batch: qv.RecordBatch, fmt: str, codec: str | None) -> bytes:
    sink = ipc.BufferOutputStream()
    new = ipc.new_stream if fmt == "stream" else ipc.new_file
    with new(sink, batch.schema, compression=codec) as w:
        w.write_batch(batch)
        w.write_batch(batch)
    return sink.getvalue()


def _pyarrow_bytes(batch: pa.RecordBatch, fmt: str, codec: str | None) -> bytes:
    sink = pa.BufferOutputStream()
    new = pipc.new_stream if fmt == "stream" else pipc.new_file
    with new(sink, batch.schema, options=pipc.IpcWriteOptions(compression=codec)) as w:
        w.write_batch(batch)
        w.write_batch(batch)
    return sink.getvalue().to_pybytes()


def _extension_in_run_values(dtype: t.DataType, inside: bool = False) -> bool:
    """pyarrow builds run-end encoded types itself and drops an unregistered extension's
    field metadata on their values, and it refuses run-end encoded values that are run-end
    encoded again: such schemas cannot cross through pyarrow."""
    if isinstance(dtype, t.ExtensionType) and inside:
        return True
    st_ = t.storage_of(dtype)
    if inside and isinstance(st_, t.RunEndEncodedType):
        return True
    if isinstance(st_, t.DictionaryType):
        return _extension_in_run_values(st_.value_type, inside)
    now = inside or isinstance(st_, t.RunEndEncodedType)
    return any(_extension_in_run_values(f.type, now) for f in st_.fields)


def _rows(columns) -> list:
    return [_normal(c.to_pylist()) for c in columns]


@PROPS
@given(batches(), FORMATS, CODECS)
def test_quiver_writes_and_pyarrow_reads_the_same_values(batch, fmt, codec) -> None:
    data = _quiver_bytes(batch, fmt, codec)
    reader = (pipc.open_stream if fmt == "stream" else pipc.open_file)(pa.py_buffer(data))
    table = reader.read_all()
    table.validate(full=True)
    want = _rows(batch.columns)
    assert table.num_rows == 2 * batch.num_rows
    for got_col, exp in zip(table.columns, want):
        assert _normal(got_col.to_pylist()) == exp + exp
    assert table.schema.metadata == (
        None if batch.schema.metadata is None else batch.schema.metadata.to_dict()
    )


@PROPS
@given(batches(), FORMATS, CODECS)
def test_pyarrow_writes_and_quiver_reads_the_same_values(batch, fmt, codec) -> None:
    assume(not any(_extension_in_run_values(f.type) for f in batch.schema))
    as_pa = pa.record_batch(batch)  # through the C data interface, every type exactly
    data = _pyarrow_bytes(as_pa, fmt, codec)
    got = list((ipc.open_stream if fmt == "stream" else ipc.open_file)(data, validate="full"))
    assert len(got) == 2
    want = _rows(batch.columns)
    for b in got:
        assert b.schema.equals(batch.schema)
        assert _rows(b.columns) == want
