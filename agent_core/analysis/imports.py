"""Which of the workspace's own modules a Python module imports (its syntax tree read, nothing run).

A value another module reads (a table of regular expressions, of keywords) runs when its module is
imported, before any test starts, so no test's coverage names it: the search finds such modules through
the imports of the modules the failing tests ran (search/templates/literals.py's letter classes,
search/evidence/words.py's import-time lines).
"""

from __future__ import annotations

import ast
from pathlib import Path


def imported_files(tree: ast.Module, path: str, root: Path) -> list[str]:
    """The project's own modules (paths relative to `root`) that the module at `path` imports, absolutely or
    relatively: `from pkg.keywords import REGEX` in pkg/lexer.py is pkg/keywords.py."""
    parts = Path(path).parts[:-1]
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's own package up
                package = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{package}.{base}" if base else package
            names += [base, *(f"{base}.{alias.name}" for alias in node.names)]
    found: list[str] = []
    for name in dict.fromkeys(n for n in names if n):
        module = Path(*name.split("."))
        for depth in range(len(parts) + 1):  # the import root: the file's folder or one of its ancestors
            for candidate in (Path(*parts[:depth]) / f"{module}.py", Path(*parts[:depth]) / module / "__init__.py"):
                if (root / candidate).is_file():
                    found.append(candidate.as_posix())
    return list(dict.fromkeys(f for f in found if f != path))
