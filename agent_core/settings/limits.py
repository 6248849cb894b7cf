"""The settings that protect the user by their size or by being on, and which way a project's own files may move them.

A repository's `.agentls.toml` or `[tool.agentls]` may tighten these (a lower
memory limit, a shorter timeout, a check turned on, a smaller budget) but not
loosen them: a project file that raises a limit or a budget above what the
user's config and the defaults give, or turns a check off, is ignored with a
warning naming the file, the key and the value kept, unless the user trusts
the folder (`agentls config trust PATH`, settings/trust.py). `LIMITS` is the
one table of those keys and their tighter direction; the environment, flags
and the user's own files set them freely.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agent_core.settings.sources import Layer, deep_merge, merged
from agent_core.settings.trust import PROJECT_LAYERS, IgnoredSetting, lookup, trusted_root, without


@dataclass(frozen=True)
class Limit:
    """Which way a setting tightens: a lower number (`lower`; with `zero_is_none`, 0 means no limit at all), or a
    check turned on (`on`)."""

    tighter: Literal["lower", "on"]
    what: str
    zero_is_none: bool = False


def _lower(what: str, zero_is_none: bool = False) -> Limit:
    return Limit("lower", what, zero_is_none)


def _on(what: str) -> Limit:
    return Limit("on", what)


# Dotted snake_case key -> its limit: the sandbox's bounds, the checks of a verified change, the budgets of a run.
LIMITS: dict[str, Limit] = {
    "sandbox.timeout_s": _lower("bounds how long a test run may take"),
    "sandbox.memory_mb": _lower("bounds the memory a test run may use"),
    "sandbox.pids": _lower("bounds the processes a test run may start"),
    "sandbox.file_size_mb": _lower("bounds the largest file a test run may write"),
    "sandbox.cpus": _lower("bounds the CPUs a test run may use"),
    "verify.goal_tests": _on("checks a task's change against tests of its goal"),
    "verify.tool_recheck": _on("re-checks a diagnostic's fix with the tool that reported it"),
    "verify.verifier": _on("has a model score the change against the goal"),
    "journal": _on("records what a run did"),
    "max_concurrent_runs": _lower("bounds the runs (and sandboxes) working at once"),
    "samples": _lower("bounds the coder answers drawn per round"),
    "max_iterations": _lower("bounds the model rounds of a run"),
    "max_revisions": _lower("bounds the replans of a run"),
    "token_budget": _lower("bounds the tokens a run may spend", zero_is_none=True),
    "time_budget_s": _lower("bounds the time a run may take", zero_is_none=True),
    "search.budget_s": _lower("bounds the time the mutant search may take"),
    "search.max_mutants": _lower("bounds the mutants the search may run"),
    "mutation.budget_s": _lower("bounds the time mutation testing may take"),
    "mutation.max_mutants": _lower("bounds the mutants mutation testing may run"),
}


def loosens(limit: Limit, value: Any, base: Any) -> bool:
    """Whether `value` is looser than `base` (a value of the wrong type is left to validation, which names it)."""
    if limit.tighter == "on":
        return base is True and value is False
    if isinstance(value, bool) or not isinstance(value, int | float) or not isinstance(base, int | float):
        return False
    if limit.zero_is_none:
        value, base = (math.inf if v == 0 else v for v in (value, base))
    return bool(value > base)


@dataclass(frozen=True)
class LoosenedSetting(IgnoredSetting):
    """A limit a project file loosened, and was not honoured; `kept` is the value that applies instead."""

    kept: Any = None

    def refusal(self) -> str:
        return f"a project file may only tighten it: it {self.why}; {json.dumps(self.kept)} applies"

    def message(self) -> str:
        return (
            f"{self.origin}: {self.key} = {json.dumps(self.value)} ignored: a project file may only tighten it (it "
            f"{self.why}; {json.dumps(self.kept)} applies); set it in your user config, the environment or a flag, "
            f"or trust the folder with `agentls config trust {Path(self.origin).parent}`"
        )


def apply_limits(
    layers: list[Layer], defaults: Mapping[str, Any], workspace: Path | None, env: Mapping[str, str]
) -> tuple[list[Layer], list[IgnoredSetting]]:
    """The layers with every loosening a project file made removed, and what was removed. The base a project value
    is compared with is `defaults` under the layers read before the project's files (the user's config)."""
    if workspace is None or trusted_root(workspace, env) is not None:
        return layers, []
    first = next((i for i, layer in enumerate(layers) if layer.name in PROJECT_LAYERS), len(layers))
    base = deep_merge(dict(defaults), merged(layers[:first]))
    out: list[Layer] = []
    ignored: list[IgnoredSetting] = []
    for layer in layers:
        values = layer.values
        if layer.name in PROJECT_LAYERS:
            for key, limit in LIMITS.items():
                present, value = lookup(values, key)
                kept = lookup(base, key)[1]
                if present and loosens(limit, value, kept):
                    values = without(values, key)
                    ignored.append(LoosenedSetting(key, value, layer.origin_of(key), limit.what, kept))
        if values:
            out.append(Layer(layer.name, layer.origin, values, layer.key_origins))
    return out, ignored
