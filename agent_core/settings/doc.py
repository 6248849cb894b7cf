"""Render the settings model as the Markdown reference in docs/configuration.md.

`python -m agent_core.settings.doc > docs/configuration.md` regenerates it; a
test fails when the file and the model drift apart.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from pydantic import BaseModel
from pydantic.alias_generators import to_camel

from agent_core.settings import Settings

HEADER = """# Configuration

Generated from `agent_core/settings/__init__.py` by `python -m agent_core.settings.doc`.

Sources, later winning: defaults, `[tool.agentls]` in the workspace's
`pyproject.toml`, `.agentls.toml`, the environment (`AGENTLS_BASE_URL`,
`AGENTLS_API_KEY`, `AGENTLS_MODEL`, falling back to `OPENAI_BASE_URL` /
`OPENAI_API_KEY`; `AGENTLS_SEARCH=0` turns `search.enabled` off), then command-line flags or the editor's settings
(`initializationOptions` and `workspace/configuration`, section `agentls`).
Keys may be written snake_case (files) or camelCase (editors). API keys are
never read from files: `api_key_env` names the variable holding one.

| setting (file) | editor key | type | default | description |
| --- | --- | --- | --- | --- |
"""


def _type_name(annotation: object) -> str:
    text = str(annotation).replace("typing.", "")
    for noise in ("<class '", "'>"):
        text = text.replace(noise, "")
    return text.replace("|", "or").replace("  ", " ")


def rows(model: type[BaseModel] = Settings, prefix: str = "") -> Iterator[tuple[str, str, str, str, str]]:
    for name, field in model.model_fields.items():
        if field.exclude:
            continue
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            yield from rows(annotation, f"{prefix}{name}.")
            continue
        default = field.get_default(call_default_factory=True)
        key = f"{prefix}{name}"
        editor = "agentls." + ".".join(to_camel(part) for part in key.split("."))
        yield key, editor, _type_name(annotation), json.dumps(default), field.description or ""


def render() -> str:
    lines = [f"| `{k}` | `{e}` | {t} | `{d}` | {desc} |" for k, e, t, d, desc in rows()]
    return HEADER + "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render(), end="")
