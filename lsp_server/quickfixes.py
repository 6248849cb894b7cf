"""Verified quick fixes, ready before the user asks.

When a test run leaves failing tests (`agentls.runTests`, a save with
`runTestsOnSave`, or a Generate tests run whose kept tests found a suspected
bug and were applied), the fix pipeline's zero-token search
(agent_core.quickfix) starts in the background, reniced, on the
buffers the run read. A single-edit change that makes every test pass
becomes a `quickfix` code action on the failing tests' diagnostics and on the
changed source line: "Apply verified fix: `range(1, n)` -> `range(1, n + 1)`
in count_up (42 tests pass)". Its command, `agentls.applyVerifiedFix`, sends
the change through the same versioned, previewable edit as Plan and fix
(preview.py), then publishes the passing report, which clears the
diagnostics.

The search yields: a run the user starts cancels it, and it starts again
once no run is going if the files are still as it read them. Any change to a
workspace document (`didChange` to text other than what the search read)
cancels it and drops its offers. It never calls a model.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from agent_core.models import RunRequest, RunResult, TestReport
from agent_core.quickfix import QuickFix, find_quick_fix
from lsp_server import convert
from lsp_server.diagnostics import DiagnosticsPublisher
from lsp_server.documents import DocumentStore, Snapshot
from lsp_server.edits import EditApplier
from lsp_server.engine_thread import run_in_thread
from lsp_server.preview import Proposal
from lsp_server.runs import WORKSPACE_KEY, ActiveRun, RunManager
from lsp_server.settings import SettingsStore

APPLY_VERIFIED_FIX = "agentls.applyVerifiedFix"
log = logging.getLogger(__name__)


@dataclass
class SearchInput:
    """What one background search reads: the failing report and the texts of the code it came from."""

    report: TestReport
    root: Path
    read: Snapshot
    overlays: dict[str, str]  # the buffers the run read, plus files a run's applied edit created


@dataclass
class Offer:
    """A verified fix on offer, with what it was found on."""

    fix_id: str
    fix: QuickFix
    given: SearchInput
    uri: str
    failing: set[str] = field(default_factory=set)

    def action(self, diagnostics: list[lsp.Diagnostic]) -> lsp.CodeAction:
        title = self.fix.title
        return lsp.CodeAction(
            title=title,
            kind=lsp.CodeActionKind.QuickFix,
            is_preferred=True,
            diagnostics=diagnostics or None,
            command=lsp.Command(title=title, command=APPLY_VERIFIED_FIX, arguments=[{"fixId": self.fix_id}]),
        )


class QuickFixes:
    """The background search's lifecycle and its offers (a RunObserver of the run manager)."""

    def __init__(self, server: LanguageServer, documents: DocumentStore, settings: SettingsStore,
                 edits: EditApplier, diagnostics: DiagnosticsPublisher, runs: RunManager) -> None:
        self._server, self._documents, self._settings = server, documents, settings
        self._edits, self._diagnostics, self._runs = edits, diagnostics, runs
        self.offers: dict[str, Offer] = {}
        self.task: asyncio.Task[None] | None = None
        self.unfinished: set[asyncio.Task[None]] = set()  # the search in flight and cancelled ones still cleaning up
        self.current: SearchInput | None = None  # the search in flight, or the one waiting for runs to end
        self.closed = False  # shut down: no search starts again (a run cancelled by the shutdown ends after it)

    # -- starting and yielding -------------------------------------------------------------------

    def start(self, given: SearchInput, ending: str | None = None) -> None:
        """Drop what an earlier report left; search this one now, or when the runs going on (but `ending`) end."""
        self.drop()
        if given.report.ok or not given.report.failures or self._edited_since(given):
            return
        self.current = given
        if not self._others(ending):
            self._launch(given)

    def _edited_since(self, given: SearchInput) -> bool:
        """A buffer the run read was edited while it ran (those changes came before there was a search to drop)."""
        now = self._documents.snapshot(given.root).overlays
        return any(now.get(rel, text) != text for rel, text in given.read.overlays.items())

    def _others(self, ending: str | None) -> bool:
        return any(r.run_id != ending for r in self._runs.active.values())

    def _launch(self, given: SearchInput) -> None:
        if self.closed:
            self.current = None
            return
        self.task = task = asyncio.create_task(self._search(given), name="agentls-quickfix-search")
        self.unfinished.add(task)
        task.add_done_callback(self.unfinished.discard)

    async def _search(self, given: SearchInput) -> None:
        settings = await self._settings.load()
        if not (settings.search.enabled and settings.search.background):
            self.current = None
            return
        started = time.monotonic()
        try:
            outcome = await run_in_thread(
                lambda: find_quick_fix(settings, given.root, given.overlays, given.report), name="agentls-quickfix"
            )
        except Exception as exc:
            log.warning("background search failed: %s", exc, exc_info=exc)
            outcome = None
        if self.current is not given or outcome is None:
            return
        self.current = None
        elapsed = time.monotonic() - started
        if outcome.fix is None:
            log.info("background search found no single-edit fix in %.1f s: %s", elapsed, outcome.stats)
            return
        if await self._edits.check(outcome.fix.change_set, given.root, given.read):
            return  # a file changed on disk meanwhile (open buffers are watched: see changed())
        fix_id = secrets.token_hex(4)
        uri = convert.workspace_uri(given.root, outcome.fix.file)
        failing = set(outcome.fix.failing) | {f.nodeid for f in given.report.failures}
        self.offers[fix_id] = Offer(fix_id, outcome.fix, given, uri, failing)
        self._server.window_log_message(
            lsp.LogMessageParams(
                type=lsp.MessageType.Info,
                message=f"agentls: verified fix ready in {elapsed:.1f} s: {outcome.fix.title}",
            )
        )

    def run_started(self, run: ActiveRun) -> None:
        """A user's run goes first: the search in flight stops and waits for the runs to end."""
        if self.task is not None and not self.task.done():
            self.task.cancel()

    def run_ended(self, run: ActiveRun, result: RunResult | None) -> None:
        given = self._from_run(run, result)
        if given is not None:
            self.start(given, ending=run.run_id)
        elif self.current is not None and not self._others(run.run_id) and (self.task is None or self.task.done()):
            self._launch(self.current)

    def _from_run(self, run: ActiveRun, result: RunResult | None) -> SearchInput | None:
        """A finished run's failing report, when it describes code the user has."""
        if result is None or result.report is None:
            return None
        root, read = run.request.workspace, run.read
        if run.request.kind == "test":
            return SearchInput(result.report, root, read, dict(read.overlays))
        if run.request.kind == "gen_tests" and run.applied and result.gen_tests and result.gen_tests.suspected_bugs:
            created = {c.path: c.new for c in result.change_set.changes if c.new is not None}
            return SearchInput(result.report, root, read, {**read.overlays, **created})
        return None

    # -- staleness -------------------------------------------------------------------------------

    def changed(self, root: Path, uri: str, text: str) -> None:
        """A document now holds `text`: cancel and drop what was found on other text."""
        rel = convert.relative_path(uri, root)
        if rel is None:
            return
        inputs = [o.given for o in self.offers.values()] + ([self.current] if self.current else [])
        if any(given.overlays.get(rel) != text for given in inputs):
            self.drop()

    def drop(self) -> None:
        """Cancel the search and withdraw every offer."""
        self.current = None
        self.offers.clear()
        if self.task is not None and not self.task.done():
            self.task.cancel()
        self.task = None

    async def stop(self) -> None:
        """Shutdown: cancel the search, wait (bounded) for its clean-up and that of the searches
        cancelled before (an edit drops a search without waiting), and start none again."""
        self.closed = True
        self.drop()
        if self.unfinished:
            await asyncio.wait(set(self.unfinished), timeout=15)

    # -- offering and applying -------------------------------------------------------------------

    def actions(self, uri: str, rng: lsp.Range, diagnostics: list[lsp.Diagnostic]) -> list[lsp.CodeAction]:
        """The offers for a code action request at `rng`: on a failing test's diagnostic or the fixed line."""
        out: list[lsp.CodeAction] = []
        for offer in self.offers.values():
            mine = [d for d in diagnostics if d.source == "agentls" and str(d.code) in offer.failing]
            line = offer.fix.line - 1
            on_line = uri == offer.uri and rng.start.line <= line <= rng.end.line
            if mine or on_line:
                out.append(offer.action(mine))
        return out

    async def apply(self, fix_id: str) -> dict[str, bool | str]:
        """Send the offer's change (previewed like Plan and fix); publish its passing report when applied."""
        offer = self.offers.get(fix_id)
        if offer is None:
            why = "that fix is no longer current (the files changed or the tests ran again)"
            self._runs.show(f"agentls: {why}", lsp.MessageType.Warning)
            return {"applied": False, "reason": why}
        fix, given = offer.fix, offer.given
        reason = f"verified in the sandbox: {fix.report.passed} tests pass with {fix.change} ({fix.file}:{fix.line})"
        reason += f". {fix.rival}" if fix.rival else ""  # another green edit, and where the two differ
        proposal = Proposal(
            f"quickfix-{fix_id}", f"agentls: {fix.title}", reason, fix.change_set, given.root, given.read
        )
        settings = await self._settings.load()
        outcome = await self._runs.previewer.propose(proposal, settings.preview_edits, chosen=True)
        if not outcome.applied:
            self._runs.show(f"agentls: verified fix not applied: {outcome.reason}", lsp.MessageType.Warning)
            return {"applied": False, "reason": outcome.reason}
        self.drop()
        await self._diagnostics.publish(fix.report, given.root)
        return {"applied": True, "reason": ""}


