"""The LLM seam: typed answers from a chat model, with usage accounting.

`OpenAIChatClient` (openai_client.py) is the real implementation; anything
with the same shape can stand in. Failures of the endpoint are exceptions
(`LLMError`); the CLI maps `LLMUnavailable` to exit code 2.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, Field

from agent_core.llm.fim import FimSpec
from agent_core.models import Role, Usage

T = TypeVar("T", bound=BaseModel)
FALLBACK_ACCOUNT = "fallback"  # the usage_by_role key (and journalled role) of calls to the fallback model


class LLMError(RuntimeError):
    """The model could not give a usable answer."""


class LLMUnavailable(LLMError):
    """The endpoint cannot be reached or keeps failing (connection refused, timeouts, 5xx after retries)."""


class BudgetSpent(LLMError):
    """The run's token budget (settings.token_budget) is used up: no further call is sent; the engine ends the run
    with status budget_spent."""


class TimeBudgetSpent(BudgetSpent):
    """The run's time budget (settings.time_budget_s) is spent: no model call or sandboxed test run starts after
    it; the pipeline ends the run with its best attempt and status budget_spent (pipeline/timebudget.py)."""

    @classmethod
    def of(cls, budget_s: float) -> TimeBudgetSpent:
        """The exception for a run whose budget was `budget_s` seconds (one message wherever it is raised)."""
        return cls(f"the time budget is spent: {budget_s:g} s (time_budget_s)")


def time_left(deadline: float | None, budget_s: float) -> float | None:
    """Seconds until `deadline` (a time.monotonic() value; None: no time budget, None back); TimeBudgetSpent
    (of `budget_s`) once it has passed: the one check before a model call or a test run starts."""
    if deadline is None:
        return None
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeBudgetSpent.of(budget_s)
    return left


class StructuredOutputError(LLMError):
    """The model's answer did not validate against the schema, even after a repair request."""


class LLMCall(BaseModel):
    """One completed request, as the journal records it (no secrets)."""

    role: str
    schema_name: str
    mode: str = Field(
        description="json_schema | json_object | extract | text (a plain answer) | completion (a raw prompt's "
        "continuation: messages hold the prompt, and the suffix when one was sent)"
    )
    messages: list[dict[str, Any]]
    answer: str
    usage: Usage
    duration_s: float
    attempts: int = 1
    alternatives: list[str] = Field(default_factory=list, description="The other choices of a request with n > 1.")
    prompt_tokens_estimated: bool = Field(
        default=False, description="usage.prompt_tokens is estimated from the prompt's length (a stream without usage)."
    )
    cut: bool = Field(default=False, description="Cancelled before it was answered (its caller's deadline, a cancel).")


class LLMObserver(Protocol):
    def on_llm_call(self, call: LLMCall) -> None: ...


class LLMClient(Protocol):
    """Asks a role's model for an answer that validates as `schema`."""

    def usage_by_role(self) -> dict[str, Usage]: ...

    def total_usage(self) -> Usage: ...

    def pace(self, account: str, least: int = 1) -> float | None:
        """Seconds per written token of `account`'s answered calls (each call's whole time, its prompt's reading
        and any waiting included); None before `least` calls wrote tokens."""
        ...

    async def structured(
        self,
        role: Role,
        messages: list[dict[str, Any]],
        schema: type[T],
        temperature: float | None = None,
    ) -> T:
        """Return a validated `schema` instance; raise LLMError subclasses on failure.

        `temperature` overrides the role's configured one for this call (a retry may want more variety).
        """
        ...

    async def text(
        self, role: Role, messages: list[dict[str, Any]], temperature: float | None = None, max_tokens: int = 2048,
        account: str | None = None,
    ) -> str:
        """Return the model's plain answer (no response format, at most `max_tokens`); raise LLMError on failure.

        `account` names a caller that borrows `role`'s model (the explainer): its usage, journal record
        and role header carry that name instead of the role's.

        For answers that are code: a small model writes a function better in a
        fenced block than inside a JSON string. The caller parses and validates.
        """
        ...

    async def texts(
        self, role: Role, messages: list[dict[str, Any]], n: int, temperature: float | None = None,
        max_tokens: int = 2048, fallback: bool = False,
    ) -> list[str]:
        """Up to `n` plain answers to one prompt from one request (the endpoint's `n`; one that
        ignores it gives one: ask again for more).

        With `fallback` the configured fallback model answers; its usage is accounted as "fallback".
        """
        ...

    async def complete(
        self, role: Role, prompt: str, *, max_tokens: int, temperature: float | None = None, seed: int | None = None,
        stop: list[str] | None = None, suffix: str | None = None, account: str | None = None,
        until: Callable[[str], bool] | None = None,
    ) -> str:
        """The model's continuation of the raw `prompt` (the legacy completions endpoint, no chat template: a
        fill-in-the-middle prompt written with the model's FIM tokens, llm/fim.py), at most `max_tokens` (always
        capped), ending before any of `stop` (at most four). `suffix` is sent as the endpoint's `suffix`
        parameter (an endpoint that builds the FIM prompt itself: Ollama). `seed` asks for a reproducible
        sample. `until`: called with the text so far of a streamed answer, True ends it there (the caller
        has all it can use; the endpoint stops writing when the stream is closed). Accounted, journalled and
        budgeted like a chat call (under `account`, default the role); LLMError subclasses on failure."""
        ...

    async def fim_spec(self, role: Role) -> FimSpec:
        """How `role`'s endpoint takes fill-in-the-middle: the dialect ("tokens", "suffix" or "chat") and, for
        "tokens", the model family's FIM tokens (llm/fim.py)."""
        ...
