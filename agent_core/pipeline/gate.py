"""The safety gate: an `ast` scan of changed Python for code that should not run unasked.

Rules: `eval`/`exec`, `os.system` and friends, `subprocess` with `shell=True`,
network imports (socket, urllib, requests, http.client, ...), writes to
absolute paths outside the workspace, and `shutil.rmtree` on absolute paths.
A file that does not parse is not a violation (the tests will say so).
"""

from __future__ import annotations

import ast
from pathlib import PurePosixPath

from agent_core.events import SafetyViolation
from agent_core.models import ChangeSet

NETWORK_MODULES = frozenset(
    {"socket", "urllib", "urllib2", "urllib3", "requests", "httpx", "aiohttp", "http", "ftplib", "smtplib",
     "telnetlib", "paramiko", "websocket", "websockets"}
)
SHELL_CALLS = frozenset({"os.system", "os.popen", "os.execv", "os.execve", "os.execvp", "os.spawnl", "pty.spawn"})
SUBPROCESS_CALLS = frozenset(
    {"subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output", "subprocess.Popen"}
)
WRITE_CALLS = frozenset({"open", "io.open", "os.open", "os.remove", "os.unlink", "os.rmdir", "os.makedirs",
                         "os.mkdir", "shutil.copy", "shutil.copyfile", "shutil.move", "os.rename", "os.replace"})


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""


def _absolute_outside(node: ast.AST | None, workspace: str | None) -> str | None:
    if isinstance(node, ast.Call) and _dotted(node.func) in ("Path", "pathlib.Path") and node.args:
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


class _Scanner(ast.NodeVisitor):
    def __init__(self, file: str, workspace: str | None) -> None:
        self.file, self.workspace = file, workspace
        self.found: list[SafetyViolation] = []

    def add(self, node: ast.AST, rule: str, message: str) -> None:
        self.found.append(SafetyViolation(file=self.file, line=getattr(node, "lineno", 1), rule=rule, message=message))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.split(".")[0] in NETWORK_MODULES:
                self.add(node, "network-import", f"imports {alias.name} (network access)")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module and node.level == 0 and node.module.split(".")[0] in NETWORK_MODULES:
            self.add(node, "network-import", f"imports from {node.module} (network access)")

    def visit_Call(self, node: ast.Call) -> None:
        name = _dotted(node.func)
        if name in ("eval", "exec", "builtins.eval", "builtins.exec", "__import__"):
            self.add(node, name.split(".")[-1].strip("_"), f"calls {name}()")
        elif name in SHELL_CALLS:
            self.add(node, "shell", f"runs a shell command with {name}()")
        elif name in SUBPROCESS_CALLS and any(
            k.arg == "shell" and not (isinstance(k.value, ast.Constant) and not k.value.value) for k in node.keywords
        ):
            self.add(node, "shell-true", f"calls {name}() with shell=True")
        elif name == "shutil.rmtree" and node.args and _absolute_outside(node.args[0], self.workspace):
            self.add(node, "rmtree-absolute", f"removes the absolute path {_absolute_outside(node.args[0], None)!r}")
        elif name in WRITE_CALLS and node.args:
            path = _absolute_outside(node.args[0], self.workspace)
            if path and (name not in ("open", "io.open") or _is_write_mode(node)):
                self.add(node, "write-outside", f"{name}() touches {path!r} outside the workspace")
        elif isinstance(node.func, ast.Attribute) and node.func.attr in (
            "write_text",
            "write_bytes",
            "unlink",
            "mkdir",
        ):
            path = _absolute_outside(node.func.value, self.workspace)
            if path:
                self.add(node, "write-outside", f"writes {path!r} outside the workspace")
        self.generic_visit(node)


def scan_source(file: str, text: str, workspace: str | None = None) -> list[SafetyViolation]:
    """Violations in one Python source text (none if it does not parse)."""
    try:
        tree = ast.parse(text, filename=file)
    except (SyntaxError, ValueError):
        return []
    scanner = _Scanner(file, workspace)
    scanner.visit(tree)
    return scanner.found


def _rules_in(text: str | None, file: str, workspace: str | None) -> set[tuple[str, str]]:
    return {(v.rule, v.message) for v in scan_source(file, text or "", workspace)}


def scan_change_set(change_set: ChangeSet, workspace: str | None = None) -> list[SafetyViolation]:
    """Violations the change introduces in Python files (ones already in the original are not counted)."""
    found: list[SafetyViolation] = []
    for change in change_set.changes:
        if change.new is None or PurePosixPath(change.path).suffix != ".py":
            continue
        before = _rules_in(change.original, change.path, workspace)
        found.extend(v for v in scan_source(change.path, change.new, workspace) if (v.rule, v.message) not in before)
    return found
