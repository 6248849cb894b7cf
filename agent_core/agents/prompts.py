"""Effective prompt templates per role: the user's override, else the default.

An override is template text or a path to a file holding it (relative paths
are taken from the workspace). An override missing one of its role's required
placeholders is rejected with a `SettingsError` that names them (seed 001).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from agent_core.agents.render import PLACEHOLDER, placeholders
from agent_core.settings import Settings, SettingsError
from agent_core.workspace.instructions import read_project_instructions

PROMPT_MODULES = {
    "planner": "agent_core.agents.planner.prompt",
    "coder": "agent_core.agents.coder.prompt",
    "reflector": "agent_core.agents.reflector.prompt",
    "tester": "agent_core.agents.tester.prompt",
    "explainer": "agent_core.agents.explainer.prompt",  # no role of its own: it calls the reflector's model
    "verifier": "agent_core.agents.verifier.prompt",  # no role of its own either: the reflector's model
}


def _defaults() -> dict[str, tuple[str, tuple[str, ...]]]:
    out = {}
    for role, name in PROMPT_MODULES.items():
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        out[role] = (module.TEMPLATE, tuple(module.REQUIRED_PLACEHOLDERS))
    return out


def _override_text(value: str, workspace: Path | None) -> str:
    if "\n" not in value and "{" not in value and len(value) < 4096:
        candidate = Path(value).expanduser()
        if not candidate.is_absolute() and workspace is not None:
            candidate = workspace / candidate
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8")
        if value.endswith((".txt", ".md", ".prompt", ".j2")):
            raise SettingsError(f"prompt file {value!r} does not exist")
    return value


def effective_prompts(settings: Settings, workspace: Path | None = None) -> dict[str, str]:
    """Template per role; raise SettingsError for unknown roles or missing placeholders."""
    defaults = _defaults()
    unknown = sorted(set(settings.prompts) - set(defaults))
    if unknown:
        raise SettingsError(f"prompts: unknown role(s) {', '.join(unknown)}; known: {', '.join(sorted(defaults))}")
    out = {role: template for role, (template, _) in defaults.items()}
    for role, value in settings.prompts.items():
        text = _override_text(value, workspace)
        missing = [p for p in defaults[role][1] if p not in placeholders(text)]
        if missing:
            names = ", ".join("{" + p + "}" for p in missing)
            raise SettingsError(f"prompts.{role}: the override is missing required placeholder(s) {names}")
        out[role] = text
    return out


# Roles whose prompts carry the project's own instructions (AGENTS.md): those that plan, write or test code.
INSTRUCTED_ROLES = ("planner", "coder", "tester")


def with_instructions(prompts: dict[str, str], text: str, files: tuple[str, ...]) -> dict[str, str]:
    """`prompts` with the project's instructions appended to the planner's, coder's and tester's templates."""
    # A `{name}` in the instructions would be filled like a placeholder: spaced out, it stays text.
    safe = PLACEHOLDER.sub(lambda m: "{ " + m.group(1) + " }", text)
    block = f"\n\nThe project's own instructions ({', '.join(files)}); follow them where they apply:\n{safe}"
    return {role: template + block if role in INSTRUCTED_ROLES else template for role, template in prompts.items()}


def run_prompts(settings: Settings, workspace: Path, journal: Any = None) -> dict[str, str]:
    """The effective templates of a run, with the workspace's AGENTS.md/CONVENTIONS.md (journaled when read)."""
    return instructed(effective_prompts(settings, workspace), workspace, journal)


def instructed(prompts: dict[str, str], workspace: Path, journal: Any = None) -> dict[str, str]:
    """`prompts` with the workspace's instruction files appended (see `with_instructions`); the journal names them."""
    found = read_project_instructions(workspace)
    if found is None:
        return prompts
    if journal is not None:
        roles = [role for role in INSTRUCTED_ROLES if role in prompts]
        journal.write("instructions", files=list(found.files), chars=len(found.text), truncated=found.truncated,
                      roles=roles)
    return with_instructions(prompts, found.text, found.files)
