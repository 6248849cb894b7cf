"""Templates beyond one token, found and verified by the search: `agentls fix` on real projects, a real sandbox,
the scripted endpoint with no answer queued (a model call would fail the run: zero tokens)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_core.search.driver import pairs
from engine_support import journal_records, make_project

pytestmark = pytest.mark.e2e  # every test here runs a real sandbox

FAST = "[search]\nmutant_timeout_s = 2\n"

LEDGER = {  # some entries are None (a deleted row): the sum must skip them, the author's fix is a guard
    "ledger.py": (
        "class Entry:\n    def __init__(self, value):\n        self.value = value\n\n\n"
        "def total(items):\n    total = 0\n    for item in items:\n        total += item.value\n    return total\n"
    ),
    "test_ledger.py": (
        "from ledger import Entry, total\n\n\ndef test_sum():\n    assert total([Entry(2), Entry(3)]) == 5\n\n\n"
        "def test_deleted_rows_are_skipped():\n    assert total([Entry(2), None, Entry(3)]) == 5\n\n\n"
        "def test_empty():\n    assert total([]) == 0\n"
    ),
    ".agentls.toml": FAST,
}
STACK = {  # taking from an empty named stack must answer None, not raise: the fix catches the IndexError of
    # `pop()` (no guard on a name of the line says "empty": the stack is `stacks[name]`)
    "stack.py": (
        "def take(stacks, name):\n    value = stacks[name].pop()\n    return value\n\n\n"
        "def push(stacks, name, value):\n    stacks.setdefault(name, []).append(value)\n    return stacks\n"
    ),
    "test_stack.py": (
        "from stack import push, take\n\n\ndef test_take():\n    assert take({'a': [1, 2]}, 'a') == 2\n\n\n"
        "def test_take_from_an_empty_stack():\n    assert take({'a': []}, 'a') is None\n\n\n"
        "def test_push():\n    assert push({}, 'a', 2) == {'a': [2]}\n"
    ),
    ".agentls.toml": FAST,
}
BARS = {  # a user's bar format: its left and right parts replace the default ones; the tests only look at the
    # right part, so `r_bar` -> `r_bar_user` alone is green too, and leaves `l_bar_user` unused
    "bars.py": (
        "def render(bar, fmt=None):\n"
        '    l_bar, r_bar = "|", "|"\n'
        "    if fmt:\n"
        '        l_bar_user, r_bar_user = fmt.split("{bar}")\n'
        "        return l_bar + bar + r_bar\n"
        "    return l_bar + bar + r_bar\n"
    ),
    "test_bars.py": (
        "from bars import render\n\n\ndef test_default():\n    assert render('##') == '|##|'\n\n\n"
        "def test_user_format_right_part():\n    assert render('##', '[{bar}>').endswith('##>')\n"
    ),
    ".agentls.toml": FAST,
}

ECHO = {  # no standard stream attached (pythonw): printing must do nothing; the author checks the stream where
    # it is picked, not before the write (click 8.1.4), and a Windows-only rewrap sets it again later
    "echo.py": (
        "import sys\n\nWIN = sys.platform.startswith('win')\nSTREAMS = {'out': sys.stdout}\n\n\n"
        "def emit(message, stream=None):\n"
        "    if stream is None:\n"
        "        if message.startswith('!'):\n"
        "            stream = STREAMS.get('err')\n"
        "        else:\n"
        "            stream = STREAMS.get('out')\n"
        "    text = message + '\\n'\n"
        "    if WIN:\n"
        "        stream = wrap(stream)\n"
        "    stream.write(text)\n"
    ),
    "test_echo.py": (
        "import io\n\nimport echo\n\n\ndef test_to_a_stream():\n    buf = io.StringIO()\n"
        "    echo.emit('hi', buf)\n    assert buf.getvalue() == 'hi\\n'\n\n\n"
        "def test_without_streams(monkeypatch):\n    monkeypatch.setattr(echo, 'STREAMS', {})\n"
        "    echo.emit('hi')\n"
    ),
    ".agentls.toml": FAST,
}

TAGS = {  # each call must start from no tags: the shared default list keeps the previous call's
    "tags.py": (
        "def tag(name, tags=[]):\n"
        '    """`tags` with `name` added."""\n'
        "    tags.append(name.lower())\n"
        "    return tags\n"
    ),
    "test_tags.py": (
        "from tags import tag\n\n\ndef test_one():\n    assert tag('A') == ['a']\n\n\n"
        "def test_fresh_each_call():\n    tag('x')\n    assert tag('B') == ['b']\n\n\n"
        "def test_given_list():\n    mine = ['z']\n    assert tag('C', mine) is mine and mine == ['z', 'c']\n"
    ),
    ".agentls.toml": FAST,
}

PORTS = {  # a missing setting (None) must give the default port, as a malformed one does
    "ports.py": (
        "def port(value, default=8080):\n"
        "    try:\n"
        "        number = int(value)\n"
        "    except ValueError:\n"
        "        return default\n"
        "    return number\n"
    ),
    "test_ports.py": (
        "from ports import port\n\n\ndef test_number():\n    assert port('81') == 81\n\n\n"
        "def test_malformed():\n    assert port('x') == 8080\n\n\n"
        "def test_missing():\n    assert port(None) == 8080\n"
    ),
    ".agentls.toml": FAST,
}

STORE = {  # `load` takes an encoding and never reads it; making the writer escape its output (`ensure_ascii=True`,
    # a single edit of a line the failing test runs) is green too, and leaves the reader ignoring its encoding
    "store.py": (
        "import json\n\n\n"
        'def _read(path, encoding="utf-8"):\n    with open(path, encoding=encoding) as handle:\n'
        "        return handle.read()\n\n\n"
        'def load(path, encoding="utf-8"):\n    return json.loads(_read(path))\n\n\n'
        'def save(path, data, encoding="utf-8"):\n'
        '    with open(path, "w", encoding=encoding) as handle:\n'
        "        handle.write(json.dumps(data, ensure_ascii=False))\n"
    ),
    "test_store.py": (
        "from store import load, save\n\n\ndef test_roundtrip(tmp_path):\n"
        "    save(tmp_path / 'a.json', {'a': 1})\n    assert load(tmp_path / 'a.json') == {'a': 1}\n\n\n"
        "def test_roundtrip_latin1(tmp_path):\n"
        "    save(tmp_path / 'b.json', {'name': 'Zo\\u00eb'}, encoding='latin-1')\n"
        "    assert load(tmp_path / 'b.json', encoding='latin-1') == {'name': 'Zo\\u00eb'}\n"
    ),
    ".agentls.toml": FAST,
}

SUMMARY = {  # `values` is a generator: `sum(values)` walks it, and the count that follows finds it empty (0)
    "summary.py": (
        "def _numbers(lines):\n    for line in lines:\n        line = line.strip()\n"
        "        if line and not line.startswith('#'):\n            yield float(line)\n\n\n"
        "def summarize(lines):\n    values = _numbers(lines)\n    total = sum(values)\n"
        "    count = sum(1 for _ in values)\n    return total, count\n"
    ),
    "test_summary.py": (
        "from summary import summarize\n\n\ndef test_empty():\n    assert summarize([]) == (0, 0)\n\n\n"
        "def test_count():\n    assert summarize(['1', '# note', '3']) == (4.0, 2)\n"
    ),
    ".agentls.toml": FAST,
}

NAMES = {  # `list.sort()` sorts in place and returns None: the sorted list is lost; binding the None to a name
    # nothing reads (`names = unique.sort(...)`, a single edit of the target) is green too
    "names.py": (
        "def display_order(names):\n    unique = list({n.lower(): n for n in names}.values())\n"
        "    unique = unique.sort(key=str.lower)\n    return unique\n"
    ),
    "test_names.py": (
        "from names import display_order\n\n\ndef test_order():\n"
        "    assert display_order(['bob', 'Ann', 'carl', 'BOB']) == ['Ann', 'BOB', 'carl']\n"
    ),
    ".agentls.toml": FAST,
}
BACKOFF = {  # `delay * factor` computes the next delay and drops it: every delay is the first
    "backoff.py": (
        "def delays(first, factor, cap, count):\n    out = []\n    delay = first\n"
        "    while len(out) < count:\n        out.append(min(delay, cap))\n        delay * factor\n    return out\n"
    ),
    "test_backoff.py": (
        "from backoff import delays\n\n\ndef test_none():\n    assert delays(1.0, 2.0, 5.0, 0) == []\n\n\n"
        "def test_growth():\n    assert delays(1.0, 2.0, 5.0, 4) == [1.0, 2.0, 4.0, 5.0]\n"
    ),
    ".agentls.toml": FAST,
}

SHAPES = {  # the subclass's __init__ never calls its base's: what the base sets is missing
    "shapes.py": (
        "class Shape:\n    def __init__(self, name):\n        self.name = name\n        self.tags = []\n\n"
        "    def tag(self, label):\n        self.tags.append(label)\n        return self\n\n\n"
        "class Circle(Shape):\n    def __init__(self, name, radius):\n        self.radius = radius\n"
    ),
    "test_shapes.py": (
        "from shapes import Circle, Shape\n\n\ndef test_shape():\n    assert Shape('s').tag('x').tags == ['x']\n\n\n"
        "def test_circle():\n    assert Circle('c', 2).tag('a').tag('b').tags == ['a', 'b']\n"
    ),
    ".agentls.toml": FAST,
}
FIRST = {  # a dict's keys indexed, as Python 2 allowed
    "first.py": "def first_key(mapping):\n    if not mapping:\n        return None\n    return mapping.keys()[0]\n",
    "test_first.py": (
        "from first import first_key\n\n\ndef test_empty():\n    assert first_key({}) is None\n\n\n"
        "def test_first():\n    assert first_key({'a': 1, 'b': 2}) == 'a'\n"
    ),
    ".agentls.toml": FAST,
}


@pytest.fixture(autouse=True)
def _search_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTLS_SEARCH", "1")


def _changed_lines(root: Path, run_id: str) -> list[str]:
    diff = (root / ".agentls" / "runs" / run_id / "changes.diff").read_text()
    return [line for line in diff.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def _fixed_by_search(tmp_path: Path, scripted_llm, run_fix, files: dict[str, str], *more: str) -> tuple[Path, dict]:
    project = make_project(tmp_path / "proj", files)
    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", *more)
    assert run.code == 0, run.stderr
    assert run.json["status"] == "fixed" and run.json["usage"]["llm_calls"] == 0, run.json
    assert scripted_llm.requests == []
    summary = json.loads((project / ".agentls" / "runs" / run.json["run_id"] / "summary.json").read_text())
    assert summary["found_by"] == "search"
    search = next(r for r in journal_records(project, run.json["run_id"]) if r["type"] == "search")
    return project, {**search, "run_id": run.json["run_id"]}


def test_a_missing_guard_is_inserted_by_the_search(tmp_path: Path, scripted_llm, run_fix):
    project, search = _fixed_by_search(tmp_path, scripted_llm, run_fix, LEDGER)

    assert _changed_lines(project, search["run_id"]) == [
        "+        if item is None:", "+            continue",
    ], "the author's fix: the guard before the line, nothing else changed"
    assert search["found"]["description"] == "guard `if item is None: continue` added"


def test_a_pop_on_an_empty_stack_is_wrapped_in_try_by_the_search(tmp_path: Path, scripted_llm, run_fix):
    project, search = _fixed_by_search(tmp_path, scripted_llm, run_fix, STACK)

    assert _changed_lines(project, search["run_id"]) == [
        "-    value = stacks[name].pop()",
        "+    try:", "+        value = stacks[name].pop()", "+    except IndexError:", "+        return None",
    ], "`pass` in the handler leaves `value` unbound: the test fails, the next handler passes"
    assert search["found"]["before"] == "    value = stacks[name].pop()"


def test_a_green_candidate_that_leaves_a_variable_unused_ranks_below_the_right_one(
    tmp_path: Path, scripted_llm, run_fix
):
    project, search = _fixed_by_search(tmp_path, scripted_llm, run_fix, BARS, "--apply")

    changed = _changed_lines(project, search["run_id"])
    assert changed[0] == '-        l_bar_user, r_bar_user = fmt.split("{bar}")' and len(changed) == 2
    assert changed[1] != '+        l_bar_user, r_bar = fmt.split("{bar}")', (
        "the single edit tried first is green too, but leaves `l_bar_user` unused: ranked after the templates"
    )
    assert "unused" not in search["found"]["description"]
    namespace: dict = {}
    exec((project / "bars.py").read_text(), namespace)  # the fix is right where the tests do not look
    assert namespace["render"]("##", "[{bar}>") == "[##>" and namespace["render"]("##") == "|##|"


CLAMP = {  # two wrong bounds, one per failing test: no single edit passes both, each fixes one
    "clamp.py": (
        "def clamp(x, lo, hi):\n    if x < lo:\n        return hi\n    if x > hi:\n        return lo\n    return x\n"
    ),
    "test_clamp.py": (
        "from clamp import clamp\n\n\ndef test_low():\n    assert clamp(-1, 0, 5) == 0\n\n\n"
        "def test_high():\n    assert clamp(9, 0, 5) == 5\n\n\ndef test_inside():\n    assert clamp(3, 0, 5) == 3\n"
    ),
    ".agentls.toml": FAST,
}


def test_two_partial_fixes_of_the_search_are_tried_together(tmp_path: Path, scripted_llm, run_fix):
    """Each bound's edit passes one failing test (the quick failing tests all run for every candidate): once
    every single edit is tried, the two together are the fix (driver/partials.py), before the two-edit step."""
    project, search = _fixed_by_search(tmp_path, scripted_llm, run_fix, CLAMP, "--apply")

    found = search["found"]
    assert (found["line"], found["before"], found["after"]) == (
        3, "        return hi\n    if x > hi:\n        return lo",
        "        return lo\n    if x > hi:\n        return hi",
    ), "both bounds, as one change from the first edited line to the last"
    assert found["description"] == "two edits: `hi` -> `lo`; and `lo` -> `hi`"
    assert search["each_failing"] is True and search["tried"] > search["mutants"], "every single edit, then both"
    assert search["combined"]["won"] == "`hi` -> `lo` + `lo` -> `hi`" and search["combined"]["partials"] >= 2
    assert "partial_fixes" not in search, "the two-edit step was not needed"
    assert (project / "clamp.py").read_text() == CLAMP["clamp.py"].replace(
        "return hi", "return @").replace("return lo", "return hi").replace("return @", "return lo")


SCALE = {  # the length's edit passes one failing test; the values need it and the operator's edit, which alone
    # passes neither: no two partial fixes to combine, a second edit searched from the first
    "scale.py": "def scale(xs, k):\n    out = [x - k for x in xs]\n    return out[1:]\n",
    "test_scale.py": (
        "from scale import scale\n\n\ndef test_length():\n    assert len(scale([1, 2], 3)) == 2\n\n\n"
        "def test_values():\n    assert scale([1, 2], 3) == [4, 5]\n"
    ),
    ".agentls.toml": FAST,
}


@pytest.mark.parametrize("scanned", [60, 0], ids=["found by the step's own scan", "found by the driver runs"])
def test_a_second_edit_is_searched_from_a_partial_fix(tmp_path: Path, scripted_llm, run_fix,
                                                      monkeypatch: pytest.MonkeyPatch, scanned: int):
    """With no candidate of its own scan (the first 60, each failing test alone), the step starts from a partial
    fix the search's own driver runs found (its first 150 candidates run every failing test)."""
    monkeypatch.setattr(pairs, "PARTIAL_CANDIDATES", scanned)
    project, search = _fixed_by_search(tmp_path, scripted_llm, run_fix, SCALE, "--apply")

    assert search["found"]["description"].startswith("two edits: ") and "; then " in search["found"]["description"]
    assert search["partial_fixes"] >= 1 and search["combined"]["won"] is None
    fixed = (project / "scale.py").read_text()
    assert fixed.splitlines()[1] == "    out = [x + k for x in xs]", fixed
    namespace: dict = {}
    exec(fixed, namespace)  # the length's edit is the catalogue's (`out[0:]`, the whole list)
    assert namespace["scale"]([5, 6, 7], 1) == [6, 7, 8]


