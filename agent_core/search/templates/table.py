"""The table of template kinds, and the templates of one suspicious line made from it.

Templates are the edits real fixes make beyond one token (the one-line catalogue's): control flow added
around a statement, names or arguments changed together, a statement moved, a literal widened. Each kind is
a row of KINDS: its name, its tier (EVIDENCE_TIER: the failure itself asks for it, tried before every single
edit; TEMPLATE_TIER: after the single edits, placed by driver/ranking.py), its cap per line, when it applies,
and whether it is rare enough to be made for the lines beyond the templates' own too. `template_mutants`
makes a line's templates in the table's order, keeps the ones that parse, and caps them at MAX_PER_LINE.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

from agent_core.analysis import pysyntax
from agent_core.search.candidate import Edit, Mutant
from agent_core.search.evidence.inputs import NO_INPUTS, FailingInputs
from agent_core.search.templates.arguments import flag_edits, keyword_edits, moved_argument_edits, unread_edits
from agent_core.search.templates.cases import case_edits, constant_widenings, other_case, widening_edits
from agent_core.search.templates.classes import enter_edits, property_edits, super_init_edits, uncall_edits
from agent_core.search.templates.conditions import condition_swaps
from agent_core.search.templates.conversions import (
    LAZY,
    binary_edits,
    concat_edits,
    decoded_edits,
    items_edits,
    joined_edits,
    listed_edits,
    method_twin_edits,
    serializer_edits,
)
from agent_core.search.templates.effects import effect_edits, fall_off_edits, raise_edits, setdefault_edits
from agent_core.search.templates.guards import (
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
    or_edits,
    translate_templates,
    widen_templates,
)
from agent_core.search.templates.in_place import in_place_edits
from agent_core.search.templates.iterators import copy_edits, reread_edits
from agent_core.search.templates.literals import missing_f_edits, sibling_case_edits
from agent_core.search.templates.loops import break_edits
from agent_core.search.templates.missing import (
    await_edits,
    empty_edits,
    get_edits,
    global_edits,
    pop_edits,
    self_edits,
)
from agent_core.search.templates.moves import hoist_edits, move_edits
from agent_core.search.templates.names import line_names, outer_name_edits, separator_edits, twin_edits
from agent_core.search.templates.place import Place, owner
from agent_core.search.templates.refusals import refusal_templates
from agent_core.search.templates.retype import retyped_guards
from agent_core.search.templates.sentinels import sentinel_templates
from agent_core.search.templates.sharing import alias_edits, deep_copy_edits
from agent_core.search.templates.truth import find_edits, none_test_edits, or_default_edits

TEMPLATE_TIER = 20  # after every single-edit tier of the catalogue
# a template the failure itself asks for (an exception's cause or type, a character of the failing test's input
# that a literal set of characters lacks): few, and tried before every single edit
EVIDENCE_TIER = -1
MAX_PER_LINE = 32
MAX_GUARDS = 8  # guards (objects x `is None`/`not` x exits)
MAX_TRIES = 8
MAX_BLOCKS = 6


@dataclass
class Site:
    """A suspicious line's statement, with what the template kinds read around it."""

    path: str
    root: Path | None
    tree: ast.Module
    lines: list[str]
    line: int  # the statement's first line
    place: Place
    inputs: FailingInputs
    exceptions: list[str]  # the failing tests' exception types
    crashed: bool  # a failing test crashed at this line
    handled: list[str] = field(default_factory=list)  # what the callers' `try` blocks catch

    @property
    def statement(self) -> ast.stmt:
        assert self.place.statement is not None  # a Site is made for a statement only
        return self.place.statement

    @property
    def function(self) -> ast.AST:
        assert self.place.function is not None
        return self.place.function

    @cached_property
    def text(self) -> str:
        return self.lines[self.line - 1]

    @cached_property
    def nodes(self) -> list[ast.AST]:
        return [n for n in ast.walk(self.statement) if getattr(n, "lineno", None) == self.line]

    @cached_property
    def scope(self) -> set[str]:
        return self.place.scope()

    @cached_property
    def formatted(self) -> tuple[list[Edit], bool]:
        """A format string given its missing `f`, and whether a failing test's message shows its braces."""
        return missing_f_edits(self.lines, self.statement, self.scope, self.inputs.braced)

    @cached_property
    def other_case(self) -> bool:
        """Whether a failing test writes a literal of the statement in another case (then cases are evidence)."""
        return any(other_case(n.value, self.inputs.words) for n in ast.walk(self.statement)
                   if isinstance(n, ast.Constant))

    @cached_property
    def lacking(self) -> bool:
        """Whether a failing test read an attribute that the statement's class lacks (classes.super_init_edits)."""
        cls = owner(self.tree, self.place.function)
        return cls is not None and any(kind == cls.name for kind, _ in self.inputs.wrong_types)

    def cased(self) -> list[Edit]:
        return [*case_edits(self.text, self.nodes, self.line),
                *sibling_case_edits(self.lines, self.place.body, self.statement)]


