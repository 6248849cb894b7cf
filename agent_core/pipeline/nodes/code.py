"""The code node: coder calls per plan step, edits applied with the file tools.

The coder sees the suspects focused (pipeline/coder/focus.py) and the last step of a
round is sampled and verified (pipeline/coder/sampling.py); after the first model's
rounds failed, the fallback model answers (state `escalated`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_core.agents.coder.agent import (
    answer_budget,
    coder_messages,
    write_candidates,
)
from agent_core.agents.coder.schema import CoderOutput
from agent_core.agents.reflector.signatures import failure_text
from agent_core.models import SubTask, TestReport
from agent_core.pipeline.attempts import with_tried
from agent_core.pipeline.coder.edits import apply_edits
from agent_core.pipeline.coder.focus import Target, render_suspects, retarget_to_focus, target_code
from agent_core.pipeline.coder.sampling import Candidate, Sampler, StepResult, temperatures
from agent_core.pipeline.coder.suspects import suspects_from_report
from agent_core.pipeline.context import (
    FILES_BUDGET,
    focus_from_report,
    relevant_files,
    render_files,
)
from agent_core.pipeline.deps import RunDeps
from agent_core.pipeline.protected_tests import tests_protected
from agent_core.pipeline.state import RunState, stored
from agent_core.workspace.testfiles import is_test_file


def _hypothesis(state: RunState) -> str:
    """What earlier attempts taught: the undone attempts and the last analysis (empty on the first try)."""
    parts = []
    tried = state.get("tried") or []
    if tried:
        parts.append("Tried before; the tests still failed, so it was undone (do not repeat it):\n"
                     + "\n\n".join(tried))
    r = state.get("reflection")
    if r:
        where = f" in {r['file']}" if r.get("file") else ""
        suggested = (
            f"\nSuggested change{where}: {r['change']} (confidence: {r['confidence']})" if r.get("change") else ""
        )
        parts.append(f"Analysis of the last attempt: {r['hypothesis']}{suggested}")
    return "\n" + "\n\n".join(parts) + "\n" if parts else ""  # its own paragraph in the prompt, or nothing


RETRY_WARMING = 0.3  # added to the coder's temperature per earlier attempt, up to RETRY_MAX_TEMPERATURE
RETRY_MAX_TEMPERATURE = 1.0


def _configured(state: RunState, deps: RunDeps) -> float:
    """The coder's configured temperature (the fallback model's once escalated)."""
    fallback = deps.settings.fallback_profile("coder") if state.get("escalated") else None
    return (fallback or deps.settings.profile("coder")).temperature


def _temperature(state: RunState, deps: RunDeps) -> float | None:
    """The configured temperature on a first try; warmer on each retry, so a retry is not a rerun."""
    earlier = state.get("iteration", 0) - (deps.settings.max_iterations if state.get("escalated") else 0)
    if earlier <= 0:  # the first round (of the fallback model's rounds too)
        return None
    configured = _configured(state, deps)
    return max(configured, min(RETRY_MAX_TEMPERATURE, configured + RETRY_WARMING * earlier))


def _steps_for_round(state: RunState) -> list[SubTask]:
    plan = state["plan"]
    assert plan is not None  # the code node follows a plan
    if state.get("fresh_plan") or not state.get("reflection"):
        return plan.subtasks  # first round of this plan: every step, in order
    # A retry after a reflection: one call that covers the plan's goal with the new hypothesis.
    summary = "; ".join(s.description for s in plan.subtasks)
    files = sorted({f for s in plan.subtasks for f in s.files})
    return [SubTask(id="retry", description=summary, priority=5, files=files)]


def _base_temperature(state: RunState, deps: RunDeps) -> float:
    """The temperature of the round's first answer."""
    warmer = _temperature(state, deps)
    return _configured(state, deps) if warmer is None else warmer


@dataclass
class _Step:
    """What one coder call of this round is given."""

    step: SubTask
    files: str
    sources: list[str]
    targets: list[Target]
    rewrite: str = ""  # the targets' own code: what the answer rewrites (its size bounds the answer)


def _context(state: RunState, deps: RunDeps, step: SubTask, report: TestReport | None, protect: bool) -> _Step:
    """The step's files: the suspects focused (pipeline/coder/focus.py) and the rest as before."""
    shown = relevant_files(deps.shadow, step.files, report)
    suspects = state.get("suspects") or suspects_from_report(deps.shadow, report)
    focused, focused_files, targets = render_suspects(deps.shadow, suspects)
    if suspects:
        deps.journal.write(
            "focus",
            source="state" if state.get("suspects") else "tests",
            suspects=suspects[:5],
            shown_whole=[f"{t.file}:{t.start_line}-{t.end_line} {t.function}" for t in targets],
        )
    budget = max(FILES_BUDGET - len(focused), 1500)
    rest = [f for f in shown if f not in focused_files]
    if focused:  # another source shows whole only if it fits: the prompt must not grow with a big file
        rest = [f for f in rest if is_test_file(f) or len(deps.shadow.readable(f) or "") <= budget]
    others = render_files(deps.shadow, rest, budget=budget, tests_read_only=protect, focus=focus_from_report(report))
    files = "\n\n".join(p for p in (focused, others) if p and p != "(no files)") or "(no files)"
    sources = [f for f in [*focused_files, *shown] if not is_test_file(f)]
    return _Step(step, files, list(dict.fromkeys(sources)), targets, target_code(deps.shadow, targets))


