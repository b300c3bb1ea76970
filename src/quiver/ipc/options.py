"""Read options: :class:`IpcReadOptions` and the keywords that spell its fields out.

Every reader and decoder takes these (the stream and file readers, the sans-IO
:class:`~quiver.ipc.stream_decoder.StreamDecoder` and
:class:`~quiver.ipc.file_decoder.FileDecoder`, the Spark source, the command line).  This
module needs neither numpy nor the body loader, so that reading a footer alone
(``quiver schema``) stays light.

>>> IpcReadOptions(columns=["a"]).validate
'structural'
>>> read_options(None, {"validate": "full"}).validate
'full'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from .. import errors as E
from .._keywords import options_from
from .decoder import DEFAULT_LIMITS, IpcLimits

VALIDATION_LEVELS = ("structural", "full")


@dataclass(frozen=True, slots=True)
class IpcReadOptions:
    """Reader options.

    ``columns``: names or indices to load (others are skipped without decoding);
    ``validate``: ``"structural"`` (default: buffer bounds and sizes, first and last
    offsets, child lengths, O(1) per array) or ``"full"`` (also every offset, UTF-8 string,
    dictionary index, union code, run end, view: O(rows)).  There is no ``"none"`` (as
    nanoarrow has): the structural checks are what turn malformed bytes into a
    :class:`~quiver.errors.FormatError` rather than an IndexError or a wrong view, they
    cost O(1) per array, and the steady fast path already runs them on plain ints, so
    skipping them would save little and break the promise that bad input raises quiver's
    format error.  ``validate="none"`` is refused with an error that says so;
    ``ensure_native_endian``: swap big-endian data to native order (default) or keep
    it as written (such arrays are not validated and are meant for passing through, not
    for value conversion); ``use_threads``: decompress buffers on a thread pool;
    ``limits``: safety limits.
    """

    columns: Sequence[int | str] | None = None
    validate: str = "structural"
    ensure_native_endian: bool = True
    use_threads: bool = True
    limits: IpcLimits = DEFAULT_LIMITS

    def __post_init__(self) -> None:
        if self.validate == "none":
            raise E.ArrowInvalidArgument(
                "expected validate 'structural' or 'full', found 'none': the structural "
                "checks guard every buffer access and always run (O(1) per array); use "
                "'structural'"
            )
        if self.validate not in VALIDATION_LEVELS:
            raise E.ArrowInvalidArgument(
                f"expected validate in {VALIDATION_LEVELS}, found {self.validate!r}"
            )


DEFAULT_OPTIONS = IpcReadOptions()  # frozen: one instance serves every default reader


class ReadOptionKeywords(TypedDict, total=False):
    """The fields of :class:`IpcReadOptions` as keywords (None: the field's default),
    which the decoders, the readers, ``open_stream`` and ``open_file`` take."""

    columns: Sequence[int | str] | None
    validate: str | None
    ensure_native_endian: bool | None
    use_threads: bool | None
    limits: IpcLimits | None


def read_options(
    options: IpcReadOptions | None, kw: Mapping[str, Any], keywords: type = ReadOptionKeywords
) -> IpcReadOptions:
    """``options``, or options made of the keywords ``kw`` (not both; None values are
    left out, as not given).  A key that the ``TypedDict`` ``keywords`` (the caller's
    whole keyword set) lacks is refused with the list."""
    if not kw:  # (the common call: no keywords)
        return DEFAULT_OPTIONS if options is None else options
    return options_from(options, kw, keywords, "a read keyword", _read_options)


def _read_options(**kw: Any) -> IpcReadOptions:
    return IpcReadOptions(**kw) if kw else DEFAULT_OPTIONS


__all__ = [
    "DEFAULT_OPTIONS",
    "VALIDATION_LEVELS",
    "IpcReadOptions",
    "ReadOptionKeywords",
    "read_options",
]
