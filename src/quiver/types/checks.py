"""What a type must satisfy beyond its own shape, checked without data: time zone strings
(Schema.fbs, "Timestamp"), the storage of the canonical extension types
(CanonicalExtensions.rst) and the int32 widths of the format (those live in
the type classes: ``_check_size``).

Used by the type factories (a bad parameter is refused where it is given) and by
validation of schemas read from files (:func:`type_problems`, naming the field path).

Which level refuses what (a decision): a canonical extension over storage its
definition excludes cannot be interpreted at all, and pyarrow refuses such a schema when it
reads it, so it is a problem at every level (the default, structural one included).  A time
zone that is no IANA name and no ``[+-]HH:MM`` offset leaves the stored instants (UTC)
meaningful: pyarrow reads such files and fails only when it converts the values to zoned
objects, so quiver reads them at the structural level too and the full level reports them.

>>> check_tz("+05:30", "tz")
>>> tz_problem("+0530")[-29:]
"MM at most 59), found '+0530'"
"""

from __future__ import annotations

import functools
import re
import zoneinfo

from ..errors import ArrowInvalidArgument
from .datatypes import (
    DataType,
    ExtensionType,
    TimestampType,
    extension_storage_problem,
    storage_of,
)

__all__ = ["check_tz", "extension_storage_problem", "type_problems", "tz_problem"]

_OFFSET = re.compile(r"[+-](\d\d):(\d\d)")
# an IANA name: letters, digits and _ + - in parts joined by "/" (zoneinfo's own rule
# refuses absolute and relative paths; this one also refuses what no database holds)
_IANA = re.compile(r"[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+)*")


@functools.cache
def _tz_database() -> bool:
    """Whether this machine has a time zone database to look names up in."""
    try:
        return bool(zoneinfo.available_timezones())
    except OSError:
        return False


@functools.lru_cache(maxsize=256)
def tz_problem(tz: str, what: str = "the time zone") -> str | None:
    """Why ``tz`` is no time zone the format allows (an IANA name, or ``[+-]HH:MM`` with
    HH <= 23 and MM <= 59), or None; ``what`` names it in the message.  A name is looked
    up when the machine has a time zone database; without one, any well-formed name
    passes."""
    if tz == "":  # an empty zone is an unset one (Schema.fbs): naive timestamps
        return None
    m = _OFFSET.fullmatch(tz)
    if m:
        if int(m.group(1)) <= 23 and int(m.group(2)) <= 59:
            return None
    elif tz[:1] not in "+-" and _IANA.fullmatch(tz):
        if not _tz_database():
            return None
        try:
            zoneinfo.ZoneInfo(tz)
            return None
        except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
            pass
    return (f"expected {what} as an IANA time zone name or a [+-]HH:MM offset (HH at most "
            f"23, MM at most 59), found {tz!r}")


def check_tz(tz: str | None, what: str) -> None:
    """Refuse a time zone the format does not allow (``what`` names the parameter)."""
    if tz is None:
        return
    if not isinstance(tz, str):
        raise ArrowInvalidArgument(f"expected {what} as str or None, found {tz!r}")
    problem = tz_problem(tz, what)
    if problem is not None:
        raise ArrowInvalidArgument(problem)


def type_problems(dtype: DataType, path: str, *, full: bool) -> list[tuple[str, str]]:
    """The problems of ``dtype`` and the types below it as (field path, message): canonical
    extensions over the wrong storage (any level) and, when ``full``, malformed time zones.
    Children extend ``path`` as validation does (``col.item``)."""
    out: list[tuple[str, str]] = []
    _walk(dtype, path, full, out)
    return out


def _walk(dtype: DataType, path: str, full: bool, out: list[tuple[str, str]]) -> None:
    while isinstance(dtype, ExtensionType):
        problem = extension_storage_problem(dtype)
        if problem is not None:
            out.append((path, problem))
        dtype = dtype.storage_type
    if full and isinstance(dtype, TimestampType) and dtype.tz is not None:
        problem = tz_problem(dtype.tz)
        if problem is not None:
            out.append((path, problem))
    value_type = getattr(dtype, "value_type", None)  # a dictionary's values
    if isinstance(value_type, DataType) and not dtype.fields:
        _walk(value_type, path, full, out)
    for f in storage_of(dtype).fields:
        _walk(f.type, f"{path}.{f.name}" if path else f.name, full, out)

