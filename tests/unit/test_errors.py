"""Tests for quiver.errors: the exception hierarchy."""

from __future__ import annotations

from quiver.errors import ArrowError, FormatError


def test_errors_are_arrow_errors() -> None:
    assert issubclass(FormatError, ArrowError)
