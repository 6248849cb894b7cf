"""Right, not just green: a second candidate that passes too, and an input on which the two disagree.

When the search has verified its winner W (search/driver/single_edit.py), one more driver
run tries the candidates of W's function that the search had not reached yet
(its driver stops at the first candidate that passes, so the batch that found
W holds no second one), on the file as it was before W (W is put back
afterwards, whatever happens), at most RIVAL_CANDIDATES of them. The first
that passes the failing tests (and, on a fast suite, every test W's suite run
passed) is the rival R; it is verified like W (the whole suite, the same
bounds), and only when what is left of `search.budget_s` covers that run's
bound: one rival at most. When both pass, the function is
called in the sandbox, W's version and R's side by side, on the arguments the
project's tests pass to it and simple variations of them
(search/driver/call_inputs.py, search/inside/compare_script.py); the first call on which
they give different results is the finding. The figures go into the search's
stats (`rival_tried`, and `rival` when one passed), hence the journal's
`search` record; `rival_sentence` says it in one sentence for the fix's
explanation. Like the rest of the search this never fails the run: what
breaks is `rival_error`.

A winner that does less gives way (`drops`): when W's version of the function
has fewer of the names, attributes or keyword arguments the function had
than before, and fewer in all (an argument deleted, a call dropped: `set(words,
key=len)` -> `set(words)`; not a name swapped for another), and the rival R, with no concern of its own
(driver/ranking.py), keeps every one of them (`set(words), key=len`), R is
the fix: it is kept in the shadow in W's place, and the sentence names W
and what it drops. Deleting code is the commonest way to green that does not
fix: of the plausible patches of three generate-and-validate repair tools,
most deleted functionality (Qi, Long, Achour and Rinard, "An analysis of
patch plausibility and correctness for generate-and-validate patch
generation systems", ISSTA 2015). Whether an input told the two apart or
not, R is kept: no test says which result is right, and the code the
function had is the better guide.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import shutil
import textwrap
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_core.analysis import pysyntax
from agent_core.analysis.unbound import module_names, scopes
from agent_core.models import TestReport
from agent_core.search.candidate import Mutant
from agent_core.search.driver.call_inputs import Call, generated_inputs, shown, test_calls
from agent_core.search.driver.describe import describe_change
from agent_core.search.driver.sandboxed import driver_error, try_mutants
from agent_core.workspace.hostread import fresh_dir, read_planted_text
from agent_core.workspace.shadow import read_exact, write_exact

RIVAL_CANDIDATES = 60  # candidates of the winner's function tried for a rival (one driver run)
RIVAL_DRIVER_S = 20.0  # that run's own budget, at most
MIN_DRIVER_S = 2.0  # less left than this (after the rival's verification bound): no rival is looked for
CALL_S = 1.0  # one call of one version, at most
COMPARE_S = 30.0  # the whole comparison run, at most (and never past the search's deadline)
MIN_COMPARE_S = 3.0  # less left than this: not compared
SCRIPT_MARGIN_S = 2.0  # the script stops comparing this long before its run's timeout (to write what it found)
DIFFER_DIR = ".agentls/differ"
_SCRIPT = Path(__file__).parent.parent / "inside" / "compare_script.py"
RESULT_CAP = 64 * 1024
MAX_CHECKS = 300  # a suite of more tests: a rival runs the failing tests (and their covering ones) only


@dataclass
class RivalSearch:
    """What looking for a rival of the verified `winner` needs from the search that found it."""

    winner: Mutant
    source: str  # the winner's file as it was before the winner
    rest: list[Mutant]  # the candidates the search had not tried yet, in its order
    failing: list[str]
    suite: TestReport  # the winner's whole-suite run
    mutant_timeout_s: float
    covering: Callable[[Mutant], list[str]] | None
    verify: Callable[[Mutant], Awaitable[TestReport | None]]  # the whole suite, kept in the shadow when it passes
    verify_s: float  # the most that verification may take
    deadline: float
    test_files: list[str]  # the project's test files (where the function's arguments are read)

    @property
    def checks(self) -> list[str]:
        """The tests a rival runs in the driver: the failing ones and, on a suite fast enough to need no
        covering tests (driver/single_edit.py), every test the winner's suite run passed (one candidate is verified
        at most, so the driver should not stop at one that passes the failing tests and breaks another)."""
        if self.covering is not None or len(self.suite.outcomes) > MAX_CHECKS:
            return self.failing
        return list(dict.fromkeys([*self.failing, *(t for t, o in self.suite.outcomes.items() if o == "passed")]))


def _span(node: ast.stmt) -> tuple[int, int]:
    """A statement's first line (its first decorator's, for a def) and last line."""
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)]), node.end_lineno or node.lineno


def function_at(source: str, line: int) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef | None, bool]:
    """The outermost function of the module or of a class that holds `line`, and whether it is the module's."""
    try:
        body: list[ast.stmt] = pysyntax.parse(source).body
    except (SyntaxError, ValueError):
        return None, False
    top = True
    while True:
        node = next((n for n in body if _span(n)[0] <= line <= _span(n)[1]), None)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return node, top
        if not isinstance(node, ast.ClassDef):
            return None, False
        body, top = node.body, False


