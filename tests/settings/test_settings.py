"""Settings: layering of files, environment and overrides; clear errors."""

from pathlib import Path

import pytest

from agent_core.settings import SettingsError, load_settings


def test_defaults_without_workspace():
    s = load_settings(None, env={})
    assert s.base_url is None
    assert s.max_iterations == 3
    assert s.max_revisions == 2
    assert s.sandbox.timeout_s == 300
    assert s.api_key is None


def test_layering_file_env_overrides(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[tool.agentls]\nmodel = "from-pyproject"\nmaxIterations = 2\n')
    (tmp_path / ".agentls.toml").write_text('max_iterations = 1\n[sandbox]\ntimeout_s = 9\n')
    s = load_settings(tmp_path, env={"AGENTLS_MODEL": "from-env", "OPENAI_BASE_URL": "http://x/v1"})
    assert (s.model, s.max_iterations, s.sandbox.timeout_s, s.base_url) == ("from-env", 1, 9, "http://x/v1")
    s = load_settings(tmp_path, overrides={"model": "flag", "maxIterations": 2}, env={"AGENTLS_BASE_URL": "http://a/v1"})
    assert (s.model, s.max_iterations, s.base_url) == ("flag", 2, "http://a/v1")


def test_api_key_from_env_only(tmp_path: Path):
    (tmp_path / ".agentls.toml").write_text('api_key = "sk-nope"\n')
    with pytest.raises(SettingsError, match="api_key"):
        load_settings(tmp_path, env={})
    s = load_settings(None, env={"OPENAI_API_KEY": "sk-openai"})
    assert s.api_key.get_secret_value() == "sk-openai"
    assert "sk-openai" not in s.model_dump_json()
    s = load_settings(None, env={"OPENAI_API_KEY": "sk-openai", "AGENTLS_API_KEY": "sk-agentls"})
    assert s.api_key.get_secret_value() == "sk-agentls"


def test_role_profile_falls_back_and_overrides(tmp_path: Path):
    user = tmp_path / "user.toml"  # endpoints and key variables come from the user's file, never the project's
    user.write_text(
        'base_url = "http://main/v1"\n[roles.coder]\nmodel = "big"\napi_key_env = "CODER_KEY"\ntemperature = 0.9\n'
    )
    import os

    os.environ["CODER_KEY"] = "sk-coder"
    try:
        s = load_settings(tmp_path, env={"AGENTLS_API_KEY": "sk-main", "AGENTLS_CONFIG": str(user)})
        coder, planner = s.profile("coder"), s.profile("planner")
    finally:
        del os.environ["CODER_KEY"]
    assert (coder.model, coder.api_key, coder.temperature, coder.base_url) == ("big", "sk-coder", 0.9, "http://main/v1")
    assert (planner.model, planner.api_key) == (s.model, "sk-main")
    assert "sk-coder" not in repr(coder)


@pytest.mark.parametrize(
    "toml, fragment",
    [
        ("max_iterations = 0\n", "max_iterations"),
        ("[sandbox]\ntimeout_s = -1\n", "sandbox.timeout_s"),
        ("nonsense = 1\n", "nonsense"),
        ("[sandbox]\ndocker_workspace = 'sometimes'\n", "sandbox.docker_workspace"),
        ("this is not toml", ".agentls.toml"),
    ],
)
def test_bad_settings_name_the_key(tmp_path: Path, toml: str, fragment: str):
    (tmp_path / ".agentls.toml").write_text(toml)
    with pytest.raises(SettingsError) as info:
        load_settings(tmp_path, env={})
    assert fragment in str(info.value)
