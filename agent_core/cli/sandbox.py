"""`agentls sandbox build-image | doctor`: make the Docker sandbox image, and check the sandbox holds.

`doctor` says which backend a run would use and why, which interpreter and
environment the project's tests run with and why, and what records the
search's per-test lines there (coverage.py, agentls' own line tracer, or
nothing, asked of the search driver in the sandbox), then runs one tiny probe
per limit (network, writes outside the workspace, memory, the /tmp and
/dev/shm tmpfs, processes, timeout, secrets in the environment) and prints a table: exit 0 when every limit
holds, 1 otherwise, 2 when the settings or the chosen backend are unusable.
`doctor --project PATH` instead runs the project's suite on the host and in
the sandbox and lists the tests whose outcome differs (exit 1 when any does).
With --json the text goes to stderr and stdout gets one JSON object: backend,
why, engine (url, source, tls: the Docker engine and what chose it), coverage, limits,
probes (limit, held, detail), all_hold and error.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from agent_core.checks.trustprobes import TRUST_PROBES
from agent_core.cli import jsonout
from agent_core.sandbox import factory, probes
from agent_core.sandbox.base import SandboxError
from agent_core.sandbox.cleanup import make_temp_dir, remove_temp_dir
from agent_core.sandbox.compare import compare_project, format_comparison
from agent_core.sandbox.project_image import project_image_tag
from agent_core.settings import SettingsError, load_settings

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("sandbox", help="Build the Docker sandbox image; check the sandbox's limits.")
    commands = parser.add_subparsers(dest="sandbox_command", required=True, metavar="SANDBOX_COMMAND")

    build = commands.add_parser("build-image", help="Build the Docker sandbox image from a local base (no pull).")
    build.add_argument("--base", default=None, help="Local base image with python3 (default agentls/base:local).")
    build.add_argument("--tag", default=None, help="Tag of the image to build (default: settings' docker_image).")
    build.add_argument("--requirements", type=Path, default=None,
                       help="The project's test requirements, installed into a cached layer of the image.")
    build.add_argument("--project", type=Path, default=None,
                       help="Build the layer of this project's dependencies (tagged by a hash of its dependency "
                            "files); runs on copies of the project use it.")
    build.add_argument("--workspace", type=Path, default=Path.cwd(), help="Workspace whose settings apply.")
    build.set_defaults(func=build_image_command)

    doctor = commands.add_parser("doctor", help="Show the backend in use and check each limit with a probe run.")
    doctor.add_argument("--backend", choices=["auto", "docker", "bubblewrap", "process"], default=None,
                        help="Check this backend instead of the configured one.")
    doctor.add_argument("--workspace", type=Path, default=Path.cwd(), help="Workspace whose settings apply.")
    doctor.add_argument("--project", type=Path, default=None,
                        help="Run this project's suite on the host and in the sandbox; list tests that differ.")
    doctor.add_argument(
        "--json", action="store_true", help="Print one JSON object on stdout (the text goes to stderr)."
    )
    doctor.set_defaults(func=doctor_command)


def build_image_command(args: argparse.Namespace) -> int:
    from agent_core.sandbox.docker import build

    try:
        settings = load_settings(args.workspace)
    except SettingsError as exc:
        print(f"agentls: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    tag = args.tag or settings.sandbox.docker_image
    if args.project is not None:
        return _build_project_image(args, tag)
    try:
        image_id = build.build_image(
            base=args.base or build.DEFAULT_BASE,
            tag=tag,
            requirements=args.requirements,
            log=lambda line: print(line, file=sys.stderr),
        )
    except SandboxError as exc:
        print(f"agentls: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(f"built {tag} ({image_id})")
    return EXIT_OK


def _build_project_image(args: argparse.Namespace, image_tag: str) -> int:
    from agent_core.sandbox.docker import build

    if not args.project.is_dir():
        print(f"agentls: {args.project} is not a directory", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        tag, image_id = build.build_project_image(
            args.project.resolve(),
            args.base or build.DEFAULT_BASE,
            image_tag,
            log=lambda line: print(line, file=sys.stderr),
        )
    except SandboxError as exc:
        print(f"agentls: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(f"built {tag} ({image_id})")
    return EXIT_OK


def doctor_command(args: argparse.Namespace) -> int:
    out = sys.stderr if args.json else sys.stdout
    report: dict = {
        "backend": None, "why": None, "engine": None, "limits": None, "probes": [], "all_hold": False, "error": None,
    }
    overrides = {"sandbox": {"backend": args.backend}} if args.backend else None
    if args.project is not None and not args.project.is_dir():
        print(f"agentls: {args.project} is not a directory", file=sys.stderr)
        return EXIT_BAD_INPUT
    workspace = args.project or args.workspace
    try:
        settings = load_settings(workspace, overrides=overrides)
        name, reason = factory.describe_backend_choice(settings)
        report.update(backend=name, why=reason, engine=docker_engine())
        print(f"backend: {name}\nwhy: {reason}", file=out)
        print(f"docker engine: {report['engine']['describe']}", file=out)
        sandbox = factory.make_sandbox(settings, announce=lambda msg: print(msg, file=sys.stderr))
    except (SettingsError, SandboxError) as exc:
        print(f"agentls: {exc}", file=sys.stderr)
        _print_json(args, report, error=str(exc))
        return EXIT_BAD_INPUT
    try:
        report["environment"] = describe_environment(sandbox, workspace)
    except SandboxError as exc:
        print(f"environment: none usable: {exc}", file=out)
        _print_json(args, report, error=f"no usable environment: {exc}")
        return EXIT_BAD_INPUT
    print(f"environment: {report['environment']}", file=out)
    report["coverage"] = coverage_recorder(sandbox, workspace)
    print(f"coverage: {report['coverage']}", file=out)
    if args.project is not None:
        comparison = compare_project(sandbox, args.project.resolve(), settings.sandbox.timeout_s)
        print(format_comparison(comparison), file=out)
        _print_json(
            args,
            report,
            differences=[list(d) for d in comparison.differences],
            all_hold=not comparison.differences and bool(comparison.host),
        )
        return EXIT_FAILED if comparison.differences or not comparison.host else EXIT_OK
    limits = settings.sandbox
    report["limits"] = {key: getattr(limits, key) for key in ("cpus", "memory_mb", "pids", "file_size_mb", "timeout_s")}
    print(
        f"limits: {limits.cpus:g} CPU, {limits.memory_mb} MiB, {limits.pids} processes, "
        f"{limits.file_size_mb} MiB files, {limits.timeout_s:g} s\n",
        file=out,
    )
    results = asyncio.run(probes.run_probes(sandbox, limits, extra=TRUST_PROBES))
    print(probes.format_table(results), file=out)
    held = all(r.held for r in results)
    print("\nall limits hold" if held else "\nSOME LIMITS DO NOT HOLD", file=out)
    _print_json(args, report, probes=[asdict(r) for r in results], all_hold=held)
    return EXIT_OK if held else EXIT_FAILED


def docker_engine() -> dict:
    """The Docker engine's endpoint and which setting chose it (DOCKER_HOST, a docker context, the default)."""
    from agent_core.sandbox.docker.engine import engine_endpoint

    try:
        where = engine_endpoint()
    except SandboxError as exc:
        return {"url": None, "source": None, "tls": False, "describe": str(exc)}
    return {"url": where.url, "source": where.source, "tls": where.tls is not None, "describe": where.describe()}


