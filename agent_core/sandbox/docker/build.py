"""Build the Docker sandbox image: a local base plus pytest, hypothesis and coverage, with no registry.

The build never pulls and never reaches the network from inside: wheels are
fetched on the host with `pip download` (for the base image's Python version
and architecture, found by a probe run), copied into the build context, and
installed with `pip install --no-index` by a pip that is itself run from its
wheel. The project's own test requirements go into a second layer, so that a
rebuild with unchanged requirements reuses it from the engine's cache.
`probe_image` and `build_from_context` are the two calls into the SDK.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import requests
from docker.errors import DockerException

from agent_core.sandbox.base import SandboxError
from agent_core.sandbox.cleanup import make_temp_dir, remove_temp_dir
from agent_core.sandbox.constants import TEST_TOOLS
from agent_core.sandbox.docker.engine import connect_or_fail, engine_address, first_line, image_exists, tail
from agent_core.sandbox.docker.limits import owner_labels
from agent_core.sandbox.project_image import project_image_tag, project_requirements

DEFAULT_BASE = "agentls/base:local"
DEFAULT_TAG = "agentls/sandbox:local"
_PROBE = (
    "import platform, sys; "
    "print(f'{sys.version_info[0]}.{sys.version_info[1]} {platform.machine()} {platform.libc_ver()[1] or \"0\"}')"
)

# pip runs from its own wheel (a zip on sys.path), so the base needs no pip of its own.
_PIP = 'PIP_BREAK_SYSTEM_PACKAGES=1 PIP_ROOT_USER_ACTION=ignore python3 "$(echo /agentls/tools/pip-*.whl)/pip"'
_DOCKERFILE = """\
FROM {base}
LABEL agentls.image="1"
COPY tools/ /agentls/tools/
RUN {pip} install --no-index --no-cache-dir --find-links /agentls/tools {tools} \\
 && python3 -m pytest --version
"""
_REQUIREMENTS_LAYER = """\
COPY requirements/ /agentls/requirements/
RUN {pip} install --no-index --no-cache-dir --find-links /agentls/requirements \\
    --find-links /agentls/tools -r /agentls/requirements/requirements.txt
"""


@dataclass(frozen=True)
class BaseInfo:
    """What the base image's interpreter is: Python X.Y, CPU architecture, glibc version."""

    python: str
    machine: str
    glibc: str

    def pip_target_args(self) -> list[str]:
        """`pip download` options selecting wheels that run inside the image."""
        major_minor = self.python.replace(".", "")
        glibc = self.glibc.replace(".", "_") if self.glibc != "0" else "2_17"
        return [
            "--only-binary=:all:", "--implementation", "cp", "--python-version", self.python,
            "--abi", f"cp{major_minor}", "--platform", f"manylinux_{glibc}_{self.machine}",
            "--platform", f"linux_{self.machine}",
        ]


def parse_probe(output: str) -> BaseInfo:
    """Read the probe's `X.Y machine glibc` line; SandboxError when the base has no usable python3."""
    for line in reversed(output.strip().splitlines()):
        parts = line.split()
        if len(parts) == 3 and parts[0].count(".") == 1:
            return BaseInfo(*parts)
    raise SandboxError(f"the base image has no working python3 (probe said: {output.strip()[:200]!r})")


def dockerfile(base: str, with_requirements: bool) -> str:
    """The Dockerfile text of the sandbox image."""
    text = _DOCKERFILE.format(base=base, pip=_PIP, tools=" ".join(TEST_TOOLS))
    if with_requirements:
        text += _REQUIREMENTS_LAYER.format(pip=_PIP)
    return text


def download_wheels(dest: Path, specs: list[str], info: BaseInfo, log: Callable[[str], None]) -> None:
    """`pip download` on the host into dest, for the image's interpreter (no sdists: nothing builds inside)."""
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
           "--dest", str(dest), *info.pip_target_args(), *specs]
    log(f"downloading wheels for Python {info.python} ({info.machine}): {' '.join(specs)}")
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SandboxError("pip download failed (binary wheels for the image's Python are needed):\n"
                           + (proc.stderr or proc.stdout).strip()[-2000:])


