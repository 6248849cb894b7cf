"""Names a module reads where nothing can have bound them: a candidate that adds one can only crash there.

The model fills a hole from the code around it, the code after the hole too, and
it often reads a name that is not there: one the code after the hole assigns
(`tidx, token = ...` two lines below a clause reading `token`), one the tests'
code uses, or one it made up; the search's own name swaps do it too (a name
swapped for a local assigned further down: 7-20% of the catalogue's mutants of
five real modules' lines). Run, such a line raises NameError or
UnboundLocalError as soon as it is reached, so the candidate cannot be the fix
and its run in the driver is wasted (or, under an `except Exception`, it takes
another path by accident); and counted as a new answer, a model's sample keeps
its hole sampling where the model has nothing left to say
(search/infill/generate.py SATURATED). `unbound_reads` counts them;
`UnboundCheck` tells whether a candidate adds one, for the Sampler
(search/infill/samples.py) and the search's screen (search/driver/screen.py).

A read counts when the standard library's `symtable` (Python's own scope rules:
comprehensions, lambdas, class bodies, `global`, `nonlocal`, closures) resolves
the name to the module and the module never binds it, nor do the builtins; or
when it resolves to a local of the function reading it, is read outside any loop
of that function, and every line binding it comes after the read (no loop can
have bound it before). Where a module imports `*` the module's names are unknown,
and nothing counts; anything the file's own text cannot be read for counts nothing.
No library says this: linters do (pyflakes' undefined names), but none is a
dependency here, and what is needed is a count to compare, not messages.
"""

from __future__ import annotations

import ast
import builtins
import symtable

from agent_core.analysis import pysyntax

MODULE_NAMES = frozenset({"__name__", "__file__", "__doc__", "__spec__", "__loader__", "__package__", "__path__",
                          "__builtins__", "__annotations__", "__dict__", "__cached__"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp, ast.DictComp,
           ast.GeneratorExp)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
# `__class__`: what a method's `super()` reads, bound by its class (a method judged alone has none around it)
_KNOWN = frozenset(dir(builtins)) | MODULE_NAMES | {"__class__"}


def scopes(table: symtable.SymbolTable) -> list[symtable.SymbolTable]:
    """`table` and every scope nested in it, outermost first."""
    out = [table]
    for child in table.get_children():
        out += scopes(child)
    return out


def module_names(top: symtable.SymbolTable) -> set[str]:
    """What the module binds: its own assignments, imports, defs and classes, and what any function assigns after
    declaring it `global`."""
    names = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported() or s.is_namespace()}
    for table in scopes(top)[1:]:
        names |= {s.get_name() for s in table.get_symbols() if s.is_declared_global() and s.is_assigned()}
    return names


def _own_nodes(node: ast.AST) -> list[tuple[ast.AST, bool]]:
    """The nodes of a function's own scope (not of the scopes nested in it), each with whether a loop of the
    function holds it."""
    out: list[tuple[ast.AST, bool]] = []
    stack: list[tuple[ast.AST, bool]] = [(child, False) for child in ast.iter_child_nodes(node)]
    while stack:
        current, looped = stack.pop()
        out.append((current, looped))
        if isinstance(current, _SCOPES):
            continue  # its name is bound here; its body is another scope (defaults and decorators are rare reads)
        inner = looped or isinstance(current, _LOOPS)
        stack += [(child, inner) for child in ast.iter_child_nodes(current)]
    return out


def _binding_line(node: ast.AST) -> tuple[str, int] | None:
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        return node.id, node.lineno
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name, node.lineno
    if isinstance(node, ast.ExceptHandler) and node.name:
        return node.name, node.lineno
    if isinstance(node, ast.alias):
        return (node.asname or node.name.split(".")[0]), getattr(node, "lineno", 0)
    return None


