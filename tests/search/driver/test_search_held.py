"""A fill that is a fix and drops code (or exits early) is held while the model's fills go on (driver/held.py).

The first end-to-end case runs `agentls fix` on a ledger whose `balance` forgets its `return`: the scripted endpoint
answers every fill with `return total`, so the line's own hole makes `total = round(total, 2)` into `return total`
(green, and the rounding gone) before the slot after the line adds the `return` and keeps it. The second holds a
fill that returns the first match from inside a loop (green: the tests look for one item a tag) until a fill at
another line stores the missing tags as a list. Real sandbox, real server process, the real `openai` client against
the scripted endpoint. The unit cases drive `Held` on a real shadow.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from agent_core.models import TestReport as Report
from agent_core.search.candidate import Mutant
from agent_core.search.driver import held as held_module
from agent_core.search.driver.held import Held, held_sentence
from agent_core.search.infill import INFILL_ACCOUNT, INFILL_TIER
from agent_core.workspace.shadow import ShadowWorkspace
from engine_support import journal_records, make_project

BALANCE = (
    "class Ledger:\n"
    "    def __init__(self, entries=()):\n"
    "        self.entries = list(entries)\n"
    "\n"
    "    def balance(self):\n"
    "        total = 0\n"
    "        for amount in self.entries:\n"
    "            total += amount\n"
    "        total = round(total, 2)\n"
    "\n"
    "    def count(self):\n"
    "        return len(self.entries)\n"
)
LEDGER = {
    "ledger.py": BALANCE,
    "test_ledger.py": (
        "from ledger import Ledger\n\n\ndef test_balance():\n    assert Ledger([1.5, 2.25]).balance() == 3.75\n\n\n"
        "def test_count():\n    assert Ledger([1, 2]).count() == 2\n"
    ),
    ".agentls.toml": "[search]\nmutant_timeout_s = 2\nbudget_s = 400\n",
}
DROPPER = Mutant("ledger.py", 9, "        return total", "the line made a return", INFILL_TIER)
KEEPER = Mutant("ledger.py", 10, "        total = round(total, 2)\n        return total", "a return after it",
                INFILL_TIER, end=9)


@pytest.mark.e2e  # a real sandbox
def test_a_fill_that_drops_the_rounding_gives_way_to_one_that_keeps_it(tmp_path: Path, scripted_llm, run_fix,
                                                                        monkeypatch: pytest.MonkeyPatch):
    for key, value in {"AGENTLS_SEARCH": "1", "AGENTLS_SEARCH__INFILL": "1", "AGENTLS_SEARCH__INFILL_SAMPLES": "2",
                       "AGENTLS_FIM": "tokens"}.items():
        monkeypatch.setenv(key, value)
    project = make_project(tmp_path / "proj", LEDGER)
    scripted_llm.default(INFILL_ACCOUNT, "        return total\n")

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")

    assert run.code == 0 and run.json["status"] == "fixed", run.json
    lines = (project / "ledger.py").read_text().splitlines()
    assert lines[8:10] == ["        total = round(total, 2)", "        return total"], "the rounding kept"
    search = next(r for r in journal_records(project, run.json["run_id"]) if r["type"] == "search")
    held = search["held"]
    assert held["kept"] is False and held["line"] == 9 and held["drops"] == ["`round`", "a use of `total`"], held
    assert search["infill"]["won"] and "slot after line 9" in search["infill"]["won"], search["infill"]
    assert (f"A first fix that passed, {held['description']}, drops `round`, a use of `total` from the function; "
            "this one does not.") in run.json["explanation"]


def _shadow(tmp_path: Path) -> ShadowWorkspace:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "ledger.py").write_text(BALANCE)
    return ShadowWorkspace(root)


def _verified(shadow: ShadowWorkspace, mutant: Mutant) -> bool:
    """`mutant` written into the shadow as the search's verification leaves a fix; whether the shadow knew the file."""
    known = mutant.path in shadow.originals
    shadow.remember(mutant.path)
    (shadow.root / mutant.path).write_text(mutant.applied(BALANCE))
    return known