def function_text(source: str, line: int) -> str:
    """The text (decorators included) of the function holding `line` of `source`."""
    node, _ = function_at(source, line)
    if node is None:
        return ""
    start, end = _span(node)
    return "\n".join(source.split("\n")[start - 1 : end]) + "\n"


def _code(function: str) -> str:
    """The function's syntax tree, as text: two spellings of one edit (`n + 1`, `(n + 1)`) are the same code."""
    try:
        return ast.dump(pysyntax.parse(textwrap.dedent(function)))
    except (SyntaxError, ValueError):
        return function


def rival_candidates(search: RivalSearch) -> list[Mutant]:
    """The untried candidates that make the winner's function other code than the winner did."""
    winner, source = search.winner, search.source
    node, _ = function_at(source, winner.line)
    if node is None:
        return []
    start, end = _span(node)
    fixed = _code(_edited(source, start, end, winner))
    out: list[Mutant] = []
    for m in search.rest:
        if m.path == winner.path and start <= m.line and m.last <= end and len(out) < RIVAL_CANDIDATES:
            if _code(_edited(source, start, end, m)) != fixed:
                out.append(m)
    return out


def _edited(source: str, start: int, end: int, mutant: Mutant) -> str:
    """Lines `start`..`end` of `source` (a function holding the mutant's lines) with the mutant in place."""
    grown = mutant.text.count("\n") + 1 - (mutant.last - mutant.line + 1)
    return "\n".join(mutant.applied(source).split("\n")[start - 1 : end + grown])


def _walk(code: str) -> list[ast.AST]:
    """Every node of `code` (dedented), or none when it does not parse."""
    try:
        return list(ast.walk(pysyntax.parse(textwrap.dedent(code))))
    except (SyntaxError, ValueError):
        return []


def _atoms(code: str) -> Counter[str]:
    """The names, attributes (`.name`) and keyword arguments (`name=`) of `code`, counted (not its constants: a
    constant changed is a value replaced, not code dropped)."""
    out: Counter[str] = Counter()
    for node in _walk(code):
        if isinstance(node, ast.Name):
            out[node.id] += 1
        elif isinstance(node, ast.Attribute):
            out["." + node.attr] += 1
        elif isinstance(node, ast.keyword) and node.arg:
            out[node.arg + "="] += 1
    return out


def _before_after(source: str, mutant: Mutant, count: Callable[[str], Counter[str]]
                  ) -> tuple[Counter[str], Counter[str]] | None:
    """`count` of the function holding the mutant, as it was and with the mutant in place; None outside a
    function."""
    node, _ = function_at(source, mutant.line)
    if node is None:
        return None
    start, end = _span(node)
    return count("\n".join(source.split("\n")[start - 1 : end])), count(_edited(source, start, end, mutant))


def drops(source: str, mutant: Mutant) -> list[str]:
    """What the function holding the mutant has fewer of with the mutant in place (names, `.attributes`,
    `keywords=`), when it has fewer of them in all (code deleted, not replaced: `isString(node)` ->
    `isinstance(node, str)` is a call swapped for another, as the author of a real Markdown fix did), as a
    reader is told it: "`round`" for what is gone, "a use of `total`" for what is left fewer times, those gone
    first; [] when it keeps as much, or outside a function."""
    counted = _before_after(source, mutant, _atoms)
    if counted is None or counted[1].total() >= counted[0].total():
        return []
    before, after = counted
    fewer = sorted(before - after)
    return [f"`{atom}`" for atom in fewer if not after[atom]] + [f"a use of `{atom}`" for atom in fewer if after[atom]]