def describe_environment(sandbox: Any, workspace: Path) -> str:
    """The interpreter the sandbox runs the project's tests with, and why (SandboxError when none)."""
    if hasattr(sandbox, "environment"):
        from agent_core.sandbox.envview import added_roots

        env = sandbox.environment(workspace.resolve())
        added = added_roots(env)
        return env.describe() + (f"; agentls adds {', '.join(added)} after its own site-packages" if added else "")
    runtime = getattr(sandbox, "runtime", None)
    if runtime is not None:
        site = f" with agentls' test packages from {runtime.site_dir}" if runtime.site_dir else ""
        return f"{runtime.python}{site} (the process backend does not use the project's environment)"
    settings = getattr(sandbox, "_sandbox", None)
    if settings is None:
        return str(sandbox.python)
    from agent_core.sandbox.docker.engine import image_exists
    tag = project_image_tag(settings.docker_image, workspace.resolve())
    if tag and image_exists(tag):
        return (
            f"{sandbox.python} in {tag}: the project's dependencies, built by `agentls sandbox build-image --project`"
        )
    missing = f"; {tag} is not built (agentls sandbox build-image --project)" if tag else ""
    return f"{sandbox.python} in {settings.docker_image}{missing}"


def coverage_recorder(sandbox: Any, workspace: Path) -> str:
    """What records the search's per-test lines for this project in this sandbox, asked of the driver there."""
    from agent_core.search import line_recorder

    project = workspace.resolve()
    base = make_temp_dir("probe", origin=project)
    try:
        (base / project.name).mkdir()
        what = asyncio.run(line_recorder(sandbox, base / project.name))
    finally:
        remove_temp_dir(base)
    if what.startswith("none"):
        why = _driver_failure(what.removeprefix("none").lstrip(":; "))
        return f"no per-test lines: {why}; the search localizes from tracebacks"
    if what.startswith("agentls' line tracer"):
        return "yes, by agentls' line tracer (" + what.removeprefix("agentls' line tracer; ") + ")"
    return f"yes, by {what}"


def _driver_failure(error: str) -> str:
    """A driver's failure as a sentence: a missing module says so and what to install, a traceback gives its
    last line, anything else its first line."""
    missing = re.search(r"No module named '([\w.]+)'", error)
    if missing:
        module = missing.group(1).split(".")[0]
        return f"the project's interpreter has no {module} for the search driver (install {module} in its environment)"
    if "Traceback (most recent call last)" in error:
        head = error.split("Traceback (most recent call last)")[0].rstrip(": ")
        last = [line for line in error.splitlines() if line.strip()][-1].strip()
        return f"{head}: {last}"
    return error.splitlines()[0] if error else "the search driver gave no reason"


def _print_json(args: argparse.Namespace, report: dict, **fields: object) -> None:
    if args.json:
        print(jsonout.dumps({**report, **fields}))
