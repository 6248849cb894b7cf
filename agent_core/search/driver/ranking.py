"""The order the search tries its candidates in, and why a green one may still be wrong (right, not just green).

The first candidate that passes every test wins, so the order is the ranking:

0. the few templates the failure itself asks for (EVIDENCE_TIER: a handler's lost cause, an exception raised
   again as the one the callers catch, handlers.py; a literal set of characters widened with one of the
   failing test's input, templates/cases.py), which no single edit can replace;
1. the single edits of the most suspicious lines (catalogue/), the first TEMPLATES_AFTER of them
   (TEMPLATES_AFTER_CRASH when the failing tests raised an exception other than an assertion's);
2. the templates (templates/table.py) of the TEMPLATE_LINES most suspicious lines, at most MAX_TEMPLATES, then
   the hoists of the EVIDENCE_LINES most suspicious ones (an assignment that opens an `if` testing it, moved
   before the test) and the condition swaps of the `if` lines that gate a call to a suspect (gate_lines);
3. then the candidates with a concern, each after every one without: a candidate that leaves a variable
   assigned and unused (`l_bar_user, r_bar_user = ...` then only `r_bar_user` used), drops the only use of
   a parameter (the function now ignores an input a caller passes), binds a name that nothing reads after
   (`unique = unique.sort()` made `names = unique.sort()`: the binding dropped in disguise), deletes a
   statement, or changes an `assert` of the code (an assertion relaxed from `and` to `or` may turn the tests
   green and be wrong);
4. the rest of the single edits (clean ones first).

A concern is named in the candidate's description (`leaves `l_bar_user` unused`), which the journal, the
trace and the editor's fix title show, so a green candidate that may overfit the tests says so. A
green fix that leaves the code this way is often the wrong fix that the tests happen not to catch: the
real fix usually uses what the code computes (real-history corpus: the one fix the search made changed
`r_bar_user` alone and lost a user's `bar_format` left part).
"""

from __future__ import annotations

import ast
import functools
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from agent_core.analysis import pysyntax
from agent_core.analysis.imports import imported_files
from agent_core.search.candidate import Mutant
from agent_core.search.evidence.inputs import NO_INPUTS, FailingInputs
from agent_core.search.evidence.spectrum import Suspect
from agent_core.search.templates.conditions import condition_swaps
from agent_core.search.templates.handlers import handled_around
from agent_core.search.templates.literals import regex_class_edits
from agent_core.search.templates.place import Place
from agent_core.search.templates.table import EVIDENCE_TIER, TEMPLATE_TIER, template_mutants
from agent_core.workspace.shadow import read_exact

TEMPLATES_AFTER = 300  # single edits tried before any template (the likelier fixes, and most of a 120 s budget)
TEMPLATES_AFTER_CRASH = 100  # ... when the failing tests crash (an exception, not an assertion): a None or an
# empty value reached code that cannot take it, which guards and `try` fix (after 300 single edits a guard may
# lie past what a 120 s budget reaches on a busy machine)
TEMPLATE_LINES = 6  # the most suspicious lines that get templates
EVIDENCE_LINES = 60  # suspicious lines whose evidence templates (templates.EVIDENCE_TIER) are made
MAX_TEMPLATES = 120
GATE_LINES = 4  # `if` lines gating a call to a suspect function whose condition is swapped (gate_lines)


@dataclass
class _Facts:
    unused: set[str]
    together: dict[str, set[str]]  # a name -> the names assigned in the same tuple target
    param_uses: dict[str, int]
    statements: int
    stored_on: dict[str, set[int]]  # a name -> the lines (of the function's text, from 1) that assign it
    asserts: set[int]  # the lines of the function's `assert` statements
    assert_texts: list[str]  # those statements with the tests they run under, as ast.unparse writes them, sorted


def _tree(source: str) -> ast.Module | None:
    try:
        return pysyntax.parse(source)
    except (SyntaxError, ValueError):
        return None


@functools.lru_cache(maxsize=8)
def _function_spans(source: str) -> tuple[tuple[int, int], ...]:
    """(first, last line) of every function of `source`, once per file (a thousand candidates share it)."""
    tree = _tree(source)
    if tree is None:
        return ()
    return tuple((n.lineno, n.end_lineno or n.lineno) for n in ast.walk(tree)
                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))


def innermost_function(source: str, line: int) -> tuple[int, int] | None:
    """(first, last line) of the innermost function of `source` holding `line`; None at module level or when the
    source does not parse."""
    inside = [span for span in _function_spans(source) if span[0] <= line <= span[1]]
    return max(inside) if inside else None


