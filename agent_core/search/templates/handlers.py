"""Templates for exceptions that leave a layer in the wrong shape: translated for the caller, or with their cause.

Three kinds of fix that no one-token edit reaches:

- a low-level exception escapes a function whose callers handle another one (a conversion raising
  OverflowError where every caller catches ValueError). The statement goes under `try`, and the exception
  the failing test sees is raised again as one that the callers' handlers catch (`except OverflowError as
  exc: raise ValueError(str(exc)) from exc`). The callers are the other suspect files' `try` blocks that
  call the function by name;
- a handler that drops the exception's cause (`raise Abort() from None`) keeps it: the handler
  names the exception (`except (EOFError, KeyboardInterrupt) as e:`) and the raise says `from e`;
- a handler around the statement catches the exception the failing test sees as well (`except
  ValueError:` -> `except (ValueError, TypeError):`);
- a handler written `except (ValueError or TypeError):`, which catches ValueError alone (pylint's
  binary-op-exception) catches the tuple it meant (`or_edits`, its own evidence; monkalot #22,
  opengever.core #2831).
"""

from __future__ import annotations

import ast
import functools
from collections import Counter
from collections.abc import Iterable

from agent_core.analysis import pysyntax
from agent_core.search.candidate import Edit
from agent_core.search.linetext import span
from agent_core.search.templates.guards import _can_raise
from agent_core.search.templates.place import _SIMPLE, INDENT, Place, usable

MAX_TRANSLATIONS = 4
_BROAD = {"Exception", "BaseException"}


def _handled_names(handler: ast.ExceptHandler) -> list[str]:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    names = []
    for kind in kinds:
        if isinstance(kind, ast.Name):
            names.append(kind.id)
        elif isinstance(kind, ast.Attribute):
            names.append(kind.attr if isinstance(kind.value, ast.Name) and kind.value.id == "builtins" else "")
    return [n for n in names if n and n not in _BROAD]


def _called(body: list[ast.stmt]) -> frozenset[str]:
    """The names (or attributes) the statements of `body` call."""
    out = set()
    for node in (n for stmt in body for n in ast.walk(stmt)):
        if isinstance(node, ast.Call):
            func = node.func
            out.add(func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else "")
    return frozenset(out)


@functools.lru_cache(maxsize=16)
def _tries(tree: ast.Module) -> tuple[tuple[frozenset[str], tuple[ast.ExceptHandler, ...]], ...]:
    """Each `try` of `tree`: what its body calls and its handlers (read once per tree, not once per line)."""
    return tuple((_called(node.body), tuple(node.handlers)) for node in pysyntax.walked(tree)
                 if isinstance(node, ast.Try))


def handled_by_callers(trees: Iterable[ast.Module], name: str) -> list[str]:
    """The exception names that `try` blocks calling `name` (by name or attribute) catch, most frequent first."""
    counts: dict[str, int] = {}
    for tree in trees:
        for called, handlers in _tries(tree):
            if name not in called:
                continue
            for handler in handlers:
                if handler.type is not None:
                    for caught in dict.fromkeys(_handled_names(handler)):
                        counts[caught] = counts.get(caught, 0) + 1
    return sorted(counts, key=lambda n: -counts[n])


def handled_around(trees: dict[str, ast.Module], lines: Iterable[tuple[str, int]]) -> list[str]:
    """The exception names that `try` blocks around suspicious lines (file, line) catch, most frequent first: the
    callers' handlers when the function is reached indirectly (called through a table of functions, in a `try`
    that catches ValueError), which `handled_by_callers` cannot see by name."""
    wanted: dict[str, set[int]] = {}
    for file, line in lines:
        wanted.setdefault(file, set()).add(line)
    counts: dict[str, int] = {}
    for file, tree in trees.items():
        for node in ast.walk(tree) if file in wanted else ():
            if isinstance(node, ast.Try) and node.body and any(
                    node.body[0].lineno <= line <= (node.body[-1].end_lineno or 0) for line in wanted[file]):
                for handler in node.handlers:
                    for caught in dict.fromkeys(_handled_names(handler) if handler.type is not None else []):
                        counts[caught] = counts.get(caught, 0) + 1
    return sorted(counts, key=lambda n: -counts[n])


def translate_templates(place: Place, exceptions: list[str], handled: list[str]) -> list[Edit]:
    """The statement under `try`: each exception the failing tests saw that it can raise is raised again as one
    of `handled` (what the function's callers catch), with the original as its cause."""
    stmt = place.statement
    if not usable(place) or not isinstance(stmt, _SIMPLE) or not handled:
        return []
    body = place.text_of([stmt])
    if body is None:
        return []
    indent, inner = place.indent, "\n".join(INDENT + line for line in body)
    raised = [e for e in exceptions if _can_raise(stmt, e)]
    handled = sorted(handled, key=lambda name: name != "ValueError")  # a bad value's usual name first
    caught = [f"({', '.join(raised)})"] if len(raised) > 1 else []  # several seen: all of them first
    out: list[Edit] = []
    for exception in caught + raised:
        for target in (h for h in handled if h not in raised):
            new = (f"{indent}try:\n{inner}\n{indent}except {exception} as exc:\n"
                   f"{indent}{INDENT}raise {target}(str(exc)) from exc")
            out.append(Edit(stmt.lineno, new, stmt.end_lineno or stmt.lineno,
                        f"`{exception}` raised again as `{target}`, which the callers catch"))
    return out[:MAX_TRANSLATIONS]


