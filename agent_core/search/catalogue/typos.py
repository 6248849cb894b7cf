"""Two one-line bug classes that no operator swap reaches, tried with the mix-ups (mix_ups.py):

17. a mistyped number: two neighbouring digits of a numeric literal exchanged (`-237.15` for `-273.15`,
    `3600` for `3060`): a constant typed from memory, where +1/-1 does not reach;
18. a string not normalised: `.strip()` or `.lower()` missing on a value that is then treated as text
    (`username.lower()` for `username.strip().lower()`; `x == "yes"` for `x.lower() == "yes"`; `for ch in
    text if ch in "aeiou"` for `for ch in text.lower() ...`): input compared or counted as typed.

The second class needs a sign that the value is text: it is the receiver of a str method, an operand of a
comparison with a string literal, or what a comprehension iterates over when its condition tests membership
in a string literal. Other values get no inserted call (a list has no `.lower()`).
"""

from __future__ import annotations

import ast

from agent_core.search.candidate import Edit
from agent_core.search.linetext import on_line, replace, span

NORMALISERS = ("strip", "lower")
TEXT_METHODS = frozenset({
    "lower", "upper", "casefold", "strip", "lstrip", "rstrip", "split", "rsplit", "splitlines", "startswith",
    "endswith", "replace", "find", "rfind", "count", "isdigit", "isalpha", "isalnum", "isspace", "title",
    "capitalize", "encode", "partition", "rpartition", "removeprefix", "removesuffix", "zfill", "center",
})
MAX_TRANSPOSITIONS = 8


def _digits_exchanged(text: str, node: ast.AST, line: int) -> list[Edit]:
    """Neighbouring distinct digits of a decimal int or float literal exchanged (not a leading digit with a
    zero: `07` is no number)."""
    if not (isinstance(node, ast.Constant) and type(node.value) in (int, float) and on_line(node, line)):
        return []
    s, e = span(text, node)
    literal = text[s:e]
    if literal[:2].lower() in ("0x", "0o", "0b"):
        return []
    out: list[Edit] = []
    for i in range(len(literal) - 1):
        a, b = literal[i], literal[i + 1]
        if not (a.isdigit() and b.isdigit()) or a == b or (i == 0 and b == "0"):
            continue
        changed = literal[:i] + b + a + literal[i + 2:]
        out.append(Edit(line, replace(text, s, e, changed), line, f"`{literal}` -> `{changed}` (digits exchanged)"))
    return out[:MAX_TRANSPOSITIONS]


def _is_text_literal(node: ast.AST) -> bool:
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))


def _normalisable(node: ast.AST) -> bool:
    return isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)) and not _is_text_literal(node)


def _tests_text_membership(generator: ast.comprehension) -> bool:
    return any(isinstance(c, ast.Compare) and any(_is_text_literal(x) for x in c.comparators)
               for cond in generator.ifs for c in ast.walk(cond))


def _text_values(nodes: list[ast.AST]) -> list[tuple[ast.expr, str]]:
    """The expressions on the line that are used as text (see the module docstring), each with the str method
    called on it ("" if none): adding that same method again would change nothing."""
    found: list[tuple[ast.expr, str]] = []
    for node in nodes:
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in TEXT_METHODS and _normalisable(node.func.value)):
            found.append((node.func.value, node.func.attr))
        elif isinstance(node, ast.Compare) and any(_is_text_literal(c) for c in [node.left, *node.comparators]):
            found += [(c, "") for c in [node.left, *node.comparators] if _normalisable(c)]
        elif isinstance(node, (ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)):
            found += [(g.iter, "") for g in node.generators if _normalisable(g.iter) and _tests_text_membership(g)]
    return found


def _normaliser_added(text: str, nodes: list[ast.AST], line: int) -> list[Edit]:
    out: list[Edit] = []
    for value, called in _text_values(nodes):
        if not on_line(value, line):
            continue
        s, e = span(text, value)
        original = text[s:e]
        for method in NORMALISERS:
            if method == called or original.endswith(f".{method}()"):
                continue
            out.append(Edit(line, replace(text, s, e, f"{original}.{method}()"),
                            line, f"`.{method}()` added to `{original}`"))
    return out


def typo_edits(text: str, nodes: list[ast.AST], line: int) -> list[Edit]:
    """This module's edits of `text` (line `line`; `nodes` are the ast nodes on it), in the docstring's order."""
    out: list[Edit] = []
    for node in nodes:
        out += _digits_exchanged(text, node, line)
    return out + _normaliser_added(text, nodes, line)
