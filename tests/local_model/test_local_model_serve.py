"""The local server's lifecycle with a stand-in server launched through the real code path."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from local_model_support import FAKE_SERVER, PYTHON, subprocess_env

from agent_core.llm.base import LLMUnavailable
from agent_core.local_model import batched_server, endpoint
from agent_core.local_model import serve as srv
from agent_core.settings import Settings


def _gone(pid: int, timeout_s: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not srv.pid_alive(pid):
            return True
        time.sleep(0.1)
    return False


def _models(base_url: str) -> dict:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(f"{base_url}/models", timeout=5) as resp:
        return json.loads(resp.read())


def test_start_reuse_stop(server_env):
    said: list[str] = []
    url = endpoint.ensure_local_endpoint(Settings(), notify=said.append)
    assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
    assert _models(url)["data"][0]["id"] == "qwen2.5-coder-1.5b", "the alias is the model name clients send"
    assert len(said) == 1 and "started the local model" in said[0] and url in said[0]
    state = srv.read_state(server_env["model_dir"])
    assert state is not None and state.base_url == url and srv.pid_alive(state.pid)

    assert endpoint.ensure_local_endpoint(Settings(), notify=said.append) == url
    assert len(said) == 1, "a running server is reused silently"

    # Another process reuses it too, without starting its own.
    probe = (
        "from agent_core.local_model.endpoint import ensure_local_endpoint\n"
        "from agent_core.settings import Settings\n"
        "print(ensure_local_endpoint(Settings(), notify=lambda m: print('NOTE', m)))\n"
    )
    out = subprocess.run([PYTHON, "-c", probe], capture_output=True, text=True, env=subprocess_env(), timeout=60)
    assert out.stdout.strip() == url, out.stderr

    endpoint.stop_local_endpoint()
    assert _gone(state.pid)
    assert not srv.answers(url)
    assert srv.read_state(server_env["model_dir"]) is None
    assert not Path(state.log_path).exists(), "a clean stop leaves no log behind"


def test_a_crashed_server_keeps_its_log_and_is_replaced(server_env):
    said: list[str] = []
    url = endpoint.ensure_local_endpoint(Settings(), notify=said.append)
    first = srv.read_state(server_env["model_dir"])
    with contextlib.suppress(OSError):
        urllib.request.build_opener(urllib.request.ProxyHandler({})).open(url.removesuffix("/v1") + "/crash", timeout=5)
    assert _gone(first.pid)
    second = endpoint.ensure_local_endpoint(Settings(), notify=said.append)
    assert srv.answers(second) and len(said) == 2, "a dead server is replaced, and the user is told again"
    assert "segmentation fault (pretend)" in Path(first.log_path).read_text(), "the crash log is kept"


def test_a_busy_server_is_reused_not_duplicated(server_env):
    url = endpoint.ensure_local_endpoint(Settings(), notify=lambda m: None)
    Path(str(server_env["model_file"]) + ".busy").write_text("generating")
    assert not srv.answers(url, timeout_s=1.0)
    probe = (
        "from agent_core.local_model.endpoint import ensure_local_endpoint\n"
        "from agent_core.settings import Settings\n"
        "print(ensure_local_endpoint(Settings(), notify=lambda m: print('STARTED', m)))\n"
    )
    out = subprocess.run([PYTHON, "-c", probe], capture_output=True, text=True, env=subprocess_env(), timeout=60)
    assert out.stdout.strip() == url, out.stdout + out.stderr
    Path(str(server_env["model_file"]) + ".busy").unlink()


def test_server_dies_with_the_process_that_started_it(server_env):
    owner = (
        "import sys, time\n"
        "from agent_core.local_model.endpoint import ensure_local_endpoint\n"
        "from agent_core.settings import Settings\n"
        "print(ensure_local_endpoint(Settings(), notify=lambda m: None), flush=True)\n"
        "time.sleep(120)\n"
    )
    proc = subprocess.Popen([PYTHON, "-c", owner], stdout=subprocess.PIPE, text=True, env=subprocess_env())
    try:
        url = proc.stdout.readline().strip()
        assert srv.answers(url)
        state = srv.read_state(server_env["model_dir"])
        proc.send_signal(signal.SIGKILL)  # no atexit, no cleanup code runs
        proc.wait(10)
        assert _gone(state.pid), "the watchdog must stop the server when its owner dies"
        deadline = time.monotonic() + 10
        while srv.answers(url) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not srv.answers(url)
        assert srv.find_running(server_env["model_dir"]) is None
    finally:
        proc.kill()
        proc.wait()


def test_port_taken_is_refused(server_env):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        config = srv.ServerConfig(model_path=server_env["model_file"], alias="x", port=port)
        with pytest.raises(srv.ServerError, match=f"port {port} on 127.0.0.1 is taken"):
            srv.start_server(config, server_env["model_dir"])


def test_server_program_missing(server_env, monkeypatch):
    monkeypatch.setenv("AGENTLS_MODEL_SERVER_CMD", "/nonexistent/llama-server --port {port}")
    with pytest.raises(LLMUnavailable, match="'/nonexistent/llama-server' was not found"):
        endpoint.ensure_local_endpoint(Settings(), notify=lambda m: None)


def test_llama_cpp_missing_says_how_to_install(server_env, monkeypatch, tmp_path: Path):
    bare = tmp_path / "bare-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    monkeypatch.delenv("AGENTLS_MODEL_SERVER_CMD")
    monkeypatch.setenv("AGENTLS_MODEL_SERVER_PYTHON", str(bare / "bin" / "python"))
    hint = r"missing: llama_cpp.*bare-venv/bin/python -m pip install 'llama-cpp-python\[server\]"
    with pytest.raises(LLMUnavailable, match=hint):
        endpoint.ensure_local_endpoint(Settings(), notify=lambda m: None)


def test_server_dying_during_start_shows_its_log(server_env, monkeypatch):
    monkeypatch.setenv("AGENTLS_MODEL_SERVER_CMD", f"{{python}} {FAKE_SERVER} --die --model {{model}} "
                       "--model_alias {alias} --port {port}")
    with pytest.raises(LLMUnavailable) as err:
        endpoint.ensure_local_endpoint(Settings(), notify=lambda m: None)
    assert "exited during start" in str(err.value)
    assert "failed to load model (bad tensor data)" in str(err.value)
    assert srv.read_state(server_env["model_dir"]) is None


def test_model_not_fetched_tells_the_user_what_to_run(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("AGENTLS_MODEL_DIR", str(tmp_path / "empty"))
    monkeypatch.delenv("AGENTLS_LOCAL_MODEL", raising=False)
    monkeypatch.delenv("AGENTLS_AUTO_FETCH", raising=False)
    monkeypatch.setenv("AGENTLS_MODEL_SERVER_CMD", f"{{python}} {FAKE_SERVER} --port {{port}}")  # a runtime
    with pytest.raises(LLMUnavailable, match="run `agentls model fetch --model qwen2.5-coder-1.5b`"):
        endpoint.ensure_local_endpoint(Settings(), notify=lambda m: None)


def test_a_missing_runtime_is_said_before_the_fetch_and_nothing_is_fetched(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("AGENTLS_MODEL_DIR", str(tmp_path / "empty"))
    monkeypatch.delenv("AGENTLS_LOCAL_MODEL", raising=False)
    monkeypatch.delenv("AGENTLS_MODEL_SERVER_CMD", raising=False)
    monkeypatch.setenv("AGENTLS_MODEL_SERVER_PYTHON", "/usr/bin/python3")  # no llama-cpp-python there
    monkeypatch.setenv("AGENTLS_AUTO_FETCH", "1")  # even so: a fetched model could not run
    with pytest.raises(LLMUnavailable) as err:
        endpoint.ensure_local_endpoint(Settings(), notify=lambda m: None)
    assert str(err.value).startswith("the bundled local model cannot run here: llama-cpp-python's server is not "
                                     "installed in /usr/bin/python3"), err.value
    assert "then `agentls model fetch`" in str(err.value) and "AGENTLS_BASE_URL" in str(err.value)
    assert not (tmp_path / "empty").exists() or not any((tmp_path / "empty").rglob("*.whl")), "nothing fetched"


def test_cli_serve_runs_until_signalled(server_env):
    env = subprocess_env({k: str(v) for k, v in server_env.items() if k.startswith("AGENTLS_")})
    proc = subprocess.Popen([PYTHON, "-m", "agent_core", "model", "serve"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        assert "serving qwen2.5-coder-1.5b at http://127.0.0.1:" in line, proc.stderr.read() if proc.poll() else line
        url = line.split(" at ")[1].split()[0]
        status = subprocess.run([PYTHON, "-m", "agent_core", "model", "status", "--json"], capture_output=True,
                                text=True, env=env, timeout=60)
        assert json.loads(status.stdout)["server"]["base_url"] == url
        pid = srv.read_state(server_env["model_dir"]).pid
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
        assert _gone(pid) and not srv.answers(url)
        assert srv.read_state(server_env["model_dir"]) is None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_cli_serve_port_taken_exits_2(server_env, capsys):
    from agent_core.cli import main as cli_main

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        assert cli_main(["model", "serve", "--port", str(sock.getsockname()[1])]) == 2
    assert "is taken" in capsys.readouterr().err


def test_watchdog_without_a_command_explains_usage():
    out = subprocess.run([PYTHON, "-m", "agent_core.local_model.watchdog"], capture_output=True, text=True,
                         env=subprocess_env(), timeout=30)
    assert out.returncode == 2 and "usage" in out.stderr
    assert os.path.exists(FAKE_SERVER)


def test_model_status_names_a_missing_runtime(tmp_path: Path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTLS_", "OPENAI_"))}
    env.update(AGENTLS_MODEL_DIR=str(tmp_path / "models"), AGENTLS_MODEL_SERVER_PYTHON="/usr/bin/python3")
    text = subprocess.run([sys.executable, "-m", "agent_core", "model", "status"], env=env, capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    assert "runtime: missing: llama-cpp-python's server is not installed in /usr/bin/python3" in text.stdout
    data = subprocess.run([sys.executable, "-m", "agent_core", "model", "status", "--json"], env=env,
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert "llama_cpp" in json.loads(data.stdout)["runtime_missing"]


def test_the_default_command_reads_prompts_on_every_core_and_keeps_no_prompt_cache(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("AGENTLS_MODEL_SERVER_CMD", raising=False)
    model = tmp_path / "m.gguf"

    def flags(config: srv.ServerConfig) -> dict[str, str]:
        argv = srv.build_command(config, 8631)
        return {argv[i]: argv[i + 1] for i in range(len(argv) - 1) if argv[i].startswith("--")}

    bare = flags(srv.ServerConfig(model_path=model, alias="x"))
    assert bare["--cache"] == "false" and bare["--cache_size"] == "0"
    assert bare["--kept"] == str(batched_server.KEPT) == str(srv.KEPT_PROMPTS), "the server's own default, said"
    assert flags(srv.ServerConfig(model_path=model, alias="x", kept_prompts=0))["--kept"] == "0"
    assert bare["--port"] == "8631" and bare["--interrupt_requests"] == "false"
    cores = len(os.sched_getaffinity(0))  # the prompt is read by every core, the answer written by one fewer
    assert bare["--n_threads_batch"] == str(min(cores, 8)) and bare["--n_threads"] == str(max(1, min(cores - 1, 8)))
    cached = flags(srv.ServerConfig(model_path=model, alias="x", cache_bytes=srv.PROMPT_CACHE_BYTES))
    assert cached["--cache"] == "true" and cached["--cache_size"] == str(2 << 30)
    monkeypatch.setenv("AGENTLS_MODEL_SERVER_CMD", "{python} -m srv --cache {cache} --cache_size {cache_size}")
    assert srv.build_command(srv.ServerConfig(model_path=model, alias="x", cache_bytes=1 << 20), 1)[-4:] == \
        ["--cache", "true", "--cache_size", str(1 << 20)]
