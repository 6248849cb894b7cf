"""`OpenAIChatClient`: the LLMClient on the real `openai.AsyncOpenAI` client.

Each role's endpoint, model, key and temperature come from
`Settings.profile(role)`; one AsyncOpenAI client is kept per distinct
(base_url, key). Every chat request carries `X-Agentls-Role`. Answers are
validated against a pydantic schema by walking the mode ladder of
structured.py (json_schema -> json_object -> extract), with one repair
request when an answer does not validate; the mode that works is learned
once per endpoint (class-level cache). Requests are streamed (streaming.py)
unless the endpoint refused `stream` or `stream_options`, which is then
remembered per endpoint. Raw completions (`complete`: a fill-in-the-middle
prompt to the legacy completions endpoint) go through the same budgets,
retries, streaming, accounting and journal. Retries and one-line failure
causes live in retrying.py; a run with no endpoint configured gets one from
local.py. The API key is only ever handed to the openai client.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, ClassVar, Literal, TypeVar

import openai
from pydantic import BaseModel

from agent_core.llm.base import (
    FALLBACK_ACCOUNT,
    BudgetSpent,
    LLMCall,
    LLMError,
    LLMObserver,
    LLMUnavailable,
    StructuredOutputError,
    TimeBudgetSpent,
    time_left,
)
from agent_core.llm.detect import DetectedServer
from agent_core.llm.fim import PARALLEL_HEADER, FimSpec, choose_fim, said_parallel
from agent_core.llm.local import local_endpoint
from agent_core.llm.retrying import Completion, FormatRejected, RetryPolicy, StreamRefused, complete
from agent_core.llm.structured import (
    Mode,
    ModeCache,
    looks_ignored,
    next_mode,
    parse_answer,
    repair_messages,
    response_format,
    schema_name,
    with_instruction,
)
from agent_core.llm.usage import UsageLedger
from agent_core.models import ROLES, Role, Usage
from agent_core.settings import ResolvedProfile, Settings
from agent_core.settings.redact import Redactor, redact_url

T = TypeVar("T", bound=BaseModel)

ROLE_HEADER = "X-Agentls-Role"
NO_KEY = "sk-no-key-configured"  # local servers ignore the key; the openai client insists on one
# Every request carries a max_tokens: a small model can loop until its context is full, and a
# llama.cpp server keeps generating for a request its client gave up on, stalling every later one.
STRUCTURED_MAX_TOKENS = 4096
COMPLETION_MAX_TOKENS = 512  # a raw completion fills a hole: a few lines at most
MAX_STOPS = 4  # OpenAI's completions endpoint takes at most four stop sequences
PARALLEL_PROBE_S = 5.0  # the model list that says how many completions an endpoint writes together
PROMPT_COUNTS = 64  # raw prompts whose token count is remembered (a hole's samples share one prompt)


class _FormatIgnored(LLMError):
    """A JSON mode produced no JSON at all: the endpoint ignores that response_format."""


def _sendable(message: dict[str, Any]) -> dict[str, Any]:
    """`message` with lone surrogates in its text as '?': a file name that is not UTF-8 (read with
    surrogateescape) cannot be encoded into the request body, and must not crash the run."""
    content = message.get("content")
    if not isinstance(content, str):
        return message
    try:
        content.encode("utf-8")
    except UnicodeEncodeError:
        return {**message, "content": content.encode("utf-8", "replace").decode("utf-8")}
    return message


class OpenAIChatClient:
    """Typed answers per role from OpenAI-compatible endpoints, with usage accounting."""

    modes: ClassVar[ModeCache] = ModeCache()

    def __init__(
        self,
        settings: Settings,
        observer: LLMObserver | None = None,
        retry_policy: RetryPolicy | None = None,
        on_wait: Callable[[str, float, int], None] | None = None,
        deadline: float | None = None,
    ) -> None:
        self._settings = settings
        self._deadline = deadline  # time.monotonic() at which the run's time_budget_s ends (None: no budget)
        self._observer = observer
        self._on_wait = on_wait
        self._policy = retry_policy or RetryPolicy(
            max_retries=settings.max_retries, base_s=settings.retry_backoff_s, deadline_s=settings.llm_deadline_s
        )
        self._clients: dict[tuple[str, str], openai.AsyncOpenAI] = {}
        self._prompt_tokens: dict[str, int] = {}  # sha256 of (model, raw prompt, suffix) -> the endpoint's token count
        self._ledger = UsageLedger()
        self._local_url: str | None = None
        self._detected: DetectedServer | None = None  # a user's own local server, used in place of the bundled one
        self._no_n: set[str] = set()  # endpoints that refused a request with n > 1
        self._no_stream: set[str] = set()  # endpoints that refused stream=True
        self._parallel: dict[str, int] = {}  # endpoint -> raw completions of one prompt it writes together
        self._no_stream_options: set[str] = set()  # endpoints that refused stream_options
        profiles = [*map(settings.profile, ROLES), *filter(None, map(settings.fallback_profile, ROLES))]
        self._redact = Redactor(k for k in {p.api_key for p in profiles} if k)

    # -- accounting ------------------------------------------------------------------
    def usage_by_role(self) -> dict[str, Usage]:
        return self._ledger.by_role()

    def total_usage(self) -> Usage:
        return self._ledger.total()

    def pace(self, account: str, least: int = 1) -> float | None:
        return self._ledger.pace(account, least)

    # -- the LLMClient method ----------------------------------------------------------
    async def structured(
        self, role: Role, messages: list[dict[str, Any]], schema: type[T], temperature: float | None = None
    ) -> T:
        """Return a validated `schema` instance from `role`'s model (see the module docstring)."""
        profile, base_url, client = await self._route(role, temperature)
        mode: Mode | None = self.modes.get(base_url, profile.model)
        rejection = ""
        while mode is not None:
            try:
                return await self._in_mode(client, base_url, profile, mode, messages, schema)
            except (FormatRejected, _FormatIgnored) as exc:
                rejection = str(exc)
                mode = next_mode(mode)
                if mode is not None:
                    self.modes.downgrade(base_url, profile.model, mode)
        raise StructuredOutputError(f"{role}: no structured-output mode worked: {rejection}")

    async def text(
        self,
        role: Role,
        messages: list[dict[str, Any]],
        temperature: float | None = None,
        max_tokens: int = 2048,
        account: str | None = None,
    ) -> str:
        """The model's plain answer for `role` (see LLMClient.text), accounted and journalled like any call."""
        profile, base_url, client = await self._route(role, temperature)
        done = await self._request(
            client, base_url, profile, "text", messages, None, max_tokens, account=account, header=account
        )
        return done.text

    async def texts(
        self,
        role: Role,
        messages: list[dict[str, Any]],
        n: int,
        temperature: float | None = None,
        max_tokens: int = 2048,
        fallback: bool = False,
    ) -> list[str]:
        """Up to `n` plain answers from one request (see LLMClient.texts), accounted like any call.

        The request carries `n`: an endpoint that honours it answers them all (the prompt is read
        once); one that ignores it (llama-cpp-python) answers one. One that refuses it outright
        (older llama.cpp servers: "Only one completion choice is allowed") is asked again without
        it, and never sent `n` again.
        """
        profile, base_url, client = await self._route(role, temperature, fallback)
        account = FALLBACK_ACCOUNT if fallback else None
        n = n if base_url not in self._no_n else 1
        try:
            done = await self._request(client, base_url, profile, "text", messages, None, max_tokens, n, account)
        except (LLMUnavailable, BudgetSpent):
            raise
        except LLMError:
            if n == 1:
                raise
            self._no_n.add(base_url)
            done = await self._request(client, base_url, profile, "text", messages, None, max_tokens, 1, account)
        return (done.texts or [done.text])[: max(1, n)]

    async def complete(
        self, role: Role, prompt: str, *, max_tokens: int, temperature: float | None = None, seed: int | None = None,
        stop: list[str] | None = None, suffix: str | None = None, account: str | None = None,
        until: Callable[[str], bool] | None = None,
    ) -> str:
        """The model's continuation of a raw `prompt` (see LLMClient.complete): one request to the legacy
        completions endpoint, streamed where the endpoint allows, retried, accounted and journalled like a chat
        call (mode "completion"); `max_tokens` is capped at COMPLETION_MAX_TOKENS."""
        profile, base_url, client = await self._route(role, temperature)
        prompt = _sendable({"content": prompt})["content"]
        request: dict[str, Any] = {
            "model": profile.model,
            "prompt": prompt,
            "temperature": profile.temperature,
            "max_tokens": max(1, min(max_tokens, COMPLETION_MAX_TOKENS)),
            "extra_headers": {ROLE_HEADER: account or profile.role},
        }
        shown = [{"role": "prompt", "content": prompt}]
        if suffix is not None:
            request["suffix"] = _sendable({"content": suffix})["content"]
            shown.append({"role": "suffix", "content": request["suffix"]})
        if seed is not None:
            request["seed"] = seed
        if stop:
            request["stop"] = stop[:MAX_STOPS]
        done = await self._accounted(client, base_url, profile.role, request, account or profile.role, None,
                                     "completion", shown, until)
        return done.text

    async def fim_spec(self, role: Role) -> FimSpec:
        """How `role`'s endpoint takes fill-in-the-middle (llm/fim.py): the `fim` setting, else decided from the
        endpoint (the bundled server, a detected one, a configured URL) and the model's name; for raw prompts, how
        many of one prompt the endpoint writes together (`_parallel_at`)."""
        profile, base_url, client = await self._route(role, None)
        detected = self._detected if profile.base_url is None else None
        bundled = profile.base_url is None and detected is None
        model = self._settings.local_model if bundled else profile.model
        spec = choose_fim(self._settings.fim, base_url=base_url, model=model, bundled=bundled,
                          server_name=detected.name if detected is not None else None)
        return replace(spec, parallel=await self._parallel_at(base_url, client)) if spec.dialect == "tokens" else spec

    async def _parallel_at(self, base_url: str, client: openai.AsyncOpenAI) -> int:
        """How many raw completions of one prompt the server at `base_url` writes together, as it says in the
        PARALLEL_HEADER of its model list (the bundled server does: local_model/batched_server.py); asked once per
        endpoint, 1 when it says nothing or does not answer within PARALLEL_PROBE_S."""
        if base_url not in self._parallel:
            try:
                raw = await client.with_options(timeout=PARALLEL_PROBE_S).models.with_raw_response.list()
                self._parallel[base_url] = said_parallel(raw.headers.get(PARALLEL_HEADER))
            except openai.OpenAIError:
                self._parallel[base_url] = 1
        return self._parallel[base_url]

    async def _in_mode(
        self,
        client: openai.AsyncOpenAI,
        base_url: str,
        profile: ResolvedProfile,
        mode: Mode,
        messages: list[dict[str, Any]],
        schema: type[T],
    ) -> T:
        """One request in `mode`, plus one repair request if its answer does not validate."""
        sent = with_instruction(messages, mode, schema)
        done = await self._request(client, base_url, profile, mode, sent, schema)
        if mode != "extract" and looks_ignored(done.text, done.finish_reason):
            raise _FormatIgnored(
                f"endpoint {redact_url(base_url)} ignored response_format {mode} (the answer held no JSON)"
            )
        value, error = parse_answer(done.text, done.finish_reason, schema)
        if value is not None:
            return value  # type: ignore[return-value]
        repair = repair_messages(sent, done.text, error, schema)
        fixed = await self._request(client, base_url, profile, mode, repair, schema)
        value, error = parse_answer(fixed.text, fixed.finish_reason, schema)
        if value is not None:
            return value  # type: ignore[return-value]
        reason = "; ".join(error.splitlines())
        raise StructuredOutputError(
            f"{profile.role}: the answer does not match {schema_name(schema)} even after a repair request: {reason}"
        )

    async def _request(
        self,
        client: openai.AsyncOpenAI,
        base_url: str,
        profile: ResolvedProfile,
        mode: Mode | Literal["text"],
        messages: list[dict[str, Any]],
        schema: type[BaseModel] | None,
        max_tokens: int = STRUCTURED_MAX_TOKENS,
        n: int = 1,
        account: str | None = None,
        header: str | None = None,
    ) -> Completion:
        """Send one chat request (with retries), account for it (under `account`, default the role) and tell
        the observer. `n` > 1 asks for that many choices; `header` names the caller in the role header
        (default the role)."""
        messages = [_sendable(m) for m in messages]
        request: dict[str, Any] = {
            "model": profile.model,
            "messages": messages,
            "temperature": profile.temperature,
            "max_tokens": max_tokens,
            "extra_headers": {ROLE_HEADER: header or profile.role},
        }
        if n > 1:
            request["n"] = n
        fmt = response_format(mode, schema) if mode != "text" and schema is not None else None
        if fmt is not None:
            request["response_format"] = fmt
        return await self._accounted(client, base_url, profile.role, request, account or profile.role, schema,
                                     mode, messages)

    async def _accounted(
        self, client: openai.AsyncOpenAI, base_url: str, role: str, request: dict[str, Any], account: str,
        schema: type[BaseModel] | None, mode: str, messages: list[dict[str, Any]],
        until: Callable[[str], bool] | None = None,
    ) -> Completion:
        """Send `request` for `role` within the run's token and time budgets, record its usage under `account`
        (a call that got no answer counts as a call without tokens) and tell the observer (`messages`: the
        journal's form of the prompt)."""
        request["max_tokens"] = self._within_budget(request["max_tokens"])
        time_left(self._deadline, self._settings.time_budget_s)  # the run's time budget: spent, no call starts
        began = time.monotonic()
        try:
            done = await self._complete(client, base_url, role, request, until)
        except LLMUnavailable:
            self._ledger.record(account, Usage(llm_calls=1))  # sent, never answered: a call without tokens
            raise
        except (asyncio.CancelledError, TimeBudgetSpent):  # a caller's deadline (the explainer's, the run's): a call
            self._ledger.record(account, Usage(llm_calls=1))
            if self._observer is not None:
                cut = Completion(text="", finish_reason=None, usage=Usage(llm_calls=1), attempts=1,
                                 duration_s=time.monotonic() - began)
                record = self._call_record(account, schema, mode, messages, cut)
                self._observer.on_llm_call(record.model_copy(update={"cut": True}))
            raise
        done.usage = self._counted(request, done)
        self._ledger.record(account, done.usage, done.duration_s)
        if self._observer is not None:
            self._observer.on_llm_call(self._call_record(account, schema, mode, messages, done))
        return done

    def _counted(self, request: dict[str, Any], done: Completion) -> Usage:
        """`done`'s usage, its prompt tokens the endpoint's own count of the same raw prompt where an earlier
        answer gave one and this one's are an estimate (a stream the caller ended early brings no usage)."""
        prompt = request.get("prompt")
        if not isinstance(prompt, str):
            return done.usage
        # the model too: another model's tokenizer counts the same text differently
        key = hashlib.sha256("\0".join([str(request.get("model")), prompt, str(request.get("suffix") or "")])
                             .encode()).hexdigest()
        if not done.estimated:
            self._prompt_tokens[key] = done.usage.prompt_tokens
            while len(self._prompt_tokens) > PROMPT_COUNTS:
                self._prompt_tokens.pop(next(iter(self._prompt_tokens)))
            return done.usage
        known = self._prompt_tokens.get(key)
        if known is None:
            return done.usage
        done.estimated = False  # the endpoint's own count, not the estimate (the journal's prompt_tokens_estimated)
        return done.usage.model_copy(update={"prompt_tokens": known})

    async def _complete(
        self, client: openai.AsyncOpenAI, base_url: str, role: str, request: dict[str, Any],
        until: Callable[[str], bool] | None = None,
    ) -> Completion:
        """`request` sent streamed where `base_url` allows; a refusal of stream or stream_options is remembered
        and the request sent again without it."""
        waiting = self._on_wait
        while True:
            left = time_left(self._deadline, self._settings.time_budget_s)  # no call starts after it, none outlasts it
            sent = dict(request)
            if base_url not in self._no_stream:
                sent["stream"] = True
                if base_url not in self._no_stream_options:
                    sent["stream_options"] = {"include_usage": True}
            timer = asyncio.timeout(left)  # retries and backoff included
            try:
                async with timer:
                    return await complete(
                        client,
                        sent,
                        endpoint=redact_url(base_url),  # it goes into error messages: no credentials
                        timeout=min(self._settings.request_timeout_s, left or math.inf),  # the per-request timeout=
                        policy=self._policy,
                        on_wait=(lambda elapsed, tokens: waiting(role, elapsed, tokens)) if waiting else None,
                        stall_s=min(self._settings.llm_stall_s, left or math.inf),
                        cap_s=self._settings.llm_answer_cap_s,
                        enough=until,
                    )
            except TimeoutError:
                if not timer.expired():
                    raise
                raise TimeBudgetSpent.of(self._settings.time_budget_s) from None
            except StreamRefused as refused:
                known = (
                    self._no_stream_options
                    if refused.option == "stream_options" and "stream_options" in sent
                    else self._no_stream
                )
                if base_url in known:
                    raise LLMError(str(refused)) from None
                known.add(base_url)

    def _within_budget(self, max_tokens: int) -> int:
        """`max_tokens`, capped to what is left of settings.token_budget; BudgetSpent when nothing is left.

        Calls already on their way (a round's samples) are not counted until they are answered, so a run
        may overshoot its budget by what those spend."""
        budget = self._settings.token_budget
        if not budget:
            return max_tokens
        used = self._ledger.total().tokens
        if used >= budget:
            raise BudgetSpent(f"the token budget is spent: {used} of {budget} tokens used (token_budget)")
        return max(1, min(max_tokens, budget - used))

    def _call_record(
        self, role: str, schema: type[BaseModel] | None, mode: str, messages: list[dict[str, Any]], done: Completion
    ) -> LLMCall:
        return LLMCall(
            role=role,
            schema_name=schema_name(schema) if schema is not None else "text",
            mode=mode,
            messages=[{**m, "content": self._scrub(m.get("content"))} for m in messages],
            answer=self._scrub(done.text),
            alternatives=[self._scrub(t) for t in done.texts[1:]],
            usage=done.usage,
            duration_s=round(done.duration_s, 4),
            attempts=done.attempts,
            prompt_tokens_estimated=done.estimated,
        )

    def _scrub(self, value: Any) -> Any:
        """`value` without any configured API key or URL credentials (a short key only where it is a whole value)."""
        return self._redact(value) if isinstance(value, str) else value

    # -- endpoints and clients ------------------------------------------------------------
    async def _route(
        self, role: Role, temperature: float | None, fallback: bool = False
    ) -> tuple[ResolvedProfile, str, openai.AsyncOpenAI]:
        """`role`'s profile (or its fallback; with this call's temperature, if given), its endpoint URL and client."""
        profile = self._settings.fallback_profile(role) if fallback else self._settings.profile(role)
        if profile is None:
            raise LLMError("no fallback model is configured (set fallback.base_url or fallback.model)")
        if temperature is not None:
            profile = profile.model_copy(update={"temperature": temperature})
        base_url = (profile.base_url or await self._local_endpoint()).rstrip("/")
        if profile.base_url is None and self._detected is not None:
            profile = profile.model_copy(update={"model": self._detected.pick_model(profile.model)})
        return profile, base_url, self._client_for(base_url, profile.api_key)

    def _client_for(self, base_url: str, api_key: str | None) -> openai.AsyncOpenAI:
        fingerprint = hashlib.sha256((api_key or "").encode()).hexdigest()
        key = (base_url, fingerprint)
        client = self._clients.get(key)
        if client is None:
            client = openai.AsyncOpenAI(
                base_url=base_url,
                api_key=api_key or NO_KEY,
                timeout=self._settings.request_timeout_s,
                max_retries=0,
            )
            self._clients[key] = client
        return client

    async def _local_endpoint(self) -> str:
        """The URL of a local server the user runs (detected), else of the bundled model (started on demand)."""
        if self._local_url is None:
            self._local_url, self._detected = await local_endpoint(self._settings)
        return self._local_url

    async def aclose(self) -> None:
        """Close the HTTP connection pools."""
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.close()

    async def __aenter__(self) -> OpenAIChatClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
