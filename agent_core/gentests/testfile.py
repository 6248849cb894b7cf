"""Where generated tests go and how they are written: candidate files, and the final test file.

The final file is the existing one, untouched, with any new imports inserted
after its last top-level import and the kept tests appended at the end; or a
new file. Suspected-bug tests carry a `# agentls: suspected bug: ...` comment.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import importlib
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from agent_core.analysis import pysyntax
from agent_core.analysis.symbols import test_files

MARKER = "# agentls: suspected bug: "


@dataclass
class SplitTest:
    imports: list[str]  # top-level import statements, as written
    body: str  # everything else (the test function and any helpers)


class BadTestCode(ValueError):
    """Generated code that cannot be a test (syntax error, no test function)."""


def split_code(code: str, name: str, import_line: str = "", module_imports: Sequence[str] = ()) -> SplitTest:
    """Separate a generated test's imports from its body; raise BadTestCode when it is unusable.

    `import_line` (`from pkg.mod import f, g`) is the one the model was told to use: when the test calls one
    of its names without importing it (a small model often drops the line), it is added. So is, for any other
    name the test uses and never binds, the target module's own import of it (`module_imports`, the module's
    import statements: `from datetime import datetime, timedelta`), or `import name` for a standard-library
    module: the bundled model writes `datetime.now()` and `timedelta(days=1)` without importing them, and,
    shown the NameError, hands the same code back."""
    try:
        tree = pysyntax.parse(code)
    except SyntaxError as exc:
        salvaged = _before_syntax_error(code, exc.lineno or 0)
        if salvaged is None:
            raise BadTestCode(f"SyntaxError: {exc.msg} (line {exc.lineno})") from exc
        code, tree = salvaged
    tests = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
             and n.name.startswith("test")]
    if name not in tests:
        raise BadTestCode(f"the code defines no top-level test function named {name!r}")
    lines = code.splitlines()
    imports: list[str] = []
    skip: set[int] = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.append("\n".join(lines[node.lineno - 1 : node.end_lineno]).strip())
            skip.update(range(node.lineno - 1, node.end_lineno or node.lineno))  # end_lineno: always set by parse
    body = "\n".join(line for i, line in enumerate(lines) if i not in skip).strip("\n")
    implied = _implied_imports(body, imports)
    missing = _missing_target_import(tree, import_line)
    implied = [*implied, missing] if missing else implied
    return SplitTest(imports=[*implied, *_borrowed_imports(tree, implied, module_imports)], body=body)


def _bound_names(tree: ast.AST) -> set[str]:
    """Every name a statement of `tree` binds: imports, assignments, definitions, parameters, handlers."""
    bound = {a.asname or a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
             for a in n.names}
    bound |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}
    bound |= {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    bound |= {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)}
    bound |= {n.name for n in ast.walk(tree) if isinstance(n, ast.ExceptHandler) and n.name}
    return bound


def _borrowed_imports(tree: ast.Module, added: list[str], module_imports: Sequence[str]) -> list[str]:
    """Imports for the names the test uses and nothing binds: the target module's own, else a stdlib module's."""
    bound = _bound_names(tree)
    for line in added:
        with contextlib.suppress(SyntaxError):
            bound |= _bound_names(pysyntax.parse(line))
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    free = sorted(used - bound - set(dir(builtins)))
    provides: dict[str, str] = {}
    stdlib_modules: list[str] = []  # the stdlib modules the target imports from (`import datetime`, `from datetime`)
    for text in module_imports:
        with contextlib.suppress(SyntaxError):
            statement = pysyntax.parse(text.strip()).body[0]
            if isinstance(statement, ast.ImportFrom) and (statement.level or statement.module == "__future__"):
                continue  # a relative import means nothing in a test file
            if isinstance(statement, (ast.Import, ast.ImportFrom)):
                for alias in statement.names:
                    provides.setdefault(alias.asname or alias.name.split(".")[0], text.strip())
            if isinstance(statement, ast.Import):
                stdlib_modules += [a.name for a in statement.names if a.name.split(".")[0] in _SAFE_STDLIB]
            elif isinstance(statement, ast.ImportFrom) and str(statement.module).split(".")[0] in _SAFE_STDLIB:
                stdlib_modules.append(str(statement.module))
    out: list[str] = []
    for name in free:
        statement_text = provides.get(name) or (f"import {name}" if name in _SAFE_STDLIB else None)
        statement_text = statement_text or _stdlib_member(name, stdlib_modules)
        if statement_text and statement_text not in out:
            out.append(statement_text)
    return out


# Standard-library modules whose import does something (a browser, a window, a printed poem) are never
# imported to look a name up, nor added to a test.
_SAFE_STDLIB = sys.stdlib_module_names - {"antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo"}


def _stdlib_member(name: str, modules: list[str]) -> str | None:
    """`from datetime import date` when the target imports from `datetime` and the test says bare `date`."""
    if name.startswith("_"):
        return None
    for module in modules:
        try:
            if hasattr(importlib.import_module(module), name):
                return f"from {module} import {name}"
        except ImportError:
            continue
    return None


def _missing_target_import(tree: ast.Module, import_line: str) -> str | None:
    """`import_line` when the test uses a name it provides that no statement of the test binds, else None."""
    try:
        wanted = {a.asname or a.name for n in pysyntax.parse(import_line).body if isinstance(n, ast.ImportFrom)
                  for a in n.names}
    except SyntaxError:
        return None
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return import_line if (wanted & used) - _bound_names(tree) else None


def _before_syntax_error(code: str, line: int) -> tuple[str, ast.Module] | None:
    """The code up to the statement the syntax error is in, when that still parses and still asserts something.

    The bundled model copies a doctest's `Traceback (most recent call last):` into an assertion after several
    good ones, and hands the same code back when asked to repair it; the good assertions stand on their own."""
    lines = code.splitlines()
    for end in range(min(line, len(lines)) - 1, 0, -1):
        head = "\n".join(lines[:end])
        try:
            tree = pysyntax.parse(head)
        except SyntaxError:
            continue
        if any(isinstance(n, ast.Assert) for n in ast.walk(tree)):
            return head + "\n", tree
        return None
    return None


def _implied_imports(body: str, imports: list[str]) -> list[str]:
    """Add the imports a test obviously needs but forgot (pytest, hypothesis)."""
    text = "\n".join(imports)
    out = list(imports)
    if "pytest." in body and "import pytest" not in text:
        out.insert(0, "import pytest")
    if "@given" in body and "given" not in text:
        out.insert(0, "from hypothesis import given")
    if re.search(r"(?<![\w.])st\.", body) and "strategies" not in text:  # `st.`, not `pytest.`
        out.insert(0, "from hypothesis import strategies as st")
    return out


def destination(root: Path, target_rel: str, module: str) -> str:
    """tests/test_<module>.py, or the project's own layout: an existing test_<module>.py, a test/ dir, or beside."""
    stem = module.rsplit(".", 1)[-1]
    name = f"test_{stem}.py"
    existing = test_files(root)
    for path in existing:
        if path.name == name:
            return path.relative_to(root).as_posix()
    for folder in ("tests", "test"):
        if (root / folder).is_dir():
            return f"{folder}/{name}"
    beside = [p for p in existing if p.parent == (root / target_rel).parent]
    if beside:
        return (PurePosixPath(target_rel).parent / name).as_posix()
    return f"tests/{name}"


