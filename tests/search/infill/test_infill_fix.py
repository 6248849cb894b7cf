"""`agentls fix` where only the model's one-line fill of a hole fixes the bug: through the search's driver.

The greeting's bug (a comma and a bang missing) is out of the catalogue's and the templates' reach; the
scripted endpoint answers the raw fill-in-the-middle prompts, one wrong sample first. The fix must come from
the fills, verified by the search (found_by infill), before any planner or coder call.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_core.search.infill import INFILL_ACCOUNT
from engine_support import journal_records, make_project
from testkit.scripted_faults import Fault

pytestmark = pytest.mark.e2e  # a real sandbox

GREETING = {
    "hello.py": 'def greet(name):\n    """A greeting for `name`."""\n    return "Hello " + name\n',
    "test_hello.py": 'from hello import greet\n\n\ndef test_greet():\n    assert greet("Ann") == "Hello, Ann!"\n',
    ".agentls.toml": "[search]\nmutant_timeout_s = 2\nbudget_s = 400\n",  # room on a loaded machine
}
RIGHT = '    return "Hello, " + name + "!"'


@pytest.fixture(autouse=True)
def _search_and_fills_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTLS_SEARCH", "1")
    monkeypatch.setenv("AGENTLS_SEARCH__INFILL", "1")
    monkeypatch.setenv("AGENTLS_SEARCH__INFILL_SAMPLES", "3")
    monkeypatch.setenv("AGENTLS_FIM", "tokens")


def test_a_fix_only_a_one_line_fill_of_the_model_makes(tmp_path: Path, scripted_llm, run_fix):
    project = make_project(tmp_path / "proj", GREETING)
    scripted_llm.add(INFILL_ACCOUNT, '    return "Hello " + name.title()\n')  # green for nothing: tried, fails
    scripted_llm.default(INFILL_ACCOUNT, RIGHT + "\n")

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")

    assert run.code == 0, run.stderr
    out = run.json
    assert out["status"] == "fixed", out
    assert (project / "hello.py").read_text().splitlines()[2] == RIGHT
    roles = {r["role"] for r in scripted_llm.requests}
    assert roles == {INFILL_ACCOUNT}, "no planner or coder call: the fill fixed it"
    first = scripted_llm.requests_for(INFILL_ACCOUNT)[0]["prompt"]
    assert first.startswith("<|repo_name|>project\n<|file_sep|>test_hello.py\ndef test_greet():\n"), \
        "the failing test's code first, as another file of the repository"
    assert "<|file_sep|>hello.py\n<|fim_prefix|>" in first and "<|fim_suffix|>" in first
    assert first.endswith("<|fim_middle|>")
    assert first.endswith('    """A greeting for `name`."""\n    # buggy line: return "Hello " + name\n'
                          "<|fim_suffix|><|fim_middle|>"), "the line's hole first, its old text shown above it"
    assert out["usage"]["llm_calls"] == len(scripted_llm.requests) >= 2
    search = next(r for r in journal_records(project, out["run_id"]) if r["type"] == "search")
    assert search["found"]["after"] == RIGHT
    fills = search["infill"]
    assert fills["holes"] >= 1 and fills["samples"] >= 2 and fills["tokens"] > 0 and fills["won"]
    assert fills["tried"] >= 2, "the wrong sample was tried before the right one won"
    summary = json.loads((project / ".agentls" / "runs" / out["run_id"] / "summary.json").read_text())
    assert "infill" in json.dumps(summary)


def test_a_dead_endpoint_asks_for_no_fill_and_the_search_runs_as_without_a_model(tmp_path: Path, run_fix):
    project = make_project(tmp_path / "proj", GREETING)

    run = run_fix(str(project), "--base-url", "http://127.0.0.1:9/v1", "--json")

    assert run.json["status"] != "fixed", run.json
    assert "the model was never reached" in run.stderr + json.dumps(run.json)
    search = next(r for r in journal_records(project, run.json["run_id"]) if r["type"] == "search")
    assert search["found"] is None and search["tried"] > 0, "the search's own candidates were all tried"
    assert "infill" not in search, "the probe found the endpoint dead: no fill was asked for"


def test_a_failing_endpoint_is_said_in_the_fills_figures_and_tries_nothing(tmp_path: Path, scripted_llm, run_fix):
    project = make_project(tmp_path / "proj", GREETING)
    scripted_llm.default(INFILL_ACCOUNT, Fault.status(500, times=1000))

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--max-iterations", "1")

    assert run.json["status"] != "fixed", run.json
    search = next(r for r in journal_records(project, run.json["run_id"]) if r["type"] == "search")
    assert search["found"] is None and search["tried"] > 0, "the search's own candidates were all tried"
    fills = search["infill"]
    assert fills["error"] and fills["tried"] == 0 and fills["kept"] == 0, fills


PLURAL = {
    "words.py": 'def ending(count, plural):\n    """A noun\'s ending: "s" unless one, if it has a plural."""\n'
                '    if count != 1:\n        return "s"\n    return ""\n',
    "test_words.py": 'from words import ending\n\n\ndef test_a_noun_without_a_plural_ends_the_same():\n'
                     '    assert ending(3, False) == ""\n\n\ndef test_plurals():\n'
                     '    assert ending(3, True) == "s" and ending(1, True) == ""\n',
    ".agentls.toml": "[search]\nmutant_timeout_s = 2\nbudget_s = 400\n",
}


