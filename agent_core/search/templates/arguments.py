"""Call arguments changed on a suspicious line: a keyword argument the callee accepts passed on (a setting not
passed on), one dropped, or an argument moved between nested calls (`f(g(a), b)` <-> `f(g(a, b))`).

A parameter that its function never reads is evidence of its own (`unread_edits`): the function ignores what
its callers pass (`def load(path, encoding): return json.loads(_read(path))`). Passing such a parameter on to
a call of the suspicious line is tried before any single edit, to a callee whose definition is not found as
well (a library's `open(path)`): a callee that does not take it raises TypeError at once. The pylint check
unused-argument exists because this is common, and a single edit that turns the tests green elsewhere (the
writer made to escape its output, so the reader's ignored encoding no longer matters) leaves the parameter
ignored.

The callee's parameters are read from its definition in the module, or in the project module the name is
imported from.

A flag of `re` passed where `re.sub`, `re.subn` or `re.split` take a count (`re.sub(p, "", text, re.I)`: the
flag's value taken as a count, and the flags never set) is its own evidence too (`flag_edits`): it goes by
keyword, `flags=re.I`. flake8-bugbear has a check for it (B034), and Python 3.13 deprecates the positional form;
real fixes: sqlmap #2481, pydantic-settings #328, feedparser #389, flit #105.
"""

from __future__ import annotations

import ast
from pathlib import Path

from agent_core.analysis import pysyntax
from agent_core.search.candidate import Edit
from agent_core.search.linetext import on_line, replace, span

MAX_KEYWORDS = 4


def _call_text(text: str, call: ast.Call, parts: list[str]) -> str:
    s, e = span(text, call.func)
    return f"{text[s:e]}({', '.join(parts)})"


def _parts(text: str, call: ast.Call) -> list[str] | None:
    nodes: list[ast.AST] = [*call.args, *call.keywords]
    if not all(on_line(n, call.lineno) for n in nodes):
        return None
    items = [(n.col_offset, text[slice(*span(text, n))]) for n in nodes]  # type: ignore[attr-defined]
    return [t for _, t in sorted(items)]


def _signature(tree: ast.Module, call: ast.Call, root: Path | None, path: str) -> ast.arguments | None:
    """The arguments of the function `call` calls, when the module (or a project module it imports the
    name from) defines it: a plain name, or a method called on `self`/any object (by its name)."""
    func = call.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    if name is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node.args
    if root is None or not isinstance(func, ast.Name):
        return None
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and any(a.name == name and a.asname is None
                                                                    for a in node.names):
            found = _imported_def(root, path, node, name)
            if found is not None:
                return found
    return None


def _imported_def(root: Path, path: str, node: ast.ImportFrom, name: str) -> ast.arguments | None:
    rel = Path(*(node.module or "").split("."))
    bases = [Path(path).parent] * bool(node.level) or [Path("."), Path("src")]
    for base in bases:
        for parent in range(max(node.level - 1, 0)):
            base = base.parent if parent < len(base.parts) else base
        for candidate in (base / rel.with_suffix(".py"), base / rel / "__init__.py"):
            try:
                tree = pysyntax.parse((root / candidate).read_text(encoding="utf-8"))
            except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
                continue
            for found in tree.body:
                if isinstance(found, (ast.FunctionDef, ast.AsyncFunctionDef)) and found.name == name:
                    return found.args
    return None


def _not_given(arguments: ast.arguments, call: ast.Call) -> list[str]:
    """The parameters (not `self`/`cls`) that `call` could still pass by keyword: neither given by keyword nor
    filled by its positional arguments."""
    positional = [a.arg for a in [*arguments.posonlyargs, *arguments.args] if a.arg not in ("self", "cls")]
    given = {k.arg for k in call.keywords} | set(positional[: len(call.args)])
    return [a.arg for a in [*arguments.args, *arguments.kwonlyargs] if a.arg not in ("self", "cls", *given)]


def keyword_edits(text: str, tree: ast.Module, nodes: list[ast.AST], line: int, scope: set[str],
                  root: Path | None = None, path: str = "") -> list[Edit]:
    """A keyword argument the callee accepts added (`name=name` from the scope), or one dropped."""
    out: list[Edit] = []
    for call in (n for n in nodes if isinstance(n, ast.Call) and on_line(n, line)):
        parts = _parts(text, call)
        if parts is None:
            continue
        s, e = span(text, call)
        for keyword in call.keywords:
            if keyword.arg is not None:
                kept = [p for p in parts if not p.startswith(f"{keyword.arg}=")]
                out.append(Edit(line, replace(text, s, e, _call_text(text, call, kept)), line,
                                f"`{keyword.arg}=` dropped"))
        arguments = _signature(tree, call, root, path)
        if arguments is None:
            continue
        for param in [p for p in _not_given(arguments, call) if p in scope][:MAX_KEYWORDS]:
            new = _call_text(text, call, [*parts, f"{param}={param}"])
            out.append(Edit(line, replace(text, s, e, new), line, f"`{param}={param}` passed on"))
    return out


