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
from agent_core.settings.limits import LIMITS
from agent_core.settings.trust import TRUSTED_ONLY

HEADER = """# Configuration

Generated from `agent_core/settings/__init__.py` by `python -m agent_core.settings.doc`.

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
`AGENTLS_API_KEY`, then `OPENAI_API_KEY`). A project's own files (3 and 4)
may not set the keys listed under "Trust boundary" below.

A bad setting stops the CLI (exit 2) with where it was written and, for an
unknown key, the key probably meant:
`/w/.agentls.toml, line 3: max_iteration: unknown setting; did you mean
max_iterations?`; an unknown table the same way, at its header
(`line 5: serach: unknown setting; did you mean search?`, or `command line:
serach: ...` for `--set serach.x=1`); an environment variable is named as such, an editor setting
by its editor key (`agentls.maxIteration`). The language server shows the same
message and goes on with the defaults. An `AGENTLS_*` variable that is no
setting but looks like one (`AGENTLS_MAX_ITERATION`) is a warning, not an error.

The files' JSON schema is `agent_core/settings/settings.schema.json` (`agentls config
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


TRUST = """
## Trust boundary

A cloned repository is not trusted. The keys below choose where your source
and API key are sent, how isolated the tests and model-written code run, or
make agentls run code or send data without being asked: they are read only
from your user config file, the environment, command-line flags and your
editor's *user* settings. `[tool.agentls]` in `pyproject.toml` or
`.agentls.toml` that sets one is ignored, with a warning naming the file and
the key (the CLI on stderr, the run's journal and `summary.json` under
`settings_warnings`; the language server as a warning message), and
`agentls config show` lists it as IGNORED with the reason. A value that only
tightens is kept (a project may ask for `bubblewrap` or `docker`, for
`safety = "block"`, or turn `run_tests_on_save` off).

To let a project you trust set them, `agentls config trust PATH` (`--remove`,
`--list`): the list is `trusted-folders.json` beside the user config file,
outside every project, and covers the folder and everything under it.

`test_command` and `sandbox.docker_image` stay project settings: what they
name runs inside the sandbox (no network, writes only in the copy), whose
backend only you choose. So do `prompts` (a path is read only
to fill a prompt template that must hold its placeholders); limits and budgets
only downwards (below).
`sandbox.python` does not: an interpreter outside the project that is no
virtual environment is asked for its facts on the host (docs/threat-model.md).
In VS Code the same keys are `"scope": "machine"`: VS Code accepts them only in
user (or remote) settings, and the extension sends them from user scope only,
reporting a workspace or folder value it dropped (docs/editors.md).

| setting (file) | editor key | a project file may set |
| --- | --- | --- |
"""


def trust_rows() -> Iterator[str]:
    for key, rule in TRUSTED_ONLY.items():
        editor = "agentls." + ".".join(to_camel(part) for part in key.split("."))
        allowed = ", ".join(f"`{json.dumps(v)}`" for v in sorted(rule.project_may_set, key=str)) or "nothing"
        yield f"| `{key}` | `{editor}` | {allowed} (it {rule.why}) |"


LIMITS_TEXT = """
## Limits a project may only tighten

The keys below protect you by their size or by being on: the sandbox's
bounds, the checks of a verified change, the budgets of a run
(`agent_core/settings/limits.py`, `LIMITS`). A project file may lower a limit
or a budget and turn a check on; a value that loosens one (above what your
user config and the defaults give, or a check turned off) is ignored with a
warning naming the file, as above, and `agentls config show` lists it as
IGNORED. The environment, flags and your user config set them freely, and so
does a folder you trust (`agentls config trust PATH`).

| setting (file) | editor key | tighter is | what it does |
| --- | --- | --- | --- |
"""


def limit_rows() -> Iterator[str]:
    for key, limit in LIMITS.items():
        editor = "agentls." + ".".join(to_camel(part) for part in key.split("."))
        tighter = "on" if limit.tighter == "on" else "lower" + (" (0: none)" if limit.zero_is_none else "")
        yield f"| `{key}` | `{editor}` | {tighter} | {limit.what} |"


def render() -> str:
    lines = [f"| `{k}` | `{e}` | {t} | `{d}` | {desc} |" for k, e, t, d, desc in rows()]
    return (HEADER + "\n".join(lines) + "\n" + TRUST + "\n".join(trust_rows()) + "\n" + LIMITS_TEXT
            + "\n".join(limit_rows()) + "\n")


if __name__ == "__main__":
    print(render(), end="")