def _early_locals(function: ast.AST, table: symtable.SymbolTable) -> int:
    """Reads of the function's locals outside its loops on a line before every line that binds them."""
    local = {s.get_name() for s in table.get_symbols() if s.is_local() and not s.is_parameter()
             and not s.is_global() and not s.is_free()}
    nodes = _own_nodes(function)
    first: dict[str, int] = {}
    for node, _ in nodes:
        bound = _binding_line(node)
        if bound is not None and bound[0] in local:
            first[bound[0]] = min(first.get(bound[0], bound[1]), bound[1])
    return sum(1 for node, looped in nodes if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
               and not looped and node.id in first and node.lineno < first[node.id])


def _functions(tree: ast.Module) -> dict[tuple[str, int], ast.AST]:
    return {(node.name, node.lineno): node for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _imports_star(tree: ast.Module) -> bool:
    return any(isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names) for node in tree.body)


def unbound_reads(source: str, path: str = "<unknown>", known: frozenset[str] = frozenset()) -> int:
    """How many names `source` reads where nothing can have bound them (module docstring), `known`: names bound
    elsewhere (the module's, when `source` is one function of it); 0 when it does not parse or imports `*`."""
    try:
        tree = pysyntax.parse(source)
        top = pysyntax.symbol_table(source, path)
    except (SyntaxError, ValueError, RecursionError):
        return 0
    if _imports_star(tree):
        return 0
    module = module_names(top) | known
    functions = _functions(tree)
    count = 0
    for table in scopes(top):
        for symbol in table.get_symbols():
            if symbol.is_referenced() and symbol.is_global() and not symbol.is_declared_global() \
                    and symbol.get_name() not in module and symbol.get_name() not in _KNOWN:
                count += 1
        if table.get_type() == "function" and (function := functions.get((table.get_name(), table.get_lineno()))):
            count += _early_locals(function, table)
    return count


def _outermost_functions(tree: ast.Module) -> list[tuple[int, int]]:
    """(first, last) lines of every function not inside another function (a method: inside classes only), its
    decorators included."""
    spans: list[tuple[int, int]] = []
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            spans.append((first, node.end_lineno or node.lineno))
        elif isinstance(node, ast.stmt):
            stack += [child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt)]
    return spans


class UnboundCheck:
    """Whether a candidate of one file adds a read of a name nothing can have bound there (`unbound_reads`),
    judged in the outermost function it changes, the module's own names known: that function read once per
    candidate (and once as it was), not the whole file (a 6,000-line module took 78 ms a candidate whole,
    minutes for a search's 1,000). A candidate outside every function, or reaching past one, is judged in the
    whole file. A method is judged as a function of its own (`if 1:` above it keeps its indentation readable):
    the names of its class body are not its to read, as Python has it."""

    def __init__(self, source: str, path: str = "<unknown>") -> None:
        self.source, self.path = source, path
        self._lines = source.split("\n")
        self._counts: dict[tuple[int, int], int] = {}
        try:
            tree = pysyntax.parse(source)
            self._module = module_names(pysyntax.symbol_table(source, path))
        except (SyntaxError, ValueError, RecursionError):
            self._spans: list[tuple[int, int]] = []
            self._whole = 0
            self._off = True  # a file that does not parse: nothing is judged
            return
        self._off = _imports_star(tree)  # the module's names are unknown
        self._spans = _outermost_functions(tree)
        self._whole = -1  # the whole file's count, worked out when first needed

    def _count(self, lines: list[str]) -> int:
        text = "\n".join(lines) + "\n"
        if lines and lines[0][:1] in (" ", "\t"):
            text = "if 1:\n" + text
        return unbound_reads(text, self.path, frozenset(self._module))

    def adds(self, first: int, last: int, changed: str) -> bool:
        """Whether `changed` (the file with its lines `first`..`last` replaced) reads more names nothing can
        have bound than the file does."""
        if self._off:
            return False
        span = next(((a, b) for a, b in self._spans if a <= first and last <= b), None)
        if span is None:
            if self._whole < 0:
                self._whole = unbound_reads(self.source, self.path)
            return unbound_reads(changed, self.path) > self._whole
        if span not in self._counts:
            self._counts[span] = self._count(self._lines[span[0] - 1 : span[1]])
        after = changed.split("\n")
        grown = len(after) - len(self._lines)
        return self._count(after[span[0] - 1 : span[1] + grown]) > self._counts[span]
