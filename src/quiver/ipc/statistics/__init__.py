"""Per-batch statistics of IPC files: computed on write, kept in the footer, used on read.

Arrow standardises how statistics look as Arrow data (StatisticsSchema.rst: a
``struct<column: int32, statistics: map<dictionary<int32, utf8>, dense_union<...>>>``
with keys such as ``ARROW:null_count:exact``) but not where an IPC file keeps them.
quiver keeps them in the footer's custom metadata, where every other reader ignores them:

- key ``quiver:statistics``; value: an Arrow IPC *stream* of one record batch per record
  batch of the file, in order, in one zstd frame stating its content size (~20x smaller:
  the messages repeat one layout), base64-encoded (so that the value is a valid string);
  a value holding the stream uncompressed reads too;
- each statistics batch has the two columns of StatisticsSchema.rst, ``column: int32``
  and ``statistics: map<dictionary<int32, utf8>, dense_union<...>>``, and its message's
  custom metadata ``quiver:batch`` gives the index of the record batch it describes;
- the row with a null ``column`` holds ``ARROW:row_count:exact``; the row of column *i*
  (the depth-first field index, as in the RecordBatch message's FieldNodes; quiver
  writes top-level columns) holds ``ARROW:null_count:exact`` and, where computed,
  ``ARROW:min_value:exact|approximate`` and ``ARROW:max_value:exact|approximate`` as
  values of the column's own type (a dictionary column: of its value type), and
  ``quiver:nan_count:exact`` for floating-point columns;
- the union's first child is ``int64`` (the counts), then one child per value type.

Min and max ignore nulls and NaN (NaN is counted apart).  Strings and binaries keep at
most :data:`PREFIX_BYTES` bytes: a longer minimum is cut (still a lower bound), a longer
maximum is cut and rounded up (still an upper bound), and both are then marked
approximate, as Parquet does.  A dictionary column's bounds are its dictionary's range,
marked approximate (unused dictionary values may widen it).

A batch whose statistics do not state its row count or a column's null count is never
ruled out on that column; statistics that cannot be used at all (damaged, over the
metadata limit, not one per batch in order, of other columns) cost a filtered read its
skipping, with a :class:`~quiver.errors.StatisticsWarning`, never its rows.

The package, by job: :mod:`.model` (the keys and the per-batch results), :mod:`.compute`
(one batch's statistics, vectorized), :mod:`.groups` (small batches' statistics, a
group at a time), :mod:`.encode` (the footer value on write), :mod:`.templates` (many
messages at once), :mod:`.decode` (the footer value on read).
Names load their module on first use, so a file writer does not load the decoder.

Cost.  Files keep statistics unless written with ``statistics=False``.  A writer keeps
per batch only plain numbers (:class:`StatisticsCollector`, one function per column type
chosen from the schema; small batches computed in groups) and builds the statistics
batches column-wise at close (``encode._columnar``).  All statistics messages of a file
share one schema and one metadata layout, so their framed metadata is handled as a
matrix, one row per message (``templates.Template``), both when writing
(``templates.bulk_messages``) and when reading (``decode._bulk_columns``, which also
gathers the bodies column by column, for a filter only its columns'); a stream laid out
otherwise is read message by message.
"""

from ..._lazy import lazy_attributes

_WHERE = {
    "BATCH_KEY": "model", "MAX_APPROX": "model", "MAX_EXACT": "model", "MIN_APPROX": "model",
    "MIN_EXACT": "model", "NAN_COUNT": "model", "NULL_COUNT": "model", "PREFIX_BYTES": "model",
    "ROW_COUNT": "model", "STATISTICS_KEY": "model", "BatchStatistics": "model",
    "ColumnStatistics": "model", "union_value_types": "model",
    "Bounds": "compute", "WrittenBatch": "compute", "batch_statistics": "compute",
    "column_bounds": "compute", "column_raw": "compute", "column_statistics": "compute",
    "columns_statistics": "compute", "compare_values": "compute",
    "StatisticsCollector": "encode", "encode_statistics": "encode",
    "statistics_batches": "encode",
    "FileStatistics": "decode", "decode_statistics": "decode", "footer_value": "decode",
    "statistics_stream": "decode", "statistics_for_skipping": "decode",
}


__getattr__, __dir__ = lazy_attributes(__name__, _WHERE, globals())

__all__ = sorted(_WHERE)
