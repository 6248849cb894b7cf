"""Judging a failing generated test: the docstring check judges the assertion that failed, and a lazy
iterator compared with a list is a test to repair, never a suspected bug.

A generated test often starts with an assertion copied from the docstring's
example (it passes) and then asserts something the docstring does not promise
(it fails). Only the failing assertion may decide the verdict: the passing one
agreeing with the docstring says nothing about the failure.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_core.events import NullHooks
from agent_core.gentests.judge import classify, docstring_check, generator_body_ran, repair_hint
from agent_core.gentests.run import run_gen_tests
from agent_core.models import RunRequest
from agent_core.models import TestFailure as Failure
from agent_core.settings import Settings

DOC = """Return the value at path `keys`, or `default`.

    >>> lookup(['a'], {'a': 1})
    1
    >>> lookup(['b'], {'a': 1})
"""

LOOKUP = f'''"""A correct function whose docstring has examples."""


def lookup(keys, coll, default=None):
    """{DOC}
    """
    try:
        for key in keys:
            coll = coll[key]
        return coll
    except KeyError:
        return default
'''

DOC_THEN_WRONG = (
    "from lookup import lookup\n\n\n"
    "def test_lookup():\n"
    "    assert lookup(['a'], {'a': 1}) == 1\n"
    "    assert lookup(['b'], {'a': 1}) == 0\n"
)
REPAIRED = "from lookup import lookup\n\n\ndef test_lookup():\n    assert lookup(['a'], {'a': 1}) == 1\n"


def test_only_the_failing_lines_assertion_is_compared_with_the_docstring():
    assert docstring_check(DOC, DOC_THEN_WRONG, failing_line=6) is None  # `== 0`: no example says
    assert docstring_check(DOC, DOC_THEN_WRONG, failing_line=5) == "code_bug"  # the example's call, its value
    assert docstring_check(DOC, DOC_THEN_WRONG.replace("== 1", "== 2"), failing_line=5) == "test_wrong"
    assert docstring_check(DOC, DOC_THEN_WRONG) == "code_bug"  # no line: the first documented assertion


def _tests(code: str) -> str:
    return json.dumps({"tests": [{"name": "test_lookup", "code": code, "kind": "pytest", "target": "lookup",
                                  "rationale": "r"}]})


def _tester(body: dict) -> str:
    text = body["messages"][-1]["content"]
    if text.startswith("A test of lookup fails"):
        return json.dumps({"verdict": "test_wrong", "reason": "the docstring promises None, not 0"})
    if "does not run" in text:
        return _tests(REPAIRED)
    if "Code under test (lookup)" in text:
        return _tests(DOC_THEN_WRONG)
    raise AssertionError(f"unexpected tester prompt: {text[:200]}")


async def test_a_wrong_assertion_after_a_documented_one_is_not_a_suspected_bug(scripted_llm, tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "lookup.py").write_text(LOOKUP)
    scripted_llm.default("tester", _tester)
    settings = Settings(base_url=scripted_llm.base_url, max_iterations=1, mutation={"enabled": False})
    request = RunRequest(kind="gen_tests", workspace=workspace, target_file="lookup.py", run_id="judge")
    result = await run_gen_tests(request, settings, NullHooks())

    assert result.status == "ok", result.error
    assert result.gen_tests and result.gen_tests.suspected_bugs == []
    assert [k.test for k in result.gen_tests.kept] == ["test_lookup"]
    asked = [_r["messages"][-1]["content"] for _r in scripted_llm.requests_for("tester")]
    assert sum(t.startswith("A test of lookup fails") for t in asked) == 1  # the model judged, not the docstring
    text = result.change_set.changes[0].new
    assert "== 0" not in text and "suspected bug" not in text


PAIRS = '''"""A generator function."""


def pairs(xs):
    """Yield consecutive pairs.

    >>> list(pairs([1, 2, 3, 4]))
    [(1, 2), (3, 4)]
    """
    for i in range(0, len(xs) - 1, 2):
        yield xs[i], xs[i + 1]
'''
UNWRAPPED = "from pairs import pairs\n\n\ndef test_pairs():\n    assert pairs([1, 2, 3, 4]) == [(1, 2), (3, 4)]\n"
WRAPPED = UNWRAPPED.replace("assert pairs([1, 2, 3, 4])", "assert list(pairs([1, 2, 3, 4]))")


async def _repaired_run(scripted_llm, tmp_path: Path, module: str, source: str, first: str, repaired: str,
                        test: str) -> tuple[Any, list[str]]:
    """gen-tests on `module` whose tester writes `first`, then `repaired` once told why it failed; the result
    (checked ok, `test` kept, no suspected bug) and the tester's prompts."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / module).write_text(source)

    def tester(body: dict) -> str:
        text = body["messages"][-1]["content"]
        return _tests(repaired if "does not run" in text else first).replace("test_lookup", test)

    scripted_llm.default("tester", tester)
    settings = Settings(base_url=scripted_llm.base_url, max_iterations=1, mutation={"enabled": False})
    request = RunRequest(kind="gen_tests", workspace=workspace, target_file=module, run_id="gen")
    result = await run_gen_tests(request, settings, NullHooks())

    assert result.status == "ok", result.error
    assert result.gen_tests is not None
    assert result.gen_tests.suspected_bugs == [] and [k.test for k in result.gen_tests.kept] == [test]
    return result, [r["messages"][-1]["content"] for r in scripted_llm.requests_for("tester")]