def test_a_dropping_fix_is_held_and_the_shadow_put_back_then_kept_when_no_other_comes(tmp_path: Path):
    report = Report(passed=2)
    with _shadow(tmp_path) as shadow:
        held = Held(SimpleNamespace(shadow=shadow), hold_s=0.2)
        assert held.end(100.0) == 100.0 and not held.due(), "nothing held: no end of its own"

        assert held.offer(DROPPER, report, BALANCE, _verified(shadow, DROPPER))
        assert (shadow.root / "ledger.py").read_text() == BALANCE and "ledger.py" not in shadow.originals
        assert held.end(time.monotonic() + 100) <= time.monotonic() + 0.2 and not held.due()
        other = Mutant("ledger.py", 9, "        return", "a bare return", INFILL_TIER)
        assert held.offer(other, report, BALANCE, _verified(shadow, other)), "another dropping fix is put back too"
        assert (shadow.root / "ledger.py").read_text() == BALANCE and held.figures["also_dropping"] == 1
        time.sleep(0.25)
        assert held.due()

        assert held.settle(None) == (DROPPER, report), "the first one held"
        assert (shadow.root / "ledger.py").read_text() == DROPPER.applied(BALANCE) and "ledger.py" in shadow.originals
    assert held.figures["kept"] is True and held.figures["drops"] == ["`round`", "a use of `total`"]
    assert held_sentence(held.figures) == ("This fix drops `round`, a use of `total` from the function: the search "
                                           "went on for 0 s and found no fix that does not.")


def test_a_fix_that_keeps_everything_is_not_held_and_replaces_the_held_one(tmp_path: Path):
    report = Report(passed=2)
    with _shadow(tmp_path) as shadow:
        held = Held(SimpleNamespace(shadow=shadow))
        assert held.hold_s == held_module.HOLD_S
        own = dataclasses.replace(DROPPER, tier=0)
        assert not held.offer(own, report, BALANCE, _verified(shadow, own)), "the search's own fix is not held"
        assert (shadow.root / "ledger.py").read_text() == own.applied(BALANCE) and not held.figures
        (shadow.root / "ledger.py").write_text(BALANCE)
        assert held.offer(DROPPER, report, BALANCE, _verified(shadow, DROPPER))
        assert not held.offer(KEEPER, report, BALANCE, _verified(shadow, KEEPER)), "it drops nothing"
        assert (shadow.root / "ledger.py").read_text() == KEEPER.applied(BALANCE), "left in the shadow: the fix"
        assert held.settle((KEEPER, report)) == (KEEPER, report)
        assert (shadow.root / "ledger.py").read_text() == KEEPER.applied(BALANCE)
    assert held.figures["kept"] is False
    assert held_sentence(held.figures).startswith("A first fix that passed, the line made a return, drops `round`")
    assert held_sentence(None) == held_sentence({"drops": ["`x`"]}) == "", "nothing held, or not settled yet"
    assert Held(SimpleNamespace(shadow=None)).settle(None) is None


def test_a_fix_that_hides_a_function_of_the_module_behind_a_local_name_is_held(tmp_path: Path):
    source = BALANCE + "\n\ndef rounded(x):\n    return x\n"
    around = Mutant("ledger.py", 6, "        rounded = float\n        total = 0", "a local `rounded`", INFILL_TIER,
                    end=6)
    with _shadow(tmp_path) as shadow:
        (shadow.root / "ledger.py").write_text(source)
        held = Held(SimpleNamespace(shadow=shadow))
        assert held.offer(around, Report(passed=2), source, True)
        assert held.figures["shadows"] == ["rounded"] and held.figures["drops"] == []
        assert (shadow.root / "ledger.py").read_text() == source
        held.settle(None)
    assert held_sentence(held.figures) == ("This fix hides the module's `rounded` behind a local name: the search "
                                           "went on for 60 s and found no fix that does not.")


