"""Settings layers: every key from the environment, the user file below the project's, provenance."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import pytest
from pydantic import BaseModel

from agent_core.settings import Settings, SettingsError, load_settings, load_settings_with_layers
from agent_core.settings.sources import ENV_NOT_SETTINGS, env_name, leaf_paths, origins


def _leaf_fields(model: type[BaseModel], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        if info.exclude:
            continue
        annotation = info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            out.update(_leaf_fields(annotation, f"{prefix}{name}."))
        else:
            out[prefix + name] = info
    return out


def _other_value(info: Any) -> tuple[str, Any]:
    """(environment text, expected value) different from the field's default and valid for it."""
    default = info.get_default(call_default_factory=True)
    args = get_args(info.annotation)
    if get_origin(info.annotation) is Literal:
        choice = next(v for v in args if v != default)
        return choice, choice
    kind = type(default) if default is not None else next(a for a in args if a is not type(None))
    if kind is bool:
        return str(not default).lower(), not default
    if kind is int:
        return str(default + 1), default + 1
    if kind is float:
        value = default / 2 if default else 1.0
        return str(value), value
    if kind is dict and get_args(info.annotation)[1] == tuple[float, float]:  # prices: model -> (in, out)
        return json.dumps({"gpt-4o-mini": [0.15, 0.6]}), {"gpt-4o-mini": (0.15, 0.6)}
    if kind is dict:
        return json.dumps({"coder": "from env {goal}"}), {"coder": "from env {goal}"}
    return "set-by-env", "set-by-env"


LEAVES = _leaf_fields(Settings)
# Settings whose AGENTLS_ name already means something else (a GGUF file for AGENTLS_LOCAL_MODEL).
RESERVED = {key for key in LEAVES if env_name(key) in ENV_NOT_SETTINGS}


def test_only_local_model_has_no_environment_variable():
    assert RESERVED == {"local_model"}


@pytest.mark.parametrize("key", sorted(set(LEAVES) - RESERVED))
def test_every_setting_can_be_set_from_the_environment(key: str, tmp_path: Path):
    text, expected = _other_value(LEAVES[key])
    env = {"AGENTLS_CONFIG": str(tmp_path / "none.toml"), env_name(key): text}
    settings, layers, _ = load_settings_with_layers(None, None, env)
    value: Any = settings
    for part in key.split("."):
        value = getattr(value, part)
    assert value == expected
    assert origins(layers)[key].origin_of(key) == env_name(key)


def test_precedence_user_file_pyproject_dotfile_env_flag(tmp_path: Path):
    user = tmp_path / "user.toml"
    user.write_text(
        'model = "user"\ntemperature = 0.5\nsamples = 5\nmax_revisions = 6\n[sandbox]\nbackend = "process"\n'
    )
    ws = tmp_path / "ws"
    ws.mkdir()  # the project's files lower samples and max_revisions (a project file may only tighten them)
    (ws / "pyproject.toml").write_text('[tool.agentls]\nmodel = "pyproject"\nsamples = 4\nmaxRevisions = 5\n')
    (ws / ".agentls.toml").write_text('samples = 2\nmax-revisions = 4\n')
    env = {"AGENTLS_CONFIG": str(user), "AGENTLS_MAX_REVISIONS": "7", "AGENTLS_SANDBOX__PIDS": "64"}
    settings, layers, _ = load_settings_with_layers(ws, {"sandbox": {"backend": "bubblewrap"}}, env)
    got = {k: getattr(settings, k) for k in ("temperature", "model", "samples", "max_revisions")}
    assert got == {"temperature": 0.5, "model": "pyproject", "samples": 2, "max_revisions": 7}
    assert (settings.sandbox.backend, settings.sandbox.pids) == ("bubblewrap", 64)
    where = {key: layer.name for key, layer in origins(layers).items()}
    assert where == {"temperature": "user file", "model": "pyproject", "samples": ".agentls.toml",
                     "max_revisions": "env", "sandbox.pids": "env", "sandbox.backend": "flag"}


def test_user_file_rejects_keys_and_bad_toml_naming_the_file(tmp_path: Path):
    user = tmp_path / "user.toml"
    user.write_text('api_key = "sk-nope"\n')
    with pytest.raises(SettingsError, match="user.toml: api_key may not be set"):
        load_settings(None, env={"AGENTLS_CONFIG": str(user)})
    user.write_text("not toml at all")
    with pytest.raises(SettingsError, match="user.toml"):
        load_settings(None, env={"AGENTLS_CONFIG": str(user)})


@pytest.mark.parametrize(
    "env, fragment",
    [
        ({"AGENTLS_MAX_ITERATIONS": "0"}, "max_iterations"),
        ({"AGENTLS_SANDBOX__BACKEND": "kvm"}, "sandbox.backend"),
        ({"AGENTLS_PROMPTS": "{not json"}, "prompts"),
    ],
)
def test_bad_environment_values_name_the_key(env: dict[str, str], fragment: str, tmp_path: Path):
    with pytest.raises(SettingsError, match=fragment):
        load_settings(None, env={"AGENTLS_CONFIG": str(tmp_path / "none.toml"), **env})


def test_variables_with_other_meanings_and_old_spellings(tmp_path: Path):
    env = {"AGENTLS_CONFIG": str(tmp_path / "none.toml"), "AGENTLS_LOCAL_MODEL": "/models/x.gguf",
           "AGENTLS_SEARCH": "off", "AGENTLS_MODEL_DIR": "/models", "AGENTLS_API_KEY": "sk-main"}
    settings, layers, key_var = load_settings_with_layers(None, None, env)
    assert settings.local_model == Settings().local_model  # AGENTLS_LOCAL_MODEL names a GGUF file, not this
    assert settings.search.enabled is False
    assert origins(layers)["search.enabled"].origin_of("search.enabled") == "AGENTLS_SEARCH"
    assert key_var == "AGENTLS_API_KEY" and settings.api_key.get_secret_value() == "sk-main"
    assert all("sk-main" not in json.dumps(layer.values) for layer in layers)


def test_leaf_paths_keep_prompt_tables_whole():
    values = {"prompts": {"coder": "x"}, "sandbox": {"pids": 8}}
    assert dict(leaf_paths(values)) == {"prompts": {"coder": "x"}, "sandbox.pids": 8}


def test_prompt_overrides_merge_role_by_role_across_layers(tmp_path: Path):
    user = tmp_path / "user.toml"
    user.write_text('[prompts]\nplanner = "user planner {goal}"\ncoder = "user coder {goal}"\n')
    (tmp_path / ".agentls.toml").write_text('[prompts]\ncoder = "project coder {goal}"\n')
    settings = load_settings(tmp_path, env={"AGENTLS_CONFIG": str(user)})
    assert settings.prompts == {"planner": "user planner {goal}", "coder": "project coder {goal}"}
