"""The in-sandbox pytest plugin's way in and its records' way out, both out of the tested code's reach.

Way in: the plugin (pytest_plugin.py) is copied, for each run, under a name
no one can guess (`agentls_report_<random>`), into a directory the host
makes outside the workspace; that directory goes on `PYTHONPATH` (bubblewrap
binds it read-only) and `PYTEST_PLUGINS` names the module. A top-level
`agentls_report_plugin.py` in the project, which `python -m pytest` would
import before anything on `PYTHONPATH`, is just another file.

Way out, on a sandbox that passes file descriptors (`passes_fds`: bubblewrap,
the plain process): the records go to a file the host created and unlinked
before the run, through a write-only, append-only descriptor the plugin moves
out of the way and hides from the environment; the per-test bound's
faulthandler dump likewise. Each host file is made mode 0 once the host holds
its descriptors, so the sandbox's uid cannot open it again through
`/proc/<pid>/fd` (to read the records, and the token in them, back). Nothing of either is in the workspace, so nothing
the tests write there is read as a result. A sandbox that cannot pass
descriptors (Docker), or a wrapper that closes them before it starts pytest
(tox; the plugin checks that the descriptor is the host's unlinked,
append-only file), uses a file in the run's `.agentls/` folder instead, read
without following links (workspace/hostread.py) and only when the
descriptor brought nothing. In both, every record
carries a random token, so the host drops lines the code under test forges,
and a run without the plugin's `finish` record is not a clean run
(testing/results.py). The token comes on a descriptor of its own (an
unlinked, mode-0 file) that the plugin reads and closes when pytest imports
it, before any conftest or test module: it is never in an environment
(`/proc/<pid>/environ` keeps a process's exec-time copy, and bwrap's command
line its `--setenv` values). Only where descriptors do not reach pytest (a
backend that cannot pass them, Docker; a wrapper that closes them, tox) does
it go through the environment, as `PYTEST_AGENTLS_NONCE`.
"""

from __future__ import annotations

import ast
import functools
import os
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from agent_core.analysis import pysyntax
from agent_core.sandbox.cleanup import make_temp_dir, remove_temp_dir
from agent_core.workspace.hostread import read_fd, read_planted_text

PLUGIN_PREFIX = "agentls_report_"
PLUGIN_SOURCE = Path(__file__).with_name("pytest_plugin.py")  # read, not imported: it imports pytest
SWALLOWED_SOURCE = Path(__file__).with_name("swallowed.py")  # copied beside the plugin, which loads it by path
SWALLOWED_SUFFIX = "_swallowed.py"  # the plugin's own names (pytest_plugin.py), kept in step by a test
REPORT_VAR = "PYTEST_AGENTLS_REPORT"  # the plugin's own names (pytest_plugin.py), kept in step by a test
REPORT_FD_VAR = "PYTEST_AGENTLS_REPORT_FD"
HANG_FD_VAR = "PYTEST_AGENTLS_HANG_FD"
TOKEN_VAR = "PYTEST_AGENTLS_NONCE"  # not *_TOKEN: sandbox_env drops names that look secret
TOKEN_FD_VAR = "PYTEST_AGENTLS_NONCE_FD"
FD_CLOSING_WRAPPERS = ("tox",)  # commands known to close inherited descriptors before they start pytest
SELECT_VAR = "PYTEST_AGENTLS_SELECT"
TIMEOUT_VAR = "PYTEST_AGENTLS_TEST_TIMEOUT"
PACE_VAR = "PYTEST_AGENTLS_PACE"
STOP_VAR = "PYTEST_AGENTLS_STOP_AFTER"
HANG_SUFFIX = ".hang"
TOX_PASS_ENV = "testenv.pass_env+=PYTHONPATH,PYTEST_PLUGINS,PYTEST_AGENTLS_*"
RESULTS_CAP = 64 * 1024 * 1024  # a run's records beyond this are cut (its `finish` with them: not clean)
HANG_CAP = 1024 * 1024
JUNIT_CAP = 64 * 1024 * 1024


_Def = TypeVar("_Def", ast.FunctionDef, ast.AsyncFunctionDef)