def register(server: LanguageServer, fixes: QuickFixes, documents: DocumentStore, settings: SettingsStore,
             runs: RunManager) -> None:
    """The search follows runs; an edit makes its work stale; a save can start a test run; the fix's command."""
    runs.observe(fixes)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: LanguageServer, params: lsp.DidChangeTextDocumentParams) -> None:
        doc = documents.open_document(params.text_document.uri)
        if doc is not None and (fixes.offers or fixes.current):
            fixes.changed(settings.root(), doc.uri, doc.source)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: LanguageServer, params: lsp.DidSaveTextDocumentParams) -> None:
        await run_tests_on_save(settings, runs, params.text_document.uri)

    @server.command(APPLY_VERIFIED_FIX)
    async def apply_verified_fix(ls: LanguageServer, *args: object) -> dict[str, bool | str]:
        argument = args[0] if args and isinstance(args[0], dict) else {}
        return await fixes.apply(str(argument.get("fixId", "")))


async def run_tests_on_save(settings: SettingsStore, runs: RunManager, uri: str) -> None:
    """With `runTestsOnSave`, a saved Python file of the workspace starts a test run (unless one is going)."""
    root = settings.root()
    if not uri.endswith(".py") or convert.relative_path(uri, root) is None:
        return
    if not (await settings.load()).run_tests_on_save:
        return
    if any(r.key == WORKSPACE_KEY for r in runs.active.values()):
        return
    runs.start(RunRequest(kind="test", workspace=root), "Run tests")
