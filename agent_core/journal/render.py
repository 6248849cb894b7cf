"""Rendering a run's Trace (trace.py) as terminal text or as Markdown.

`render_text` (the `agentls trace` command) and `render_markdown` (the LSP
command `agentls.showTrace`) show one run: the header, a node-by-node timeline
with durations, each model call (role, tokens, trimmed prompt and answer),
tool calls, test reports, gate decisions, reflections, and the final change
set. `render(trace, fmt)` walks the trace once; a format only knows how to write
a heading, a line and a block of verbatim text. Prompts, answers and test
output are trimmed so a trace stays readable; the journal keeps everything.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any, Protocol

from agent_core.journal.trace import NodeBlock, Trace, load_trace

PROMPT_CHARS = 400
ANSWER_CHARS = 400
DIFF_LINES = 80


class Format(Protocol):
    def heading(self, level: int, text: str) -> None: ...

    def line(self, text: str, depth: int = 0) -> None: ...

    def block(self, text: str, depth: int = 0, lang: str = "") -> None: ...

    def result(self) -> str: ...


class TextFormat:
    """Plain terminal text: indented lines, verbatim blocks behind a bar."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def heading(self, level: int, text: str) -> None:
        if level == 1:
            self.lines += [text, "=" * len(text)]
        else:
            self.lines += ["", text, "-" * len(text)]

    def line(self, text: str, depth: int = 0) -> None:
        self.lines.append("  " * depth + text)

    def block(self, text: str, depth: int = 0, lang: str = "") -> None:
        pad = "  " * depth + "| "
        self.lines += [pad + line for line in (text.rstrip("\n").splitlines() or [""])]

    def result(self) -> str:
        return "\n".join(self.lines) + "\n"


class MarkdownFormat:
    """Markdown: headings, bullets, fenced blocks with a fence longer than any backtick run inside."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def heading(self, level: int, text: str) -> None:
        self.lines += ["", "#" * level + " " + text, ""]

    def line(self, text: str, depth: int = 0) -> None:
        self.lines.append("  " * depth + "- " + text)

    def block(self, text: str, depth: int = 0, lang: str = "") -> None:
        longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
        fence = "`" * max(3, longest + 1)
        pad = "  " * (depth + 1)
        self.lines += [pad + fence + lang, *(pad + line for line in text.rstrip("\n").splitlines()), pad + fence]

    def result(self) -> str:
        return "\n".join(self.lines).strip() + "\n"


def render_text(workspace: Path, run_id: str | None = None) -> str:
    """The run's trace for a terminal (latest run when `run_id` is None)."""
    return render(load_trace(workspace, run_id), TextFormat())


def render_markdown(workspace: Path, run_id: str | None = None) -> str:
    """The run's trace as Markdown (what `agentls.showTrace` returns)."""
    return render(load_trace(workspace, run_id), MarkdownFormat())


def trim(text: Any, limit: int) -> str:
    """`text` cut to `limit` characters with a note of how much was left out."""
    text = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False)
    text = text.strip()
    return text if len(text) <= limit else text[:limit].rstrip() + f"\n... ({len(text) - limit} more characters)"


def _seconds(value: Any) -> str:
    return f"{float(value):.2f} s" if isinstance(value, (int, float)) else "unfinished"


def render(trace: Trace, fmt: Format) -> str:
    """The whole trace in `fmt`."""
    _header(trace, fmt)
    fmt.heading(2, "Timeline")
    t0 = trace.summary.started
    for item in trace.items:
        if isinstance(item, NodeBlock):
            fmt.line(f"[+{item.start - t0:6.2f} s] {item.node} ({_seconds(item.duration_s)})")
            for record in item.records:
                _record(record, fmt, 1)
        else:
            _record(item, fmt, 0)
    _ending(trace, fmt)
    return fmt.result()


def _header(trace: Trace, fmt: Format) -> None:
    s = trace.summary
    fmt.heading(1, f"Run {s.run_id}: {s.kind}, {s.status}")
    fmt.line(f"goal: {trim(s.goal, 300) or '-'}")
    hint = (trace.start.get("request") or {}).get("hint")
    if hint:
        fmt.line(f"hint: {trim(hint, 300)}")
    fmt.line(f"started {s.started_text}, took {s.duration_s:.2f} s, {s.iterations} iteration(s)")
    fmt.line(f"tokens: {s.prompt_tokens} prompt + {s.completion_tokens} completion in {s.llm_calls} call(s)")
    settings = trace.start.get("settings") or {}
    if settings:
        fmt.line(f"model: {settings.get('model')} at {settings.get('base_url') or 'the bundled local model'}")
    for r in trace.resumes:
        fmt.line(f"resumed at {time.strftime('%H:%M:%S', time.localtime(r['ts']))} from its last checkpoint")


