"""Hooks: how a lower layer calls code that lives in a higher one, without importing it.

Theory of operation.  Imports point down the layers (``tests/unit/test_layers.py``), yet a
few methods of low classes are answered by code above them: ``DataType.__arrow_c_schema__``
and ``Array.__arrow_c_array__`` by the C data interface (:mod:`quiver.cdata`, above the
batch layer), ``Array.to_pandas`` and ``RecordBatch.from_pandas`` by the pandas
conversions.  Each such call goes through a :class:`Hook`:

1. the lower module declares it, ``EXPORT = hooks.Hook("cdata.export_array")``, and calls
   ``EXPORT.call(...)`` as it would the function it stands for;
2. the package ``quiver/__init__.py`` (the top layer, always imported before any
   submodule) names the module that answers each hook, :func:`provide`;
3. that module, when imported, hands over its function, :func:`register`.

The first call of a hook imports its provider (so ``import quiver.types`` does not load
ctypes or pandas) and keeps the function as ``hook.call``; later calls cost one attribute
read.  A hook
nobody provides raises :class:`LookupError` naming the hook and the expected module.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

# hook name -> the function registered for it
_FUNCTIONS: dict[str, Callable[..., Any]] = {}
# hook name -> the module that registers it when imported
_PROVIDERS: dict[str, str] = {}
# every declared hook, by name (a hook may be declared by several modules)
_DECLARED: dict[str, list[Hook]] = {}


class Hook:
    """A call point in a lower layer, answered by the function a higher module registers
    under ``name``: call it as ``hook.call(...)``.  ``call`` is that function itself once
    known (one attribute read, no extra frame: the exports stay as fast as a direct call),
    and until then a stand-in that imports the provider and forwards."""

    __slots__ = ("call", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self.call: Callable[..., Any] = _FUNCTIONS.get(name) or self._first_call
        _DECLARED.setdefault(name, []).append(self)

    def _first_call(self, *args: Any, **kwargs: Any) -> Any:
        return self.resolve()(*args, **kwargs)

    def resolve(self) -> Callable[..., Any]:
        """The registered function, importing the provider module on the first call."""
        function = _FUNCTIONS.get(self.name)
        if function is None:
            module = _PROVIDERS.get(self.name)
            if module is None:
                raise LookupError(
                    f"expected a provider for hook {self.name!r} (quiver/__init__.py), "
                    "found none"
                )
            importlib.import_module(module)
            function = _FUNCTIONS.get(self.name)
            if function is None:
                raise LookupError(
                    f"expected {module} to register hook {self.name!r} when imported, "
                    "found it unregistered"
                )
        self.call = function
        return function

    def __repr__(self) -> str:
        return f"Hook({self.name!r})"


def provide(providers: dict[str, str]) -> None:
    """Name the module that answers each hook (hook name -> module), for the first call to
    import; called from the top of the package."""
    _PROVIDERS.update(providers)


def register(name: str, function: Callable[..., Any]) -> None:
    """Answer hook ``name`` with ``function`` (called by the provider module at import)."""
    _FUNCTIONS[name] = function
    for hook in _DECLARED.get(name, ()):
        hook.call = function


def providers() -> dict[str, str]:
    """A copy of the hook name -> provider module table."""
    return dict(_PROVIDERS)


def declared() -> dict[str, list[Hook]]:
    """The declared hooks, by name (those of the modules imported so far)."""
    return {name: list(hooks) for name, hooks in _DECLARED.items()}
