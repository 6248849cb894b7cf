"""PATH is positional and defaults to `.` on every project command; `--workspace PATH` still works, unlisted."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from agent_core.cli import build_parser, main


def _cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.delenv("AGENTLS_MAX_ITERATIONS", raising=False)
    root = tmp_path / "proj"
    root.mkdir()
    (root / ".agentls.toml").write_text("max_iterations = 2\n")  # lower than the default: a project may tighten
    return root


def _max_iterations(*args: str) -> int:
    code, out, err = _cli("config", "show", *args, "--json")
    assert code == 0, err
    return next(row["value"] for row in json.loads(out)["settings"] if row["key"] == "max_iterations")


def test_config_show_takes_path_positional_alias_or_cwd(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _max_iterations(str(project)) == 2
    assert _max_iterations("--workspace", str(project)) == 2
    assert _max_iterations(str(project), "--set", "max_iterations=7") == 7
    monkeypatch.chdir(project)
    assert _max_iterations() == 2


def test_runs_and_trace_take_path(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for args in ([str(project)], ["--workspace", str(project)]):
        code, _, err = _cli("runs", *args)
        assert code == 0 and f"no runs recorded in {project}" in err, err
    code, out, _ = _cli("trace", str(project), "--json")  # a lone folder is the PATH, not a run id
    assert code == 2 and str(project) in json.loads(out)["error"]
    monkeypatch.chdir(project)
    assert "no runs recorded in ." in _cli("runs")[2]


def test_every_project_command_defaults_path_and_hides_workspace() -> None:
    parser = build_parser()
    for argv in (["fix"], ["test"], ["runs"], ["trace"], ["report"], ["config", "show"], ["prompts", "show"]):
        args = parser.parse_args(argv)
        assert args.path is None and args.workspace_alias is None, argv
    usage = io.StringIO()
    with contextlib.redirect_stdout(usage), pytest.raises(SystemExit):
        parser.parse_args(["runs", "--help"])
    assert "--workspace" not in usage.getvalue() and "PATH" in usage.getvalue()
