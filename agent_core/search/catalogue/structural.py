"""One-line bug classes about a statement's shape, tried with the mix-ups (mix_ups.py), last of the catalogue.

Each mirrors a bug that people write and that the token-level catalogue cannot reach in one edit:

9.  the wrong attribute: `node.successors` for `node.predecessors`, `self.start` for `self.end` (another
    attribute name the module uses, the most similar names first);
10. an empty container that should hold something: `return []` for `return [[]]` or `return [n]`
    (the function's parameters);
11. a loop or test on a constant: `while True:` for `while queue:` (the function's names);
12. a comparison whose operator and constant are both off: `len(items) == 0` for `len(items) <= 1`;
13. an assignment that should accumulate, or the reverse: `total = x` for `total += x`, and back;
14. a computed value off by one: `count = ceil(log(n, b))` for `count = 1 + ceil(log(n, b))`, `return i`
    for `return i - 1` (the value of an assignment or a return that is a name, call, subscript or
    arithmetic, not a literal);
15. a missing condition: `if hare.next is None:` for `if hare is None or hare.next is None:` (an
    object it dereferences may be None), `if total < 0:` for `if total < 0 or not coins:` (a parameter
    the test never looks at may be empty);
16. a variable off by one where it is used: `(n if step >= n else step - 1)` for `(n - 1 if ...)`
    (a parameter or local of the function used as a number, not as a callee, an object or a container).
"""

from __future__ import annotations

import ast
import difflib

from agent_core.analysis import pysyntax
from agent_core.search.candidate import Edit
from agent_core.search.linetext import on_line, replace, span

MAX_ATTRIBUTES = 6
MAX_CONTAINER_PARAMS = 3
MAX_CONDITION_NAMES = 6
MAX_EXTRA_CONDITIONS = 8
MAX_NAMES_OFF_BY_ONE = 8
_OPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_AUGMENTED = {ast.Add: "+=", ast.Sub: "-=", ast.Mult: "*="}


def _attributes(tree: ast.Module) -> list[str]:
    return list(dict.fromkeys(n.attr for n in pysyntax.walked(tree) if isinstance(n, ast.Attribute)))


def _wrong_attribute(text: str, node: ast.AST, line: int, names: list[str]) -> list[Edit]:
    if not (isinstance(node, ast.Attribute) and on_line(node, line)):
        return []
    others = [n for n in names if n != node.attr and not n.startswith("__")]
    ranked = sorted(others, key=lambda n: -difflib.SequenceMatcher(None, node.attr, n).ratio())[:MAX_ATTRIBUTES]
    end = span(text, node)[1]
    start = end - len(node.attr)
    if text[start:end] != node.attr:  # `obj . attr` spelt with spaces or over lines: leave it
        return []
    return [Edit(line, replace(text, start, end, other), line, f"`.{node.attr}` -> `.{other}`") for other in ranked]


def _filled(text: str, node: ast.AST, line: int, params: list[str]) -> list[Edit]:
    if not (isinstance(node, ast.List) and not node.elts and on_line(node, line)):
        return []
    s, e = span(text, node)
    return [Edit(line, replace(text, s, e, new), line, f"`[]` -> `{new}`")
            for new in ["[[]]", *(f"[{p}]" for p in params[:MAX_CONTAINER_PARAMS])]]


def _constant_condition(text: str, node: ast.AST, line: int, names: list[str]) -> list[Edit]:
    if not (isinstance(node, (ast.While, ast.If)) and isinstance(node.test, ast.Constant)
            and on_line(node.test, line)):
        return []
    s, e = span(text, node.test)
    return [Edit(line, replace(text, s, e, name),
                 line, f"`{text[s:e]}` -> `{name}`") for name in names[:MAX_CONDITION_NAMES]]


def _operator_and_constant(text: str, node: ast.AST, line: int) -> list[Edit]:
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and on_line(node, line)):
        return []
    right = node.comparators[0]
    if not (isinstance(right, ast.Constant) and type(right.value) is int and type(node.ops[0]) in _OPS):
        return []
    (_, left_end), (right_start, right_end) = span(text, node.left), span(text, right)
    old = _OPS[type(node.ops[0])]
    out: list[Edit] = []
    for op in _OPS.values():
        for value in (right.value - 1, right.value + 1):
            if op != old and value >= 0:
                new = f"{text[:left_end]} {op} {value}{text[right_end:]}"
                out.append(Edit(line, new, line, f"`{old} {right.value}` -> `{op} {value}`"))
    return out if text[left_end:right_start].strip() == old else []


