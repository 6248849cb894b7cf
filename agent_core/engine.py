"""The engine's front door: one call runs one request end to end.

Both front ends (the CLI and the language server) call `Engine.run`. It never
raises for an expected failure: unfixed, failing tests, an unreachable
endpoint or bad input all come back as a `RunResult` with a status and an
error message. Cancelling the awaiting task stops the run: the LLM call is
abandoned, sandboxed processes are killed, the shadow copy is removed, and
the workspace is untouched (the engine never writes the real workspace; the
front end applies `RunResult.change_set`).
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

from agent_core.errors import BadRequest
from agent_core.events import MessageEvent, PhaseEvent, RunHooks, TestReportEvent
from agent_core.gentests.deps import GenTestsDeps
from agent_core.gentests.run import run_gen_tests
from agent_core.journal.writer import Journal
from agent_core.llm.base import FALLBACK_ACCOUNT, BudgetSpent, LLMError, LLMUnavailable
from agent_core.llm.probe import EndpointWatch
from agent_core.llm.usage import cost_usd
from agent_core.models import ROLES, RunRequest, RunResult, RunStatus, TestReport, Usage, new_run_id
from agent_core.sandbox.base import SandboxError
from agent_core.sandbox.factory import sandbox_for_run
from agent_core.settings import Settings, SettingsError
from agent_core.testing.runner import per_test_bound, run_tests
from agent_core.workspace.paths import PathRefused
from agent_core.workspace.shadow import ShadowWorkspace


class Engine:
    """Runs fix / task / test / gen_tests requests with one settings object."""

    def __init__(self, settings: Settings, checkpointer: Any = None) -> None:
        self.settings = settings
        self.checkpointer = checkpointer  # a LangGraph checkpointer (e.g. AsyncSqliteSaver) for resumable runs
        # the model calls a cancelled run made (an interrupt's result has no RunResult of its own to carry them)
        self.cancelled_usage, self.cancelled_usage_by_role = Usage(), dict[str, Usage]()

    async def run(self, request: RunRequest, hooks: RunHooks, resume: bool = False) -> RunResult:
        """Run `request`; with `resume`, continue run `request.run_id` from its last checkpoint."""
        run_id = request.run_id or new_run_id()
        started = time.monotonic()
        try:
            workspace = _check_request(request)
        except BadRequest as exc:
            return RunResult(run_id=run_id, kind=request.kind, status="error", error=str(exc), error_kind="bad_input")
        request = request.model_copy(update={"workspace": workspace, "run_id": run_id})
        journal = Journal(workspace, run_id, _secrets(self.settings), enabled=self.settings.journal)
        if resume:
            journal.write("run_resume", kind=request.kind)
        else:
            journal.write("run_start", kind=request.kind, goal=request.goal,
                          settings=self.settings.model_dump(mode="json", exclude={"api_key"}),
                          request=request.model_dump(mode="json"))
        hooks = _JournalledHooks(hooks, journal)
        for notice in self.settings.notices:  # project keys outside the trust boundary, misspelt variables
            hooks.emit(MessageEvent(run_id=run_id, level="warning", text=notice))
        watch = self._watch(request, hooks, run_id)  # the model's endpoint, probed beside the baseline
        try:
            deadline = started + self.settings.time_budget_s if self.settings.time_budget_s else None
            result = await self._dispatch(request, hooks, journal, resume, deadline, watch)
        except asyncio.CancelledError:  # the pipeline noted its usage as it unwound (journal.note_usage)
            self.cancelled_usage, self.cancelled_usage_by_role = journal.usage, journal.usage_by_role
            journal.write("run_end", status="cancelled", iterations=0, usage=journal.usage.model_dump(),
                          usage_by_role={k: u.model_dump() for k, u in journal.usage_by_role.items()},
                          duration_s=round(time.monotonic() - started, 3), error="cancelled")
            raise
        except (LLMError, SandboxError, SettingsError, BadRequest, PathRefused, OSError) as exc:
            spent = isinstance(exc, BudgetSpent)
            result = RunResult(run_id=run_id, kind=request.kind, status="budget_spent" if spent else "error",
                               error=_one_line(exc), usage=journal.usage, usage_by_role=journal.usage_by_role,
                               error_kind=None if spent else _error_kind(exc))
        finally:
            if watch is not None:
                watch.stop()
        if watch is not None:
            watch.annotate(result)
        result.duration_s = round(time.monotonic() - started, 3)
        self._account(result)
        if self.settings.notices:
            result.settings_warnings = list(self.settings.notices)
        journal.finish(result)
        return result

    def _watch(self, request: RunRequest, hooks: RunHooks, run_id: str) -> EndpointWatch | None:
        """The start-of-run probe of the model's endpoint (llm/probe.py), for the runs that call a model."""
        if request.kind not in ("fix", "task", "gen_tests"):
            return None
        searching = request.kind == "fix" and self.settings.search.enabled
        going_on = "going on with the zero-token search" if searching else "going on until the first model call"

        def notify(text: str) -> None:
            hooks.emit(MessageEvent(run_id=run_id, level="warning", text=text))

        watch = EndpointWatch(self.settings, notify, going_on)
        watch.start()
        return watch

    def _account(self, result: RunResult) -> None:
        """The run's cost where every model it called has a price; budget_spent for a run that did not succeed
        after spending its budget (a refused call an aid swallowed still ended the run's model work)."""
        budget = self.settings.token_budget
        if budget and result.usage.tokens >= budget and result.status in ("unfixed", "error", "failed"):
            result.status = "budget_spent"
            result.error = result.error or f"the token budget is spent: {result.usage.tokens} of {budget} tokens used"
        cost = cost_usd(result.usage_by_role, self._model_of, self.settings.prices)
        if cost is not None and result.usage.tokens:
            result.cost_usd = cost

    def _model_of(self, account: str) -> str:
        """The model name an account (a role, the fallback, a borrowing caller such as the explainer) called."""
        if account in ROLES:
            return self.settings.profile(account).model
        fallback = self.settings.fallback_profile("coder") if account == FALLBACK_ACCOUNT else None
        return fallback.model if fallback is not None else self.settings.model

    async def _dispatch(
        self, request: RunRequest, hooks: RunHooks, journal: Journal, resume: bool, deadline: float | None = None,
        watch: EndpointWatch | None = None,
    ) -> RunResult:
        """`deadline` (time.monotonic()): where settings.time_budget_s ends a fix or task run; `watch`: the
        endpoint's probe (generating tests stops before its first test run when no model can be reached)."""
        if request.kind == "gen_tests":
            deps = GenTestsDeps.build(self.settings, hooks, journal, journal.run_id)
            return await run_gen_tests(request, self.settings, hooks, deps, watch)
        if request.kind == "test":
            return await self._test_only(request, hooks, journal)
        # Lazy on purpose: the graph (langgraph, the agents, the openai client) takes seconds to import,
        # and the language server and `agentls trace` import this module without running a fix.
        from agent_core.pipeline.run import run_pipeline

        return await run_pipeline(self.settings, request, hooks, journal, self.checkpointer, resume=resume,
                                  deadline=deadline, endpoint=watch)

    async def _test_only(self, request: RunRequest, hooks: RunHooks, journal: Journal) -> RunResult:
        run_id = journal.run_id
        sandbox = sandbox_for_run(self.settings, hooks, run_id)
        hooks.emit(PhaseEvent(run_id=run_id, phase="testing", message="running the tests", percentage=10))
        with ShadowWorkspace(request.workspace, request.overlays) as shadow:
            report: TestReport = await run_tests(
                sandbox,
                shadow.root,
                self.settings.test_command,
                self.settings.sandbox.timeout_s,
                select=request.select,
                test_timeout_s=per_test_bound(
                    None, self.settings.sandbox.test_timeout_s, self.settings.sandbox.timeout_s
                ),
                paced=not self.settings.sandbox.test_timeout_s,  # a derived bound follows the passing tests
            )
        journal.write("test_report", report=report.model_dump(mode="json"))
        hooks.emit(TestReportEvent(run_id=run_id, report=report))
        status: RunStatus = "passed" if report.ok else "failed"
        return RunResult(
            run_id=run_id,
            kind="test",
            status=status,
            report=report,
            summary=f"{report.passed} passed, {report.failed} failed, {report.errors} errors",
        )


