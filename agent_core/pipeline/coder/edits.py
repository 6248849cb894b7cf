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
from collections.abc import Sequence
from pathlib import Path

from agent_core.agents.coder.schema import CoderOutput, Edit
from agent_core.analysis import pysyntax
from agent_core.pipeline.coder.splice import splice_definition
from agent_core.workspace.testfiles import is_protected, is_test_config, is_test_file
from agent_core.workspace.tools import FileTools, ToolResult

_FENCE = re.compile(r"^\s*```[\w+-]*\s*$")
UNCHANGED = "- the answer gave the code back unchanged; change the lines that are wrong"


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


def protected_refusal(path: str) -> str:
    """Why a change to a test file or to the test configuration is refused in a fix run."""
    if is_test_config(path):
        return ("this file configures how the tests run and is not the change's to make: "
                "fix the code under test so the project's own tests pass")
    return "the tests are the specification here: change the code under test, not the test file"


def _workspace_relative(tools: FileTools, path: str) -> str:
    """`path` as the workspace-relative path it names (absolute and ./ forms too), or as given."""
    try:
        return tools.shadow.relative(path)
    except ValueError:
        return path  # refused later by the file tools, with their own message


def _refusal(tools: FileTools, edit: Edit, protect_tests: bool) -> str | None:
    """Why an edit is not applied at all, or None."""
    rel = _workspace_relative(tools, edit.path)
    if protect_tests and (is_protected(rel) or rel in tools.shadow.verification):  # by name, or pytest collects it
        return protected_refusal(rel)
    if not edit.search and edit.path.endswith(".py"):
        try:
            pysyntax.parse(textwrap.dedent(edit.replace))
        except SyntaxError as exc:
            return (f"the code is not valid Python (line {exc.lineno}: {exc.msg}); "
                    "give each function you change complete")
    return None


def _definitions(tree: ast.Module) -> set[str]:
    """Names of the functions and classes, top level and one level down (methods)."""
    found = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
            if isinstance(node, ast.ClassDef):
                found.update(n.name for n in node.body
                             if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))
    return found


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
            new_names = _definitions(pysyntax.parse(textwrap.dedent(edit.replace)))
            lost = set(_definitions(pysyntax.parse(current.result))) - set(new_names)
        except SyntaxError:
            lost = set()
        if lost:
            return ToolResult(ok=False, result=(
                f"this would replace the whole file and drop {', '.join(sorted(lost))}; "
                "give only the functions you change, each complete"))
    return tools.write_file(edit.path, edit.replace)