def _accumulating(text: str, node: ast.AST, line: int) -> list[Edit]:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        target, value = node.targets[0], node.value
        ops = ["+=", "-="]
    elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and type(node.op) in _AUGMENTED:
        target, value = node.target, node.value
        ops = ["="]
    else:
        return []
    if not on_line(node, line):
        return []
    (_, target_end), (value_start, _) = span(text, target), span(text, value)
    return [Edit(line, f"{text[:target_end]} {op} {text[value_start:]}",
                 line, f"`{text[target_end:value_start].strip()}` -> `{op}`")
            for op in ops]


_COMPUTED = (ast.Name, ast.Call, ast.Subscript, ast.Attribute, ast.BinOp)


def _value_off_by_one(text: str, node: ast.AST, line: int) -> list[Edit]:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 or isinstance(node, ast.Return):
        value = node.value
    else:
        return []
    if not (isinstance(value, _COMPUTED) and on_line(node, line)):
        return []
    s, e = span(text, value)
    inner = f"({text[s:e]})" if isinstance(value, ast.BinOp) else text[s:e]
    return [Edit(line, replace(text, s, e, f"{inner} {op} 1"),
                 line, f"`{text[s:e]}` -> `{inner} {op} 1`") for op in "+-"]


def _missing_condition(text: str, node: ast.AST, line: int, params: list[str]) -> list[Edit]:
    if not (isinstance(node, (ast.If, ast.While)) and on_line(node.test, line)):
        return []
    s, e = span(text, node.test)
    test = text[s:e]
    inner = f"({test})" if isinstance(node.test, ast.BoolOp) else test
    seen = {n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)}
    bases = list(dict.fromkeys(n.value.id for n in ast.walk(node.test)
                               if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)))
    out = [Edit(line, replace(text, s, e, f"{base} is None or {inner}"),
                line, f"`{base} is None or` added") for base in bases]
    out += [Edit(line, replace(text, s, e, f"{inner} or not {p}"),
                 line, f"`or not {p}` added") for p in params if p not in seen]
    return out[:MAX_EXTRA_CONDITIONS]


def _names_off_by_one(text: str, nodes: list[ast.AST], line: int, scope: list[str]) -> list[Edit]:
    not_numbers = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
    not_numbers |= {id(n.value) for n in nodes if isinstance(n, (ast.Attribute, ast.Subscript))}
    not_numbers |= {id(n.iter) for n in nodes if isinstance(n, (ast.For, ast.comprehension))}
    names = sorted((n for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in scope
                    and id(n) not in not_numbers and on_line(n, line)), key=lambda n: n.col_offset)
    out: list[Edit] = []
    for node in names:
        s, e = span(text, node)
        out += [Edit(line, replace(text, s, e, f"({node.id} {op} 1)"),
                     line, f"`{node.id}` -> `{node.id} {op} 1`") for op in "-+"]
    return out[:MAX_NAMES_OFF_BY_ONE]


def structural_edits(text: str, tree: ast.Module, nodes: list[ast.AST], line: int, scope: list[str]) -> list[Edit]:
    """The edits of this module's classes for line `line` (`text`) of `tree`; `scope` is the enclosing
    function's parameters and locals (mutants.scope_names), parameters first."""
    attributes = _attributes(tree)
    groups: list[list[Edit]] = [[] for _ in range(7)]
    for node in nodes:
        groups[0] += _wrong_attribute(text, node, line, attributes)
        groups[1] += _filled(text, node, line, scope)
        groups[2] += _constant_condition(text, node, line, scope)
        groups[3] += _operator_and_constant(text, node, line)
        groups[4] += _accumulating(text, node, line)
        groups[5] += _value_off_by_one(text, node, line)
        groups[6] += _missing_condition(text, node, line, scope)
    groups.append(_names_off_by_one(text, nodes, line, scope))
    return [edit for group in groups for edit in group]
