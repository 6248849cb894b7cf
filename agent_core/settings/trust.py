"""The trust boundary: which settings a project's own files may not set, and the folders the user trusts.

A cloned repository is not trusted (issue 27): what chooses an endpoint, the
variable a key is read from, the sandbox backend, the safety level, or makes
agentls run code, send data or write outside the project without being asked
is read only from the user's config file, the environment, flags and the
editor's user-scope settings. `TRUSTED_ONLY` is the one list of those keys;
the VS Code extension marks the same keys `"scope": "machine"` (a test keeps
the two equal). A project file (`[tool.agentls]` in pyproject.toml,
`.agentls.toml`) that sets one is ignored with a warning naming the file and
the key, unless the value only tightens (a project may ask for bubblewrap, or
for `safety = "block"`). The user can trust a folder with `agentls config
trust PATH`; the list lives beside the user config file, outside every project.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_core.models import ROLES
from agent_core.settings.redact import redact_url
from agent_core.settings.sources import DOTFILE, PYPROJECT, Layer, user_config_file

TRUST_FILE_NAME = "trusted-folders.json"
PROJECT_LAYERS = (PYPROJECT, DOTFILE)

_ENDPOINT = "chooses where prompts, source code and the API key are sent"
_KEY_VAR = "chooses which environment variable's secret is sent to the endpoint"


@dataclass(frozen=True)
class TrustRule:
    """Why a key is trusted-only, and the values a project may still set because they only tighten."""

    why: str
    project_may_set: frozenset[Any] = field(default_factory=frozenset)


def _profile_rules() -> dict[str, TrustRule]:
    rules: dict[str, TrustRule] = {}
    for prefix in [*(f"roles.{role}." for role in ROLES), "fallback."]:
        rules[prefix + "base_url"] = TrustRule(_ENDPOINT)
        rules[prefix + "api_key_env"] = TrustRule(_KEY_VAR)
    return rules


# Dotted snake_case key -> rule. test_command stays project-settable: it runs inside the sandbox, whose
# backend only the user chooses (docs/configuration.md, "Trust boundary").
TRUSTED_ONLY: dict[str, TrustRule] = {
    "base_url": TrustRule(_ENDPOINT),
    "api_key_env": TrustRule(_KEY_VAR),
    **_profile_rules(),
    "detect_local_servers": TrustRule(
        "chooses an endpoint (a model server found on loopback) when none is configured", frozenset({False})
    ),
    "sandbox.backend": TrustRule(
        "chooses how isolated tests and model-written code run; process runs them on the host",
        frozenset({"docker", "bubblewrap"}),
    ),
    "sandbox.python": TrustRule(
        "chooses the program agentls starts as the interpreter of the project's tests; a repository could name any "
        "program of its own"
    ),
    "safety": TrustRule("decides whether risky model-written code runs without asking", frozenset({"ask", "block"})),
    "preview_edits": TrustRule("applies changes without showing them first", frozenset({True})),
    "run_tests_on_save": TrustRule("runs the project's tests without being asked", frozenset({False})),
    "search.background_model_round": TrustRule(
        "sends source code to the model without being asked", frozenset({False})
    ),
    "memory.path": TrustRule("writes a database outside the project"),
}


@dataclass(frozen=True)
class IgnoredSetting:
    """A trusted-only key a project file set, and was not honoured."""

    key: str
    value: Any
    origin: str  # the file
    why: str

    def shown_value(self) -> Any:
        return redact_url(self.value) if isinstance(self.value, str) else self.value

    def refusal(self) -> str:
        """Why the key was not applied, in a few words (`agentls config show`)."""
        return f"a project file may not set it: it {self.why}"

    def message(self) -> str:
        return (
            f"{self.origin}: {self.key} = {json.dumps(self.shown_value())} ignored: a project file may not set it "
            f"(it {self.why}); set it in your user config, the environment or a flag, or trust the folder "
            f"with `agentls config trust {Path(self.origin).parent}`"
        )


def trust_file(env: Mapping[str, str]) -> Path:
    """The trusted-folders list: beside the user config file (so `AGENTLS_CONFIG` moves it too)."""
    return user_config_file(env).with_name(TRUST_FILE_NAME)


def trusted_folders(env: Mapping[str, str]) -> list[Path]:
    """The folders the user trusts; an unreadable or malformed list trusts nothing."""
    try:
        data = json.loads(trust_file(env).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    folders = data.get("folders", []) if isinstance(data, dict) else []
    return [Path(f) for f in folders if isinstance(f, str) and f]


def trusted_root(workspace: Path, env: Mapping[str, str]) -> Path | None:
    """The trusted folder that holds `workspace` (itself or a parent), if any."""
    real = Path(os.path.realpath(workspace))
    for folder in trusted_folders(env):
        if real == folder or folder in real.parents:
            return folder
    return None


def set_trusted(path: Path, env: Mapping[str, str], trusted: bool = True) -> Path:
    """Add (or remove) `path`, resolved, to the trusted-folders list; return the list's file."""
    real = Path(os.path.realpath(path.expanduser()))
    folders = [f for f in trusted_folders(env) if f != real] + ([real] if trusted else [])
    target = trust_file(env)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(json.dumps({"folders": [str(f) for f in folders]}, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, target)
    return target


def lookup(values: dict[str, Any], dotted: str) -> tuple[bool, Any]:
    """(whether `values` holds the dotted key, its value)."""
    *parents, leaf = dotted.split(".")
    node: Any = values
    for part in parents:
        node = node.get(part) if isinstance(node, dict) else None
    if not isinstance(node, dict) or leaf not in node:
        return False, None
    return True, node[leaf]


def without(values: dict[str, Any], dotted: str) -> dict[str, Any]:
    """A copy of `values` without `dotted` (empty parent tables dropped)."""
    head, _, rest = dotted.partition(".")
    out = dict(values)
    if not rest:
        out.pop(head, None)
    elif isinstance(out.get(head), dict):
        inner = without(out[head], rest)
        if inner:
            out[head] = inner
        else:
            out.pop(head)
    return out


def _allowed(rule: TrustRule, value: Any) -> bool:
    try:
        return value in rule.project_may_set and type(value) is type(next(iter(rule.project_may_set)))
    except TypeError:  # an unhashable value (a table where a string belongs) is never allowed
        return False


def apply_trust(
    layers: list[Layer], workspace: Path | None, env: Mapping[str, str]
) -> tuple[list[Layer], list[IgnoredSetting]]:
    """The layers with the trusted-only keys the project's files set removed, and what was removed."""
    if workspace is None or trusted_root(workspace, env) is not None:
        return layers, []
    out: list[Layer] = []
    ignored: list[IgnoredSetting] = []
    for layer in layers:
        values = layer.values
        if layer.name in PROJECT_LAYERS:
            for key, rule in TRUSTED_ONLY.items():
                present, value = lookup(values, key)
                if present and not _allowed(rule, value):
                    values = without(values, key)
                    ignored.append(IgnoredSetting(key, value, layer.origin_of(key), rule.why))
        if values:
            out.append(Layer(layer.name, layer.origin, values, layer.key_origins))
    return out, ignored
