"""Keyword sets written once: a ``TypedDict`` that functions take as ``**kw:
Unpack[...]`` (PEP 692), so that type checkers see each keyword, and
:func:`spell_out` so that ``help()`` and :func:`inspect.signature` list them too.

``open_stream`` and ``open_file`` take the same read keywords, ``new_stream`` and
``new_file`` the same write keywords; declared here once each, adding an option means
one line in its ``TypedDict`` and one field in its options dataclass (a test holds the
two in step).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, ForwardRef, TypeVar

from .errors import ArrowInvalidArgument, ArrowTypeError

_F = TypeVar("_F", bound=Callable[..., Any])


def spell_out(keywords: type, **defaults: Any) -> Callable[[_F], _F]:
    """A decorator that shows the function's ``**kw`` as one keyword-only parameter per
    key of the ``TypedDict`` ``keywords``, annotated as written there, with its default
    from ``defaults`` (None when not given: "the option's own default").  Only the
    signature changes; calls go to the function as they are.

    >>> from typing import TypedDict, Unpack
    >>> class Size(TypedDict, total=False):
    ...     width: int
    ...     height: int
    >>> @spell_out(Size, width=1)
    ... def area(**kw: Unpack[Size]) -> int:
    ...     return kw.get("width", 1) * kw.get("height", 1)
    >>> inspect.signature(area)
    <Signature (*, width: 'int' = 1, height: 'int' = None) -> 'int'>
    """
    unknown = defaults.keys() - keywords.__annotations__.keys()
    if unknown:
        raise TypeError(f"expected defaults for keys of {keywords.__name__}, found {unknown}")

    def apply(fn: _F) -> _F:
        sig = inspect.signature(fn)
        params = [p for p in sig.parameters.values() if p.kind is not p.VAR_KEYWORD]
        for name, annotation in keywords.__annotations__.items():
            if isinstance(annotation, ForwardRef):  # (written as a string)
                annotation = annotation.__forward_arg__
            params.append(inspect.Parameter(
                name, inspect.Parameter.KEYWORD_ONLY,
                default=defaults.get(name), annotation=annotation,
            ))
        fn.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
        return fn

    return apply


def check_keywords(given: Mapping[str, Any], keywords: type, what: str) -> None:
    """Refuse a key of ``given`` that the ``TypedDict`` ``keywords`` lacks (a misspelt
    keyword), with an error that lists the ones there are; ``what`` names them."""
    unknown = given.keys() - keywords.__annotations__.keys()
    if unknown:
        raise ArrowTypeError(
            f"expected {what} among {sorted(keywords.__annotations__)}, found "
            f"{min(unknown)!r}"
        )


def options_from(options: Any, kw: Mapping[str, Any], keywords: type, what: str,
                 make: Callable[..., Any]) -> Any:
    """``options`` (an options object), or ``make(**kw)`` of the keywords ``kw`` given one
    by one, not both.  None values are left out, as not given; a key the ``TypedDict``
    ``keywords`` lacks is refused by :func:`check_keywords` (``what`` names them)."""
    check_keywords(kw, keywords, what)
    given = {k: v for k, v in kw.items() if v is not None}
    if options is not None and given:
        raise ArrowInvalidArgument(
            f"expected either options= or keyword options, found both ({sorted(given)})"
        )
    return options if options is not None else make(**given)
