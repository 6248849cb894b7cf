"""pyproject's dependencies match the code: every third-party import is declared, nothing unused is.

Each import statement of agent_core/ and lsp_server/ (and each literal
`importlib.import_module("...")`) is mapped to the distribution that installs
it, with `importlib.metadata.packages_distributions()`; a namespace package
shared by several distributions (`langgraph.*`) is narrowed by which
distribution's files hold the imported module. Declared-but-unimported is
allowed only for the test tools installed into the sandbox runtime.
"""

from __future__ import annotations

import ast
import functools
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from agent_core.sandbox.constants import TEST_TOOLS

ROOT = Path(__file__).resolve().parents[2]
OWN = {"agent_core", "lsp_server", "mcp_server"}
# A new major version of these has broken (or is known to break) code like ours: each needs an upper bound.
MAJOR_BOUNDED = ("openai", "langgraph", "langgraph-checkpoint-sqlite", "mcp")


def declared() -> dict[str, Requirement]:
    """The dependencies and the `local` extra: the bundled model's server (local_model/batched_server.py) runs in
    a Python that has it."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    texts = [*project["dependencies"], *project["optional-dependencies"]["local"]]
    requirements = [Requirement(text) for text in texts]
    return {canonicalize_name(r.name): r for r in requirements}


def imported_modules(path: Path) -> set[str]:
    """Full dotted names of the absolute imports in one file."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            names.add(node.args[0].value)
    return names


def third_party_imports(files: list[Path]) -> dict[str, set[str]]:
    """{module: files importing it} for modules outside the stdlib and our own packages."""
    found: dict[str, set[str]] = {}
    for path in files:
        for module in imported_modules(path):
            top = module.split(".")[0]
            beside = (path.parent / f"{top}.py").is_file()  # a script's sibling (the sandbox driver's helper)
            if top not in sys.stdlib_module_names and top not in OWN and not beside:
                found.setdefault(module, set()).add(str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path))
    return found


@functools.cache
def _top_level_map() -> dict[str, list[str]]:
    return metadata.packages_distributions()


@functools.cache
def _holds(distribution: str, prefix: str) -> bool:
    files = metadata.distribution(distribution).files or []
    return any(f.as_posix() in (f"{prefix}.py", f"{prefix}/__init__.py") or f.as_posix().startswith(f"{prefix}/")
               for f in files)


def distribution_of(module: str) -> str | None:
    """The distribution installing `module` (the most specific one for a shared namespace), or None."""
    candidates = _top_level_map().get(module.split(".")[0], [])
    if len(set(candidates)) <= 1:
        return candidates[0] if candidates else None
    parts = module.split(".")
    for depth in range(len(parts), 0, -1):
        holding = sorted({d for d in candidates if _holds(d, "/".join(parts[:depth]))})
        if len(holding) == 1:
            return holding[0]
    return None


def undeclared(files: list[Path]) -> dict[str, str]:
    """{module: why} for every third-party import whose distribution is not declared."""
    deps = declared()
    problems = {}
    for module, users in sorted(third_party_imports(files).items()):
        dist = distribution_of(module)
        if dist is None:
            problems[module] = f"not installed or ambiguous (imported by {sorted(users)})"
        elif canonicalize_name(dist) not in deps:
            problems[module] = f"distribution {dist!r} is not declared (imported by {sorted(users)})"
    return problems


def _code_files() -> list[Path]:
    return sorted(p for package in OWN for p in (ROOT / package).rglob("*.py"))


def test_every_third_party_import_is_declared():
    assert undeclared(_code_files()) == {}


def test_every_declared_dependency_is_used():
    used = {canonicalize_name(d) for m in third_party_imports(_code_files()) if (d := distribution_of(m))}
    sandbox_tools = {canonicalize_name(name) for name in TEST_TOOLS}
    assert set(declared()) - used - sandbox_tools == set()


@pytest.mark.parametrize("name", MAJOR_BOUNDED)
def test_major_versions_are_bounded(name: str):
    requirement = declared()[name]
    installed = Version(metadata.version(name))
    assert requirement.specifier.contains(installed), f"{requirement} excludes the tested {installed}"
    assert not requirement.specifier.contains(f"{installed.major + 1}.0"), f"{requirement} admits the next major"


def test_checker_sees_an_undeclared_import(tmp_path: Path):
    bad = tmp_path / "bad.py"
    bad.write_text("import attr\nfrom ormsgpack import packb\nimport json\n")  # both installed, neither declared
    problems = undeclared([bad])
    assert set(problems) == {"attr", "ormsgpack"}, problems
    assert "'attrs'" in problems["attr"] and "'ormsgpack'" in problems["ormsgpack"]
