"""Asking the model to fill holes: many short samples per hole, each a candidate of the search.

`infill_hole` draws a hole's samples one after another, or as many at a time as
the endpoint writes together (FimSpec.parallel: the bundled server decodes four
requests of one prompt in one batch, local_model/batched_server.py; another
local server answers one request at a time, and at its defaults a second one
would cut the first's stream short), with the prompt of prompt.py, and turns
them into mutants (samples.py). Each sample is capped at `hole_tokens`:
`max_tokens` for a one-line hole, more for a hole of several lines, whose right
answer is longer than what it replaces (a 60-token cap cut a five-line
statement's rewrite after its third line, and only its first line was left to
parse). A hole's sampling ends early once SATURATED answers in a row made no
new candidate (checked after each round): the model keeps writing what it wrote
(at a one-line hole, 12 samples gave 4 distinct lines), and the time is better
spent on the next hole. A sample's stream ends as soon as its lines hold all the
hole can keep of it (samples.py `fit_done`): the model would otherwise go on
writing the code after the hole up to its cap (a five-line statement's samples ran
to their 186-token cap, 15 s each), and the tokens past the hole are thrown away.
`infill_holes` does that hole by hole as an async
iterator, so a caller can verify a hole's candidates before it pays for the
next hole's, and stop at the first that is right; a candidate an earlier hole
of the file made is not made again. `infill_candidates` collects them all.

A failing endpoint is data, not a crash: an unreachable or failing endpoint
(LLMUnavailable), a spent token or time budget (BudgetSpent) end the
iteration with the reason in the last report's `error` (and `stopped` set);
any other refused request ends that hole's sampling with the reason, and the
next hole is tried.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from agent_core.llm.base import BudgetSpent, LLMClient, LLMError, LLMUnavailable
from agent_core.llm.fim import FimSpec
from agent_core.models import Role
from agent_core.search.candidate import Mutant
from agent_core.search.infill.holes import Hole
from agent_core.search.infill.prompt import InfillPrompt, answer_code, build_prompt
from agent_core.search.infill.samples import Sampler, fit_done, sample_plan

INFILL_ACCOUNT = "infill"  # the usage and journal name of the infill calls (they borrow a role's model)
SAMPLES = 10
MAX_TOKENS = 60
MAX_HOLE_TOKENS = 200  # the most any sample may take, however large its hole
CHARS_PER_TOKEN = 3  # of Python source, for the cap of a hole's answer (a rough figure is enough)
SLOT_TOKENS = 30  # an empty slot's answer: a guard and its body, beyond max_tokens
INLINE_TOKENS = 32  # a clause added to a condition (`not any(t.value == 'AS' for t in tlist.tokens)` is 17)
SATURATED = 3  # answers in a row that made no new candidate: the hole's sampling ends
CHAT_EXTRA_TOKENS = 24  # a chat answer's fence and language tag around the lines


@dataclass
class HoleReport:
    """What filling one hole did: its candidates and what they cost."""

    hole: Hole
    dialect: str
    mutants: list[Mutant] = field(default_factory=list)
    drawn: int = 0  # samples asked for
    answered: int = 0  # samples the model answered
    tokens: int = 0  # prompt and completion tokens of those calls
    seconds: float = 0.0
    error: str | None = None  # why sampling ended early (the endpoint failed, the budget is spent)
    stopped: bool = False  # that error ends every later hole too
    saturated: bool = False  # sampling ended early: SATURATED answers in a row made nothing new
    unchanged: int = 0  # answers that wrote the hole's code back as it was
    twins: int = 0  # of `mutants`, those that made an answer at the line's twins too (samples.py)
    dead: int = 0  # answers dropped for leaving statements that can never run (samples.py)
    unbound: int = 0  # answers dropped for reading a name nothing can have bound there (analysis/unbound.py)
    turned: int = 0  # of `mutants`, those that negated a condition an answer wrote (infill/turned.py)

    @property
    def kept(self) -> int:
        """Candidates the samples made (parsed, changed something, new; a twin candidate counts too)."""
        return len(self.mutants)

    def as_dict(self) -> dict[str, object]:
        """The journal's and `--json`'s form (no source text beyond the hole's label)."""
        return {"path": self.hole.path, "hole": self.hole.label, "kind": self.hole.kind, "dialect": self.dialect,
                "drawn": self.drawn, "answered": self.answered, "kept": self.kept, "tokens": self.tokens,
                "seconds": round(self.seconds, 2), "saturated": self.saturated, "unchanged": self.unchanged,
                "twins": self.twins, "dead": self.dead, "unbound": self.unbound, "turned": self.turned,
                "error": self.error}


@dataclass(frozen=True)
class InfillOptions:
    """How each hole is sampled."""

    samples: int = SAMPLES
    max_tokens: int = MAX_TOKENS
    role: Role = "coder"  # whose model (endpoint, model name) fills the holes
    account: str = INFILL_ACCOUNT
    failure: str | None = None  # a failing test's output for the prompt (prompt.py); off by default
    tests: tuple[tuple[str, str], ...] = ()  # the failing tests' code, (path, code) per file (tests_code.py)
    low: float = 0.2  # the lowest and highest sampling temperature
    high: float = 1.0
    seed: int = 0
    deadline: float | None = None  # time.monotonic() after which no further sample is asked for


def hole_tokens(hole: Hole, base: int = MAX_TOKENS) -> int:
    """The cap of one sample of `hole`: `base` for one line, plus SLOT_TOKENS for a slot's guard, and for a
    replaced hole of several lines three times its own length (a rewrite may add a guard or a loop), at most
    MAX_HOLE_TOKENS; a hole inside a line at most INLINE_TOKENS."""
    if hole.inline:
        return min(base, INLINE_TOKENS)
    if hole.is_slot:
        return min(MAX_HOLE_TOKENS, base + SLOT_TOKENS)
    own = len(" ".join(hole.original.split())) // CHARS_PER_TOKEN
    return base if hole.size == 1 else min(MAX_HOLE_TOKENS, max(base, 3 * own + base // 2))


def _tokens(llm: LLMClient, account: str) -> int:
    usage = llm.usage_by_role().get(account)
    return usage.tokens if usage is not None else 0


async def _ask(llm: LLMClient, hole: Hole, prompt: InfillPrompt, options: InfillOptions, cap: int,
               temperature: float, seed: int) -> str:
    if prompt.dialect == "chat":
        return await llm.text(options.role, prompt.messages, temperature=temperature,
                              max_tokens=cap + CHAT_EXTRA_TOKENS, account=options.account)
    return await llm.complete(options.role, prompt.prompt, max_tokens=cap, temperature=temperature,
                              seed=seed, stop=list(prompt.stop), suffix=prompt.suffix, account=options.account,
                              until=lambda text: fit_done(hole, text))


async def infill_hole(llm: LLMClient, hole: Hole, source: str, spec: FimSpec,
                      options: InfillOptions = InfillOptions(), seen: set[str] | None = None) -> HoleReport:
    """Fill `hole` of `source` (the text of hole.path) with `options.samples` samples; its candidates, best
    (likeliest) first, and what they cost. `seen`: the candidates (syntax trees) other holes of the file
    made, not made again (samples.Sampler)."""
    report = HoleReport(hole, spec.dialect)
    prompt = build_prompt(hole, spec, options.failure, options.tests)
    sampler = Sampler(hole, source, seen if seen is not None else set())
    began, spent = time.monotonic(), _tokens(llm, options.account)
    cap = hole_tokens(hole, options.max_tokens)
    idle = 0  # answers in a row that made nothing new
    plan = sample_plan(options.samples, options.low, options.high, options.seed)
    width = max(1, spec.parallel)
    for start in range(0, len(plan), width):
        if options.deadline is not None and time.monotonic() >= options.deadline:
            break
        if idle >= SATURATED:
            report.saturated = True
            break
        round_ = plan[start : start + width]
        report.drawn += len(round_)
        answers = await asyncio.gather(*(_ask(llm, hole, prompt, options, cap, temperature, seed)
                                         for temperature, seed in round_), return_exceptions=True)
        failures = [answer for answer in answers if isinstance(answer, BaseException)]
        if bug := next((f for f in failures if not isinstance(f, LLMError)), None):
            raise bug  # not the endpoint's doing: no answer of the round hides it
        for answer in answers:
            if not isinstance(answer, BaseException):
                report.answered += 1
                idle = 0 if sampler.add(answer_code(prompt, answer)) is not None else idle + 1
        if failures:  # an unreachable endpoint or a spent budget stops every hole; any other refusal this one
            ending = next((f for f in failures if isinstance(f, (LLMUnavailable, BudgetSpent))), failures[0])
            report.error, report.stopped = str(ending), isinstance(ending, (LLMUnavailable, BudgetSpent))
            break
    report.unchanged, report.twins, report.dead = sampler.unchanged, sampler.twins, sampler.dead
    report.turned, report.unbound = sampler.turned, sampler.unbound
    report.mutants = sampler.mutants
    report.tokens = _tokens(llm, options.account) - spent
    report.seconds = time.monotonic() - began
    return report


class HoleFiller:
    """Fills holes of `sources` one call at a time with `options`: the endpoint's dialect asked once, and per file
    the candidates made so far shared (a candidate another hole of the file made is not made again). Both
    `infill_holes` and the search's fills beside its driver runs (driver/interleave.py) fill through one."""

    def __init__(self, llm: LLMClient, sources: Mapping[str, str], options: InfillOptions) -> None:
        self.llm, self.sources, self.options = llm, sources, options
        self._spec: FimSpec | None = None
        self._seen: dict[str, set[str]] = {}

    async def spec(self) -> FimSpec:
        """The endpoint's dialect (LLMError when the endpoint cannot even be found)."""
        if self._spec is None:
            self._spec = await self.llm.fim_spec(self.options.role)
        return self._spec

    async def asks(self, hole: Hole) -> bool:
        """Whether `hole` is worth a prompt of its own in the endpoint's dialect: a `shown` hole is not in chat,
        whose prompt shows a replaced hole's old text anyway (the line's own hole asks the same)."""
        return hole.path in self.sources and not (hole.kind == "shown" and (await self.spec()).dialect == "chat")

    async def fill(self, hole: Hole, options: InfillOptions | None = None) -> HoleReport:
        """`infill_hole` of `hole` (its file must be in `sources`), with `options` in place of the filler's."""
        return await infill_hole(self.llm, hole, self.sources[hole.path], await self.spec(), options or self.options,
                                 self._seen.setdefault(hole.path, set()))

    def failed(self, holes: Iterator[Hole], exc: LLMError) -> HoleReport | None:
        """The one report of an endpoint that cannot even be found: on the next of `holes`, no candidates."""
        first = next(holes, None)
        return HoleReport(first, "", error=str(exc), stopped=True) if first is not None else None


async def infill_holes(llm: LLMClient, holes: Iterable[Hole], sources: Mapping[str, str],
                       options: InfillOptions = InfillOptions()) -> AsyncIterator[HoleReport]:
    """Fill `holes` in order (holes.suspect_holes ranks them), one report per hole as soon as it is filled;
    ends after a report whose error stops everything, or at `options.deadline`. `sources` maps each hole's
    path to its text (a hole whose file is missing there is skipped)."""
    filler = HoleFiller(llm, sources, options)
    pending = iter(holes)
    try:
        await filler.spec()
    except LLMError as exc:
        if (report := filler.failed(pending, exc)) is not None:
            yield report
        return
    for hole in pending:
        if options.deadline is not None and time.monotonic() >= options.deadline:
            return
        if not await filler.asks(hole):
            continue
        report = await filler.fill(hole)
        yield report
        if report.stopped:
            return


async def infill_candidates(llm: LLMClient, holes: Iterable[Hole], sources: Mapping[str, str],
                            options: InfillOptions = InfillOptions()) -> list[HoleReport]:
    """Every hole's report (`infill_holes` collected)."""
    return [report async for report in infill_holes(llm, holes, sources, options)]