class _JournalledHooks:
    """The front end's hooks, with every event also written to the journal."""

    def __init__(self, inner: RunHooks, journal: Journal) -> None:
        self.inner, self.journal = inner, journal
        self.phase: PhaseEvent | None = None

    def emit(self, event: Any) -> None:
        if isinstance(event, PhaseEvent):
            self.phase = event
        if not isinstance(event, TestReportEvent):  # reports are journalled as test_report records
            self.journal.write("event", event=event.model_dump(mode="json"))
        self.inner.emit(event)

    def llm_waiting(self, role: str, elapsed_s: float, tokens: int = 0) -> None:
        """A model call is still waiting: repeat the current phase with how long and how many tokens its answer
        has streamed (the editor shows it is alive)."""
        phase = self.phase or PhaseEvent(run_id=self.journal.run_id, phase="starting", message="", percentage=0)
        so_far = f" ({tokens} tokens so far)" if tokens else ""
        text = f"waiting {elapsed_s:.0f} s for the {role} model{so_far}; {phase.message}".rstrip("; ")
        self.inner.emit(phase.model_copy(update={"message": text}))

    async def approve(self, violations: list) -> bool:
        return await self.inner.approve(violations)


def _check_request(request: RunRequest) -> Path:
    workspace = Path(request.workspace).expanduser()
    if not workspace.is_dir():
        raise BadRequest(f"workspace {workspace} is not a directory")
    if request.kind == "task" and not (request.goal or "").strip():
        raise BadRequest("a task needs a goal")
    return workspace.resolve()


def _secrets(settings: Settings) -> list[str]:
    keys = [settings.api_key.get_secret_value()] if settings.api_key else []
    names = {settings.api_key_env, "AGENTLS_API_KEY", "OPENAI_API_KEY"}
    names |= {
        p.api_key_env
        for p in (getattr(settings.roles, r) for r in ("planner", "coder", "tester", "reflector"))
        if p.api_key_env
    }
    names |= {settings.fallback.api_key_env} if settings.fallback.api_key_env else set()
    keys += [os.environ[n] for n in names if os.environ.get(n)]
    return keys


def _error_kind(exc: BaseException) -> str:
    """Why a run could not proceed: the CLI maps unavailable/config/bad_input to exit code 2."""
    if isinstance(exc, LLMUnavailable):
        return "unavailable"
    if isinstance(exc, SettingsError | SandboxError):
        return "config"
    if isinstance(exc, BadRequest | PathRefused):
        return "bad_input"
    return "pipeline"


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
