"""Applying the coder's search/replace edits, forgiving only about whitespace.

Small models copy code with the wrong indentation or stray trailing spaces.
When a search block has no exact match, the block is looked up line by line
ignoring surrounding whitespace; if exactly one place matches, the file's own
text of those lines becomes the search block and the replacement is shifted
by the same indentation difference. The file tool itself still requires an
exact match, so every applied edit is an exact, journalled replacement.
"""

from __future__ import annotations

from agent_core.agents.coder.schema import CoderOutput, Edit
from agent_core.workspace.tools import FileTools, ToolResult


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def loose_match(text: str, search: str, replace: str) -> tuple[str, str] | None:
    """(exact file segment, re-indented replacement) for a unique whitespace-insensitive match."""
    wanted = [line.strip() for line in search.strip("\n").splitlines()]
    if not wanted or not any(wanted):
        return None
    lines = text.splitlines(keepends=True)
    hits = [i for i in range(len(lines) - len(wanted) + 1)
            if [line.strip() for line in lines[i:i + len(wanted)]] == wanted]
    if len(hits) != 1:
        return None
    segment_lines = lines[hits[0]:hits[0] + len(wanted)]
    first_search = next(line for line in search.strip("\n").splitlines() if line.strip())
    first_file = next(line for line in segment_lines if line.strip())
    delta = len(_indent(first_file)) - len(_indent(first_search))
    unit = "\t" if _indent(first_file).startswith("\t") else " "
    shifted = []
    for line in replace.strip("\n").splitlines():
        lead = len(_indent(line))
        shifted.append(unit * max(0, lead + delta) + line.lstrip() if line.strip() else "")
    segment = "".join(segment_lines)
    ending = "\n" if segment.endswith("\n") else ""
    return segment, "\n".join(shifted) + ending


def apply_edit(tools: FileTools, edit: Edit) -> ToolResult:
    """One edit: a whole-file write, an exact replacement, or a whitespace-forgiving one."""
    if not edit.search:
        return tools.write_file(edit.path, edit.replace)
    result = tools.replace_in_file(edit.path, edit.search, edit.replace)
    if result.ok or "not found" not in result.result:
        return result
    current = tools.read_file(edit.path)
    loose = loose_match(current.result, edit.search, edit.replace) if current.ok else None
    return result if loose is None else tools.replace_in_file(edit.path, *loose)


def apply_edits(tools: FileTools, output: CoderOutput) -> tuple[int, list[str]]:
    """Apply the coder's edits in order; return (applied, error messages for the next prompt)."""
    applied, errors = 0, []
    for edit in output.edits:
        result = apply_edit(tools, edit)
        if result.ok:
            applied += 1
        else:
            errors.append(f"- {edit.path}: {result.result}")
    if not output.edits:
        errors.append("- the answer contained no edits")
    return applied, errors
