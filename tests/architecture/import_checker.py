"""The import checker behind tests/architecture: a package's import graph, its cycles, its upward imports.

A `Package` names a folder and its layers (bottom to top, by the name of each
top-level module or sub-package). Every import statement counts, including
those inside functions and under TYPE_CHECKING: a lazy import hides a cycle
from Python's import system, not from this checker. Relative imports count too.

The same functions check the real packages (test_import_rules.py) and the
small trees the checker's own tests build (test_import_checker.py).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

INIT = "__init__"  # the layer name of the package's own __init__.py


@dataclass(frozen=True)
class Package:
    """A package to check: its import name, the folder holding it, and its layers bottom to top."""

    name: str
    root: Path
    layers: tuple[frozenset[str], ...]

    @property
    def folder(self) -> Path:
        return self.root / self.name


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == INIT:
        parts = parts[:-1]
    return ".".join(parts)


def modules(package: Package) -> dict[str, Path]:
    return {module_name(package.root, p): p for p in sorted(package.folder.rglob("*.py"))}


def _target(name: str, known: Mapping[str, Path]) -> str | None:
    """The known module an import names (a package's __init__ for `from pkg import thing`)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def _absolute(node: ast.ImportFrom, importer: str, is_package: bool) -> str | None:
    """The module a `from ... import` names, with a relative import resolved against `importer`."""
    if node.level == 0:
        return node.module
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    if node.level - 1 > len(base) - 1:
        return None  # beyond the top-level package: Python refuses it too
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imports_of(source: str, known: Mapping[str, Path], importer: str = "", is_package: bool = False) -> set[str]:
    """The known modules `source` (the text of module `importer`) imports anywhere in its body."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(t for a in node.names if (t := _target(a.name, known)))
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(node, importer, is_package)
            if not module:
                continue
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                target = submodule if submodule in known else _target(module, known)
                if target:
                    found.add(target)
    return found


def import_graph(package: Package) -> dict[str, set[str]]:
    """Each module of the package -> the modules of the same package it imports."""
    known = modules(package)
    return {
        name: imports_of(path.read_text(encoding="utf-8"), known, name, path.stem == INIT) - {name}
        for name, path in known.items()
    }


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph.get(root, ())))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(graph.get(nxt, ()))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def top_name(package: Package, module: str) -> str:
    """The top-level module or sub-package `module` belongs to (INIT for the package itself)."""
    rest = module.removeprefix(package.name).removeprefix(".")
    return rest.split(".")[0] if rest else INIT


def layer_of(package: Package, module: str) -> int | None:
    top = top_name(package, module)
    return next((level for level, names in enumerate(package.layers) if top in names), None)


def unlayered(package: Package) -> list[str]:
    """Modules whose top-level name is in no layer."""
    return sorted(name for name in modules(package) if layer_of(package, name) is None)


def upward_imports(package: Package, graph: Mapping[str, Iterable[str]] | None = None) -> list[str]:
    """Every import of a module from a higher layer, as `importer (layer i) imports target (layer j)`."""
    graph = import_graph(package) if graph is None else graph
    found = []
    for module, targets in graph.items():
        low = layer_of(package, module)
        for target in targets:
            high = layer_of(package, target)
            if low is not None and high is not None and high > low:
                found.append(f"{module} (layer {low}) imports {target} (layer {high})")
    return sorted(found)
