"""A git-ignored module the project's code imports stays in the shadow copy (ignore.py's one exception).

setuptools_scm and hatch-vcs write `src/<pkg>/_version.py` (or `version.py`) at install time and the
project ignores it; `__init__.py` imports it. Left out of the copy, the package cannot be imported in the
sandbox and every test errors before any search (three of twelve injected bugs in one project).
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from agent_core.cli import main
from agent_core.workspace.ignore import IgnoreRules
from agent_core.workspace.shadow import ShadowWorkspace
from testkit.project_support import journal_records, make_project

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


# `pip install -e .` in setuptools' develop mode leaves the distribution's metadata in the tree; importlib.metadata
# reads the version and the entry points from there (Python-Markdown finds its extensions this way).
INSTALLED = {
    ".gitignore": "*.egg-info/\n__pycache__/\n",
    "pyproject.toml": '[project]\nname = "shop"\nversion = "1.4.2"\n\n[tool.pytest.ini_options]\npythonpath = ["."]\n',
    "shop.egg-info/PKG-INFO": "Metadata-Version: 2.1\nName: shop\nVersion: 1.4.2\n",
    "shop.egg-info/entry_points.txt": "[shop.plugins]\nloud = shop.plugins:loud\n",
    "shop.egg-info/top_level.txt": "shop\n",
    "shop/__init__.py": "from importlib.metadata import version\n\n__version__ = version('shop')\n",
    "shop/plugins.py": "def loud(text):\n    return text.upper()\n",
    "docs/notes.egg-info/PKG-INFO": "Name: notes\n",  # not on the import path: build output, left out
    "tests/test_shop.py": (
        "from importlib.metadata import entry_points\n\nimport shop\n\n\n"
        "def test_version():\n    assert shop.__version__ == '1.4.2'\n\n\n"
        "def test_plugin():\n    found = [e for e in entry_points().get('shop.plugins', [])] "
        "if hasattr(entry_points(), 'get') else list(entry_points(group='shop.plugins'))\n"
        "    assert [e.load()('hi') for e in found] == ['HI']\n"
    ),
}


def test_the_shadow_copy_keeps_installed_metadata_on_the_import_path(tmp_path: Path) -> None:
    root = make_project(tmp_path / "shop", {**INSTALLED, "src/other.egg-info/PKG-INFO": "Name: other\n",
                                            "build/lib/shop.egg-info/PKG-INFO": "Name: shop\n"})

    with ShadowWorkspace(root) as shadow:
        copied = {p.relative_to(shadow.root).as_posix() for p in shadow.root.rglob("*") if p.is_file()}

    assert {"shop.egg-info/PKG-INFO", "shop.egg-info/entry_points.txt", "src/other.egg-info/PKG-INFO"} <= copied
    assert not {"docs/notes.egg-info/PKG-INFO", "build/lib/shop.egg-info/PKG-INFO"} & copied


def test_a_sandboxed_run_sees_the_projects_version_and_entry_points(tmp_path: Path) -> None:
    root = make_project(tmp_path / "shop", INSTALLED)
    out = io.StringIO()

    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["test", str(root), "--json"])

    report = json.loads(out.getvalue())
    assert code == 0 and report["tests"]["passed"] == 2 and report["tests"]["failed"] == 0, report
