"""The layer order of the package, held by reading every module's imports with ``ast``.

Cross-module on purpose: it reads every module of the package.

Layers, bottom to top (docs/ARCHITECTURE.md); each folder is one layer, and a module may
import its own layer and the ones below, never one above:

0. errors      ``errors``, ``hooks`` (how a lower layer calls up), ``_version``,
               ``_readonly``, ``_keywords``, ``_lazy``
1. types       ``types/*``, ``registry``
2. layout      ``layout``, ``buffers``, ``fs/*`` (URLs through fsspec: errors, retries,
               ranged reads; below the IPC readers that use them)
3. array       ``array/*``, ``tensor/*`` (siblings of arrays over buffers)
4. batch       ``batch/*``, ``compute``, ``filters`` (work over arrays and batches; the IPC
               reader and the Spark source use filters)
5. cdata       ``cdata/*``: the C data and C stream interfaces, both ways
6. ipc         ``ipc/*``
7. interop     ``interop/*`` (re-exports of cdata and the pandas conversions),
               ``pandas_out`` and ``pandas_in`` (to and from pandas), ``integration/*``
               (the JSON integration format)
8. top         ``constructors`` (public factories that take foreign objects), the package
               ``__init__`` (lazy re-exports; it names the provider of every hook),
               ``spark/*``, ``cli/*``, ``job``, ``__main__``

Where a lower class answers for a higher layer (``DataType.__arrow_c_schema__``,
``Array.__arrow_c_array__``, ``Array.to_pandas``, ``RecordBatch.from_pandas``), it calls a
:class:`quiver.hooks.Hook`, which the module above registers; it never imports it.

Every import counts, at module level or inside a function (``if TYPE_CHECKING:`` blocks
do not), and so does ``importlib.import_module("literal")``.  The test fails, naming the
module, line and import, when an import (a) points to a higher layer, (b) closes a cycle
among modules, or (c) sits inside a function without an entry in :data:`LAZY_ALLOWED`:
function-local imports are for deferring heavy or optional modules only.

There are no exceptions beyond :data:`LAZY_ALLOWED`, each with its reason.

No module uses another module's underscore names (``from m import _x``, ``m._x``, or an
underscore module from outside its package); :data:`PRIVATE_ALLOWED` lists the few that
wait for a concurrent change.
"""

from __future__ import annotations

import ast
import fnmatch
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "quiver"

LAYERS = ["errors", "types", "layout", "array", "batch", "cdata", "ipc", "interop", "top"]