async def _ask(
    state: RunState, deps: RunDeps, ctx: _Step, messages: list[dict[str, str]], n: int, temperature: float,
    first: int,
) -> list[Candidate]:
    """Up to n answers from one request, each with its share of the tokens the request cost."""
    before = deps.llm.total_usage()
    outputs = await write_candidates(
        deps.llm,
        messages,
        n=n,
        temperature=temperature,
        max_tokens=answer_budget(ctx.files, ctx.rewrite),
        default_path=ctx.sources[0] if ctx.sources else "",
        fallback=bool(state.get("escalated")),
    )
    after = deps.llm.total_usage()
    spent = after.prompt_tokens + after.completion_tokens - before.prompt_tokens - before.completion_tokens
    share = spent // max(1, len(outputs))
    return [Candidate(first + i, temperature, out, tokens=share) for i, out in enumerate(outputs)]


def _applier(deps: RunDeps, ctx: _Step, protect: bool) -> Any:
    def apply(output: CoderOutput) -> tuple[int, list[str]]:
        return apply_edits(deps.tools, retarget_to_focus(deps.shadow, output, ctx.targets), protect, ctx.sources)

    return apply


async def _sampled_step(
    state: RunState, deps: RunDeps, ctx: _Step, failure: str, errors: str, report: TestReport | None, k: int
) -> StepResult:
    """Up to k answers, tested in order until one passes (pipeline/coder/sampling.py).

    The first request asks for all k (`n`). An endpoint that honoured it gave them at once: a single
    distinct answer is left to the gate and test nodes, several are tested in turn. One that gave
    fewer is asked for the rest one at a time, each only after the answers so far failed, at the
    next temperature: the first answer that passes costs no further request.
    """
    temps = temperatures(_base_temperature(state, deps), k)
    messages = coder_messages(
        deps.prompts["coder"],
        task=ctx.step.description,
        files=ctx.files,
        failure=failure,
        hypothesis=_hypothesis(state),
        tool_errors=errors,
    )
    sampler = Sampler(deps, report, state.get("iteration", 0), _applier(deps, ctx, _protect(deps)),
                      state.get("baseline"))
    got = await _ask(state, deps, ctx, messages, k, temps[0], 0)
    queue = sampler.add(got)
    if len(got) >= k and len(queue) <= 1:  # nothing to choose between: the gate and test nodes test it
        chosen = queue[0] if queue else None
        sampler.leave(chosen, "single")
        return StepResult(chosen, None, [], sampler.errors(chosen))
    asked = len(got)
    while True:
        for cand in queue:
            if await sampler.check(cand):
                return sampler.finish(cand)
        if asked >= k:
            return sampler.finish(None)
        queue = sampler.add(await _ask(state, deps, ctx, messages, 1, temps[asked], asked))
        asked += 1


def _protect(deps: RunDeps) -> bool:
    return tests_protected(deps.request)


async def code(state: RunState, deps: RunDeps) -> RunState:
    """Run the coder for this round's steps on the shadow workspace.

    Every step but the last gets one answer, applied at once; the last step's
    answers are sampled and verified (pipeline/coder/sampling.py).
    """
    # The failures of the code the coder sees: the best state so far (an attempt that did no better was undone).
    best = state.get("best")
    report = (best["report"] if best else None) or state.get("report") or state.get("baseline")
    failure = failure_text(report) if report and not report.ok else "(the tests do not fail yet)"
    steps = _steps_for_round(state)
    applied, errors = 0, []
    previous_errors = "\n".join(state.get("tool_errors") or [])
    iteration = state.get("iteration", 0)
    protect = _protect(deps)
    out = RunState(checked=None)
    for n, step in enumerate(steps, 1):
        deps.phase("coding", f"coding step {n}/{len(steps)}", deps.progress(iteration, 0.1 + 0.3 * n / len(steps)))
        ctx = _context(state, deps, step, report, protect)
        k = deps.settings.samples if n == len(steps) else 1
        done = await _sampled_step(state, deps, ctx, failure, previous_errors, report, k)
        applied += done.chosen.applied if done.chosen else 0
        errors.extend(done.errors)
        if done.tried:
            out["tried"] = with_tried(state.get("tried"), done.tried)
        out["checked"] = stored(done.checked) if done.checked else None
    out.update(RunState(edits_applied=applied, tool_errors=errors, fresh_plan=False))
    return out
