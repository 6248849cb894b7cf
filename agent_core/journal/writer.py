"""The run journal: one JSON object per line under `<workspace>/.agentls/runs/<run_id>/`.

Every record has "ts", "run_id" and "type" plus type-specific keys (see
docs/pipeline.md). Secrets (the configured API keys, anything shaped like an
`sk-...` key, and every URL's userinfo and key-like query values) are redacted
from every record before it is written, by `agent_core.settings.redact`. The
journal is also the LLM client's observer, so every model call is recorded.
At the end it writes summary.json (the RunResult without file texts) and
changes.diff.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agent_core.llm.base import LLMCall
from agent_core.models import RunResult, Usage
from agent_core.settings.redact import REDACTED, Redactor
from agent_core.workspace.statedir import ensure_state_dir

__all__ = ["REDACTED", "Journal", "runs_dir", "summary"]


def runs_dir(workspace: Path) -> Path:
    return Path(workspace) / ".agentls" / "runs"


class Journal:
    """Appends redacted records to journal.jsonl; a disabled journal writes nothing."""

    def __init__(self, workspace: Path, run_id: str, secrets: Iterable[str] = (), enabled: bool = True) -> None:
        self.run_id = run_id
        self.dir = runs_dir(workspace) / run_id
        self.enabled = enabled
        self._redactor = Redactor(secrets)
        self._lock = threading.Lock()
        # The run's model usage so far (note_usage), for an errored end.
        self.usage: Usage = Usage()
        self.usage_by_role: dict[str, Usage] = {}
        if enabled:
            ensure_state_dir(workspace)
            self.dir.mkdir(parents=True, exist_ok=True)

    @property
    def path(self) -> Path:
        return self.dir / "journal.jsonl"

    def redact(self, text: str) -> str:
        """`text` without the run's secrets or any URL's credentials (agent_core.settings.redact)."""
        return self._redactor(text)

    def write(self, type_: str, **fields: Any) -> None:
        """Append one record of `type_`."""
        if not self.enabled:
            return
        record = {"ts": time.time(), "run_id": self.run_id, "type": type_, **fields}
        line = self.redact(json.dumps(record, default=_jsonable, ensure_ascii=False))
        with self._lock, open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")

    def note_usage(self, total: Usage, by_role: dict[str, Usage]) -> None:
        """Remember the run's usage, so a run that ends in an error still reports the calls it made."""
        self.usage, self.usage_by_role = total, by_role

    def on_llm_call(self, call: LLMCall) -> None:
        """LLMObserver: record a finished model call."""
        self.write(
            "llm_call", role=call.role, schema=call.schema_name, mode=call.mode, messages=call.messages,
            answer=call.answer, usage={"prompt_tokens": call.usage.prompt_tokens,
                                       "completion_tokens": call.usage.completion_tokens},
            duration_s=call.duration_s, attempts=call.attempts,
            **({"alternatives": call.alternatives} if call.alternatives else {}),
            **({"cut": True} if call.cut else {}),
        )

    def finish(self, result: RunResult) -> None:
        """Write the run_end record, summary.json and changes.diff."""
        self.write(
            "run_end", status=result.status, iterations=result.iterations, usage=result.usage.model_dump(),
            usage_by_role={k: v.model_dump() for k, v in result.usage_by_role.items()},
            duration_s=result.duration_s, error=result.error,
        )
        if not self.enabled:
            return
        (self.dir / "summary.json").write_text(self.redact(json.dumps(summary(result), indent=2)) + "\n")
        (self.dir / "changes.diff").write_text(self.redact(result.change_set.unified_diff()))


def summary(result: RunResult) -> dict[str, Any]:
    """The RunResult as JSON, without the files' full texts."""
    data = result.model_dump(mode="json")
    best = data.get("best_attempt") or {}
    for change in [*data["change_set"]["changes"], *best.get("changes", [])]:
        change.pop("original", None)
        change.pop("new", None)
    return data


def _jsonable(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)
