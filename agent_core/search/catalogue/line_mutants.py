"""Single-edit mutants of one source line: the catalogue the search tries before any model call.

Every mutant replaces one line with a variant that differs by one small edit
and still parses. The catalogue is the one-line bug classes that dominate
small programs' bug benchmarks (their one-line fixes) and the classic mutation operators that mirror
them, in the order they are tried on a line (most frequent first):

1. comparison boundaries: `<` <-> `<=`, `>` <-> `>=` (off-by-one conditions);
2. an added or subtracted integer constant dropped (`n + 1` -> `n`), integer constants +1 / -1
   (wrong start, step, base value, index);
3. range ends, slice bounds, indexes and factors that are expressions: `+ 1` / `- 1`
   (`page * size` -> `(page - 1) * size`); an extra term dropped (`len(xs) - size` -> `len(xs)`);
4. boolean connectives: `and` <-> `or`;
5. arithmetic operators: `+` <-> `-`, `*` <-> `/` / `//`, `/` <-> `//`, `%`, and the augmented forms;
6. `min` <-> `max` (one, or both exchanged), twin names (`startswith`/`endswith`,
   `lstrip`/`rstrip`, `any`/`all`, `upper`/`lower`, `floor`/`ceil`, `find`/`rfind`; the wrong end of
   an ordered container: `iter`/`reversed`, `pop`/`popleft`, `append`/`appendleft`), `True` <-> `False`,
   `is` -> `==`, `is not` -> `!=`, `break` <-> `continue`;
7. turned round: negation dropped (`not x` -> `x`), `==` <-> `!=`, or negation added around an
   `if`/`while`/`elif` condition (the larger edit last); a value computed and thrown away
   (`name.strip()` on its own line) returned or assigned back (`name = name.strip()`); `reverse=True`
   added to a sort;
8. the other comparisons (`<` <-> `>`, `<` -> `==`, ...);
9. two things in the wrong order swapped: adjacent call arguments (`f(a, b)` -> `f(b, a)`), adjacent
   tuple items, a dict comprehension's key and value, the operands of `-`, `/`, `//`, `%`, `**`;
10. another variable of the same function in place of a name (a wrong variable used), the names used
    nearest the line first;
11. the mix-ups of mix_ups.py: bitwise operators, `+` operands swapped, a call too many, the
    wrong exception caught, a format precision off by one, the wrong dict key; then structural.py's
    (a statement's shape) and typos.py's (a mistyped number, a string not stripped or lower-cased);
12. a missing base case of a recursive function (the largest edit, tried last): `if p < c: return p`,
    `if p <= c: return p` or `if p == c: return c` before its first statement, for its first
    parameter and the small integer constants of the module.

Other missing early returns need a condition and a value nothing on the
line suggests: they are left to the model, which sees the suspects. A
mutant's `text` may hold several lines (an inserted base case).
"""

from __future__ import annotations

import ast
import functools
import io
import itertools
import tokenize

from agent_core.analysis import pysyntax
from agent_core.search.candidate import Edit, Mutant
from agent_core.search.catalogue.fstrings import field_edits
from agent_core.search.catalogue.mix_ups import mix_up_edits
from agent_core.search.catalogue.structural import structural_edits
from agent_core.search.catalogue.typos import typo_edits
from agent_core.search.linetext import on_line as _on_line
from agent_core.search.linetext import replace as _replace
from agent_core.search.linetext import span as _span

_BOUNDARY = {"<": ["<="], "<=": ["<"], ">": [">="], ">=": [">"]}
_ARITH = {"+": ["-"], "-": ["+"], "*": ["/", "//"], "/": ["//", "*"], "//": ["/"], "%": ["//"],
          "+=": ["-="], "-=": ["+="], "*=": ["/=", "//="], "/=": ["//="], "//=": ["/="]}
