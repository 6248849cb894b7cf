"""Backend choice: explicit names honoured, auto picks an isolated backend, a broken bwrap is reported."""

from __future__ import annotations

import pytest

from agent_core.sandbox.base import SandboxError
from agent_core.sandbox.bubblewrap import probe_bwrap
from agent_core.sandbox.factory import describe_backend_choice, make_sandbox
from agent_core.settings import SandboxSettings, Settings


def test_explicit_backends_are_honoured() -> None:
    bwrap = make_sandbox(SandboxSettings(backend="bubblewrap"))
    assert (bwrap.name, bwrap.isolated) == ("bubblewrap", True)
    messages: list[str] = []
    process = make_sandbox(Settings(sandbox=SandboxSettings(backend="process")), announce=messages.append)
    assert (process.name, process.isolated) == ("process", False)


def test_auto_prefers_an_isolated_backend() -> None:
    name, reason = describe_backend_choice(Settings())
    assert name in ("docker", "bubblewrap"), reason
    sandbox = make_sandbox(Settings())
    assert sandbox.name == name and sandbox.isolated


def test_a_missing_bwrap_probe_says_why(tmp_path) -> None:
    ok, reason = probe_bwrap(str(tmp_path / "no-such-bwrap"))
    assert not ok and "no-such-bwrap" in reason


async def test_unusable_python_setting_is_a_failed_command(workspace) -> None:
    sandbox = make_sandbox(SandboxSettings(backend="bubblewrap", python="/nonexistent/python3"))
    result = await sandbox.run([sandbox.python, "-c", "pass"], workspace, timeout_s=20)
    assert result.exit_code == 127 and "/nonexistent/python3" in result.stderr and "sandbox.python" in result.stderr


def test_secret_names_never_pass() -> None:
    from agent_core.sandbox.base import is_secret_name, sandbox_env

    env = sandbox_env({"AGENTLS_MODEL": "m", "HF_TOKEN": "t", "DB_PASSWORD": "p", "TERM": "xterm"})
    assert "TERM" in env and not any(is_secret_name(k) for k in env)


def test_explicit_unavailable_backend_is_an_error() -> None:
    with pytest.raises(SandboxError, match="unknown sandbox backend|unavailable"):
        make_sandbox(SandboxSettings.model_construct(backend="nonsense"))