# module pattern -> layer; the first match wins.  Folders are whole (``pkg`` and ``pkg.*``
# in one layer, checked by test_one_layer_per_folder); the top folder's single modules
# each name theirs.
LAYER_OF: list[tuple[str, str]] = [
    ("quiver.errors", "errors"),
    ("quiver.hooks", "errors"),
    ("quiver._version", "errors"),
    ("quiver._readonly", "errors"),
    ("quiver._keywords", "errors"),
    ("quiver._lazy", "errors"),
    ("quiver.types", "types"),
    ("quiver.types.*", "types"),
    ("quiver.registry", "types"),
    ("quiver.layout", "layout"),
    ("quiver.layout_rules", "layout"),
    ("quiver.buffers", "layout"),
    ("quiver.fs", "layout"),
    ("quiver.fs.*", "layout"),
    ("quiver.array", "array"),
    ("quiver.array.*", "array"),
    ("quiver.tensor", "array"),
    ("quiver.tensor.*", "array"),
    ("quiver.batch", "batch"),
    ("quiver.batch.*", "batch"),
    ("quiver.compute", "batch"),
    ("quiver.filters", "batch"),
    ("quiver.cdata", "cdata"),
    ("quiver.cdata.*", "cdata"),
    ("quiver.ipc", "ipc"),
    ("quiver.ipc.*", "ipc"),
    ("quiver.interop", "interop"),
    ("quiver.interop.*", "interop"),
    ("quiver.pandas_out", "interop"),
    ("quiver.pandas_in", "interop"),
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
    ("quiver.ipc.*", "quiver.cdata.*",
     "ctypes and the C structs, loaded when a writer is handed another library's schema, "
     "batch or stream, so that importing the IPC writers does not"),
    ("quiver.cli*", "quiver.*",
     "the command line: each command loads only what it uses (start-up budget of "
     "benchmarks/bench_cli.py)"),
    ("quiver.job", "quiver.*", "an entry point: the Spark job loads IPC and Spark when run"),
    ("quiver.spark.source", "quiver.spark.*",
     "Spark plans each streaming query in a fresh interpreter that unpickles the source: "
     "the writers, the filters parser and the executors' read path load when a method "
     "first uses them (tests/spark/test_planner_imports.py)"),
    ("quiver.spark.streaming", "quiver.spark.*",
     "as quiver.spark.source: the stream sink's task files and the executors' read path "
     "are not the planner's"),
    ("quiver.spark.options", "quiver.spark.pushdown",
     "the filters parser (and the array code exact filtering needs) loads only when a "
     "read has the filters option"),
    ("quiver.spark.plan", "quiver.ipc.statistics.decode",
     "footer statistics decode as arrays: the driver decodes them only for filters or a "
     "large batch's row count, never to plan an unfiltered read"),
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

# cross-module uses of underscore names allowed, (importing module, name): none.  A name
# another module needs is public in its owner module (or the code moves to its user).
PRIVATE_ALLOWED: list[tuple[str, str]] = []


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


def test_one_layer_per_folder() -> None:
    known, _ = _all_imports()
    packages = {m for m in known if (SRC.parent / m.replace(".", "/") / "__init__.py").exists()}
    mixed = [
        f"{m}: expected layer {LAYERS[_layer(m.rpartition('.')[0])]} (its folder's), "
        f"found {LAYERS[_layer(m)]}"
        for m in sorted(known)
        if m.rpartition(".")[0] in packages - {"quiver"}
        and _layer(m) != _layer(m.rpartition(".")[0])
    ]
    assert not mixed, "modules outside their folder's layer\n" + "\n".join(mixed)


def test_imports_follow_the_layers() -> None:
    new = _violations()
    report = []
    for rule, title in (("upward", "imports of a higher layer"),
                        ("lazy", "function-local imports"), ("cycle", "import circles")):
        lines = sorted(v for k, v in new.items() if k[0] == rule)
        if lines:
            report += [f"{title}:", *(f"  {line}" for line in lines)]
    assert not new, "layer violations\n" + "\n".join(report)


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _private_uses_of_source(module: str, is_package: bool, source: str,
                            known: set[str]) -> list[tuple[int, str, str]]:
    """(line, name, what) for each underscore name ``module`` takes from another quiver
    module: ``from m import _x``, ``m._x`` on an imported module, or an underscore module
    (``pkg._common``) imported from outside its package."""
    tree = ast.parse(source, module)
    modules: dict[str, str] = {}  # local name -> the quiver module it is bound to
    found: list[tuple[int, str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            stem = _resolve(module, is_package, ast.ImportFrom(node.module, [], node.level),
                            known)[0]
            if not stem.startswith("quiver"):
                continue
            for a in node.names:
                sub = f"{stem}.{a.name}"
                if sub in known:
                    modules[a.asname or a.name] = sub
                    package = stem
                    if _private(a.name) and not (module == package
                                                 or module.startswith(package + ".")):
                        found.append((node.lineno, a.name, f"the module {sub}"))
                elif _private(a.name) and stem != module:
                    found.append((node.lineno, a.name, f"{a.name} from {stem}"))
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("quiver") and a.asname:
                    modules[a.asname] = a.name
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in modules and _private(node.attr)
                and modules[node.value.id] != module):
            found.append((node.lineno, node.attr, f"{modules[node.value.id]}.{node.attr}"))
    return found


def _private_uses() -> list[tuple[str, int, str, str]]:
    paths = sorted(SRC.rglob("*.py"))
    known = {_module_name(p) for p in paths}
    return [(_module_name(p), line, name, what)
            for p in paths
            for line, name, what in _private_uses_of_source(
                _module_name(p), p.name == "__init__.py", p.read_text(encoding="utf-8"), known)]


def _private_allowed(module: str, name: str) -> bool:
    return any(fnmatch.fnmatchcase(module, m) and fnmatch.fnmatchcase(name, n)
               for m, n in PRIVATE_ALLOWED)


def test_no_module_imports_another_modules_private_names() -> None:
    found = sorted(f"{module} line {line}: uses {what}; expected a public name (or the code "
                   "moved to where it is used)"
                   for module, line, name, what in _private_uses()
                   if not _private_allowed(module, name))
    assert not found, "underscore names used across modules\n" + "\n".join(found)


def test_every_private_allowance_is_used() -> None:
    uses = _private_uses()
    unused = [(m, n) for m, n in PRIVATE_ALLOWED
              if not any(fnmatch.fnmatchcase(u[0], m) and fnmatch.fnmatchcase(u[2], n)
                         for u in uses)]
    assert not unused, f"PRIVATE_ALLOWED entries that match no use (remove them): {unused}"


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("quiver.a.b", "from .c import _x, y\n", ["_x"]),
        ("quiver.a.b", "from . import c\nc._x()\nc.y()\n", ["_x"]),
        ("quiver.a.b", "from ._c import y\n", []),  # a package-private module, inside
        ("quiver.d", "from .a import _c\n", ["_c"]),  # ... and from outside its package
        ("quiver.a.b", "from .c import __version__\nimport numpy as np\nnp._x\n", []),
    ],
)
def test_the_private_name_reader(module: str, source: str, expected: list[str]) -> None:
    known = {"quiver", "quiver.a", "quiver.a.b", "quiver.a.c", "quiver.a._c", "quiver.d"}
    got = [name for _, name, _ in _private_uses_of_source(module, False, source, known)]
    assert got == expected


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