def _ending(trace: Trace, fmt: Format) -> None:
    end = trace.end
    fmt.heading(2, "Result")
    if not end:
        fmt.line(f"the run has no end record ({trace.summary.status})")
        return
    fmt.line(f"status: {end.get('status')}" + (f": {end.get('error')}" if end.get("error") else ""))
    for role, usage in sorted((end.get("usage_by_role") or {}).items()):
        fmt.line(f"{role}: {usage.get('llm_calls', 0)} call(s), {usage.get('prompt_tokens', 0)} prompt + "
                 f"{usage.get('completion_tokens', 0)} completion tokens", 1)
    diff = trace.summary.path / "changes.diff"
    text = diff.read_text(encoding="utf-8") if diff.is_file() else ""
    if text.strip():
        fmt.line("change set:")
        fmt.block(_head(text, DIFF_LINES), 1, "diff")
    summary = trace.summary.path / "summary.json"
    if summary.is_file():
        try:
            data = json.loads(summary.read_text(encoding="utf-8"))
            line, explanation = data.get("summary"), data.get("explanation")
        except (OSError, json.JSONDecodeError, AttributeError):
            line, explanation = None, None
        if line:
            fmt.line(f"summary: {line}")
        if explanation:
            fmt.line(f"explanation: {explanation}")


def _head(text: str, lines: int) -> str:
    parts = text.splitlines()
    return "\n".join(parts[:lines]) + (f"\n... ({len(parts) - lines} more lines)" if len(parts) > lines else "")


def _record(r: dict[str, Any], fmt: Format, depth: int) -> None:
    handler = _HANDLERS.get(r["type"])
    if handler is not None:
        handler(r, fmt, depth)
    elif r["type"] != "event":
        fields = {k: v for k, v in r.items() if k not in ("ts", "run_id", "type")}
        fmt.line(f"{r['type']}: {trim(fields, 200)}", depth)


def _llm_call(r: dict[str, Any], fmt: Format, depth: int) -> None:
    usage = r.get("usage") or {}
    retries = f", {r['attempts']} attempts" if (r.get("attempts") or 1) > 1 else ""
    fmt.line(f"LLM {r.get('role')} -> {r.get('schema')} ({r.get('mode')}): {usage.get('prompt_tokens', 0)} prompt + "
             f"{usage.get('completion_tokens', 0)} completion tokens, {_seconds(r.get('duration_s'))}{retries}", depth)
    users = [m.get("content") for m in r.get("messages") or [] if m.get("role") in ("user", "prompt")]  # chat, raw
    if users:
        fmt.line("prompt:", depth + 1)
        fmt.block(trim(users[-1], PROMPT_CHARS), depth + 1)
    fmt.line("answer:", depth + 1)
    fmt.block(trim(r.get("answer") or "", ANSWER_CHARS), depth + 1)


def _tool_call(r: dict[str, Any], fmt: Format, depth: int) -> None:
    args = r.get("args") or {}
    mark = "ok" if r.get("ok") else "REFUSED"
    fmt.line(f"tool {r.get('tool')}({args.get('path', '')}) {mark}: {trim(r.get('result') or '', 200)}", depth)


def _test_report(r: dict[str, Any], fmt: Format, depth: int) -> None:
    rep = r.get("report") or {}
    extra = f" limit hit: {rep['limit_hit']}" if rep.get("limit_hit") else ""
    extra = " TIMED OUT" if rep.get("timed_out") else extra
    fmt.line(f"tests: {rep.get('passed', 0)} passed, {rep.get('failed', 0)} failed, {rep.get('errors', 0)} errors "
             f"({_seconds(rep.get('duration_s'))}, {rep.get('backend') or '?'}){extra}", depth)
    for f in (rep.get("failures") or [])[:5]:
        first = (f.get("message") or "").strip().splitlines()
        fmt.line(f"FAILED {f.get('nodeid')}: {first[0] if first else ''}", depth + 1)


def _gate(r: dict[str, Any], fmt: Format, depth: int) -> None:
    violations = r.get("violations") or []
    verdict = "approved" if r.get("approved") else "rejected"
    fmt.line(f"gate: {verdict}, {len(violations)} violation(s)", depth)
    for v in violations[:5]:
        fmt.line(f"{v.get('file')}:{v.get('line')} {v.get('message')}", depth + 1)


def _reflection(r: dict[str, Any], fmt: Format, depth: int) -> None:
    fmt.line(f"reflection [{r.get('category')}, confidence {r.get('confidence')}]: {trim(r.get('hypothesis'), 300)}",
             depth)
    if r.get("change"):
        fmt.line(f"change {r.get('file') or ''}: {trim(r['change'], 200)}", depth + 1)
    if r.get("past") and r["past"] != "(none)":
        fmt.line("similar past failures:", depth + 1)
        fmt.block(trim(r["past"], 500), depth + 1)


