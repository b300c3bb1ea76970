"""The Arrow integration JSON format and the harness operations built on it.

Integration.rst ("JSON test data format", "Gold File Integration Tests"): read and write the
JSON format (:mod:`.json_reader`, :mod:`.json_writer`), compare two datasets by logical value
(:mod:`.compare`), and the four operations archery asks of an implementation:
:func:`validate` (JSON vs IPC), :func:`json_to_arrow`, :func:`arrow_to_json`,
:func:`file_to_stream` / :func:`stream_to_file`.

>>> import tempfile, os
>>> from quiver.integration import parse_json, write_json, read_json, compare
>>> doc = {"schema": {"fields": [{"name": "s", "nullable": True, "children": [],
...         "type": {"name": "utf8"}}]},
...        "batches": [{"count": 2, "columns": [{"name": "s", "count": 2,
...         "VALIDITY": [1, 0], "OFFSET": [0, 2, 2], "DATA": ["hi", ""]}]}]}
>>> jf = parse_json(doc)
>>> with tempfile.TemporaryDirectory() as tmp:
...     path = os.path.join(tmp, "x.json")
...     write_json(path, jf.schema, jf.batches)
...     back = read_json(path)
>>> compare(jf.schema, jf.batches, back.schema, back.batches)
[]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import ipc
from .. import types as t
from .compare import (
    Difference,
    array_values,
    batch_parts,
    compare,
    compare_arrays,
    compare_batches,
    compare_schemas,
    value_at,
)
from .json_reader import (
    FieldNode,
    JsonBatch,
    JsonFile,
    loads,
    make_batch,
    parse_json,
    read_json,
    schema_from_json,
)
from .json_writer import dumps, schema_to_json, to_json, write_json

_FILE_MAGIC = b"ARROW1"


def is_arrow_file(path: str | Path) -> bool:
    """Whether ``path`` starts with the IPC file magic (else it is taken as a stream)."""
    with open(path, "rb") as f:
        return f.read(6) == _FILE_MAGIC


def read_ipc(path: str | Path) -> tuple[t.Schema, list[Any]]:
    """(schema, batches) of an IPC file or stream at ``path`` (the format is sniffed)."""
    data = Path(path).read_bytes()
    if data[:6] == _FILE_MAGIC:
        reader = ipc.open_file(data)
        batches = [reader.get_batch(i) for i in range(reader.num_record_batches)]
        return reader.schema, batches
    reader = ipc.open_stream(data)
    return reader.schema, list(reader)


def _write_ipc(path: str | Path | Any, schema: t.Schema, batches: list[Any], *, stream: bool,
               **options: Any) -> None:
    opener = ipc.new_stream if stream else ipc.new_file
    writer = opener(path, schema, **options) if options else opener(path, schema)
    try:
        for b in batches:
            writer.write_batch(b)
    finally:
        writer.close()


def validate(
    json_path: str | Path, arrow_path: str | Path, *, limit: int = 20
) -> list[Difference]:
    """Differences between an integration JSON file and an IPC file or stream (empty when
    they hold the same schema and data)."""
    expected = read_json(json_path)
    schema, batches = read_ipc(arrow_path)
    return compare(expected.schema, expected.batches, schema, batches, limit=limit)


def json_to_arrow(json_path: str | Path, arrow_path: str | Path, **options: Any) -> None:
    """Write the batches of an integration JSON file as an IPC file (``options`` go to
    :func:`quiver.ipc.new_file`)."""
    jf = read_json(json_path)
    _write_ipc(arrow_path, jf.schema, jf.batches, stream=False, **options)


def arrow_to_json(arrow_path: str | Path, json_path: str | Path) -> None:
    """Write an IPC file or stream as integration JSON (``.gz`` paths are compressed)."""
    schema, batches = read_ipc(arrow_path)
    write_json(json_path, schema, batches)


def _read_bytes(source: str | Path | Any) -> bytes:
    if isinstance(source, (str, Path)):
        return Path(source).read_bytes()
    return source.read()


def file_to_stream(in_path: str | Path | Any, out: str | Path | Any) -> None:
    """Rewrite an IPC file as an IPC stream (paths or binary file objects)."""
    reader = ipc.open_file(_read_bytes(in_path))
    batches = [reader.get_batch(i) for i in range(reader.num_record_batches)]
    _write_ipc(out, reader.schema, batches, stream=True)


def stream_to_file(in_path: str | Path | Any, out_path: str | Path | Any) -> None:
    """Rewrite an IPC stream as an IPC file (paths or binary file objects)."""
    reader = ipc.open_stream(_read_bytes(in_path))
    _write_ipc(out_path, reader.schema, list(reader), stream=False)


__all__ = [
    "Difference",
    "FieldNode",
    "JsonBatch",
    "JsonFile",
    "array_values",
    "arrow_to_json",
    "batch_parts",
    "compare",
    "compare_arrays",
    "compare_batches",
    "compare_schemas",
    "dumps",
    "file_to_stream",
    "is_arrow_file",
    "json_to_arrow",
    "loads",
    "make_batch",
    "parse_json",
    "read_ipc",
    "read_json",
    "schema_from_json",
    "schema_to_json",
    "stream_to_file",
    "to_json",
    "validate",
    "value_at",
    "write_json",
]
