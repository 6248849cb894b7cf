"""Render the settings model as the Markdown reference in docs/configuration.md.

`python -m agent_core.settings_doc > docs/configuration.md` regenerates it; a
test fails when the file and the model drift apart.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from pydantic import BaseModel
from pydantic.alias_generators import to_camel

from agent_core.settings import Settings

HEADER = """# Configuration

Generated from `agent_core/settings.py` by `python -m agent_core.settings_doc`.

Sources, later winning (`agentls config show` prints each value and the one
that set it):

1. defaults (below);
2. the user config file: `config.toml` in the user config directory
   (`~/.config/agentls/config.toml` on Linux, `agentls config path` prints it),
   or the file named by `AGENTLS_CONFIG`;
3. `[tool.agentls]` in the workspace's `pyproject.toml`;
4. the workspace's `.agentls.toml`;
5. the environment: every setting as `AGENTLS_` + its key in capitals, nested
   keys joined by `__` (`AGENTLS_SANDBOX__BACKEND=docker`,
   `AGENTLS_ROLES__CODER__MODEL=...`; tables such as `AGENTLS_PROMPTS` as JSON).
   `OPENAI_BASE_URL` stands in for an unset `AGENTLS_BASE_URL`;
   `AGENTLS_SEARCH=0` still turns `search.enabled` off. `AGENTLS_LOCAL_MODEL` is
   not `local_model`: it names a GGUF file to serve (see local-model.md);
6. command-line flags or the editor's settings (`initializationOptions` and
   `workspace/configuration`, section `agentls`).

Keys may be written snake_case (files) or camelCase (editors). API keys are
never read from files: `api_key_env` names the variable holding one (then
`AGENTLS_API_KEY`, then `OPENAI_API_KEY`).

The files' JSON schema is `agent_core/settings.schema.json` (`agentls config
schema` prints it); a TOML editor that reads schemas (taplo, Even Better TOML)
completes and checks `.agentls.toml` and the user file when it starts with a
`#:schema` comment naming the file.

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
