"""textDocument/codeAction latency on a 5,000-line file, idle and while three runs go.

Starts the real server (`python -m lsp_server`) over stdio with pytest-lsp's
client and the scripted OpenAI-compatible server, opens a 5,000-line Python
file and times R code-action round trips (client send -> reply), each
measurement set R requests after a warm-up. "busy" starts three runs
(`agentls.runTask`) on three other files whose coder call hangs in the
scripted model, so the runs stay in progress while measuring. Each set is repeated N times and
the median of the p50s / p99s is printed, idle and busy side by side.

    python -m bench.codeaction_latency [--requests 200] [--repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Union

from lsprotocol import types as lsp
from pytest_lsp import client_capabilities
from pytest_lsp.client import make_test_lsp_client

from testkit.scripted_llm import Fault, ScriptedLLM

ROOT = Path(__file__).resolve().parents[1]

LINES = 5000
PLAN = {"approach": "edit", "subtasks": [{"id": "t1", "description": "change the file", "files": []}]}


def make_workspace(root: Path) -> None:
    funcs = [f"def f{i}(x):\n    y = x + {i}\n    return y * 2\n\n" for i in range(LINES // 4)]
    (root / "big.py").write_text("".join(funcs))
    for name in ("a", "b", "c"):
        (root / f"{name}.py").write_text(f"def {name}():\n    return 1\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_abc.py").write_text("from a import a\n\n\ndef test_a():\n    assert a() == 1\n")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def _fix_code_action_structure(client: Any) -> None:
    converter = client.protocol._converter

    def structure(obj: Any, _type: Any) -> Any:
        target = lsp.Command if isinstance(obj, dict) and isinstance(obj.get("command"), str) else lsp.CodeAction
        return converter.structure(obj, target)

    # typing.Union, not `X | Y`: cattrs keys the hook on this exact type object.
    converter.register_structure_hook(Union[lsp.Command, lsp.CodeAction], structure)  # noqa: UP007


async def measure(client: Any, uri: str, requests: int) -> list[float]:
    times = []
    for i in range(requests):
        line = (i * 37) % LINES
        params = lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            range=lsp.Range(start=lsp.Position(line, 4), end=lsp.Position(line, 4)),
            context=lsp.CodeActionContext(diagnostics=[]),
        )
        started = time.perf_counter()
        actions = await client.text_document_code_action_async(params)
        times.append((time.perf_counter() - started) * 1000)
        assert actions and len(actions) == 2
    return times


async def start_runs(client: Any, root: Path, llm: ScriptedLLM) -> list[str]:
    ids = []
    for name in ("a", "b", "c"):
        params = lsp.ExecuteCommandParams(
            command="agentls.runTask",
            arguments=[{"uri": (root / f"{name}.py").as_uri(), "goal": f"Add a docstring to {name}()."}],
        )
        ids.append((await client.workspace_execute_command_async(params))["runId"])
    deadline = time.monotonic() + 120
    while len(llm.requests_for("coder")) < 3:  # every run is now inside its (hanging) coder call
        if time.monotonic() > deadline:
            raise SystemExit(f"runs did not reach the coder: {[m.message for m in client.messages]}")
        await asyncio.sleep(0.1)
    return ids


async def session(root: Path, llm: ScriptedLLM, tmp: Path, requests: int, busy: bool) -> tuple[float, float]:
    client = make_test_lsp_client()
    _fix_code_action_structure(client)
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT)}
    await client.start_io(sys.executable, "-m", "lsp_server", env=env)
    await client.initialize_session(
        lsp.InitializeParams(
            capabilities=client_capabilities("visual_studio_code"),
            root_uri=root.as_uri(),
            initialization_options={"baseUrl": llm.base_url, "model": "scripted", "memory": {"enabled": False}},
        )
    )
    uri = (root / "big.py").as_uri()
    item = lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=(root / "big.py").read_text())
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=item))
    try:
        if busy:
            await start_runs(client, root, llm)
        await measure(client, uri, 20)  # warm-up
        times = await measure(client, uri, requests)
    finally:
        cancel = lsp.ExecuteCommandParams(command="agentls.cancel", arguments=[{}])
        await client.workspace_execute_command_async(cancel)
        await client.shutdown_session()
        await client.stop()
    return percentile(times, 0.5), percentile(times, 0.99)


async def main_async(requests: int, repeats: int) -> None:
    results: dict[str, list[tuple[float, float]]] = {"idle": [], "busy (3 runs)": []}
    with tempfile.TemporaryDirectory(prefix="agentls-bench-ws-") as ws, ScriptedLLM() as llm:
        tmp = Path(tempfile.mkdtemp(prefix="agentls-bench-tmp-"))
        tmp.chmod(0o1777)
        root = Path(ws)
        make_workspace(root)
        llm.default("planner", PLAN)
        llm.default("coder", Fault.hang(600))
        try:
            for _ in range(repeats):
                results["idle"].append(await session(root, llm, tmp, requests, busy=False))
                results["busy (3 runs)"].append(await session(root, llm, tmp, requests, busy=True))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"textDocument/codeAction on a {LINES}-line file, {requests} requests, median of {repeats} sessions")
    print(f"{'':16}{'p50 ms':>10}{'p99 ms':>10}")
    for name, rows in results.items():
        p50 = statistics.median(r[0] for r in rows)
        p99 = statistics.median(r[1] for r in rows)
        print(f"{name:16}{p50:10.2f}{p99:10.2f}")
    idle, busy = (statistics.median(r[1] for r in rows) for rows in results.values())
    print(f"busy/idle p99 ratio: {busy / idle:.2f} (target: p99 < 20 ms in both)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main_async(args.requests, args.repeats))


if __name__ == "__main__":
    main()
