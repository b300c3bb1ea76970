"""One piece for the plain read-only attributes of the data classes: an attribute whose
value is another attribute, a private slot (``schema`` reads ``_schema``) or a short path
(a map type's ``key_type`` reads ``key_field.type``), declared in one line instead of a
four-line property each."""

from __future__ import annotations

from operator import attrgetter
from typing import Any


def readonly(path: str, doc: str | None = None) -> Any:
    """A read-only property whose value is ``self.<path>`` (dots allowed), documented by
    ``doc``.

    Its getter is :func:`operator.attrgetter`, so reading it runs no Python frame (an
    array's ``type``, ``offset`` and ``buffers`` and a type's ``bit_width`` are read on
    every path).  Assigning to it raises AttributeError, as for any property without a
    setter.

    >>> class Box:
    ...     __slots__ = ("_size",)
    ...     size: int = readonly("_size", "How big the box is.")
    ...     double = readonly("size.real")
    ...     def __init__(self, size: int) -> None:
    ...         self._size = size
    >>> Box(3).size, Box(3).double, Box.size.__doc__
    (3, 3, 'How big the box is.')
    """
    return property(attrgetter(path), doc=doc)
