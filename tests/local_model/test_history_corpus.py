"""The real-history corpus (bench/history_corpus/) and its runner's verdicts, without the network or the projects.

The manifests must describe the corpus the issue asks for (25+ released fixes
from 6+ projects, several Pythons including 3.7 or 3.8, at least half needing
more than one line, each with its tests and the author's fix as a diff of the
files it names); a fix must come out of a tree and go back in with `patch`;
and the runner's "the author's way" verdict must tell the author's files,
an equivalent rewrite, a different edit and a stray file apart; each task's
copy names a time budget that ends the run within the bench's timeout. Whether each
bug's tests really fail is `bench/history_corpus.py validate`'s job (it needs
the sdists), run by hand and recorded in docs/benchmarks.md.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core.settings import load_settings
from bench import fix_rate
from bench import history_corpus as hc
from bench import history_fix_rate as hfr

ROOT = Path(__file__).resolve().parents[2]


AUTHOR = "def quote(val):\n    if val[0] in ('\"', \"'\", '`'):\n        return val[1:-1]\n    return val\n"
FIX = """--- a/pkg/utils.py
+++ b/pkg/utils.py
@@ -1,4 +1,4 @@
 def quote(val):
-    if val[0] in ('"', "'"):
+    if val[0] in ('"', "'", '`'):
         return val[1:-1]
     return val
"""


def test_manifests_describe_the_corpus_the_issue_asks_for():
    bugs = hc.load_bugs()
    assert len(bugs) >= 25 and len({b.project for b in bugs}) >= 6
    assert hc.manifest_problems(bugs) == []
    assert len({b.python for b in bugs}) >= 3 and {"3.7", "3.8"} & {b.python for b in bugs}
    assert sum(b.kind != "one-line" for b in bugs) * 2 >= len(bugs)
    assert all(b.failing and all(hc.failed(t, list(b.failing)) for t in b.tests) for b in bugs)
    assert len({b.task for b in bugs}) == len(bugs)


def _bug(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A bug of a made-up project whose author's tree sits in a cache made here."""
    monkeypatch.setenv("AGENTLS_BENCH_CACHE", str(tmp_path / "cache"))
    manifest = tmp_path / "corpus" / "pkg" / "backtick.toml"
    manifest.parent.mkdir(parents=True)
    manifest.write_text('project = "pkg"\nversion = "1.1"\nprevious = "1.0"\npython = "3.8"\n'
                        'test_deps = ["pytest==8.3.5"]\nkind = "one-line"\nfiles = ["pkg/utils.py"]\n'
                        'summary = "s"\nchangelog = "c"\ntests = ["t.py::q"]\n'
                        f"fix = '''\n{FIX}'''\n", encoding="utf-8")
    bug = hc.load_bug(manifest)
    author = tmp_path / "cache" / "history" / "trees" / bug.slug / "pkg"
    author.mkdir(parents=True)
    (author / "utils.py").write_text(AUTHOR, encoding="utf-8")
    return bug, author.parent


def test_a_fix_comes_out_and_goes_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    bug, author = _bug(tmp_path, monkeypatch)
    assert hc.manifest_problems([bug]) == [] and bug.changed_lines == (1, 1)
    tree = tmp_path / "copy"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "utils.py").write_text(AUTHOR, encoding="utf-8")
    hc.apply_fix(bug, tree, reverse=True)
    assert "'`'" not in (tree / "pkg" / "utils.py").read_text(encoding="utf-8")
    assert hfr.author_way(bug, tree) == "different: pkg/utils.py"
    hc.apply_fix(bug, tree)
    assert hfr.author_way(bug, tree) == "same"
    with pytest.raises(hc.rp.CorpusError, match="does not apply"):
        hc.apply_fix(bug, tree)