def _guarded_asserts(node: ast.AST, tests: tuple[str, ...] = ()) -> list[str]:
    """Each `assert` under `node` with the tests of the `if`/`while` statements it runs under: put under a new
    `if`, an assert runs less often, which is a change of it as much as an edit of its text."""
    out: list[str] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Assert):
            out.append(" / ".join([*tests, ast.unparse(child)]))
        elif isinstance(child, (ast.If, ast.While)):
            inner = (*tests, ast.unparse(child.test))
            out += [a for stmt in child.body for a in _guarded_asserts_of(stmt, inner)]
            out += [a for stmt in child.orelse for a in _guarded_asserts_of(stmt, (*inner, "else"))]
        elif isinstance(child, ast.stmt):
            out += _guarded_asserts(child, tests)
    return out


def _guarded_asserts_of(statement: ast.stmt, tests: tuple[str, ...]) -> list[str]:
    return _guarded_asserts(ast.Module(body=[statement], type_ignores=[]), tests)


@functools.lru_cache(maxsize=64)  # the function before any candidate: the same for all of its candidates
def _facts(function_text: str) -> _Facts | None:
    tree = _tree(textwrap.dedent(function_text))
    if tree is None or not tree.body or not isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    function = tree.body[0]
    stored: dict[str, set[int]] = {}
    loaded: dict[str, int] = {}
    declared: set[str] = set()
    together: dict[str, set[str]] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            stored.setdefault(node.id, set()).add(node.lineno)
        elif isinstance(node, ast.Name):
            loaded[node.id] = loaded.get(node.id, 0) + 1
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            declared |= set(node.names)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                group = {e.id for e in getattr(target, "elts", []) if isinstance(e, ast.Name)}
                for name in group:
                    together[name] = together.get(name, set()) | (group - {name})
    params = [a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)]
    unused = {n for n in set(stored) - set(loaded) - declared if not n.startswith("_")}
    statements = sum(isinstance(n, ast.stmt) for n in ast.walk(function))
    asserts = {line for n in ast.walk(function) if isinstance(n, ast.Assert)
               for line in range(n.lineno, (n.end_lineno or n.lineno) + 1)}
    texts = sorted(_guarded_asserts(function))
    return _Facts(unused, together, {p: loaded.get(p, 0) for p in params}, statements, stored, asserts, texts)


def _dead_stores(function_text: str, lines: range) -> set[str]:
    """The names `lines` (1-based, of the dedented function) bind that nothing reads after them: no read on a
    later line, and none in a loop holding the binding (its next turn would read it); not a `global` or
    `nonlocal` one, nor a `_` name."""
    tree = _tree(textwrap.dedent(function_text))
    if tree is None or not tree.body:
        return set()
    nodes = list(ast.walk(tree.body[0]))
    declared = {name for n in nodes if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}
    loads = [n for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    loops = [n for n in nodes if isinstance(n, (ast.For, ast.AsyncFor, ast.While))]
    dead: set[str] = set()
    for store in (n for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)):
        if store.lineno not in lines or store.id in declared or store.id.startswith("_"):
            continue
        spans = [(loop.lineno, loop.end_lineno or loop.lineno) for loop in loops
                 if loop.lineno <= store.lineno <= (loop.end_lineno or loop.lineno)]
        if not any(n.id == store.id and (n.lineno > lines[-1] or any(a <= n.lineno <= b for a, b in spans))
                   for n in loads):
            dead.add(store.id)
    return dead