class _Unannotated(ast.NodeTransformer):
    """Drops annotations: a signature's, a variable's (kept as a plain assignment) and the future import."""

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.annotation = None
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        return self._unreturned(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AsyncFunctionDef:
        return self._unreturned(node)

    def _unreturned(self, node: _Def) -> _Def:
        node.returns = None
        self.generic_visit(node)
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.stmt:
        if node.value is None:
            return ast.Pass()
        return ast.Assign(targets=[node.target], value=node.value, lineno=node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.ImportFrom | None:
        return None if node.module == "__future__" else node


@functools.cache
def plugin_text(source: Path = PLUGIN_SOURCE) -> str:
    """The plugin's source as it goes into the sandbox, without annotations. It runs in whatever Python and
    pytest the project has: Python 3.6 has no postponed annotations (`from __future__ import annotations`), so
    a signature's `int | None`, or `pytest.Config` (public since pytest 7), would fail as the module loads.
    No library writes Python back without its annotations; ast does it in a few lines."""
    tree = _Unannotated().visit(pysyntax.parse(source.read_text(encoding="utf-8")))
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def plugin_name() -> str:
    """A module name for one run's copy of the plugin that no file of the project can anticipate."""
    return PLUGIN_PREFIX + secrets.token_hex(8)


@dataclass
class Channel:
    """One test run's plugin copy, its variables, and where its records come back."""

    run_dir: Path  # the run's folder in the workspace (JUnit XML; the records on a sandbox without fds)
    workspace: Path
    token: str = field(default_factory=lambda: secrets.token_hex(16))
    env: dict[str, str] = field(default_factory=dict)
    pass_fds: tuple[int, ...] = ()
    plugin_dir: Path | None = None
    _read_fds: tuple[int, ...] = ()

    def records(self) -> tuple[str, str]:
        """(records text, faulthandler dump text) the plugin wrote, read without following anything."""
        if self._read_fds:
            results, hang = (read_fd(fd, cap).decode("utf-8", "replace")
                             for fd, cap in zip(self._read_fds, (RESULTS_CAP, HANG_CAP), strict=True))
            if results:
                return results, hang
        rel = self.run_dir.relative_to(self.workspace)
        return (read_planted_text(self.workspace, rel / "results.jsonl", RESULTS_CAP),
                read_planted_text(self.workspace, rel / f"results.jsonl{HANG_SUFFIX}", HANG_CAP))

    def junit(self) -> str:
        return read_planted_text(self.workspace, self.run_dir.relative_to(self.workspace) / "junit.xml", JUNIT_CAP)

    def close(self) -> None:
        for fd in (*self.pass_fds, *self._read_fds):
            os.close(fd)
        self.pass_fds = self._read_fds = ()
        if self.plugin_dir is not None:
            remove_temp_dir(self.plugin_dir)
            self.plugin_dir = None


def _host_file(directory: Path, name: str) -> tuple[int, int]:
    """(write-only append fd for the sandbox, read fd for the host) of a new file, unlinked and made mode 0 at
    once: no one opens it again by a `/proc/<pid>/fd` link."""
    path = directory / name
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW, 0o600)
    try:
        read = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        os.fchmod(fd, 0)
    except OSError:
        os.close(fd)
        raise
    finally:
        path.unlink()
    os.set_inheritable(fd, True)
    return fd, read


def _token_file(directory: Path, token: str) -> int:
    """A read-only fd for the sandbox of a new file holding `token`, unlinked and made mode 0 at once."""
    path = directory / "nonce"
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, token.encode("ascii"))
        read = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        os.fchmod(fd, 0)
    finally:
        path.unlink()
        os.close(fd)
    os.set_inheritable(read, True)
    return read


def closes_descriptors(argv: Sequence[str]) -> bool:
    """Whether the command is a wrapper known to close inherited descriptors before pytest (tox)."""
    words = [Path(w).name for w in argv[:3]]
    return bool(words) and (words[0] in FD_CLOSING_WRAPPERS or (words[1:3] == ["-m", "tox"]))


def open_channel(
    run_dir: Path, workspace: Path, select: Sequence[str], test_timeout_s: float | None, fds: bool,
    paced: bool = False, token_in_env: bool = False, stop_after: int = 0,
) -> Channel:
    """Copy the plugin for one run and return the variables (and descriptors) that load and hear it. The token
    goes on a descriptor; in the environment too only with `token_in_env` (a wrapper that closes descriptors)
    or without descriptors. With `stop_after`, the session stops after that many failed tests."""
    channel = Channel(run_dir=run_dir, workspace=workspace)
    try:
        where = run_dir
        if fds:
            where = channel.plugin_dir = make_temp_dir("plugin")
            os.chmod(where, 0o755)  # the sandbox's uid imports the plugin from here
            results, results_read = _host_file(where, "results")
            hang, hang_read = _host_file(where, "hang")
            token_fd = _token_file(where, channel.token)
            channel.pass_fds, channel._read_fds = (results, hang, token_fd), (results_read, hang_read)
            channel.env = {REPORT_FD_VAR: str(results), HANG_FD_VAR: str(hang), TOKEN_FD_VAR: str(token_fd)}
        channel.env[REPORT_VAR] = str(run_dir / "results.jsonl")  # where a wrapper that closes fds (tox) reports
        if token_in_env or not fds:
            channel.env[TOKEN_VAR] = channel.token
        module = plugin_name()
        for name, text in ((f"{module}.py", plugin_text()), (module + SWALLOWED_SUFFIX, plugin_text(SWALLOWED_SOURCE))):
            (where / name).write_text(text, encoding="utf-8")
            os.chmod(where / name, 0o644)
        channel.env.update({"PYTHONPATH": str(where), "PYTEST_PLUGINS": module, "TOX_OVERRIDE": TOX_PASS_ENV})
        if select:
            (where / "select.txt").write_text("".join(f"{workspace / node}\n" for node in select), encoding="utf-8")
            os.chmod(where / "select.txt", 0o644)
            channel.env[SELECT_VAR] = str(where / "select.txt")
        if test_timeout_s:
            channel.env[TIMEOUT_VAR] = f"{test_timeout_s:g}"
            if paced:
                channel.env[PACE_VAR] = "1"
        if stop_after > 0:
            channel.env[STOP_VAR] = str(stop_after)
    except BaseException:
        channel.close()
        raise
    return channel
