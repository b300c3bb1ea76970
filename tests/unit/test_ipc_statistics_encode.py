"""Tests for quiver.ipc.statistics.encode: statistics encoded as StatisticsSchema.rst says."""

from __future__ import annotations

import pyarrow as pa

from quiver.ipc.statistics import STATISTICS_KEY
from tests.unit._statistics_helpers import (
    COLUMNS,
    _footer_value,
    _many_batches_table,
    _stream_bytes,
    _write_stats,
)


def test_footer_holds_a_base64_stream_of_statistics_schema_batches():
    table = pa.table({k: v for k, v in COLUMNS.items()})
    data = _write_stats(table, 2, metadata={"mine": "kept"})
    footer_meta = pa.ipc.open_file(data).metadata
    assert footer_meta[b"mine"] == b"kept"
    stream = pa.ipc.open_stream(_stream_bytes(footer_meta[STATISTICS_KEY.encode()]))
    batches = list(stream)
    assert len(batches) == 3
    first = batches[0]
    assert first.schema.names == ["column", "statistics"]
    assert first.schema.field("column").type == pa.int32()
    map_type = first.schema.field("statistics").type
    assert pa.types.is_map(map_type)
    assert map_type.key_type == pa.dictionary(pa.int32(), pa.string())
    assert pa.types.is_union(map_type.item_type) and map_type.item_type.mode == "dense"
    rows = first.to_pylist()
    assert rows[0] == {"column": None, "statistics": [("ARROW:row_count:exact", 2)]}
    by_column = {r["column"]: dict(r["statistics"]) for r in rows[1:]}
    i64 = list(COLUMNS).index("i64")
    assert by_column[i64] == {"ARROW:null_count:exact": 1, "ARROW:min_value:exact": 5,
                              "ARROW:max_value:exact": 5}


def test_bulk_written_statistics_read_by_pyarrow_as_statistics_schema_batches():
    value = _footer_value(_write_stats(_many_batches_table(), 1))
    reader = pa.ipc.open_stream(_stream_bytes(value))
    batches = []
    while True:
        try:
            batch, meta = reader.read_next_batch_with_custom_metadata()
        except StopIteration:
            break
        batches.append((batch, meta))
    assert [int(meta[b"quiver:batch"]) for _, meta in batches] == list(range(120))
    for k, (batch, _) in enumerate(batches):  # batch k holds row k of the table
        rows = batch.to_pylist()
        assert rows[0] == {"column": None, "statistics": [("ARROW:row_count:exact", 1)]}
        u8 = list(COLUMNS).index("u8") + 1
        want = COLUMNS["u8"][k % 5].as_py()
        got = dict(rows[u8]["statistics"])
        assert got.get("ARROW:min_value:exact") == want
        assert got["ARROW:null_count:exact"] == (want is None)
