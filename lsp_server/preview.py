"""Previewing a run's change before it is applied (setting `previewEdits`, on by default).

Every edit the server sends carries one change annotation: the run's label
and its one-line reason (the run's explanation). A client that declares
`workspace.workspaceEdit.changeAnnotationSupport` gets it with
`needsConfirmation`, and shows its own preview (VS Code's refactor preview)
before anything changes. Any other client is asked first with
`window/showMessageRequest`: **Apply** / **Show diff** / **Discard**; Show
diff writes the change as a unified diff under the workspace's
`.agentls/previews/` and opens it with `window/showDocument`, then asks again
Apply / Discard. Discard (or dismissing the question) applies nothing. The
files are checked against what the run read before asking and again before
sending, so an edit that went stale meanwhile is refused, never clobbered.

A client that can do neither (no `changeAnnotationSupport`, no
`window.showMessage` capability: Helix never answers the question) gets
nothing unasked and loses nothing: the change waits, its diff written under
`.agentls/previews/`, offered as the `quickfix` code action **Apply the fix
of run X** anywhere in a file it changes (`agentls.applyRunFix`). Choosing it
applies the change as one versioned edit, refused and withdrawn if a file
changed since the run read it. The newest few wait; older ones are withdrawn.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from agent_core.models import ChangeSet, TestReport
from lsp_server import convert
from lsp_server.documents import Snapshot
from lsp_server.edits import REJECTED, EditApplier, EditOutcome

APPLY, SHOW_DIFF, DISCARD = "Apply", "Show diff", "Discard"
PREVIEW_DIR = Path(".agentls") / "previews"
DISCARDED = "discarded: nothing was applied"
APPLY_RUN_FIX = "agentls.applyRunFix"
WAITING_KEPT = 10  # changes waiting for a client that cannot be asked: the newest
log = logging.getLogger(__name__)


@dataclass
class Proposal:
    """One change the user decides about: what, why, and what the run read."""

    name: str  # file name of its diff: the run id, or "<run id>-best-attempt"
    label: str  # "agentls: Plan and fix (<run id>)"
    reason: str  # one line: the explanation, or the run's summary
    change_set: ChangeSet
    root: Path
    read: Snapshot
    note: str = ""  # more lines for the diff's header (e.g. a best attempt's test result)
    diff: str = ""  # the diff to show when there is no change set to apply (else the change set's own)
    report: TestReport | None = None  # the test report the change was verified with
    named: frozenset[str] = frozenset()  # files besides code the user named (the run's goal): they may be written


def answers_questions(server: LanguageServer) -> bool:
    """Whether the client declares `window.showMessage`: it answers `window/showMessageRequest`."""
    window = server.client_capabilities.window
    return window is not None and window.show_message is not None


def apply_run_fix_title(name: str) -> str:
    return f"Apply the fix of run {name}"


class PendingFixes:
    """Changes of runs whose client could not be asked, by run id, offered as code actions."""

    def __init__(self, edits: EditApplier) -> None:
        self._edits = edits
        self.waiting: OrderedDict[str, Proposal] = OrderedDict()

    def add(self, proposal: Proposal) -> None:
        self.waiting[proposal.name] = proposal
        while len(self.waiting) > WAITING_KEPT:
            self.waiting.popitem(last=False)

    def actions(self, uri: str) -> list[lsp.CodeAction]:
        """One action per waiting change that touches `uri`, newest first."""
        out = []
        for name, proposal in reversed(self.waiting.items()):
            if uri in {convert.workspace_uri(proposal.root, path) for path in proposal.change_set.files}:
                title = apply_run_fix_title(name)
                command = lsp.Command(title=title, command=APPLY_RUN_FIX, arguments=[{"runId": name}])
                out.append(lsp.CodeAction(title=title, kind=lsp.CodeActionKind.QuickFix, command=command))
        return out

    async def apply(self, name: str) -> tuple[EditOutcome, Proposal | None]:
        """Send the waiting change (the user chose it: nothing more to ask). It stops waiting once applied
        or stale; an editor that rejected the edit can be asked again."""
        proposal = self.waiting.get(name)
        if proposal is None:
            return EditOutcome(False, f"no change of run {name} is waiting (applied, withdrawn or unknown)"), None
        annotation = convert.change_annotation(proposal.label, proposal.reason, needs_confirmation=False)
        outcome = await self._edits.apply(proposal.change_set, proposal.root, proposal.read, proposal.label,
                                          annotation, proposal.named)
        if outcome.applied or not outcome.reason.startswith(REJECTED):
            self.waiting.pop(name, None)
        return outcome, proposal


def write_diff(proposal: Proposal) -> Path:
    """The proposal as `.agentls/previews/<name>.diff`: a commented header, then the unified diff."""
    folder = proposal.root / PREVIEW_DIR
    folder.mkdir(parents=True, exist_ok=True)
    header = [proposal.label, proposal.reason, *proposal.note.splitlines()]
    diff = proposal.diff or proposal.change_set.unified_diff()
    text = "".join(f"# {line}\n" for line in header if line) + "\n" + diff
    path = folder / f"{proposal.name}.diff"
    path.write_text(text, encoding="utf-8")
    return path


class Previewer:
    """Sends a run's change with its annotation, after the user's say-so where the client cannot ask."""

    def __init__(self, server: LanguageServer, edits: EditApplier) -> None:
        self._server, self._edits = server, edits
        self.pending = PendingFixes(edits)

    async def propose(self, proposal: Proposal, preview: bool, chosen: bool = False) -> EditOutcome:
        """Apply the proposal: previewed by the client, asked about first, or (preview off) straight away.

        A client that can neither preview nor be asked gets the change waiting as a code action, unless
        the user `chosen` this very change already (a verified quick fix's code action).
        """
        in_client = preview and self._edits.annotations_supported(proposal.change_set)
        annotation = convert.change_annotation(proposal.label, proposal.reason, needs_confirmation=in_client)
        if preview and not in_client:
            refusal = await self._edits.check(proposal.change_set, proposal.root, proposal.read, proposal.named)
            if refusal:
                return EditOutcome(False, refusal)
            if not self.can_ask():
                if not chosen:
                    return await self._park(proposal)
            elif not await self.confirm(proposal):
                return EditOutcome(False, DISCARDED)
        return await self._edits.apply(proposal.change_set, proposal.root, proposal.read, proposal.label, annotation,
                                       proposal.named)

    def can_ask(self) -> bool:
        return answers_questions(self._server)

    async def _park(self, proposal: Proposal) -> EditOutcome:
        """Keep the change for the code action "Apply the fix of run X"; its diff is written for reading."""
        path = await asyncio.to_thread(write_diff, proposal)
        self.pending.add(proposal)
        files = ", ".join(proposal.change_set.files)
        why = (f'this editor cannot be asked, so the change waits: choose the code action '
               f'"{apply_run_fix_title(proposal.name)}" in {files} (diff: {path})')
        return EditOutcome(False, why, waiting=True)

    async def confirm(self, proposal: Proposal) -> bool:
        """Apply / Show diff / Discard; after Show diff, Apply / Discard. True only for Apply."""
        files = ", ".join(proposal.change_set.files)
        message = f"{proposal.label}: {proposal.reason}\nApply the change to {files}?"
        answer = await self.ask(message, [APPLY, SHOW_DIFF, DISCARD])
        if answer == SHOW_DIFF:
            await self.show_diff(proposal)
            answer = await self.ask(f"{proposal.label}: apply the change to {files}?", [APPLY, DISCARD])
        return answer == APPLY

    async def ask(self, message: str, titles: list[str], kind: lsp.MessageType = lsp.MessageType.Info) -> str | None:
        """The title of the button the user chose (None when dismissed)."""
        params = lsp.ShowMessageRequestParams(
            type=kind, message=message, actions=[lsp.MessageActionItem(title=t) for t in titles]
        )
        try:
            answer = await self._server.window_show_message_request_async(params)
        except Exception as exc:  # noqa: BLE001 - a client that fails the request has not said Apply
            log.warning("showMessageRequest failed: %s", exc)
            return None
        return answer.title if answer is not None else None

    async def show_diff(self, proposal: Proposal) -> None:
        """Write the proposal's diff and open it in the editor (or name the file where it cannot be opened)."""
        path = await asyncio.to_thread(write_diff, proposal)
        window = self._server.client_capabilities.window
        if window and window.show_document and window.show_document.support:
            params = lsp.ShowDocumentParams(uri=convert.path_to_uri(path), take_focus=True)
            try:
                result = await self._server.window_show_document_async(params)
                if result.success:
                    return
            except Exception as exc:  # noqa: BLE001 - the client failed the request: fall back to naming the file
                log.warning("showDocument of %s failed: %s", path, exc)
        message = f"{proposal.label}: the change is in {path}"
        self._server.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Info, message=message))
