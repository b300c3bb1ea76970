"""Helpers for packages that re-export their submodules' names: PEP 562 hooks for names
loaded on first use (so that importing the package loads none of them), and the public
home of re-exported classes."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_attributes(
    package: str, where: dict[str, str], namespace: dict[str, Any], *, submodules: bool = False
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``: ``where`` maps each lazy name to
    the submodule (relative to the package) that defines it.  The first look-up imports
    that submodule and keeps the value in ``namespace`` (the package's globals), so later
    look-ups are plain attributes.  With ``submodules``, any other name is tried as a
    submodule of the package."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is not None:
            value = getattr(importlib.import_module(f"{package}.{module}"), name)
            namespace[name] = value
            return value
        if submodules:
            try:
                return importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{package}.{name}":
                    raise  # the submodule exists and needs something missing: say so
        raise AttributeError(f"module {package!r} has no attribute {name!r}") from None

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(where))

    return __getattr__, __dir__


def adopt_classes(package: str, namespace: dict[str, Any]) -> None:
    """Make ``package`` the module of the classes in its ``namespace`` that its submodules
    define, so that pickles and reprs name ``package.X`` whichever submodule defines X (a
    pickle from one quiver version, a Spark driver's, loads in another, its executors')."""
    for obj in list(namespace.values()):
        if isinstance(obj, type) and obj.__module__.startswith(package + "."):
            obj.__module__ = package
