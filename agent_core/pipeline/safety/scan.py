"""The safety gate: an `ast` scan of changed Python for code that should not run unasked.

Rules: `eval`/`exec`, `os.system` and friends (`os.popen`, `os.exec*`,
`os.spawn*`, `pty.spawn`, ...), `subprocess` with `shell=True` or a command
list that starts a shell (`["sh", "-c", ...]`), network imports (socket,
urllib, requests, http.client, ...; also through `importlib`), writes to
absolute paths outside the workspace, and `shutil.rmtree` on absolute paths.
Callees are resolved through the aliases and dynamic forms the gate can see
(names.py: `import os as o`, `from os import system`,
`importlib.import_module("os").system`, `getattr(os, "system")`,
`__import__("os")`); what it cannot see through is a "could not check" note
(`GateScan.unchecked`), not a violation, except where not knowing is the
danger: an import of a computed module name, or a computed attribute of
`os`, `subprocess`, `unittest`, `builtins`, `sys`, `importlib` (names.py
`GUARDED`) is the violation `unchecked-dynamic`. Each rule family is a `Check` in
`CHECKS`, run on the parsed module. A file that does not parse is not a
violation (the tests will say so).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from agent_core.analysis import pysyntax
from agent_core.events import SafetyViolation
from agent_core.models import ChangeSet
from agent_core.pipeline.safety.names import IMPORT_FUNCTIONS, Names, canonical

NETWORK_MODULES = frozenset(
    {"socket", "urllib", "urllib2", "urllib3", "requests", "httpx", "aiohttp", "http", "ftplib", "smtplib",
     "telnetlib", "paramiko", "websocket", "websockets"}
)
_EXEC = ("execl", "execle", "execlp", "execlpe", "execv", "execve", "execvp", "execvpe")
_SPAWN = ("spawnl", "spawnle", "spawnlp", "spawnlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe")
SHELL_CALLS = frozenset(
    {"os.system", "os.popen", "os.posix_spawn", "os.posix_spawnp", "os.startfile", "pty.spawn", "platform.popen",
     "subprocess.getoutput", "subprocess.getstatusoutput", "asyncio.create_subprocess_shell",
     *(f"os.{name}" for name in _EXEC + _SPAWN), *(f"posix.{name}" for name in ("system", *_EXEC))}
)
SUBPROCESS_CALLS = frozenset(
    {"subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output", "subprocess.Popen",
     "asyncio.create_subprocess_exec"}
)
# A command list that starts with one of these runs whatever the rest says (`["sh", "-c", ...]`, a script).
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "csh", "tcsh", "fish", "busybox", "cmd", "cmd.exe",
                    "powershell", "pwsh", "env"})
WRITE_CALLS = frozenset({"open", "io.open", "os.open", "os.remove", "os.unlink", "os.rmdir", "os.makedirs",
                         "os.mkdir", "shutil.copy", "shutil.copyfile", "shutil.move", "os.rename", "os.replace"})
EVAL_CALLS = frozenset({"eval", "exec"})
_PATH_WRITES = ("write_text", "write_bytes", "unlink", "mkdir")


def _absolute_outside(node: ast.AST | None, workspace: str | None, names: Names) -> str | None:
    if isinstance(node, ast.Call) and names.qualify(node.func) in ("Path", "pathlib.Path") and node.args:
        node = node.args[0]
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith(("/", "~")):
        path = node.value
        if workspace and (path == workspace or path.startswith(workspace.rstrip("/") + "/")):
            return None
        return path
    return None


def _is_write_mode(call: ast.Call) -> bool:
    mode = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "mode"), None)
    return isinstance(mode, ast.Constant) and isinstance(mode.value, str) and any(c in mode.value for c in "wax+")


def _shell_program(call: ast.Call) -> str | None:
    """The shell a process call runs: its literal `executable=`, or the first item of a literal command list."""
    executable = next((k.value for k in call.keywords if k.arg == "executable"), None)
    first = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "args"), None)
    if isinstance(first, (ast.List, ast.Tuple)) and first.elts:
        first = first.elts[0]
    for node in (executable, first):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            program = PurePosixPath(node.value.split()[0] if node.value.strip() else "").name
            if program in SHELLS:
                return node.value
    return None


class _Scanner(ast.NodeVisitor):
    def __init__(self, file: str, workspace: str | None, names: Names) -> None:
        self.file, self.workspace, self.names = file, workspace, names
        self.found: list[SafetyViolation] = []

    def add(self, node: ast.AST, rule: str, message: str) -> None:
        self.found.append(SafetyViolation(file=self.file, line=getattr(node, "lineno", 1), rule=rule, message=message))

    def _network(self, node: ast.AST, module: str, how: str) -> None:
        if module.split(".")[0] in NETWORK_MODULES:
            self.add(node, "network-import", f"{how} {module} (network access)")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._network(node, alias.name, "imports")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module and node.level == 0:
            self._network(node, node.module, "imports from")

    def visit_Call(self, node: ast.Call) -> None:
        name = canonical(self.names.qualify(node.func) or "")
        if name in IMPORT_FUNCTIONS or name == "getattr":
            self.names.qualify(node)  # notes what it cannot resolve
        self._check_call(node, name, _dotted(node.func))
        self._callables_passed(node)
        self.generic_visit(node)

    def _callables_passed(self, node: ast.Call) -> None:
        """`atexit.register(os.system, ...)`, `Thread(target=os.system)`: a shell or eval handed over to be called."""
        for value in [*node.args, *(k.value for k in node.keywords)]:
            if isinstance(value, (ast.Name, ast.Attribute)):
                name = canonical(self.names.qualify(value) or "")
                if name in SHELL_CALLS or name in EVAL_CALLS:
                    self.add(value, "shell" if name in SHELL_CALLS else name, f"passes {name} on to be called")

    def _check_call(self, node: ast.Call, name: str, written: str) -> None:
        seen = name if written == name else f"{name} (written {written or 'dynamically'})"
        if name in EVAL_CALLS:
            self.add(node, name, f"calls {seen}()")
        elif name in IMPORT_FUNCTIONS:
            module = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else None
            if isinstance(module, str):
                self._network(node, module, f"{name}() loads")
        elif name in SHELL_CALLS:
            self.add(node, "shell", f"runs a command with {seen}()")
        elif name in SUBPROCESS_CALLS:
            self._process(node, seen)
        elif name == "shutil.rmtree" and node.args and _absolute_outside(node.args[0], self.workspace, self.names):
            path = _absolute_outside(node.args[0], None, self.names)
            self.add(node, "rmtree-absolute", f"removes the absolute path {path!r}")
        elif name in WRITE_CALLS and node.args:
            path = _absolute_outside(node.args[0], self.workspace, self.names)
            if path and (name not in ("open", "io.open") or _is_write_mode(node)):
                self.add(node, "write-outside", f"{seen}() touches {path!r} outside the workspace")
        elif isinstance(node.func, ast.Attribute) and node.func.attr in _PATH_WRITES:
            path = _absolute_outside(node.func.value, self.workspace, self.names)
            if path:
                self.add(node, "write-outside", f"writes {path!r} outside the workspace")

    def _process(self, node: ast.Call, seen: str) -> None:
        if any(k.arg == "shell" and not (isinstance(k.value, ast.Constant) and not k.value.value)
               for k in node.keywords):
            self.add(node, "shell-true", f"calls {seen}() with shell=True")
        elif (shell := _shell_program(node)) is not None:
            self.add(node, "shell-list", f"calls {seen}() running the shell {shell!r}")
        elif not _literal_program(node):
            self.names.note(node, f"which program {seen}() runs (a computed command)")


def _literal_program(call: ast.Call) -> bool:
    """Whether the program a process call runs is written out (a string, or a list starting with one)."""
    first = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "args"), None)
    if isinstance(first, (ast.List, ast.Tuple)):
        first = first.elts[0] if first.elts else None
    return isinstance(first, ast.Constant) and isinstance(first.value, str)


def _dotted(node: ast.AST) -> str:
    """The callee as written (`o.system`), for the message; "" for a computed one."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""


