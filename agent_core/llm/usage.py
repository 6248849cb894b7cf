"""Token accounting of one LLM client: per role and in total; what the tokens cost where prices are set."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

from agent_core.models import Usage


class UsageLedger:
    """Sums `Usage` per role, and the seconds of the calls that wrote tokens; safe to share between threads and
    tasks."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_role: dict[str, Usage] = {}
        self._written: dict[str, tuple[int, int, float]] = {}  # role -> calls, completion tokens, their seconds

    def record(self, role: str, usage: Usage, seconds: float = 0.0) -> None:
        """Add `usage`; a call that wrote tokens in `seconds` (its whole time, the prompt's reading included)
        counts towards the role's `pace` too."""
        with self._lock:
            self._by_role.setdefault(role, Usage()).add(usage)
            if usage.completion_tokens > 0 and seconds > 0:
                calls, tokens, spent = self._written.get(role, (0, 0, 0.0))
                self._written[role] = (calls + 1, tokens + usage.completion_tokens, spent + seconds)

    def pace(self, role: str, least: int = 1) -> float | None:
        """Seconds per written token of `role`'s calls so far (their seconds over their completion tokens); None
        before `least` calls wrote any."""
        with self._lock:
            calls, tokens, spent = self._written.get(role, (0, 0, 0.0))
        return spent / tokens if calls >= max(1, least) else None

    def by_role(self) -> dict[str, Usage]:
        """A copy of the per-role sums (roles that made no call are absent)."""
        with self._lock:
            return {role: u.model_copy() for role, u in self._by_role.items()}

    def total(self) -> Usage:
        total = Usage()
        for usage in self.by_role().values():
            total.add(usage)
        return total


PER_MILLION = 1_000_000


def cost_usd(by_account: dict[str, Usage], model_of: Callable[[str], str],
             prices: Mapping[str, tuple[float, float]]) -> float | None:
    """What the calls cost in USD, from `prices` (model -> USD per million prompt and completion tokens);
    None when a model that spent tokens has no price (a partial sum would read as the whole)."""
    total = 0.0
    for account, usage in by_account.items():
        if not usage.tokens:
            continue
        price = prices.get(model_of(account))
        if price is None:
            return None
        total += (usage.prompt_tokens * price[0] + usage.completion_tokens * price[1]) / PER_MILLION
    return round(total, 6)


def usage_text(usage: Usage, cost: float | None = None) -> str:
    """A run's spend in words, e.g. '1,234 tokens (1,000 prompt, 234 completion) in 3 model calls, $0.0004';
    'no model call' when it made none."""
    if not usage.llm_calls:
        return "no model call"
    calls = f"{usage.llm_calls} model call{'s' if usage.llm_calls != 1 else ''}"
    text = f"{usage.tokens:,} tokens ({usage.prompt_tokens:,} prompt, {usage.completion_tokens:,} completion)"
    text += f" in {calls}"
    return text + (f", ${cost:.4f}" if cost is not None else "")
