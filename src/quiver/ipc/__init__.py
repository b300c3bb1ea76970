"""Arrow IPC: the stream and file formats, messages, dictionaries, compression, tensors."""
