"""The layer order of the package, held by reading every module's imports with ``ast``.

Cross-module on purpose: it reads every module of the package.

Layers, bottom to top (README, "Architecture"); a module may import its own layer and the
ones below, never one above:

0. errors      ``errors``, ``_version``, ``_readonly``, ``_keywords``, ``cdata.capsule``
               (ctypes structs, capsules)
1. types       ``types/*``, ``cdata.schema`` (format strings and schema capsules -> types)
2. layout      ``layout``, ``buffers``, ``fs/*`` (URLs through fsspec: errors, retries,
               ranged reads; below the IPC readers that use them)
3. array       ``array/*``, ``cdata.array`` and ``cdata.import_array`` (arrays to and from
               the C data interface), ``pandas_out`` (arrays and batches to pandas:
               ``Array.to_pandas`` calls it), ``tensor/*`` (siblings of arrays over buffers)
4. batch       ``batch/*``, ``cdata.stream`` and ``cdata.import_batch`` (batches and streams
               to and from the C interfaces), ``pandas_in`` (pandas to arrays and batch
               parts), ``compute``, ``filters`` (work over arrays and batches; the IPC
               reader and the Spark source use filters)
5. ipc         ``ipc/*``
6. interop     ``interop/*``, ``integration/*`` (other libraries' objects; JSON)
7. top         ``constructors`` (public factories that take foreign objects), the package
               ``__init__`` (lazy re-exports), ``spark/*``, ``cli/*``, ``job``, ``__main__``

Every import counts, at module level or inside a function (``if TYPE_CHECKING:`` blocks
do not), and so does ``importlib.import_module("literal")``.  The test fails, naming the
module, line and import, when an import (a) points to a higher layer, (b) closes a cycle
among modules, or (c) sits inside a function without an entry in :data:`LAZY_ALLOWED`:
function-local imports are for deferring heavy or optional modules only.

There are no exceptions beyond :data:`LAZY_ALLOWED`, each with its reason.
"""

from __future__ import annotations

import ast
import fnmatch
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "quiver"

LAYERS = ["errors", "types", "layout", "array", "batch", "ipc", "interop", "top"]

# module pattern -> layer; the first match wins
LAYER_OF: list[tuple[str, str]] = [
    ("quiver.errors", "errors"),
    ("quiver._version", "errors"),
    ("quiver._readonly", "errors"),
    ("quiver._keywords", "errors"),
    ("quiver._lazy", "errors"),
    ("quiver.cdata", "errors"),  # the package: a docstring only
    ("quiver.cdata.capsule", "errors"),
    ("quiver.types", "types"),
    ("quiver.types.*", "types"),
    ("quiver.registry", "types"),
    ("quiver.cdata.schema", "types"),
    ("quiver.layout", "layout"),
    ("quiver.fs", "layout"),
    ("quiver.fs.*", "layout"),
    ("quiver.buffers", "layout"),
    ("quiver.array", "array"),
    ("quiver.array.*", "array"),
    ("quiver.cdata.array", "array"),
    ("quiver.cdata.import_array", "array"),
    ("quiver.pandas_out", "array"),
    ("quiver.tensor", "array"),
    ("quiver.tensor.*", "array"),
    ("quiver.batch", "batch"),
    ("quiver.batch.*", "batch"),
    ("quiver.cdata.stream", "batch"),
    ("quiver.cdata.import_batch", "batch"),
    ("quiver.pandas_in", "batch"),
    ("quiver.compute", "batch"),
    ("quiver.filters", "batch"),
    ("quiver.ipc", "ipc"),
    ("quiver.ipc.*", "ipc"),
    ("quiver.interop", "interop"),
    ("quiver.interop.*", "interop"),
    ("quiver.integration", "interop"),
    ("quiver.integration.*", "interop"),
    ("quiver", "top"),
    ("quiver.__main__", "top"),
    ("quiver.constructors", "top"),
    ("quiver.spark", "top"),
    ("quiver.spark.*", "top"),
    ("quiver.cli", "top"),
    ("quiver.cli.*", "top"),
    ("quiver.job", "top"),
]

