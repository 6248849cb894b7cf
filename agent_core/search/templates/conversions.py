"""A value of the right contents in the wrong form for what the line does with it, when the failure says so.

Each kind is a class of fix seen across many projects, most of them from code written for Python 2 or
against a function's twin:

- a view or an iterator indexed or measured (`mapping.keys()[0]`, `len(map(...))`: "'dict_keys' object is
  not subscriptable", "object of type 'map' has no len()"): the value made a list where it is read (web2py
  #2311, qt_gui_core #243, addons-server #11182, xcessiv #6);
- `sep.join(numbers)` ("sequence item 0: expected str instance, int found"): `sep.join(map(str, numbers))`;
- `str(data)` of bytes, which gives `"b'...'"` (a failing message shows the `b'` prefix): `data.decode()`;
- a serializer's text function given a file, or its file function given text (`json.loads(handle)`: "the
  JSON object must be str, bytes or bytearray, not TextIOWrapper"): `loads` <-> `load`, `dumps` <-> `dump`;
- a mapping or a sequence walked for pairs it does not hold (`for key, value in params:`: "not enough values
  to unpack"): `params.items()`, or `enumerate(params)`;
- text joined with `+` to a number ("can only concatenate str (not "int") to str"): the operand that is not
  text made `str(...)`, one operand at a time;
- a file opened as text where bytes are read or written ("Strings must be encoded before hashing", "a
  bytes-like object is required, not 'str'"): `open(path)` -> `open(path, "rb")`, `"w"` -> `"wb"`;
- a list given another list as one item where its items were meant (`out.append(group)` flattening
  groups), or the other way round: `append` <-> `extend`, `add` <-> `update` (an ordinary template).

The views, `join`, bytes, pairs, `+` and binary kinds are evidence (templates.EVIDENCE_TIER) when a failing
message names their class, and not made otherwise; the serializers' twins are evidence when a message shows a
file object where text was meant (or the other way round), and ordinary templates otherwise, like `append` <->
`extend`.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from agent_core.search.candidate import Edit
from agent_core.search.linetext import on_line, replace, span

# the types of views and lazy iterators a failing message names, which `list(...)` makes indexable
LAZY = frozenset({"dict_keys", "dict_values", "dict_items", "odict_keys", "odict_values", "odict_items", "map",
                  "filter", "zip", "generator", "reversed", "enumerate", "itertools.chain", "itertools.islice"})
_LAZY_CALLS = frozenset({"map", "filter", "zip", "reversed", "enumerate"})
_VIEWS = frozenset({"keys", "values", "items"})
MAX_LISTED = 3
# modules whose `loads`/`dumps` take text and `load`/`dump` a file
SERIALIZERS = frozenset({"json", "pickle", "marshal", "yaml", "toml", "tomllib", "tomli", "plistlib", "simplejson",
                         "ujson"})
_TWINS = {"loads": "load", "load": "loads", "dumps": "dump", "dump": "dumps"}


def _lazy(node: ast.expr) -> bool:
    """Whether `node` may be a view or a lazy iterator: a call of `.keys()`/`.values()`/`.items()`, of `map`,
    `filter`, `zip`, `reversed`, `enumerate`, or a plain name (bound to one elsewhere)."""
    if isinstance(node, ast.Name):
        return True
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Attribute) and func.attr in _VIEWS) or (
        isinstance(func, ast.Name) and func.id in _LAZY_CALLS)


def listed_edits(text: str, nodes: Sequence[ast.AST], line: int) -> list[Edit]:
    """(new line, description): each value on `line` that is indexed (`x[0]`) or measured (`len(x)`) and may be
    a view or an iterator (`_lazy`) made `list(x)` there."""
    out: list[Edit] = []
    for node in nodes:
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            value = node.value
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len"
              and len(node.args) == 1 and not node.keywords):
            value = node.args[0]
        else:
            continue
        if not (on_line(value, line) and _lazy(value)):
            continue
        s, e = span(text, value)
        out.append(Edit(line, replace(text, s, e, f"list({text[s:e]})"), line,
                        f"`{text[s:e]}` made a list where it is read (a view or an iterator has no index or length)"))
    return out[:MAX_LISTED]


def joined_edits(text: str, nodes: Sequence[ast.AST], line: int) -> list[Edit]:
    """(new line, description): `sep.join(items)` on `line` made `sep.join(map(str, items))`."""
    out: list[Edit] = []
    for node in nodes:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join"
                and len(node.args) == 1 and not node.keywords and on_line(node.args[0], line)):
            continue
        argument = node.args[0]
        if isinstance(argument, ast.Call) and isinstance(argument.func, ast.Name) and argument.func.id == "map":
            continue
        s, e = span(text, argument)
        out.append(Edit(line, replace(text, s, e, f"map(str, {text[s:e]})"), line,
                        f"`{text[s:e]}` joined as text (`map(str, ...)`): `join` takes strings only"))
    return out


def decoded_edits(text: str, nodes: Sequence[ast.AST], line: int) -> list[Edit]:
    """(new line, description): `str(data)` on `line` made `data.decode()` (str() of bytes keeps the `b'...'`)."""
    out: list[Edit] = []
    for node in nodes:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str"
                and len(node.args) == 1 and not node.keywords and on_line(node, line)):
            continue
        argument = node.args[0]
        s, e = span(text, node)
        a_s, a_e = span(text, argument)
        inner = text[a_s:a_e]
        simple = isinstance(argument, (ast.Name, ast.Attribute, ast.Call, ast.Subscript))
        decoded = f"{inner}.decode()" if simple else f"({inner}).decode()"
        out.append(Edit(line, replace(text, s, e, decoded), line,
                        f"`{text[s:e]}` -> `{decoded}`: str() of bytes keeps the `b'...'`"))
    return out


def serializer_edits(text: str, nodes: Sequence[ast.AST], line: int) -> list[Edit]:
    """(new line, description): `json.loads(...)` on `line` made `json.load(...)` and so on (SERIALIZERS,
    _TWINS): the function for a file where the one for text was called, or the other way round."""
    out: list[Edit] = []
    for node in nodes:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _TWINS
                and isinstance(node.func.value, ast.Name) and node.func.value.id in SERIALIZERS
                and on_line(node.func, line)):
            continue
        module, name = node.func.value.id, node.func.attr
        s, e = span(text, node.func)
        twin = _TWINS[name]
        out.append(Edit(line, replace(text, s, e, f"{module}.{twin}"), line,
                        f"`{module}.{name}` -> `{module}.{twin}`: the one for "
                        f"{'a file' if name.endswith('s') else 'text'}"))
    return out


def _pair_loops(statement: ast.stmt, nodes: Sequence[ast.AST], line: int) -> list[ast.expr]:
    """What `line` walks for two names at a time (a `for` statement's iterable, a comprehension's), unless it
    already walks `.items()`, `enumerate(...)` or `zip(...)`."""
    walked: list[tuple[ast.expr, ast.expr]] = []
    if isinstance(statement, (ast.For, ast.AsyncFor)) and statement.lineno == line:
        walked.append((statement.target, statement.iter))
    walked += [(g.target, g.iter) for n in nodes if isinstance(n, (ast.ListComp, ast.SetComp, ast.DictComp,
                                                                     ast.GeneratorExp)) for g in n.generators]
    out = []
    for target, iterable in walked:
        paired = isinstance(iterable, ast.Call) and (
            isinstance(iterable.func, ast.Attribute) and iterable.func.attr in _VIEWS
            or isinstance(iterable.func, ast.Name) and iterable.func.id in {"enumerate", "zip"})
        if isinstance(target, ast.Tuple) and len(target.elts) == 2 and on_line(iterable, line) and not paired:
            out.append(iterable)
    return out


def items_edits(text: str, statement: ast.stmt, nodes: Sequence[ast.AST], line: int) -> list[Edit]:
    """(new line, description): an iterable walked for pairs on `line` made `x.items()`, then `enumerate(x)`."""
    out: list[Edit] = []
    for iterable in _pair_loops(statement, nodes, line):
        s, e = span(text, iterable)
        walked = text[s:e]
        simple = isinstance(iterable, (ast.Name, ast.Attribute, ast.Call, ast.Subscript))
        out.append(Edit(line, replace(text, s, e, f"{walked}.items()" if simple else f"({walked}).items()"), line,
                        f"`{walked}` walked for its pairs: `.items()`"))
        out.append(Edit(line, replace(text, s, e, f"enumerate({walked})"), line,
                        f"`{walked}` walked with its positions: `enumerate(...)`"))
    return out


def _text_operand(node: ast.expr) -> bool:
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str)) or (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in {"str", "repr", "format"})


def concat_edits(text: str, nodes: Sequence[ast.AST], line: int) -> list[Edit]:
    """(new line, description): in a `+` chain on `line` that joins text (a string literal or an f-string among
    its operands), each operand that may not be text made `str(...)`, one candidate each, the last first."""
    inner = {id(n.left) for n in nodes if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add)}
    out: list[Edit] = []
    for node in nodes:
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)) or id(node) in inner \
                or not on_line(node, line):
            continue
        operands: list[ast.expr] = []
        chain: ast.expr = node
        while isinstance(chain, ast.BinOp) and isinstance(chain.op, ast.Add):
            operands.insert(0, chain.right)
            chain = chain.left
        operands.insert(0, chain)
        if not any(_text_operand(o) for o in operands):
            continue
        for operand in reversed(operands):
            if _text_operand(operand) or isinstance(operand, ast.Constant):
                continue
            s, e = span(text, operand)
            out.append(Edit(line, replace(text, s, e, f"str({text[s:e]})"), line,
                            f"`{text[s:e]}` joined to text as `str({text[s:e]})`"))
    return out[:MAX_LISTED]


_BINARY = {"r": "rb", "w": "wb", "a": "ab", "r+": "rb+", "w+": "wb+", "x": "xb"}


def binary_edits(text: str, nodes: Sequence[ast.AST], line: int) -> list[Edit]:
    """(new line, description): `open(path)` or `open(path, "r")` (and "w", "a", ...) on `line` in binary mode."""
    out: list[Edit] = []
    for node in nodes:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open" and node.args
                and on_line(node, line) and not any(k.arg in {"mode", "encoding"} for k in node.keywords)):
            continue
        if len(node.args) == 1:
            s, e = span(text, node)
            new = replace(text, s, e, f"{text[s : e - 1].rstrip()}, \"rb\")")
            mode = "rb"
        elif isinstance(mode_node := node.args[1], ast.Constant) and mode_node.value in _BINARY \
                and on_line(mode_node, line):
            s, e = span(text, mode_node)
            mode = _BINARY[mode_node.value]
            new = replace(text, s, e, f'"{mode}"')
        else:
            continue
        out.append(Edit(line, new, line, f"the file opened as bytes (`\"{mode}\"`)"))
    return out


_METHOD_TWINS = {"append": "extend", "extend": "append", "add": "update", "update": "add"}


def method_twin_edits(text: str, nodes: Sequence[ast.AST], line: int) -> list[Edit]:
    """(new line, description): `x.append(y)` on `line` made `x.extend(y)` and so on (_METHOD_TWINS), for a call
    of one argument."""
    out: list[Edit] = []
    for node in nodes:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _METHOD_TWINS \
                and len(node.args) == 1 and not node.keywords and not isinstance(node.args[0], ast.Starred) \
                and node.func.lineno == node.func.end_lineno == line:
            _, e = span(text, node.func)
            name = node.func.attr
            twin = _METHOD_TWINS[name]
            what = "its items" if twin in ("extend", "update") else "one item"
            out.append(Edit(line, text[: e - len(name)] + twin + text[e:], line,
                            f"`.{name}(...)` -> `.{twin}(...)`: {what}"))
    return out