def _plan(r: dict[str, Any], fmt: Format, depth: int) -> None:
    plan = r.get("plan") or {}
    label = f"plan ({r.get('source', 'rejected' if r.get('error') else '?')})"
    fmt.line(f"{label}: {trim(plan.get('approach') or '', 200)}", depth)
    for step in plan.get("subtasks") or []:
        fmt.line(f"{step.get('id')}: {trim(step.get('description') or '', 200)}", depth + 1)
    if r.get("error"):
        fmt.line(f"rejected: {r['error']}", depth + 1)


def _instructions(r: dict[str, Any], fmt: Format, depth: int) -> None:
    cut = ", cut to fit" if r.get("truncated") else ""
    fmt.line(f"project instructions: {', '.join(r.get('files') or [])} ({r.get('chars', 0)} characters{cut}) "
             f"in the {', '.join(r.get('roles') or [])} prompts", depth)


def _event(r: dict[str, Any], fmt: Format, depth: int) -> None:
    event = r.get("event") or {}
    if event.get("type") == "message":  # phases are progress noise; messages are worth reading
        fmt.line(f"{event.get('level', 'info')}: {trim(event.get('text') or '', 300)}", depth)


def _change_set(r: dict[str, Any], fmt: Format, depth: int) -> None:
    verified = "verified" if r.get("verified") else "not verified"
    fmt.line(f"change set ({verified}): {', '.join(r.get('files') or []) or 'no files'}", depth)


def _explanation(r: dict[str, Any], fmt: Format, depth: int) -> None:
    problem = f" (the model's answer was not used: {r['problem']})" if r.get("problem") else ""
    fmt.line(f"explanation ({r.get('source', '?')}): {trim(r.get('text') or '', 400)}{problem}", depth)


def _localize(r: dict[str, Any], fmt: Format, depth: int) -> None:
    suspects = r.get("suspects") or []
    fmt.line(f"localized from {r.get('evidence', '?')}: {len(suspects)} suspect(s)"
             + (f" (failed: {r['error']})" if r.get("error") else ""), depth)
    called = set(r.get("called") or [])
    for s in suspects[:5]:
        where = f"{s.get('function') or '<module>'} ({s.get('file')}:{s.get('start_line')}-{s.get('end_line')})"
        lines = ", ".join(str(n) for n in (s.get("lines") or [])[:5])
        mark = ", called by a failing test" if f"{s.get('file')}:{s.get('function')}" in called else ""
        fmt.line(f"{float(s.get('score') or 0):.3f} {where}, lines {lines}{mark}", depth + 1)


def _search(r: dict[str, Any], fmt: Format, depth: int) -> None:
    if r.get("error"):
        fmt.line(f"mutant search failed: {r['error']}", depth)
        return
    found = r.get("found")
    fmt.line(f"mutant search: {r.get('tried', 0)} of {r.get('mutants', 0)} tried, {r.get('passed_failing', 0)} passed "
             f"the failing tests, {r.get('timeouts', 0)} stopped by the time bound"
             + (f", stopped: {r['stopped']}" if r.get("stopped") else ""), depth)
    if found:
        where = f"{found.get('file')}:{found.get('line')}"
        fmt.line(f"candidate for review, {where} {found.get('description')}:", depth + 1)
        after = "\n".join(f"+ {line}" for line in str(found.get("after", "")).split("\n"))
        fmt.block(f"- {found.get('before', '')}\n{after}", depth + 1, "diff")


def _verdict(r: dict[str, Any], fmt: Format, depth: int) -> None:
    got = "no score" if r.get("score") is None else f"score {float(r['score']):.2f}"
    outcome = "accepted" if r.get("accepted") else "another round" if r.get("next") == "code" else "below the threshold"
    fmt.line(f"verifier: {got} (threshold {r.get('threshold')}), {outcome}: {trim(r.get('feedback') or '', 300)}"
             + (f" ({r['note']})" if r.get("note") else ""), depth)
    for item in (r.get("improvements") or [])[:5]:
        fmt.line(f"- {trim(item, 200)}", depth + 1)


_HANDLERS = {
    "llm_call": _llm_call,
    "tool_call": _tool_call,
    "test_report": _test_report,
    "gate": _gate,
    "reflection": _reflection,
    "plan": _plan,
    "instructions": _instructions,
    "event": _event,
    "change_set": _change_set,
    "explanation": _explanation,
    "localize": _localize, "search": _search, "verdict": _verdict,
}
