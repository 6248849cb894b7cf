"""Failed runs are visible: the failing tests marked, the best attempt offered.

A fix or task run that ends `unfixed` or `error` publishes the diagnostics
of the failing tests as the run found them (its first test report, taken
before any change: the code the user still has), on the test line and the
source line like any report. The end message of an `unfixed` run is then a
`window/showMessageRequest` offering **Show best attempt** when the run kept
an attempt: the best one (fewest failures) or, when none did better than the
code as it is, the last one. Show best attempt writes its diff with its test
result to `.agentls/previews/<run id>-best-attempt.diff` and opens it
(preview.py); an attempt that did better than the code can then be applied
with **Apply** as one versioned edit built from the attempt's files, refused
if a buffer changed since the run read it. The offer waits in the
background: it holds no run slot, and shutdown withdraws it. A client that
cannot be asked (no `window.showMessage` capability) gets the end message
with the path of the best attempt's diff instead.

Such a run can be tried again with a steer: on the diagnostics of the failing
tests it marked, the code action **Retry with a hint** (`agentls.retryWithHint`
with `{runId}`) lets the editor ask for a hint and starts the same request
again with `hint` set (RetryOffers).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from lsprotocol import types as lsp

from agent_core.models import ChangeSet, RunRequest, RunResult, TestReport
from lsp_server import convert
from lsp_server.documents import Snapshot
from lsp_server.edits import EditApplier
from lsp_server.preview import APPLY, DISCARD, Previewer, Proposal, write_diff

SHOW_BEST = "Show best attempt"
FAILED = ("unfixed", "error", "budget_spent")  # budget_spent: stopped like unfixed, nothing verified
RETRY_WITH_HINT = "agentls.retryWithHint"
RETRY_TITLE = "Retry with a hint..."
RETRIES_KEPT = 20  # failed runs that can be retried: the newest


def report_line(report: TestReport | None) -> str:
    if report is None:
        return "no test result"
    return f"{report.passed} passed, {report.failed} failed, {report.errors} errors"


def best_attempt(result: RunResult) -> tuple[ChangeSet | None, str]:
    """(the attempt's change set when it can be applied, else None; its diff) — ("" when there is none)."""
    if result.best_attempt is not None:
        return result.best_attempt, result.best_attempt.unified_diff()
    return None, result.attempt_diff


def attempt_result(result: RunResult) -> str:
    """The attempt's test result, in words."""
    if result.best_attempt is not None:
        return f"not verified: {report_line(result.best_report)}"
    return "not verified; it did no better than the code as it is, so it cannot be applied"


class BestAttemptOffer:
    """The end message of a failed run, with Show best attempt and then Apply / Discard."""

    def __init__(self, previewer: Previewer, edits: EditApplier, tell: Callable[[str, lsp.MessageType], None]) -> None:
        self._previewer, self._edits, self._tell = previewer, edits, tell
        self.pending: set[asyncio.Task[None]] = set()

    def offer(self, label: str, run_id: str, text: str, result: RunResult, root: Path, read: Snapshot) -> bool:
        """Start the offer in the background; False when there is nothing to offer.

        Only an `unfixed` run has attempts to offer: an `error` run stopped
        before its attempts were judged (or its change was refused by the gate).
        """
        change_set, diff = best_attempt(result)
        if result.status not in ("unfixed", "budget_spent") or not diff.strip():
            return False
        proposal = Proposal(name=f"{run_id}-best-attempt", label=f"{label} best attempt", reason=text,
                            change_set=change_set or ChangeSet(), root=root, read=read,
                            note=f"test result: {attempt_result(result)}", diff=diff)
        task = asyncio.create_task(self._converse(f"{label}: {text}", proposal, change_set is not None))
        self.pending.add(task)
        task.add_done_callback(self.pending.discard)
        return True

    async def _converse(self, message: str, proposal: Proposal, applicable: bool) -> None:
        if not self._previewer.can_ask():
            path = await asyncio.to_thread(write_diff, proposal)
            self._tell(f"{message}\nIts best attempt ({proposal.note}) is in {path}", lsp.MessageType.Warning)
            return
        if await self._previewer.ask(message, [SHOW_BEST], lsp.MessageType.Warning) != SHOW_BEST:
            return
        await self._previewer.show_diff(proposal)
        if not applicable:
            self._tell(f"{proposal.label}: {proposal.note}", lsp.MessageType.Info)
            return
        files = ", ".join(proposal.change_set.files)
        question = f"{proposal.label} ({proposal.note}): apply it to {files}?"
        if await self._previewer.ask(question, [APPLY, DISCARD]) != APPLY:
            return
        annotation = convert.change_annotation(proposal.label, f"applied by hand, {proposal.note}", False)
        outcome = await self._edits.apply(proposal.change_set, proposal.root, proposal.read, proposal.label, annotation,
                                          proposal.named)
        if outcome.applied:
            self._tell(f"{proposal.label}: applied ({proposal.note})", lsp.MessageType.Info)
        else:
            self._tell(f"{proposal.label}: not applied: {outcome.reason}", lsp.MessageType.Warning)

    def withdraw(self) -> None:
        for task in list(self.pending):
            task.cancel()


class RetryOffers:
    """Failed fix and task runs, by run id: their request and the failing tests they marked."""

    def __init__(self) -> None:
        self.runs: OrderedDict[str, tuple[RunRequest, set[str]]] = OrderedDict()

    def remember(self, run_id: str, request: RunRequest, baseline: TestReport | None) -> None:
        failing = {f.nodeid for f in baseline.failures} if baseline is not None else set()
        self.runs[run_id] = (request.model_copy(update={"overlays": {}}), failing)  # a retry reads the buffers anew
        while len(self.runs) > RETRIES_KEPT:
            self.runs.popitem(last=False)

    def request(self, run_id: str, hint: str) -> RunRequest | None:
        """The failed run's request again, with `hint`: a fresh run (new id, the buffers read anew)."""
        found = self.runs.get(run_id)
        if found is None:
            return None
        return found[0].model_copy(update={"hint": hint, "run_id": None})

    def actions(self, diagnostics: list[lsp.Diagnostic]) -> list[lsp.CodeAction]:
        """"Retry with a hint" for the newest failed run whose failing tests these agentls diagnostics mark."""
        for run_id, (_request, failing) in reversed(self.runs.items()):
            mine = [d for d in diagnostics if d.source == convert.SOURCE and str(d.code) in failing]
            if mine:
                command = lsp.Command(title=RETRY_TITLE, command=RETRY_WITH_HINT, arguments=[{"runId": run_id}])
                return [lsp.CodeAction(title=RETRY_TITLE, kind=lsp.CodeActionKind.QuickFix, diagnostics=mine,
                                       command=command)]
        return []