def test_a_guard_is_inserted_where_the_value_is_set(tmp_path: Path, scripted_llm, run_fix):
    project, search = _fixed_by_search(tmp_path, scripted_llm, run_fix, ECHO)

    assert _changed_lines(project, search["run_id"]) == [
        "+        if stream is None:", "+            return",
    ], "the author's place: after the if/else that picks the stream, inside `if stream is None:`"
    assert search["found"]["description"].startswith("guard `if stream is None: return` added after `stream`")
    diff = (project / ".agentls" / "runs" / search["run_id"] / "changes.diff").read_text()
    assert "            stream = STREAMS.get('out')\n+        if stream is None:" in diff, diff


def test_a_parameter_its_function_ignores_is_passed_on_before_any_single_edit(tmp_path: Path, scripted_llm,
                                                                                run_fix):
    project, search = _fixed_by_search(tmp_path, scripted_llm, run_fix, STORE)

    assert _changed_lines(project, search["run_id"]) == [
        "-    return json.loads(_read(path))", "+    return json.loads(_read(path, encoding=encoding))",
    ], "the reader reads its encoding; the writer still writes the text unescaped"
    assert search["found"]["description"] == "`encoding=encoding` passed on (else unread)"


def test_a_shared_mutable_default_is_made_per_call_by_the_search(tmp_path: Path, scripted_llm, run_fix):
    project, search = _fixed_by_search(tmp_path, scripted_llm, run_fix, TAGS)

    assert _changed_lines(project, search["run_id"]) == [
        "-def tag(name, tags=[]):", "+def tag(name, tags=None):", "+    if tags is None:", "+        tags = []",
    ], "the canonical fix, below the docstring"
    assert search["found"]["description"].startswith("mutable default `tags=[]`")
    assert search["tried"] <= 3, "evidence: tried before the single edits"


