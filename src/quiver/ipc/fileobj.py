"""What the readers and writers say about the file objects they are given."""

from __future__ import annotations

from typing import Any

from .. import errors as E


def text_mode_error(obj: Any, expected: str, advice: str) -> E.ArrowTypeError:
    """The error for a text-mode file object where a binary one is needed: ``expected``
    says what was (``a binary file object``), ``advice`` what to do instead."""
    return E.ArrowTypeError(
        f"expected {expected}, found a text-mode {type(obj).__name__} "
        f"({getattr(obj, 'name', '?')!r}); {advice}"
    )
