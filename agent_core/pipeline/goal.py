"""The run's goal text: the user's words, else "fix the failing tests", plus what the editor pointed at.

The user's hint (`agentls fix --hint`, the editors' "Plan and fix with a hint...") rides with the
pointer, so both the planner and the one-step textual plan the coder reads carry it.

The pointer (file, symbol, a quoted selection, the diagnostics the action was
asked on) goes into the goal the planner reads and into the one-step textual
plan the coder reads, so a quick fix started from a diagnostic or a selected
line knows where the user was looking.
"""

from __future__ import annotations

import textwrap

from agent_core.models import RunRequest, Span
from agent_core.workspace.shadow import ShadowWorkspace

DEFAULT_GOAL = "Fix the failing tests."
SELECTION_LIMIT = 400  # characters of a selection quoted in the goal
HINT_LIMIT = 500  # characters of the user's hint: a steer, not a second goal


def default_goal(request: RunRequest, target_text: str | None = None) -> str:
    """The user's goal (else DEFAULT_GOAL) followed by the editor's pointer."""
    goal = (request.goal or "").strip() or DEFAULT_GOAL
    pointer = editor_pointer(request, target_text)
    return goal + (" " if pointer.startswith("(") else "\n") + pointer if pointer else goal


def editor_pointer(request: RunRequest, target_text: str | None = None) -> str:
    """'(file: F, symbol: S)', the selection in `target_text` quoted, the diagnostics; "" when none."""
    parts = []
    if request.target_file:
        symbol = f", symbol: {request.target_symbol}" if request.target_symbol else ""
        parts.append(f"(file: {request.target_file}{symbol})")
        selected = selected_text(target_text, request.target_span) if target_text and request.target_span else ""
        if selected:
            parts.append("Selected there:\n" + "\n".join(f"    {line}" for line in selected.splitlines()))
    if request.diagnostics:
        parts.append("Diagnostics:\n" + "\n".join(f"- {d}" for d in request.diagnostics[:10]))
    hint = " ".join((request.hint or "").split())[:HINT_LIMIT]
    if hint:
        parts.append(f"The user's hint: {hint}")
    return "\n".join(parts)


def run_goal(request: RunRequest, shadow: ShadowWorkspace) -> str:
    """default_goal with the target file read from the run's shadow (unsaved buffers included)."""
    return default_goal(request, target_text(request, shadow))


def target_text(request: RunRequest, shadow: ShadowWorkspace) -> str | None:
    """The target file's text in the shadow (the unsaved buffer if one was sent), or None."""
    if not request.target_file:
        return None
    try:
        return shadow.readable(request.target_file)
    except ValueError:  # outside the workspace, or not text: named, not read
        return None


def selected_text(text: str, span: Span, limit: int = SELECTION_LIMIT) -> str:
    """The text `span` covers, dedented; "" for an empty, reversed or blank selection."""
    lines = text.splitlines()
    start, end = span.start, span.end
    if (end.line, end.character) <= (start.line, start.character) or start.line >= len(lines):
        return ""
    picked = lines[start.line:end.line + 1]
    if end.line < len(lines):
        picked[-1] = picked[-1][:end.character]
    if picked[0][:start.character].strip():  # from inside the line; else from its indentation: the whole line
        picked[0] = picked[0][start.character:]
    body = textwrap.dedent("\n".join(picked)).strip("\n")
    if not body.strip():
        return ""
    return body if len(body) <= limit else body[:limit].rstrip() + " ..."