_RETURN_IN_LOOP, _BREAK, _RETURN_BEFORE_END = "a `return` inside a loop", "a `break`", "an early `return`"


def _exits(body: list[ast.stmt], tail: bool, in_loop: bool, out: Counter[str]) -> None:
    """Counts into `out` the exits of `body` after which more of the function would have run (`tail`: nothing of
    the function follows `body`; `in_loop`: a loop of the function holds it); nested functions and classes are
    their own."""
    for i, statement in enumerate(body):
        last = tail and i == len(body) - 1
        if isinstance(statement, ast.Return):
            if in_loop or not last:
                out[_RETURN_IN_LOOP if in_loop else _RETURN_BEFORE_END] += 1
        elif isinstance(statement, ast.Break):
            out[_BREAK] += 1
        elif isinstance(statement, (ast.For, ast.AsyncFor, ast.While)):
            _exits(statement.body, False, True, out)
            _exits(statement.orelse, last, in_loop, out)
        elif isinstance(statement, ast.Match):
            for case in statement.cases:
                _exits(case.body, last, in_loop, out)
        elif not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            blocks = [getattr(statement, name, None) for name in ("body", "orelse", "finalbody")]
            blocks += [handler.body for handler in getattr(statement, "handlers", [])]
            for block in blocks:
                if block:
                    _exits(block, last, in_loop, out)


def _early_exits(code: str) -> Counter[str]:
    """The exits of the function `code` after which more of it would have run, by kind (`_exits`)."""
    out: Counter[str] = Counter()
    function = next((n for n in _walk(code) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if function is not None:
        _exits(function.body, True, False, out)
    return out


def exits_early(source: str, mutant: Mutant) -> list[str]:
    """The exits the mutant adds to its function after which more of it would have run: "a `return` inside a
    loop" (`return out` under the loop's `if`: the first match, not all), "a `break`", "an early `return`"
    (a guard that gives up before the work); [] when it adds none (a `return` as the last statement is
    the function's result, not an early exit), or outside a function."""
    counted = _before_after(source, mutant, _early_exits)
    return sorted(counted[1] - counted[0]) if counted is not None else []


def _references(source: str) -> Counter[str] | None:
    """How often the module's own functions and methods are named outside their own definition (`helper(...)`,
    `self.helper(...)`, passed as a value), by name; None when `source` does not parse."""
    try:
        tree = pysyntax.parse(source)
    except (SyntaxError, ValueError):
        return None
    defined: dict[str, list[ast.AST]] = {}
    for top in tree.body:
        members = top.body if isinstance(top, ast.ClassDef) else [top]
        for member in members:
            if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)) and not member.name.startswith("__"):
                defined.setdefault(member.name, []).append(member)
    inside = {id(n): name for name, nodes in defined.items() for d in nodes for n in ast.walk(d)}
    out: Counter[str] = Counter({name: 0 for name in defined})
    for node in ast.walk(tree):
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        if name in defined and inside.get(id(node)) != name:
            out[name] += 1
    return out


def leaves_unused(source: str, mutant: Mutant) -> list[str]:
    """The module's functions and methods that the module named before the mutant and names nowhere with it in
    place: a fill that writes out again what a helper of the module did (`values = [float(line) for line in
    lines if ...]` where `values = _numbers(lines)` walked the helper once too often) passes by going around
    the code the tests reach, not by fixing it, and leaves that code dead; sorted, [] when none."""
    before, after = _references(source), _references(mutant.applied(source))
    if before is None or after is None:
        return []
    return sorted(name for name, count in before.items() if count and name in after and not after[name])