def candidate_text(split: SplitTest) -> str:
    return "\n".join(split.imports) + "\n\n\n" + split.body + "\n"


def _insert_imports(existing: str, imports: list[str]) -> str:
    if not imports:
        return existing
    block = "\n".join(imports) + "\n"
    try:
        tree = pysyntax.parse(existing)
    except SyntaxError:
        return block + existing
    nodes = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    lines = existing.splitlines(keepends=True)
    if nodes:
        at = max(n.end_lineno or n.lineno for n in nodes)  # end_lineno: always set by parse
    elif tree.body and isinstance(tree.body[0], ast.Expr) and isinstance(getattr(tree.body[0], "value", None),
                                                                          ast.Constant):
        at = tree.body[0].end_lineno or 0  # after the module docstring
    else:
        at = 0
    head = "".join(lines[:at])
    if head and not head.endswith("\n"):
        head += "\n"
    return head + block + "".join(lines[at:])


def compose(existing: str | None, tests: list[tuple[SplitTest, str | None]], header: str) -> str:
    """The final file: existing text with new imports and the kept tests appended (marker comments included)."""
    wanted: list[str] = []
    present = existing or ""
    for split, _ in tests:
        for imp in split.imports:
            if imp not in wanted and not any(line.strip() == imp for line in present.splitlines()):
                wanted.append(imp)
    blocks = []
    for split, marker in tests:
        blocks.append((MARKER + marker.replace("\n", " ")[:200] + "\n" if marker else "") + split.body.strip("\n"))
    tail = "\n\n\n".join(blocks) + "\n"
    if existing is None:
        return f'"""{header}"""\n\n' + "\n".join(wanted) + "\n\n\n" + tail
    text = _insert_imports(existing, wanted)
    return text.rstrip("\n") + "\n\n\n" + tail


def function_line(text: str, name: str) -> int:
    """1-based line of `def name` (its first decorator or marker comment excluded) in `text`; 1 if absent."""
    try:
        tree = pysyntax.parse(text)
    except SyntaxError:
        return 1
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node.lineno
    return 1
