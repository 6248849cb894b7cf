"""Config errors say where (file and line, variable, editor key) and what was probably meant (issue 28 item 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core.settings import SettingsError, load_settings
from agent_core.settings.explain import line_of


def _error(ws: Path | None, env: dict[str, str], overrides=None, origin: str = "command line") -> str:
    with pytest.raises(SettingsError) as info:
        load_settings(ws, overrides, env=env, overrides_origin=origin)
    return str(info.value)


def test_unknown_key_in_a_file_names_file_line_and_the_key_meant(tmp_path: Path):
    (tmp_path / ".agentls.toml").write_text('model = "m"\n\nmax_iteration = 4\n[sandbox]\ntimeout = 3\n')
    text = _error(tmp_path, {"AGENTLS_CONFIG": str(tmp_path / "none.toml")})
    where = tmp_path / ".agentls.toml"
    assert f"{where}, line 3: max_iteration: unknown setting; did you mean max_iterations?" in text
    assert f"{where}, line 5: sandbox.timeout: unknown setting; did you mean sandbox.timeout_s?" in text


def test_an_unknown_table_names_its_file_line_or_flag_and_the_table_meant(tmp_path: Path):
    (tmp_path / ".agentls.toml").write_text('model = "m"\n\n[serach]\nbudget_s = 5\n')
    text = _error(tmp_path, {"AGENTLS_CONFIG": str(tmp_path / "none.toml")})
    assert f"{tmp_path / '.agentls.toml'}, line 3: serach: unknown setting; did you mean search?" in text
    assert "settings: serach" not in text

    (tmp_path / ".agentls.toml").unlink()
    flag = _error(tmp_path, {"AGENTLS_CONFIG": str(tmp_path / "none.toml")}, {"serach": {"x": 1}})
    assert "command line: serach: unknown setting; did you mean search?" in flag

    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.agentls.serach]\nx = 1\n')
    nested = _error(tmp_path, {"AGENTLS_CONFIG": str(tmp_path / "none.toml")})
    assert f"{tmp_path / 'pyproject.toml'}, line 4: serach: unknown setting; did you mean search?" in nested


def test_a_key_in_the_wrong_table_is_pointed_to_its_table(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.agentls]\nbudget_s = 5\n')
    text = _error(tmp_path, {"AGENTLS_CONFIG": str(tmp_path / "none.toml")})
    assert f"{tmp_path / 'pyproject.toml'}, line 5: budget_s: unknown setting; did you mean search.budget_s?" in text


def test_a_bad_value_names_the_file_line_and_the_user_file(tmp_path: Path):
    user = tmp_path / "user.toml"
    user.write_text("# mine\n[sandbox]\nmemory_mb = 1\n")
    text = _error(None, {"AGENTLS_CONFIG": str(user)})
    assert f"{user}, line 3: sandbox.memory_mb: Input should be greater than or equal to 64" in text


def test_environment_and_editor_errors_name_the_variable_and_the_editor_key(tmp_path: Path):
    env = {"AGENTLS_CONFIG": str(tmp_path / "none.toml"), "AGENTLS_SANDBOX__PIDS": "2"}
    assert "environment variable AGENTLS_SANDBOX__PIDS: sandbox.pids:" in _error(None, env)
    text = _error(None, {"AGENTLS_CONFIG": str(tmp_path / "none.toml")}, {"maxIteration": 2}, "editor settings")
    assert "editor settings: agentls.maxIteration: unknown setting; did you mean agentls.maxIterations?" in text


def test_a_misspelt_variable_is_a_warning_with_the_variable_meant(tmp_path: Path):
    env = {"AGENTLS_CONFIG": str(tmp_path / "none.toml"), "AGENTLS_MAX_ITERATION": "5", "AGENTLS_REPORT": "1"}
    settings = load_settings(None, env=env)
    assert settings.max_iterations == 3, "the run goes on with the default"
    assert settings.notices == [
        "environment variable AGENTLS_MAX_ITERATION is not a setting and is ignored; "
        "did you mean AGENTLS_MAX_ITERATIONS?"
    ]


@pytest.mark.parametrize(
    "text, key, prefix, line",
    [
        ("a = 1\n[sandbox]\n# x\ntimeout_s = 2\n", "sandbox.timeout_s", (), 4),
        ("sandbox.timeout_s = 2\n", "sandbox.timeout_s", (), 1),
        ('[tool.agentls.roles.coder]\n"model" = "x"\n', "roles.coder.model", ("tool", "agentls"), 2),
        ("[tool.agentls]\nmaxIterations = 0\n", "max_iterations", ("tool", "agentls"), 2),
        ("[sandbox]\n", "sandbox", (), 1),
        ("[other]\ntimeout_s = 1\n", "sandbox.timeout_s", (), None),
    ],
)
def test_line_of(tmp_path: Path, text: str, key: str, prefix: tuple[str, ...], line: int | None):
    path = tmp_path / "f.toml"
    path.write_text(text)
    assert line_of(path, key, prefix) == line
