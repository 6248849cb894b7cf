"""What a name in changed code stands for: the safety gate's view through aliases and dynamic lookups.

`Names(tree)` reads a module's bindings: `import os as o`, `from os import
system as s`, `from os import *` (for the few modules the gate knows),
`x = importlib.import_module("os")`, `x = __import__("os")`,
`f = getattr(os, "system")`, `f = o.system`. `qualify(node)` then turns an
expression into the dotted name it refers to (`o.system` -> `os.system`,
`importlib.import_module("os").system` -> `os.system`, `getattr(os,
"system")` -> `os.system`, `sys.modules["os"]` -> `os`), or None. What it
cannot see through is recorded in `unchecked` as a note, or, where not
knowing is itself the danger, in `refused`: an import of a computed module
name (`__import__("o" + "s")`), and a computed attribute of a module that
runs programs, loads code or judges the tests (`GUARDED`: `getattr(os,
"sys" + "tem")`).
Flow-insensitive on purpose: a name bound anywhere in the module to `os.system`
counts everywhere (a gate errs on the side of asking).
"""

from __future__ import annotations

import ast
import builtins
import os
import pty
import shutil
import subprocess
from dataclasses import dataclass, field

# `from M import *` binds M's public names: resolved for the modules whose members the rules name.
STAR_MODULES = {"os": os, "subprocess": subprocess, "pty": pty, "shutil": shutil, "builtins": builtins}
IMPORT_FUNCTIONS = frozenset({"importlib.import_module", "__import__", "importlib.__import__"})
# Modules whose computed attribute the gate refuses: a shell, a process, the test framework, the interpreter.
GUARDED = frozenset({"os", "posix", "subprocess", "unittest", "builtins", "__builtins__", "sys", "importlib",
                     "pytest", "_pytest", "pty", "shutil"})


def _literal(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def canonical(name: str) -> str:
    """`builtins.eval` is `eval`."""
    return name.removeprefix("builtins.")


@dataclass
class Names:
    """A module's bindings and the resolution of expressions through them."""

    tree: ast.AST
    bound: dict[str, str] = field(default_factory=dict)
    star: list[str] = field(default_factory=list)
    imported: set[str] = field(default_factory=set)  # names an import statement binds
    unchecked: dict[tuple[int, str], None] = field(default_factory=dict)  # (line, what): an ordered set
    refused: dict[tuple[int, str], None] = field(default_factory=dict)  # what the gate cannot check and refuses

    def __post_init__(self) -> None:
        for _ in range(2):  # twice: a binding that uses one made further down the module
            for node in ast.walk(self.tree):
                self._bind(node)
        self.unchecked.clear()  # notes count where the gate looks (calls), not while binding
        self.refused.clear()

    def _bind(self, node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self.bound[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    self.bound[top] = top
                self.imported.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                if alias.name == "*":
                    self.star.append(node.module)
                else:
                    self.bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                    self.imported.add(alias.asname or alias.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = self.qualify(node.value)
            for target in targets:
                if isinstance(target, ast.Name) and value and value != target.id:
                    self.bound[target.id] = value

    def _name(self, name: str) -> str:
        if name in self.bound:
            return self.bound[name]
        for module in self.star:
            if module in STAR_MODULES and not name.startswith("_") and hasattr(STAR_MODULES[module], name):
                return f"{module}.{name}"
        return name

    def note(self, node: ast.AST, what: str, refuse: bool = False) -> None:
        (self.refused if refuse else self.unchecked)[(getattr(node, "lineno", 1), what)] = None

    def _call(self, node: ast.Call) -> str | None:
        func = self.qualify(node.func)
        if func is None:
            return None
        func = canonical(func)
        first = node.args[0] if node.args else None
        if func in IMPORT_FUNCTIONS:
            module = _literal(first)
            if module is None:
                self.note(node, f"{func}() of a computed module name", refuse=True)
            return module
        if func == "getattr" and len(node.args) >= 2:
            owner, attr = self.qualify(node.args[0]), _literal(node.args[1])
            if attr is None:
                if self._from_import(node.args[0]):  # getattr(self, name) is everyday code; getattr(os, name) is not
                    guarded = (owner or "").split(".")[0] in GUARDED
                    self.note(node, f"getattr({owner}, <computed name>)", refuse=guarded)
                return None
            return f"{owner}.{attr}" if owner else None
        return None

    def _from_import(self, node: ast.AST) -> bool:
        while isinstance(node, ast.Attribute):
            node = node.value
        if isinstance(node, ast.Call):
            return self.qualify(node) is not None
        return isinstance(node, ast.Name) and (node.id in self.imported or node.id in self.bound)

    def qualify(self, node: ast.AST) -> str | None:
        """The dotted name `node` refers to, or None when it is not a name the gate can see."""
        if isinstance(node, ast.Name):
            return self._name(node.id)
        if isinstance(node, ast.Attribute):
            base = self.qualify(node.value)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.Subscript) and self.qualify(node.value) == "sys.modules":
            return _literal(node.slice)
        return None
