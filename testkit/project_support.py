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


# A suite that passes on the host and must pass in every sandbox: 300 threads, a multiprocessing
# pool, shared memory in /dev/shm, a writable HOME, a UTF-8 locale.
THREADS_AND_POOL = '''
import multiprocessing
import threading


def _square(x):
    return x * x


def test_300_threads():
    ready = threading.Barrier(301, timeout=30)
    threads = [threading.Thread(target=ready.wait) for _ in range(300)]
    for thread in threads:
        thread.start()
    ready.wait()
    for thread in threads:
        thread.join()


def test_a_multiprocessing_pool():
    with multiprocessing.Pool(4) as pool:
        assert pool.map(_square, range(50)) == [x * x for x in range(50)]


def test_shared_memory_and_a_writable_home(tmp_path):
    from multiprocessing import shared_memory
    import os, locale
    block = shared_memory.SharedMemory(create=True, size=1024)
    block.close(); block.unlink()
    home = os.path.expanduser("~")
    with open(os.path.join(home, "probe.txt"), "w") as handle:
        handle.write("x")
    assert (tmp_path / "..").exists() and locale.getpreferredencoding() == "UTF-8"
'''


# A bug no single edit fixes (the greeting's words are wrong, not an operator or a name): the mutant search
# tries its candidates and finds nothing, then the model is called, and these answers fix it.
GREET = {
    "greet.py": 'def greet(name):\n    return "Hi " + name\n',
    "test_greet.py": 'from greet import greet\n\n\ndef test_greet():\n    assert greet("Bo") == "Hello, Bo!"\n',
}
GREET_PLAN = {"approach": "Fix greet.", "subtasks": [{"id": "t1", "description": "greet says Hello, NAME!",
                                                      "files": ["greet.py"]}]}
GREET_FIX = {"edits": [{"path": "greet.py", "search": '    return "Hi " + name',
                        "replace": '    return f"Hello, {name}!"'}], "explanation": "greet must say Hello"}


def script_greet(llm) -> None:
    """The model's answers that fix GREET after the search found nothing."""
    llm.default("planner", GREET_PLAN)
    llm.default("coder", GREET_FIX)
    llm.default("explainer", "greet said Hi. It says Hello now, so test_greet passes.")
