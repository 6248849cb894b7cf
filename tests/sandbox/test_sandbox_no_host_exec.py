"""Nothing of a repository runs on the host: its `.venv/bin/python`, a `json.py` beside the probe, its
`sandbox.python` (issue 38).

Each project below plants a program that, run on the host, writes a marker file outside the project; every
way agentls looks at the project (environment detection, `agentls test`, the settings) must leave no marker.
The committed `.venv/` is a real-looking one: a `pyvenv.cfg` naming this machine's Python, and an executable
`bin/python` that is a shell script.
"""

from __future__ import annotations

import contextlib
import io
import sys
import sysconfig
import uuid
from pathlib import Path

import pytest

from agent_core.cli import main
from agent_core.sandbox.base import SandboxError
from agent_core.sandbox.bubblewrap import probe_bwrap
from agent_core.sandbox.environment import detect_environment
from agent_core.settings import load_settings
from project_support import make_project

CALC = {"calc.py": "def add(a, b):\n    return a + b\n",
        "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"}


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    """Where a planted program would write on the host (outside the project)."""
    return tmp_path / "host" / f"PWNED-{uuid.uuid4().hex}"


def _planted_venv(project: Path, marker: Path) -> Path:
    """A committed `.venv/`: a pyvenv.cfg naming this Python's home, and `bin/python` a shell script."""
    venv = project / ".venv"
    (venv / "bin").mkdir(parents=True)
    home = Path(sysconfig.get_config_var("BINDIR") or Path(sys.executable).parent)
    version = ".".join(map(str, sys.version_info[:3]))
    (venv / "pyvenv.cfg").write_text(f"home = {home}\ninclude-system-site-packages = false\nversion = {version}\n")
    script = venv / "bin" / "python"
    marker.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(f"#!/bin/sh\ntouch {marker}\nexec {sys.executable} \"$@\"\n")
    script.chmod(0o755)
    return venv


def test_a_committed_venv_is_read_not_run(tmp_path: Path, marker: Path) -> None:
    project = make_project(tmp_path / "proj", CALC)
    venv = _planted_venv(project, marker)
    env = detect_environment(project)
    assert not marker.exists(), "the project's .venv/bin/python ran on the host"
    assert (env.kind, env.python, env.interpreter.prefix) == ("venv", venv / "bin" / "python", venv)
    assert env.interpreter.version == tuple(sys.version_info[:2])
    assert env.interpreter.missing == ("pytest", "hypothesis", "coverage")  # its site-packages is empty


def test_a_venv_whose_home_is_no_python_is_not_used(tmp_path: Path, marker: Path) -> None:
    project = make_project(tmp_path / "proj", CALC)
    venv = _planted_venv(project, marker)
    (venv / "pyvenv.cfg").write_text(f"home = {tmp_path}\nversion = 3.11.7\n")
    env = detect_environment(project)
    assert env.kind == "system" and not marker.exists()


def test_the_system_probe_imports_no_module_of_the_project(tmp_path: Path, marker: Path) -> None:
    """`python3 -c` puts its working directory first on sys.path: a project's json.py would run there."""
    marker.parent.mkdir(parents=True)
    project = make_project(tmp_path / "proj", {**CALC, "json.py": f"open({str(marker)!r}, 'w').close()\n"})
    env = detect_environment(project)
    assert env.kind == "system" and not marker.exists()


def test_sandbox_python_inside_the_project_is_refused_not_run(tmp_path: Path, marker: Path) -> None:
    marker.parent.mkdir(parents=True)
    project = make_project(tmp_path / "proj", CALC)
    (project / "x").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (project / "x").chmod(0o755)
    with pytest.raises(SandboxError, match="never runs a project's file on the host"):
        detect_environment(project, str(project / "x"))
    assert not marker.exists()


def test_a_project_file_may_not_set_sandbox_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTLS_CONFIG", str(tmp_path / "home" / "config.toml"))
    project = make_project(tmp_path / "proj", {**CALC, ".agentls.toml": '[sandbox]\npython = "./x"\n'})
    settings = load_settings(project)
    assert settings.sandbox.python is None
    [warning] = [i for i in settings.ignored if i.key == "sandbox.python"]
    assert "agentls config trust" in warning.message() and ".agentls.toml" in warning.message()


@pytest.mark.skipif(not probe_bwrap()[0], reason="bubblewrap cannot run here")
def test_agentls_test_on_a_planted_venv_runs_nothing_on_the_host(
    tmp_path: Path, marker: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTLS_CONFIG", str(tmp_path / "home" / "config.toml"))
    project = make_project(tmp_path / "proj", {**CALC, ".agentls.toml": '[sandbox]\nbackend = "bubblewrap"\n'})
    _planted_venv(project, marker)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        main(["test", str(project), "--json"])
    assert not marker.exists(), "the project's .venv/bin/python ran on the host"
    # it ran inside the sandbox, as the project's interpreter, where the host's folder does not exist
    assert f"touch: cannot touch '{marker}'" in err.getvalue(), err.getvalue()


def test_pth_path_lines_count_and_import_lines_never_run(tmp_path: Path, marker: Path) -> None:
    project = make_project(tmp_path / "proj", CALC)
    venv = _planted_venv(project, marker)
    site = venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    (site / "pytest").mkdir(parents=True)
    (site / "pytest" / "__init__.py").write_text("")
    (project / "src").mkdir()
    (site / "editable.pth").write_text(f"import os; open({str(marker)!r}, 'w').close()\n{project / 'src'}\n")
    env = detect_environment(project)
    assert not marker.exists()
    assert project / "src" in env.interpreter.path and site in env.interpreter.path
    assert env.interpreter.has_pytest and env.interpreter.missing == ("hypothesis", "coverage")
