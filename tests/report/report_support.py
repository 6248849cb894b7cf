"""Helpers of the run report tests: one real `agentls fix` run whose journal carries hostile text.

The run uses the real openai client against the scripted server and the real
sandbox: a wrong edit, a reflection, the right edit, an explanation. Markup
meant to run in the report (a closing script tag, an <img onerror>, an <svg
onload>) sits in the test's assertion message (so in test reports and in
prompts) and in the reflector's hypothesis (so in an answer and a reflection).
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent_core.cli import main
from testkit.project_support import FIX_EDIT, WRONG_EDIT, make_project
from testkit.scripted_llm import ScriptedLLM

HOSTILE = ('</script><script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
           '<svg onload="window.__pwned = 3"></svg>')

PROJECT = {
    "calc.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n",
    "test_calc.py": ("from calc import add, mul\n\n\ndef test_add():\n"
                     f"    assert add(2, 3) == 5, {HOSTILE!r}\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"),
}


@dataclass
class ReportedRun:
    workspace: Path
    run_id: str


@pytest.fixture(scope="module")
def reported_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReportedRun]:
    """A finished fix run (fixed in its second round) in a fresh workspace."""
    root = tmp_path_factory.mktemp("report")
    workspace = make_project(root / "proj", PROJECT)
    with pytest.MonkeyPatch.context() as env, ScriptedLLM() as llm:
        env.setenv("XDG_CACHE_HOME", str(root / "cache"))
        env.setenv("AGENTLS_API_KEY", "sk-test-SECRET-0123456789")
        for name in ("AGENTLS_BASE_URL", "OPENAI_BASE_URL", "AGENTLS_MODEL", "OPENAI_API_KEY", "DOCKER_HOST"):
            env.delenv(name, raising=False)
        llm.add("coder", WRONG_EDIT)
        llm.add("reflector", {"hypothesis": f"add multiplies {HOSTILE}", "file": "calc.py",
                              "change": "return a + b", "confidence": "high"})
        llm.add("coder", FIX_EDIT)
        llm.add("explainer", "add subtracted. It now adds, so test_add passes.")
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["fix", str(workspace), "--base-url", llm.base_url, "--json"])
    assert code == 0, err.getvalue()
    run_id = next(iter((workspace / ".agentls" / "runs").iterdir())).name
    yield ReportedRun(workspace, run_id)
