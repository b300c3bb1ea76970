"""One piece for the plain read-only attributes of the data classes: an attribute whose
value is a private slot of the same name (``schema`` reads ``_schema``), declared in one
line instead of a four-line property each."""

from __future__ import annotations

from operator import attrgetter
from typing import Any


def readonly(slot: str, doc: str) -> Any:
    """A read-only property whose value is ``self.<slot>``, documented by ``doc``.

    Its getter is :func:`operator.attrgetter`, so reading it runs no Python frame (the
    arrays' ``type``, ``offset`` and ``buffers`` are read on every path).  Assigning to
    it raises AttributeError, as for any property without a setter.

    >>> class Box:
    ...     __slots__ = ("_size",)
    ...     size: int = readonly("_size", "How big the box is.")
    ...     def __init__(self, size: int) -> None:
    ...         self._size = size
    >>> Box(3).size, Box.size.__doc__
    (3, 'How big the box is.')
    """
    return property(attrgetter(slot), doc=doc)
