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

# Names load their module on first use (PEP 562): a command that only decodes metadata
# does not import the readers, writers and codec libraries.
_WHERE = {
    "END": "decoder", "NEED_DATA": "decoder", "IpcLimits": "decoder",
    "MessageDecoder": "decoder",
    "FileEncoder": "file_encoder", "StreamEncoder": "encoder",
    "MetadataLimits": "metadata",
    "RecordBatchFileReader": "reader", "RecordBatchStreamReader": "reader",
    "open_file": "reader", "open_stream": "reader", "read_schema": "reader",
    "read_table": "reader",
    "IpcReadOptions": "stream_decoder", "StreamDecoder": "stream_decoder",
    "get_tensor_size": "tensor", "read_sparse_tensor": "tensor", "read_tensor": "tensor",
    "write_sparse_tensor": "tensor", "write_tensor": "tensor",
    "BufferOutputStream": "writer", "IpcWriteOptions": "encoder",
    "RecordBatchFileWriter": "writer", "RecordBatchStreamWriter": "writer",
    "new_file": "writer", "new_stream": "writer",
}


def __getattr__(name: str) -> object:
    import importlib

    module = _WHERE.get(name)
    if module is not None:
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
        globals()[name] = value
        return value
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise  # the submodule exists and needs something missing: say so
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))


__all__ = [
    "END",
    "NEED_DATA",
    "BufferOutputStream",
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
