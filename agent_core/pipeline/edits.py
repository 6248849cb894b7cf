"""Applying the coder's search/replace edits, forgiving only about whitespace.

Small models copy code with the wrong indentation or stray trailing spaces.
When a search block has no exact match, the block is looked up line by line
ignoring surrounding whitespace; if exactly one place matches, the file's own
text of those lines becomes the search block and the replacement is shifted
by the same indentation difference. The file tool itself still requires an
exact match, so every applied edit is an exact, journalled replacement.
"""

from __future__ import annotations

import ast
import re
import textwrap

from agent_core.agents.coder.schema import CoderOutput, Edit
from agent_core.pipeline.context import is_test_file
from agent_core.workspace.tools import FileTools, ToolResult

_FENCE = re.compile(r"^\s*```[\w+-]*\s*$")


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


def strip_fences(text: str) -> str:
    """Drop Markdown fence lines that small models wrap code in (```python ... ```)."""
    lines = text.splitlines(keepends=True)
    while lines and _FENCE.match(lines[0]):
        lines.pop(0)
    while lines and _FENCE.match(lines[-1]):
        lines.pop()
    return "".join(lines)


def _refusal(edit: Edit, protect_tests: bool) -> str | None:
    """Why an edit is not applied at all, or None."""
    if protect_tests and is_test_file(edit.path):
        return "the tests are the specification here: change the code under test, not the test file"
    if not edit.search and edit.path.endswith(".py"):
        try:
            ast.parse(textwrap.dedent(edit.replace))
        except SyntaxError as exc:
            return f"the new file is not valid Python (line {exc.lineno}: {exc.msg}); send a small search/replace edit"
    return None


def _definitions(tree: ast.Module) -> dict[str, list[ast.AST]]:
    """Functions and classes by name, top level and one level down (methods)."""
    found: dict[str, list[ast.AST]] = {}
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    for node in tree.body:
        if isinstance(node, kinds):
            found.setdefault(node.name, []).append(node)
            if isinstance(node, ast.ClassDef):
                for inner in node.body:
                    if isinstance(inner, kinds):
                        found.setdefault(inner.name, []).append(inner)
    return found


def splice_definition(text: str, replacement: str) -> str | None:
    """`text` with the one function/class that `replacement` redefines swapped for it, or None.

    Small models asked for a fix often answer with the whole corrected
    function and no search block; that is a precise edit once it is put back
    where the function was, at the function's own indentation.
    """
    try:
        new = ast.parse(textwrap.dedent(replacement.strip("\n")))
        old = ast.parse(text)
    except SyntaxError:
        return None
    if len(new.body) != 1 or not isinstance(new.body[0], (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return None
    targets = _definitions(old).get(new.body[0].name, [])
    if len(targets) != 1:
        return None
    node = targets[0]
    start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
    lines = text.splitlines(keepends=True)
    indent = _indent(lines[start])
    body = [indent + line if line.strip() else line for line in textwrap.dedent(replacement.strip("\n")).splitlines()]
    return "".join(lines[:start]) + "\n".join(body) + "\n" + "".join(lines[node.end_lineno:])


def _whole_file(tools: FileTools, edit: Edit) -> ToolResult:
    """An edit without a search block: a new file, a redefined function, or a real rewrite."""
    current = tools.read_file(edit.path)
    if not current.ok:  # a new file
        return tools.write_file(edit.path, edit.replace)
    spliced = splice_definition(current.result, edit.replace) if edit.path.endswith(".py") else None
    if spliced is not None:
        return tools.write_file(edit.path, spliced)
    if edit.path.endswith(".py"):
        try:
            new_names = _definitions(ast.parse(textwrap.dedent(edit.replace)))
            lost = set(_definitions(ast.parse(current.result))) - set(new_names)
        except SyntaxError:
            lost = set()
        if lost:
            return ToolResult(ok=False, result=(
                f"an empty search would replace the whole file and drop {', '.join(sorted(lost))}; "
                "copy the lines you change into search"))
    return tools.write_file(edit.path, edit.replace)


def apply_edit(tools: FileTools, edit: Edit, protect_tests: bool = False) -> ToolResult:
    """One edit: a whole-file write, an exact replacement, or a whitespace-forgiving one."""
    edit = edit.model_copy(update={"search": strip_fences(edit.search), "replace": strip_fences(edit.replace)})
    refusal = _refusal(edit, protect_tests)
    if refusal:
        return ToolResult(ok=False, result=refusal)
    if not edit.search:
        return _whole_file(tools, edit)
    result = tools.replace_in_file(edit.path, edit.search, edit.replace)
    if result.ok or "not found" not in result.result:
        return result
    current = tools.read_file(edit.path)
    loose = loose_match(current.result, edit.search, edit.replace) if current.ok else None
    return result if loose is None else tools.replace_in_file(edit.path, *loose)


def apply_edits(tools: FileTools, output: CoderOutput, protect_tests: bool = False) -> tuple[int, list[str]]:
    """Apply the coder's edits in order; return (applied, error messages for the next prompt).

    With `protect_tests` (a plain "make the failing tests pass" run) edits to
    test files are refused: passing tests must come from fixing the code.
    """
    applied, errors = 0, []
    for edit in output.edits:
        result = apply_edit(tools, edit, protect_tests)
        if result.ok:
            applied += 1
        else:
            errors.append(f"- {edit.path}: {result.result}")
    if not output.edits:
        errors.append("- the answer contained no edits")
    return applied, errors
