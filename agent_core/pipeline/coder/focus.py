"""Focused coder context: the suspicious functions whole, the rest of their file as an outline.

The coder sees, for the top suspects (coder/suspects.py), each function
whole with its suspicious lines marked `# <- suspicious` (the answer parser
strips the mark from whatever the model copies back), the rest of that file
as an outline of signatures (tree-sitter), then the failing tests as usual.
It answers with the function rewritten; `retarget_to_focus` turns that answer
into an exact replacement of the function's own lines, so a method name used
twice in the file, or a 5,000-line module, is no problem: the prompt's size
depends on the function, not on the file.

A file of at most WHOLE_FILE_LINES lines is still shown whole (with the marks):
the helpers, constants and callers around the function are then cheap to show,
and the prompt for such a project stays the one the corpus figures in
docs/benchmarks.md were measured with. (Not re-measured with the model in this
change: no model may run on the build machine; bench/fix_rate.py is how to.)
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass

from agent_core.agents.coder.prompt import SUSPICIOUS_MARK
from agent_core.agents.coder.schema import CoderOutput, Edit
from agent_core.analysis import pysyntax
from agent_core.analysis.outline import partial_outline
from agent_core.analysis.symbols import analyse, find_symbol
from agent_core.pipeline.state import SuspectNote
from agent_core.workspace.shadow import ShadowWorkspace

WHOLE_FILE_LINES = 300  # files up to this size are shown whole (see the module docstring)
FOCUS_FUNCTIONS = 2  # suspect functions shown whole
FUNCTION_CHARS = 6000  # of one shown function (a longer one is cut, and said so)
OUTLINE_CHARS = 1500
_WORD = re.compile(r"[A-Za-z_]\w*")
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass
class Target:
    """A function shown whole on its own: where it is, so its rewrite goes back there."""

    file: str
    function: str  # qualified name
    start_line: int  # 1-based, inclusive (decorators included)
    end_line: int

    @property
    def name(self) -> str:
        return self.function.rsplit(".", 1)[-1]


def mark_lines(lines: list[str], first: int, marked: set[int]) -> list[str]:
    """`lines` (the first being 1-based line `first`) with each line in `marked` ending in the mark."""
    return [f"{line}  {SUSPICIOUS_MARK}" if first + i in marked and line.strip() else line
            for i, line in enumerate(lines)]


def pick(suspects: list[SuspectNote]) -> list[SuspectNote]:
    """The suspects to show: the best FOCUS_FUNCTIONS distinct functions (module-level ones skipped)."""
    chosen: list[SuspectNote] = []
    for s in suspects:
        if s.get("function") and all((c["file"], c["function"]) != (s["file"], s["function"]) for c in chosen):
            chosen.append(s)
        if len(chosen) == FOCUS_FUNCTIONS:
            break
    return chosen


def _whole(rel: str, text: str, marked: set[int]) -> str:
    body = "\n".join(mark_lines(text.split("\n"), 1, marked))
    note = f' (the suspicious lines end in "{SUSPICIOUS_MARK}")' if marked else ""
    return f"### {rel}{note}\n```python\n{body}\n```"


def _located(text: str, chosen: list[SuspectNote]) -> list[SuspectNote]:
    """The suspects with their lines moved to where their function is now (an earlier edit may have moved it)."""
    symbols = analyse(text).symbols
    out = []
    for s in chosen:
        symbol = find_symbol(symbols, s["function"])
        if symbol is None:
            continue
        delta = symbol.start_line - s["start_line"]
        moved = s.copy()
        moved["start_line"], moved["end_line"] = symbol.start_line, symbol.end_line
        moved["lines"] = [n + delta for n in s.get("lines") or []]
        out.append(moved)
    return out


def _focused(rel: str, text: str, chosen: list[SuspectNote]) -> tuple[str, list[Target]]:
    chosen = _located(text, chosen)
    if not chosen:
        return "", []
    lines = text.split("\n")
    parts, targets, near = [], [], set()
    for s in chosen:
        near |= set(_WORD.findall("\n".join(lines[s["start_line"] - 1:s["end_line"]])))
    outline = partial_outline(text, {s["function"] for s in chosen}, near, OUTLINE_CHARS)
    parts.append(f"### {rel} (outline: the other definitions of this {len(lines)}-line file, bodies not shown)\n"
                 f"```python\n{outline}\n```")
    for s in chosen:
        first, last = s["start_line"], s["end_line"]
        body = "\n".join(mark_lines(lines[first - 1:last], first, set(s.get("lines") or [])))
        cut = "" if len(body) <= FUNCTION_CHARS else f"\n# ... (cut: lines {first}-{last} in all)"
        parts.append(f"### {rel} (lines {first}-{last}: {s['function']}, the suspicious lines end in "
                     f"\"{SUSPICIOUS_MARK}\"; rewrite it whole)\n```python\n{textwrap.dedent(body[:FUNCTION_CHARS])}"
                     f"{cut}\n```")
        targets.append(Target(rel, s["function"], first, last))
    return "\n\n".join(parts), targets


def render_suspects(shadow: ShadowWorkspace, suspects: list[SuspectNote]) -> tuple[str, list[str], list[Target]]:
    """(prompt text, files shown, targets) for the chosen suspects' files; ("", [], []) with no suspect."""
    chosen = pick(suspects)
    blocks, files, targets = [], [], []
    for rel in dict.fromkeys(s["file"] for s in chosen):
        text = shadow.readable(rel)
        if text is None:
            continue
        mine = [s for s in chosen if s["file"] == rel]
        files.append(rel)
        if text.count("\n") < WHOLE_FILE_LINES:
            blocks.append(_whole(rel, text, {n for s in suspects if s["file"] == rel for n in s.get("lines") or []}))
            continue
        block, found = _focused(rel, text, mine)
        if not block:  # none of its suspects is still there: the file is shown the usual way
            files.remove(rel)
            continue
        blocks.append(block)
        targets.extend(found)
    return "\n\n".join(blocks), files, targets


