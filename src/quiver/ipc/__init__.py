"""Arrow IPC: the stream and file formats, messages, dictionaries, compression, tensors.

Names follow pyarrow's ``pyarrow.ipc`` so that habits carry over:

>>> import quiver as qv, quiver.ipc as ipc
>>> batch = qv.record_batch({"a": qv.array([1, 2, 3])})
>>> sink = ipc.BufferOutputStream()
>>> with ipc.new_file(sink, batch.schema) as writer:
...     writer.write_batch(batch)
>>> reader = ipc.open_file(sink.getvalue())
>>> reader.num_record_batches, reader.get_batch(0).to_pylist()[0]
(1, {'a': 1})
"""

from .decoder import END, NEED_DATA, IpcLimits, MessageDecoder
from .metadata import MetadataLimits
from .reader import (
    RecordBatchFileReader,
    RecordBatchStreamReader,
    open_file,
    open_stream,
    read_schema,
    read_table,
)
from .stream_decoder import IpcReadOptions, StreamDecoder
from .tensor import (
    get_tensor_size,
    read_sparse_tensor,
    read_tensor,
    write_sparse_tensor,
    write_tensor,
)
from .writer import (
    BufferOutputStream,
    IpcWriteOptions,
    RecordBatchFileWriter,
    RecordBatchStreamWriter,
    new_file,
    new_stream,
)

__all__ = [
    "END",
    "NEED_DATA",
    "BufferOutputStream",
    "IpcLimits",
    "IpcReadOptions",
    "IpcWriteOptions",
    "MessageDecoder",
    "MetadataLimits",
    "RecordBatchFileReader",
    "RecordBatchFileWriter",
    "RecordBatchStreamReader",
    "RecordBatchStreamWriter",
    "StreamDecoder",
    "get_tensor_size",
    "new_file",
    "new_stream",
    "open_file",
    "open_stream",
    "read_schema",
    "read_sparse_tensor",
    "read_table",
    "read_tensor",
    "write_sparse_tensor",
    "write_tensor",
]
