"""What the engine and learning tests share: the buggy calculator, scripted edits, CLI results, journals."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

CALC = {
    "calc.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n",
    "test_calc.py": (
        "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_mul():\n    assert mul(2, 3) == 6\n"
    ),
}
FIX_EDIT = {"edits": [{"path": "calc.py", "search": "    return a - b", "replace": "    return a + b"}],
            "explanation": "add must add"}
WRONG_EDIT = {"edits": [{"path": "calc.py", "search": "    return a - b", "replace": "    return a * b"}],
              "explanation": "try multiplying"}


@dataclass
class CliRun:
    code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> dict:
        return json.loads(self.stdout.strip().splitlines()[-1])


def make_project(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def run_dir(root: Path, run_id: str) -> Path:
    return root / ".agentls" / "runs" / run_id


def journal_records(root: Path, run_id: str) -> list[dict]:
    path = run_dir(root, run_id) / "journal.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]