def target_code(shadow: ShadowWorkspace, targets: list[Target]) -> str:
    """The targets' own lines as the prompt shows them (each cut at FUNCTION_CHARS); "" with none."""
    parts = []
    for t in targets:
        lines = (shadow.readable(t.file) or "").split("\n")
        parts.append("\n".join(lines[t.start_line - 1:t.end_line])[:FUNCTION_CHARS])
    return "\n\n".join(p for p in parts if p)


def _pieces(source: str) -> list[tuple[ast.stmt, str]] | None:
    try:
        tree = pysyntax.parse(source)
    except SyntaxError:
        return None
    lines = source.splitlines()
    out = []
    for node in tree.body:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
        out.append((node, "\n".join(lines[first:node.end_lineno])))
    return out


def _reindented(piece: str, like: str) -> str:
    indent = like[: len(like) - len(like.lstrip())]
    return "\n".join(indent + line if line.strip() else "" for line in textwrap.dedent(piece).splitlines())


def _own_lines(shadow: ShadowWorkspace, target: Target, keep_decorators: bool) -> str | None:
    lines = (shadow.readable(target.file) or "").split("\n")
    own = lines[target.start_line - 1:target.end_line]
    if keep_decorators:  # the answer left the decorators out: they stay
        while own and own[0].lstrip().startswith("@"):
            own = own[1:]
    return "\n".join(own) if own else None


def _unwrapped(pieces: list[tuple[ast.stmt, str]], targets: list[Target]) -> list[tuple[ast.stmt, str]]:
    """A class written around nothing but target methods (`class C:` + the rewritten `def m`) as those methods.

    Spliced as a class it would drop every member the model was not shown.
    """
    out: list[tuple[ast.stmt, str]] = []
    for node, source in pieces:
        methods = {t.name for t in targets if t.function == f"{getattr(node, 'name', '')}.{t.name}"}
        body = [
            n for n in getattr(node, "body", []) if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))
        ]
        if (
            isinstance(node, ast.ClassDef)
            and methods
            and body
            and all(isinstance(n, _DEFS) and n.name in methods for n in body)
        ):
            lines = source.splitlines()
            header = next(i for i, line in enumerate(lines) if line.lstrip().startswith("class "))
            inner = _pieces(textwrap.dedent("\n".join(lines[header + 1 :]))) or []
            out.extend((n, src) for n, src in inner if isinstance(n, _DEFS))
        else:
            out.append((node, source))
    return out


def _split(shadow: ShadowWorkspace, edit: Edit, targets: list[Target]) -> list[Edit]:
    pieces = _pieces(textwrap.dedent(edit.replace.strip("\n")))
    if pieces is None:
        return [edit]
    out, rest = [], []
    for node, source in _unwrapped(pieces, targets):
        target = next((t for t in targets if isinstance(node, _DEFS) and node.name == t.name), None)
        own = _own_lines(shadow, target, not getattr(node, "decorator_list", [])) if target else None
        if target is None or own is None:
            rest.append(source)
            continue
        out.append(Edit(path=edit.path, search=own, replace=_reindented(source, own)))
    if rest:
        out.append(edit.model_copy(update={"replace": "\n\n".join(rest) + "\n"}))
    return out


def retarget_to_focus(shadow: ShadowWorkspace, output: CoderOutput, targets: list[Target]) -> CoderOutput:
    """The answer with each rewrite of a target function made an exact replacement of that function's lines.

    A whole-definition answer for a file with targets is split into its
    top-level pieces; a definition named like a target replaces exactly the
    target's lines (re-indented to them); the other pieces (an import, a new
    helper) stay one edit for the usual splice.
    """
    if not targets:
        return output
    edits: list[Edit] = []
    for edit in output.edits:
        mine = [t for t in targets if t.file == edit.path]
        edits.extend(_split(shadow, edit, mine) if mine and not edit.search else [edit])
    return CoderOutput(edits=edits)
