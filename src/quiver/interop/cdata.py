"""The Arrow C data and C stream interface structs, capsules and format strings, under
their interop names.  They live in :mod:`quiver.cdata.capsule` (structs, capsules,
metadata), :mod:`quiver.types` (the format-string table) and :mod:`quiver.cdata.schema`
(parsing format strings).

>>> fmt, _ = format_of(__import__("quiver").types.timestamp("us", "UTC"))
>>> fmt
b'tsu:UTC'
"""

from __future__ import annotations

from ..cdata.capsule import (
    ARRAY_CAPSULE,
    ARRAY_STRUCT,
    SCHEMA_CAPSULE,
    SCHEMA_STRUCT,
    STREAM_CAPSULE,
    ArrayRelease,
    ArrowArray,
    ArrowArrayStream,
    ArrowSchema,
    SchemaRelease,
    StreamGetLastError,
    StreamGetNext,
    StreamGetSchema,
    StreamRelease,
    c_string,
    capsule_address,
    decode_metadata,
    encode_metadata,
    new_capsule,
    pointer_table,
)
from ..cdata.schema import format_of, parse_format
from ..types import C_EXTENSION_METADATA_KEY as EXTENSION_METADATA_KEY
from ..types import C_EXTENSION_NAME_KEY as EXTENSION_NAME_KEY
from ..types import C_FLAG_DICTIONARY_ORDERED as ARROW_FLAG_DICTIONARY_ORDERED
from ..types import C_FLAG_MAP_KEYS_SORTED as ARROW_FLAG_MAP_KEYS_SORTED
from ..types import C_FLAG_NULLABLE as ARROW_FLAG_NULLABLE

__all__ = [
    "ARRAY_CAPSULE",
    "ARRAY_STRUCT",
    "ARROW_FLAG_DICTIONARY_ORDERED",
    "ARROW_FLAG_MAP_KEYS_SORTED",
    "ARROW_FLAG_NULLABLE",
    "EXTENSION_METADATA_KEY",
    "EXTENSION_NAME_KEY",
    "SCHEMA_CAPSULE",
    "SCHEMA_STRUCT",
    "STREAM_CAPSULE",
    "ArrayRelease",
    "ArrowArray",
    "ArrowArrayStream",
    "ArrowSchema",
    "SchemaRelease",
    "StreamGetLastError",
    "StreamGetNext",
    "StreamGetSchema",
    "StreamRelease",
    "c_string",
    "capsule_address",
    "decode_metadata",
    "encode_metadata",
    "format_of",
    "new_capsule",
    "parse_format",
    "pointer_table",
]