def unread_parameters(function: ast.AST) -> list[str]:
    """The named parameters of `function` (not `self`/`cls`, not `*args`/`**kwargs`, not `_`-prefixed) that none
    of its code reads, nested functions included; in the signature's order. None when the function reads
    `locals()` or `vars()` (`"{a}".format(**locals())` reads them all)."""
    arguments: ast.arguments = function.args  # type: ignore[attr-defined]
    named = [a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
             if a.arg not in ("self", "cls") and not a.arg.startswith("_")]
    read = {n.id for statement in function.body for n in ast.walk(statement)  # type: ignore[attr-defined]
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)}
    return [] if read & {"locals", "vars"} else [name for name in named if name not in read]


def unread_edits(text: str, tree: ast.Module, nodes: list[ast.AST], line: int, function: ast.AST,
                 root: Path | None = None, path: str = "") -> list[Edit]:
    """A parameter that `function` never reads passed on (`name=name`) to a call of the line that does not give
    it already and may take it: its definition accepts it, has `**kwargs`, or is not found."""
    unread = unread_parameters(function)
    out: list[Edit] = []
    for call in (n for n in nodes if unread and isinstance(n, ast.Call) and on_line(n, line)):
        parts = _parts(text, call)
        if parts is None or any(k.arg is None for k in call.keywords) or any(
                isinstance(a, ast.Starred) for a in call.args):
            continue
        arguments = _signature(tree, call, root, path)
        free = None if arguments is None or arguments.kwarg is not None else _not_given(arguments, call)
        given = {k.arg for k in call.keywords}
        s, e = span(text, call)
        for param in unread:
            if param in given or free is not None and param not in free:
                continue
            new = _call_text(text, call, [*parts, f"{param}={param}"])
            out.append(Edit(line, replace(text, s, e, new), line, f"`{param}={param}` passed on (else unread)"))
    return out


def moved_argument_edits(text: str, nodes: list[ast.AST], line: int) -> list[Edit]:
    """An argument moved into the nested call before it (`f(g(a), b)` -> `f(g(a, b))`) or out of it (back)."""
    out: list[Edit] = []
    for call in (n for n in nodes if isinstance(n, ast.Call) and on_line(n, line)):
        parts = _parts(text, call)
        args = sorted([*call.args, *call.keywords], key=lambda n: n.col_offset)  # type: ignore[attr-defined]
        if parts is None:
            continue
        s, e = span(text, call)
        for i, arg in enumerate(args):
            inner = arg.value if isinstance(arg, ast.keyword) else arg
            inner_parts = _parts(text, inner) if isinstance(inner, ast.Call) else None
            if inner_parts is None or not isinstance(inner, ast.Call):
                continue
            wrap = (lambda t, a=arg: f"{a.arg}={t}") if isinstance(arg, ast.keyword) else (lambda t: t)
            if i + 1 < len(args):  # the next argument moved in
                moved = [*inner_parts, parts[i + 1]]
                new = [*parts[:i], wrap(_call_text(text, inner, moved)), *parts[i + 2:]]
                moved_in = replace(text, s, e, _call_text(text, call, new))
                out.append(Edit(line, moved_in, line, f"`{parts[i + 1]}` moved into the inner call"))
            if len(inner_parts) > 1:  # the inner call's last argument moved out
                new = [*parts[:i], wrap(_call_text(text, inner, inner_parts[:-1])), inner_parts[-1], *parts[i + 1:]]
                moved_out = replace(text, s, e, _call_text(text, call, new))
                out.append(Edit(line, moved_out, line, f"`{inner_parts[-1]}` moved out of the inner call"))
    return out


# `re` functions whose positional argument at this index is a count, where a flag is often passed by mistake
_COUNTED = {"sub": 3, "subn": 3, "split": 2}
_RE_FLAGS = frozenset({"A", "ASCII", "I", "IGNORECASE", "L", "LOCALE", "M", "MULTILINE", "S", "DOTALL", "U",
                       "UNICODE", "X", "VERBOSE"})


def _re_flag(node: ast.expr) -> bool:
    """Whether `node` is a flag of `re` (`re.I`) or several joined by `|`."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _re_flag(node.left) and _re_flag(node.right)
    return isinstance(node, ast.Attribute) and node.attr in _RE_FLAGS and isinstance(node.value, ast.Name) \
        and node.value.id == "re"


def flag_edits(text: str, nodes: list[ast.AST], line: int) -> list[Edit]:
    """(new line, description): a flag of `re` given as `re.sub`'s, `re.subn`'s or `re.split`'s positional
    count passed as `flags=` instead."""
    out: list[Edit] = []
    for node in nodes:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _COUNTED
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"):
            continue
        at = _COUNTED[node.func.attr]
        if len(node.args) != at + 1 or not _re_flag(node.args[at]) or not on_line(node.args[at], line):
            continue
        s, e = span(text, node.args[at])
        out.append(Edit(line, replace(text, s, e, f"flags={text[s:e]}"), line,
                        f"`{text[s:e]}` passed as `flags=` (in that place `re.{node.func.attr}` takes a count)"))
    return out
