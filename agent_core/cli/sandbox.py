"""`agentls sandbox build-image | doctor`: make the Docker sandbox image, and check the sandbox holds.

`doctor` says which backend a run would use and why, then runs one tiny probe
per limit (network, writes outside the workspace, memory, processes, timeout,
secrets in the environment) and prints a table: exit 0 when every limit
holds, 1 otherwise, 2 when the settings or the chosen backend are unusable.
With --json the text goes to stderr and stdout gets one JSON object: backend,
why, limits, probes (limit, held, detail), all_hold and error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import asdict
from pathlib import Path

from agent_core.sandbox.base import SandboxError
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
    build.add_argument("--workspace", type=Path, default=Path.cwd(), help="Workspace whose settings apply.")
    build.set_defaults(func=build_image_command)

    doctor = commands.add_parser("doctor", help="Show the backend in use and check each limit with a probe run.")
    doctor.add_argument("--backend", choices=["auto", "docker", "bubblewrap", "process"], default=None,
                        help="Check this backend instead of the configured one.")
    doctor.add_argument("--workspace", type=Path, default=Path.cwd(), help="Workspace whose settings apply.")
    doctor.add_argument("--json", action="store_true", help="Print one JSON object on stdout (the text goes to stderr).")
    doctor.set_defaults(func=doctor_command)


def build_image_command(args: argparse.Namespace) -> int:
    from agent_core.sandbox import image

    try:
        settings = load_settings(args.workspace)
    except SettingsError as exc:
        print(f"agentls: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    tag = args.tag or settings.sandbox.docker_image
    try:
        image_id = image.build_image(base=args.base or image.DEFAULT_BASE, tag=tag, requirements=args.requirements,
                                     log=lambda line: print(line, file=sys.stderr))
    except SandboxError as exc:
        print(f"agentls: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(f"built {tag} ({image_id})")
    return EXIT_OK


def doctor_command(args: argparse.Namespace) -> int:
    from agent_core.sandbox import factory, probes

    out = sys.stderr if args.json else sys.stdout
    report: dict = {"backend": None, "why": None, "limits": None, "probes": [], "all_hold": False, "error": None}
    overrides = {"sandbox": {"backend": args.backend}} if args.backend else None
    try:
        settings = load_settings(args.workspace, overrides=overrides)
        name, reason = factory.describe_backend_choice(settings)
        report.update(backend=name, why=reason)
        print(f"backend: {name}\nwhy: {reason}", file=out)
        sandbox = factory.make_sandbox(settings, announce=lambda msg: print(msg, file=sys.stderr))
    except (SettingsError, SandboxError) as exc:
        print(f"agentls: {exc}", file=sys.stderr)
        _print_json(args, report, error=str(exc))
        return EXIT_BAD_INPUT
    limits = settings.sandbox
    report["limits"] = {key: getattr(limits, key) for key in ("cpus", "memory_mb", "pids", "file_size_mb", "timeout_s")}
    print(f"limits: {limits.cpus:g} CPU, {limits.memory_mb} MiB, {limits.pids} processes, "
          f"{limits.file_size_mb} MiB files, {limits.timeout_s:g} s\n", file=out)
    results = asyncio.run(probes.run_probes(sandbox, limits))
    print(probes.format_table(results), file=out)
    held = all(r.held for r in results)
    print("\nall limits hold" if held else "\nSOME LIMITS DO NOT HOLD", file=out)
    _print_json(args, report, probes=[asdict(r) for r in results], all_hold=held)
    return EXIT_OK if held else EXIT_FAILED


def _print_json(args: argparse.Namespace, report: dict, **fields: object) -> None:
    if args.json:
        print(json.dumps({**report, **fields}))
