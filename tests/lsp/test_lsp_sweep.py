"""At start the server removes what a crashed earlier server left: dead owners' temp dirs, never live ones."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from pathlib import Path

from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, client_capabilities

from agent_core.sandbox.cleanup import MARKER, make_temp_dir

REPO = Path(__file__).resolve().parents[2]


async def test_server_start_sweeps_dead_owners_leftovers(tmp_path: Path):
    tmpdir = Path(tempfile.mkdtemp(prefix="sweep-test-"))
    try:
        dead = tmpdir / "agentls-shadow-crashed"
        (dead / "ws").mkdir(parents=True)
        (dead / "ws" / "calc.py").write_text("x = 1\n")
        (dead / MARKER).write_text("4194000 12345\n")  # a pid above pid_max: its owner cannot be alive
        alive = make_temp_dir("shadow", parent=tmpdir)  # owned by this test process
        unmarked = tmpdir / "agentls-young-unmarked"
        unmarked.mkdir()
        env = {**os.environ, "TMPDIR": str(tmpdir), "PYTHONPATH": str(REPO)}
        client = await ClientServerConfig(server_command=[sys.executable, "-m", "lsp_server"], server_env=env).start()
        try:
            await client.initialize_session(lsp.InitializeParams(capabilities=client_capabilities("visual_studio_code"),
                                                                 root_uri=tmp_path.as_uri()))
            for _ in range(100):
                if not dead.exists():
                    break
                await asyncio.sleep(0.1)
            assert not dead.exists(), "the crashed run's shadow copy is still there"
            assert alive.is_dir() and unmarked.is_dir(), "a live owner's dir or a young unmarked dir was removed"
        finally:
            await asyncio.wait_for(client.shutdown_session(), 30)
            await client.stop()
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