# function-local imports that are allowed: (importing module, imported module, why);
# patterns as fnmatch
LAZY_ALLOWED: list[tuple[str, str, str]] = [
    ("*", "pandas*", "pandas: an optional dependency, heavy to import"),
    ("*", "pyarrow*", "pyarrow: optional, used only to compare or convert"),
    ("*", "pyspark*", "pyspark: optional and very heavy (it starts nothing, but imports much)"),
    ("*", "rich*", "rich: optional, only for progress bars and tables on a terminal"),
    ("*", "scipy*", "scipy: optional, only for sparse tensor conversion"),
    ("*", "fcntl", "POSIX only: file locking, absent on Windows"),
    ("*", "quiver.cdata.*",
     "ctypes and the C structs, loaded by the __arrow_c_*__ methods on first export (and by "
     "casts to another library's type), so that importing types, arrays and batches does not"),
    ("quiver.cli*", "quiver.*",
     "the command line: each command loads only what it uses (start-up budget of "
     "benchmarks/bench_cli.py)"),
    ("quiver.job", "quiver.*", "an entry point: the Spark job loads IPC and Spark when run"),
    ("quiver.spark", "quiver.spark.*",
     "the Spark package registers its source on demand, so `import quiver.spark` does not "
     "import pyspark"),
    ("quiver.ipc.metadata.decode", "quiver.ipc.metadata.fast",
     "numpy: the RecordBatch decoder (numpy views) is bound on the first RecordBatch header, "
     "so that schemas and footers are read without numpy (quiver schema start-up)"),
    ("quiver.ipc.*", "quiver.ipc.compression",
     "the codec libraries (lz4, zstandard, cramjam) load only when a body is compressed or "
     "decompressed: uncompressed reads and writes, and `quiver schema`, never import them"),
    ("quiver.fs.url", "fsspec*",
     "fsspec: the optional extra quiver[s3], imported only when a URL is opened"),
    ("quiver.ipc.file_decoder", "quiver.ipc.batch_loader",
     "FileDecoder reads the footer and the schema without numpy (the `quiver schema` "
     "start-up budget); the batch loader, which needs numpy, loads with the first batch"),
    ("quiver.ipc.file_decoder", "quiver.ipc.options",
     "the read options (and the keyword machinery, which imports inspect) load when options "
     "are given as keywords or a batch is read: not for the footer alone (`quiver schema`)"),
]

@dataclass(frozen=True)
class Import:
    """One import statement: where it is and what it loads."""

    module: str
    line: int
    target: str
    local: bool


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _resolve(module: str, is_package: bool, node: ast.ImportFrom, known: set[str]) -> list[str]:
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        stem = ".".join(base + ([node.module] if node.module else []))
    else:
        stem = node.module or ""
    # ``from pkg import sub`` imports the submodule ``pkg.sub`` when there is one
    subs = [f"{stem}.{a.name}" for a in node.names if f"{stem}.{a.name}" in known]
    return subs or [stem]


def _imports(path: Path, known: set[str]) -> list[Import]:
    return _imports_of_source(_module_name(path), path.name == "__init__.py",
                              path.read_text(encoding="utf-8"), known)


