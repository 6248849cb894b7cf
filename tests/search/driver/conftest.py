"""What the driver tests share: a real bubblewrap sandbox (the projects' shadow copies: engine_support.shadowed)."""

from __future__ import annotations

import pytest

from agent_core.sandbox.base import Sandbox
from agent_core.sandbox.factory import make_sandbox
from agent_core.settings import SandboxSettings


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return make_sandbox(SandboxSettings(backend="bubblewrap", timeout_s=120))
