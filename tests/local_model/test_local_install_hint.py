"""The missing-server hint names the tool that made agentls' environment, not a `pip` that would miss it."""

from __future__ import annotations

import pytest

from agent_core.local_model.serve import install_hint


@pytest.mark.parametrize(
    "exe, expected",
    [
        ("/home/u/.local/share/pipx/venvs/agentls/bin/python", "pipx inject agentls 'llama-cpp-python[server]>=0.3'"),
        ("/home/u/.local/share/uv/tools/agentls/bin/python",
         "uv tool install --reinstall --with 'llama-cpp-python[server]>=0.3' PATH-OF-YOUR-AGENTLS-CHECKOUT"),
        ("/src/agentls/.venv/bin/python",
         "/src/agentls/.venv/bin/python -m pip install 'llama-cpp-python[server]>=0.3'"),
    ],
)
def test_the_hint_follows_the_environment(exe: str, expected: str) -> None:
    assert install_hint(exe) == expected
