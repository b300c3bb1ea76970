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

from .._lazy import lazy_attributes

# Names load their module on first use (PEP 562): a command that only decodes metadata
# does not import the readers, writers and codec libraries.
_WHERE = {
    "END": "decoder", "NEED_DATA": "decoder", "IpcLimits": "decoder",
    "MessageDecoder": "decoder",
    "FileDecoder": "file_decoder", "FileEncoder": "file_encoder", "StreamEncoder": "encoder",
    "MetadataLimits": "metadata",
    "RecordBatchFileReader": "reader", "RecordBatchStreamReader": "reader",
    # the entry points that take a path take a URL too (quiver.ipc.remote: through fsspec,
    # loaded only for a URL; a local path goes straight to the reader or writer)
    "open_file": "remote", "open_stream": "remote", "read_schema": "remote",
    "read_table": "remote",
    "IpcReadOptions": "options", "StreamDecoder": "stream_decoder",
    "get_tensor_size": "tensor", "read_sparse_tensor": "tensor", "read_tensor": "tensor",
    "write_sparse_tensor": "tensor", "write_tensor": "tensor",
    "BufferOutputStream": "writer", "IpcWriteOptions": "encoder",
    "RecordBatchFileWriter": "writer", "RecordBatchStreamWriter": "writer",
    "new_file": "remote_write", "new_stream": "remote_write",
}


__getattr__, __dir__ = lazy_attributes(__name__, _WHERE, globals(), submodules=True)


__all__ = [
    "END",
    "NEED_DATA",
    "BufferOutputStream",
    "FileDecoder",
    "FileEncoder",
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
    "StreamEncoder",
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
