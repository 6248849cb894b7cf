"""Which symbols a gen-tests run is about, and what the model is told about each."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from agent_core.agents.tester.agent import TargetContext
from agent_core.analysis.symbols import ModuleInfo, Symbol, analyse, enclosing_symbol, existing_tests, find_symbol
from agent_core.models import RunRequest

MAX_FILE_TARGETS = 6


class TargetError(ValueError):
    """The request names no usable target (bad file, unknown symbol)."""


@dataclass
class Target:
    symbol: Symbol
    context: TargetContext


def module_import_path(workspace: Path, rel: str) -> str:
    """Dotted import path of a workspace file: packages (dirs with __init__.py) are kept, a src/ root dropped."""
    parts = list(PurePosixPath(rel).with_suffix("").parts)
    keep = [parts[-1]]
    for index in range(len(parts) - 2, -1, -1):
        if not (workspace / Path(*parts[: index + 1]) / "__init__.py").is_file():
            break
        keep.insert(0, parts[index])
    return ".".join(keep)


def _top_level(symbol: Symbol) -> str:
    return symbol.qualname.split(".")[0]


def _pick(request: RunRequest, info: ModuleInfo) -> list[Symbol]:
    if request.target_symbol:
        found = find_symbol(info.symbols, request.target_symbol)
        if found is None:
            raise TargetError(f"no function or class named {request.target_symbol!r} in {request.target_file}")
        return [found]
    if request.target_span is not None:
        found = enclosing_symbol(info.symbols, request.target_span)
        if found is not None:
            return [found]
    tops = [s for s in info.symbols if s.parent is None and not s.name.startswith("_")]
    if not tops:
        raise TargetError(f"{request.target_file} defines no public function or class to test")
    return tops[:MAX_FILE_TARGETS]


def select_targets(request: RunRequest, root: Path) -> tuple[list[Target], ModuleInfo, str]:
    """Targets of the request in the workspace at `root`; also the module's analysis and import path."""
    if not request.target_file:
        raise TargetError("gen-tests needs a target file")
    path = root / request.target_file
    if path.suffix != ".py" or not path.is_file():
        raise TargetError(f"{request.target_file} is not a Python file in the workspace")
    info = analyse(path.read_bytes())
    module = module_import_path(root, request.target_file)
    imports = sorted({i.text for i in info.imports})
    targets = []
    for symbol in _pick(request, info):
        refs = existing_tests(root, symbol.name)
        targets.append(Target(symbol, TargetContext(
            name=symbol.qualname, module=module, import_line=f"from {module} import {_top_level(symbol)}",
            source=symbol.source, docstring=symbol.docstring, imports=imports, existing=[r.test for r in refs],
        )))
    return targets, info, module