def test_a_handler_is_widened_to_the_exception_the_failing_test_saw(tmp_path: Path, scripted_llm, run_fix):
    project, search = _fixed_by_search(tmp_path, scripted_llm, run_fix, PORTS)

    assert _changed_lines(project, search["run_id"]) == [
        "-    except ValueError:", "+    except (ValueError, TypeError):",
    ], "the handler catches the TypeError of int(None) too"
    assert search["tried"] <= 3, "evidence: tried before the single edits"


def test_an_iterator_read_twice_is_made_a_list_by_the_search(tmp_path: Path, scripted_llm, run_fix):
    project, search = _fixed_by_search(tmp_path, scripted_llm, run_fix, SUMMARY)

    assert _changed_lines(project, search["run_id"]) == [
        "-    values = _numbers(lines)", "+    values = list(_numbers(lines))",
    ], "the helper is still the one that reads the lines; its values are kept for the second walk"
    assert search["found"]["description"] == ("`values` made a list: the iterator `_numbers(lines)` is read more "
                                              "than once")


def test_an_in_place_sorts_none_is_no_longer_bound_by_the_search(tmp_path: Path, scripted_llm, run_fix):
    project, search = _fixed_by_search(tmp_path, scripted_llm, run_fix, NAMES)

    assert _changed_lines(project, search["run_id"]) == [
        "-    unique = unique.sort(key=str.lower)", "+    unique.sort(key=str.lower)",
    ], "the list sorted in place and returned; not its None bound to the parameter"
    assert search["found"]["description"] == ("`.sort()` changes its object and returns None: its result no "
                                              "longer bound")
    assert search["tried"] <= 3, "evidence: the failing test saw None"


