"""Fail fast on a broken baseline: a test run that says nothing about the code.

Before any model call the pipeline asks `broken_baseline` whether the
baseline's report is an environment problem rather than failing tests:

- the test command cannot start (exit 126/127, or bubblewrap's `execvp`
  failure): a missing interpreter or tool;
- pytest stopped before running anything (exit 4: a usage error, a conftest
  that cannot be imported);
- the interpreter has no pytest and agentls' cannot run on it (too old);
- every collected test file failed to import the project itself
  (`ModuleNotFoundError` naming a package that lives in the workspace), or a
  dependency the project declares (pyproject, requirements files);
- no tests were collected (pytest exit 5).

Each answer names the cause and the fix; the run then ends with status
"error" and the CLI exits 2. Real failing tests are never reported here.
"""

from __future__ import annotations

import re
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from agent_core.models import TestFailure, TestReport
from agent_core.sandbox.project_image import project_requirements

CANNOT_START = (126, 127)
PYTEST_USAGE_ERROR = 4
PYTEST_NO_TESTS = 5
_MISSING = re.compile(r"No module named '(?P<name>[\w.]+)'")
_EXECVP = re.compile(r"^bwrap: execvp (?P<word>\S+): (?P<why>.+)$", re.MULTILINE)
_MISSING_PROGRAM = (  # how bwrap, prlimit, env, timeout, make and sh name a program they could not run
    _EXECVP,
    re.compile(r"failed to (?:run command|execute) [‘'\"]?(?P<word>[^’'\":\s]+)"),
    re.compile(r"[‘'](?P<word>[^’']+)[’']: No such file or directory"),
    re.compile(r"^(?:make: |sh: \d+: )?(?P<word>[\w./+-]+): (?:No such file or directory|(?:command )?not found)$",
               re.MULTILINE),
)
_MAKE_127 = re.compile(r"Error 12[67]\b")
_NO_PYTEST = re.compile(r"^(?P<python>\S+): No module named pytest$", re.MULTILINE)
_FIX_IMPORT = "set sandbox.python to the interpreter that has the project installed, or create .venv"


def broken_baseline(report: TestReport, workspace: Path, test_command: str) -> str | None:
    """Why this baseline cannot guide a fix (cause and fix), or None when it is a real test outcome."""
    ran = report.passed or any("::" in f.nodeid for f in report.failures)  # a command's bare exit code is no test
    if ran or report.timed_out or report.limit_hit:
        return None
    for check in (_cannot_start, _no_pytest, _project_not_importable, _dependency_missing, _usage_error, _no_tests):
        found = check(report, Path(workspace), test_command)
        if found:
            return found
    return None


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip() and line.strip() != "[stderr]"]
    return lines[-1][:300] if lines else "(no output)"


def _cannot_start(report: TestReport, workspace: Path, test_command: str) -> str | None:
    execvp = _EXECVP.search(report.output)
    if report.exit_code in CANNOT_START or execvp or _MAKE_127.search(report.output):
        named = (m.group("word") for m in (p.search(report.output) for p in _MISSING_PROGRAM) if m)
        word = next(named, test_command.split()[0] if test_command.split() else "?")
        return (f"the test command `{test_command}` cannot start in the sandbox "
                f"(exit {report.exit_code}: {_last_line(report.output)}); `{word}` or a program it runs is "
                "missing there: set test_command to what the sandbox has (a leading `python -m pytest` or `pytest` "
                "runs with the sandbox's interpreter) or sandbox.python to your interpreter")
    return None


def _no_pytest(report: TestReport, workspace: Path, test_command: str) -> str | None:
    found = _NO_PYTEST.search(report.output)
    if found is None:
        return None
    python = found.group("python")
    return (f"the project's interpreter {python} has no pytest, and agentls' own pytest does not run on it "
            f"(pytest needs Python 3.10 or newer): install it there (`{python} -m pip install pytest`), "
            "or set sandbox.python to an interpreter that has it")


def project_packages(workspace: Path) -> set[str]:
    """Top-level importable names the project itself defines (flat, src/ and lib/ layouts)."""
    names = set()
    for base in (workspace, workspace / "src", workspace / "lib"):
        if not base.is_dir():
            continue
        for entry in base.iterdir():
            if entry.name.startswith((".", "_")) or entry.name in ("tests", "test"):
                continue
            if (entry.is_dir() and (entry / "__init__.py").is_file()) or (entry.suffix == ".py" and entry.is_file()):
                names.add(entry.stem)
    return names


def _missing_module(failure: TestFailure) -> str | None:
    match = _MISSING.search(failure.message) or _MISSING.search(failure.traceback)
    return match.group("name") if match else None


def _project_not_importable(report: TestReport, workspace: Path, test_command: str) -> str | None:
    own = project_packages(workspace)
    collection = [f for f in report.failures if "::" not in f.nodeid]
    missing = {_missing_module(f) for f in collection}
    if report.exit_code == PYTEST_USAGE_ERROR and not collection:
        missing = {m.group("name") for m in _MISSING.finditer(report.output)}
    if not missing or None in missing or not missing <= own:  # `mypkg.sub` missing is a bug in mypkg, not this
        return None
    name = min(missing)
    where = " (a src/ layout: the project must be installed to import)" if (workspace / "src" / name).exists() else ""
    files = f"every test file ({len(collection)}) fails to collect" if collection else "pytest cannot start"
    return f"the sandbox's Python cannot import `{name}`{where}: {files} on `No module named '{name}'`; {_FIX_IMPORT}"


def _declared_dependencies(workspace: Path) -> set[str]:
    names = set()
    for spec in project_requirements(workspace):
        try:
            names.add(canonicalize_name(Requirement(spec).name))
        except InvalidRequirement:
            continue
    return names


def _dependency_missing(report: TestReport, workspace: Path, test_command: str) -> str | None:
    """Every test file fails on a module the project declares as a dependency: the environment lacks it.

    (An undeclared missing name may be a typo in the code, a bug the run can fix: not stopped here.)
    """
    collection = [f for f in report.failures if "::" not in f.nodeid]
    missing = {_missing_module(f) for f in collection}
    if not collection or None in missing:
        return None
    tops = sorted({str(name).split(".")[0] for name in missing})
    declared = _declared_dependencies(workspace)
    if not all(canonicalize_name(name) in declared for name in tops):
        return None
    names = ", ".join(f"`{name}`" for name in tops)
    return (f"the sandbox's Python lacks the project's declared dependency {names}: every test file "
            f"({len(collection)}) fails to collect on `No module named '{tops[0]}'`; install the project's "
            "dependencies into the environment its tests run with (e.g. `python -m venv .venv && .venv/bin/pip "
            "install -e .`), or set sandbox.python to the interpreter that has them")


def _usage_error(report: TestReport, workspace: Path, test_command: str) -> str | None:
    if report.exit_code != PYTEST_USAGE_ERROR:
        return None
    errors = [line for line in report.output.splitlines() if line.startswith(("ERROR:", "E   "))]
    return (f"pytest stopped before running any test (exit 4, a usage error): "
            f"{(errors[-1] if errors else _last_line(report.output)).strip()}; check test_command `{test_command}` "
            "and the project's pytest configuration")


def _no_tests(report: TestReport, workspace: Path, test_command: str) -> str | None:
    if report.exit_code != PYTEST_NO_TESTS or report.failures:
        return None
    return (f"the test command `{test_command}` collected no tests (pytest exit 5): point test_command at the "
            "tests (e.g. `pytest tests`) or check testpaths/python_files in the pytest configuration")