def test_a_fix_that_leaves_a_helper_of_the_module_unused_is_held(tmp_path: Path):
    source = BALANCE.replace("        total = 0\n        for amount in self.entries:\n            total += amount\n",
                             "        total = _sum(self.entries)\n") + "\n\ndef _sum(values):\n    return sum(values)\n"
    around = Mutant("ledger.py", 6, "        total = sum(self.entries)", "the sum written out", INFILL_TIER)
    with _shadow(tmp_path) as shadow:
        (shadow.root / "ledger.py").write_text(source)
        held = Held(SimpleNamespace(shadow=shadow))
        assert held.offer(around, Report(passed=2), source, True)
        assert held.figures["unused"] == ["_sum"] and held.figures["drops"] == held.figures["exits"] == []
        assert (shadow.root / "ledger.py").read_text() == source
        held.settle(None)
    assert held_sentence(held.figures) == ("This fix leaves the module's `_sum` unused: the search went on for 60 s "
                                           "and found no fix that does not.")


CATALOG = {  # an item added without tags stores None, and `by_tag` crashes on it
    "catalog.py": (
        "class Catalog:\n"
        "    def __init__(self):\n"
        "        self.items = []\n"
        "\n"
        "    def add(self, title, tags=None):\n"
        '        self.items.append({"title": title, "tags": tags})\n'
        "\n"
        "    def by_tag(self, tag):\n"
        "        out = []\n"
        "        for item in self.items:\n"
        '            for t in item.get("tags"):\n'
        "                if t == tag:\n"
        '                    out.append(item["title"])\n'
        "        return out\n"
    ),
    "test_catalog.py": (
        "from catalog import Catalog\n\n\ndef make():\n    c = Catalog()\n    c.add('a', ['py', 'web'])\n"
        "    c.add('b', ['rust'])\n    return c\n\n\ndef test_by_tag():\n    assert make().by_tag('py') == ['a']\n\n\n"
        "def test_untagged_item_is_skipped():\n    c = make()\n    c.add('c')\n    assert c.by_tag('rust') == ['b']\n"
    ),
    ".agentls.toml": "[search]\nmutant_timeout_s = 2\nbudget_s = 400\n",
}
STORED = '        self.items.append({"title": title, "tags": tags or []})'
FIRST_MATCH = 'for item in self.items:\n    if tag in (item.get("tags") or ()):\n        return [item["title"]]\n'


def _catalog_fill(body: dict) -> str:
    """The scripted model: in the slot after `out = []` (asked before `add`'s line), a loop that returns the first
    match (green: the tests look for one item a tag each); at `add`'s line, the tags stored as a list; elsewhere
    `pass` (a fill that changes nothing)."""
    prompt = body.get("prompt", "")
    before, after = prompt.split("<|fim_prefix|>")[-1].split("<|fim_middle|>")[0].split("<|fim_suffix|>")
    if before.endswith("out = []\n") and after.lstrip().startswith("for item in self.items:"):
        return FIRST_MATCH
    if "def add(" in before and "def by_tag(" not in before:
        return STORED.strip() + "\n"
    return "pass\n"


@pytest.mark.e2e  # a real sandbox
def test_a_fill_that_returns_inside_the_loop_gives_way_to_one_that_keeps_the_loop_going(
        tmp_path: Path, scripted_llm, run_fix, monkeypatch: pytest.MonkeyPatch):
    for key, value in {"AGENTLS_SEARCH": "1", "AGENTLS_SEARCH__INFILL": "1", "AGENTLS_SEARCH__INFILL_SAMPLES": "2",
                       "AGENTLS_FIM": "tokens"}.items():
        monkeypatch.setenv(key, value)
    project = make_project(tmp_path / "proj", CATALOG)
    scripted_llm.default(INFILL_ACCOUNT, _catalog_fill)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")

    assert run.code == 0 and run.json["status"] == "fixed", run.json
    original = CATALOG["catalog.py"]
    assert (project / "catalog.py").read_text() == original.replace(original.splitlines()[5], STORED), \
        "the tags stored as a list, `by_tag` as it was"
    search = next(r for r in journal_records(project, run.json["run_id"]) if r["type"] == "search")
    held = search["held"]
    assert held["kept"] is False and held["exits"] == ["a `return` inside a loop"] and held["drops"] == [], held
    assert (f"A first fix that passed, {held['description']}, adds a `return` inside a loop to the function; "
            "this one does not.") in run.json["explanation"]
