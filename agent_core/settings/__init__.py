"""The one typed settings model, and how it is filled.

Order (later wins): defaults, the user's config file, `[tool.agentls]` in the
workspace's `pyproject.toml`, `.agentls.toml`, the environment (`AGENTLS_<KEY>`,
nested keys joined by `__`), then explicit overrides (CLI flags or the editor's
`initializationOptions` / `workspace/configuration`); the layers are read in
`settings/sources.py`. Keys may be written snake_case or camelCase. API keys are
never read from files: a file names the environment variable that holds the key.
A project's own files may not set the keys in `settings/trust.py`'s
`TRUSTED_ONLY` (endpoints, key variables, the sandbox backend, safety, ...),
and may only tighten those in `settings/limits.py`'s `LIMITS` (the sandbox's
bounds, the checks, the budgets): what they may not do is dropped and listed
in `Settings.ignored`, unless the user trusts the folder. A bad setting is
reported with its file and line, or its variable, and a "did you mean"
(`settings/explain.py`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasGenerator, BaseModel, Field, PrivateAttr, SecretStr, ValidationError
from pydantic.alias_generators import to_camel
from pydantic_settings import SettingsConfigDict

from agent_core.models import Role
from agent_core.settings.explain import describe_validation_error, env_near_misses
from agent_core.settings.limits import apply_limits
from agent_core.settings.sources import Layer, SettingsError, merged, read_layers
from agent_core.settings.trust import IgnoredSetting, apply_trust

__all__ = ["Settings", "SettingsError", "load_settings", "load_settings_with_layers"]

_CONFIG = SettingsConfigDict(
    alias_generator=AliasGenerator(validation_alias=to_camel, serialization_alias=to_camel),
    populate_by_name=True,
    extra="forbid",
    pyproject_toml_table_header=("tool", "agentls"),
)


class ModelProfile(BaseModel):
    """Overrides for one role's model; unset fields fall back to the top-level ones."""

    model_config = _CONFIG

    base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint for this role.")
    model: str | None = Field(default=None, description="Model name for this role.")
    api_key_env: str | None = Field(default=None, description="Environment variable holding this role's API key.")
    temperature: float | None = Field(default=None, ge=0, le=2, description="Sampling temperature for this role.")


class RoleProfiles(BaseModel):
    """Per-role model profiles."""

    model_config = _CONFIG

    planner: ModelProfile = Field(default_factory=ModelProfile, description="Model profile of the planner.")
    coder: ModelProfile = Field(default_factory=ModelProfile, description="Model profile of the coder.")
    tester: ModelProfile = Field(default_factory=ModelProfile, description="Model profile of the test writer.")
    reflector: ModelProfile = Field(default_factory=ModelProfile, description="Model profile of the reflector.")


class FallbackProfile(BaseModel):
    """The model the coder escalates to when the first model's rounds fail (seed 004's delegation)."""

    model_config = _CONFIG

    base_url: str | None = Field(
        default=None, description="OpenAI-compatible endpoint of the fallback model (unset: the coder's)."
    )
    model: str | None = Field(
        default=None, description="Fallback model name (unset: the coder's); this or base_url turns escalation on."
    )
    api_key_env: str | None = Field(
        default=None, description="Environment variable holding the fallback endpoint's API key."
    )
    temperature: float | None = Field(
        default=None, ge=0, le=2, description="Sampling temperature of the fallback model (unset: the coder's)."
    )


class SandboxSettings(BaseModel):
    """Where and how tests run."""

    model_config = _CONFIG

    backend: Literal["auto", "docker", "bubblewrap", "process"] = Field(
        default="auto", description="Sandbox backend; auto prefers Docker, then bubblewrap, then a plain process."
    )
    timeout_s: float = Field(default=300.0, gt=0, description="Wall-clock limit of one test run, in seconds.")
    cpus: float = Field(default=1.0, gt=0, description="CPUs a test run may use (Docker) / CPU seconds scale.")
    memory_mb: int = Field(default=1024, ge=64, description="Memory limit of a test run, in MiB.")
    pids: int = Field(default=1024, ge=8, description="Maximum number of processes and threads in a test run.")
    file_size_mb: int = Field(default=512, ge=1, description="Largest file a test run may write, in MiB.")
    docker_image: str = Field(default="agentls/sandbox:local", description="Image for the Docker backend.")
    docker_workspace: Literal["auto", "bind", "copy"] = Field(
        default="auto",
        description="How a Docker run sees the workspace: bind-mount it, or copy it in and back (an engine on "
        "another machine); auto binds for a local socket or loopback TCP and copies otherwise.",
    )
    python: str | None = Field(
        default=None,
        description="Interpreter of the project's tests (the editor's chosen one); default: detected from "
        ".venv/, venv/, uv, Poetry, hatch, pdm, then python3 on PATH.",
    )
    test_timeout_s: float = Field(
        default=0.0,
        ge=0,
        description="Time bound of one test, in seconds, enforced inside pytest; 0 derives it from the baseline "
        "(10x its slowest passing test, at least 2 s, or 3x its slowest failing one plus 1 s when longer), a cap "
        "under which a test's call follows the run's passing tests (10x the slowest so far, at least 10 s; 2 s "
        "once one hung).",
    )


