"""Literals the code got nearly right: a format string without its `f`, a case test on one of a pair of siblings,
a regular expression's character class that spells out ASCII letters.

- a message whose plain string pieces name variables in braces gets the `f` it lacks, on every piece of
  the implicit concatenation at once;
- like comparisons with a literal written in one case, on neighbouring statements, are made blind to case
  together (one of them alone may pass no test, so the pair is one candidate);
- a regular expression's letter class that spells out ASCII (or a range of Latin letters) takes any word
  character (`\\w`) when a failing test's input holds a letter beyond it. Such a pattern is often a module
  constant another module reads, so no suspicious line points at it: the candidates come from the string
  constants of the suspect modules and of the project modules they import.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Sequence

from agent_core.search.candidate import Edit
from agent_core.search.templates.cases import cased

MAX_CLASSES = 12  # regular-expression candidates per module
MAX_SIBLINGS = 4  # statements of a run of like comparisons changed together
_FIELD = re.compile(r"(?<!\{)\{([A-Za-z_]\w*)((?:\.\w+)*)(?:![rsa])?(?::[^{}]*)?\}(?!\})")
_BRACES = re.compile(r"\{[^{}]*\}")
# a range of letters inside a character class: `A-Z`, `a-z`, `À-Ü` (both ends letters of one kind)
_LETTER_RANGE = re.compile(r"(?<!\\)([^\W\d_])-([^\W\d_])")
_CLASS = re.compile(r"(?<!\\)\[(\^?)((?:\\.|[^\]\\])+)\]")


def _named_fields(body: str, scope: set[str]) -> bool:
    """Whether every `{...}` of a literal's text names a variable of `scope` (an attribute of one allowed), and
    there is at least one."""
    fields = _BRACES.findall(body.replace("{{", "").replace("}}", ""))
    return bool(fields) and all((m := _FIELD.fullmatch(f)) is not None and m.group(1) in scope for f in fields)


def _formatted_later(statement: ast.stmt) -> bool:
    """Whether the statement formats a literal itself (`'{a}'.format(...)`, `'%s' % x`): no `f` is missing."""
    for node in ast.walk(statement):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                "format", "format_map") and isinstance(node.func.value, (ast.Constant, ast.JoinedStr)):
            return True
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant):
            return True
    return False


def missing_f_edits(lines: list[str], statement: ast.stmt, scope: set[str],
                    shown: frozenset[str] = frozenset()) -> tuple[list[Edit], bool]:
    """([(new text of the statement's lines, its last line, description)], whether a failing test's message
    shows one of the pieces' `{name}` unformatted): every plain string piece of the statement whose braces all
    name variables in scope given the `f` it lacks. One candidate for the whole statement, as the pieces of
    one implicit concatenation belong together. Without the message's evidence it is a guess: a template
    such as `'{bar}'` may be meant literally."""
    first, last = statement.lineno, statement.end_lineno or statement.lineno
    text = "\n".join(lines[first - 1 : last])
    if _formatted_later(statement):
        return [], False
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return [], False
    starts = [0]
    for row in text.split("\n"):
        starts.append(starts[-1] + len(row) + 1)
    fixed, seen = [], False
    for tok in tokens:
        if tok.type != tokenize.STRING:
            continue
        prefix = tok.string[: len(tok.string) - len(tok.string.lstrip("rRbBuUfF"))].lower()
        body = tok.string[len(prefix):]
        if "f" in prefix or "b" in prefix or "u" in prefix or not _BRACES.search(body.replace("{{", "")):
            continue
        if not _named_fields(body, scope):
            return [], False  # a piece whose braces name no variable: the message is a template meant literally
        fixed.append(starts[tok.start[0] - 1] + tok.start[1])
        seen = seen or any(field in shown for field in _BRACES.findall(tok.string))
    if not fixed:
        return [], False
    for offset in reversed(fixed):
        text = text[:offset] + "f" + text[offset:]
    plural = "s" if len(fixed) > 1 else ""
    description = f"`f` added to {len(fixed)} string{plural} that name variables in braces"
    return [Edit(statement.lineno, text, last, description)], seen


def _case_test(statement: ast.stmt, lines: list[str]) -> tuple[str, str, int, int] | None:
    """(compared expression's text, case, its start and end column) for `if <expr> == 'LITERAL':` written on
    one line, the literal in one case; else None."""
    if not isinstance(statement, ast.If) or not isinstance(statement.test, ast.Compare):
        return None
    test = statement.test
    if len(test.ops) != 1 or not isinstance(test.ops[0], (ast.Eq, ast.NotEq)) or test.lineno != test.end_lineno:
        return None
    right = test.comparators[0]
    case = cased(right.value) if isinstance(right, ast.Constant) else None
    left = test.left
    if case is None or not isinstance(left, (ast.Name, ast.Attribute, ast.Subscript)):
        return None
    text = lines[test.lineno - 1]
    raw = text.encode("utf-8")
    start = len(raw[: left.col_offset].decode("utf-8", errors="ignore"))
    end = len(raw[: left.end_col_offset].decode("utf-8", errors="ignore"))
    return text[start:end], case, start, end


def sibling_case_edits(lines: list[str], body: list[ast.stmt], statement: ast.stmt) -> list[Edit]:
    """(new text from the statement's line to the last sibling changed, that line, description): `statement`,
    an `if x == 'LITERAL':`, and the like tests on the same `x` among the statements that follow it in its
    block, made blind to case together: with the next one, then with each further one."""
    own = _case_test(statement, lines)
    if own is None or statement not in body:
        return []
    expr, case, _, _ = own
    changed = [statement]
    out: list[Edit] = []
    for sibling in body[body.index(statement) + 1 :]:
        other = _case_test(sibling, lines)
        if other is None or other[0] != expr or other[1] != case:
            continue
        changed.append(sibling)
        first, last = statement.lineno, sibling.lineno
        block = lines[first - 1 : last]
        for stmt in changed:
            _, _, start, end = _case_test(stmt, lines)  # type: ignore[misc]
            row = stmt.lineno - first
            block[row] = f"{block[row][:start]}{expr}.{case}(){block[row][end:]}"
        out.append(Edit(first, "\n".join(block), last, f"`{expr}` compared as {case} case on {len(changed)} lines"))
        if len(changed) > MAX_SIBLINGS:
            break
    return out


def _class_misses(members: str, letters: Sequence[str]) -> bool:
    pattern = f"[{members}]"
    try:
        compiled = re.compile(pattern)
    except re.error:
        return False
    return any(compiled.fullmatch(letter) is None for letter in letters)


def regex_class_edits(tree: ast.Module, lines: list[str], letters: Sequence[str]) -> list[Edit]:
    """(line, new line, description): in a raw string constant of the module (a regular expression), a
    character class made of letter ranges (`[0-9_A-ZÀ-Ü]`) that misses one of `letters` (the failing tests'
    letters beyond ASCII: cases.FailingInputs) gets `\\w` for its letter ranges. At most
    MAX_CLASSES, in the module's order."""
    if not letters:
        return []
    out: list[Edit] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str) and node.lineno == node.end_lineno):
            continue
        text = lines[node.lineno - 1]
        raw = text.encode("utf-8")
        start = len(raw[: node.col_offset].decode("utf-8", errors="ignore"))
        end = len(raw[: node.end_col_offset].decode("utf-8", errors="ignore"))
        literal = text[start:end]
        if "r" not in literal[: len(literal) - len(literal.lstrip("rRbBuU"))].lower():
            continue  # a pattern is written raw: in another literal a backslash means something else
        for match in _CLASS.finditer(literal):
            negated, members = match.group(1), match.group(2)
            if negated or not _LETTER_RANGE.search(members) or "\\w" in members or not _class_misses(members,
                                                                                                    letters):
                continue
            ranges = list(_LETTER_RANGE.finditer(members))
            between = "".join(members[a.end() : b.start()] for a, b in zip(ranges, ranges[1:], strict=False))
            widened = members[: ranges[0].start()] + "\\w" + between + members[ranges[-1].end() :]
            new_literal = literal[: match.start(2)] + widened + literal[match.end(2):]
            out.append(Edit(node.lineno, text[:start] + new_literal + text[end:], node.lineno,
                        f"`[{members}]` takes any word character (`\\w`)"))
    unique = list(dict.fromkeys(out))
    return unique[:MAX_CLASSES]
