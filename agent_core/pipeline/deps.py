"""What nodes need besides the state: clients, stores and the run's front-end hooks.

Bound to the nodes by `graph.build_graph`, never put in the (checkpointed) state.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from agent_core.events import MessageEvent, Phase, PhaseEvent, RunHooks
from agent_core.journal.writer import Journal
from agent_core.llm.base import LLMClient
from agent_core.llm.probe import EndpointWatch
from agent_core.memory.base import MemoryStore
from agent_core.models import RunRequest
from agent_core.sandbox.base import Sandbox
from agent_core.settings import Settings
from agent_core.workspace.shadow import ShadowWorkspace
from agent_core.workspace.tools import FileTools


@dataclass
class ToolBaseline:
    """A tool's findings at the first verdict run (toolcheck.py): counted per (tool, file, code), the files it
    ran on, and the ones the user pointed at (they must go)."""

    counts: Counter[tuple[str, str, str]]
    files: set[str]
    targeted: Counter[tuple[str, str, str]]


@dataclass
class ToolMemo:
    """What re-checking another tool's diagnostic remembers within a run (toolcheck.py)."""

    missing: set[str] = field(default_factory=set)  # tools installed nowhere: the tests alone judge
    baseline: dict[str, ToolBaseline] = field(default_factory=dict)
    runner: dict[str, str] = field(default_factory=dict)  # tool -> agentls' own copy in the shadow


@dataclass
class RunDeps:
    """The collaborators of one run."""

    settings: Settings
    request: RunRequest
    llm: LLMClient
    sandbox: Sandbox
    memory: MemoryStore
    hooks: RunHooks
    journal: Journal
    shadow: ShadowWorkspace
    tools: FileTools
    prompts: dict[str, str]
    run_tests: Any  # async (sandbox, workspace, test_command, timeout_s) -> TestReport
    goal_tests: dict[str, str] = field(default_factory=dict)  # path -> text of the goal's tests (nodes/specify.py)
    toolcheck: ToolMemo = field(default_factory=ToolMemo)  # what re-checking a tool remembers (toolcheck.py)
    deadline: float | None = None  # time.monotonic() at which time_budget_s ends (pipeline/timebudget.py)
    endpoint: EndpointWatch | None = None  # the model endpoint's start-of-run probe (llm/probe.py)

    @property
    def run_id(self) -> str:
        return self.journal.run_id

    def phase(self, phase: Phase, message: str, percentage: float) -> None:
        """Emit a PhaseEvent (the engine's hooks journal it)."""
        pct = max(0, min(100, int(percentage)))
        self.hooks.emit(PhaseEvent(run_id=self.run_id, phase=phase, message=message, percentage=pct))

    def notice(self, text: str, level: str = "info") -> None:
        """Emit a one-time MessageEvent."""
        self.hooks.emit(MessageEvent(run_id=self.run_id, level=level, text=text))  # type: ignore[arg-type]

    def progress(self, iteration: int, share: float) -> float:
        """Percentage for a point `share` (0-1) through code/test round `iteration` (0-based)."""
        rounds = max(1, self.settings.max_iterations)
        return 15 + 80 * min(1.0, (iteration + share) / rounds)
