"""Templates beyond one token: the edits real fixes make that the single-edit catalogue (mutants.py) cannot.

They are tried after the single edits (search/driver/ranking.py places them) and bounded
in count (MAX_PER_LINE per line, the ranking caps their total). Per line, in order:

1. guards, `try` and `if` around statements, a missing `return <parameter>` (guards.py: a None or empty value
   skipped, right after it is set and then before its use, an exception the failing test sees caught, a block
   that must only run
   in one case); an exception raised again as one the callers catch, or kept as the cause (handlers.py);
2. twin names changed together: `l_bar + bar + r_bar` -> `l_bar_user + bar + r_bar_user`
   when the function holds both pairs (a fix that switches to the other pair of
   values; changing one name alone leaves its twin unused, see ranking.py);
3. call arguments: a keyword argument the callee (defined in the project) accepts
   added with the same-named variable in scope (`load(path)` -> `load(path,
   encoding=encoding)`: a setting not passed on), a keyword argument dropped, an
   argument moved between nested calls (`f(g(a), b)` <-> `f(g(a, b))`);
4. a name from an enclosing function in a nested one (`output_path` where the
   outer parameter `output` is meant), most similar names first;
5. a separator constant replaced by the `os` attribute that names it
   (`':'` -> `os.pathsep`, `'/'` -> `os.sep`, `'\\n'` -> `os.linesep`) when the
   module imports `os` (code that must follow the platform, tested by patching it);
6. a refusal the failing test crashed at (`if a and b: raise TypeError(...)`) lifted, with the value set where
   `b` is tested split on `a` (an empty collection the failing tests write: refusals.py), as evidence;
   what a line misses when a failing test's exception says so: `x[key]` -> `x.get(key)` on a KeyError, an
   `await` for a coroutine object, `self.` for a NameError (missing.py, as evidence);
   a literal collection of characters widened with one the failing tests use, on the line or in a module
   constant the function reads; a comparison with a literal in one case made blind to case (cases.py), alone
   or with its like siblings; a format string given the `f` it lacks (literals.py; regular expressions'
   classes of letters that miss the failing tests' letters come per module: ranking.templates_for);
7. an `if`'s condition replaced by another the function tests, as written or negated (conditions.py);
8. the statement moved below the next statements of its block or above the previous ones, or out of the
   `if` whose test reads what it sets (moves.py), and a parameter's default passed on as if the caller had
   set it, made None and passed on only when given (sentinels.py): both rare, made for the lines of the
   evidence as well.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import textwrap
from collections.abc import Iterable, Sequence
from pathlib import Path

from agent_core.analysis import pysyntax
from agent_core.models import TestReport
from agent_core.search.candidate import Mutant
from agent_core.search.evidence.inputs import EXCEPTION_NAME, NO_INPUTS, FailingInputs
from agent_core.search.linetext import Edit, on_line, replace, span
from agent_core.search.templates.cases import case_edits, constant_widenings, other_case, widening_edits
from agent_core.search.templates.conditions import condition_swaps
from agent_core.search.templates.guards import (
    Place,
    block_templates,
    bound_guard_templates,
    guard_templates,
    mutable_default_templates,
    return_templates,
    set_guard_templates,
    try_templates,
)
from agent_core.search.templates.handlers import (
    cause_templates,
    handled_by_callers,
    translate_templates,
    widen_templates,
)
from agent_core.search.templates.literals import missing_f_edits, sibling_case_edits
from agent_core.search.templates.missing import await_edits, get_edits, self_edits
from agent_core.search.templates.moves import hoist_edits, move_edits
from agent_core.search.templates.refusals import refusal_templates
from agent_core.search.templates.retype import retyped_guards
from agent_core.search.templates.sentinels import sentinel_templates

TEMPLATE_TIER = 20  # after every single-edit tier of mutants.py
# a template the failure itself asks for (an exception's cause or type, a character of the failing test's input
# that a literal set of characters lacks): few, and tried before every single edit
EVIDENCE_TIER = -1
MAX_PER_LINE = 32
MAX_GUARDS = 8  # of those: guards (objects x `is None`/`not` x exits), handlers, conditioned blocks
MAX_TRIES = 8
MAX_BLOCKS = 6
MAX_KEYWORDS = 4
MAX_OUTER_NAMES = 6
MAX_EXCEPTIONS = 2
_SEPARATORS = {":": "os.pathsep", ";": "os.pathsep", "/": "os.sep", "\\": "os.sep", "\n": "os.linesep"}


def seen_exceptions(report: TestReport | None) -> list[str]:
    """The exception types the failing tests raised (the message's or the traceback's `IndexError: ...`), most
    frequent first; not AssertionError (an assertion of the test, not a raise a `try` would catch)."""
    counts: dict[str, int] = {}
    for failure in report.failures if report is not None else []:
        names = EXCEPTION_NAME.findall(failure.message) or EXCEPTION_NAME.findall(failure.traceback)[-1:]
        for name in dict.fromkeys(names):
            if name != "AssertionError":
                counts[name] = counts.get(name, 0) + 1
    return sorted(counts, key=lambda n: -counts[n])[:MAX_EXCEPTIONS]


def _function_names(function: ast.AST) -> list[str]:
    names = [a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)]  # type: ignore[attr-defined]
    names += [n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
    return list(dict.fromkeys(names))


def _line_names(nodes: list[ast.AST], line: int) -> list[ast.Name]:
    return sorted((n for n in nodes if isinstance(n, ast.Name) and on_line(n, line)), key=lambda n: n.col_offset)


def _renamed(text: str, names: list[ast.Name], mapping: dict[str, str]) -> str:
    for node in sorted(names, key=lambda n: -n.col_offset):  # right to left: earlier columns stay valid
        if node.id in mapping:
            s, e = span(text, node)
            text = replace(text, s, e, mapping[node.id])
    return text


def _twins(a: str, b: str, scope: set[str]) -> Iterable[tuple[str, str]]:
    """(a', b'): the same prefix or suffix added to (or taken from) both names, both in scope."""
    for other in scope:
        if other != a and other.startswith(a):
            yield other, b + other[len(a):]
        if other != a and other.endswith(a):
            yield other, other[: -len(a)] + b
        if a != other and a.startswith(other) and b.endswith(a[len(other):]):
            yield other, b[: len(b) - len(a) + len(other)]
        if a != other and a.endswith(other) and b.startswith(a[: len(a) - len(other)]):
            yield other, b[len(a) - len(other):]


def twin_edits(text: str, names: list[ast.Name], scope: set[str]) -> list[Edit]:
    """Two names of the line changed together into another pair of the scope (`l_bar`/`r_bar` ->
    `l_bar_user`/`r_bar_user`)."""
    distinct = list(dict.fromkeys(n.id for n in names if n.id in scope))
    out: list[Edit] = []
    for i, a in enumerate(distinct):
        for b in distinct[i + 1:]:
            for new_a, new_b in sorted(set(_twins(a, b, scope))):
                if new_b in scope and new_b != b and {new_a, new_b}.isdisjoint({a, b}):
                    out.append((_renamed(text, names, {a: new_a, b: new_b}),
                                f"`{a}`, `{b}` -> `{new_a}`, `{new_b}`"))
    return out


def _module_names(tree: ast.Module) -> set[str]:
    """The names the module binds at its top: imports, functions, classes, assignments."""
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            out |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return out


def outer_name_edits(text: str, names: list[ast.Name], functions: list[ast.AST], tree: ast.Module) -> list[Edit]:
    """In a nested function, a name replaced by a parameter or local of an enclosing one that the nested
    function does not have, the most similar first (a name undefined in the nested function first)."""
    if len(functions) < 2:
        return []
    inner = set(_function_names(functions[-1]))
    outer = [n for f in functions[:-1] for n in _function_names(f) if n not in inner]
    module = _module_names(tree)
    loads = [n for n in names if isinstance(n.ctx, ast.Load) and n.id not in dir(builtins) and n.id not in module]
    loads.sort(key=lambda n: n.id in inner)  # a name the nested function does not define first
    out: list[Edit] = []
    for node in loads:
        similar = sorted((o for o in dict.fromkeys(outer) if o != node.id),
                         key=lambda o: -difflib.SequenceMatcher(None, node.id, o).ratio())
        for other in similar[:MAX_OUTER_NAMES]:
            new = _renamed(text, [node], {node.id: other})
            out.append((new, f"`{node.id}` -> `{other}` of the enclosing function"))
    return out[:MAX_OUTER_NAMES]


def separator_edits(text: str, tree: ast.Module, nodes: list[ast.AST], line: int) -> list[Edit]:
    """A separator literal replaced by the `os` attribute that names it, when the module imports `os`."""
    imports_os = any(isinstance(n, ast.Import) and any(a.name == "os" and a.asname is None for a in n.names)
                     for n in tree.body)
    if not imports_os:
        return []
    out: list[Edit] = []
    for node in nodes:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in _SEPARATORS \
                and on_line(node, line):
            s, e = span(text, node)
            out.append((replace(text, s, e, _SEPARATORS[node.value]), f"`{text[s:e]}` -> `{_SEPARATORS[node.value]}`"))
    return out


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
                out.append((replace(text, s, e, _call_text(text, call, kept)), f"`{keyword.arg}=` dropped"))
        arguments = _signature(tree, call, root, path)
        if arguments is None:
            continue
        positional = [a.arg for a in [*arguments.posonlyargs, *arguments.args] if a.arg not in ("self", "cls")]
        given = {k.arg for k in call.keywords} | set(positional[: len(call.args)])
        accepted = [a.arg for a in [*arguments.args, *arguments.kwonlyargs] if a.arg not in ("self", "cls")]
        for param in [p for p in accepted if p not in given and p in scope][:MAX_KEYWORDS]:
            new = _call_text(text, call, [*parts, f"{param}={param}"])
            out.append((replace(text, s, e, new), f"`{param}={param}` passed on"))
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
                out.append((moved_in, f"`{parts[i + 1]}` moved into the inner call"))
            if len(inner_parts) > 1:  # the inner call's last argument moved out
                new = [*parts[:i], wrap(_call_text(text, inner, inner_parts[:-1])), inner_parts[-1], *parts[i + 1:]]
                moved_out = replace(text, s, e, _call_text(text, call, new))
                out.append((moved_out, f"`{inner_parts[-1]}` moved out of the inner call"))
    return out


def _parses(source: str, mutant: Mutant, function: ast.AST) -> bool:
    """Whether `source` with `mutant` parses: its function's lines alone (dedented) when they parse so, else the
    whole file (a big module costs a full parse per candidate otherwise)."""
    lines = source.split("\n")
    first, last = function.lineno, function.end_lineno or function.lineno  # type: ignore[attr-defined]
    region = [*lines[first - 1 : mutant.line - 1], mutant.text, *lines[mutant.last : last]]
    try:
        pysyntax.parse(textwrap.dedent("\n".join(region)))
        return True
    except (SyntaxError, ValueError):
        pass
    try:
        pysyntax.parse(mutant.applied(source))
    except (SyntaxError, ValueError):
        return False
    return True


def _statement_start(tree: ast.Module, line: int) -> int | None:
    """The first line of the innermost statement whose text holds `line` without a statement starting there:
    a traceback names the line of a call's argument (`self.unescape(block[0].text),`), not its statement's."""
    inner: ast.stmt | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno):
            if node.lineno == line:
                return None
            if inner is None or node.lineno >= inner.lineno:
                inner = node
    return inner.lineno if inner is not None else None


def template_mutants(path: str, source: str, line: int, exceptions: list[str] | None = None,
                     root: Path | None = None, callers: Iterable[ast.Module] = (),
                     inputs: FailingInputs = NO_INPUTS, around: Sequence[str] = (),
                     evidence_only: bool = False) -> list[Mutant]:
    """The templates of `line` (1-based) of `source` that parse, at most MAX_PER_LINE, in the module's order;
    `callers`: the parsed modules whose `try` blocks may call the line's function, `around`: what the `try`
    blocks around suspicious lines catch (handlers.py); `inputs`: what the failing tests' inputs are made of
    (cases.py: a comparison with a literal their words write in another case is evidence). `evidence_only`:
    only the EVIDENCE_TIER ones and the rare hoists and sentinels (moves.hoist_edits, sentinels.py), for lines
    beyond the templates' own."""
    lines = source.split("\n")
    if not 1 <= line <= len(lines) or not lines[line - 1].strip():
        return []
    try:
        tree = pysyntax.parse(source)
    except (SyntaxError, ValueError):
        return []
    place = Place(tree, lines, line, inputs.none_attributes)
    crashed_here = (path, line) in inputs.crash_sites
    if place.statement is None and (start := _statement_start(tree, line)):
        line = start  # a line inside a statement (a call's arguments): the statement's templates
        place = Place(tree, lines, line, inputs.none_attributes)
    if place.statement is None or place.function is None:
        return []
    text = lines[line - 1]
    nodes = [n for n in ast.walk(place.statement) if getattr(n, "lineno", None) == line]
    names = _line_names(nodes, line)
    scope = place.scope()
    handled = (handled_by_callers([tree, *callers], place.function.name)  # type: ignore[attr-defined]
               or list(around)) if exceptions else []
    translated = translate_templates(place, exceptions or [], handled)
    ranged = [*guard_templates(place)[:MAX_GUARDS], *try_templates(place, exceptions or [])[:MAX_TRIES],
              *block_templates(place)[:MAX_BLOCKS], *return_templates(place)]
    cased = [*((new, line, d) for new, d in case_edits(text, nodes, line)),
             *sibling_case_edits(lines, place.body, place.statement)]
    if not any(other_case(n.value, inputs.words) for n in ast.walk(place.statement) if isinstance(n, ast.Constant)):
        ranged, cased = [*ranged, *cased], []
    formatted, shown = missing_f_edits(lines, place.statement, scope, inputs.braced)
    if not shown:  # a template meant literally, unless a failing test's message shows its braces
        ranged, formatted = [*ranged, *formatted], []
    single = [*twin_edits(text, names, scope), *keyword_edits(text, tree, nodes, line, scope, root, path),
              *moved_argument_edits(text, nodes, line), *outer_name_edits(text, names, place.functions, tree),
              *separator_edits(text, tree, nodes, line), *condition_swaps(lines, place.statement, place.function, tree)]
    widened = [(line, new, line, description)
               for new, description in widening_edits(text, nodes, line, inputs.characters)]
    widened += [(line, new, line, description) for new, description in [
        *(get_edits(text, nodes, line) if "KeyError" in (exceptions or []) else []),
        *(await_edits(text, place.statement, line, tree, place.function) if inputs.coroutine else []),
        *self_edits(text, nodes, line, inputs.undefined, place.functions, tree)]]
    widened += [(at, new, at, description)
                for at, new, description in constant_widenings(tree, lines, place.functions[-1],
                                                                        inputs.characters)]
    evidence = [(first, new, last, description, EVIDENCE_TIER) for first, new, last, description in
                [*cause_templates(place), *mutable_default_templates(place),
                 *retyped_guards(tree, lines, place.statement, path, inputs.wrong_types, root),
                 *(refusal_templates(lines, place.statement, place.function, inputs.empties) if crashed_here else []),
                 *widen_templates(place, exceptions or []),
                 *((line, n, la, d) for n, la, d in translated), *widened,
                 *((line, n, la, d) for n, la, d in [*formatted, *cased])]]
    # the moves first: at most six, and a line's guards and blocks would otherwise use up the templates' cap
    # before the moves of the next suspicious line (click 8.1.4: its fourth line)
    hoists = [(first, new, last, description, TEMPLATE_TIER)
              for first, new, last, description in hoist_edits(tree, lines, place.statement)]
    # a parameter's default passed on as if it were the caller's (None for "not given", forwarded only when
    # given): as rare as a hoist, and the forwarding line is seldom among the most suspicious
    hoists += [(first, new, last, description, TEMPLATE_TIER)
               for first, new, last, description in sentinel_templates(tree, lines, place.statement, place.function)]
    if evidence_only:  # a hoist fits few lines (an assignment opening an `if` that tests it): as rare as evidence
        evidence += hoists
    edits = [*hoists, *((first, new, last, description, TEMPLATE_TIER)
                        for first, new, last, description in move_edits(lines, place.body, place.statement))]
    # an argument a callee found None, bound and guarded before the statement passes it on
    edits += [(first, new, last, description, TEMPLATE_TIER)
              for first, new, last, description in bound_guard_templates(place)]
    # a guard where the value is set before the one where it is used (the author's place, as a rule)
    edits += [(first, new, last, description, TEMPLATE_TIER)
              for first, new, last, description in set_guard_templates(place)[: MAX_GUARDS // 2]]
    edits += [(line, new, last, description, TEMPLATE_TIER) for new, last, description in ranged]
    edits += [(line, new, line, description, TEMPLATE_TIER) for new, description in single]
    out: list[Mutant] = []
    seen = {text}
    for first, new, last, description, tier in [*evidence, *([] if evidence_only else edits)]:
        mutant = Mutant(path, first, new, description, tier, last)
        if new not in seen and _parses(source, mutant, place.functions[0]):
            seen.add(new)
            out.append(mutant)
    return out[:MAX_PER_LINE]
