"""`workspace/executeCommand`: the palette commands, each a thin adapter.

Names are fixed (the editor client and outside checks use them). pygls 2
passes the command's arguments as separate positional parameters; each
command takes one optional JSON object. Run commands answer at once with
`{"runId": ...}` while the run goes on in the background.

Hints: planAndFix and runTask take `hint` (the user's steer, RunRequest.hint).
`agentls.planAndFixWithHint` (planAndFix's argument) and
`agentls.retryWithHint` (`{runId}`, a failed run's) are the commands of the
code actions "Plan and fix with a hint..." and "Retry with a hint...": the
editor client asks the user for the hint and sends the same command with
`hint` added (LSP has no input request a server could send). Without a hint
they start nothing and say so: that editor did not ask.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TypeVar

from lsprotocol import types as lsp
from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, ValidationError
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from agent_core import report
from agent_core.analysis.symbols import analyse, enclosing_symbol
from agent_core.errors import UnknownRun
from agent_core.journal.render import render_markdown
from agent_core.journal.trace import list_runs
from agent_core.models import RunKind, RunRequest, Span
from lsp_server import convert, failed_runs, preview
from lsp_server.diagnostics import DiagnosticsPublisher
from lsp_server.documents import DocumentStore
from lsp_server.runs import RunManager
from lsp_server.settings import SettingsStore

PLAN_AND_FIX, GENERATE_TESTS, RUN_TASK = "agentls.planAndFix", "agentls.generateTests", "agentls.runTask"
RUN_TESTS, CANCEL, SHOW_TRACE = "agentls.runTests", "agentls.cancel", "agentls.showTrace"
SHOW_REPORT = "agentls.showReport"
PLAN_AND_FIX_WITH_HINT = "agentls.planAndFixWithHint"
NO_HINT = ("no hint came with {command}: this editor did not ask for one (its agentls client does; "
           "or run `agentls fix FILE --hint TEXT`)")
ACTIONS = {"fix": "Plan and fix", "gen_tests": "Generate tests", "task": "Run task", "test": "Run tests"}
Answer = Mapping[str, object]  # a command's JSON answer


class _Arguments(BaseModel):
    """One command's JSON object argument; keys it does not know are ignored."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class PositionArgument(_Arguments):
    line: NonNegativeInt
    character: NonNegativeInt


class RangeArgument(_Arguments):
    start: PositionArgument
    end: PositionArgument


class TargetArguments(_Arguments):
    """planAndFix, generateTests, runTask, runTests: `{uri?, range?, goal?, hint?, diagnostics?}`."""

    uri: str | None = None
    range: RangeArgument | None = None
    goal: str | None = None
    hint: str | None = None
    diagnostics: list[str | dict[str, object]] = Field(default_factory=list)

    def diagnostic_texts(self) -> list[str]:
        return [d if isinstance(d, str) else str(d.get("message", d)) for d in self.diagnostics]


class RunIdArguments(_Arguments):
    """cancel, showTrace, showReport: `{runId?}`."""

    run_id: str | None = Field(default=None, alias="runId")


class RetryArguments(RunIdArguments):
    """retryWithHint: `{runId, hint?}`."""

    hint: str | None = None


_Args = TypeVar("_Args", bound=_Arguments)


def _argument(command: str, args: tuple[object, ...], model: type[_Args]) -> _Args:
    """The command's one JSON object argument, validated; bad input is -32602 with a readable message."""
    value = args[0] if args and args[0] is not None else {}
    if not isinstance(value, dict):
        raise JsonRpcInvalidParams(message=f"{command}: expected one JSON object argument, got {type(value).__name__}")
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:5])
        raise JsonRpcInvalidParams(message=f"{command}: invalid arguments: {problems}") from None


class RequestBuilder:
    """Command arguments -> RunRequest (workspace-relative target, span in code points)."""

    def __init__(self, server: LanguageServer, documents: DocumentStore, settings: SettingsStore) -> None:
        self._server, self._documents, self._settings = server, documents, settings

    async def build(self, kind: RunKind, arg: TargetArguments, need_uri: bool = False) -> RunRequest:
        root = self._settings.root()
        uri = arg.uri
        if need_uri and not uri:
            raise JsonRpcInvalidParams(message="missing argument: uri")
        target = convert.relative_path(uri, root) if uri else None
        if uri and target is None:
            raise JsonRpcInvalidParams(message=f"{uri} is outside the workspace {root}")
        span, symbol = None, None
        rng = convert.range_from_json(arg.range.model_dump()) if arg.range is not None else None
        if rng is not None and target is not None:
            text = await asyncio.to_thread(self._documents.text, root, target)
            encoding = convert.encoding_name(self._server.workspace.position_encoding)
            span = convert.range_to_span(rng, text, encoding)
            symbol = await asyncio.to_thread(_enclosing_symbol, text, span) if target.endswith(".py") else None
        return RunRequest(
            kind=kind, workspace=root, goal=arg.goal, hint=(arg.hint or "").strip() or None, target_file=target,
            target_span=span, target_symbol=symbol, diagnostics=arg.diagnostic_texts(),
        )