@dataclass(frozen=True)
class Kind:
    """A row of the table: a template kind, its tier, its cap per line, when it applies, and whether it is made
    for the lines beyond the templates' own (`rare`: few candidates, each likely where it applies)."""

    name: str
    tier: int
    make: Callable[[Site], list[Edit]]
    cap: int | None = None
    when: Callable[[Site], bool] = lambda site: True
    rare: bool = False

    def edits(self, site: Site) -> list[Edit]:
        return [replace(e, kind=self.name) for e in self.make(site)[: self.cap]] if self.when(site) else []


KINDS: tuple[Kind, ...] = (  # the order a line's templates are tried in (within a tier)
    Kind("cause", EVIDENCE_TIER, lambda s: cause_templates(s.place)),
    Kind("mutable default", EVIDENCE_TIER, lambda s: mutable_default_templates(s.place)),
    Kind("retyped test", EVIDENCE_TIER, lambda s: retyped_guards(s.tree, s.lines, s.statement, s.path,
                                                                 s.inputs.wrong_types, s.root)),
    Kind("refusal lifted", EVIDENCE_TIER, lambda s: refusal_templates(s.lines, s.statement, s.function,
                                                                      s.inputs.empties), when=lambda s: s.crashed),
    Kind("handler widened", EVIDENCE_TIER, lambda s: widen_templates(s.place, s.exceptions)),
    Kind("exception translated", EVIDENCE_TIER, lambda s: translate_templates(s.place, s.exceptions, s.handled)),
    Kind("collection widened", EVIDENCE_TIER, lambda s: widening_edits(s.text, s.nodes, s.line,
                                                                       s.inputs.characters)),
    Kind("get", EVIDENCE_TIER, lambda s: get_edits(s.text, s.nodes, s.line), when=lambda s: "KeyError" in s.exceptions),
    Kind("pop default", EVIDENCE_TIER, lambda s: pop_edits(s.text, s.statement, s.nodes, s.line),
         when=lambda s: "KeyError" in s.exceptions),
    Kind("global", EVIDENCE_TIER, lambda s: global_edits(s.lines, s.function, s.tree, s.inputs.unbound_locals)),
    Kind("await", EVIDENCE_TIER, lambda s: await_edits(s.text, s.statement, s.line, s.tree, s.function),
         when=lambda s: s.inputs.coroutine),
    Kind("self", EVIDENCE_TIER, lambda s: self_edits(s.text, s.nodes, s.line, s.inputs.undefined, s.place.functions,
                                                     s.tree)),
    Kind("unread parameter", EVIDENCE_TIER, lambda s: unread_edits(s.text, s.tree, s.nodes, s.line, s.function,
                                                                   s.root, s.path)),
    Kind("no effect", EVIDENCE_TIER, lambda s: effect_edits(s.text, s.statement, s.line)),
    Kind("not raised", EVIDENCE_TIER, lambda s: raise_edits(s.text, s.statement, s.line, s.tree)),
    Kind("default kept", EVIDENCE_TIER, lambda s: setdefault_edits(s.text, s.statement, s.line)),
    Kind("except or", EVIDENCE_TIER, lambda s: or_edits(s.place)),
    Kind("flag as count", EVIDENCE_TIER, lambda s: flag_edits(s.text, s.nodes, s.line)),
    Kind("position as truth", EVIDENCE_TIER, lambda s: find_edits(s.text, s.statement, s.nodes, s.line)),
    Kind("enter returns", EVIDENCE_TIER, lambda s: enter_edits(s.tree, s.lines, s.function)),
    Kind("base init", EVIDENCE_TIER, lambda s: super_init_edits(s.tree, s.lines, s.function), when=lambda s: s.lacking),
    Kind("listed", EVIDENCE_TIER, lambda s: listed_edits(s.text, s.nodes, s.line),
         when=lambda s: bool(s.inputs.unsubscriptable & LAZY)),
    Kind("joined", EVIDENCE_TIER, lambda s: joined_edits(s.text, s.nodes, s.line), when=lambda s: s.inputs.joined),
    Kind("decoded", EVIDENCE_TIER, lambda s: decoded_edits(s.text, s.nodes, s.line),
         when=lambda s: s.inputs.bytes_shown),
    Kind("serializer twin", EVIDENCE_TIER, lambda s: serializer_edits(s.text, s.nodes, s.line),
         when=lambda s: s.inputs.files),
    Kind("pairs walked", EVIDENCE_TIER, lambda s: items_edits(s.text, s.statement, s.nodes, s.line),
         when=lambda s: s.inputs.unpacking),
    Kind("text joined", EVIDENCE_TIER, lambda s: concat_edits(s.text, s.nodes, s.line),
         when=lambda s: s.inputs.concatenated),
    Kind("property", EVIDENCE_TIER, lambda s: property_edits(s.tree, s.lines, s.nodes, s.line),
         when=lambda s: s.inputs.method_values),
    Kind("property called", EVIDENCE_TIER, lambda s: uncall_edits(s.tree, s.text, s.nodes, s.line),
         when=lambda s: s.inputs.not_callable),
    Kind("empty default", EVIDENCE_TIER, lambda s: empty_edits(s.text, s.nodes, s.line),
         when=lambda s: s.inputs.emptied),
    Kind("binary", EVIDENCE_TIER, lambda s: binary_edits(s.text, s.nodes, s.line),
         when=lambda s: s.inputs.bytes_wanted),
    Kind("aliased", EVIDENCE_TIER, lambda s: alias_edits(s.text, s.statement, s.line)),
    Kind("fell off", EVIDENCE_TIER, lambda s: fall_off_edits(s.lines, s.function), when=lambda s: s.inputs.nones),
    Kind("iterator reread", EVIDENCE_TIER, lambda s: reread_edits(s.tree, s.lines, s.place.function, s.statement)),
    Kind("copy walked", EVIDENCE_TIER, lambda s: copy_edits(s.lines, s.place.function, s.statement)),
    Kind("in place", EVIDENCE_TIER, lambda s: in_place_edits(s.text, s.statement, s.line),
         when=lambda s: s.inputs.nones),
    Kind("constant widened", EVIDENCE_TIER, lambda s: constant_widenings(s.tree, s.lines, s.place.functions[-1],
                                                                         s.inputs.characters)),
    Kind("f-string", EVIDENCE_TIER, lambda s: s.formatted[0], when=lambda s: s.formatted[1]),
    Kind("case", EVIDENCE_TIER, Site.cased, when=lambda s: s.other_case),
    Kind("hoist", TEMPLATE_TIER, lambda s: hoist_edits(s.tree, s.lines, s.statement), rare=True),
    Kind("sentinel", TEMPLATE_TIER, lambda s: sentinel_templates(s.tree, s.lines, s.statement, s.function), rare=True),
    Kind("move", TEMPLATE_TIER, lambda s: move_edits(s.lines, s.place.body, s.statement)),
    Kind("bound guard", TEMPLATE_TIER, lambda s: bound_guard_templates(s.place)),
    Kind("guard where set", TEMPLATE_TIER, lambda s: set_guard_templates(s.place), cap=MAX_GUARDS // 2),
    Kind("guard", TEMPLATE_TIER, lambda s: guard_templates(s.place), cap=MAX_GUARDS),
    Kind("try", TEMPLATE_TIER, lambda s: try_templates(s.place, s.exceptions), cap=MAX_TRIES),
    Kind("block under if", TEMPLATE_TIER, lambda s: block_templates(s.place), cap=MAX_BLOCKS),
    Kind("return added", TEMPLATE_TIER, lambda s: return_templates(s.place)),
    Kind("case", TEMPLATE_TIER, Site.cased, when=lambda s: not s.other_case),
    Kind("f-string", TEMPLATE_TIER, lambda s: s.formatted[0], when=lambda s: not s.formatted[1]),
    Kind("in place", TEMPLATE_TIER, lambda s: in_place_edits(s.text, s.statement, s.line),
         when=lambda s: not s.inputs.nones),
    Kind("twin names", TEMPLATE_TIER, lambda s: twin_edits(s.text, line_names(s.nodes, s.line), s.scope, s.line)),
    Kind("keyword", TEMPLATE_TIER, lambda s: keyword_edits(s.text, s.tree, s.nodes, s.line, s.scope, s.root, s.path)),
    Kind("argument moved", TEMPLATE_TIER, lambda s: moved_argument_edits(s.text, s.nodes, s.line)),
    Kind("outer name", TEMPLATE_TIER, lambda s: outer_name_edits(s.text, line_names(s.nodes, s.line),
                                                                 s.place.functions, s.tree, s.line)),
    Kind("separator", TEMPLATE_TIER, lambda s: separator_edits(s.text, s.tree, s.nodes, s.line)),
    Kind("condition", TEMPLATE_TIER, lambda s: condition_swaps(s.lines, s.statement, s.function, s.tree)),
    # the linters' classes tried last of a line's templates: the kinds above keep the order they were measured in
    Kind("base init", TEMPLATE_TIER, lambda s: super_init_edits(s.tree, s.lines, s.function),
         when=lambda s: not s.lacking),
    Kind("serializer twin", TEMPLATE_TIER, lambda s: serializer_edits(s.text, s.nodes, s.line),
         when=lambda s: not s.inputs.files),
    Kind("fell off", TEMPLATE_TIER, lambda s: fall_off_edits(s.lines, s.function), when=lambda s: not s.inputs.nones),
    Kind("deep copy", TEMPLATE_TIER, lambda s: deep_copy_edits(s.text, s.nodes, s.line)),
    Kind("given", TEMPLATE_TIER, lambda s: none_test_edits(s.text, s.statement, s.nodes, s.line)),
    Kind("or given", TEMPLATE_TIER, lambda s: or_default_edits(s.text, s.nodes, s.line)),
    Kind("break", TEMPLATE_TIER, lambda s: break_edits(s.lines, s.function, s.statement)),
    Kind("method twin", TEMPLATE_TIER, lambda s: method_twin_edits(s.text, s.nodes, s.line)),
)


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


def _site(path: str, source: str, line: int, exceptions: list[str], root: Path | None,
          inputs: FailingInputs) -> Site | None:
    """The statement starting at `line` (or holding it: a call's argument line), when it is in a function."""
    lines = source.split("\n")
    if not 1 <= line <= len(lines) or not lines[line - 1].strip():
        return None
    try:
        tree = pysyntax.parse_shared(source)
    except (SyntaxError, ValueError):
        return None
    place = Place(tree, lines, line, inputs.none_attributes)
    crashed_here = (path, line) in inputs.crash_sites
    if place.statement is None and (start := _statement_start(tree, line)):
        line = start  # a line inside a statement (a call's arguments): the statement's templates
        place = Place(tree, lines, line, inputs.none_attributes)
    if place.statement is None or place.function is None:
        return None
    return Site(path, root, tree, lines, line, place, inputs, exceptions, crashed_here)


def template_mutants(path: str, source: str, line: int, exceptions: list[str] | None = None,
                     root: Path | None = None, callers: Iterable[ast.Module] = (),
                     inputs: FailingInputs = NO_INPUTS, around: Sequence[str] = (),
                     evidence_only: bool = False) -> list[Mutant]:
    """The templates of `line` (1-based) of `source` that parse, at most MAX_PER_LINE, in the table's order;
    `callers`: the parsed modules whose `try` blocks may call the line's function, `around`: what the `try`
    blocks around suspicious lines catch (handlers.py); `inputs`: what the failing tests' inputs are made of.
    `evidence_only`: only the EVIDENCE_TIER kinds and the rare ones, for lines beyond the templates' own."""
    site = _site(path, source, line, exceptions or [], root, inputs)
    if site is None:
        return []
    if exceptions:
        site.handled = (handled_by_callers([site.tree, *callers], site.function.name)  # type: ignore[attr-defined]
                        or list(around))
    out: list[Mutant] = []
    seen = {site.text}
    for kind in KINDS:
        if evidence_only and kind.tier != EVIDENCE_TIER and not kind.rare:
            continue
        for edit in kind.edits(site):
            mutant = edit.mutant(path, kind.tier)
            if edit.text not in seen and _parses(source, mutant, site.place.functions[0]):
                seen.add(edit.text)
                out.append(mutant)
    return out[:MAX_PER_LINE]