class MemorySettings(BaseModel):
    """Failure memory and success patterns."""

    model_config = _CONFIG

    enabled: bool = Field(default=True, description="Remember failures and successful patterns across runs.")
    path: str | None = Field(
        default=None, description="SQLite file of the memory (default: the project's own, .agentls/memory.sqlite)."
    )
    similarity_threshold: float = Field(default=0.7, ge=0, le=1, description="Minimum similarity of recalled items.")
    embeddings: Literal["local", "endpoint"] = Field(
        default="local", description="Local hashed n-gram embeddings, or the endpoint's /v1/embeddings."
    )


class SearchSettings(BaseModel):
    """Fault localization and the mutant search tried before any model call."""

    model_config = _CONFIG

    enabled: bool = Field(
        default=True, description="Try single-edit mutants of the suspicious lines before asking the model."
    )
    max_mutants: int = Field(
        default=1000, ge=1, le=5000, description="Most mutants tried per run (the time budget usually ends it first)."
    )
    budget_s: float = Field(
        default=120.0, gt=0, description="Seconds the search may spend in all, localizing included, plus twice "
        "the time the tests took before any change (a localizing run takes at most half of what is left)."
    )
    mutant_timeout_s: float = Field(
        default=5.0, gt=0, description="Seconds one mutant may run the failing tests before it is stopped."
    )
    rivals: bool = Field(
        default=True,
        description="After a verified fix, look for another edit of the same function that passes every test too, "
        "and an input on which the two differ (one more driver run, within budget_s).",
    )
    infill: bool = Field(
        default=True,
        description="Ask the model for short fills of holes cut at the suspicious lines (many samples per hole), "
        "made while its driver runs and tried and verified like the search's own candidates.",
    )
    infill_samples: int = Field(default=10, ge=1, le=50, description="Samples the model is asked for per hole.")
    infill_lines: int = Field(
        default=8, ge=1, le=20, description="The most suspicious lines whose holes (the line, its statement, a slot "
        "before and after it, its block) the model fills first; once those are asked, the next as many lines', while "
        "time is left."
    )
    infill_budget_s: float = Field(
        default=150.0, ge=0, description="Seconds the model's fills may go on after the search's own budget_s is "
        "spent (only while the model answers)."
    )
    background: bool = Field(
        default=True,
        description="Editor: after a test run leaves failing tests, look for a verified single-edit fix in the "
        "background.",
    )
    background_model_round: bool = Field(
        default=False,
        description="Editor: when the background search finds no fix, allow one model round (one attempt) to look "
        "for one.",
    )


class MutationSettings(BaseModel):
    """Mutation testing of generated tests (gen-tests): the rule that decides which tests are kept."""

    model_config = _CONFIG

    enabled: bool = Field(
        default=True,
        description="Keep a generated test only when it kills a mutant the other tests miss "
        "(or covers lines no mutant applies to); off: keep tests that add coverage.",
    )
    max_mutants: int = Field(
        default=80, ge=1, le=2000, description="Most mutants of the targets run per gen-tests run."
    )
    budget_s: float = Field(default=180.0, gt=0, description="Seconds one mutation run may spend on all its mutants.")
    mutant_timeout_s: float = Field(
        default=10.0, gt=0, description="Seconds one mutant may run the tests before it is stopped (counts as killed)."
    )
    followup: bool = Field(
        default=True, description="Ask the tester once more for tests that kill the mutants no test notices."
    )


class VerifySettings(BaseModel):
    """What verifies a change besides the project's existing tests (pipeline/nodes/specify.py, toolcheck.py, nodes/verify.py)."""  # noqa: E501 - the schema's description

    model_config = _CONFIG

    goal_tests: bool = Field(
        default=True,
        description="A task, or a goal with no failing test: the tester writes tests for the goal first; "
        "they must fail before the change and pass after it, and are offered with the change.",
    )
    tool_recheck: bool = Field(
        default=True,
        description="A fix asked on a ruff, flake8, mypy or pyright diagnostic is checked by running "
        "that tool again in the sandbox on the changed files (when installed), plus the tests.",
    )
    verifier: bool = Field(
        default=False,
        description="After the tests pass, a model scores the diff against the goal (0-1) and may "
        "send the run back for another round with its feedback; it never overrules a failing test.",
    )
    threshold: float = Field(default=0.7, ge=0, le=1, description="The verifier's score a change needs to be accepted.")
    verifier_rounds: int = Field(
        default=1,
        ge=0,
        le=5,
        description="Times the verifier may send a run back for another round.",
    )


