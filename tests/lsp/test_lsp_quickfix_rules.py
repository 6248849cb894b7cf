"""Which finished runs start the background search, and which document changes make its work stale (no I/O)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from agent_core.models import (
    ChangeSet,
    FileChange,
    GenTestsSummary,
    RunRequest,
    RunResult,
    SuspectedBug,
    TestFailure,
    TestReport,
)
from lsp_server.documents import Snapshot
from lsp_server.quickfixes import QuickFixes, SearchInput

ROOT = Path("/ws")
BUG = SuspectedBug(test="t")
FAILING = TestReport(
    passed=1, failed=1, failures=[TestFailure(nodeid="t.py::test_a", file="t.py", line=3, message="x")]
)
NEW_TEST = ChangeSet(changes=[FileChange(path="tests/test_gen.py", kind="create", new="def test_x(): ...\n")])


def _fixes(documents: object = None, runs: object = None) -> QuickFixes:
    """The background search with only the services these rules reach (documents, the run manager's runs)."""
    return QuickFixes(server=None, documents=documents, settings=None, edits=None, diagnostics=None, runs=runs)


def _run(kind: str, applied: bool = False) -> SimpleNamespace:
    read = Snapshot(overlays={"a.py": "A"}, versions={"a.py": 1})
    return SimpleNamespace(run_id="r", request=RunRequest(kind=kind, workspace=ROOT), read=read, applied=applied)


def _result(kind: str, report: TestReport | None, suspected_bugs: list[SuspectedBug] | None = None) -> RunResult:
    found = GenTestsSummary(suspected_bugs=suspected_bugs) if suspected_bugs is not None else None
    return RunResult(run_id="r", kind=kind, status="ok", report=report, change_set=NEW_TEST, gen_tests=found)


@pytest.mark.parametrize(
    "run, result, overlays",
    [
        (_run("test"), _result("test", FAILING), {"a.py": "A"}),
        (
            _run("gen_tests", applied=True),
            _result("gen_tests", FAILING, suspected_bugs=[BUG]),
            {"a.py": "A", "tests/test_gen.py": "def test_x(): ...\n"},
        ),
        (_run("gen_tests", applied=False), _result("gen_tests", FAILING, suspected_bugs=[BUG]), None),
        (_run("gen_tests", applied=True), _result("gen_tests", FAILING, suspected_bugs=[]), None),
        (_run("fix"), _result("fix", FAILING), None),
        (_run("test"), None, None),
    ],
)
def test_failing_test_runs_and_applied_gen_tests_with_suspected_bugs_start_a_search(run, result, overlays):
    given = _fixes()._from_run(run, result)
    assert (given.overlays if given else None) == overlays


@pytest.mark.parametrize(
    "uri, text, stale",
    [
        ("file:///ws/a.py", "A", False),  # the text the search read (an editor re-sending it)
        ("file:///ws/a.py", "A2", True),
        ("file:///ws/b.py", "B", True),  # a file the search read from disk, now edited in a buffer
        ("file:///elsewhere/c.py", "C", False),  # outside the workspace
    ],
)
def test_a_document_change_drops_the_search_unless_the_text_is_what_it_read(uri, text, stale):
    fixes = _fixes()
    fixes.current = SearchInput(FAILING, ROOT, Snapshot({"a.py": "A"}, {"a.py": 1}), {"a.py": "A"})
    fixes.changed(ROOT, uri, text)
    assert (fixes.current is None) == stale


@pytest.mark.parametrize(
    "buffers, searched",
    [
        ({"a.py": "A"}, True),
        ({}, True),  # closed since (its text is on disk now, which the edit check compares)
        ({"a.py": "A edited while the tests ran"}, False),
    ],
)
def test_a_report_on_buffers_edited_while_the_tests_ran_starts_no_search(buffers, searched):
    documents = SimpleNamespace(snapshot=lambda root: Snapshot(dict(buffers), {}))
    runs = SimpleNamespace(active={"r": SimpleNamespace(run_id="r")})  # a run going on: the search would wait
    fixes = _fixes(documents, runs)
    fixes.start(SearchInput(FAILING, ROOT, Snapshot({"a.py": "A"}, {"a.py": 1}), {"a.py": "A"}))
    assert (fixes.current is not None) == searched
