"""Soak: the real server over stdio under a client that opens, edits, asks for code actions and
starts and cancels runs at random for N minutes, against the scripted OpenAI-compatible server.

The client is pytest-lsp's (VS Code's capabilities); it answers `workspace/applyEdit` (yes) and
`window/showMessageRequest` (Reject, so a gated run stops). The scripted model answers the
planner at once and the coder with a fix (calc.py), slowly streamed, a stall, a dropped stream
or a long hang, at random, so runs end fixed, unfixed, in error or cancelled, and many are in
flight when they are cancelled. Each request is given 30 s; one not answered by then counts as
unanswered (an error reply is an answer).

Reported: requests sent / answered / error replies / unanswered, p50 and p99 round-trip latency
per method, runs started / refused / cancelled, the server's RSS (first sample after a one-minute
warm-up, last, highest; MB at 25/50/75/100% of the run and the slope of each half, so "bounded"
is a figure: a second-half slope near 0), processes left alive that the server started, and
files left in the server's TMPDIR after shutdown.

    nice -n 19 python -m bench.soak [--minutes 10] [--seed 1] [--json out.json] [--trace-memory DIR]
        [--malloc-trim SECONDS]

MALLOC_ARENA_MAX in the environment reaches the server too (a comparison run for allocator growth).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pytest_lsp import client_capabilities
from pytest_lsp.client import make_test_lsp_client

from agent_core.sandbox import proctree
from bench.support.soak_support import (
    FILES,
    PLAN,
    Tally,
    coder_answer,
    descendants,
    fix_code_action_structure,
    make_workspace,
    rss_kb,
)
from testkit.scripted_llm import Fault, ScriptedLLM

ROOT = Path(__file__).resolve().parents[1]

REQUEST_TIMEOUT_S = 30.0
SETTINGS = {"max_iterations": 1, "samples": 1, "llm_stall_s": 3, "llm_deadline_s": 15, "max_retries": 1,
            "retry_backoff_s": 0.1, "memory": {"enabled": False}, "sandbox": {"timeout_s": 60}}


class Soak:
    """One client session: random actions until the time is up, with a tally of every request."""

    def __init__(self, client: Any, root: Path, rng: random.Random, tally: Tally) -> None:
        self.client, self.root, self.rng, self.tally = client, root, rng, tally
        self.versions: dict[str, int] = {}
        self.runs: list[str] = []

    def uri(self, name: str) -> str:
        return (self.root / name).as_uri()

    async def ask(self, method: str, call: Any) -> Any:
        started = time.perf_counter()
        self.tally.sent[method] = self.tally.sent.get(method, 0) + 1
        try:
            result = await asyncio.wait_for(call, REQUEST_TIMEOUT_S)
        except TimeoutError:
            self.tally.unanswered.append(method)
            return None
        except Exception as exc:  # noqa: BLE001 - a JSON-RPC error reply is an answer; count it
            self.tally.errors.append(f"{method}: {' '.join(str(exc).split())[:160]}")
            result = None
        self.tally.latency_ms.setdefault(method, []).append((time.perf_counter() - started) * 1000)
        return result

    def open_or_edit(self) -> None:
        """didOpen a closed file, or didChange an open one (now and then close and reopen it)."""
        name = self.rng.choice(FILES)
        text = (self.root / name).read_text() + f"\n# edit {self.rng.randrange(10**6)}\n" * self.rng.randrange(3)
        uri = self.uri(name)
        if uri in self.versions and self.rng.random() < 0.05:
            self.client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(uri)))
            del self.versions[uri]
            return
        self.versions[uri] = self.versions.get(uri, 0) + 1
        if self.versions[uri] == 1:
            item = lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
            self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=item))
            return
        doc = lsp.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri])
        change = lsp.TextDocumentContentChangeWholeDocument(text=text)
        self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(doc, [change]))

    async def code_action(self) -> None:
        uri = self.uri(self.rng.choice(FILES))
        line = self.rng.randrange(4)
        params = lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            range=lsp.Range(start=lsp.Position(line, 0), end=lsp.Position(line, 4)),
            context=lsp.CodeActionContext(diagnostics=[]),
        )
        await self.ask("textDocument/codeAction", self.client.text_document_code_action_async(params))

    async def command(self, name: str, argument: dict[str, Any]) -> Any:
        params = lsp.ExecuteCommandParams(command=name, arguments=[argument])
        return await self.ask(name, self.client.workspace_execute_command_async(params))

    async def start_run(self) -> None:
        name = self.rng.choice(FILES)
        if self.rng.random() < 0.5:
            answer = await self.command("agentls.planAndFix", {"uri": self.uri(name)})
        else:
            answer = await self.command("agentls.runTask", {"uri": self.uri(name), "goal": f"Tidy {name}."})
        run_id = (answer or {}).get("runId")
        if run_id:
            self.runs.append(run_id)
            self.tally.runs_started += 1
        else:
            self.tally.runs_refused += 1

    async def cancel(self) -> None:
        argument = {"runId": self.rng.choice(self.runs)} if self.runs and self.rng.random() < 0.9 else {}
        answer = await self.command("agentls.cancel", argument)
        self.tally.runs_cancelled += len((answer or {}).get("cancelled") or [])

    async def step(self) -> None:
        roll = self.rng.random()
        if roll < 0.35:
            self.open_or_edit()
        elif roll < 0.85:
            await self.code_action()
        elif roll < 0.93:
            await self.start_run()
        elif roll < 0.99:
            await self.cancel()
        else:
            await self.command("agentls.showTrace", {})


def _identified(pids: list[int]) -> set[tuple[int, str]]:
    return {(pid, proctree.start_time(pid)) for pid in pids}


def install_handlers(client: Any) -> None:
    @client.feature(lsp.WORKSPACE_APPLY_EDIT)
    def apply_edit(ls: Any, params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
        return lsp.ApplyWorkspaceEditResult(applied=True)

    @client.feature(lsp.WINDOW_SHOW_MESSAGE_REQUEST)
    def show_message_request(ls: Any, params: lsp.ShowMessageRequestParams) -> lsp.MessageActionItem:
        return lsp.MessageActionItem(title="Reject")


async def soak(minutes: float, seed: int, trace_memory: Path | None = None,
               malloc_trim: float | None = None) -> dict[str, Any]:
    rng = random.Random(seed)
    tally = Tally()
    work = Path(tempfile.mkdtemp(prefix="agentls-soak-"))
    tmp = work / "tmp"
    tmp.mkdir()
    tmp.chmod(0o1777)
    root = make_workspace(work / "ws")
    with ScriptedLLM() as llm:
        llm.default("planner", PLAN)
        moods = random.Random(seed + 1)  # the scripted server's thread draws from its own generator
        llm.default("coder", lambda body: coder_answer(moods))
        llm.default("*", Fault.slow(0.02, "calc.add must add its arguments."))
        client = make_test_lsp_client()
        fix_code_action_structure(client)
        install_handlers(client)
        env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT)}
        server = ["-m", "lsp_server"]
        if trace_memory is not None:  # traced from 2 minutes in, a snapshot a minute (bench/soak_memtrace.py)
            server = ["-m", "bench.soak_memtrace", str(trace_memory.resolve()), "120", "60"]
        elif malloc_trim is not None:  # glibc's free memory handed back now and then (bench/soak_trim.py)
            server = ["-m", "bench.soak_trim", str(malloc_trim)]
        await client.start_io(sys.executable, *server, env=env)
        server_pid = client._server.pid
        await client.initialize_session(lsp.InitializeParams(
            capabilities=client_capabilities("visual_studio_code"), root_uri=root.as_uri(),
            workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name="ws")],
            initialization_options={"baseUrl": llm.base_url, "model": "scripted", **SETTINGS},
        ))
        session = Soak(client, root, rng, tally)
        started = time.monotonic()
        end, next_sample = started + minutes * 60, started
        seen: set[tuple[int, str]] = set()  # (pid, start time): pids are reused many times in 30 minutes
        while time.monotonic() < end:
            await session.step()
            await asyncio.sleep(rng.uniform(0.02, 0.2))
            if time.monotonic() >= next_sample:
                tally.rss.append((round(time.monotonic() - started), rss_kb(server_pid)))
                seen.update(_identified(descendants(server_pid)))
                next_sample += 10
        await session.command("agentls.cancel", {})
        seen.update(_identified(descendants(server_pid)))
        await asyncio.wait_for(client.shutdown_session(), REQUEST_TIMEOUT_S)
        await client.stop()
        await asyncio.sleep(2)  # killed process groups are reaped
        tally.llm_requests = len(llm.requests)
    alive = {pid for pid, started in seen if proctree.start_time(pid) == started and not _zombie(pid)}
    leftover_processes = sorted(alive | set(proctree.owned_by(server_pid)))  # re-parented sandbox processes too
    detail = [_describe(pid) for pid in leftover_processes]
    leftover_files = sorted(p.name for p in tmp.iterdir())
    shutil.rmtree(work, ignore_errors=True)
    report = tally.report(minutes, leftover_processes, leftover_files)
    report["leftover_detail"] = detail
    report["server_alive_at_check"] = proctree.start_time(server_pid) != ""
    return report


def _zombie(pid: int) -> bool:
    """Dead, waiting to be reaped (here init reaps re-parented children late): not a process left running."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def _describe(pid: int) -> str:
    """A leftover process in a line: state, parent, group, session, start (ticks), its command's start."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return f"{pid}: gone"
    return f"{pid}: {fields[0]} ppid={fields[1]} pgid={fields[2]} sid={fields[3]} start={fields[19]} {command[:160]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the report here")
    parser.add_argument("--trace-memory", type=Path, metavar="DIR",
                        help="run the server under tracemalloc, snapshots in DIR (bench/soak_memtrace.py)")
    parser.add_argument("--malloc-trim", type=float, metavar="SECONDS",
                        help="call glibc's malloc_trim(0) in the server this often (bench/soak_trim.py)")
    args = parser.parse_args()
    report = asyncio.run(soak(args.minutes, args.seed, args.trace_memory, args.malloc_trim))
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