class Settings(BaseModel):
    """Everything a user can configure about agentls."""

    model_config = _CONFIG
    # What loading found but did not apply: project-file keys outside the trust boundary, misspelt variables.
    _ignored: list[IgnoredSetting] = PrivateAttr(default_factory=list)
    _warnings: list[str] = PrivateAttr(default_factory=list)

    base_url: str | None = Field(
        default=None, description="OpenAI-compatible endpoint; unset means the bundled local model."
    )
    model: str = Field(default="qwen2.5-coder-1.5b", description="Model name sent to the endpoint.")
    api_key_env: str = Field(default="AGENTLS_API_KEY", description="Environment variable holding the API key.")
    api_key: SecretStr | None = Field(default=None, exclude=True, description="API key (from the environment only).")
    temperature: float = Field(default=0.2, ge=0, le=2, description="Default sampling temperature.")
    request_timeout_s: float = Field(
        default=120.0,
        gt=0,
        description="Timeout of one LLM request that is not streamed, or of a streamed answer's start, in seconds.",
    )
    max_retries: int = Field(default=3, ge=0, le=10, description="Retries of an LLM request on 429/5xx/timeout.")
    retry_backoff_s: float = Field(
        default=0.5, ge=0, le=60, description="First backoff before retrying an LLM request; doubles each retry."
    )
    llm_deadline_s: float = Field(
        default=90.0,
        gt=0,
        le=3600,
        description="Deadline of one model call's retries and of its streamed answer's start, in seconds; "
        "then the run stops with an error.",
    )
    llm_stall_s: float = Field(
        default=40.0,
        gt=0,
        le=600,
        description="Silence (no bytes; keep-alive pings count) after which a streamed answer is given up and "
        "retried, in seconds.",
    )
    llm_answer_cap_s: float = Field(
        default=600.0,
        gt=0,
        le=7200,
        description="Longest one model call may take, a streaming answer included, in seconds; an answer "
        "still streaming then is cut there, as at its token limit.",
    )
    roles: RoleProfiles = Field(default_factory=RoleProfiles, description="Per-role model profiles.")
    max_iterations: int = Field(default=3, ge=1, le=20, description="Code/test/reflect iterations per run.")
    samples: int = Field(
        default=3,
        ge=1,
        le=10,
        description="Coder answers drawn per round (the endpoint's n, else one call each at spread temperatures); "
        "the tests pick the first that passes.",
    )
    fallback: FallbackProfile = Field(
        default_factory=FallbackProfile,
        description="A second model (set base_url or model) whose coder rounds follow when the first model's fail; "
        "off when unset.",
    )
    max_revisions: int = Field(default=2, ge=0, le=10, description="Replans allowed when a failure repeats.")
    token_budget: int = Field(
        default=0,
        ge=0,
        description="Tokens (prompt plus completion, every role) one run may spend; then the model is asked no more "
        "and the run ends with status budget_spent. 0: no limit.",
    )
    time_budget_s: float = Field(
        default=0,
        ge=0,
        description="Seconds one fix or task run may take from its start; then no model call or test run starts "
        "and the run ends with its best attempt and status budget_spent. 0: no limit.",
    )
    prices: dict[str, tuple[float, float]] = Field(
        default_factory=dict,
        description='USD per million prompt and completion tokens, per model name, e.g. {"gpt-4o-mini" = '
        "[0.15, 0.60]}: a run's cost is shown beside its tokens when every model it called has a price.",
    )
    test_command: str = Field(
        default="pytest",
        description=(
            "Test command run in the sandbox; pytest reports each test, whatever wraps it (uv run, tox, make, ...)."
        ),
    )
    safety: Literal["ask", "block", "allow"] = Field(
        default="ask", description="What the safety gate does on risky code: ask the user, block, or allow."
    )
    preview_edits: bool = Field(
        default=True, description="Editor: show each change with its reason and ask before it is applied."
    )
    run_tests_on_save: bool = Field(
        default=False, description="Editor: run the tests when a Python file of the workspace is saved."
    )
    max_concurrent_runs: int = Field(
        default=2, ge=1, le=32,
        description="Editor and MCP server: runs that work at once; more wait in a queue, first come first served.",
    )
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings, description="Sandbox backend and limits.")
    memory: MemorySettings = Field(default_factory=MemorySettings, description="Failure memory settings.")
    search: SearchSettings = Field(default_factory=SearchSettings, description="Localization and mutant search.")
    mutation: MutationSettings = Field(default_factory=MutationSettings, description="Mutation testing in gen-tests.")
    verify: VerifySettings = Field(
        default_factory=VerifySettings,
        description="Verification beyond the existing tests: goal tests, tool re-checks, the verifier.",
    )
    prompts: dict[str, str] = Field(
        default_factory=dict, description="Prompt overrides per role: template text or a path to a file."
    )
    journal: bool = Field(default=True, description="Write a run journal under .agentls/runs/.")
    local_model: str = Field(
        default="qwen2.5-coder-1.5b", description="Bundled local model used when no endpoint is configured."
    )
    fim: Literal["auto", "tokens", "suffix", "chat"] = Field(
        default="auto",
        description="How the endpoint takes fill-in-the-middle (the search's model infills): tokens (FIM tokens "
        "in a raw /v1/completions prompt: llama.cpp, vLLM, LM Studio), suffix (the suffix parameter: Ollama), chat "
        "(a chat prompt asking for the lines); auto decides from the server and the model's name.",
    )
    detect_local_servers: bool = Field(
        default=True,
        description="With no endpoint configured, use a running Ollama (port 11434) or LM Studio (port 1234) "
        "before starting the bundled model.",
    )

    @property
    def ignored(self) -> list[IgnoredSetting]:
        """The trusted-only keys a project file set, and the limits it loosened, that were not applied
        (settings/trust.py, settings/limits.py)."""
        return list(self._ignored)

    @property
    def notices(self) -> list[str]:
        """Warnings a front end shows once per run: every ignored key (with its file), misspelt variables."""
        return [item.message() for item in self._ignored] + list(self._warnings)

    def profile(self, role: Role) -> ResolvedProfile:
        """The effective endpoint, model, key and temperature for `role`."""
        p: ModelProfile = getattr(self.roles, role)
        key = self.api_key.get_secret_value() if self.api_key else None
        if p.api_key_env:
            key = os.environ.get(p.api_key_env) or key
        return ResolvedProfile(
            role=role,
            base_url=p.base_url or self.base_url,
            model=p.model or self.model,
            api_key=key,
            temperature=self.temperature if p.temperature is None else p.temperature,
        )

    def fallback_profile(self, role: Role) -> ResolvedProfile | None:
        """The fallback model for `role` (unset fields: the role's own), or None when no fallback is configured."""
        f = self.fallback
        if not (f.base_url or f.model):
            return None
        own = self.profile(role)
        key = (os.environ.get(f.api_key_env) or None) if f.api_key_env else own.api_key
        return own.model_copy(
            update={
                "base_url": f.base_url or own.base_url,
                "model": f.model or own.model,
                "api_key": key,
                "temperature": own.temperature if f.temperature is None else f.temperature,
            }
        )


