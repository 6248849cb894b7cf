"""`textDocument/codeAction`: Plan and fix, Generate tests — answered at once.

Nothing is computed here beyond the kinds: each action carries the command
that starts its run. Plan and fix is a `quickfix` when the request is about a
diagnostic (one the client sends in the context, of any source, on the range's
lines whatever the column; or an agentls test failure that touches the range;
their messages become part of the goal), else `refactor.rewrite`. A verified fix
that the background search already found (quickfixes.py) comes first, as the
preferred `quickfix`.

Beside Plan and fix, **Plan and fix with a hint...** carries the same
argument to `agentls.planAndFixWithHint`, which the editor client asks a hint
for (commands.py). On the failing tests a failed run marked, **Retry with a
hint...** (failed_runs.py); in a file whose verified change waits for a
client that cannot be asked, **Apply the fix of run X** (preview.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from lsp_server import commands, convert
from lsp_server.diagnostics import DiagnosticsPublisher
from lsp_server.documents import DocumentStore
from lsp_server.quickfixes import QuickFixes
from lsp_server.runs import RunManager

PLAN_AND_FIX_TITLE = "Plan and fix"
PLAN_AND_FIX_HINT_TITLE = "Plan and fix with a hint..."
GENERATE_TESTS_TITLE = "Generate tests"
GENERATE_TESTS_KIND = "source.agentls.generateTests"
KILL_MUTANT_TITLE = "Generate a test for this"
KINDS = [lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.RefactorRewrite, GENERATE_TESTS_KIND]
PYTHON_SUFFIXES = (".py", ".pyi")


def _wanted(kind: str, only: Sequence[str] | None) -> bool:
    """LSP's hierarchical kind filter: "source" admits "source.agentls.generateTests"."""
    if not only:
        return True
    return any(kind == want or kind.startswith(f"{want}.") for want in map(str, (getattr(o, "value", o) for o in only)))


def _touching(params: lsp.CodeActionParams, ours: list[lsp.Diagnostic]) -> list[lsp.Diagnostic]:
    """The diagnostics a request is about: the client's (its statement of what is under the cursor, taken on the
    cursor's line whatever the column: a cursor in the indentation) and ours that touch the range."""
    seen, out = set(), []
    given = [(diag, convert.lines_touch) for diag in params.context.diagnostics]
    for diag, touch in [*given, *((diag, convert.ranges_touch) for diag in ours)]:
        key = (diag.message, diag.range.start.line, diag.range.start.character, diag.source)
        if key not in seen and touch(diag.range, params.range):
            seen.add(key)
            out.append(diag)
    return out


def build_actions(params: lsp.CodeActionParams, ours: list[lsp.Diagnostic]) -> list[lsp.CodeAction]:
    uri = params.text_document.uri
    diagnostics = _touching(params, ours)
    argument = {"uri": uri, "range": convert.range_to_json(params.range)}
    failures = [d for d in diagnostics if d.code != convert.SURVIVOR_CODE]  # a surviving mutant is no failure
    fix_argument = {**argument, "diagnostics": convert.diagnostic_messages(failures)}
    fix_kind = lsp.CodeActionKind.QuickFix if failures else lsp.CodeActionKind.RefactorRewrite
    actions = [
        lsp.CodeAction(
            title=PLAN_AND_FIX_TITLE,
            kind=fix_kind,
            diagnostics=failures or None,
            command=lsp.Command(title=PLAN_AND_FIX_TITLE, command=commands.PLAN_AND_FIX, arguments=[fix_argument]),
        ),
        lsp.CodeAction(
            title=PLAN_AND_FIX_HINT_TITLE,
            kind=fix_kind,
            diagnostics=failures or None,
            command=lsp.Command(title=PLAN_AND_FIX_HINT_TITLE, command=commands.PLAN_AND_FIX_WITH_HINT,
                                arguments=[fix_argument]),
        ),
        lsp.CodeAction(
            title=GENERATE_TESTS_TITLE,
            kind=GENERATE_TESTS_KIND,
            command=lsp.Command(title=GENERATE_TESTS_TITLE, command=commands.GENERATE_TESTS, arguments=[argument]),
        ),
    ]
    actions += [_kill_mutant(uri, diag) for diag in diagnostics if diag.code == convert.SURVIVOR_CODE][:1]
    return [a for a in actions if _wanted(str(getattr(a.kind, "value", a.kind)), params.context.only)]


def _kill_mutant(uri: str, diag: lsp.Diagnostic) -> lsp.CodeAction:
    """Generate tests for the function around a surviving mutant (the run's follow-up aims at the survivors)."""
    argument = {"uri": uri, "range": convert.range_to_json(diag.range)}
    return lsp.CodeAction(
        title=KILL_MUTANT_TITLE, kind=lsp.CodeActionKind.QuickFix, diagnostics=[diag],
        command=lsp.Command(title=KILL_MUTANT_TITLE, command=commands.GENERATE_TESTS, arguments=[argument]),
    )


def is_python(uri: str, language_id: str | None) -> bool:
    return language_id == "python" or uri.endswith(PYTHON_SUFFIXES)


def register(server: LanguageServer, documents: DocumentStore, diagnostics: DiagnosticsPublisher, runs: RunManager,
             quickfixes: QuickFixes) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(code_action_kinds=KINDS))
    def code_action(ls: LanguageServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction] | None:
        uri = params.text_document.uri
        doc = documents.open_document(uri)
        if not is_python(uri, doc.language_id if doc else None):
            return None
        ours = diagnostics.touching(uri, params.range)
        touching = _touching(params, ours)
        verified = runs.previewer.pending.actions(uri) + quickfixes.actions(uri, params.range, touching)
        quick = _wanted(lsp.CodeActionKind.QuickFix.value, params.context.only)
        retry = runs.retries.actions(touching) if quick else []
        return (verified if quick else []) + build_actions(params, ours) + retry
