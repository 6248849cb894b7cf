"""Why a verified change fixes the failure: the explainer's sentences, or a templated one.

Every verified run (status fixed / ok with a change set) ends with a one- or
two-sentence explanation: what was wrong, what changed, which test now
passes. The explainer model writes it from the verified diff and the baseline
failure (agents/explainer, one text call with max_tokens capped). It never
fails the run: when the call fails or the answer is unusable (empty, JSON,
code), a sentence is built from the diff and the test names instead. The
explanation is journalled as an `explanation` record (text, source, problem).
"""

from __future__ import annotations

import asyncio
import re

from agent_core.agents.explainer.agent import explain
from agent_core.analysis.symbols import analyse, enclosing_symbol
from agent_core.journal.writer import Journal
from agent_core.llm.base import LLMClient
from agent_core.models import ChangeSet, FileChange, Span, TestReport

MAX_CHARS = 400
DIFF_CHARS = 4000
FAILURES_SHOWN = 3
TIMEOUT_S = 60.0  # the whole call, retries included: a hung endpoint costs a minute, not the run
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def fixed_tests(baseline: TestReport | None, report: TestReport | None) -> list[str]:
    """Node ids that failed before the change and do not fail after it."""
    before = [f.nodeid for f in baseline.failures] if baseline else []
    after = {f.nodeid for f in report.failures} if report else set()
    return [nodeid for nodeid in dict.fromkeys(before) if nodeid not in after]


def _first_line(text: str, limit: int = 160) -> str:
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line if len(line) <= limit else line[: limit - 3] + "..."


def failure_text(baseline: TestReport | None) -> str:
    if baseline is None or not baseline.failures:
        return "(no test failed)"
    shown = [f"{f.nodeid}: {_first_line(f.message)}" for f in baseline.failures[:FAILURES_SHOWN]]
    more = len(baseline.failures) - FAILURES_SHOWN
    return "\n".join(shown + ([f"(+{more} more)"] if more > 0 else []))


def clean_answer(answer: str) -> tuple[str, str]:
    """(the first two sentences on one line, "") or ("", why the answer is unusable)."""
    text = answer.strip()
    if not text:
        return "", "the answer was empty"
    if "```" in text or text[0] in "{[":
        return "", "the answer was code or JSON, not sentences"
    sentences = _SENTENCE_END.split(" ".join(text.split()))
    short = " ".join(sentences[:2])
    if len(short) > MAX_CHARS:
        short = short[: MAX_CHARS - 3].rsplit(" ", 1)[0] + "..."
    return short, ""


def _changed_symbols(change: FileChange) -> list[str]:
    """Functions or classes whose lines a Python file's edits touch."""
    if change.kind != "modify" or not change.path.endswith(".py"):
        return []
    symbols = analyse(change.original or "").symbols
    names = [enclosing_symbol(symbols, Span(start=edit.span.start, end=edit.span.start)) for edit in change.edits]
    return list(dict.fromkeys(s.qualname for s in names if s is not None))


def _where(change_set: ChangeSet) -> str:
    parts = []
    for change in change_set.changes:
        if change.kind != "modify":
            parts.append(f"{'created' if change.kind == 'create' else 'deleted'} {change.path}")
            continue
        names = _changed_symbols(change)
        parts.append(f"{', '.join(names)} in {change.path}" if names else change.path)
    return "; ".join(parts)


def templated(change_set: ChangeSet, baseline: TestReport | None, fixed: list[str], goal: str) -> str:
    """The explanation without a model: the failure, the changed code, the tests that now pass."""
    where = _where(change_set)
    first = baseline.failures[0] if baseline and baseline.failures else None
    if first is None:
        return f"Changed {where} for the goal: {_first_line(goal, 120) or 'the task'}; the tests pass."
    wrong = f"{first.nodeid} failed ({_first_line(first.message, 120) or first.kind})"
    if not fixed:
        return f"{wrong}. Changed {where}; the tests pass now."
    passes = ", ".join(fixed[:FAILURES_SHOWN]) + (
        f" and {len(fixed) - FAILURES_SHOWN} more" if len(fixed) > FAILURES_SHOWN else ""
    )
    verb = "passes" if len(fixed) == 1 else "pass"
    return f"{wrong}. Changed {where}; {passes} now {verb}."


async def _model_sentences(
    llm: LLMClient,
    template: str,
    goal: str,
    baseline: TestReport | None,
    change_set: ChangeSet,
    tests: str,
) -> tuple[str, str]:
    """(the explainer's sentences, "") or ("", why they are not usable)."""
    try:
        call = explain(
            llm,
            template,
            goal=goal,
            failure=failure_text(baseline),
            diff=change_set.unified_diff()[:DIFF_CHARS],
            tests=tests,
        )
        return clean_answer(await asyncio.wait_for(call, TIMEOUT_S))
    except Exception as exc:  # noqa: BLE001 - an explanation must never fail a verified run
        return "", f"the model call failed: {_first_line(str(exc), 200) or type(exc).__name__}"


async def explain_change(
    llm: LLMClient,
    template: str,
    journal: Journal,
    *,
    goal: str,
    change_set: ChangeSet,
    baseline: TestReport | None,
    report: TestReport | None,
    use_model: bool = True,
) -> str:
    """The run's explanation ("" when nothing changed); never raises for a failed model call."""
    if not change_set.changes:
        return ""
    fixed = fixed_tests(baseline, report)
    tests = "\n".join(fixed) or "(no test failed before the change; the tests still pass)"
    text, problem = "", "not asked: a single-edit fix found by the search"
    if use_model:
        text, problem = await _model_sentences(llm, template, goal, baseline, change_set, tests)
    source = "model"
    if not text:
        text, source = templated(change_set, baseline, fixed, goal), "template"
    journal.write("explanation", text=text, source=source, problem=problem)
    return text