_WORDS = {"and": ["or"], "or": ["and"], "min": ["max"], "max": ["min"], "True": ["False"], "False": ["True"],
          "is": ["=="], "break": ["continue"], "continue": ["break"],
          # twin names that are easy to confuse
          "startswith": ["endswith"], "endswith": ["startswith"], "lstrip": ["rstrip"], "rstrip": ["lstrip"],
          "any": ["all"], "all": ["any"], "upper": ["lower"], "lower": ["upper"], "floor": ["ceil"], "ceil": ["floor"],
          # searching and splitting from the wrong end
          "find": ["rfind"], "rfind": ["find"], "index": ["rindex"], "rindex": ["index"], "split": ["rsplit"],
          "rsplit": ["split"], "partition": ["rpartition"], "rpartition": ["partition"], "ljust": ["rjust"],
          "rjust": ["ljust"], "removeprefix": ["removesuffix"], "removesuffix": ["removeprefix"],
          # taking from or adding at the wrong end of an ordered container (FIFO and LIFO confused)
          "iter": ["reversed"], "reversed": ["iter"], "popleft": ["pop"], "pop": ["popleft"],
          "appendleft": ["append"], "append": ["appendleft"]}
_FLIPS = {"==": ["!="], "!=": ["=="], "<": [">", ">=", "==", "!="], "<=": [">=", ">", "==", "!="],
          ">": ["<", "<=", "==", "!="], ">=": ["<=", "<", "==", "!="]}
MAX_NAME_SWAPS = 16
MAX_SWAPPED_ARGS = 5  # calls with more arguments only swap neighbours


def _tokens(source: str, line: int) -> list[tokenize.TokenInfo]:
    """The tokens that start and end on `line`."""
    return list(_tokens_by_line(source).get(line, ()))


@functools.lru_cache(maxsize=4)  # the module is tokenized once, not once per suspicious line
def _tokens_by_line(source: str) -> dict[int, tuple[tokenize.TokenInfo, ...]]:
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return {}
    out: dict[int, list[tokenize.TokenInfo]] = {}
    for token in tokens:
        if token.start[0] == token.end[0]:
            out.setdefault(token.start[0], []).append(token)
    return {line: tuple(found) for line, found in out.items()}


def _token_edits(text: str, tokens: list[tokenize.TokenInfo], line: int) -> list[list[Edit]]:
    """Edits of line `line` (`text`) per catalogue tier."""
    tiers: list[list[Edit]] = [[] for _ in range(6)]
    for index, tok in enumerate(tokens):
        s, e, word = tok.start[1], tok.end[1], tok.string
        after = tokens[index + 1] if index + 1 < len(tokens) else None
        if word == "is" and after is not None and after.string == "not":
            tiers[3].append(Edit(line, _replace(text, s, after.end[1], "!="), line, "`is not` -> `!=`"))
            continue
        if tok.type == tokenize.OP and word in _BOUNDARY:
            tiers[0] += [Edit(line, _replace(text, s, e, new), line, f"`{word}` -> `{new}`") for new in _BOUNDARY[word]]
        if tok.type == tokenize.NUMBER and word.isdigit():
            value = int(word)
            tiers[1] += [
                Edit(line, _replace(text, s, e, str(new)),
                     line, f"`{word}` -> `{new}`") for new in (value + 1, value - 1) if new >= 0
            ]
        if tok.type == tokenize.OP and word in _ARITH:
            tiers[3] += [Edit(line, _replace(text, s, e, new), line, f"`{word}` -> `{new}`") for new in _ARITH[word]]
        if tok.type == tokenize.NAME and word in _WORDS:
            tier = 2 if word in ("and", "or") else 3
            tiers[tier] += [Edit(line, _replace(text, s, e, new), line, f"`{word}` -> `{new}`") for new in _WORDS[word]]
        if tok.type == tokenize.NAME and word == "not":
            gap = e + 1 if text[e : e + 1] == " " else e
            tiers[4].append(Edit(line, _replace(text, s, gap, ""), line, "`not` dropped"))
        if tok.type == tokenize.OP and word in _FLIPS:
            # `==` <-> `!=` is the one-token negation of a comparison: tried with the other negations, before
            # the whole condition is wrapped in `not (...)` (a larger edit that passes wherever it does)
            tiers[4 if word in ("==", "!=") else 5] += [
                Edit(line, _replace(text, s, e, new), line, f"`{word}` -> `{new}`")
                for new in _FLIPS[word]
                if new not in _BOUNDARY.get(word, [])
            ]
    pair = [t for t in tokens if t.type == tokenize.NAME and t.string in ("min", "max")]
    if {t.string for t in pair} == {"min", "max"}:  # min and max confused with each other: both swap
        swapped = text
        for tok in reversed(pair):
            swapped = _replace(swapped, tok.start[1], tok.end[1], _WORDS[tok.string][0])
        tiers[3].append(Edit(line, swapped, line, "`min` and `max` exchanged"))
    return tiers




