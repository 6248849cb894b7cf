"""What the models get to see: the relevant files and the workspace's layout, trimmed."""

from __future__ import annotations

import os
from pathlib import PurePosixPath

from agent_core.models import TestReport
from agent_core.workspace.shadow import SKIP_DIRS, ShadowWorkspace

FILES_BUDGET = 9000  # characters of file text in one prompt (small local models have small contexts)


def python_files(shadow: ShadowWorkspace, limit: int = 200) -> list[str]:
    """Workspace-relative .py files, sources before tests, sorted."""
    found = []
    for dirpath, dirnames, filenames in os.walk(shadow.root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        found.extend(
            os.path.relpath(os.path.join(dirpath, n), shadow.root) for n in sorted(filenames) if n.endswith(".py")
        )
    return sorted(found, key=lambda p: (is_test_file(p), p))[:limit]


def is_test_file(rel: str) -> bool:
    name = PurePosixPath(rel).name
    return name.startswith("test_") or name.endswith("_test.py") or "tests" in PurePosixPath(rel).parts[:-1]


def relevant_files(shadow: ShadowWorkspace, hints: list[str], report: TestReport | None) -> list[str]:
    """Files a step should see: hinted ones, then what the failures point at, then the rest."""
    ordered: list[str] = []
    for f in report.failures if report else []:
        for rel in (f.source_file, f.file):
            if rel:
                ordered.append(rel)
    candidates = hints + ordered + python_files(shadow)
    seen: list[str] = []
    for rel in candidates:
        rel = rel.strip().removeprefix("./")
        if rel and rel not in seen:
            try:
                if shadow.resolve(rel).is_file():
                    seen.append(shadow.relative(rel))
            except ValueError:
                continue
    return sorted(seen, key=is_test_file)  # the code to change first, the tests (the specification) after


def render_files(
    shadow: ShadowWorkspace, files: list[str], budget: int = FILES_BUDGET, tests_read_only: bool = False
) -> str:
    """Files as fenced blocks, in order, until the budget is spent."""
    parts: list[str] = []
    used = 0
    for rel in files:
        text = shadow.current(rel) or ""
        if used and used + len(text) > budget:
            parts.append(f"(more files not shown: {', '.join(files[len(parts):][:10])})")
            break
        label = " (a test: the specification, do not edit)" if tests_read_only and is_test_file(rel) else ""
        parts.append(f"### {rel}{label}\n```python\n{text[:budget]}\n```")
        used += len(text)
    return "\n\n".join(parts) or "(no files)"


def layout(shadow: ShadowWorkspace) -> str:
    """A short listing of the workspace's Python files for the planner."""
    files = python_files(shadow, limit=60)
    return "Python files:\n" + "\n".join(f"- {f}" for f in files) if files else "The workspace has no Python files."
