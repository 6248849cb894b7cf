"""Right, not just green: which candidates carry a concern, and the order the search tries candidates in."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core.search.candidate import Mutant
from agent_core.search.catalogue.line_mutants import line_mutants
from agent_core.search.driver.describe import describe_change
from agent_core.search.driver.ranking import (
    TEMPLATES_AFTER,
    TEMPLATES_AFTER_CRASH,
    arrange,
    concerns,
    gate_lines,
    gate_swaps,
    templates_for,
    with_concerns,
)
from agent_core.search.evidence.spectrum import Suspect
from agent_core.search.templates.table import template_mutants

SOURCE = '''\
def render(bar, fmt=None):
    l_bar, r_bar = "|", "|"
    if fmt:
        l_bar_user, r_bar_user = fmt.split("{bar}")
        return l_bar + bar + r_bar
    return l_bar + bar + r_bar


def scale(xs, factor):
    total = 0
    for x in xs:
        total += x * factor
    return total
'''


def _mutant(line: int, text: str) -> Mutant:
    return Mutant("m.py", line, text, "test edit")


@pytest.mark.parametrize("line, text, expected", [
    # the real-history case: one name of a pair changed, its twin left unused
    (4, '        l_bar_user, r_bar = fmt.split("{bar}")', ("leaves `l_bar_user` unused",)),
    (5, "        return l_bar + bar + r_bar_user", ("leaves `l_bar_user` unused",)),
    # a parameter's only use dropped: the function ignores an input
    (12, "        total += x * x", ("drops the only use of `factor`",)),
    # a variable that was used no longer is
    (12, "        total += factor", ("leaves `x` unused",)),
    # a statement emptied: all it used is left
    (12, "        pass", ("leaves `x` unused", "drops the only use of `factor`")),
    # clean: the pair changed together, a boundary, a guard
    (5, "        return l_bar_user + bar + r_bar_user", ()),
    (4, '        l_bar, r_bar = fmt.split("{bar}")', ()),
    (12, "        total -= x * factor", ()),
    (12, "        if x is None:\n            continue\n        total += x * factor", ()),
])
def test_concerns_name_what_a_green_candidate_leaves_wrong(line, text, expected):
    assert concerns(SOURCE, _mutant(line, text)) == expected


def test_a_deleted_statement_is_a_concern():
    source = "def f(items):\n    items.sort()\n    items.reverse()\n    return items\n"
    assert concerns(source, Mutant("m.py", 2, "    items.sort()\n    return items", "x", end=4)) == (
        "deletes a statement",)


def test_a_changed_assert_of_the_code_is_a_concern():
    source = "def f(args, kwargs):\n    assert len(args) == 1 and not kwargs\n    return args[0]\n"
    relaxed = Mutant("m.py", 2, "    assert len(args) == 1 or not kwargs", "`and` -> `or`")
    assert concerns(source, relaxed) == ("changes an `assert` of the code",)


ORDER = '''\
def order(names):
    unique = list(names)
    unique = unique.sort(key=str.lower)
    return unique


def walk(items, keep):
    prev = keep
    out = []
    for item in items:
        out.append((prev, item))
        prev = item
    return out
'''


@pytest.mark.parametrize("line, text, expected", [
    # the result bound to a parameter nothing reads after: the binding dropped in disguise
    (3, "    names = unique.sort(key=str.lower)", ("binds `names`, which nothing reads after",)),
    (3, "    unique.sort(key=str.lower)", ()),  # the binding dropped in the open
    (3, "    unique = sorted(unique, key=str.lower)", ()),
    (13, "        prev = item.parent", ()),  # read on the loop's next turn, above it
    (13, "        keep = item", ("binds `keep`, which nothing reads after",)),  # read above the loop only
    (13, "        out = item", ()),  # read on the loop's next turn and after it
])
def test_a_binding_nothing_reads_after_is_a_concern(line, text, expected):
    assert concerns(ORDER, _mutant(line, text)) == expected


def test_the_concern_is_said_in_the_description():
    single = Mutant("m.py", 4, '        l_bar_user, r_bar = fmt.split("{bar}")', "`r_bar_user` -> `r_bar`")
    flagged = with_concerns(single, SOURCE)
    assert flagged.concerns == ("leaves `l_bar_user` unused",)
    assert flagged.description == "`r_bar_user` -> `r_bar`; leaves `l_bar_user` unused"


def test_templates_come_after_the_first_single_edits_and_concerns_after_the_clean_ones():
    singles = line_mutants("m.py", SOURCE, 4) + line_mutants("m.py", SOURCE, 5)
    templates = template_mutants("m.py", SOURCE, 5)
    order = arrange(singles, templates, {"m.py": SOURCE}, limit=1000)

    texts = [m.text.strip() for m in order]
    right = texts.index("return l_bar_user + bar + r_bar_user")
    wrong = texts.index('l_bar_user, r_bar = fmt.split("{bar}")')
    assert right < wrong, "the pair changed together is tried before the single edit that leaves a twin unused"
    assert all(not m.concerns for m in order[:right]) and order[wrong].concerns
    assert len(order) == len(singles) + len(templates)
    first_template = next(i for i, m in enumerate(order) if m in templates)
    clean_singles = [m for m in order if m in singles and not m.concerns]
    assert first_template == min(len(clean_singles), TEMPLATES_AFTER), "every clean single edit first"


def test_the_limit_holds_with_templates():
    singles = line_mutants("m.py", SOURCE, 5)
    assert len(arrange(singles, template_mutants("m.py", SOURCE, 5), {"m.py": SOURCE}, limit=10)) == 10


def test_the_editor_title_of_a_fix_says_what_it_leaves_unused():
    wrong = describe_change(SOURCE, 4, '        l_bar_user, r_bar = fmt.split("{bar}")', "fallback")
    right = describe_change(SOURCE, 5, "        return l_bar_user + bar + r_bar_user", "fallback")
    assert wrong.endswith("; leaves `l_bar_user` unused")
    assert right == "`l_bar + bar + r_bar` -> `l_bar_user + bar + r_bar_user`"


def test_templates_come_sooner_when_the_failing_tests_crash():
    singles = [Mutant("m.py", 12, f"        total += x * factor + {n}", "x", tier=1) for n in range(400)]
    templates = template_mutants("m.py", SOURCE, 5)
    calm = arrange(singles, templates, {"m.py": SOURCE}, limit=1000)
    crash = arrange(singles, templates, {"m.py": SOURCE}, limit=1000, crashed=True)
    assert calm.index(templates[0]) == TEMPLATES_AFTER and crash.index(templates[0]) == TEMPLATES_AFTER_CRASH


CONTAINER = '''\
class Container:
    def append(self, key, item):
        if item.name != key:
            item.rename()
        if self.parsed or item.indent:
            item.indent = ""
        if item.kids:
            item.kids.append(key)
            self.append(key, item.kids)
        return self


class Item:
    def rename(self):
        self.shown = None
'''


def test_an_if_that_gates_a_call_to_a_suspect_gets_its_condition_swapped():
    """tomlkit 0.11.5: the failing test runs `rename` (a suspect) under `if item.name != key:`, where the author
    meant another test the method makes; that line is not among the most suspicious ones of `append`."""
    suspects = [Suspect("m.py", "Container.append", 2, 10, [5, 6, 10], 0.5),
                Suspect("m.py", "Item.rename", 14, 15, [15], 0.4)]
    sources = {"m.py": CONTAINER}
    assert gate_lines(sources, suspects) == [("m.py", 3)], "not the list's `append`, not the method's own recursion"
    swaps = [m.applied(CONTAINER).split("\n")[2] for m in gate_swaps(sources, gate_lines(sources, suspects))]
    assert "        if not self.parsed:" in swaps and "        if item.kids:" in swaps, swaps
    arranged = templates_for(Path("."), sources, [(0.5, "m.py", 5)], None, gates=gate_lines(sources, suspects))
    assert any(m.line == 3 and "`item.name != key` -> `not self.parsed`" in m.description for m in arranged)


HELP = '''\
def format_help(help, deprecated, out):
    text = help if help is not None else ""
    if deprecated:
        text = "(Deprecated) " + text
    if text:
        text = text.partition("\\f")[0]
        out.append("")
        out.append(text)
    return out
'''


def test_a_hoist_is_tried_for_a_line_beyond_the_ones_that_get_every_template():
    """click 8.1.4: the help text's lines ranked below the lines of the formatter the failing test ends in."""
    lines = HELP.split("\n")
    cut = next(n for n, text in enumerate(lines, 1) if "partition" in text)
    ranked = [(1.0, "m.py", n) for n in (2, 3, 4, 7, 8, 9)] + [(0.4, "m.py", cut)]
    found = [m for m in templates_for(Path("."), {"m.py": HELP}, ranked, None) if m.line <= cut <= m.last]
    hoisted = [m for m in found if "out of the `if`" in m.description]
    assert len(hoisted) == 1 and hoisted[0].applied(HELP).split("\n")[4:6] == [
        '    text = text.partition("\\f")[0]', "    if text:"]
    without = templates_for(Path("."), {"m.py": HELP}, ranked[:-1], None)
    assert not [m for m in without if "out of the `if`" in m.description], "it comes from the line further down"


COPIED = """def bounds(values, low, high):
    out = []
    for value in values:
        if value < low:
            out.append(low)
    for value in reversed(values):
        if value < low:
            out.append(high)
    return out
"""


def test_a_mutant_of_a_copied_line_is_followed_once_by_the_same_edit_at_its_copies(tmp_path: Path):
    from agent_core.search.driver.single_edit import candidates
    (tmp_path / "b.py").write_text(COPIED)
    suspect = Suspect("b.py", "bounds", 1, 9, [4, 7], 1.0)
    order = candidates(tmp_path, [suspect], 1000)

    single = next(i for i, m in enumerate(order) if m.line == m.last == 4 and m.text.strip() == "if value <= low:")
    both = order[single + 1]
    assert (both.line, both.last) == (4, 7) and "twin line 7" in both.description, "right after its single edit"
    lines = both.applied(COPIED).split("\n")
    assert lines[3] == lines[6] == "        if value <= low:"
    twins = [m for m in order if m.last > m.line and "twin" in m.description]
    assert len({(m.line, m.text) for m in twins}) == len(twins), "the same edit made from line 7 is not made again"
    assert not any(m.line == m.last == 2 and "twin" in m.description for m in order), "`out = []` has no copy"
