"""A Docker image layer with a project's dependencies, cached by a hash of its dependency files.

`agentls sandbox build-image --project PATH` reads the project's requirements
(`[project].dependencies` and its test/dev extras from pyproject.toml, and
`requirements*.txt`), downloads their wheels on the host (`pip download`, for
the image's Python) and installs them into a layer on top of the sandbox
image, never from inside a test run and with no network in the engine. The
tag carries a hash of the dependency files (pyproject.toml, setup.cfg, the
requirements files and lock files): a changed file means a new tag. A run of
the Docker backend on a copy of that project uses the tagged image when it
exists, and otherwise the plain sandbox image.

The image holds the dependencies, not the project: the workspace is mounted
as usual, and a `src/` layout's `src/` goes on PYTHONPATH so the project
imports the workspace's own code.
"""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path

DEPENDENCY_FILES = (
    "pyproject.toml", "setup.cfg", "requirements.txt", "requirements-dev.txt", "requirements-test.txt",
    "dev-requirements.txt", "test-requirements.txt", "uv.lock", "poetry.lock", "pdm.lock",
)
REQUIREMENT_FILES = tuple(name for name in DEPENDENCY_FILES if name.endswith(".txt"))
TEST_EXTRAS = ("test", "tests", "testing", "dev")


def project_requirements(project: Path) -> list[str]:
    """The requirement specifiers of `project` (dependencies, test extras, requirements files)."""
    found: list[str] = []
    try:
        with open(project / "pyproject.toml", "rb") as handle:
            meta = tomllib.load(handle).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        meta = {}
    found += meta.get("dependencies", [])
    for extra in TEST_EXTRAS:
        found += meta.get("optional-dependencies", {}).get(extra, [])
    for name in REQUIREMENT_FILES:
        path = project / name
        if path.is_file():
            lines = (line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines())
            found += [line for line in lines if line and not line.startswith(("-", ".", "/"))]
    return list(dict.fromkeys(found))


def dependency_hash(project: Path) -> str:
    """A short hash of the project's dependency files (what the layer depends on)."""
    digest = hashlib.sha256()
    for name in DEPENDENCY_FILES:
        path = project / name
        if path.is_file():
            digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def project_image_tag(image: str, project: Path) -> str | None:
    """The tag of `image` with the project's dependencies (None when the project declares none)."""
    if not project_requirements(project):
        return None
    repo, _, tag = image.rpartition(":") if ":" in image.rsplit("/", 1)[-1] else (image, "", "latest")
    return f"{repo}:{tag}-deps-{dependency_hash(project)}"


def src_pythonpath(workspace: Path) -> str | None:
    """`<workspace>/src` when the project uses a src/ layout (a package directly inside src/)."""
    src = workspace / "src"
    if src.is_dir() and any((child / "__init__.py").is_file() for child in src.iterdir() if child.is_dir()):
        return str(src)
    return None
