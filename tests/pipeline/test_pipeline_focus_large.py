"""Focused context: in a 3,000-line module the coder sees the suspect function whole and an outline.

The prompt the scripted server received stays small; the rewritten method is
put back in place of its own lines (a second class has a method of the same
name), and the suspicious-line mark the model copied back is gone.
"""

from __future__ import annotations

import json
from pathlib import Path

from agent_core.agents.coder.agent import answer_budget
from agent_core.agents.coder.schema import CoderOutput, Edit
from agent_core.models import TestFailure, TestReport
from agent_core.pipeline.coder.focus import (
    WHOLE_FILE_LINES,
    render_suspects,
    retarget_to_focus,
)
from agent_core.pipeline.coder.suspects import suspects_from_report
from agent_core.workspace.shadow import ShadowWorkspace
from engine_support import journal_records, make_project


def _helper(i: int) -> str:
    body = "".join(f"    step{j} = step{j - 1} * {i} + {j}  # helper {i} line {j}\n" for j in range(1, 15))
    return f"def helper_{i}(x):\n    \"\"\"Helper number {i}.\"\"\"\n    step0 = x\n{body}    return step14\n\n\n"


STATS = (
    "class Stats:\n"
    "    def __init__(self, xs):\n"
    "        self.xs = list(xs)\n\n"
    "    def mean(self):\n"
    "        count = len(self.xs) - len(self.xs)\n"
    "        return sum(self.xs) / count\n\n\n"
)
OTHER = "class Other:\n    def mean(self):\n        return 0\n\n\n"
BIG = ("\"\"\"A big module.\"\"\"\n\nimport math\n\n\n" + "".join(_helper(i) for i in range(80)) + STATS
       + "".join(_helper(i) for i in range(80, 160)) + OTHER + "def root(x):\n    return math.sqrt(x)\n")
TESTS = ("from big import Other, Stats, helper_3\n\n\n"
         "def test_mean():\n    assert Stats([1, 2, 3]).mean() == 2\n\n\n"
         "def test_other():\n    assert Other().mean() == 0\n\n\n"
         "def test_helper():\n    assert helper_3(0) > 0\n")
MEAN_START = BIG.splitlines().index("    def mean(self):") + 1  # Stats.mean: the first of the two
MEAN_END = MEAN_START + 2
OTHER_START = BIG.splitlines().index("class Other:") + 2
ANSWER = ("### big.py\n```python\ndef mean(self):\n    count = len(self.xs)\n"
          "    return sum(self.xs) / count  # <- suspicious\n```\n")  # the mark copied back


def test_the_prompt_stays_small_and_the_method_goes_back_in_place(tmp_path: Path, scripted_llm, run_fix):
    assert BIG.count("\n") > 3000
    project = make_project(tmp_path / "big", {"big.py": BIG, "test_big.py": TESTS})
    scripted_llm.add("coder", ANSWER)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")

    assert run.code == 0 and run.json["status"] == "fixed" and run.json["iterations"] == 1, run.stderr
    prompt = "\n".join(m["content"] for m in scripted_llm.requests_for("coder")[0]["messages"])
    assert len(prompt) < 6000, f"the prompt grew with the file: {len(prompt)} characters for {len(BIG)}"
    assert "return sum(self.xs) / count  # <- suspicious" in prompt, "the line the traceback ends in, marked"
    # the spectrum marks the lines only the failing test runs, the traceback puts Stats.mean first
    assert "count = len(self.xs) - len(self.xs)  # <- suspicious\n" in prompt
    assert f"lines {MEAN_START}-{MEAN_END}: Stats.mean" in prompt
    assert (
        "class Stats:\n    def __init__(self, xs):  # shown whole below\n    def mean(self):  # shown whole below\n"
        in prompt
    ), "the outline names both suspects (test_mean alone runs __init__ too)"
    assert "def helper_3(x):" in prompt and "more definitions not shown" in prompt, "the outline: signatures"
    assert "helper 3 line 3" not in prompt, "no other function's body"
    assert "def test_mean" in prompt and "ZeroDivisionError" in prompt, "the failing test and its output"
    focus = next(r for r in journal_records(project, run.json["run_id"]) if r["type"] == "focus")
    # "state": the spectrum localization ranked the suspects before the coder ran
    assert focus["source"] == "state" and focus["shown_whole"][0] == f"big.py:{MEAN_START}-{MEAN_END} Stats.mean"
    expected = BIG.replace("        count = len(self.xs) - len(self.xs)\n", "        count = len(self.xs)\n")
    assert (project / "big.py").read_text() == expected, "only Stats.mean changed, at its own indentation"


