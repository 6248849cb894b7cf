"""Applying a run's ChangeSet: version checks, then one `workspace/applyEdit`.

Nothing is written to disk here: the client applies the edit. Before sending,
every file is checked against what the run read: an open document must still
have the version it had when the run started (or, if it was opened since, the
text the run read); a closed file must still hold that text on disk. Any
mismatch refuses the whole edit and tells the user, so nothing is clobbered.
So does a file that is not code and that the user did not name (the one
code-only rule of every front door, agent_core/workspace/codefiles.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from agent_core.models import ChangeSet, FileChange
from agent_core.workspace.codefiles import code_only_refusal
from lsp_server import convert
from lsp_server.documents import DocumentStore, Snapshot


@dataclass
class EditOutcome:
    """Whether the edit reached the workspace, and why not."""

    applied: bool
    reason: str = ""
    waiting: bool = False  # not applied yet: it waits for the user's code action (preview.PendingFixes)


REJECTED = "the editor rejected the edit"
NAME_IN_GOAL = "a change writes such a file only when the run's goal names it and you approve it"


def _disk_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


class EditApplier:
    """Checks versions and sends the one workspace edit of a run."""

    def __init__(self, server: LanguageServer, documents: DocumentStore) -> None:
        self._server = server
        self._documents = documents

    async def _version_for(self, change: FileChange, root: Path, read: Snapshot) -> tuple[int | None, str | None]:
        """(version to send, refusal reason or None) for one changed file."""
        doc = self._documents.current(root, change.path)
        if change.kind == "create":
            exists = doc is not None or await asyncio.to_thread((root / change.path).exists)
            return None, f"{change.path} was created since the run started" if exists else None
        if change.path in read.versions and doc is not None:
            started = read.versions[change.path]
            if doc.version != started:
                return None, f"{change.path} changed since the run read it (version {started} -> {doc.version})"
            return started, None
        if doc is not None:
            same = doc.source == (change.original or "")
            return doc.version, None if same else f"{change.path} was opened and edited since the run read it"
        same = await asyncio.to_thread(_disk_text, root / change.path) == (change.original or "")
        if same:
            return None, None
        if change.path in read.versions:  # the run read an open buffer, which is gone and was not saved
            return None, f"{change.path} was closed without saving since the run read it"
        return None, f"{change.path} changed on disk since the run read it"

    def _capabilities(self) -> tuple[bool, bool]:
        """(documentChanges, create/delete resource operations) supported by the client."""
        caps = self._server.client_capabilities.workspace
        edit_caps = caps.workspace_edit if caps else None
        if edit_caps is None:
            return False, False
        operations = {getattr(op, "value", op) for op in (edit_caps.resource_operations or [])}
        return bool(edit_caps.document_changes), {"create", "delete"} <= operations

    def annotations_supported(self, change_set: ChangeSet) -> bool:
        """Whether the client declares `changeAnnotationSupport` and this change goes out as `documentChanges`."""
        caps = self._server.client_capabilities.workspace
        edit_caps = caps.workspace_edit if caps else None
        if edit_caps is None or edit_caps.change_annotation_support is None:
            return False
        return self._document_changes(change_set)

    def _document_changes(self, change_set: ChangeSet) -> bool:
        """Whether the edit can be `documentChanges` (else plain `changes`, which carry no annotations)."""
        document_changes, resource_ops = self._capabilities()
        needs_ops = any(c.kind != "modify" for c in change_set.changes)
        return document_changes and (resource_ops or not needs_ops)

    async def _versions(self, change_set: ChangeSet, root: Path, read: Snapshot,
                        named: Collection[str]) -> tuple[dict[str, int | None], str]:
        """(version to send per file, "") or ({}, why the edit must be refused)."""
        not_code = code_only_refusal(root, change_set.changes, named, NAME_IN_GOAL)
        if not_code:
            return {}, not_code
        versions: dict[str, int | None] = {}
        for change in change_set.changes:
            version, refusal = await self._version_for(change, root, read)
            if refusal:
                return {}, refusal
            versions[change.path] = version
        return versions, ""

    async def check(self, change_set: ChangeSet, root: Path, read: Snapshot, named: Collection[str] = ()) -> str:
        """Why the change can no longer be applied ("" when every file still holds what the run read, and each is
        code or `named` by the user)."""
        return (await self._versions(change_set, root, read, named))[1]

    async def apply(
        self, change_set: ChangeSet, root: Path, read: Snapshot, label: str,
        annotation: lsp.ChangeAnnotation | None = None, named: Collection[str] = (),
    ) -> EditOutcome:
        versions, refusal = await self._versions(change_set, root, read, named)
        if refusal:
            return EditOutcome(False, refusal)
        encoding = convert.encoding_name(self._server.workspace.position_encoding)
        edit = convert.change_set_to_workspace_edit(
            change_set, root, versions, encoding, document_changes=self._document_changes(change_set),
            annotation=annotation,
        )
        result = await self._server.workspace_apply_edit_async(lsp.ApplyWorkspaceEditParams(edit=edit, label=label))
        if not result.applied:
            return EditOutcome(False, f"{REJECTED}: {result.failure_reason or 'no reason given'}")
        return EditOutcome(True)