def _off_by_one(text: str, node: ast.AST, line: int) -> list[Edit]:
    """`+ 1` / `- 1` on a range end, a slice bound, an index or a factor that is not a literal."""
    targets: list[ast.expr] = []
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range" and node.args:
        targets.append(node.args[1] if len(node.args) > 1 else node.args[0])
    if isinstance(node, ast.Slice):
        targets += [b for b in (node.lower, node.upper) if b is not None]
    if isinstance(node, ast.Subscript) and not isinstance(node.slice, (ast.Slice, ast.Tuple)):
        targets.append(node.slice)
    out: list[Edit] = []
    for target in targets:
        if _on_line(target, line) and not isinstance(target, ast.Constant):
            s, e = _span(text, target)
            atom = isinstance(target, (ast.Name, ast.Attribute, ast.Call, ast.Subscript))
            inner = text[s:e] if atom else f"({text[s:e]})"
            out += [Edit(line, _replace(text, s, e, f"{inner} {op} 1"),
                         line, f"`{text[s:e]}` -> `{inner} {op} 1`") for op in "+-"]
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div, ast.FloorDiv, ast.Mod)):
        for operand in (node.left, node.right):  # `page * size` -> `(page - 1) * size`
            if isinstance(operand, ast.Name) and _on_line(operand, line):
                s, e = _span(text, operand)
                out += [
                    Edit(line, _replace(text, s, e, f"({operand.id} {op} 1)"),
                         line, f"`{operand.id}` -> `({operand.id} {op} 1)`")
                    for op in "-+"
                ]
    return out


def _dropped_term(text: str, node: ast.AST, line: int) -> tuple[list[Edit], list[Edit]]:
    """(`x + c` -> `x` for an integer c, `x - y` -> `x` for any other term)."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)) and _on_line(node, line)):
        return [], []
    s, e = _span(text, node)
    ls, le = _span(text, node.left)
    edit = Edit(line, _replace(text, s, e, text[ls:le]), line, f"`{text[s:e]}` -> `{text[ls:le]}`")
    constant = isinstance(node.right, ast.Constant) and type(node.right.value) is int
    return ([edit], []) if constant else ([], [edit])  # an extra `+ 1` is likelier than an extra term


def _turned(text: str, node: ast.AST, line: int) -> list[Edit]:
    """A condition negated, a sort reversed, a discarded value returned or assigned back."""
    out: list[Edit] = []
    if (
        isinstance(node, (ast.If, ast.While))
        and _on_line(node.test, line)
        and not (isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not))
    ):
        s, e = _span(text, node.test)
        out.append(Edit(line, _replace(text, s, e, f"not ({text[s:e]})"), line, "condition negated"))
    if isinstance(node, ast.Call) and _is_sort(node) and _on_line(node, line):
        e = _span(text, node)[1]
        sep = ", " if node.args or node.keywords else ""
        out.append(Edit(line, text[: e - 1] + f"{sep}reverse=True" + text[e - 1 :], line, "`reverse=True` added"))
    if isinstance(node, ast.Expr) and _on_line(node, line) and not isinstance(node.value, ast.Constant):
        out += _discarded(text, node, line)
    return out


def _swaps(text: str, node: ast.AST, line: int) -> list[Edit]:
    out: list[Edit] = []
    for left, right in _swappable(node):
        if _on_line(left, line) and _on_line(right, line):
            (ls, le), (rs, re_) = _span(text, left), _span(text, right)
            if le <= rs:
                swapped = text[:ls] + text[rs:re_] + text[le:rs] + text[ls:le] + text[re_:]
                out.append(Edit(line, swapped, line, f"`{text[ls:le]}` and `{text[rs:re_]}` swapped"))
    return out


def _node_edits(text: str, nodes: list[ast.AST],
                line: int) -> tuple[list[Edit], list[Edit], list[Edit], list[Edit]]:
    """(`+ c` dropped, off by one and extra terms, turned round, swapped) for the nodes of one line."""
    dropped: list[Edit] = []
    bounds: list[Edit] = []
    turned: list[Edit] = []
    swaps: list[Edit] = []
    for node in nodes:
        constant_term, other_term = _dropped_term(text, node, line)
        dropped += constant_term
        bounds += _off_by_one(text, node, line) + other_term
        turned += _turned(text, node, line)
        swaps += _swaps(text, node, line)
    return dropped, bounds, turned, swaps


def _is_sort(node: ast.Call) -> bool:
    if any(k.arg == "reverse" for k in node.keywords):
        return False
    func = node.func
    return (isinstance(func, ast.Name) and func.id == "sorted") or (
        isinstance(func, ast.Attribute) and func.attr == "sort"
    )


def _discarded(text: str, node: ast.Expr, line: int) -> list[Edit]:
    """A value computed and thrown away: returned, or assigned back to the name it was computed from."""
    s, e = _span(text, node)
    expr = text[s:e]
    out = [Edit(line, _replace(text, s, e, f"return {expr}"), line, "the discarded value returned")]
    call = node.value
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name):
        name = call.func.value.id
        out.append(Edit(line, _replace(text, s, e, f"{name} = {expr}"),
                        line, f"the discarded value assigned to `{name}`"))
    return out


def _swappable(node: ast.AST) -> list[tuple[ast.expr, ast.expr]]:
    """Pairs whose order matters: two call arguments (neighbours only in long calls), adjacent tuple items, a
    dict comprehension's key and value, the operands of a non-commutative operator."""
    if isinstance(node, ast.Call):  # any two arguments: `islice(it, n, None, index)` swaps the 2nd and 4th
        args = [a for a in node.args if not isinstance(a, ast.Starred)]
        pairs = itertools.combinations(args, 2) if len(args) <= MAX_SWAPPED_ARGS else itertools.pairwise(args)
        return list(pairs)
    if isinstance(node, ast.Tuple):
        return list(itertools.pairwise([e for e in node.elts if not isinstance(e, ast.Starred)]))
    if isinstance(node, ast.DictComp):
        return [(node.key, node.value)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Sub, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)):
        return [(node.left, node.right)]
    return []