def _bindings(source: str, node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[set[str], set[str]] | None:
    """(the module's names, what function `node` binds as its own: assigned, imported, a nested `def` or `class`)
    in `source`, as the compiler's symbol tables say (analysis/unbound.py); None when it does not compile."""
    try:
        top = pysyntax.symbol_table(source)
    except (SyntaxError, ValueError, RecursionError):
        return None
    table = next((t for t in scopes(top) if t.get_type() == "function" and t.get_name() == node.name
                  and t.get_lineno() == node.lineno), None)
    if table is None:
        return None
    own = {s.get_name() for s in table.get_symbols()
           if s.is_local() and (s.is_assigned() or s.is_imported() or s.is_namespace())}
    return module_names(top), own


def shadows(source: str, mutant: Mutant) -> list[str]:
    """The names of the module (a function, class, import or global of it) that the mutant's version of its
    function binds locally (assigned, defined or imported) where the function did not: `words =
    re.compile(...).findall` or a nested `def words(line):` in a function that called the module's own `words`
    works around that function instead of fixing it (pylint's redefined-outer-name); sorted, [] outside a
    function."""
    node, _ = function_at(source, mutant.line)
    if node is None:
        return []
    before, after = _bindings(source, node), _bindings(mutant.applied(source), node)
    if before is None or after is None:
        return []
    return sorted((after[1] - before[1]) & before[0])


def gives_way(source: str, winner: Mutant, rival: Mutant) -> list[str]:
    """What the winner drops, when the rival drops nothing and has no concern: the rival is then the fix (module
    docstring); [] otherwise."""
    if rival.concerns or drops(source, rival):
        return []
    return drops(source, winner)


async def find_rival(deps: Any, search: RivalSearch, candidates: list[Mutant]
                     ) -> tuple[tuple[Mutant, TestReport] | None, int]:
    """The first of `candidates` that passes the failing tests and then the whole suite (within the budget), with
    that suite's report, and how many were tried. The shadow holds the winner again afterwards, or the rival when
    the winner gives way to it (`gives_way`)."""
    target = deps.shadow.root / search.winner.path
    fixed = read_exact(target)
    write_exact(target, search.source)
    kept = fixed
    try:
        left = search.deadline - time.monotonic() - search.verify_s
        if left < MIN_DRIVER_S:
            return None, 0
        results, _ = await try_mutants(deps.sandbox, deps.shadow.root, search.checks, candidates,
                                       mutant_timeout_s=search.mutant_timeout_s, budget_s=min(left, RIVAL_DRIVER_S),
                                       max_passing=1, covering=search.covering, hot=True)
        passing = next((m for m, outcome in results if outcome == "passed"), None)
        if passing is None or search.deadline - time.monotonic() < search.verify_s:
            return None, len(results)
        report = await search.verify(passing)
        if report is None:
            return None, len(results)
        if gives_way(search.source, search.winner, passing):
            kept = passing.applied(search.source)
        return (passing, report), len(results)
    finally:
        write_exact(target, kept)


def import_root(rel: str) -> tuple[str, str]:
    """(the folder to put on sys.path, the dotted module name) of the module at `rel` (walking up its packages)."""
    parts = rel.removesuffix(".py").split("/")
    return "/".join(parts[:-1]) or ".", parts[-1]


def _importable(root: Path, rel: str) -> tuple[str, str]:
    folder, name = import_root(rel)
    while folder != "." and (root / folder / "__init__.py").is_file():
        parent, package = import_root(folder + ".py")
        folder, name = parent, f"{package}.{name}"
    return folder, name


async def _run_script(deps: Any, config: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    """The comparison script's result in the sandbox (it stops comparing at `timeout_s` less a margin), or
    {"error": ...}."""
    root = deps.shadow.root
    config = {**config, "budget_s": max(1.0, timeout_s - SCRIPT_MARGIN_S)}
    folder = fresh_dir(root, DIFFER_DIR)  # never through a link a run planted (workspace/hostread.py)
    try:
        shutil.copyfile(_SCRIPT, folder / "differ.py")
        (folder / "config.json").write_text(json.dumps(config))
        result = await deps.sandbox.run([deps.sandbox.python, f"{DIFFER_DIR}/differ.py", f"{DIFFER_DIR}/config.json"],
                                        root, timeout_s=timeout_s)
        text = read_planted_text(root, f"{DIFFER_DIR}/result.json", RESULT_CAP)
        data = json.loads(text) if text else {}
        return data if isinstance(data, dict) and data else {"error": driver_error(result, None)}
    except (OSError, ValueError) as exc:
        return {"error": f"the comparison could not run: {exc}"}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _given(result: list[str]) -> str:
    kind, text = result
    return f"raises {text}" if kind == "raises" else text


async def tell_apart(deps: Any, search: RivalSearch, rival: Mutant) -> dict[str, Any]:
    """The rival's description, and the first generated call of the function on which it and the winner differ
    (`differs_on`, `winner_gives`, `rival_gives`), or why they were not compared."""
    winner, source = search.winner, search.source
    node, top = function_at(source, winner.line)
    assert node is not None  # the rival was chosen inside it
    out: dict[str, Any] = {"description": describe_change(source, rival.line, rival.text, rival.description),
                           "file": rival.path, "line": rival.line, "function": node.name, "differs_on": None}
    calls: list[Call] = generated_inputs(test_calls(deps.shadow.root, search.test_files, node.name))
    left = min(COMPARE_S, search.deadline - time.monotonic())
    if not top or not calls or left < MIN_COMPARE_S:
        out["not_compared"] = ("a method" if not top else "no literal arguments in the tests" if not calls
                               else "no time left in search.budget_s")
        return out
    folder, module = _importable(deps.shadow.root, winner.path)
    versions = [function_text(m.applied(source), node.lineno) for m in (winner, rival)]
    data = await _run_script(deps, {"sys_path": folder, "module": module, "name": node.name, "versions": versions,
                                    "calls": [[list(a), [list(k) for k in kw]] for a, kw in calls], "call_s": CALL_S},
                             left)
    if data.get("error"):
        out["not_compared"] = str(data["error"])
        return out
    out["inputs"] = data.get("tried", 0)
    if differs := data.get("differs"):
        w, r = differs["results"]
        out.update(differs_on=shown(node.name, calls[differs["call"]]), winner_gives=_given(w), rival_gives=_given(r))
    return out


async def rival_figures(deps: Any, search: RivalSearch) -> tuple[dict[str, Any], tuple[Mutant, TestReport] | None]:
    """`rival_tried` (candidates tried for a rival), with `rival` (tell_apart) when one passed every test, and
    `rival_s`; {} when the winner's function has no other candidate. With them, the rival and its suite's report
    when the winner gave way to it (the shadow holds the rival then; `rival` describes the winner given up, with
    `given_up` what it drops), else None. Never raises: `rival_error` says what broke."""
    started = time.monotonic()
    chosen = None
    try:
        candidates = rival_candidates(search)
        if not candidates:
            return {}, None
        found, tried = await find_rival(deps, search, candidates)
        figures: dict[str, Any] = {"rival_tried": tried}
        if found is not None:
            rival, report = found
            if given_up := gives_way(search.source, search.winner, rival):
                chosen = found
                figures["rival"] = await tell_apart(deps, dataclasses.replace(search, winner=rival), search.winner)
                figures["rival"]["given_up"] = given_up
            else:
                figures["rival"] = await tell_apart(deps, search, rival)
    except Exception as exc:  # noqa: BLE001 - telling candidates apart is an aid: it never costs the fix
        figures = {"rival_error": f"{type(exc).__name__}: {exc}"}
    figures["rival_s"] = round(time.monotonic() - started, 3)
    return figures, chosen


def rival_sentence(rival: dict[str, Any] | None) -> str:
    """One sentence for the fix's explanation: the other green edit, and the input on which they differ."""
    if not rival:
        return ""
    said = f"Another edit also passes the tests: {rival.get('description', '')}"
    if rival.get("given_up"):
        dropped = ", ".join(rival["given_up"])
        said += (f", but it drops {dropped} from the function; this fix keeps them and was chosen in its "
                 "place")
    if rival.get("differs_on"):
        return (f"{said}; they differ on `{rival['differs_on']}`: this fix gives {rival.get('winner_gives')}, "
                f"the other {rival.get('rival_gives')}.")
    if rival.get("inputs"):
        return f"{said}; none of {rival['inputs']} generated inputs told them apart."
    return f"{said} (not compared: {rival.get('not_compared') or 'no inputs'})."
