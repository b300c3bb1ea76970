"""The hooks through which lower layers call the C data interface and pandas
(:mod:`quiver.hooks`): every declared hook has a provider above its caller, each provider
registers what it is named for, and nothing loads before the first call."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import quiver  # noqa: F401  (the package names the providers)
from quiver import hooks

from .test_layers import _layer

# the modules that declare hooks (importing them declares every hook of the package)
CALLERS = ["quiver.types.datatypes", "quiver.array.base", "quiver.array.cast",
           "quiver.array.select", "quiver.batch._common"]


def _declared() -> dict[str, list[hooks.Hook]]:
    for name in CALLERS:
        importlib.import_module(name)
    return hooks.declared()


def _declaring_modules(name: str) -> list[str]:
    return [m for m in CALLERS
            if any(isinstance(v, hooks.Hook) and v.name == name
                   for v in vars(sys.modules[m]).values())]


def test_every_hook_has_a_provider_above_its_callers() -> None:
    declared = _declared()
    providers = hooks.providers()
    assert set(declared) == set(providers), (
        f"expected the same hooks declared and provided, found declared only "
        f"{sorted(set(declared) - set(providers))}, provided only "
        f"{sorted(set(providers) - set(declared))}"
    )
    for name, module in providers.items():
        callers = _declaring_modules(name)
        assert callers, f"expected a module of CALLERS to declare {name!r}, found none"
        for caller in callers:
            assert _layer(module) > _layer(caller), (
                f"expected the provider of {name!r} ({module}) above {caller}"
            )


def test_each_provider_registers_its_hooks() -> None:
    for name, module in hooks.providers().items():
        function = hooks.Hook(name).resolve()
        assert function.__module__ == module, (
            f"expected {name!r} answered by {module}, found {function.__module__}"
        )
        assert getattr(sys.modules[module], function.__name__) is function


def test_an_unprovided_hook_says_so() -> None:
    with pytest.raises(LookupError, match=r"expected a provider for hook 'no\.such'"):
        hooks.Hook("no.such").call()


def test_nothing_loads_before_the_first_call() -> None:
    code = (
        "import sys, quiver.batch, quiver.array.select, quiver.array.cast\n"
        "before = sorted(m for m in sys.modules if m.startswith(('quiver.cdata', "
        "'quiver.pandas', 'pandas')))\n"
        "import quiver as qv\n"
        "qv.int32().__arrow_c_schema__()\n"
        "print(before, 'quiver.cdata.capsule' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[] True"