def _inline_only(head: str, answer: str, wrong: str):
    """A scripted fill: `answer` at the hole whose prompt's code before ends with `head`, `wrong` (a line that
    does not fix it) anywhere else."""
    def fill(request: dict) -> str:
        return answer if request.get("prompt", "").split("<|fim_suffix|>")[0].endswith(head) else wrong
    return fill


STABLE = {
    "dump.py": 'import json\n\n\ndef dump(data):\n    """`data` as JSON, the same text for the same mapping."""\n'
               '    return json.dumps(data)\n',
    "test_dump.py": 'from dump import dump\n\n\ndef test_the_order_of_the_keys_does_not_matter():\n'
                    '    assert dump({"b": 1, "a": 2}) == dump({"a": 2, "b": 1}) == \'{"a": 2, "b": 1}\'\n',
    ".agentls.toml": "[search]\nmutant_timeout_s = 2\nbudget_s = 400\n",
}


DISCOUNT = {
    "price.py": 'def price(kind, amount, member):\n    """What `amount` costs: members save on large amounts."""\n'
                '    if kind == "book":\n        if amount > 100:\n            return amount * 0.9\n'
                '        return amount\n    if amount > 100:\n        return amount * 0.8\n    return amount\n',
    "test_price.py": 'from price import price\n\n\ndef test_only_members_save():\n'
                     '    assert price("book", 200, False) == 200 and price("pen", 200, False) == 200\n'
                     '    assert price("book", 200, True) == 180 and price("pen", 200, True) == 160\n\n\n'
                     'def test_small_amounts():\n    assert price("book", 50, True) == 50\n',
    ".agentls.toml": "[search]\nmutant_timeout_s = 2\nbudget_s = 400\n",
}


@pytest.mark.parametrize("files, path, fill, fixed, won", [
    (PLURAL, "words.py", _inline_only("if count != 1 and ", "plural:\n", "    if count > 1:\n"),
     {2: "    if count != 1 and plural:"}, "line 3 (condition and ...)"),
    (STABLE, "dump.py", _inline_only("json.dumps(data, ", "sort_keys=True)\n", "    return json.dumps(dict(data))\n"),
     {5: "    return json.dumps(data, sort_keys=True)"}, "line 6 (argument at column 29)"),
    (DISCOUNT, "price.py", _inline_only("if amount > 100 and ", "member:\n", "    if amount >= 100:\n"),
     {3: "        if amount > 100 and member:", 6: "    if amount > 100 and member:"}, "(condition and ...)"),
    (PLURAL, "words.py", _inline_only("if count != 1 and ", "not plural:\n", "    if count > 1:\n"),
     {2: "    if count != 1 and plural:"}, "line 3 (condition and ...)"),
], ids=["a clause added to a condition", "a keyword argument added to a call", "the same clause at a twin line",
        "the model's clause the wrong way round"])
def test_a_fix_only_the_model_s_answer_inside_a_line_makes(tmp_path: Path, scripted_llm, run_fix, files, path, fill,
                                                           fixed, won):
    """The third: one clause fixes neither branch alone (the one failing test checks both); the fill's candidate
    at the line's twin too does (samples.py `twin_lines`). The fourth: the model writes the clause negated, and
    only its candidate turned round fixes it (infill/turned.py)."""
    project = make_project(tmp_path / "proj", files)
    scripted_llm.default(INFILL_ACCOUNT, fill)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")

    assert run.json["status"] == "fixed", run.json
    lines = (project / path).read_text().splitlines()
    assert {index: lines[index] for index in fixed} == fixed
    search = next(r for r in journal_records(project, run.json["run_id"]) if r["type"] == "search")
    assert search["infill"]["won"].endswith(won), search["infill"]
    assert {r["role"] for r in scripted_llm.requests} == {INFILL_ACCOUNT}