def test_author_way_tells_equivalent_different_and_stray(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    bug, author = _bug(tmp_path, monkeypatch)
    tree = tmp_path / "copy"
    (tree / "pkg").mkdir(parents=True)
    (tree / ".venv" / "lib").mkdir(parents=True)
    (tree / ".venv" / "lib" / "site.py").write_text("x = 1\n", encoding="utf-8")  # a venv is not the source
    target = tree / "pkg" / "utils.py"
    target.write_text(AUTHOR.replace("('\"', \"'\", '`')", "( '\"', \"'\", '`' )") + "# reformatted\n",
                      encoding="utf-8")
    assert hfr.author_way(bug, tree) == "equivalent"
    target.write_text(AUTHOR.replace("'`'", "'´'"), encoding="utf-8")
    assert hfr.author_way(bug, tree) == "different: pkg/utils.py"
    target.write_text(AUTHOR, encoding="utf-8")
    (tree / "utils.py").write_text(AUTHOR, encoding="utf-8")
    assert hfr.author_way(bug, tree) == "different: new file utils.py"


def test_interleaved_order_spans_projects():
    order = [b.project for b in hfr.interleaved(hc.load_bugs())]
    projects = sorted(set(order))
    assert sorted(order[:len(projects)]) == projects


@pytest.mark.parametrize("argv, budget", [([], 880.0), (["--timeout", "300"], 280.0),
                                          (["--timeout", "300", "--time-budget", "200"], 200.0),
                                          (["--time-budget", "0"], 0.0)])
def test_each_task_runs_within_a_time_budget_inside_the_timeout(tmp_path: Path, argv: list[str], budget: float):
    """A run ends on its own (budget_spent, its best attempt) before the bench's --timeout would cut it: the
    copy's `.agentls.toml` carries time_budget_s, and agentls reads it from there."""
    args = hfr.arguments().parse_args(argv)
    assert hfr.time_budget(args) == budget
    bug = hc.load_bugs()[0]
    (task,) = hfr.history_tasks([bug], {}, hfr.time_budget(args))
    workspace = tmp_path / "copy"
    workspace.mkdir()
    fix_rate.write_settings(workspace, tmp_path / "memory" / "m.sqlite", task.settings)
    settings = load_settings(workspace, env={})
    assert settings.time_budget_s == budget and settings.notices == []
    assert settings.test_command.startswith("pytest")


def test_the_report_counts_the_fills_and_says_where_the_time_went():
    def row(task: str, outcome: str, tokens: int, split: dict) -> dict:
        return {"task": task, "kind": "multi-line", "python": "3.8", "outcome": outcome,
                "verified": outcome != "not fixed",
                "author_way": "same" if outcome != "not fixed" else "", "tokens": tokens, "wall_s": 100.0,
                "load_start": 1.0, "load_end": 1.0, "search_edit": "", "split": split}

    fills = {"holes": 4, "samples": 20, "kept": 12, "tried": 12, "tokens": 3000, "seconds": 60.0}
    rows = [row("a/one", "infill", 3000, {"nodes": {"search": 90.0, "baseline": 2.0}, "infill": fills}),
            row("b/two", "search", 0, {"nodes": {"search": 30.0, "baseline": 4.0}, "infill": {}}),
            row("b/four", "search", 0, {"nodes": {"search": 20.0, "baseline": 4.0}, "infill": fills | {"holes": 0}}),
            row("c/three", "not fixed", 9000, {"nodes": {"search": 200.0, "baseline": 2.0, "code": 50.0},
                                                "infill": fills | {"kept": 6, "answered": 9, "unchanged": 3}})]

    rows[0]["fills_at_author"] = 2  # c/three's run predates the figure: not counted either way
    text = hfr.report(rows)

    assert "by the model's fills (infill):        1/4" in text and "by the search:                        2/4" in text
    assert "tokens: median 1,500, total 12,000" in text
    assert "model fills: 2 tasks asked, 8 holes, 40 samples, 18 candidates, 24 tried, 9.0 candidates per minute" in text
    assert "tasks whose fills reached a line of the author's fix: 1/1" in text
    assert "answers that wrote their hole back as it was: 3 of 9" in text
    assert "time per task, median s: baseline 3.0, code 0.0, search 60.0; of the search, sampling 60.0" in text


def test_the_authors_lines_are_read_from_the_diff_and_holes_touching_them_are_counted():
    bug = next(b for b in hc.load_bugs() if b.task == "sqlparse/ctas_function_alias")
    places = hfr.author_lines(bug)
    assert places == {"sqlparse/engine/grouping.py": {344, 349, 350}}, \
        "an added line counts as the line it goes before; a removed line as itself"
    holes = [["sqlparse/engine/grouping.py", "line 349 (line)"],
             ["sqlparse/engine/grouping.py", "slot after line 343"],
             ["sqlparse/engine/grouping.py", "lines 300-340 (block)"],
             ["sqlparse/sql.py", "line 349 (line)"],
             ["sqlparse/engine/grouping.py", "slot after the block ending line 348"]]
    assert hfr.holes_at_author(holes, places) == 3
    assert hfr.holes_at_author([], places) == 0
