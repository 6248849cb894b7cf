"""Gen-tests' mutation keep rule on the real sandbox, with the real openai client against the scripted server.

The figures of the result's mutation block are checked against an independent
oracle: every mutant written into a copy of the module and the tests run on it
by a plain pytest process here.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent_core.events import NullHooks
from agent_core.gentests.mutation import select_mutants, statement_lines
from agent_core.gentests.run import run_gen_tests
from agent_core.models import RunRequest
from agent_core.settings import Settings
from agent_core.workspace.changeset import apply_change_set

PRICES = '''"""Prices."""


def price(qty, unit):
    """Price of qty items at unit each; every 10th item is free."""
    free = qty // 10
    return (qty - free) * unit
'''
EXISTING = '''"""Hand-written tests of prices."""
from prices import price


def test_one_item():
    assert price(1, 2) == 2
'''


def _tests(*tests: tuple[str, str]) -> str:
    return json.dumps({"tests": [{"name": n, "code": f"from prices import price\n\n\ndef {n}():\n{body}",
                                  "kind": "pytest", "target": "price", "rationale": "r"} for n, body in tests]})


FIRST = _tests(("test_price_runs", "    price(20, 3)\n"),  # executes every line, checks nothing
               ("test_price_twenty", "    assert price(20, 3) == 54\n"))
FOLLOW_UP = _tests(("test_price_eighteen", "    assert price(18, 1) == 17\n"),  # kills `// 9` only
                   ("test_price_twenty_again", "    assert price(20, 3) == 54\n"))  # kills no survivor


@pytest.fixture
def prices_workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "pricesws"
    (ws / "tests").mkdir(parents=True)
    (ws / "pyproject.toml").write_text('[project]\nname = "prices"\nversion = "0"\n')
    (ws / "prices.py").write_text(PRICES)
    (ws / "tests" / "test_prices.py").write_text(EXISTING)
    return ws


def _oracle(workspace: Path, tests: str, scratch: Path) -> tuple[set[tuple[int, str]], set[tuple[int, str]]]:
    """(killed, surviving) mutants of price, each tried by a plain pytest run on a mutated copy."""
    killed, alive = set(), set()
    for mutant in select_mutants("prices.py", PRICES, statement_lines(PRICES, [(4, 7)]), 80):
        copy = scratch / f"m{len(killed) + len(alive)}"
        shutil.copytree(workspace, copy, ignore=shutil.ignore_patterns(".agentls"))
        lines = PRICES.split("\n")
        lines[mutant.line - 1] = mutant.text
        (copy / "prices.py").write_text("\n".join(lines))
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", tests],
                              cwd=copy, capture_output=True, check=False)
        (killed if proc.returncode != 0 else alive).add((mutant.line, mutant.description))
        shutil.rmtree(copy)
    return killed, alive


def _tester(body: dict) -> str:
    text = body["messages"][-1]["content"]
    if "goes unnoticed by every test" in text:
        return FOLLOW_UP
    if "Code under test (price)" in text:
        return FIRST
    raise AssertionError(f"unexpected tester prompt: {text[:200]}")


async def test_tests_are_kept_for_the_mutants_they_kill(scripted_llm, prices_workspace: Path, tmp_path: Path):
    scripted_llm.default("tester", _tester)
    pristine = tmp_path / "pristine"
    shutil.copytree(prices_workspace, pristine)
    settings = Settings(base_url=scripted_llm.base_url, max_iterations=1)
    request = RunRequest(kind="gen_tests", workspace=prices_workspace, target_file="prices.py", run_id="m1")
    result = await run_gen_tests(request, settings, NullHooks())

    assert result.status == "ok", result.error
    assert result.gen_tests is not None
    reasons = {d.test: d.reason for d in result.gen_tests.dropped}
    assert reasons == {"test_price_runs": "kills no mutant that the earlier tests leave alive",
                       "test_price_twenty_again": "kills none of the surviving mutants it was asked for"}
    kept = {k.test: k.reason for k in result.gen_tests.kept}
    assert list(kept) == ["test_price_twenty", "test_price_eighteen"]
    assert kept["test_price_twenty"].startswith("kills 4 mutant(s) the earlier tests miss")
    assert kept["test_price_eighteen"].startswith("kills 1 surviving mutant(s)")

    # the follow-up call showed the survivors as changes no test notices
    follow_up = scripted_llm.requests_for("tester")[-1]["messages"][-1]["content"]
    assert "`free = qty // 10` becomes `free = qty // 9`" in follow_up
    assert len(scripted_llm.requests_for("tester")) == 2

    # the figures agree with an independent oracle: plain pytest on each mutated copy
    assert result.gen_tests.mutation is not None
    mutation = result.gen_tests.mutation.model_dump()
    before_killed, _ = _oracle(pristine, "tests/test_prices.py", tmp_path)
    apply_change_set(prices_workspace, result.change_set)
    after_killed, after_alive = _oracle(prices_workspace, "tests/test_prices.py", tmp_path)
    assert mutation["mutants"] == len(after_killed) + len(after_alive) == 13
    assert (mutation["killed_before"], mutation["killed_after"]) == (len(before_killed), len(after_killed)) == (7, 12)
    assert {(s["line"], s["change"]) for s in mutation["survivors"]} == after_alive == {(6, "`qty` -> `(qty + 1)`")}
    assert mutation["survivors"][0]["file"] == "prices.py"
    assert "mutants killed 7 -> 12 of 13 (1 survive)" in result.summary
    text = (prices_workspace / "tests" / "test_prices.py").read_text()
    assert "def test_price_runs" not in text and "def test_price_eighteen" in text


async def test_mutation_off_keeps_the_coverage_rule(scripted_llm, prices_workspace: Path):
    scripted_llm.default("tester", _tester)
    settings = Settings(base_url=scripted_llm.base_url, max_iterations=1, mutation={"enabled": False})
    request = RunRequest(kind="gen_tests", workspace=prices_workspace, target_file="prices.py")
    result = await run_gen_tests(request, settings, NullHooks())

    assert result.status == "ok", result.error
    assert result.gen_tests and result.gen_tests.mutation is None
    # the existing test already runs every line: neither new test adds coverage
    assert {d.reason for d in result.gen_tests.dropped} == {"adds no line or branch coverage"}
    assert len(scripted_llm.requests_for("tester")) == 1