def _handler_of(place: Place) -> ast.ExceptHandler | None:
    stmt = place.statement
    for node in ast.walk(place.function) if place.function is not None else []:
        if isinstance(node, ast.ExceptHandler) and stmt in node.body:
            return node
    return None


def cause_templates(place: Place) -> list[Edit]:
    """`raise X from None` in a handler -> the handler names the exception and the raise keeps it as the cause:
    (first line, new text, last line, description); the text spans the handler's line to the raise."""
    stmt = place.statement
    if not isinstance(stmt, ast.Raise) or not (isinstance(stmt.cause, ast.Constant) and stmt.cause.value is None):
        return []
    handler = _handler_of(place)
    if handler is None or handler.type is None:
        return []
    lines = place.lines[handler.lineno - 1 : stmt.end_lineno]
    name = handler.name or _handler_name(place)
    if handler.name is None:
        header = lines[0]
        colon = _header_colon(header)
        if colon is None:
            return []
        lines = [header[:colon] + f" as {name}" + header[colon:], *lines[1:]]
    last = lines[-1]
    at = last.rfind("from None")
    if at < 0:
        return []
    lines[-1] = last[:at] + f"from {name}" + last[at + len("from None"):]
    return [Edit(handler.lineno, "\n".join(lines), stmt.end_lineno or stmt.lineno,
             f"the handler keeps the exception as the cause (`from {name}`, was `from None`)")]


def _handler_name(place: Place) -> str:
    """The name the module's other handlers give their exception (`except AppError as e:`), the most
    common first; `exc` when none has one."""
    names = Counter(node.name for node in ast.walk(place.tree) if isinstance(node, ast.ExceptHandler) and node.name)
    return names.most_common(1)[0][0] if names else "exc"


def _header_colon(header: str) -> int | None:
    """Where the `:` ending a one-line `except ...:` header is (before a comment), or None."""
    code = header.split("#", 1)[0].rstrip()
    return len(code) - 1 if code.endswith(":") else None


def _enclosing_try(place: Place) -> ast.Try | None:
    """The innermost `try` of the function whose body (not a handler) holds the statement."""
    stmt, function = place.statement, place.function
    if stmt is None or function is None:
        return None
    found: ast.Try | None = None
    for node in ast.walk(function):
        if isinstance(node, ast.Try) and any(s.lineno <= stmt.lineno <= (s.end_lineno or s.lineno)
                                             for s in node.body):
            if found is None or node.lineno > found.lineno:
                found = node
    return found


def widen_templates(place: Place, exceptions: list[str]) -> list[Edit]:
    """(first line, new text, last line, description): a handler of the `try` around the statement made to catch
    the exception the failing tests saw as well (`except ValueError:` -> `except (ValueError, TypeError):`):
    the code already handles bad input there and misses one way it fails. Only for an exception the
    statement can raise and no handler of that `try` catches."""
    found = _enclosing_try(place) if usable(place) else None
    if found is None:
        return []
    caught = {name for h in found.handlers if h.type is not None for name in _handled_names(h)}
    if any(h.type is None or not _handled_names(h) for h in found.handlers):
        return []  # a bare or broad handler already catches it: the exception comes from elsewhere
    out: list[Edit] = []
    for exception in exceptions:
        if exception in caught or exception in _BROAD or not _can_raise(place.statement, exception):  # type: ignore[arg-type]
            continue
        for handler in found.handlers:
            kind = handler.type
            if kind is None or kind.lineno != kind.end_lineno or kind.lineno != handler.lineno:
                continue
            text = place.lines[handler.lineno - 1]
            s, e = span(text, kind)
            inner = text[s + 1 : e - 1].rstrip().rstrip(",") if isinstance(kind, ast.Tuple) else text[s:e]
            new = f"{text[:s]}({inner}, {exception}){text[e:]}"
            out.append(Edit(handler.lineno, new, handler.lineno, f"`{exception}` caught by the handler of "
                        f"`{text[s:e]}` too"))
    return out


def or_edits(place: Place) -> list[Edit]:
    """(new line, description): a one-line `except (A or B):` of a `try` holding the statement (in its body or a
    handler) made `except (A, B):`."""
    stmt, function = place.statement, place.function
    if stmt is None or function is None:
        return []
    out: list[Edit] = []
    for node in ast.walk(function):
        if not (isinstance(node, ast.Try) and node.lineno <= stmt.lineno <= (node.end_lineno or node.lineno)):
            continue
        for handler in node.handlers:
            kind = handler.type
            if not (isinstance(kind, ast.BoolOp) and kind.lineno == kind.end_lineno == handler.lineno
                    and all(isinstance(v, (ast.Name, ast.Attribute)) for v in kind.values)):
                continue
            text = place.lines[handler.lineno - 1]
            s, e = span(text, kind)
            names = ", ".join(text[slice(*span(text, v))] for v in kind.values)
            bracketed = text[s - 1 : s] == "(" and text[e : e + 1] == ")"
            new = f"{text[:s]}{names}{text[e:]}" if bracketed else f"{text[:s]}({names}){text[e:]}"
            out.append(Edit(handler.lineno, new, handler.lineno,
                            f"`except {text[s:e]}` catches the first alone: `except ({names})`"))
    return out