def concerns(source: str, mutant: Mutant) -> tuple[str, ...]:
    """What the candidate leaves wrong in its function, compared with `source` (the file before it)."""
    function = innermost_function(source, mutant.line)
    if function is None or function[1] < mutant.last:
        return ()
    lines = source.split("\n")
    first, last = function
    before = _facts("\n".join(lines[first - 1 : last]))
    after_text = "\n".join([*lines[first - 1 : mutant.line - 1], mutant.text, *lines[mutant.last : last]])
    after = _facts(after_text)
    if before is None or after is None:
        return ()
    changed = set(range(mutant.line - first + 1, mutant.line - first + 1 + mutant.text.count("\n") + 1))
    newly_used = before.unused - after.unused
    # newly unused; or unused still, and assigned on the changed lines (`l_bar_user, r_bar = ...`) or beside a
    # name the candidate starts to use (`l_bar_user, r_bar_user = ...` and then only `r_bar_user` used)
    left = sorted((after.unused - before.unused) | {
        n for n in after.unused & before.unused
        if after.together.get(n, set()) & newly_used or after.stored_on.get(n, set()) & changed})
    out = [f"leaves `{name}` unused" for name in left]
    at = mutant.line - first + 1  # the changed lines, in the function as it was and as the candidate leaves it
    bound = _dead_stores("\n".join(lines[first - 1 : last]), range(at, mutant.last - first + 2))
    for name in sorted(_dead_stores(after_text, range(at, at + mutant.text.count("\n") + 1)) - bound - set(left)):
        out.append(f"binds `{name}`, which nothing reads after")  # `names = unique.sort()`: the binding dropped
    for param, uses in before.param_uses.items():
        if uses and not after.param_uses.get(param):
            out.append(f"drops the only use of `{param}`" if uses == 1 else f"drops every use of `{param}`")
    if after.statements < before.statements:
        out.append("deletes a statement")
    if before.asserts & set(range(mutant.line - first + 1, mutant.last - first + 2)) and (
            before.assert_texts != after.assert_texts):  # a statement moved past an `assert` leaves it as it was
        out.append("changes an `assert` of the code")  # its author's own check, relaxed until the tests pass
    return tuple(out)


def with_concerns(mutant: Mutant, source: str) -> Mutant:
    """`mutant` with its concerns recorded and named in its description."""
    found = concerns(source, mutant)
    if not found:
        return mutant
    return replace(mutant, concerns=found, description=f"{mutant.description}; {', '.join(found)}")


def templates_for(root: Path, sources: dict[str, str], ranked: list[tuple[float, str, int]],
                  exceptions: list[str] | None, inputs: FailingInputs = NO_INPUTS,
                  gates: Sequence[tuple[str, int]] = ()) -> list[Mutant]:
    """The templates of the TEMPLATE_LINES most suspicious lines of `ranked` ((score, file, line), best
    first), at most MAX_TEMPLATES, the evidence templates and hoists (moves.hoist_edits: rare) of the
    EVIDENCE_LINES most suspicious, and the condition swaps of the `gates` (gate_lines)."""
    lines = list(dict.fromkeys((file, line) for _, file, line in ranked if file in sources))[:TEMPLATE_LINES]
    lines += [site for site in inputs.crash_sites if site[0] in sources and site not in lines]  # evidence/inputs.py
    trees = {file: tree for file, tree in ((f, _tree(s)) for f, s in sources.items()) if tree is not None} \
        if exceptions else {}
    around = handled_around(trees, ((file, line) for _, file, line in ranked))
    out = [m for file, line in lines
           for m in template_mutants(file, sources[file], line, exceptions, root, list(trees.values()), inputs,
                                     around)]
    further = list(dict.fromkeys((file, line) for _, file, line in ranked if file in sources))
    rare = [m for file, line in further[TEMPLATE_LINES:EVIDENCE_LINES]  # the few the failure asks for, and hoists
            for m in template_mutants(file, sources[file], line, exceptions, root, list(trees.values()), inputs,
                                      around, evidence_only=True)]
    out += [m for m in rare if m.tier == EVIDENCE_TIER]
    out += regex_class_mutants(root, sources, [file for file, _ in lines], inputs.letters)
    seen: set[tuple[str, str]] = set()
    unique = []
    for mutant in out:  # the same source reached from two lines (a `return` added at a function's end) once
        key = (mutant.path, mutant.applied(sources[mutant.path]))
        if key not in seen:
            seen.add(key)
            unique.append(mutant)
    evidence = [m for m in unique if m.tier == EVIDENCE_TIER]  # few: kept whatever the cap
    kept = [m for m in [*(m for m in rare if m.tier != EVIDENCE_TIER), *gate_swaps(sources, gates)]
            if (m.path, m.applied(sources[m.path])) not in seen]  # kept too: a handful (hoists, GATE_LINES gates)
    return evidence + [m for m in unique if m.tier != EVIDENCE_TIER][:MAX_TEMPLATES] + kept


