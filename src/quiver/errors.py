"""The whole quiver exception hierarchy.

One root, :class:`ArrowError`, with a small tree under it:

- :class:`ArrowInvalidArgument` / :class:`ArrowTypeError` -- the caller misused an API
  (also ``ValueError`` / ``TypeError``).
- :class:`ArrowInvalid` -- data that breaks the columnar spec (validation failures).
- :class:`FormatError` -- bad input bytes (also ``ValueError``), with the subclasses
  :class:`FramingError`, :class:`MetadataError`, :class:`BodyError` and
  :class:`TruncatedError` (also ``EOFError``).
- :class:`NotSupported` -- valid Arrow that quiver does not handle; the message names the fix.
- :class:`DictionaryError` and :class:`CompressionError` for those two IPC features.
- :class:`LimitExceeded` -- input that is well formed but larger than a configured limit.

Errors about bytes say where: ``offset`` (absolute byte offset), ``message_index`` and
``field_path`` are kept as attributes and rendered into the message.
"""

from __future__ import annotations


class ArrowError(Exception):
    """Root of every error quiver raises on purpose.

    ``offset``, ``message_index`` and ``field_path`` locate the problem when known.
    """

    def __init__(
        self,
        message: str,
        *,
        offset: int | None = None,
        message_index: int | None = None,
        field_path: str | None = None,
    ) -> None:
        self.reason = message
        self.offset = offset
        self.message_index = message_index
        self.field_path = field_path
        super().__init__(self._render())

    def _render(self) -> str:
        where = []
        if self.message_index is not None:
            where.append(f"message {self.message_index}")
        if self.field_path:
            where.append(f"field {self.field_path!r}")
        if self.offset is not None:
            where.append(f"byte offset {self.offset}")
        if not where:
            return self.reason
        return f"{self.reason} (at {', '.join(where)})"

    def locate(
        self,
        *,
        offset: int | None = None,
        message_index: int | None = None,
        field_path: str | None = None,
    ) -> ArrowError:
        """Fill in location details that are not known yet and return ``self``."""
        if self.offset is None and offset is not None:
            self.offset = offset
        if self.message_index is None and message_index is not None:
            self.message_index = message_index
        if not self.field_path and field_path:
            self.field_path = field_path
        self.args = (self._render(),)
        return self


class ArrowInvalidArgument(ArrowError, ValueError):
    """The caller passed a value that an API does not accept."""


class ArrowTypeError(ArrowError, TypeError):
    """The caller passed an object of the wrong kind, or types that do not match."""


class ArrowIndexError(ArrowError, IndexError):
    """The caller asked for a position or name that does not exist."""


class ArrowKeyError(ArrowError, KeyError):
    """The caller asked for a field name that does not exist."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class ArrowInvalid(ArrowError, ValueError):
    """Array data that breaks the columnar specification (found by validation)."""


class FormatError(ArrowError, ValueError):
    """Input bytes that are not valid Arrow IPC."""


class FramingError(FormatError):
    """An encapsulated message's framing (marker, length, padding) is wrong."""


class MetadataError(FormatError):
    """A flatbuffer metadata table is malformed or inconsistent."""


class BodyError(FormatError):
    """A message body does not match its metadata (buffers out of range, bad sizes)."""


class TruncatedError(FormatError, EOFError):
    """The input ended before a complete message or file."""


class NotSupported(ArrowError):
    """Valid Arrow data that quiver does not handle; the message names the way out."""


class DictionaryError(FormatError):
    """A dictionary batch or a dictionary-encoded field is invalid or unknown."""


class CompressionError(FormatError):
    """A compressed buffer cannot be decompressed, or the codec is unknown."""


class LimitExceeded(FormatError):
    """Input larger than a configured safety limit; raise the limit if the source is trusted."""


class StatisticsWarning(UserWarning):
    """A file's footer statistics could not be used to skip batches (damaged, over the
    metadata limit, not one entry per batch in order, or of other columns than the
    file's): every batch is read, and results stay exact."""


__all__ = [
    "ArrowError",
    "ArrowIndexError",
    "ArrowInvalid",
    "ArrowInvalidArgument",
    "ArrowKeyError",
    "ArrowTypeError",
    "BodyError",
    "CompressionError",
    "DictionaryError",
    "FormatError",
    "FramingError",
    "LimitExceeded",
    "MetadataError",
    "NotSupported",
    "StatisticsWarning",
    "TruncatedError",
]
