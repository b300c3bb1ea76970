"""Encapsulated message framing (Columnar spec, "Encapsulated message format").

A message is::

    <continuation: 0xFFFFFFFF> <metadata_size: int32 LE> <flatbuffer Message> <padding> <body>

``metadata_size`` counts the flatbuffer plus its padding, so that the body starts on an
8-byte boundary (64 for tensors if asked).  End of stream is the continuation marker
followed by a zero length.  Streams written before Arrow 0.15 have no continuation marker:
the int32 length comes first and a bare zero length ends the stream.

File format: ``ARROW1`` + 2 bytes of padding, the stream (with EOS), the footer
flatbuffer, its int32 length and ``ARROW1`` again.
"""

from __future__ import annotations

import struct

from ..errors import FramingError, TruncatedError

CONTINUATION = 0xFFFFFFFF
CONTINUATION_BYTES = b"\xff\xff\xff\xff"
EOS = CONTINUATION_BYTES + b"\x00\x00\x00\x00"
LEGACY_EOS = b"\x00\x00\x00\x00"
MAGIC = b"ARROW1"
FILE_HEADER = MAGIC + b"\x00\x00"
FILE_TRAILER_SIZE = 4 + len(MAGIC)  # footer length + magic

_I32 = struct.Struct("<i")
_PREFIX = struct.Struct("<Ii")


_FOREIGN_MAGIC = (
    (b"PAR1", "a Parquet file (magic b'PAR1'); read it with a Parquet reader"),
    (b"FEA1", "a Feather v1 file (magic b'FEA1'), a format older than Arrow IPC; convert it "
              "with pandas or pyarrow.feather first"),
    (b"\x1f\x8b", "gzip-compressed data; decompress it first"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed data (a whole compressed file, not Arrow's "
                           "per-buffer compression); decompress it first"),
    (b"PK\x03\x04", "a ZIP archive"),
)


def describe_foreign(head: bytes, *, text_too: bool = True) -> str | None:
    """What the first bytes of a non-Arrow input look like (None: nothing recognised).

    >>> describe_foreign(b"PAR1\\x15\\x04")
    "a Parquet file (magic b'PAR1'); read it with a Parquet reader"
    >>> describe_foreign(b"a,b\\n1,2\\n")
    "text (b'a,b\\\\n1,2\\\\n'), such as CSV or JSON, not Arrow IPC bytes"
    """
    for magic, what in _FOREIGN_MAGIC:
        if head.startswith(magic):
            return what
    if text_too and head:
        sample = head[:32]
        try:
            text = sample.decode("utf-8")
        except UnicodeDecodeError:
            return None
        if all(ch.isprintable() or ch in "\t\r\n" for ch in text):
            return f"text ({sample!r}), such as CSV or JSON, not Arrow IPC bytes"
    return None


def padding_for(n: int, alignment: int = 8) -> int:
    """Bytes of padding that bring ``n`` up to a multiple of ``alignment``."""
    return (-n) % alignment


def frame_message(metadata: bytes, body_length: int = 0, *, alignment: int = 8) -> bytes:
    """The prefix, metadata and padding of one message (the body is written after it).

    ``body_length`` is not written here (it lives inside the metadata); it is accepted
    so callers can pass a message's parts uniformly.

    >>> framed = frame_message(b"abc")
    >>> len(framed), framed[:4] == CONTINUATION_BYTES, int.from_bytes(framed[4:8], "little")
    (16, True, 8)
    """
    pad = padding_for(8 + len(metadata), alignment)
    return _PREFIX.pack(CONTINUATION, len(metadata) + pad) + metadata + b"\x00" * pad


def read_frame(buf: memoryview | bytes, pos: int = 0) -> tuple[memoryview, int, int]:
    """Parse the prefix at ``pos`` of a complete buffer.

    Returns ``(metadata view, body start, metadata length including the prefix)``.
    Bounds are checked; a zero length (EOS) gives an empty metadata view.  Errors are
    raised by the caller's decoder for streaming input; this helper is for whole buffers
    (files, tensors).
    """
    mv = memoryview(buf)
    if pos < 0 or pos + 4 > len(mv):
        raise TruncatedError(
            f"expected a 4-byte message prefix, found {max(len(mv) - pos, 0)} bytes",
            offset=pos,
        )
    (first,) = _I32.unpack_from(mv, pos)
    if first == -1:
        if pos + 8 > len(mv):
            raise TruncatedError(
                f"expected an int32 metadata length, found {len(mv) - pos - 4} bytes",
                offset=pos + 4,
            )
        (length,) = _I32.unpack_from(mv, pos + 4)
        start = pos + 8
    else:
        length = first
        start = pos + 4
    if length < 0:
        raise FramingError(
            f"expected a non-negative metadata length, found {length}", offset=start - 4
        )
    if start + length > len(mv):
        raise TruncatedError(
            f"expected {length} bytes of metadata, found {len(mv) - start}", offset=start
        )
    return mv[start : start + length], start + length, start + length - pos
