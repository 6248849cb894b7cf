"""`agentls sandbox doctor` names the project's environment; `--project` lists tests the sandbox changes."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from agent_core.cli import main as cli_main
from agent_core.sandbox.bubblewrap import probe_bwrap
from old_python import ENVIRONMENTS, copy_venv_into

pytestmark = pytest.mark.skipif(not probe_bwrap()[0], reason="bubblewrap cannot run here")

SUITE = (
    "import os, socket, threading\n\n\n"
    "def test_threads():\n    ts = [threading.Thread(target=lambda: None) for _ in range(50)]\n"
    "    [t.start() for t in ts]\n    [t.join() for t in ts]\n\n\n"
    "def test_arithmetic():\n    assert sum([1, 1]) == 2\n\n\n"
    "def test_hostname_is_the_hosts():\n    assert socket.gethostname() == {host!r}\n"
)


def test_doctor_project_lists_only_the_tests_whose_outcome_differs(tmp_path: Path, capsys) -> None:
    import socket

    project = tmp_path / "proj"
    project.mkdir()
    (project / "test_suite.py").write_text(SUITE.format(host=socket.gethostname()))
    before = sorted(p.name for p in project.iterdir())

    code = cli_main(["sandbox", "doctor", "--backend", "bubblewrap", "--project", str(project)])

    out = capsys.readouterr().out
    assert code == 1, out
    assert "host:    3 passed, 0 failed" in out and "sandbox: 2 passed, 1 failed" in out
    assert "1 tests change outcome" in out
    assert "test_suite::test_hostname_is_the_hosts: host passed, sandbox failed" in out  # its own UTS namespace
    assert "test_threads" not in out.split("change outcome")[1].split("---")[0]
    assert sorted(p.name for p in project.iterdir()) == before, "the project itself is never written"


def test_doctor_names_the_venv_it_chose_and_why(tmp_path: Path, capsys) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "test_ok.py").write_text("def test_ok():\n    pass\n")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(project / ".venv")], check=True, timeout=120)

    code = cli_main(["sandbox", "doctor", "--backend", "bubblewrap", "--project", str(project)])

    out = capsys.readouterr().out
    assert code == 0, out
    assert f"environment: venv: {project / '.venv' / 'bin' / 'python'}" in out
    assert "the project has .venv/" in out and "no pytest of its own" in out
    assert "agentls adds pytest, hypothesis, coverage after its own site-packages" in out
    assert "coverage: yes, by coverage.py " in out
    assert "no test changes outcome in the sandbox" in out


def test_doctor_says_what_records_per_test_lines_on_python_37(tmp_path: Path, capsys) -> None:
    """agentls' coverage.py needs a newer Python: the search driver's own tracer records the lines there."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "test_ok.py").write_text("def test_ok():\n    pass\n")
    copy_venv_into(project)

    code = cli_main(["sandbox", "doctor", "--backend", "bubblewrap", "--project", str(project)])

    out = capsys.readouterr().out
    assert code == 0, out
    assert "(Python 3.7, environment" in out and "its own pytest; lacks hypothesis, coverage" in out
    assert "agentls adds" not in out
    assert ("coverage: yes, by agentls' line tracer (coverage.py does not run on Python 3.7 here "
            "(ModuleNotFoundError: No module named 'coverage'))") in out


def test_doctor_project_that_is_not_a_directory_is_bad_input(tmp_path: Path, capsys) -> None:
    assert cli_main(["sandbox", "doctor", "--project", str(tmp_path / "missing")]) == 2
    assert "is not a directory" in capsys.readouterr().err


def test_doctor_coverage_line_for_a_project_at_tmp_itself(capsys) -> None:
    """The probe's copy of a project at /tmp lies inside /tmp: it must not be hidden by a bind at /tmp."""
    from agent_core.cli.sandbox import coverage_recorder
    from agent_core.sandbox.bubblewrap import BubblewrapSandbox

    line = coverage_recorder(BubblewrapSandbox(), Path(tempfile.gettempdir()))

    assert line.startswith("yes, by coverage.py "), line
    assert "chdir" not in line


def test_doctor_coverage_line_is_a_sentence_when_the_venv_has_no_pytest(tmp_path: Path) -> None:
    """Python 3.6 gets none of agentls' test packages: the driver cannot import pytest, said in words."""
    from agent_core.cli.sandbox import coverage_recorder
    from agent_core.sandbox.bubblewrap import BubblewrapSandbox

    python = ENVIRONMENTS["py3.6.15-pytest3.10.1"][0]
    assert python.exists(), f"this machine kind's pyenv has 3.6.15; {python} is missing"
    project = tmp_path / "proj"
    project.mkdir()
    (project / "test_ok.py").write_text("def test_ok():\n    pass\n")
    subprocess.run([str(python), "-m", "venv", "--without-pip", str(project / ".venv")], check=True, timeout=120)

    line = coverage_recorder(BubblewrapSandbox(), project)

    assert line == ("no per-test lines: the project's interpreter has no pytest for the search driver (install "
                    "pytest in its environment); the search localizes from tracebacks"), line
    assert "Traceback" not in line
