"""The locks between agentls processes: a wait that runs out names the holder; a dead holder frees the lock.

The holder is a real second process holding the lock through the same code;
the waiter is the real endpoint / fetch code with a short AGENTLS_MODEL_LOCK_TIMEOUT.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from local_model_support import PYTHON, subprocess_env

from agent_core.llm.base import LLMUnavailable
from agent_core.local_model import endpoint
from agent_core.local_model.fetch import FetchError, fetch_model
from agent_core.local_model.locks import ENV_LOCK_TIMEOUT, LockBusy, exclusive, holder_path
from agent_core.settings import Settings

HOLD = (
    "import sys\nfrom pathlib import Path\nfrom agent_core.local_model.locks import exclusive\n"
    "with exclusive(Path(sys.argv[1]), 30, 'a test'):\n    print('HELD', flush=True)\n    sys.stdin.read()\n"
)


@contextmanager
def held_by_another_process(lock: Path) -> Iterator[subprocess.Popen]:
    """A second process holding `lock` until its stdin closes (or it is killed)."""
    holder = subprocess.Popen([PYTHON, "-c", HOLD, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=subprocess_env())
    try:
        line = holder.stdout.readline()
        assert line == "HELD\n", holder.stderr.read()
        yield holder
    finally:
        if holder.poll() is None:
            holder.stdin.close()
        holder.wait(timeout=30)


def test_server_start_wait_names_the_holder_then_proceeds(server_env, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(ENV_LOCK_TIMEOUT, "1")
    lock = server_env["model_dir"] / "server.lock"
    with held_by_another_process(lock) as holder:
        with pytest.raises(LLMUnavailable) as caught:
            endpoint.ensure_local_endpoint(Settings(), notify=lambda _: None)
        message = str(caught.value)
        assert f"held by pid {holder.pid} (" in message and "starting the local model server" in message
        assert str(lock) in message and ENV_LOCK_TIMEOUT in message
        holder.stdin.close()
        assert holder.wait(timeout=30) == 0
    assert not holder_path(lock).exists(), "the holder file goes with the lock"
    url = endpoint.ensure_local_endpoint(Settings(), notify=lambda _: None)
    assert url.startswith("http://127.0.0.1:")


def test_fetch_wait_names_the_holder_then_fetches(fake_model, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(ENV_LOCK_TIMEOUT, "1")
    lock = fake_model.model_dir / f"fetch-{fake_model.spec.name}.lock"
    with held_by_another_process(lock) as holder:
        with pytest.raises(FetchError, match=rf"fetching agentls-test-model .*held by pid {holder.pid} \("):
            fetch_model(fake_model.spec, fake_model.model_dir, progress=False)
    done = fetch_model(fake_model.spec, fake_model.model_dir, progress=False)
    assert done.fetched and done.path.read_bytes() == fake_model.data


def test_a_killed_holder_frees_the_lock(tmp_path: Path):
    lock = tmp_path / "locks" / "server.lock"
    with held_by_another_process(lock) as holder:
        recorded = json.loads(holder_path(lock).read_text())
        assert recorded["pid"] == holder.pid and "exclusive" in recorded["command"]
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    assert holder_path(lock).exists(), "SIGKILL left its holder file behind"
    with exclusive(lock, 5, "a test"):
        assert json.loads(holder_path(lock).read_text())["pid"] == os.getpid()
    assert not holder_path(lock).exists()


def test_no_holder_file_is_said(tmp_path: Path):
    lock = tmp_path / "fetch.lock"
    with held_by_another_process(lock):
        holder_path(lock).unlink()
        with pytest.raises(LockBusy, match=r"held by another process \(no holder recorded\)"):
            with exclusive(lock, 0.2, "a test"):
                pass


def test_a_bad_wait_setting_is_a_clear_error(server_env, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(ENV_LOCK_TIMEOUT, "soon")
    with pytest.raises(LLMUnavailable, match="AGENTLS_MODEL_LOCK_TIMEOUT='soon' is not a number"):
        endpoint.ensure_local_endpoint(Settings(), notify=lambda _: None)
