"""One-line mix-ups: the wrong operator, operand order, key, exception or argument count, and names exchanged.

They are tried after the main catalogue (line_mutants.py) and before inserted base cases.

Each is a classic mutation operator that mirrors a bug people write, but
less often than the catalogue's (so it costs a sandboxed test run only when
those failed):

1. bitwise operators confused: `^` / `&` / `|` and their augmented forms, `<<` <-> `>>`;
2. the operands of `+` in the wrong order (`digit + result` for `result + digit`:
   strings and lists do not commute);
3. a call too many: a single-argument call replaced by its argument (`f(x)` -> `x`);
4. the wrong exception caught: `except A` -> `except B` among the builtin exceptions a
   conversion, lookup or arithmetic raises;
5. a format spec's precision or width off by one (`{x:.1f}` -> `{x:.2f}`) inside an f-string or a
   `format` string;
6. the wrong key: a string literal used as a subscript or as the first argument of `.get`, `.pop`,
   `.setdefault` replaced by another string literal of the same module (`"timeout"` -> `"timeout_s"`);
7. an argument too many: one positional argument of a call dropped (`items.pop(0)` -> `items.pop()`,
   `text.split(" ")` -> `text.split()`: the default was meant);
8. two names exchanged everywhere on the line (`result[i][j] = m[j][i]` -> `result[j][i] = m[i][j]`: the
   roles of two loop variables or operands confused throughout a statement, which no single swap fixes);
9. two terms of a sum on opposite sides of a minus exchanged (`7 - target + today` -> `7 - today + target`:
   a distance taken the wrong way round inside a longer sum, where swapping one operator's operands does
   not reach).
"""

from __future__ import annotations

import ast
import itertools
import re

from agent_core.analysis import pysyntax
from agent_core.search.candidate import Edit
from agent_core.search.linetext import on_line as _on_line
from agent_core.search.linetext import replace as _replace
from agent_core.search.linetext import span as _span

_BITWISE = {"^": ["&", "|"], "&": ["|", "^"], "|": ["&", "^"], "<<": [">>"], ">>": ["<<"],
            "^=": ["&=", "|="], "&=": ["|=", "^="], "|=": ["&=", "^="]}
_BITWISE_OPS = (ast.BitXor, ast.BitAnd, ast.BitOr, ast.LShift, ast.RShift)
_EXCEPTIONS = ("ValueError", "TypeError", "KeyError", "IndexError", "AttributeError", "ZeroDivisionError",
               "LookupError", "ArithmeticError", "OverflowError", "StopIteration", "Exception")
_KEY_METHODS = ("get", "pop", "setdefault")
MAX_KEY_SWAPS = 12
MAX_EXCHANGES = 10
_PRECISION = re.compile(r"(?<=[:.])(\d{1,2})(?=[fdeEgG%]?[}'\"])")


def _bitwise(text: str, node: ast.AST, line: int) -> list[Edit]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, _BITWISE_OPS) and _on_line(node, line):
        (_, le), (rs, _) = _span(text, node.left), _span(text, node.right)
        gap = text[le:rs]
        word = gap.strip()
    elif isinstance(node, ast.AugAssign) and isinstance(node.op, _BITWISE_OPS) and _on_line(node, line):
        (_, le), (rs, _) = _span(text, node.target), _span(text, node.value)
        gap = text[le:rs]
        word = gap.strip()
    else:
        return []
    if word not in _BITWISE:
        return []
    return [Edit(line, text[:le] + gap.replace(word, new, 1) + text[rs:],
                 line, f"`{word}` -> `{new}`") for new in _BITWISE[word]]


def _plus_swapped(text: str, node: ast.AST, line: int) -> list[Edit]:
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and _on_line(node, line)):
        return []
    if isinstance(node.left, ast.Constant) and isinstance(node.right, ast.Constant):
        return []
    (ls, le), (rs, re_) = _span(text, node.left), _span(text, node.right)
    swapped = text[:ls] + text[rs:re_] + text[le:rs] + text[ls:le] + text[re_:]
    return [Edit(line, swapped, line, f"`{text[ls:le]}` and `{text[rs:re_]}` swapped")]


def _unwrapped(text: str, node: ast.AST, line: int) -> list[Edit]:
    if not (isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords and _on_line(node, line)):
        return []
    if isinstance(node.args[0], ast.Starred) or not isinstance(node.func, (ast.Name, ast.Attribute)):
        return []
    s, e = _span(text, node)
    a_s, a_e = _span(text, node.args[0])
    return [Edit(line, _replace(text, s, e, text[a_s:a_e]), line, f"`{text[s:e]}` -> `{text[a_s:a_e]}`")]


def _exception(text: str, node: ast.AST, line: int) -> list[Edit]:
    if not (isinstance(node, ast.ExceptHandler) and isinstance(node.type, ast.Name)
            and node.type.id in _EXCEPTIONS and _on_line(node.type, line)):
        return []
    s, e = _span(text, node.type)
    return [Edit(line, _replace(text, s, e, other), line, f"`except {node.type.id}` -> `except {other}`")
            for other in _EXCEPTIONS if other != node.type.id]


