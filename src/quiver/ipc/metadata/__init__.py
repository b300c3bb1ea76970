"""IPC metadata: flatbuffer tables <-> plain frozen dataclasses (Schema.fbs, Message.fbs,
File.fbs, Tensor.fbs, SparseTensor.fbs; Columnar spec "Serialization and Interprocess
Communication").

The package is split by job:

- :mod:`.model`: the plain objects everything else in quiver sees (:class:`Message`,
  :class:`SchemaMessage`, :class:`RecordBatch`, :class:`DictionaryBatch`, :class:`Footer`,
  :class:`Block`, :class:`Tensor`, :class:`SparseTensor`, :class:`MetadataLimits`), the enum
  numbers of the ``.fbs`` files and the one table of codec names;
- :mod:`.decode` and :mod:`.fields`: the checked decoder, the only code that turns
  flatbuffer tables into schema objects (:mod:`.fields`: Schema, Field and Type tables;
  :mod:`.decode`: messages, footers, tensors, and the entry point :func:`decode_message`
  with its hot path for plain RecordBatch messages);
- :mod:`.fast`: the one RecordBatch table decoder (numpy views of FieldNodes and Buffers);
- :mod:`.shape`: the steady shapes (:func:`record_batch_shape`);
- :mod:`.encode`: the plain objects -> flatbuffer bytes, and the RecordBatch templates.

Only :mod:`.fast` and :mod:`.encode` import numpy; their names are loaded from here on first
use, so that ``from quiver.ipc import metadata`` and reading a schema or a footer run
without numpy.

>>> from quiver import types as t
>>> sm = SchemaMessage(t.schema([("d", t.dictionary(t.int8(), t.string()))]), {(0,): 7})
>>> footer = decode_footer(encode_footer(Footer(V5, sm, (), (Block(8, 120, 64),))))
>>> footer.schema.dictionary_ids, footer.record_batches[0].body_length
({(0,): 7}, 64)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..._lazy import lazy_attributes
from . import model as _model
from .decode import (
    decode_footer,
    decode_message,
    decode_message_general,
    decode_schema,
    fast_record_batch_message,
)
from .fields import plain_field
from .model import *  # the plain objects, the enum versions and the codec table

if TYPE_CHECKING:
    from .encode import (
        RecordBatchTemplate,
        encode_footer,
        encode_message,
        encode_message_general,
        encode_schema,
        encode_schema_table,
        field_position,
        follow,
        record_batch_template,
    )
    from .fast import read_record_batch
    from .shape import RecordBatchShape, record_batch_shape

# the names of the modules that import numpy, loaded on first use (PEP 562)
_LAZY = {
    "RecordBatchShape": "shape",
    "read_record_batch": "fast",
    "record_batch_shape": "shape",
    "RecordBatchTemplate": "encode",
    "encode_schema_table": "encode",
    "field_position": "encode",
    "follow": "encode",
    "encode_footer": "encode",
    "encode_message": "encode",
    "encode_message_general": "encode",
    "encode_schema": "encode",
    "record_batch_template": "encode",
}


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())


__all__ = [
    *_model.__all__,
    "RecordBatchShape",
    "RecordBatchTemplate",
    "decode_footer",
    "decode_message",
    "decode_schema",
    "encode_footer",
    "encode_message",
    "encode_message_general",
    "encode_schema",
    "read_record_batch",
    "record_batch_shape",
    "record_batch_template",
]