@dataclass
class GateScan:
    """What the gate found in one source text, and what it could not check (notes, not violations)."""

    violations: list[SafetyViolation] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)


# Each check reads one parsed module; another rule family adds its function here.
Check = Callable[[ast.Module, str, "str | None", Names], list[SafetyViolation]]


def _scanner_check(tree: ast.Module, file: str, workspace: str | None, names: Names) -> list[SafetyViolation]:
    scanner = _Scanner(file, workspace, names)
    scanner.visit(tree)
    return scanner.found


CHECKS: list[Check] = [_scanner_check]


def scan_text(file: str, text: str, workspace: str | None = None) -> GateScan:
    """Violations and "could not check" notes in one Python source text (nothing if it does not parse)."""
    try:
        tree = pysyntax.parse(text, file)
    except (SyntaxError, ValueError):
        return GateScan()
    names = Names(tree)
    found = [v for check in CHECKS for v in check(tree, file, workspace, names)]
    found += [SafetyViolation(file=file, line=line, rule="unchecked-dynamic",
                              message=f"could not check {what}: a computed import or attribute of a module that "
                              "runs programs or judges the tests is refused") for line, what in names.refused]
    return GateScan(found, [f"{file}:{line}: could not check {what}" for line, what in names.unchecked])


def scan_source(file: str, text: str, workspace: str | None = None) -> list[SafetyViolation]:
    """Violations in one Python source text (none if it does not parse)."""
    return scan_text(file, text, workspace).violations


def check_change_set(change_set: ChangeSet, workspace: str | None = None) -> GateScan:
    """What the change introduces in Python files (findings already in the original text are not counted)."""
    out = GateScan()
    for change in change_set.changes:
        if change.new is None or PurePosixPath(change.path).suffix not in (".py", ".pyi"):
            continue
        before = scan_text(change.path, change.original or "", workspace)
        old = {(v.rule, v.message) for v in before.violations}
        old_notes = {note.split(": ", 1)[1] for note in before.unchecked}
        after = scan_text(change.path, change.new, workspace)
        out.violations.extend(v for v in after.violations if (v.rule, v.message) not in old)
        out.unchecked.extend(note for note in after.unchecked if note.split(": ", 1)[1] not in old_notes)
    return out


def scan_change_set(change_set: ChangeSet, workspace: str | None = None) -> list[SafetyViolation]:
    """Violations the change introduces in Python files (ones already in the original are not counted)."""
    return check_change_set(change_set, workspace).violations
