"""bench/real_fix_rate.py end to end on a tiny src-layout project, with a stand-in `agentls` (no model, no network).

The project is packed here as an sdist into a cache of the test's own
(AGENTLS_BENCH_CACHE), its base venv reaches this interpreter's pytest
through a `.pth` line, and its manifest carries two bugs. The stand-in checks
what a task's copy looks like to agentls (the bug in place, no answer, a
`.venv` that imports the copy's `src/` code and runs its suite, the
`.agentls.toml` with the test command, the memory file in the environment), fixes one bug and
gives up on the other; the harness must re-check with the project's suite.
"""

from __future__ import annotations

import json
import site
import subprocess
import sys
import tarfile
import textwrap
from pathlib import Path

from bench import real_fix_rate as real
from bench.support import real_projects as rp

ROOT = Path(__file__).resolve().parents[2]

MODULE = "def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    if x > hi:\n        return hi\n    return x\n"
TESTS = textwrap.dedent(
    """
    from tinypkg.mod import clamp

    def test_low():
        assert clamp(-5, 0, 10) == 0

    def test_high():
        assert clamp(50, 0, 10) == 10

    def test_inside():
        assert clamp(5, 0, 10) == 5
    """
)
MANIFEST = textwrap.dedent(
    """
    [project]
    name = "tiny-proj"
    version = "1.0"
    import_root = "src"
    modules = ["src/tinypkg/mod.py"]
    test_deps = ["pytest==8.3.5"]
    test_args = ["tests"]
    excluded = []

    [[bug]]
    id = "low_comparison"
    kind = "comparison-swap"
    file = "src/tinypkg/mod.py"
    line = 2
    original = "    if x < lo:"
    buggy = "    if x > lo:"
    summary = "s"
    failing = ["tests/test_mod.py::test_inside", "tests/test_mod.py::test_low"]

    [[bug]]
    id = "high_return"
    kind = "wrong-variable"
    file = "src/tinypkg/mod.py"
    line = 5
    original = "        return hi"
    buggy = "        return lo"
    summary = "s"
    failing = ["tests/test_mod.py::test_high"]
    """
)
STAND_IN = textwrap.dedent(
    """
    import json, os, subprocess, sys, tomllib
    from pathlib import Path
    ws = Path(sys.argv[2])
    settings = tomllib.loads((ws / ".agentls.toml").read_text())
    assert settings["test_command"] == "pytest tests", settings
    where = subprocess.run([str(ws / ".venv/bin/python"), "-c", "import tinypkg.mod; print(tinypkg.mod.__file__)"],
                           capture_output=True, text=True, check=True).stdout.strip()
    assert where == str((ws / "src/tinypkg/mod.py").resolve()), where
    red = subprocess.run([str(ws / ".venv/bin/python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
                         cwd=ws, capture_output=True, text=True)
    assert red.returncode == 1, red.stdout  # the bug is in place and the suite sees it
    module = ws / "src/tinypkg/mod.py"
    if ws.name.endswith("low_comparison"):
        module.write_text(module.read_text().replace("if x > lo:", "if x < lo:"))
        print(json.dumps({"status": "fixed", "iterations": 0, "found_by": "search",
                          "usage": {"prompt_tokens": 0, "completion_tokens": 0, "llm_calls": 0}}))
    else:
        print(json.dumps({"status": "fixed", "iterations": 1, "error": os.environ["AGENTLS_MEMORY__PATH"],
                          "usage": {"prompt_tokens": 200, "completion_tokens": 40, "llm_calls": 1}}))
    """
)


def _cache(tmp_path: Path, project) -> Path:
    """A cache holding the project's sdist and a base venv that reaches this interpreter's pytest."""
    cache = tmp_path / "cache"
    src = tmp_path / "build" / "tiny_proj-1.0"
    (src / "src" / "tinypkg").mkdir(parents=True)
    (src / "tests").mkdir()
    (src / "src" / "tinypkg" / "__init__.py").write_text("")
    (src / "src" / "tinypkg" / "mod.py").write_text(MODULE)
    (src / "tests" / "test_mod.py").write_text(TESTS)
    (cache / "sdists").mkdir(parents=True)
    with tarfile.open(cache / "sdists" / "tiny_proj-1.0.tar.gz", "w:gz") as tar:
        tar.add(src, arcname=src.name)
    venv = cache / "venvs" / project.slug
    subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (venv_site,) = (venv / "lib").glob("python3*/site-packages")
    (venv_site / "outer.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    (venv / ".agentls-bench-deps").write_text("\n".join([*project.test_deps, f"without {project.name}"]))
    return cache


def test_real_harness_sets_up_a_users_checkout_and_rechecks_with_its_suite(tmp_path: Path, monkeypatch, capsys):
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    (manifests / "tiny-proj.toml").write_text(MANIFEST)
    project = rp.load_project(manifests / "tiny-proj.toml")
    assert rp.manifest_problems(project) == []
    monkeypatch.setenv("AGENTLS_BENCH_CACHE", str(_cache(tmp_path, project)))
    monkeypatch.setenv("AGENTLS_BASE_URL", "http://127.0.0.1:9/v1")  # an endpoint is "configured": no local model
    stand_in = tmp_path / "stand_in.py"
    stand_in.write_text(STAND_IN)
    out = tmp_path / "rows.json"
    code = real.main(["--manifests", str(manifests), "--memory", "carried", "--out", str(out),
                      "--agentls", sys.executable, str(stand_in)])
    assert code == 0, capsys.readouterr().err
    rows = {r["task"]: r for r in json.loads(out.read_text())}
    assert list(rows) == ["tiny-proj/low_comparison", "tiny-proj/high_return"]
    assert rows["tiny-proj/low_comparison"]["outcome"] == "search" and rows["tiny-proj/low_comparison"]["verified"]
    claimed = rows["tiny-proj/high_return"]
    assert claimed["status"] == "fixed" and claimed["verified"] is False and claimed["outcome"] == "not fixed"
    assert claimed["error"].endswith("memory-carried.sqlite")
    text = capsys.readouterr().out
    assert "fixed by search alone:      1/2 (0 tokens)" in text and "(memory: carried)" in text
