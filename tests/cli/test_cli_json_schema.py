"""Every `--json` output names its format version (`"schema": 1`, first), the cheap ones run here in-process;
fix, test and runs are checked where they run (tests/runs/test_runs_trace_json.py)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from agent_core.cli import build_parser
from agent_core.cli import main as cli_main


def _json(capsys, *argv: str) -> object:
    cli_main(list(argv))
    return json.loads(capsys.readouterr().out)


def test_json_outputs_start_with_the_schema_version(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("AGENTLS_MODEL_DIR", str(tmp_path / "models"))
    outputs = {
        "config show": _json(capsys, "config", "show", "--workspace", str(tmp_path), "--json"),
        "model status": _json(capsys, "model", "status", "--json"),
        "runs (error)": _json(capsys, "runs", "--workspace", str(tmp_path), "--limit", "0", "--json"),
        "trace (error)": _json(capsys, "trace", "nope", "--workspace", str(tmp_path), "--json"),
        "report (error)": _json(capsys, "report", "nope", "--workspace", str(tmp_path), "--json"),
        "sandbox doctor (error)": _json(capsys, "sandbox", "doctor", "--workspace", str(tmp_path), "--json",
                                        "--backend", "docker"),
    }
    for name, data in outputs.items():
        assert isinstance(data, dict) and list(data)[0] == "schema" and data["schema"] == 1, (name, data)


def _json_commands(parser: argparse.ArgumentParser, prefix: str = "") -> list[str]:
    found = [prefix.strip()] if any("--json" in a.option_strings for a in parser._actions) else []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _json_commands(sub, f"{prefix}{name} ")
    return found


def test_the_documented_list_of_json_commands_is_complete() -> None:
    documented = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
    section = documented.split("## `--json`", 1)[1].split("The last stdout line", 1)[0]
    missing = [c for c in _json_commands(build_parser()) if f"`{c}`" not in section]
    assert missing == [], "docs/cli.md's --json section names every command that has --json"
