"""A git-ignored module the project's code imports stays in the shadow copy (ignore.py's one exception).

setuptools_scm and hatch-vcs write `src/<pkg>/_version.py` (or `version.py`) at install time and the
project ignores it; `__init__.py` imports it. Left out of the copy, the package cannot be imported in the
sandbox and every test errors before any search (three of twelve injected bugs in one project).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core.workspace.ignore import IgnoreRules
from agent_core.workspace.shadow import ShadowWorkspace
from project_support import journal_records, make_project

LAYOUT = {
    ".gitignore": "src/shop/version.py\n*.so\nscratch*.py\ngenerated/\n__pycache__/\n",
    "pyproject.toml": '[project]\nname = "shop"\ndynamic = ["version"]\n\n'
                      '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/shop/__init__.py": "from .version import __version__\nfrom shop._speedups import fast\n",
    "src/shop/version.py": "__version__ = '1.4.2'\n",  # written by setuptools_scm, ignored
    "src/shop/_speedups.cpython-37m-x86_64-linux-gnu.so": "not really an ELF file\n",  # built in place, ignored
    "src/shop/scratch_notes.py": "print('mine')\n",  # ignored and imported by nothing
    "src/shop/cart.py": "def total(prices, discount=0.0):\n    return round(sum(prices) * (1 + discount), 2)\n",
    "src/shop/generated/__init__.py": "",  # a whole ignored folder stays out
    "tests/test_cart.py": (
        "import shop\nfrom shop.cart import total\n\n\n"
        "def test_version():\n    assert shop.__version__ == '1.4.2'\n\n\n"
        "def test_discount():\n    assert total([10.0, 10.0], 0.25) == 15.0\n\n\n"
        "def test_no_discount():\n    assert total([1.0, 2.0]) == 3.0\n"
    ),
}


@pytest.mark.parametrize(
    "rel, ignored",
    [
        ("src/shop/version.py", False),  # ignored, imported by __init__.py beside it
        ("src/shop/_speedups.cpython-37m-x86_64-linux-gnu.so", False),  # ignored, imported as shop._speedups
        ("src/shop/scratch_notes.py", True),  # ignored, imported by nothing
        ("src/shop/generated", True),  # a folder is never kept by the exception
        ("src/shop/cart.py", False),
    ],
)
def test_an_ignored_module_a_kept_sibling_imports_is_not_ignored(tmp_path: Path, rel: str, ignored: bool) -> None:
    root = make_project(tmp_path / "shop", LAYOUT)

    assert IgnoreRules(root).ignored(rel) is ignored


def test_the_shadow_copy_keeps_the_generated_version_module(tmp_path: Path) -> None:
    root = make_project(tmp_path / "shop", LAYOUT)

    with ShadowWorkspace(root) as shadow:
        copied = {p.relative_to(shadow.root).as_posix() for p in shadow.root.rglob("*") if p.is_file()}

    assert {"src/shop/version.py", "src/shop/_speedups.cpython-37m-x86_64-linux-gnu.so"} <= copied
    assert not {"src/shop/scratch_notes.py", "src/shop/generated/__init__.py"} & copied


def test_the_search_fixes_a_package_whose_version_module_is_ignored(tmp_path: Path, scripted_llm, run_fix,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTLS_SEARCH", "1")  # the suite's default is off (tests/conftest.py)
    files = {**LAYOUT, "src/shop/__init__.py": "from .version import __version__\n"}
    files.pop("src/shop/_speedups.cpython-37m-x86_64-linux-gnu.so")
    project = make_project(tmp_path / "shop", files)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")

    assert run.code == 0 and run.json["status"] == "fixed", run.stdout + run.stderr
    assert scripted_llm.requests == [], "found by the search, no model call"
    baseline = next(r for r in journal_records(project, run.json["run_id"]) if r["type"] == "test_report")["report"]
    assert baseline["passed"] == 2 and baseline["failed"] == 1 and baseline["errors"] == 0, baseline["output"]
    assert "(1 - discount)" in (project / "src" / "shop" / "cart.py").read_text()