def _precision(text: str, node: ast.AST, line: int) -> list[Edit]:
    if not (isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))):
        return []
    if not _on_line(node, line):
        return []
    s, e = _span(text, node)
    literal = text[s:e]
    out: list[Edit] = []
    for match in _PRECISION.finditer(literal):
        value = int(match.group(1))
        for new in (value + 1, value - 1):
            if new >= 0:
                changed = literal[:match.start()] + str(new) + literal[match.end():]
                out.append(Edit(line, _replace(text, s, e, changed), line, f"format `{match.group(0)}` -> `{new}`"))
    return out


def _key_literals(tree: ast.Module) -> list[str]:
    """String literals of the module that look like keys (identifiers), in order of appearance."""
    found = [n.value for n in pysyntax.walked(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
             and n.value.isidentifier()]
    return list(dict.fromkeys(found))


def _key_slots(node: ast.AST) -> list[ast.Constant]:
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return [node.slice]
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _KEY_METHODS
            and node.args and isinstance(node.args[0], ast.Constant)):
        return [node.args[0]]
    return []


def _wrong_key(text: str, node: ast.AST, line: int, keys: list[str]) -> list[Edit]:
    out: list[Edit] = []
    for slot in _key_slots(node):
        if not (isinstance(slot.value, str) and _on_line(slot, line)):
            continue
        s, e = _span(text, slot)
        quote = text[s] if text[s] in "'\"" else '"'
        out += [Edit(line, _replace(text, s, e, f"{quote}{other}{quote}"), line, f"key `{slot.value}` -> `{other}`")
                for other in keys if other != slot.value]
    return out[:MAX_KEY_SWAPS]


def _argument_dropped(text: str, node: ast.AST, line: int) -> list[Edit]:
    if not (isinstance(node, ast.Call) and node.args and _on_line(node, line)):
        return []
    if any(isinstance(a, ast.Starred) for a in node.args) or not all(_on_line(k, line) for k in node.keywords):
        return []
    items: list[ast.expr | ast.keyword] = sorted([*node.args, *node.keywords], key=lambda n: n.col_offset)
    out: list[Edit] = []
    for arg in node.args:
        i = items.index(arg)
        s, e = _span(text, arg)
        if i + 1 < len(items):  # up to the next item: its separator goes with it
            e = _span(text, items[i + 1])[0]
        elif i > 0:  # the last of several: from the end of the one before
            s = _span(text, items[i - 1])[1]
        out.append(Edit(line, _replace(text, s, e, ""), line, f"argument `{text[slice(*_span(text, arg))]}` dropped"))
    return out


def _exchanged(text: str, nodes: list[ast.AST], line: int) -> list[Edit]:
    """Two variables' names exchanged at every place they occur on the line (names that are called are not
    variables here)."""
    called = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
    names: list[ast.Name] = [n for n in nodes if isinstance(n, ast.Name) and _on_line(n, line) and id(n) not in called]
    ids = list(dict.fromkeys(n.id for n in names))
    out: list[Edit] = []
    for a, b in itertools.combinations(ids, 2):
        new = text
        for node in sorted(names, key=lambda n: n.col_offset, reverse=True):
            if node.id in (a, b):
                s, e = _span(text, node)
                new = _replace(new, s, e, b if node.id == a else a)
        out.append(Edit(line, new, line, f"`{a}` and `{b}` exchanged"))
    return out[:MAX_EXCHANGES]


def _terms(node: ast.expr) -> list[tuple[ast.expr, bool]]:
    """The terms of a chain of `+` and `-` (`a - b + c`) with their signs (True: added)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        return [*_terms(node.left), (node.right, isinstance(node.op, ast.Add))]
    return [(node, True)]


def _terms_exchanged(text: str, node: ast.AST, line: int) -> list[Edit]:
    """Two terms of opposite sign exchanged in a sum of three terms or more (same-sign terms commute)."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)) and _on_line(node, line)):
        return []
    terms = _terms(node)
    out: list[Edit] = []
    for (a, a_added), (b, b_added) in itertools.combinations(terms, 2):
        if len(terms) < 3 or a_added == b_added or not (_on_line(a, line) and _on_line(b, line)):
            continue
        (as_, ae), (bs, be) = _span(text, a), _span(text, b)
        if isinstance(a, ast.Constant) and isinstance(b, ast.Constant):
            continue
        new = text[:as_] + text[bs:be] + text[ae:bs] + text[as_:ae] + text[be:]
        out.append(Edit(line, new, line, f"`{text[as_:ae]}` and `{text[bs:be]}` exchanged in the sum"))
    return out


def mix_up_edits(text: str, tree: ast.Module, nodes: list[ast.AST], line: int) -> list[Edit]:
    """The mix-ups of `text` (line `line` of the module `tree`), in the module docstring's order."""
    keys = _key_literals(tree)
    groups: list[list[Edit]] = [[] for _ in range(9)]
    for node in nodes:
        groups[0] += _bitwise(text, node, line)
        groups[1] += _plus_swapped(text, node, line)
        groups[2] += _unwrapped(text, node, line)
        groups[3] += _exception(text, node, line)
        groups[4] += _precision(text, node, line)
        groups[5] += _wrong_key(text, node, line, keys)
        groups[6] += _argument_dropped(text, node, line)
    groups[7] += _exchanged(text, nodes, line)
    for node in nodes:
        groups[8] += _terms_exchanged(text, node, line)
    return [edit for group in groups for edit in group]
