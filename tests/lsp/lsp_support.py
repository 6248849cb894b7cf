"""Helpers of the LSP end-to-end tests (the `lsp_session` fixture is re-exported by conftest.py).

`lsp_session(...)` starts the real server (`python -m lsp_server`) over stdio
with pytest-lsp's client, VS Code's capabilities and the scripted model's
base_url in initializationOptions, on a small temp workspace with a bug
(`calc.add` subtracts) and a test that catches it. The client answers
`workspace/applyEdit` (recording each edit, applying it to its own copy of
the open document or refusing it) and `window/showMessageRequest` (with a
chosen button).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Union

import pytest
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

CALC = "def add(a, b):\n    return a + c\n\n\ndef mul(a, b):\n    return a * b\n"
FIXED_CALC = CALC.replace("a + c", "a + b")
TEST_CALC = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
REPO = Path(__file__).resolve().parents[2]


def make_workspace(root: Path) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "calc.py").write_text(CALC)
    (root / "tests" / "test_calc.py").write_text(TEST_CALC)
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["."]\n')
    return root


def _fix_code_action_structure(client: LanguageClient) -> None:
    """pytest-lsp's converter reads a CodeAction with a command as a Command (MACHINE-NOTES)."""
    converter = client.protocol._converter

    def structure(obj: Any, _type: Any) -> Any:
        if isinstance(obj, dict) and isinstance(obj.get("command"), str):
            return converter.structure(obj, lsp.Command)
        return converter.structure(obj, lsp.CodeAction)

    # typing.Union, not `X | Y`: cattrs keys the hook on this exact type object.
    converter.register_structure_hook(Union[lsp.Command, lsp.CodeAction], structure)  # noqa: UP007


class EditorState:
    """What the test client's 'user' does and saw."""

    def __init__(self) -> None:
        self.applied_edits: list[lsp.ApplyWorkspaceEditParams] = []
        self.accept_edits = True
        self.answer: str | None = "Approve"
        self.answers: list[Any] = []  # answered first, in order: a title, None, or a callable(params) giving one
        self.questions: list[lsp.ShowMessageRequestParams] = []


