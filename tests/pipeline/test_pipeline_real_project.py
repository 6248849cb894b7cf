"""A real project: a src/-layout package installed editable in its own venv, with a dependency from PyPI.

The test builds it as a user would (`python -m venv`, `pip install -e .`, `six`
from PyPI), then `agentls test` reports its real per-test outcome in the
bubblewrap sandbox and `agentls fix` (the real openai client against the
scripted server) fixes its failing test end to end. The editable install
points at the project itself; inside the sandbox it must import the shadow
copy's code, or the fix could never make the test pass.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_core.cli import main
from agent_core.sandbox.bubblewrap import probe_bwrap
from engine_support import CliRun, make_project

pytestmark = pytest.mark.skipif(not probe_bwrap()[0], reason="bubblewrap cannot run here")

GREET = {
    "pyproject.toml": (
        '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "greetpkg"\nversion = "0.1"\ndependencies = ["six"]\n\n'
        '[tool.agentls.sandbox]\nbackend = "bubblewrap"\ntimeout_s = 120\n'
    ),
    "src/greetpkg/__init__.py": "from greetpkg.core import greet, shout\n",
    "src/greetpkg/core.py": (
        "import six\n\n\ndef greet(name):\n    return six.text_type('Hello, ') + name + '?'\n\n\n"
        "def shout(name):\n    return greet(name).upper()\n"
    ),
    "tests/test_core.py": (
        "import six\nimport greetpkg\nfrom greetpkg import greet, shout\n\n\n"
        "def test_greet():\n    assert greet('Ann') == 'Hello, Ann!'\n\n\n"
        "def test_six_is_the_venv_one():\n    assert '.venv' in six.__file__\n\n\n"
        "def test_shout():\n    assert shout('ann') == 'HELLO, ANN!'\n"
    ),
}
FIX = {"edits": [{"path": "src/greetpkg/core.py", "search": "+ name + '?'", "replace": "+ name + '!'"}],
       "explanation": "a greeting ends with an exclamation mark"}


@pytest.fixture(scope="module")
def venv_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project with its .venv: `pip install -e .` (setuptools' PEP 660 editable install) and six from PyPI."""
    root = make_project(tmp_path_factory.mktemp("real") / "greet", GREET)
    subprocess.run([sys.executable, "-m", "venv", str(root / ".venv")], check=True, timeout=300)
    pip = [str(root / ".venv" / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "six"], check=True, timeout=600)
    subprocess.run([*pip, "-e", str(root)], check=True, timeout=600)
    return root


def _sources(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not {".venv", ".agentls"} & set(p.relative_to(root).parts)}


def _cli(*args: str) -> CliRun:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return CliRun(code, out.getvalue(), err.getvalue())


def test_agentls_test_reports_the_real_per_test_outcome(venv_project: Path) -> None:
    run = _cli("test", str(venv_project), "--json")
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["tests"] == {"passed": 1, "failed": 2, "errors": 0, "skipped": 0}, run.stderr
    failures = {f["nodeid"]: f for f in out["failures"]}
    assert set(failures) == {"tests/test_core.py::test_greet", "tests/test_core.py::test_shout"}
    assert "Hello, Ann?" in failures["tests/test_core.py::test_greet"]["message"]
    assert failures["tests/test_core.py::test_greet"]["file"] == "tests/test_core.py"


def test_agentls_fix_fixes_the_failing_test_of_an_editable_src_layout(venv_project: Path, scripted_llm) -> None:
    scripted_llm.add("coder", FIX)
    scripted_llm.add("explainer", "greet ended with '?'; it now ends with '!', so both tests pass.")
    before = _sources(venv_project)

    run = _cli("fix", str(venv_project), "--base-url", scripted_llm.base_url, "--json")

    assert run.code == 0, run.stderr
    out = run.json
    assert out["status"] == "fixed" and out["files_changed"] == ["src/greetpkg/core.py"], out
    assert out["tests"] == {"passed": 3, "failed": 0, "errors": 0, "skipped": 0}
    assert [r["role"] for r in scripted_llm.requests] == ["coder", "explainer"]
    assert _sources(venv_project) == before, "without --apply the project is untouched"
