"""templates/iterators.py: an iterator bound to a name and read as only a sequence can be, made a list."""

from __future__ import annotations

import ast

import pytest

from agent_core.search.templates.iterators import reread_edits
from agent_core.search.templates.table import EVIDENCE_TIER, template_mutants

SOURCE = '''\
import itertools
import glob


def _rows(lines):
    for line in lines:
        yield line.split(",")


def twice(lines):
    rows = _rows(lines)
    first = [r[0] for r in rows]
    rest = [r[1:] for r in rows]
    return first, rest


def counted(words):
    upper = map(str.upper, words)
    return len(upper), upper


def indexed(a, b):
    pairs = zip(a, b)
    return pairs[0]


def tested(items):
    kept = (i for i in items if i)
    if not kept:
        return []
    return kept


def paths(root):
    found = root.glob("*.py")
    names = glob.glob("*.txt")
    return sorted(found), sorted(found), names + names


def spread(items):
    chained = itertools.chain(
        items,
        [0],
    )
    return max(chained), min(chained)


def stepped(items):
    it = iter(items)
    head = next(it)
    return head, list(it), list(it)


def once(lines):
    rows = _rows(lines)
    return list(rows)


def rebound(lines):
    rows = _rows(lines)
    rows = list(rows)
    return rows, rows


def nested(lines):
    rows = _rows(lines)
    return lambda: list(rows)
'''
LINES = SOURCE.split("\n")


def _at(start: str) -> int:
    return next(i for i, text in enumerate(LINES, 1) if text.startswith(start))


def _edits(start: str) -> list[str]:
    """The new text of each reread edit of the statement starting at the first line that starts with `start`."""
    tree = ast.parse(SOURCE)
    line = _at(start)
    functions = [f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.lineno < line <= f.end_lineno]
    statement = next(s for s in ast.walk(functions[-1]) if isinstance(s, ast.stmt) and s.lineno == line)
    edits = reread_edits(tree, LINES, functions[-1], statement)
    assert all(e.description.endswith("is read more than once") for e in edits)
    return [e.text for e in edits]


@pytest.mark.parametrize("start, expected", [
    ("    rows = _rows(lines)", "    rows = list(_rows(lines))"),  # a generator function of the module, walked twice
    ("    rest = [r[1:]", "    rows = list(_rows(lines))"),  # the second walk is the suspicious line
    ("    return len(upper)", "    upper = list(map(str.upper, words))"),  # len() of an iterator
    ("    return pairs[0]", "    pairs = list(zip(a, b))"),  # an index
    ("    if not kept:", "    kept = list(i for i in items if i)"),  # a truth test: a generator is always true
    ("    found = root.glob", '    found = list(root.glob("*.py"))'),  # pathlib's glob, not the glob module's
    ("    return max(chained)", "    chained = list(itertools.chain(\n        items,\n        [0],\n    ))"),
])
def test_an_iterator_read_as_a_sequence_is_made_a_list_at_its_binding(start, expected):
    assert _edits(start) == [expected]


@pytest.mark.parametrize("start", [
    "    head = next(it)",  # walked on purpose, an item at a time
    "    return list(rows)",  # read once
    "    rows = list(rows)",  # bound twice: the second binding is the list already
    "    return lambda",  # read once, inside a lambda
    "    names = glob.glob",  # the glob module's glob makes a list
])
def test_an_iterator_read_once_or_on_purpose_is_left_alone(start):
    assert _edits(start) == []


def test_the_reread_is_evidence_tried_before_the_single_edits():
    line = _at("    first = [r[0]")
    found = [m for m in template_mutants("m.py", SOURCE, line) if "is read more than once" in m.description]
    assert [(m.tier, m.line) for m in found] == [(EVIDENCE_TIER, _at("    rows = _rows(lines)"))]
    assert "    rows = list(_rows(lines))\n    first = [r[0] for r in rows]\n" in found[0].applied(SOURCE)


WALKS = '''\
def prune(sessions, now):
    dropped = 0
    for session in sessions:
        if session["expires"] < now:
            sessions.remove(session)
            dropped += 1
    return dropped


def forget(cache, stale):
    for key, value in cache.items():
        if value in stale:
            del cache[key]


def visit(queue):
    for node in queue:
        queue.append(node.child)


def count(items, other):
    for item in items:
        other.remove(item)
'''
WALK_LINES = WALKS.split("\n")


@pytest.mark.parametrize("start, expected", [
    ("            sessions.remove(session)", ["    for session in list(sessions):"]),  # items skipped
    ("    for session in sessions:", ["    for session in list(sessions):"]),
    ("            del cache[key]", ["    for key, value in list(cache.items()):"]),  # changed size during iteration
    ("        queue.append(node.child)", []),  # a worklist grows while it is walked, on purpose
    ("        other.remove(item)", []),  # another list
])
def test_a_collection_changed_while_a_for_walks_it_is_walked_as_a_copy(start, expected):
    line = next(i for i, text in enumerate(WALK_LINES, 1) if text.startswith(start))
    found = [m for m in template_mutants("m.py", WALKS, line) if m.description.startswith("the loop walks a copy")]
    assert [m.text for m in found] == expected
    assert all(m.tier == EVIDENCE_TIER for m in found)