class ResolvedProfile(BaseModel):
    """A role's effective model settings (holds the key: never log this object)."""

    role: Role
    base_url: str | None
    model: str
    api_key: str | None = Field(default=None, repr=False)
    temperature: float


def _api_key(settings_env: str, env: Mapping[str, str]) -> tuple[str, str] | None:
    """(variable, key) of the first API key set: api_key_env's variable, AGENTLS_API_KEY, OPENAI_API_KEY."""
    for name in (settings_env, "AGENTLS_API_KEY", "OPENAI_API_KEY"):
        if env.get(name):
            return name, env[name]
    return None


@functools.cache
def _defaults() -> dict[str, Any]:
    """Every setting's default, nested as in a file (what a project file's limit is compared with)."""
    return Settings().model_dump()


def load_settings_with_layers(
    workspace: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    overrides_origin: str = "command line",
) -> tuple[Settings, list[Layer], str | None]:
    """The effective settings, the layers they came from (project keys outside the trust boundary removed),
    and the variable the API key came from. `overrides_origin` names the overrides in messages."""
    env = os.environ if env is None else env
    layers, ignored = apply_trust(read_layers(Settings, workspace, overrides, env, overrides_origin), workspace, env)
    layers, loosened = apply_limits(layers, _defaults(), workspace, env)
    try:
        settings = Settings.model_validate(merged(layers))
    except ValidationError as exc:
        raise SettingsError(describe_validation_error(exc, layers, Settings)) from exc
    settings._ignored = ignored + loosened
    settings._warnings = env_near_misses(env, Settings)
    key = _api_key(settings.api_key_env, env)
    if key:
        settings.api_key = SecretStr(key[1])
    return settings, layers, key[0] if key else None


def load_settings(
    workspace: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    overrides_origin: str = "command line",
) -> Settings:
    """Build the effective settings; raise SettingsError naming every bad key, where it was set."""
    return load_settings_with_layers(workspace, overrides, env, overrides_origin)[0]
