"""Where settings come from: one layer per source, in precedence order, and which layer set each key.

Layers, later winning: the model's defaults, the user's config file (platformdirs'
user config dir, `agentls/config.toml`, or the file named by `AGENTLS_CONFIG`),
`[tool.agentls]` in the workspace's `pyproject.toml`, the workspace's `.agentls.toml`,
the environment (every key as `AGENTLS_<KEY>`, nested keys joined by `__`:
`AGENTLS_SANDBOX__BACKEND=docker`; `OPENAI_BASE_URL` when `AGENTLS_BASE_URL` is unset),
then explicit overrides (CLI flags, the editor's settings).

Reading is pydantic-settings' sources (`TomlConfigSettingsSource`,
`PyprojectTomlConfigSettingsSource`, `EnvSettingsSource`). The merge is done here
rather than by `BaseSettings.__init__` because `agentls config show` must say which
layer set each value, and BaseSettings keeps no record of that.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs
from pydantic import BaseModel
from pydantic_settings import (
    EnvSettingsSource,
    PyprojectTomlConfigSettingsSource,
    TomlConfigSettingsSource,
)
from pydantic_settings import (
    SettingsError as SourceError,
)
from pydantic_settings.sources.utils import parse_env_vars


class SettingsError(ValueError):
    """Settings that cannot be used; the message names the bad keys."""


ENV_PREFIX = "AGENTLS_"
ENV_NESTED = "__"
USER_CONFIG_ENV = "AGENTLS_CONFIG"
DEFAULT = "default"
USER_FILE = "user file"
PYPROJECT = "pyproject"
DOTFILE = ".agentls.toml"
ENV = "env"
FLAG = "flag"
LAYER_NAMES = (DEFAULT, USER_FILE, PYPROJECT, DOTFILE, ENV, FLAG)

# AGENTLS_* variables that mean something else than the setting of the same name.
ENV_NOT_SETTINGS = {
    "AGENTLS_LOCAL_MODEL": "a GGUF file to serve instead of the bundled model (local_model/fetch.py)",
    "AGENTLS_API_KEY": "the default API key: read through api_key_env, never as a setting",
}
# Keys a file may not hold (secrets live in the environment).
FILE_FORBIDDEN = ("api_key",)
# Dict-valued settings whose keys are data (role names), not nested settings.
LEAF_DICTS = ("prompts", "prices")  # prices: keyed by model names ("gpt-4o-mini" keeps its dashes)


@dataclass(frozen=True)
class Layer:
    """The raw values one source gives, keys normalised to snake_case."""

    name: str
    origin: str
    values: dict[str, Any]
    key_origins: dict[str, str] = field(default_factory=dict)

    def origin_of(self, key: str) -> str:
        """Where this layer got `key`: the variable for the environment, else the file."""
        return self.key_origins.get(key, self.origin)


def env_name(key: str) -> str:
    """The environment variable of a dotted setting: `sandbox.timeout_s` -> `AGENTLS_SANDBOX__TIMEOUT_S`."""
    return ENV_PREFIX + key.upper().replace(".", ENV_NESTED)


def user_config_file(env: Mapping[str, str]) -> Path:
    """The user-level config file: `AGENTLS_CONFIG` if set, else `<user config dir>/agentls/config.toml`."""
    explicit = env.get(USER_CONFIG_ENV)
    if explicit:
        return Path(explicit).expanduser()
    return platformdirs.user_config_path("agentls") / "config.toml"


def normalise_keys(data: Mapping[str, Any]) -> dict[str, Any]:
    """camelCase and kebab-case keys to snake_case, recursively (prompt role names kept)."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        snake = "".join("_" + c.lower() if c.isupper() else c for c in key).replace("-", "_")
        keep = isinstance(value, Mapping) and snake not in LEAF_DICTS
        out[snake] = normalise_keys(value) if keep else value
    return out


def deep_merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """`extra` over `base`, merging nested tables key by key (prompts too: role by role)."""
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(dict(out[key]), value)
        else:
            out[key] = value
    return out