def test_the_answer_budget_follows_the_functions_to_rewrite_not_the_prompt(tmp_path: Path, scripted_llm, run_fix):
    """A model that runs on after its answer (a small model repeating itself) is stopped by a budget the
    size of the functions it rewrites, not of the prompt (outline, tests, failures) around them."""
    project = make_project(tmp_path / "big", {"big.py": BIG, "test_big.py": TESTS})
    scripted_llm.honour_max_tokens = True
    babble = "".join(f"# the count is the length of the list ({i})\n" for i in range(3000))
    scripted_llm.add("coder", ANSWER + "\nWhy it works:\n" + babble)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")

    assert run.code == 0 and run.json["status"] == "fixed", run.stderr
    request = scripted_llm.requests_for("coder")[0]
    prompt = "\n".join(m["content"] for m in request["messages"])
    shown = [line for line in BIG.splitlines()[MEAN_START - 4:MEAN_END]]  # Stats.__init__ and Stats.mean
    assert request["max_tokens"] <= 384 + 2 * len("\n".join(shown)) // 3, request["max_tokens"]
    assert answer_budget(prompt) > 2 * request["max_tokens"], "the prompt's budget would have let it run on"
    call = next(r for r in journal_records(project, run.json["run_id"]) if r["type"] == "llm_call")
    assert call["usage"]["completion_tokens"] <= request["max_tokens"] * max(1, request.get("n") or 1)
    assert "count = len(self.xs)\n        return" in (project / "big.py").read_text()


def test_a_small_file_is_shown_whole_with_the_suspicious_line_marked(project: Path, scripted_llm, run_fix):
    scripted_llm.add("coder", "### calc.py\n```python\ndef add(a, b):\n    return a + b  # <- suspicious\n```\n")

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")

    assert run.json["status"] == "fixed", run.stderr
    prompt = json.dumps(scripted_llm.requests_for("coder")[0]["messages"])
    # `assert add(2, 3) == 5` fails in the test: add is the suspect, and its line is the one only the failing test runs
    assert "def add(a, b):\\n    return a - b  # <- suspicious\\n\\n\\ndef mul(a, b):\\n    return a * b\\n" in prompt
    assert (
        project / "calc.py"
    ).read_text() == "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
    assert not any(
        r["type"] == "candidate" and r["verdict"] == "passed" for r in journal_records(project, run.json["run_id"])
    )


def test_suspects_from_a_traceback_frame_and_from_the_failing_line(tmp_path: Path):
    project = make_project(tmp_path / "p", {"big.py": BIG, "test_big.py": TESTS})
    frame = TestFailure(
        nodeid="test_big.py::test_mean",
        file="test_big.py",
        line=5,
        message="ZeroDivisionError",
        source_file="big.py",
        source_line=MEAN_END,
    )
    called = TestFailure(nodeid="test_big.py::test_other", file="test_big.py", line=9, message="assert 1 == 0")
    with ShadowWorkspace(project) as shadow:
        found = suspects_from_report(shadow, TestReport(failed=2, failures=[frame, called]))
    # the frame (weight 1) and the failing line's call `.mean()` (0.5 to each method of that name)
    assert found == [
        {
            "file": "big.py",
            "function": "Stats.mean",
            "start_line": MEAN_START,
            "end_line": MEAN_END,
            "lines": [MEAN_END],
            "score": 1.5,
        },
        {
            "file": "big.py",
            "function": "Other.mean",
            "start_line": OTHER_START,
            "end_line": OTHER_START + 1,
            "lines": [],
            "score": 0.5,
        },
    ]
    assert WHOLE_FILE_LINES < BIG.count("\n")


def test_given_suspects_are_found_again_after_their_function_moved(tmp_path: Path):
    """The `suspects` another node put in the state may be a round old: the function is looked up by name."""
    moved = "# one more line at the top\n" + BIG
    project = make_project(tmp_path / "p", {"big.py": moved})
    stale = {
        "file": "big.py",
        "function": "Stats.mean",
        "start_line": MEAN_START,
        "end_line": MEAN_END,
        "lines": [MEAN_START + 1],
        "score": 0.9,
    }
    with ShadowWorkspace(project) as shadow:
        text, files, targets = render_suspects(shadow, [stale])
    assert files == ["big.py"]
    assert [(t.function, t.start_line, t.end_line) for t in targets] == [("Stats.mean", MEAN_START + 1, MEAN_END + 1)]
    assert "count = len(self.xs) - len(self.xs)  # <- suspicious" in text
    assert len(text) < 3000


def test_a_method_answered_inside_its_class_goes_back_alone(tmp_path: Path):
    """`class Stats:` written around the rewritten method only: spliced as a class it would drop __init__."""
    project = make_project(tmp_path / "p", {"big.py": BIG})
    answer = CoderOutput(
        edits=[
            Edit(
                path="big.py",
                replace=(
                    'class Stats:\n    """Stats."""\n\n'
                    "    def mean(self):\n        return sum(self.xs) / len(self.xs)\n"
                ),
            )
        ]
    )
    with ShadowWorkspace(project) as shadow:
        _, _, targets = render_suspects(
            shadow,
            [
                {
                    "file": "big.py",
                    "function": "Stats.mean",
                    "start_line": MEAN_START,
                    "end_line": MEAN_END,
                    "lines": [],
                    "score": 1.0,
                }
            ],
        )
        (edit,) = retarget_to_focus(shadow, answer, targets).edits
    assert edit.search == "\n".join(BIG.splitlines()[MEAN_START - 1 : MEAN_END])
    assert edit.replace == "    def mean(self):\n        return sum(self.xs) / len(self.xs)"
