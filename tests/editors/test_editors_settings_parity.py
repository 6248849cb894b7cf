"""package.json's `contributes.configuration` mirrors agent_core.settings.Settings.

Every field of the settings model (walked recursively through the nested
models) is either contributed as `agentls.<camelCase.path>` with the same JSON
type, default, enum values, bounds and description, or listed in NOT_EXPOSED
with the reason; every contributed setting is either such a field or listed in
CLIENT_ONLY. Drift on either side fails here.
"""

from __future__ import annotations

import json
import re
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import annotated_types
import pytest
from pydantic import BaseModel, SecretStr
from pydantic.alias_generators import to_camel
from pydantic.fields import FieldInfo

from agent_core.settings import Settings

EDITOR_CLIENT = Path(__file__).resolve().parents[2] / "editor_client"

# Settings the VS Code client reads itself; never sent to the server (the model would reject them).
CLIENT_ONLY = {
    "agentls.python": "interpreter that runs the language server; chosen by the client",
    "agentls.serverCommand": "the command line that starts the language server; chosen by the client",
    "agentls.trace.server": "vscode-languageclient's own message trace into the output channel",
}

# Engine settings deliberately not offered in the editor's settings UI.
NOT_EXPOSED = {
    "apiKey": "a secret: only ever read from the environment variable named by apiKeyEnv",
    "retryBackoffS": "retry tuning for CI and tests, not an editor preference",
    "prompts": "prompt templates belong in the workspace's .agentls.toml, next to the code",
    "journal": "the run journal backs Show trace; turning it off belongs to the CLI",
    "localModel": "the bundled model is chosen at install time, not per editor",
    "detectLocalServers": "which local model server runs is a machine choice, made once in the user's config",
    "fim": "how an endpoint takes fill-in-the-middle belongs beside its base_url, in the user's config",
    "memory.path": "a machine path to the memory database; the project's .agentls/memory.sqlite is the default",
    "prices": "a table of model prices belongs in the user's config, beside the endpoints it prices",
}

SCALAR_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", dict: "object"}


def _package() -> dict[str, Any]:
    return json.loads((EDITOR_CLIENT / "package.json").read_text(encoding="utf-8"))


def _properties() -> dict[str, dict[str, Any]]:
    return _package()["contributes"]["configuration"]["properties"]


def _leaf_fields(model: type[BaseModel], prefix: str = "") -> dict[str, FieldInfo]:
    """Dotted camelCase path -> field, descending into nested settings models."""
    out: dict[str, FieldInfo] = {}
    for name, info in model.model_fields.items():
        path = prefix + to_camel(name)
        annotation = info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            out.update(_leaf_fields(annotation, path + "."))
        else:
            out[path] = info
    return out


def _json_schema_of(annotation: Any) -> tuple[set[str], list[Any] | None]:
    """(JSON types, enum values or None) of a field annotation."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        found: set[str] = set()
        enum: list[Any] | None = None
        for arg in get_args(annotation):
            arg_types, arg_enum = _json_schema_of(arg)
            found |= arg_types
            enum = arg_enum or enum
        return found, enum
    if origin is Literal:
        values = list(get_args(annotation))
        return {SCALAR_TYPES[type(values[0])]}, values
    if annotation is type(None):
        return {"null"}, None
    if origin is dict:
        return {"object"}, None
    if annotation is SecretStr:
        return {"secret"}, None
    return {SCALAR_TYPES[annotation]}, None


def _bounds(info: FieldInfo) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in info.metadata:
        if isinstance(item, annotated_types.Ge):
            out["minimum"] = item.ge
        elif isinstance(item, annotated_types.Le):
            out["maximum"] = item.le
        elif isinstance(item, annotated_types.Gt):
            out["exclusiveMinimum"] = item.gt
        elif isinstance(item, annotated_types.Lt):
            out["exclusiveMaximum"] = item.lt
    return out


def _exposed_fields() -> dict[str, FieldInfo]:
    return {path: info for path, info in _leaf_fields(Settings).items() if path not in NOT_EXPOSED}


def test_every_setting_is_contributed_or_deliberately_left_out() -> None:
    contributed = {key.removeprefix("agentls.") for key in _properties() if key not in CLIENT_ONLY}
    model = set(_leaf_fields(Settings))
    assert set(NOT_EXPOSED) <= model, f"NOT_EXPOSED names settings the model lacks: {set(NOT_EXPOSED) - model}"
    missing = model - set(NOT_EXPOSED) - contributed
    assert not missing, f"engine settings missing from package.json (add them or list them in NOT_EXPOSED): {missing}"
    unknown = contributed - model
    assert not unknown, f"package.json settings the engine does not know (fix or list in CLIENT_ONLY): {unknown}"
    assert not contributed & set(NOT_EXPOSED), "a setting is both contributed and listed as not exposed"


def _declared_types(prop: dict[str, Any]) -> set[str]:
    declared = prop["type"]
    return set(declared) if isinstance(declared, list) else {declared}


@pytest.mark.parametrize("path", sorted(_exposed_fields()))
def test_contributed_setting_matches_the_model(path: str) -> None:
    info = _exposed_fields()[path]
    prop = _properties()[f"agentls.{path}"]
    json_types, enum = _json_schema_of(info.annotation)
    assert _declared_types(prop) == json_types, f"{path}: type {prop['type']} vs model {json_types}"
    assert prop.get("enum") == enum, f"{path}: enum {prop.get('enum')} vs model {enum}"
    default = info.get_default(call_default_factory=True)
    assert "default" in prop and prop["default"] == default, f"{path}: default {prop.get('default')!r} vs {default!r}"
    assert type(prop["default"]) is not bool or type(default) is bool, f"{path}: boolean default for a number"
    bounds = {k: prop[k] for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum") if k in prop}
    assert bounds == _bounds(info), f"{path}: bounds {bounds} vs model {_bounds(info)}"
    assert info.description and prop["description"].startswith(info.description), (
        f"{path}: description {prop['description']!r} does not start with the model's {info.description!r}"
    )


def test_every_contributed_setting_has_type_default_and_description() -> None:
    for key, prop in _properties().items():
        assert key.startswith("agentls."), key
        for field in ("type", "default", "description", "markdownDescription"):
            assert field in prop, f"{key} lacks {field}"


def test_package_defaults_validate_to_the_model_defaults() -> None:
    """All contributed defaults, nested as the client nests them, are accepted and equal the model's."""
    tree: dict[str, Any] = {}
    for key, prop in _properties().items():
        if key in CLIENT_ONLY:
            continue
        *parents, leaf = key.removeprefix("agentls.").split(".")
        node = tree
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = prop["default"]
    assert Settings.model_validate(tree).model_dump() == Settings().model_dump()


def test_client_strips_exactly_the_client_only_settings() -> None:
    """The extension's CLIENT_ONLY list (settings.ts) is the one this test allows."""
    source = (EDITOR_CLIENT / "src" / "settings.ts").read_text(encoding="utf-8")
    match = re.search(r"CLIENT_ONLY: readonly string\[\] = \[([^\]]*)\]", source)
    assert match, "settings.ts no longer declares CLIENT_ONLY"
    listed = {f"agentls.{name}" for name in re.findall(r'"([^"]+)"', match.group(1))}
    assert listed == set(CLIENT_ONLY)


def test_api_key_setting_names_a_variable_never_holds_a_key() -> None:
    props = _properties()
    assert not any(key.lower().endswith("apikey") for key in props), "an API key itself must not be a setting"
    assert "NAME" in props["agentls.apiKeyEnv"]["description"]
