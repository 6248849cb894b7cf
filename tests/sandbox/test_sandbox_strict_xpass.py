"""A test its authors marked `xfail(strict=True)` that fails at the baseline because it passed is fixed when it
fails again as its mark expects, on its own assertion; not when the code under test crashes, nor when the code
calls `pytest.xfail()`.

python-dateutil's `test_non_date_number` is such a test (`with pytest.raises(ParserError): parse('1,700')` under
an xfail mark, strict in its setup.cfg): the author's one-line fix makes the `pytest.raises` see nothing raised,
and the verdict's "an xfail is not a pass" had refused it. Run through the real bubblewrap sandbox with agentls'
test plugin, on this interpreter's pytest and on a project's own venv (Python 3.8, pytest 8.3.5).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_support import make_backend

from agent_core.models import TestReport as Report
from agent_core.sandbox.bubblewrap import probe_bwrap
from agent_core.sandbox.cleanup import make_temp_dir, remove_temp_dir
from agent_core.testing.runner import run_tests
from agent_core.testing.verdict import judge
from old_python import copy_venv_into

pytestmark = pytest.mark.skipif(not probe_bwrap()[0], reason="bubblewrap cannot run here")

TESTS = (
    "import pytest\n\nfrom dates import parse\n\n\n"
    "@pytest.mark.xfail(strict=True)\ndef test_not_a_date():\n"
    "    with pytest.raises(ValueError):\n        parse('1,700')\n\n\n"
    "def test_a_date():\n    assert parse('01-99') == (1, 99)\n"
)
HEAD = "def parse(text):\n    first, second = (int(part) for part in text.replace(',', '-').split('-'))\n"
CODE = {
    # the bug: a month-year like 1,700 is refused, which the strict xfail test says the code does not do yet
    "buggy": HEAD + "    if second > 99:\n        raise ValueError(text)\n    return first, second\n",
    "fixed": HEAD + "    return first, second\n",
    "crash": HEAD + "    if second > 99:\n        raise TypeError(text)\n    return first, second\n",
    "called": HEAD + "    if second > 99:\n        import pytest\n        pytest.xfail('later')\n"
                     "    return first, second\n",
}
NODE = "tests/test_dates.py::test_not_a_date"


def _run(ws: Path, code: str) -> Report:
    (ws / "dates.py").write_text(code)
    return asyncio.run(run_tests(make_backend("bubblewrap"), ws, "pytest", timeout_s=120))


@pytest.fixture(scope="module", params=[None, "py3.8.18-pytest8.3.5"], ids=["host-python", "python3.8"])
def reports(request: pytest.FixtureRequest) -> Iterator[dict[str, Report]]:
    base = make_temp_dir("strict-xpass")
    try:
        ws = base / "project"
        (ws / "tests").mkdir(parents=True)
        (ws / "tests" / "test_dates.py").write_text(TESTS)
        (ws / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
        if request.param:
            copy_venv_into(ws, request.param)
        yield {name: _run(ws, code) for name, code in CODE.items()}
    finally:
        remove_temp_dir(base)


def test_the_baseline_fails_on_the_strict_xpass(reports: dict[str, Report]) -> None:
    baseline = reports["buggy"]
    assert [f.nodeid for f in baseline.failures] == [NODE], baseline.output
    assert baseline.failures[0].message.startswith("[XPASS(strict)]")


def test_failing_on_its_own_assertion_again_is_the_fix(reports: dict[str, Report]) -> None:
    fixed = reports["fixed"]
    assert fixed.outcomes[NODE] == "xfailed" and fixed.xfailed_on_assertion == [NODE], fixed.output
    verdict = judge(fixed, reports["buggy"])
    assert verdict.ok, [f.message for f in verdict.failures]


def test_a_crash_of_the_code_is_not_the_fix(reports: dict[str, Report]) -> None:
    crash = reports["crash"]
    assert crash.outcomes[NODE] == "xfailed" and crash.xfailed_on_assertion == [], crash.output
    verdict = judge(crash, reports["buggy"])
    assert not verdict.ok
    assert "on a crash of the code under test" in " | ".join(f.message for f in verdict.failures)


def test_a_called_xfail_is_a_skip_not_the_fix(reports: dict[str, Report]) -> None:
    called = reports["called"]
    assert called.outcomes[NODE] == "skipped", called.output
    verdict = judge(called, reports["buggy"])
    assert not verdict.ok and "a skip is not a pass" in " | ".join(f.message for f in verdict.failures)
