"""Token accounting of one LLM client: per role and in total."""

from __future__ import annotations

import threading

from agent_core.models import Usage


class UsageLedger:
    """Sums `Usage` per role; safe to share between threads and tasks."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_role: dict[str, Usage] = {}

    def record(self, role: str, usage: Usage) -> None:
        with self._lock:
            self._by_role.setdefault(role, Usage()).add(usage)

    def by_role(self) -> dict[str, Usage]:
        """A copy of the per-role sums (roles that made no call are absent)."""
        with self._lock:
            return {role: u.model_copy() for role, u in self._by_role.items()}

    def total(self) -> Usage:
        total = Usage()
        for usage in self.by_role().values():
            total.add(usage)
        return total