def gate_lines(sources: dict[str, str], suspects: Sequence[Suspect]) -> list[tuple[str, int]]:
    """The `if` lines, inside the suspect functions, whose body calls another suspect function: the call runs
    when it should not (or the other way round), and the condition is the bug, not a line the failing test
    runs more than the passing ones (an `if` that asks the wrong question before a call that must only run
    in the other case). The called suspect's order
    first, at most GATE_LINES."""
    names = {name: n for n, s in reversed(list(enumerate(suspects)))
             if s.function and (name := s.function.rsplit(".", 1)[-1]) not in _BUILTIN_METHODS}
    found: list[tuple[int, str, int]] = []
    for file in dict.fromkeys(s.file for s in suspects):
        tree = _tree(sources.get(file, ""))
        if tree is None:
            continue
        spans = [(s.start_line, s.end_line, s.function.rsplit(".", 1)[-1]) for s in suspects
                 if s.file == file and s.function]
        for node in ast.walk(tree):
            if not isinstance(node, ast.If):
                continue
            within = [own for a, b, own in spans if a <= node.lineno <= b]
            if not within or node.test.lineno != node.test.end_lineno or len(node.body) > 3:
                continue
            called = [names[name] for stmt in node.body if isinstance(stmt, _GATED)  # a short body of calls,
                      for c in ast.walk(stmt) if isinstance(c, ast.Call)  # not recursion
                      and (name := _called_name(c) or "") in names and name not in within]
            if called:
                found.append((min(called), file, node.lineno))
    return [(file, line) for _, file, line in sorted(found)][:GATE_LINES]


_GATED = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return)
# a suspect named like a method of a builtin type (`append`, `value`s of a dict) cannot be told from it by name
_BUILTIN_METHODS = frozenset(name for kind in (list, dict, str, set, bytes, tuple) for name in dir(kind))


def _called_name(call: ast.Call) -> str | None:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def gate_swaps(sources: dict[str, str], gates: Sequence[tuple[str, int]]) -> list[Mutant]:
    """The condition of each gate line swapped for another test of its function (conditions.py)."""
    out: list[Mutant] = []
    for file, line in gates:
        tree = _tree(sources[file])
        lines = sources[file].split("\n")
        place = Place(tree, lines, line) if tree is not None else None
        if place is not None and place.statement is not None and place.function is not None:
            out += [Mutant(file, line, e.text, e.description, TEMPLATE_TIER)
                    for e in condition_swaps(lines, place.statement, place.function, tree)]
    return out


def regex_class_mutants(root: Path, sources: dict[str, str], files: Sequence[str],
                        letters: Sequence[str]) -> list[Mutant]:
    """The regular expressions of the suspicious modules, and of the project modules they import, whose letter
    classes miss a letter of the failing tests (literals.regex_class_edits), as EVIDENCE_TIER mutants: a
    module constant runs at import, so no suspicious line points at it. An imported module's source joins
    `sources`."""
    if not letters:
        return []
    modules: list[str] = []
    for file in dict.fromkeys(files):
        tree = _tree(sources[file])
        modules += [file, *(imported_files(tree, file, root) if tree is not None else [])]
    out: list[Mutant] = []
    for file in dict.fromkeys(modules):
        if file not in sources:
            try:
                sources[file] = read_exact(root / file)
            except (OSError, UnicodeDecodeError):
                continue
        tree = _tree(sources[file])
        if tree is not None:
            out += [Mutant(file, e.first, e.text, e.description, EVIDENCE_TIER)
                    for e in regex_class_edits(tree, sources[file].split("\n"), letters)]
    return out


def arrange(singles: list[Mutant], templates: list[Mutant], sources: dict[str, str], limit: int,
            crashed: bool = False) -> list[Mutant]:
    """The order the search tries `singles` (already ranked) and `templates` in (see the module's docstring);
    `crashed`: the failing tests raised an exception of their code (templates come sooner)."""
    marked = [with_concerns(m, sources[m.path]) for m in singles]
    extra = [with_concerns(m, sources[m.path]) for m in templates]
    after = TEMPLATES_AFTER_CRASH if crashed else TEMPLATES_AFTER
    head, tail = marked[:after], marked[after:]

    def clean(group: list[Mutant]) -> list[Mutant]:
        return [m for m in group if not m.concerns]

    def flagged(group: list[Mutant]) -> list[Mutant]:
        return [m for m in group if m.concerns]

    first = [m for m in extra if m.tier == EVIDENCE_TIER]  # what the failure itself asks for: a few, tried first
    extra = [m for m in extra if m.tier != EVIDENCE_TIER]
    return [*clean(first), *clean(head), *clean(extra), *flagged(head), *flagged(first), *flagged(extra),
            *clean(tail), *flagged(tail)][:limit]