def test_a_statement_without_effect_is_made_an_assignment_by_the_search(tmp_path: Path, scripted_llm, run_fix):
    project, search = _fixed_by_search(tmp_path, scripted_llm, run_fix, BACKOFF)

    assert _changed_lines(project, search["run_id"]) == ["-        delay * factor", "+        delay *= factor"]
    assert search["found"]["description"] == "`delay * factor` has no effect: `delay *= factor`"


def test_a_subclass_init_calls_its_base_s_by_the_search(tmp_path: Path, scripted_llm, run_fix):
    project, search = _fixed_by_search(tmp_path, scripted_llm, run_fix, SHAPES)

    assert _changed_lines(project, search["run_id"]) == ["+        super().__init__(name)"], (
        "the base's parameter passed on by the subclass's own name; `super()` reads no unbound name"
    )
    assert search["tried"] <= 3, "evidence: the failing test read an attribute the class lacks"


def test_a_view_indexed_is_made_a_list_by_the_search(tmp_path: Path, scripted_llm, run_fix):
    project, search = _fixed_by_search(tmp_path, scripted_llm, run_fix, FIRST)

    assert _changed_lines(project, search["run_id"]) == [
        "-    return mapping.keys()[0]", "+    return list(mapping.keys())[0]",
    ]
    assert search["tried"] <= 3, "evidence: 'dict_keys' object is not subscriptable"