def scope_names(tree: ast.Module, line: int) -> list[str]:
    """Parameters and assigned names of the innermost function containing `line`, in order of appearance."""
    best: ast.AST | None = None
    for node in pysyntax.walked(tree):
        inside = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= (
            node.end_lineno or 0
        )
        if inside and (best is None or node.lineno >= best.lineno):  # type: ignore[attr-defined]
            best = node
    if best is None:
        return []
    names: list[str] = [a.arg for a in ast.walk(best.args) if isinstance(a, ast.arg)]  # type: ignore[attr-defined]
    for node in ast.walk(best):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id not in names:
            names.append(node.id)
    return [n for n in names if n != "self"]


def _nearest_first(tree: ast.Module, line: int, names: list[str]) -> list[str]:
    """`names` ordered by how close to `line` each is used (a wrong variable is most often one used on the
    neighbouring lines: `hi = x` right under `if hi < y`), then by order of appearance."""
    distance = {name: float("inf") for name in names}
    for node in pysyntax.walked(tree):
        if isinstance(node, ast.Name) and node.id in distance:
            distance[node.id] = min(distance[node.id], abs(node.lineno - line))
    return sorted(names, key=lambda name: distance[name])  # stable: appearance order among equals


def _name_edits(text: str, tokens: list[tokenize.TokenInfo], names: list[str], line: int) -> list[Edit]:
    """Each variable on the line replaced by another of the scope, nearest names first, taken in turn from
    every variable of the line so that the cap does not spend itself on the line's first name."""
    per_token: list[list[Edit]] = []
    for tok in tokens:
        if tok.type == tokenize.NAME and tok.string in names:
            s, e = tok.start[1], tok.end[1]
            others = [other for other in names if other != tok.string]
            per_token.append([Edit(line, _replace(text, s, e, other),
                                   line, f"`{tok.string}` -> `{other}`") for other in others])
    interleaved = [edit for row in itertools.zip_longest(*per_token) for edit in row if edit is not None]
    return interleaved[:MAX_NAME_SWAPS]


BASE_CASE_CONSTANTS = 6  # integer constants of the module tried in an inserted base case


