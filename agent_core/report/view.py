"""A run's Trace (journal/trace.py) turned into what the HTML report shows.

Everything here is plain data for the template (report.html.j2): the header,
the diagram, one timeline row per node execution with its entries (model
calls with every message, tool calls, test reports with their failures,
diffs, gate decisions, reflections, plans, messages), and the verdict.
Nothing is escaped here: the template autoescapes every value it prints.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from agent_core.journal.trace import NodeBlock, Trace
from agent_core.report.coverage import CoverageView, coverage_view
from agent_core.report.diagram import Diagram, build_diagram


@dataclass
class Entry:
    """One journal record as the report shows it: `kind` picks the template's macro."""

    kind: str
    record: dict[str, Any]
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class Row:
    """One node execution on the timeline."""

    index: int
    node: str
    offset_s: float
    duration_s: float | None
    prompt_tokens: int
    completion_tokens: int
    entries: list[Entry]
    bar_left: float = 0.0  # percent of the run's length
    bar_width: float = 0.0


@dataclass
class ReportView:
    trace: Trace
    diagram: Diagram
    rows: list[Row]
    loose: list[Entry]  # records written outside any node (run-level events, the final test run)
    final_diff: list[tuple[str, str]]
    final_tests: dict[str, Any] | None
    outcome: dict[str, Any]  # summary.json, {} when missing
    coverage_links: list[tuple[str, str]]  # (label, relative href)
    coverage: CoverageView | None  # gen-tests: the target's lines before and after
    generated: str


def diff_lines(text: str) -> list[tuple[str, str]]:
    """A unified diff as (css class, line) pairs."""
    out = []
    for line in text.splitlines():
        if line.startswith(("+++", "---")):
            cls = "file"
        elif line.startswith("@@"):
            cls = "hunk"
        elif line.startswith("+"):
            cls = "add"
        elif line.startswith("-"):
            cls = "del"
        else:
            cls = "ctx"
        out.append((cls, line))
    return out


def entry(record: dict[str, Any]) -> Entry | None:
    """The report's entry for one record; None for records the report leaves out (progress phases)."""
    kind = record.get("type", "?")
    if kind == "llm_call":
        usage = record.get("usage") or {}
        messages = [(str(m.get("role", "?")), _text(m.get("content"))) for m in record.get("messages") or []
                    if isinstance(m, dict)]
        return Entry("llm", record, {"messages": messages, "answer": _text(record.get("answer")),
                                     "prompt_tokens": usage.get("prompt_tokens", 0),
                                     "completion_tokens": usage.get("completion_tokens", 0)})
    if kind in ("change_set", "candidate"):  # the run's change set; one sampled coder candidate's diff
        return Entry("diff" if kind == "change_set" else "candidate", record,
                     {"lines": diff_lines(str(record.get("diff") or ""))})
    if kind == "test_report":
        return Entry("tests", record, {"report": record.get("report") or {}})
    if kind == "event":
        event = record.get("event") or {}
        if event.get("type") != "message":
            return None
        return Entry("message", record, {"level": event.get("level", "info"), "text": _text(event.get("text"))})
    if kind == "search" and (record.get("found") or {}):
        found = record["found"]
        after = "\n".join(f"+ {line}" for line in str(found.get("after", "")).split("\n"))
        return Entry("search", record, {"lines": diff_lines(f"- {found.get('before', '')}\n{after}")})
    if kind == "coverage":
        return Entry("coverage", record)
    if kind in ("tool_call", "gate", "reflection", "plan", "explanation", "localize", "search"):
        return Entry(kind, record)
    return Entry("other", record, {"json": _text({k: v for k, v in record.items() if k not in ("ts", "run_id")})})


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2)


def _row(index: int, block: NodeBlock, t0: float) -> Row:
    entries = [e for e in map(entry, block.records) if e is not None]
    calls = [e.data for e in entries if e.kind == "llm"]
    return Row(index, block.node, round(block.start - t0, 3), block.duration_s,
               sum(int(c["prompt_tokens"] or 0) for c in calls), sum(int(c["completion_tokens"] or 0) for c in calls),
               entries)


def _bars(rows: list[Row], total: float) -> None:
    total = max(total, max((r.offset_s + (r.duration_s or 0) for r in rows), default=0.0), 1e-6)
    for r in rows:
        r.bar_left = round(100 * r.offset_s / total, 2)
        r.bar_width = round(max(100 * (r.duration_s or 0) / total, 0.4), 2)


def build_view(trace: Trace, coverage_links: list[tuple[str, str]] | None = None) -> ReportView:
    """The report's data for one run's trace."""
    t0 = trace.summary.started
    blocks = [item for item in trace.items if isinstance(item, NodeBlock)]
    rows = [_row(i + 1, block, t0) for i, block in enumerate(blocks)]
    _bars(rows, trace.summary.duration_s)
    loose = [e for e in (entry(item) for item in trace.items if not isinstance(item, NodeBlock)) if e is not None]
    diff_file = trace.summary.path / "changes.diff"
    final_diff = diff_lines(diff_file.read_text(encoding="utf-8")) if diff_file.is_file() else []
    reports = [r for b in blocks for r in b.records if r.get("type") == "test_report"]
    reports += [r for r in trace.items if isinstance(r, dict) and r.get("type") == "test_report"]
    reports.sort(key=lambda r: r.get("ts", 0))
    return ReportView(
        trace=trace, diagram=build_diagram([(b.node, float(b.duration_s or 0)) for b in blocks]), rows=rows,
        loose=loose, final_diff=final_diff, final_tests=(reports[-1].get("report") if reports else None),
        outcome=_outcome(trace), coverage_links=coverage_links or [],
        coverage=coverage_view([*(r for b in blocks for r in b.records),
                                *(r for r in trace.items if isinstance(r, dict))]),
        generated=time.strftime("%Y-%m-%d %H:%M:%S"),
    )


def _outcome(trace: Trace) -> dict[str, Any]:
    path = trace.summary.path / "summary.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}