def _install_handlers(client: LanguageClient, state: EditorState) -> None:
    @client.feature(lsp.WORKSPACE_APPLY_EDIT)
    def apply_edit(ls: LanguageClient, params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
        state.applied_edits.append(params)
        if not state.accept_edits:
            return lsp.ApplyWorkspaceEditResult(applied=False, failure_reason="the user said no")
        return lsp.ApplyWorkspaceEditResult(applied=True)

    @client.feature(lsp.WINDOW_SHOW_MESSAGE_REQUEST)
    def show_message_request(ls: LanguageClient, params: lsp.ShowMessageRequestParams):
        state.questions.append(params)
        answer = state.answers.pop(0) if state.answers else state.answer
        answer = answer(params) if callable(answer) else answer
        return None if answer is None else lsp.MessageActionItem(title=answer)


class Session:
    """A started client, its workspace and the editor state."""

    def __init__(self, client: LanguageClient, root: Path, state: EditorState, tmpdir: Path) -> None:
        self.client, self.root, self.state, self.tmpdir = client, root, state, tmpdir
        self.capabilities: lsp.ServerCapabilities | None = None
        self.leftover_processes: list[int] | None = None  # filled after shutdown
        self.leftover_files: list[str] | None = None

    def uri(self, relative: str) -> str:
        return (self.root / relative).as_uri()

    def open(self, relative: str, text: str | None = None, version: int = 1) -> str:
        uri = self.uri(relative)
        content = (self.root / relative).read_text() if text is None else text
        item = lsp.TextDocumentItem(uri=uri, language_id="python", version=version, text=content)
        self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=item))
        return uri

    async def command(self, name: str, *arguments: Any) -> Any:
        params = lsp.ExecuteCommandParams(command=name, arguments=list(arguments))
        return await asyncio.wait_for(self.client.workspace_execute_command_async(params), 10)

    async def until(self, predicate: Callable[[], bool], timeout: float = 60.0) -> None:
        """Wait (polling gently) until `predicate()` holds; fail the test on timeout."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not predicate():
            if loop.time() > deadline:
                raise AssertionError(
                    f"timed out after {timeout} s; messages: {self.messages()}; diagnostics: {self.client.diagnostics}"
                )
            await asyncio.sleep(0.05)

    def cleared(self, uri: str) -> bool:
        """Diagnostics were published for `uri` and the last list was empty."""
        return uri in self.client.diagnostics and len(self.client.diagnostics[uri]) == 0

    def scripted_requests(self) -> list[dict]:
        return list(self.llm.requests)

    def messages(self) -> list[str]:
        return [m.message for m in self.client.messages]

    def progress_kinds(self) -> dict[str, list[str]]:
        return {str(t): [v.kind for v in values] for t, values in self.client.progress_reports.items()}


def server_descendants(server_pid: int) -> list[int]:
    """Pids of every live descendant of `server_pid` (from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [], [server_pid]
    while frontier:
        pid = frontier.pop()
        children = [child for child, parent in parents.items() if parent == pid]
        found.extend(children)
        frontier.extend(children)
    return found


@pytest.fixture
def lsp_session(tmp_path: Path, scripted_llm):
    """`async with lsp_session(**options) as session:` a started, initialised server on a temp workspace."""

    @asynccontextmanager
    async def start(
        options: dict | None = None, configuration: dict | None = None,
        capabilities: lsp.ClientCapabilities | None = None,
    ) -> AsyncIterator[Session]:
        root = make_workspace(tmp_path / "ws")
        tmpdir = Path(tempfile.mkdtemp(prefix="agentls-lsp-tmp-"))  # under /tmp: the sandbox uid must reach it
        tmpdir.chmod(0o1777)
        env = {**os.environ, "TMPDIR": str(tmpdir), "PYTHONPATH": str(REPO)}
        env.pop("AGENTLS_BASE_URL", None)
        env.pop("OPENAI_BASE_URL", None)
        config = ClientServerConfig(server_command=[sys.executable, "-m", "lsp_server"], server_env=env)
        client = await config.start()
        _fix_code_action_structure(client)
        state = EditorState()
        _install_handlers(client, state)
        if configuration is not None:
            client.set_configuration(configuration, section="agentls")
        init = {
            "baseUrl": scripted_llm.base_url, "model": "scripted", "memory": {"enabled": False},
            "sandbox": {"timeoutS": 60}, **(options or {}),
        }
        result = await client.initialize_session(
            lsp.InitializeParams(
                capabilities=capabilities or client_capabilities("visual_studio_code"),
                root_uri=root.as_uri(),
                workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name="ws")],
                initialization_options=init,
            )
        )
        session = Session(client, root, state, tmpdir)
        session.llm = scripted_llm
        session.capabilities = result.capabilities
        try:
            yield session
        finally:
            try:
                await asyncio.wait_for(client.shutdown_session(), 30)
                await client.stop()
                session.leftover_processes = server_descendants(client._server.pid)
                session.leftover_files = sorted(p.name for p in tmpdir.iterdir())
            finally:
                shutil.rmtree(tmpdir, ignore_errors=True)

    return start


def apply_text_edits(text: str, edits: list[lsp.TextEdit]) -> str:
    """Apply LSP text edits (ASCII text: UTF-16 units are characters) like an editor would."""
    lines = text.splitlines(keepends=True)

    def offset(pos: lsp.Position) -> int:
        return sum(len(line) for line in lines[: pos.line]) + pos.character

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text


PLAN = {
    "approach": "Fix add.",
    "subtasks": [{"id": "t1", "description": "make add add in calc.py", "files": ["calc.py"]}],
}
FIX = {
    "edits": [{"path": "calc.py", "search": "    return a + c\n", "replace": "    return a + b\n"}],
    "explanation": "add must add",
}


def script_fix(llm, coder_answer: Any = None) -> None:
    """Planner and coder answers that fix calc.add (the coder's answer can be replaced, e.g. by a hang)."""
    llm.default("planner", PLAN)
    llm.add("coder", FIX if coder_answer is None else coder_answer)
    llm.default("coder", FIX)
    llm.default(
        "reflector", {"hypothesis": "c is undefined", "file": "calc.py", "change": "use +", "confidence": "high"}
    )
