"""The real-project corpus (bench/real_corpus/*.toml) and its tooling, without the network or the projects.

The manifests must describe a corpus the issue asks for (20+ single-line bugs,
3+ projects, varied kinds, each with the tests it breaks); injecting and
reverting a bug and its unified diff must behave on a tree made here; a
task's `.venv` must import the tree's code and the base venv's packages; and
the pytest summary parser must read what pytest prints. Whether each bug
really breaks its project's suite is `bench/real_corpus.py validate`'s job
(it needs the sdists), run by hand and recorded in docs/benchmarks.md.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from bench import real_corpus as corpus
from bench import real_fix_rate as real
from bench.support import real_projects as rp

ROOT = Path(__file__).resolve().parents[2]



def test_manifests_describe_a_big_varied_sound_corpus():
    projects = rp.load_projects()
    bugs = [b for p in projects for b in p.bugs]
    assert len(projects) >= 3 and len(bugs) >= 20
    assert all(len(p.bugs) >= 4 for p in projects), "every project carries several bugs"
    assert len(Counter(b.kind for b in bugs)) >= 7
    assert [problem for p in projects for problem in rp.manifest_problems(p)] == []
    assert len({b.task for b in bugs}) == len(bugs)
    for project in projects:
        assert project.modules and all(b.file in project.modules for b in project.bugs), project.name
        assert all(t.split("::")[0].endswith(".py") for b in project.bugs for t in b.failing), project.name


def test_manifest_problems_are_named(tmp_path: Path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[project]\nname = "x"\nversion = "1"\nimport_root = "lib"\ntest_deps = ["pytest"]\n'
                   'excluded = [{test = "t.py::a"}]\n'
                   '[[bug]]\nid = "Same"\nkind = "typo"\nfile = "../x.py"\nline = 0\noriginal = "a"\n'
                   'buggy = "a"\nsummary = ""\n')
    problems = "\n".join(rp.manifest_problems(rp.load_project(bad)))
    for expected in ("import_root", "must pin pytest", "unpinned test dependency 'pytest'", "without a reason",
                     "snake_case", "unknown kind 'typo'", "relative .py path", "line must be >= 1",
                     "buggy is the original line", "no failing tests recorded", "no summary"):
        assert expected in problems
    broken = tmp_path / "broken.toml"
    broken.write_text("[project]\nname = 'x'\n")
    with pytest.raises(rp.CorpusError, match="broken.toml"):
        rp.load_project(broken)


def _tree(tmp_path: Path) -> tuple[Path, object]:
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "mod.py").write_text("def last(xs):\n    return xs[-1]\n\n\ndef first(xs):\n    return xs[0]\n")
    bug = rp.Bug(project="demo", id="last_index", kind="off-by-one", file="pkg/mod.py", line=2,
                 original="    return xs[-1]", buggy="    return xs[-2]", summary="s", failing=("t.py::t",))
    return tree, bug


def test_inject_and_revert_change_exactly_one_line(tmp_path: Path):
    tree, bug = _tree(tmp_path)
    before = (tree / "pkg" / "mod.py").read_bytes()
    rp.inject(bug, tree)
    after = (tree / "pkg" / "mod.py").read_text().splitlines()
    assert after[1] == "    return xs[-2]" and after[0] == "def last(xs):" and after[5] == "    return xs[0]"
    with pytest.raises(rp.CorpusError, match="expected"):
        rp.inject(bug, tree)  # the line no longer reads `original`
    rp.revert(bug, tree)
    assert (tree / "pkg" / "mod.py").read_bytes() == before


def test_as_patch_is_a_unified_diff_git_applies_both_ways(tmp_path: Path):
    tree, bug = _tree(tmp_path)
    original = (tree / "pkg" / "mod.py").read_bytes()
    patch = tmp_path / "bug.patch"
    patch.write_text(rp.as_patch(bug, tree))
    changed = [line for line in patch.read_text().splitlines()[2:] if line[:1] in "+-"]
    assert changed == [f"-{bug.original}", f"+{bug.buggy}"]
    subprocess.run(["git", "apply", str(patch)], cwd=tree, check=True, capture_output=True)
    assert (tree / "pkg" / "mod.py").read_text().splitlines()[1] == bug.buggy
    subprocess.run(["git", "apply", "-R", str(patch)], cwd=tree, check=True, capture_output=True)
    assert (tree / "pkg" / "mod.py").read_bytes() == original


def test_user_venv_imports_the_tree_and_the_base_packages(tmp_path: Path):
    tree, _ = _tree(tmp_path)
    (tree / "pkg" / "__init__.py").write_text("")
    base = tmp_path / "base"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(base)], check=True)
    (base_site,) = (base / "lib").glob("python3*/site-packages")
    (base_site / "helperdep.py").write_text("VALUE = 42\n")  # stands in for pytest and the other test deps
    script = base / "bin" / "helper-tool"  # a console script, as pip writes them
    script.write_text(f"#!{base / 'bin' / 'python'}\nimport helperdep, sys\nprint(helperdep.VALUE, sys.prefix)\n")
    script.chmod(0o755)
    project = rp.Project(name="demo-proj", version="1", import_root=".", test_deps=("pytest==8.3.5",))
    venv = rp.make_user_venv(project, base, tree)
    tool = subprocess.run([str(venv / "bin" / "helper-tool")], capture_output=True, text=True, check=True)
    assert tool.stdout.split() == ["42", str(venv)]
    code = "import helperdep, pkg.mod; print(helperdep.VALUE, pkg.mod.__file__)"
    out = subprocess.run([str(venv / "bin" / "python"), "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, env=rp.suite_env(), check=True).stdout.split()
    assert out == ["42", str((tree / "pkg" / "mod.py").resolve())]


def test_parse_pytest_output_reads_failures_and_counts():
    text = ("..F.E\n=========== short test summary info ===========\n"
            "FAILED tests/test_a.py::TestX::test_one - AssertionError: 1 != 2\n"
            "ERROR tests/test_b.py::test_two - RuntimeError\n"
            "FAILED tests/test_a.py::test_three[1-2] - assert False\n"
            "2 failed, 17 passed, 1 error in 3.21s\n")
    run = rp.parse_pytest_output(1, text, 3.2)
    assert run.failing == ["tests/test_a.py::TestX::test_one", "tests/test_a.py::test_three[1-2]",
                           "tests/test_b.py::test_two"]
    assert run.passed == 17 and not run.green
    assert rp.parse_pytest_output(0, "....\n4 passed in 0.10s\n", 0.1).green


def test_pytest_args_deselect_the_excluded_tests():
    project = rp.Project(name="p", version="1", import_root="src", test_deps=("pytest==8.3.5",),
                         test_args=("tests",), excluded=({"test": "tests/test_x.py::test_net", "reason": "network"},))
    assert project.pytest_args() == ["tests", "--deselect", "tests/test_x.py::test_net"]
    assert real.test_command(project) == "pytest tests --deselect tests/test_x.py::test_net"


def test_validate_judges_each_bug_from_its_two_suite_runs():
    bug = rp.Bug(project="p", id="b", kind="off-by-one", file="m.py", line=1, original="a", buggy="b",
                 summary="s", failing=("t.py::one", "t.py::two"))
    green = rp.SuiteRun(0, 10, [], 1.0, "")
    assert corpus._what_is_wrong(rp.SuiteRun(0, 10, [], 1.0, ""), green) == "NO TEST FAILS"
    assert corpus._what_is_wrong(rp.SuiteRun(None, 0, ["<timeout>"], 300.0, ""), green).startswith("THE SUITE HANGS")
    red = rp.SuiteRun(1, 9, ["t.py::one"], 1.0, "")
    assert corpus._what_is_wrong(red, red).startswith("REVERSE PATCH DOES NOT PASS")
    assert corpus._what_is_wrong(red, green) is None
    assert corpus._difference(bug, ["t.py::one", "t.py::three"], update=False).startswith("ok (also failing")
    assert corpus._difference(bug, ["t.py::other"], update=False).startswith("breaks none")