def probe_image(image: str, argv: list[str], timeout_s: float = 60.0) -> tuple[int, str]:
    """Run argv once in `image` with no network; returns (exit code, output). For inspecting a base image."""
    client = connect_or_fail(timeout_s=timeout_s)
    container = None
    try:
        container = client.containers.create(image, argv, network_mode="none", labels=owner_labels())
        container.start()
        code = int(container.wait(timeout=timeout_s).get("StatusCode", -1))
        return code, tail(container.logs(stdout=True, stderr=True))
    except (DockerException, requests.RequestException) as exc:
        raise SandboxError(f"could not run {argv[0]} in {image!r}: {first_line(exc)}") from exc
    finally:
        if container is not None:
            try:
                container.remove(force=True)
            except (DockerException, requests.RequestException):
                pass
        client.close()


def build_from_context(context: Path, tag: str, on_line: Callable[[str], None] | None = None) -> str:
    """`docker build` of a prepared context with the legacy builder: no pull, no network; returns the image id."""
    client = connect_or_fail(timeout_s=1800.0)
    image_id = None
    try:
        for chunk in client.api.build(path=str(context), tag=tag, pull=False, network_mode="none",
                                      rm=True, forcerm=True, decode=True):
            if "error" in chunk:
                raise SandboxError(f"docker build failed: {chunk['error'].strip()}")
            line = chunk.get("stream", "").rstrip()
            if line and on_line is not None:
                on_line(line)
            image_id = chunk.get("aux", {}).get("ID", image_id)
    except (DockerException, requests.RequestException) as exc:
        raise SandboxError(f"docker build failed: {first_line(exc)}") from exc
    finally:
        client.close()
    return image_id or tag


def build_image(
    base: str = DEFAULT_BASE,
    tag: str = DEFAULT_TAG,
    requirements: Path | None = None,
    log: Callable[[str], None] = print,
) -> str:
    """Build `tag` from the local image `base`; returns the image id. Raises SandboxError with a clear reason."""
    if requirements is not None and not requirements.is_file():
        raise SandboxError(f"requirements file {requirements} does not exist")
    if not image_exists(base):
        raise SandboxError(
            f"base image {base!r} is not on the engine at {engine_address()} and will not be "
            "pulled; make one (scripts/make-base-image.sh: debootstrap + docker import) or `docker load` it"
        )
    code, output = probe_image(base, ["python3", "-c", _PROBE])
    if code != 0:
        raise SandboxError(f"the base image {base!r} cannot run python3 (exit {code}): {output.strip()[:300]}")
    info = parse_probe(output)
    context = make_temp_dir("image")
    try:
        download_wheels(context / "tools", ["pip", *TEST_TOOLS], info, log)
        if requirements is not None:
            req_dir = context / "requirements"
            download_wheels(req_dir, ["-r", str(requirements)], info, log)
            (req_dir / "requirements.txt").write_text(requirements.read_text(encoding="utf-8"), encoding="utf-8")
        (context / "Dockerfile").write_text(dockerfile(base, requirements is not None), encoding="utf-8")
        (context / ".dockerignore").write_text(".agentls-owner\n", encoding="utf-8")
        log(f"building {tag} from {base} (no pull, no network)")
        return build_from_context(context, tag, on_line=log)
    finally:
        remove_temp_dir(context)


def build_project_image(project: Path, base: str, image: str, log: Callable[[str], None]) -> tuple[str, str]:
    """Build the dependency layer of `project` on top of `base`; returns (tag, image id)."""
    tag = project_image_tag(image, project)
    if tag is None:
        raise SandboxError(f"{project} declares no dependencies (pyproject.toml [project], requirements*.txt)")
    scratch = make_temp_dir("deps")
    try:
        requirements = scratch / "requirements.txt"
        requirements.write_text("\n".join(project_requirements(project)) + "\n", encoding="utf-8")
        return tag, build_image(base=base, tag=tag, requirements=requirements, log=log)
    finally:
        remove_temp_dir(scratch)
