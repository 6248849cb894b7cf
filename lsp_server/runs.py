"""The run manager: engine runs as tracked background tasks with progress and cancel.

A command asks for a run and gets its id at once; the run goes on as an
asyncio task that awaits the engine on a thread of its own (engine_thread.py),
so no engine work ever runs on the server's loop. One run per file at a time; several files at once, at most
`max_concurrent_runs` working (run_slots.py): the others wait in a queue, each told by its `$/progress` (or a
message, without progress support) how many runs are ahead. Each run
reports `$/progress` (cancellable; its percentage only rises: events.ForwardProgress), feeds the safety
gate's question to the user, and ends with at most one `workspace/applyEdit`, carrying the run's
reason and previewed first (preview.py); a run that fails marks its failing
tests and offers its best attempt (failed_runs.py). Cancelling (from the
progress UI, `agentls.cancel`, shutdown or exit) cancels the task: the engine
stops its LLM call and sandbox and removes its shadow copy; no edit is sent
and diagnostics stay as they were.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from agent_core.engine import Engine
from agent_core.events import ForwardProgress, MessageEvent, PhaseEvent, RunEvent, SafetyViolation, TestReportEvent
from agent_core.llm.usage import usage_text
from agent_core.models import RunRequest, RunResult, TestReport, new_run_id
from agent_core.sandbox.run_slots import RunSlots
from agent_core.settings import Settings
from agent_core.workspace.codefiles import named_files
from agent_core.workspace.testfiles import is_test_file
from lsp_server import convert
from lsp_server.diagnostics import DiagnosticsPublisher
from lsp_server.documents import DocumentStore, Snapshot
from lsp_server.edits import EditApplier
from lsp_server.engine_thread import ThreadedHooks, run_in_thread
from lsp_server.failed_runs import FAILED, BestAttemptOffer, RetryOffers
from lsp_server.preview import Previewer, Proposal
from lsp_server.safety import Approver
from lsp_server.settings import SettingsStore

log = logging.getLogger(__name__)
WORKSPACE_KEY = "<workspace>"
SHUTDOWN_GRACE_S = 15.0


@dataclass
class ActiveRun:
    """One run in flight."""

    run_id: str
    key: str
    action: str
    request: RunRequest
    read: Snapshot
    token: str
    task: asyncio.Task[None] | None = None
    progress: bool = False
    forward: ForwardProgress = field(default_factory=lambda: ForwardProgress(0, "starting"))  # as begun
    background: set[asyncio.Task[None]] = field(default_factory=set)
    preview: bool = True  # settings.preview_edits, read when the run starts
    baseline: TestReport | None = None  # the first test report: the code as the run found it
    applied: bool = False  # its change reached the editor

    @property
    def label(self) -> str:
        return f"agentls: {self.action} ({self.run_id})"


class RunObserver(Protocol):
    """Told when a run starts and ends, and stopped at shutdown (the background search: quickfixes.py)."""

    def run_started(self, run: ActiveRun) -> None: ...

    def run_ended(self, run: ActiveRun, result: RunResult | None) -> None: ...

    async def stop(self) -> None: ...


class LspHooks:
    """RunHooks for one run: events -> progress / messages / diagnostics; the gate -> the user."""

    def __init__(self, manager: RunManager, run: ActiveRun) -> None:
        self._manager = manager
        self._run = run

    def emit(self, event: RunEvent) -> None:
        if isinstance(event, PhaseEvent):
            self._manager.report_progress(self._run, event)
        elif isinstance(event, TestReportEvent):
            self._manager.test_report(self._run, event.report)
        elif isinstance(event, MessageEvent):
            self._manager.show(f"agentls ({self._run.run_id}): {event.text}", convert.message_type(event.level))

    async def approve(self, violations: list[SafetyViolation]) -> bool:
        return await self._manager.approver.ask(self._run.label, violations)


def _named(request: RunRequest, result: RunResult) -> frozenset[str]:
    """The files besides code the user asked for: those the goal names (the gate asked about them), the tester's
    test files of a goal or of gen-tests."""
    named = named_files(result.change_set.files, request.goal)
    if result.goal_tests:
        named.add(result.goal_tests.path)
    if request.kind == "gen_tests":
        named |= {path for path in result.change_set.files if is_test_file(path)}
    return frozenset(named)


class RunManager:
    """Starts, tracks, reports and cancels runs."""

    def __init__(
        self,
        server: LanguageServer,
        documents: DocumentStore,
        settings: SettingsStore,
        diagnostics: DiagnosticsPublisher,
        approver: Approver,
        edits: EditApplier,
        engine_factory: Callable[[Settings], Engine] = Engine,
    ) -> None:
        self.server, self.documents, self.settings = server, documents, settings
        self.diagnostics, self.approver, self.edits = diagnostics, approver, edits
        self.engine_factory = engine_factory
        self.active: dict[str, ActiveRun] = {}
        self.previewer = Previewer(server, edits)
        self.offers = BestAttemptOffer(self.previewer, edits, self.show)
        self.retries = RetryOffers()  # failed runs, for "Retry with a hint"
        self.observers: list[RunObserver] = []  # observe() adds them
        self.closing = False  # shutdown or exit came: no run starts again
        self.slots = RunSlots()  # the run queue: settings.max_concurrent_runs work at once

    # -- starting ------------------------------------------------------------------------------

    def observe(self, observer: RunObserver) -> None:
        """Tell `observer` of every run's start and end from now on, and stop it at shutdown."""
        self.observers.append(observer)

    def start(self, request: RunRequest, action: str) -> dict[str, str | None]:
        """Start a run in the background; `{"runId": id}` or `{"runId": None, "error": why}`."""
        if self.closing:
            return self.refuse("the server is shutting down")
        key = request.target_file or WORKSPACE_KEY
        busy = next((r for r in self.active.values() if r.key == key), None)
        if busy is not None:
            where = "the workspace" if key == WORKSPACE_KEY else key
            return self.refuse(f"a run is already going on {where} ({busy.run_id}); cancel it or wait")
        run_id = new_run_id()
        read = self.documents.snapshot(request.workspace)
        request = request.model_copy(update={"run_id": run_id, "overlays": read.overlays})
        run = ActiveRun(run_id=run_id, key=key, action=action, request=request, read=read, token=f"agentls/{run_id}")
        self.active[run_id] = run
        run.task = asyncio.create_task(self._run(run), name=f"agentls-run-{run_id}")
        run.task.add_done_callback(lambda _t: self.active.pop(run_id, None))
        for observer in self.observers:
            observer.run_started(run)
        return {"runId": run_id}

    def refuse(self, why: str) -> dict[str, str | None]:
        self.show(f"agentls: {why}", lsp.MessageType.Warning)
        return {"runId": None, "error": why}

    async def _run(self, run: ActiveRun) -> None:
        end_message = "cancelled"
        result: RunResult | None = None
        slot = False
        try:
            await self._begin_progress(run)
            settings = await self.settings.load()
            run.preview = settings.preview_edits
            if not self.slots.free(settings.max_concurrent_runs):
                self._queued(run, settings.max_concurrent_runs)
            await self.slots.acquire(settings.max_concurrent_runs)
            slot = True
            self.report_progress(run, PhaseEvent(run_id=run.run_id, phase="starting", message="starting",
                                                 percentage=0))
            hooks = ThreadedHooks(LspHooks(self, run), asyncio.get_running_loop())
            result = await run_in_thread(
                lambda: self.engine_factory(settings).run(run.request, hooks), name=f"agentls-run-{run.run_id}"
            )
            end_message = await self._finish(run, result)
        except asyncio.CancelledError:
            log.info("run %s cancelled", run.run_id)
            raise
        except Exception as exc:  # a failing run never takes the server down
            log.exception("run %s failed", run.run_id)
            end_message = f"failed: {exc}"
            self.show(f"{run.label} failed: {exc}", lsp.MessageType.Error)
        finally:
            if slot:
                self.slots.release()
            spent = ""
            if result is not None and result.usage.llm_calls:
                spent = f" ({usage_text(result.usage, result.cost_usd)})"
            self._end_progress(run, end_message + spent)  # the tokens (and cost) in the run's end notification
            for task in run.background:
                task.cancel()
            for observer in self.observers:
                observer.run_ended(run, result)

    # -- results -------------------------------------------------------------------------------

    async def _finish(self, run: ActiveRun, result: RunResult) -> str:
        root = run.request.workspace
        if run.request.kind == "gen_tests" and result.status == "ok":
            mutation = result.gen_tests.mutation if result.gen_tests else None
            await self.diagnostics.publish_survivors(mutation.survivors if mutation else [], root)
        if run.request.kind == "test":
            if result.report is not None:
                await self.diagnostics.publish(result.report, root)
            return self._tell(run, self._summary(result))
        if result.status == "passed" and not result.change_set.changes:  # nothing to fix: tests already pass
            if result.report is not None:
                await self.diagnostics.publish(result.report, root)
            return self._tell(run, self._summary(result))
        if result.status in FAILED and run.request.kind in ("fix", "task"):
            return await self._failed(run, result)
        if result.status not in ("fixed", "ok"):
            return self._tell(run, self._summary(result), lsp.MessageType.Warning)
        if result.change_set.changes:
            reason = result.explanation or result.summary
            proposal = Proposal(run.run_id, run.label, reason, result.change_set, root, run.read,
                                report=result.report, named=_named(run.request, result))
            outcome = await self.previewer.propose(proposal, run.preview)
            if outcome.waiting:
                return self._tell(run, f"{self._summary(result)}\n{outcome.reason}")
            if not outcome.applied:
                return self._tell(run, f"not applied: {outcome.reason}", lsp.MessageType.Warning)
            run.applied = True
        if result.report is not None:
            await self.diagnostics.publish(result.report, root)
        return self._tell(run, self._summary(result))

    async def _failed(self, run: ActiveRun, result: RunResult) -> str:
        """Mark the failing tests of the code as it is; end with the offer of the best attempt, if any."""
        if run.baseline is not None:
            await self.diagnostics.publish(run.baseline, run.request.workspace)
        self.retries.remember(run.run_id, run.request, run.baseline)
        text = self._summary(result)
        if not self.offers.offer(run.label, run.run_id, text, result, run.request.workspace, run.read):
            self._tell(run, text, lsp.MessageType.Warning)
        return text

    def _summary(self, result: RunResult) -> str:
        if result.error:
            return f"{result.status}: {result.error}"
        if result.summary:
            prefix = "" if result.summary.startswith(result.status) else f"{result.status}: "
            return prefix + result.summary + (f". {result.explanation}" if result.explanation else "")
        report = result.report
        if report is None:
            return result.status
        return f"{result.status}: {report.passed} passed, {report.failed} failed, {report.errors} errors"

    def _tell(self, run: ActiveRun, text: str, kind: lsp.MessageType = lsp.MessageType.Info) -> str:
        self.show(f"{run.label}: {text}", kind)
        return text

    def test_report(self, run: ActiveRun, report: TestReport) -> None:
        """Test runs publish each report at once; change runs with their applied edit, or their baseline on failure."""
        if run.baseline is None:
            run.baseline = report
        if run.request.kind == "test":
            task = asyncio.create_task(self.diagnostics.publish(report, run.request.workspace))
            run.background.add(task)
            task.add_done_callback(run.background.discard)

    def show(self, text: str, kind: lsp.MessageType = lsp.MessageType.Info) -> None:
        self.server.window_show_message(lsp.ShowMessageParams(type=kind, message=text))

    # -- progress ------------------------------------------------------------------------------

    async def _begin_progress(self, run: ActiveRun) -> None:
        window = self.server.client_capabilities.window
        if not (window and window.work_done_progress):
            return
        try:
            # shielded: a run cancelled meanwhile must not cancel the pending request's future
            created = asyncio.ensure_future(self.server.work_done_progress.create_async(run.token))
            await asyncio.wait_for(asyncio.shield(created), 10)
        except Exception as exc:  # noqa: BLE001 - no progress UI (or a slow one) is not fatal
            log.warning("progress for %s unavailable: %s", run.run_id, exc)
            return
        run.progress = True
        self.server.work_done_progress.begin(run.token, convert.progress_begin(run.label, "starting"))

    def _queued(self, run: ActiveRun, limit: int) -> None:
        ahead = self.slots.waiting
        text = f"queued: {self.slots.running} running (at most {limit} at once), {ahead} waiting ahead"
        if run.progress:
            self.report_progress(run, PhaseEvent(run_id=run.run_id, phase="starting", message=text, percentage=0))
        else:
            self.show(f"{run.label}: {text}")

    def report_progress(self, run: ActiveRun, event: PhaseEvent) -> None:
        """Report a phase, never with a lower percentage than before (ForwardProgress); a repeat is dropped."""
        step = run.forward.step(event) if run.progress else None
        if step is not None:
            self.server.work_done_progress.report(run.token, convert.progress_report(step))

    def _end_progress(self, run: ActiveRun, message: str) -> None:
        if run.progress:
            run.progress = False
            self.server.work_done_progress.end(run.token, convert.progress_end(message))
            self.server.work_done_progress.tokens.pop(run.token, None)

    # -- cancelling ----------------------------------------------------------------------------

    def cancel(self, run_id: str | None = None) -> list[str]:
        """Cancel one run (or every run when `run_id` is None); the ids actually cancelled."""
        targets = [r for r in self.active.values() if run_id is None or r.run_id == run_id]
        for run in targets:
            if run.task is not None:
                run.task.cancel()
        return [r.run_id for r in targets]

    def cancel_token(self, token: str) -> None:
        for run in list(self.active.values()):
            if run.token == token and run.task is not None:
                run.task.cancel()

    async def stop_all(self) -> None:
        """Cancel every run and wait (bounded) for their cleanup; start nothing after.

        The runs go first: a cancelled run's end can start a background search
        (a test run that had its report), which the observers' stop then
        cancels and waits for. The other way round, that search outlived the
        shutdown and the process exited while its thread was copying the
        workspace, leaving the copy behind (the soak's leftover).
        """
        self.closing = True
        tasks = [r.task for r in self.active.values() if r.task is not None]
        self.cancel()
        self.offers.withdraw()
        if tasks:
            await asyncio.wait(tasks, timeout=SHUTDOWN_GRACE_S)
        for observer in self.observers:
            await observer.stop()


def register(server: LanguageServer, manager: RunManager) -> None:

    @server.feature(lsp.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def progress_cancel(ls: LanguageServer, params: lsp.WorkDoneProgressCancelParams) -> None:
        manager.cancel_token(str(params.token))

    @server.feature(lsp.SHUTDOWN)
    async def shutdown(ls: LanguageServer, params: None) -> None:
        await manager.stop_all()

    @server.feature(lsp.EXIT)
    async def exit_(ls: LanguageServer, params: None) -> None:
        await manager.stop_all()  # at once when a shutdown came first; an exit alone still cleans up (bounded)