async def test_a_generator_compared_with_a_list_is_repaired_not_judged(scripted_llm, tmp_path: Path):
    result, asked = await _repaired_run(scripted_llm, tmp_path, "pairs.py", PAIRS, UNWRAPPED, WRAPPED, "test_pairs")
    assert len(asked) == 2 and not any(t.startswith("A test of pairs fails") for t in asked)  # no verdict asked
    assert "assert <generator ob" in asked[1] and "compare list(...) of it" in asked[1]
    assert "assert list(pairs([1, 2, 3, 4])) == [(1, 2), (3, 4)]" in result.change_set.changes[0].new


@pytest.mark.parametrize(("message", "kind"), [
    ("assert <generator object pairs at 0x7f6a8c87a2f0> == [(1, 2)]", "test_error"),
    ("assert <generator ob...x7f6a8c87a2f0> == [(1, 2), (3, 4)]", "test_error"),
    ("assert <itertools.islice object at 0x7f6a8c87a2f0> == (1, 2)", "test_error"),
    ("assert [1, 2] == <map object at 0x7f6a8c87a2f0>", "test_error"),
    ("assert <shop.Basket object at 0x7f6a8c87a2f0> == [1, 2]", "fails"),  # not lazy: the code may be wrong
    ("assert [1, 2] == [1, 3]", "fails"),
])
def test_classify_sends_a_lazy_iterator_compared_with_a_list_to_repair(message: str, kind: str):
    failure = Failure(nodeid="t.py::test_x", file="t.py", line=5, message=message, traceback=f"E       {message}")
    assert classify(failure) == kind
    assert bool(repair_hint(failure)) == (kind == "test_error")


CHUNKS = '''"""A generator function that checks its argument."""


def chunks(xs, n):
    """Yield lists of n items; n < 1 raises ValueError."""
    if n < 1:
        raise ValueError("n must be at least 1")
    for i in range(0, len(xs), n):
        yield xs[i:i + n]
'''
NEVER_ITERATED = ("import pytest\n\nfrom chunks import chunks\n\n\ndef test_chunks_zero():\n"
                  "    with pytest.raises(ValueError):\n        chunks([1, 2], 0)\n")
ITERATED = NEVER_ITERATED.replace("        chunks([1, 2], 0)", "        list(chunks([1, 2], 0))")


async def test_did_not_raise_from_a_generator_never_iterated_is_repaired_not_judged(scripted_llm, tmp_path: Path):
    result, asked = await _repaired_run(scripted_llm, tmp_path, "chunks.py", CHUNKS, NEVER_ITERATED, ITERATED,
                                        "test_chunks_zero")
    assert len(asked) == 2 and "DID NOT RAISE" in asked[1] and "runs only when iterated" in asked[1]
    assert "list(chunks([1, 2], 0))" in result.change_set.changes[0].new


@pytest.mark.parametrize(("ran_target", "kind"), [(False, "test_error"), (True, "fails")])
def test_did_not_raise_is_the_tests_fault_only_when_the_code_never_ran(ran_target: bool, kind: str):
    message = "Failed: DID NOT RAISE <class 'ValueError'>"
    failure = Failure(nodeid="t.py::test_x", file="t.py", line=5, message=message, traceback=f"E       {message}")
    assert classify(failure, ran_target=ran_target) == kind
    assert ("runs only when iterated" in repair_hint(failure, ran_target)) == (not ran_target)


@pytest.mark.parametrize(("source", "last_line", "ran"), [
    (CHUNKS.split("\n\n\n")[1], 4, False),  # only the generator's creation, at its def line
    (CHUNKS.split("\n\n\n")[1], None, False),
    (CHUNKS.split("\n\n\n")[1], 7, True),  # its body raised on line 7
    ("@decorated\ndef gen():\n    yield 1\n", 5, False),  # a decorator: the def line is one further
    ("def outer():\n    def inner():\n        yield 1\n    return inner\n", 4, True),  # not a generator itself
])
def test_a_generator_body_ran_only_past_its_def_line(source: str, last_line: int | None, ran: bool):
    assert generator_body_ran(source, 4, last_line) is ran