def _recursive_function(tree: ast.Module, line: int) -> ast.FunctionDef | None:
    """The function whose first statement (after a docstring) is `line`, when it calls itself."""
    for node in pysyntax.walked(tree):
        if not isinstance(node, ast.FunctionDef) or not node.args.args:
            continue
        body = node.body[1:] if ast.get_docstring(node) is not None and len(node.body) > 1 else node.body
        if not body or body[0].lineno != line:
            continue
        if any(isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == node.name
               for c in ast.walk(node)):
            return node
    return None


def _base_cases(tree: ast.Module, text: str, line: int) -> list[Edit]:
    """A missing base case of a recursive function, inserted before its first statement:
    `if p < c: return p`, `if p <= c: return p`, `if p == c: return c` for its first parameter p and the
    module's small integer constants c (0, 1, 2 and the ones the module uses)."""
    function = _recursive_function(tree, line)
    if function is None:
        return []
    param = function.args.args[0].arg
    used = [n.value for n in pysyntax.walked(tree) if isinstance(n, ast.Constant) and type(n.value) is int]
    constants = list(dict.fromkeys([0, 1, 2, *sorted(set(used), key=used.index)]))[:BASE_CASE_CONSTANTS]
    indent = text[: len(text) - len(text.lstrip())]
    out: list[Edit] = []
    for c in constants:
        for test, value in ((f"{param} < {c}", param), (f"{param} <= {c}", param), (f"{param} == {c}", str(c))):
            guard = f"{indent}if {test}:\n{indent}    return {value}\n"
            out.append(Edit(line, guard + text, line, f"base case `if {test}: return {value}` added"))
    return out


def _parses(source: str) -> bool:
    try:
        pysyntax.parse(source)
    except (SyntaxError, ValueError):
        return False
    return True


def line_mutants(path: str, source: str, line: int) -> list[Mutant]:
    """Every catalogue mutant of `line` (1-based) of `source` that still parses, best first, no duplicates."""
    lines = source.split("\n")
    if not 1 <= line <= len(lines) or not lines[line - 1].strip():
        return []
    try:
        tree = pysyntax.parse_shared(source)
    except (SyntaxError, ValueError):
        return []
    text = lines[line - 1]
    tokens = _tokens(source, line)
    nodes = [n for n in pysyntax.walked(tree) if getattr(n, "lineno", None) == line or isinstance(n, ast.Slice)]
    tiers = _token_edits(text, tokens, line)
    for tier, edits in enumerate(field_edits(text, tokens, line, _token_edits)):
        tiers[tier] += edits
    dropped, bounds, turned, swaps = _node_edits(text, nodes, line)
    scope = scope_names(tree, line)
    groups = [tiers[0], dropped, tiers[1], bounds, tiers[2], tiers[3], tiers[4], turned, tiers[5], swaps,
              _name_edits(text, tokens, _nearest_first(tree, line, scope), line),
              mix_up_edits(text, tree, nodes, line) + structural_edits(text, tree, nodes, line, scope)
              + typo_edits(text, nodes, line),
              _base_cases(tree, text, line)]
    out: list[Mutant] = []
    seen = {text}
    first, last = _unit(tree, line, len(lines))
    lead = "if 1:\n" if lines[first - 1][:1] in (" ", "\t") else ""  # an indented unit parses as a block's body
    for tier, edit in [(tier, edit) for tier, group in enumerate(groups) for edit in group]:
        if edit.text in seen:
            continue
        seen.add(edit.text)
        if _parses(lead + "\n".join([*lines[first - 1 : line - 1], edit.text, *lines[line:last]])):
            out.append(Mutant(path, line, edit.text, edit.description, tier))
    return out


def _unit(tree: ast.Module, line: int, count: int) -> tuple[int, int]:
    """The lines (first, last; 1-based) of the smallest unit holding `line` whose parse stands for the module's:
    the outermost statement around it that is not a class (a method, a function, a module-level statement),
    decorators included; the whole module when no statement holds it. A one-line edit that breaks the syntax
    breaks its unit's (the whole file was parsed once per edit: most of a large module's catalogue time)."""
    body: list[ast.stmt] = tree.body
    while True:
        for node in body:
            start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
            if start <= line <= (node.end_lineno or node.lineno):
                break
        else:
            return 1, count
        if not isinstance(node, ast.ClassDef) or not node.body or line < node.body[0].lineno:
            return start, node.end_lineno or node.lineno
        body = node.body