MESSAGES = {
    "log.py": 'def entry(kind, n):\n    """The log\'s line for an event of `kind`."""\n    if kind == "error":\n'
              '        return "error " + str(n)\n    return "note " + str(n)\n',
    "test_log.py": 'from log import entry\n\n\ndef test_error():\n    assert entry("error", 1) == "failed: 1"\n\n\n'
                   'def test_note():\n    assert entry("note", 2) == "note: 2"\n',
    ".agentls.toml": "[search]\nmutant_timeout_s = 2\nbudget_s = 400\n",
}
ERROR_LINE, NOTE_LINE = '        return "failed: " + str(n)', '    return "note: " + str(n)'


def _by_prefix(answers: dict[str, str], wrong: str):
    """A scripted fill: the answer of the first ending of the code before the hole in `answers`, else `wrong`."""
    def fill(request: dict) -> str:
        before = request.get("prompt", "").split("<|fim_suffix|>")[0]
        return next((answer for end, answer in answers.items() if before.endswith(end)), wrong)
    return fill


def test_two_fills_each_passing_one_failing_test_are_the_fix_together(tmp_path: Path, scripted_llm, run_fix):
    """Each failing test needs its own line: no single candidate passes both, and the catalogue writes neither
    message. The fill at line 4 passes test_error alone, the fill at line 5 test_note alone; with both failing
    tests run for each fill, they are partial fixes, and the two together are the fix (driver/partials.py)."""
    project = make_project(tmp_path / "proj", MESSAGES)
    scripted_llm.default(INFILL_ACCOUNT, _by_prefix({'if kind == "error":\n': ERROR_LINE + "\n",
                                                     'return "error " + str(n)\n': NOTE_LINE + "\n"},
                                                    "    pass\n"))

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")

    assert run.json["status"] == "fixed", run.json
    assert (project / "log.py").read_text().splitlines()[3:5] == [ERROR_LINE, NOTE_LINE]
    search = next(r for r in journal_records(project, run.json["run_id"]) if r["type"] == "search")
    combined = search["combined"]
    assert combined["partials"] >= 2 and combined["tried"] >= 1, combined
    assert sorted(combined["won"].split(" + ")) == ["line 4 (line)", "line 5 (line)"], combined
    assert run.json["found_by"] == "infill", "a fix of the model's fills"
    assert {r["role"] for r in scripted_llm.requests} == {INFILL_ACCOUNT}


UNITS = {
    "units.py": 'def _scaled(factor):\n    def convert(self, value):\n        return value * factor\n'
                '    return convert\n\n\nclass Units:\n    """Lengths in centimetres."""\n'
                '    inches = _scaled(2.54)\n    feet = _scaled(30.0)\n',
    "test_units.py": 'from units import Units\n\n\ndef test_inches_in_centimetres():\n'
                     '    assert Units().inches(2) == 5.08\n\n\ndef test_feet_in_centimetres():\n'
                     '    assert Units().feet(2) == 60.96\n',
    ".agentls.toml": "[search]\nmutant_timeout_s = 2\nbudget_s = 400\n",
}
FEET = "    feet = _scaled(30.48)"


def test_a_fill_at_a_line_only_the_failing_test_s_name_points_at_fixes(tmp_path: Path, scripted_llm, run_fix):
    """The wrong factor is in a class body, run when the module is imported: no test's coverage names that line,
    and the spectrum's one suspect is `convert`, which both tests run. The failing test's name says `feet`, and
    so does the line (evidence/words.py): its hole is among the first, and its fill is the fix."""
    project = make_project(tmp_path / "proj", UNITS)
    scripted_llm.default(INFILL_ACCOUNT, _by_prefix({"# buggy line: feet = _scaled(30.0)\n": FEET + "\n"},
                                                    "        return value * factor * 1.0\n"))

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")

    assert run.json["status"] == "fixed", run.json
    assert (project / "units.py").read_text().splitlines()[9] == FEET
    records = journal_records(project, run.json["run_id"])
    localized = next(r for r in records if r["type"] == "localize")
    assert all(s["function"] != "Units" and 10 not in s["lines"] for s in localized["suspects"]), \
        ("the spectrum does not name the line", localized)
    search = next(r for r in records if r["type"] == "search")
    assert search["infill"]["won"] == "line 10 (shown)", search["infill"]
    assert run.json["found_by"] == "infill"
