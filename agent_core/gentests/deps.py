"""What a gen-tests run needs from outside: the LLM, the sandbox, the journal and a shadow factory."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_core.events import RunHooks
from agent_core.llm.base import LLMClient
from agent_core.llm.factory import make_llm_client
from agent_core.sandbox.base import Sandbox
from agent_core.sandbox.factory import sandbox_for_run
from agent_core.settings import Settings
from agent_core.workspace.shadow import ShadowWorkspace

ShadowFactory = Callable[[Path, Mapping[str, str]], ShadowWorkspace]


@dataclass
class GenTestsDeps:
    llm: LLMClient
    sandbox: Sandbox
    journal: Any | None  # agent_core.journal.writer.Journal, or None for no journal
    shadow_factory: ShadowFactory = ShadowWorkspace
    run_id: str = "gen-tests"

    @classmethod
    def build(cls, settings: Settings, hooks: RunHooks, journal: Any | None = None, run_id: str | None = None
              ) -> GenTestsDeps:
        """Defaults from settings: the configured LLM client (journal as observer) and sandbox."""
        run_id = run_id or getattr(journal, "run_id", None) or "gen-tests"
        sandbox = sandbox_for_run(settings, hooks, run_id)
        llm = make_llm_client(settings, journal, on_wait=getattr(hooks, "llm_waiting", None))
        return cls(llm=llm, sandbox=sandbox, journal=journal, run_id=run_id)


def resolve_deps(deps: Any, settings: Settings, hooks: RunHooks, run_id: str | None) -> GenTestsDeps:
    """`deps` as given when complete; otherwise built from settings, keeping any journal it carries."""
    if isinstance(deps, GenTestsDeps):
        return deps
    return GenTestsDeps.build(settings, hooks, getattr(deps, "journal", None), run_id)