def _enclosing_symbol(text: str, span: Span) -> str | None:
    """Qualified name of the function or class around `span` (tree-sitter, off the event loop)."""
    found = enclosing_symbol(analyse(text).symbols, span)
    return found.qualname if found is not None else None


def register(server: LanguageServer, runs: RunManager, documents: DocumentStore, settings: SettingsStore,
             diagnostics: DiagnosticsPublisher) -> None:
    builder = RequestBuilder(server, documents, settings)

    async def start(kind: RunKind, arg: TargetArguments, need_uri: bool = False) -> Answer:
        return {**runs.start(await builder.build(kind, arg, need_uri), ACTIONS[kind])}

    @server.command(PLAN_AND_FIX)
    async def plan_and_fix(ls: LanguageServer, *args: object) -> Answer:
        return await start("fix", _argument(PLAN_AND_FIX, args, TargetArguments), need_uri=True)

    @server.command(PLAN_AND_FIX_WITH_HINT)
    async def plan_and_fix_with_hint(ls: LanguageServer, *args: object) -> Answer:
        arg = _argument(PLAN_AND_FIX_WITH_HINT, args, TargetArguments)
        if not (arg.hint or "").strip():
            return runs.refuse(NO_HINT.format(command=PLAN_AND_FIX_WITH_HINT))
        return await start("fix", arg, need_uri=True)

    @server.command(failed_runs.RETRY_WITH_HINT)
    def retry_with_hint(ls: LanguageServer, *args: object) -> Answer:
        arg = _argument(failed_runs.RETRY_WITH_HINT, args, RetryArguments)
        hint = (arg.hint or "").strip()
        if not hint:
            return runs.refuse(NO_HINT.format(command=failed_runs.RETRY_WITH_HINT))
        request = runs.retries.request(arg.run_id or "", hint)
        if request is None:
            return runs.refuse(f"no failed run {arg.run_id} to retry (the server keeps the last few)")
        return {**runs.start(request, ACTIONS[request.kind]), "retryOf": arg.run_id}

    @server.command(preview.APPLY_RUN_FIX)
    async def apply_run_fix(ls: LanguageServer, *args: object) -> Answer:
        run_id = _argument(preview.APPLY_RUN_FIX, args, RunIdArguments).run_id or ""
        outcome, proposal = await runs.previewer.pending.apply(run_id)
        if not outcome.applied:
            runs.show(f"agentls: the fix of run {run_id} was not applied: {outcome.reason}",
                           lsp.MessageType.Warning)
            return {"runId": run_id, "applied": False, "reason": outcome.reason}
        if proposal is not None and proposal.report is not None:
            await diagnostics.publish(proposal.report, proposal.root)
        runs.show(f"{proposal.label if proposal else run_id}: applied")
        return {"runId": run_id, "applied": True, "reason": ""}

    @server.command(GENERATE_TESTS)
    async def generate_tests(ls: LanguageServer, *args: object) -> Answer:
        return await start("gen_tests", _argument(GENERATE_TESTS, args, TargetArguments), need_uri=True)

    @server.command(RUN_TASK)
    async def run_task(ls: LanguageServer, *args: object) -> Answer:
        arg = _argument(RUN_TASK, args, TargetArguments)
        if not (arg.goal or "").strip():
            raise JsonRpcInvalidParams(message="missing argument: goal")
        return await start("task", arg)

    @server.command(RUN_TESTS)
    async def run_tests(ls: LanguageServer, *args: object) -> Answer:
        return await start("test", _argument(RUN_TESTS, args, TargetArguments))

    @server.command(CANCEL)
    def cancel(ls: LanguageServer, *args: object) -> Answer:
        run_id = _argument(CANCEL, args, RunIdArguments).run_id
        return {"runId": run_id, "cancelled": runs.cancel(run_id)}

    @server.command(SHOW_TRACE)
    async def show_trace(ls: LanguageServer, *args: object) -> Answer:
        run_id = _argument(SHOW_TRACE, args, RunIdArguments).run_id
        root = settings.root()
        try:
            summaries = await asyncio.to_thread(list_runs, root, 1)
            markdown = await asyncio.to_thread(render_markdown, root, run_id)
        except UnknownRun as exc:
            raise JsonRpcInvalidParams(message=str(exc)) from exc
        return {"runId": run_id or (summaries[0].run_id if summaries else None), "markdown": markdown}

    @server.command(SHOW_REPORT)
    async def show_report(ls: LanguageServer, *args: object) -> Answer:
        """Write the run's HTML report into its run folder; the client opens `uri` (webview or browser)."""
        run_id = _argument(SHOW_REPORT, args, RunIdArguments).run_id
        try:
            found, path = await asyncio.to_thread(report.write_report, settings.root(), run_id)
        except UnknownRun as exc:
            raise JsonRpcInvalidParams(message=str(exc)) from exc
        return {"runId": found, "path": str(path), "uri": path.resolve().as_uri()}
