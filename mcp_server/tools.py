"""The MCP tools: thin adapters that check the project, call the engine, and convert its result.

Every tool takes the project's absolute path, which must lie inside the
client's roots (roots.py). Settings come from the user's config, the
project's files and the environment (`load_settings`), never from tool
arguments, except the test command a call names. Every engine call waits its
turn in the server's run queue (agent_core/sandbox/run_slots.py, the one the
language server uses): at most `max_concurrent_runs` work at once, the others
wait, first come first served. Expected failures (a bad path, a diff that
does not apply, a sandbox that cannot start, an endpoint that does not answer)
come back as tool errors (`isError`) with the reason.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, TypeVar

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import Resolve
from mcp.types import CallToolResult, ListRootsResult, ToolAnnotations
from pydantic import Field

from agent_core.checks import diagnose
from agent_core.checks.verify_patch import verify_patch as verify_patch_in_shadow
from agent_core.engine import Engine
from agent_core.errors import BadRequest
from agent_core.events import ForwardProgress, PhaseEvent, RunEvent
from agent_core.llm.base import LLMError
from agent_core.models import RunRequest, RunResult
from agent_core.sandbox.base import SandboxError
from agent_core.settings import Settings, SettingsError, load_settings
from agent_core.workspace.paths import PathRefused
from mcp_server import convert, models
from mcp_server.deps import Deps
from mcp_server.roots import check_file, check_project, client_roots
from mcp_server.worker import QueuedHooks, run_engine_call

T = TypeVar("T")
Roots = Annotated[ListRootsResult | None, Resolve(client_roots)]
Project = Annotated[str, Field(description="Absolute path of the project directory (inside the client's roots).")]
TestCmd = Annotated[str | None, Field(description="Test command run in the sandbox (default: the project's "
                                      "setting, else pytest).")]
_EXPECTED = (BadRequest, SandboxError, SettingsError, PathRefused, LLMError, OSError)
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
# writes the project with `apply: true` (overwriting files, all or nothing); runs nothing outside the sandbox
WRITES_WHEN_ASKED = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                                    open_world_hint=False)
# calls the configured model (an endpoint that may be remote) and writes the run's journal under the project
CALLS_A_MODEL = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                                open_world_hint=True)


def _settings(project: Path, test_cmd: str | None) -> Settings:
    try:
        return load_settings(project, {"test_command": test_cmd})
    except SettingsError as exc:
        raise ToolError(f"bad settings: {exc}") from exc


async def _engine(make: Callable[[QueuedHooks], Awaitable[T]], ctx: Context | None = None) -> T:
    """Run an engine call off the loop; its phases become progress notifications; expected errors tool errors."""

    forward = ForwardProgress()  # each notification's value higher than the last, as MCP requires

    async def progress(event: RunEvent) -> None:  # other events (messages, reports) stay in the run's journal
        if ctx is None or not isinstance(event, PhaseEvent):
            return
        step = forward.step(event)
        if step is not None:
            await ctx.report_progress(step.value, 100, convert.progress_text(event, step.message))

    try:
        return await run_engine_call(make, progress if ctx is not None else None)
    except _EXPECTED as exc:
        raise ToolError(str(exc)) from exc


def _pipeline_result(run: RunResult) -> CallToolResult:
    if run.status == "error":
        raise ToolError(f"run {run.run_id}: {run.error}")
    return convert.pipeline(run)


class Tools:
    """The tool handlers, sharing the server's roots and the projects named so far."""

    def __init__(self, deps: Deps) -> None:
        self.deps = deps

    async def queued(self, settings: Settings, make: Callable[[QueuedHooks], Awaitable[T]],
                     ctx: Context | None = None) -> T:
        """`_engine(make, ctx)` once the run queue has a slot for it (cancelled while waiting: it never starts)."""
        await self.deps.slots.acquire(settings.max_concurrent_runs)
        try:
            return await _engine(make, ctx)
        finally:
            self.deps.slots.release()

    def project_of(self, project: str, roots: ListRootsResult | None) -> Path:
        path = check_project(project, roots, self.deps.roots, self.deps.bounded)
        self.deps.projects.add(path)
        return path

    async def run_tests(
        self, project: Project, ctx: Context, test_cmd: TestCmd = None,
        tests: Annotated[list[str] | None, Field(description="Node ids or paths to run (default: all).")] = None,
        roots: Roots = None,
    ) -> Annotated[CallToolResult, models.RunTestsResult]:
        """Run the project's tests in the sandbox with the project's own interpreter; per-test outcomes."""
        path = self.project_of(project, roots)
        settings = _settings(path, test_cmd)
        request = RunRequest(kind="test", workspace=path, select=list(tests or []))
        run = await self.queued(settings, lambda hooks: Engine(settings).run(request, hooks), ctx)
        if run.status == "error":
            raise ToolError(f"run {run.run_id}: {run.error}")
        environment = await _in_thread(diagnose.project_environment, settings, path)
        return convert.run_tests(run, environment)

    async def verify_patch(
        self, project: Project, diff: Annotated[str, Field(description="A unified diff (git diff or diff -u), paths "
                                                     "relative to the project.")],
        ctx: Context, test_cmd: TestCmd = None,
        apply: Annotated[bool, Field(description="Write the diff to the project when it verified (all or "
                                     "nothing).")] = False,
        allow_files: Annotated[list[str] | None, Field(description="Files besides Python source (dotfiles, CI, "
                                                       "editor tasks, configuration) the diff may change, each "
                                                       "named as in the diff; any other is refused.")] = None,
        roots: Roots = None,
    ) -> Annotated[CallToolResult, models.VerifyPatchResult]:
        """Apply a diff to a shadow copy (never the project), run the tests before and after, and say whether it
        verified: which tests changed outcome; a diff touching tests or test configuration is refused, and so is
        one touching a file that is not Python source unless allow_files names it."""
        path = self.project_of(project, roots)
        settings = _settings(path, test_cmd)
        named = [PurePosixPath(name).as_posix() for name in allow_files or []]  # "./.envrc" names ".envrc"
        verdict = await self.queued(settings, lambda _: verify_patch_in_shadow(settings, path, diff, apply, named),
                                    ctx)
        return convert.verify_patch(verdict)

    async def localize(self, project: Project, ctx: Context, test_cmd: TestCmd = None,
                       roots: Roots = None) -> Annotated[CallToolResult, models.LocalizeResult]:
        """Run the tests and rank the functions and lines most likely at fault, with the evidence used."""
        path = self.project_of(project, roots)
        settings = _settings(path, test_cmd)
        return convert.localize(await self.queued(settings, lambda _: diagnose.localize(settings, path), ctx))

    async def quick_fix(self, project: Project, ctx: Context, test_cmd: TestCmd = None,
                        roots: Roots = None) -> Annotated[CallToolResult, models.QuickFixResult]:
        """The zero-token search: a single-edit fix verified on the whole suite, as a diff, or none."""
        path = self.project_of(project, roots)
        settings = _settings(path, test_cmd)
        report, outcome = await self.queued(settings, lambda _: diagnose.quick_fix(settings, path), ctx)
        return convert.quick_fix(report, outcome)

    async def fix(
        self, project: Project, ctx: Context,
        goal: Annotated[str | None, Field(description="What to achieve (default: make the failing tests "
                                          "pass).")] = None,
        hint: Annotated[str | None, Field(description="A hint for the planner (where the bug is, what to "
                                          "try).")] = None,
        test_cmd: TestCmd = None, roots: Roots = None,
    ) -> Annotated[CallToolResult, models.PipelineResult]:
        """The full fix pipeline (plan, code, test, reflect) with progress; returns the verified diff, unapplied.
        Cancelling the call stops the run and removes its sandbox and copy."""
        path = self.project_of(project, roots)
        settings = _settings(path, test_cmd)
        request = RunRequest(kind="fix", workspace=path, goal=goal, diagnostics=[hint] if hint else [])
        run = await self.queued(settings, lambda hooks: Engine(settings).run(request, hooks), ctx)
        return _pipeline_result(run)

    async def gen_tests(
        self, project: Project, file: Annotated[str, Field(description="The file to test, relative to the project.")],
        ctx: Context,
        target: Annotated[str | None, Field(description="A function or class in it (default: the whole "
                                            "file).")] = None,
        test_cmd: TestCmd = None, roots: Roots = None,
    ) -> Annotated[CallToolResult, models.PipelineResult]:
        """Generate tests for a file or one of its functions; returns the new test file as a diff, unapplied."""
        path = self.project_of(project, roots)
        rel = check_file(path, file)
        settings = _settings(path, test_cmd)
        request = RunRequest(kind="gen_tests", workspace=path, target_file=rel, target_symbol=target)
        run = await self.queued(settings, lambda hooks: Engine(settings).run(request, hooks), ctx)
        return _pipeline_result(run)


def register(server: MCPServer, deps: Deps) -> None:
    """Add every tool to `server`, each with a title, its annotations and its docstring as the description."""
    tools = Tools(deps)
    for handler, title, hints in (
        (tools.run_tests, "Run the project's tests", READ_ONLY),
        (tools.verify_patch, "Verify a patch with the project's tests", WRITES_WHEN_ASKED),
        (tools.localize, "Localize the failing code", READ_ONLY),
        (tools.quick_fix, "Find a single-edit fix (no model)", READ_ONLY),
        (tools.fix, "Fix the failing tests (model pipeline)", CALLS_A_MODEL),
        (tools.gen_tests, "Generate tests (model pipeline)", CALLS_A_MODEL),
    ):
        server.add_tool(handler, title=title, description=inspect.cleandoc(handler.__doc__ or ""),
                        annotations=hints)


async def _in_thread(function: Callable[..., T], *args: Any) -> T:
    try:
        return await anyio.to_thread.run_sync(function, *args)
    except _EXPECTED as exc:
        raise ToolError(str(exc)) from exc