def _file_layer(name: str, path: Path, model: type[BaseModel]) -> Layer | None:
    if not path.is_file():
        return None
    try:
        if name == PYPROJECT:
            values: Mapping[str, Any] = PyprojectTomlConfigSettingsSource(model, toml_file=path)()  # type: ignore[arg-type]
        else:
            values = TomlConfigSettingsSource(model, toml_file=path)()  # type: ignore[arg-type]
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"{path}: {exc}") from exc
    found = normalise_keys(values)
    for key in FILE_FORBIDDEN:
        if key in found:
            raise SettingsError(f"{path}: {key} may not be set in a file; set api_key_env to a variable name instead")
    return Layer(name, str(path), found) if found else None


class _MappingEnvSource(EnvSettingsSource):
    """EnvSettingsSource over a given mapping instead of os.environ (tests and the LSP pass their own)."""

    def __init__(self, model: type[BaseModel], env: Mapping[str, str]) -> None:
        self._mapping = env
        super().__init__(
            model,  # type: ignore[arg-type]
            case_sensitive=False, env_prefix=ENV_PREFIX, env_prefix_target="all",
            env_nested_delimiter=ENV_NESTED, env_ignore_empty=True,
        )

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return parse_env_vars(self._mapping, self.case_sensitive, self.env_ignore_empty, self.env_parse_none_str)


def _legacy_env(env: Mapping[str, str]) -> dict[str, str]:
    """The environment with the variables that are not settings dropped and the old spellings mapped."""
    out = {k: v for k, v in env.items() if k.upper() not in ENV_NOT_SETTINGS}
    search = out.get("AGENTLS_SEARCH", "")
    if search and not search.lstrip().startswith("{"):  # AGENTLS_SEARCH=0: the older on/off switch
        out.pop("AGENTLS_SEARCH")
        off = search.strip().lower() in ("0", "false", "no", "off")
        out.setdefault("AGENTLS_SEARCH__ENABLED", "false" if off else "true")
    return out


def _env_layer(model: type[BaseModel], env: Mapping[str, str]) -> Layer | None:
    try:
        values = normalise_keys(_MappingEnvSource(model, _legacy_env(env))())
    except SourceError as exc:
        raise SettingsError(f"environment: {exc}") from exc
    values.pop("api_key", None)
    named = {k.upper() for k in env}
    key_origins = {key: env_name(key) for key, _ in leaf_paths(values) if env_name(key) in named}
    if "search" in values and "AGENTLS_SEARCH" in named and "AGENTLS_SEARCH__ENABLED" not in named:
        key_origins["search.enabled"] = "AGENTLS_SEARCH"
    if "base_url" not in values and env.get("OPENAI_BASE_URL"):
        values["base_url"] = env["OPENAI_BASE_URL"]
        key_origins["base_url"] = "OPENAI_BASE_URL"
    return Layer(ENV, "environment", values, key_origins) if values else None


def read_layers(
    model: type[BaseModel],
    workspace: Path | None,
    overrides: Mapping[str, Any] | None,
    env: Mapping[str, str],
    overrides_origin: str = "command line",
) -> list[Layer]:
    """Every non-empty layer above the defaults, lowest precedence first; `overrides_origin` names the flags'."""
    layers = [_file_layer(USER_FILE, user_config_file(env), model)]
    if workspace is not None:
        layers.append(_file_layer(PYPROJECT, workspace / "pyproject.toml", model))
        layers.append(_file_layer(DOTFILE, workspace / ".agentls.toml", model))
    layers.append(_env_layer(model, env))
    if overrides:
        flags = normalise_keys({k: v for k, v in overrides.items() if v is not None})
        flags.pop("api_key", None)
        layers.append(Layer(FLAG, overrides_origin, flags) if flags else None)
    return [layer for layer in layers if layer is not None]


def merged(layers: list[Layer]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for layer in layers:
        out = deep_merge(out, layer.values)
    return out


def leaf_paths(values: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted key, value) of every leaf; the dicts in LEAF_DICTS are leaves."""
    for key, value in values.items():
        path = prefix + key
        if isinstance(value, Mapping) and path not in LEAF_DICTS:
            yield from leaf_paths(value, path + ".")
        else:
            yield path, value


def origins(layers: list[Layer]) -> dict[str, Layer]:
    """Dotted key -> the layer that set it last (keys no layer set are absent: they are defaults)."""
    out: dict[str, Layer] = {}
    for layer in layers:
        for path, _ in leaf_paths(layer.values):
            out[path] = layer
    return out