def _breaks_syntax(path: str, before: str, after: str) -> str | None:
    """Why `after` is worse Python than `before` (a new syntax error), or None."""
    if not path.endswith(".py"):
        return None
    try:
        compile(after, path, "exec", dont_inherit=True)  # compile, not just parse: `return` outside a def
    except (SyntaxError, ValueError) as exc:
        try:
            compile(before, path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            return None  # it did not parse before either: not this edit's fault
        return f"line {exc.lineno}: {exc.msg}" if isinstance(exc, SyntaxError) else str(exc)
    return None


def _search_replace(tools: FileTools, edit: Edit, text: str) -> ToolResult:
    """The exact match if it keeps the file valid Python, else the whitespace-forgiving one."""
    tried: list[str] = []
    if text.count(edit.search) == 1:
        broken = _breaks_syntax(edit.path, text, text.replace(edit.search, edit.replace, 1))
        if broken is None:
            return tools.replace_in_file(edit.path, edit.search, edit.replace)
        tried.append(broken)
    loose = loose_match(text, edit.search, edit.replace)
    if loose is not None:
        broken = _breaks_syntax(edit.path, text, text.replace(loose[0], loose[1], 1))
        if broken is None:
            return tools.replace_in_file(edit.path, *loose)
        tried.append(broken)
    if tried:
        return ToolResult(ok=False, result=(
            f"the edit would leave {edit.path} with a syntax error ({tried[-1]}); nothing was changed"))
    return tools.replace_in_file(edit.path, edit.search, edit.replace)  # fails with the tool's own message


def apply_edit(tools: FileTools, edit: Edit, protect_tests: bool = False) -> ToolResult:
    """One edit: a redefined function spliced in, a whole-file write, an exact or a whitespace-forgiving replacement.

    An edit whose replacement is a complete definition of a function or class
    that exists in the file replaces that definition, whatever its search
    block says; a search/replace that would turn valid Python into a syntax
    error is refused and changes nothing.
    """
    edit = edit.model_copy(update={"search": strip_fences(edit.search), "replace": strip_fences(edit.replace)})
    refusal = _refusal(tools, edit, protect_tests)
    if refusal:
        refused = ToolResult(ok=False, result=refusal)
        if tools.on_call is not None:
            tools.on_call("edit", {"path": edit.path}, refused)  # journalled like a refused file tool call
        return refused
    current = tools.read_file(edit.path)
    spliced = splice_definition(current.result, edit.replace) if current.ok and edit.path.endswith(".py") else None
    if spliced == (current.result if current.ok else None):
        spliced = None
    if spliced is not None and (not edit.search or _rewrites_unsearched_definition(edit.search, edit.replace)):
        return tools.write_file(edit.path, spliced)  # a whole function, searched by one of its lines (or none)
    if not edit.search:
        return _whole_file(tools, edit)
    if not current.ok:
        return current
    result = _search_replace(tools, edit, current.result)
    return tools.write_file(edit.path, spliced) if not result.ok and spliced is not None else result


def _rewrites_unsearched_definition(search: str, replace: str) -> bool:
    """True when `replace` holds a complete function/class whose `def`/`class` line is not in `search`.

    Then the whole definition is being rewritten (the search block holds only
    the line that changed). With the header in `search` it is an ordinary
    edit (a docstring added under a header, say).
    """
    try:
        names = [n.name for n in pysyntax.parse(textwrap.dedent(replace.strip("\n"))).body
                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    except SyntaxError:
        return False
    return bool(names) and not any(
        re.search(rf"^\s*(async\s+def|def|class)\s+{re.escape(name)}\b", search, re.MULTILINE) for name in names)


def _stray(tools: FileTools, edit: Edit) -> bool:
    """A whole-file edit that would create a new module."""
    return not edit.search and edit.path.endswith(".py") and _inside(tools, edit.path) and \
        tools.shadow.current(edit.path) is None


def stray_refusal(tools: FileTools, edit: Edit, sources: Sequence[str]) -> str | None:
    """Why a new module named like a module of `sources` (`utils.py` at the root beside `src/pkg/utils.py`) is
    refused in a fix run: a small model writes the function it fixed under the bare file name it read. Refused
    before any test run; what it redefines went to its own file already (`retarget`), when that was clear."""
    if not _stray(tools, edit):
        return None
    name = Path(edit.path).name
    twins = [path for path in sources if Path(path).name == name and path != edit.path]
    if not twins:
        return None
    return (f"{edit.path} does not exist: the module is {twins[0]}; change it there (header `{twins[0]}`), "
            "do not create a new file")


def retarget(tools: FileTools, edit: Edit, sources: Sequence[str]) -> Edit:
    """A whole-definition edit headed with a test file, or with a file that does not exist, but redefining only
    what one of `sources` defines goes to that source file.

    A small model copies the header above the code it read, and the test
    file's header is the nearest one when it fixes the code a test calls; or it
    names the module by its bare file name (`utils.py` for `src/pkg/utils.py`).
    """
    if edit.search or not edit.path.endswith(".py") or not (is_test_file(edit.path) or _stray(tools, edit)):
        return edit
    try:
        names = {n for n in _definitions(pysyntax.parse(textwrap.dedent(edit.replace))) if not n.startswith("test")}
    except SyntaxError:
        return edit
    owners = []
    for path in sources:
        try:
            if names and names <= _definitions(pysyntax.parse(tools.shadow.current(path) or "")):
                owners.append(path)
        except SyntaxError:
            continue
    return edit.model_copy(update={"path": owners[0]}) if len(owners) == 1 else edit


def apply_edits(
    tools: FileTools, output: CoderOutput, protect_tests: bool = False, sources: Sequence[str] = (),
) -> tuple[int, list[str]]:
    """Apply the coder's edits in order; return (edits that changed a file, error messages for the next prompt).

    With `protect_tests` (a fix run whose goal does not ask to change the tests)
    edits to test files and to the test configuration (`workspace/testfiles.py`)
    are refused: passing tests must come from fixing the code;
    a function of one of `sources` written under a test file's header goes to
    its own file instead (`retarget`), and a test file handed back as it was
    shown is no edit rather than a refusal. An answer that hands the code back
    unchanged counts as no edit, with a note saying so (a small model does
    that; testing it again would teach nothing).
    """
    applied, unchanged, errors = 0, 0, []
    for edit in output.edits:
        if protect_tests:
            edit = retarget(tools, edit, sources)
            stray = stray_refusal(tools, edit, sources)
            if stray:
                errors.append(f"- {edit.path}: {stray}")
                continue
        before = tools.shadow.current(edit.path) if _inside(tools, edit.path) else None
        if protect_tests and is_test_file(edit.path) and _echoes(before, edit):
            unchanged += 1  # a test file it was shown, handed back as it is: nothing to refuse
            continue
        result = apply_edit(tools, edit, protect_tests)
        if not result.ok:
            errors.append(f"- {edit.path}: {result.result}")
        elif tools.shadow.current(edit.path) == before:
            unchanged += 1
        else:
            applied += 1
    if not output.edits:
        errors.append("- the answer contained no edits")
    elif unchanged and not applied:
        errors.append(UNCHANGED)
    return applied, errors


def _echoes(current: str | None, edit: Edit) -> bool:
    """Whether the edit would leave `current` as it is (a file, or some of its definitions, copied back)."""
    if current is None:
        return False
    search, replace = strip_fences(edit.search), strip_fences(edit.replace)
    if search:
        return search.strip() == replace.strip()
    if replace.strip() == current.strip():
        return True
    return edit.path.endswith(".py") and splice_definition(current, replace) == current


def _inside(tools: FileTools, path: str) -> bool:
    try:
        tools.shadow.resolve(path)
    except ValueError:
        return False
    return True