def _imports_of_source(module: str, is_package: bool, source: str,
                       known: set[str]) -> list[Import]:
    found: list[Import] = []

    def visit(node: ast.AST, local: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child, local)
            return
        if isinstance(node, ast.Import):
            found.extend(Import(module, node.lineno, a.name, local) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.extend(Import(module, node.lineno, target, local)
                         for target in _resolve(module, is_package, node, known))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            found.append(Import(module, node.lineno, node.args[0].value, local))
        inner = local or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(ast.parse(source, module), False)
    return found


def _layer(module: str) -> int:
    for pattern, layer in LAYER_OF:
        if fnmatch.fnmatchcase(module, pattern):
            return LAYERS.index(layer)
    raise AssertionError(f"expected {module} in LAYER_OF, found no pattern for it")


def _all_imports() -> tuple[set[str], list[Import]]:
    paths = sorted(SRC.rglob("*.py"))
    known = {_module_name(p) for p in paths}
    return known, [imp for p in paths for imp in _imports(p, known)]


def _internal(imp: Import, known: set[str]) -> str | None:
    """The quiver module ``imp`` loads (the longest known prefix), or None."""
    name = imp.target
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan): every edge
    inside one lies on an import cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            strong(v)
    return sorted(components)


def _violations() -> dict[tuple[str, str, str], str]:
    known, imports = _all_imports()
    found: dict[tuple[str, str, str], str] = {}
    edges: dict[str, set[str]] = {}
    for imp in imports:
        target = _internal(imp, known) if imp.target.startswith("quiver") else None
        where = f"{imp.module} line {imp.line}: imports {imp.target}"
        if imp.local and not any(
            fnmatch.fnmatchcase(imp.module, importer) and fnmatch.fnmatchcase(imp.target, what)
            for importer, what, _ in LAZY_ALLOWED
        ):
            found[("lazy", imp.module, target or imp.target)] = (
                f"{where} inside a function; expected a module-level import (or an entry in "
                "LAZY_ALLOWED for a heavy optional module)"
            )
        if target is None or target == imp.module:
            continue
        edges.setdefault(imp.module, set()).add(target)
        if _layer(target) > _layer(imp.module):
            found[("upward", imp.module, target)] = (
                f"{where}; expected layer {LAYERS[_layer(imp.module)]} or below, found "
                f"layer {LAYERS[_layer(target)]}"
            )
    for component in _cycles(edges):
        members = set(component)
        for a in component:
            for b in sorted(edges[a] & members):
                found[("cycle", a, b)] = (
                    f"{a} imports {b}, which leads back to it (the circle: "
                    f"{', '.join(component)})"
                )
    return found


def test_every_module_has_a_layer() -> None:
    known, _ = _all_imports()
    for module in sorted(known):
        _layer(module)


def test_imports_follow_the_layers() -> None:
    new = _violations()
    report = []
    for rule, title in (("upward", "imports of a higher layer"),
                        ("lazy", "function-local imports"), ("cycle", "import circles")):
        lines = sorted(v for k, v in new.items() if k[0] == rule)
        if lines:
            report += [f"{title}:", *(f"  {line}" for line in lines)]
    assert not new, "layer violations\n" + "\n".join(report)


def test_every_allowance_is_used() -> None:
    _, imports = _all_imports()
    unused = [
        (importer, what)
        for importer, what, _ in LAZY_ALLOWED
        if not any(imp.local and fnmatch.fnmatchcase(imp.module, importer)
                   and fnmatch.fnmatchcase(imp.target, what) for imp in imports)
    ]
    assert not unused, f"LAZY_ALLOWED entries that match no import (remove them): {unused}"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import numpy\ndef f():\n    import pandas\n", [("numpy", False), ("pandas", True)]),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pandas\n",
         [("typing", False)]),
        ("import importlib\ndef f():\n    importlib.import_module('quiver.ipc')\n",
         [("importlib", False), ("quiver.ipc", True)]),
    ],
)
def test_the_import_reader(source: str, expected: list[tuple[str, bool]]) -> None:
    got = [(i.target, i.local) for i in _imports_of_source("quiver.probe", False, source, set())]
    assert got == expected


def test_cycles_are_found() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(edges) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def _print_violations() -> None:  # pragma: no cover - a helper while moving code
    for key, why in sorted(_violations().items()):
        print(key, "#", why)


if __name__ == "__main__":  # pragma: no cover
    _print_violations()
