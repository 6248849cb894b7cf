"""A statement moved past its neighbours (templates/moves.py): the candidates, a move across an `assert` that is no
concern, and the search fixing a project with one (`agentls fix`, a real sandbox, the scripted endpoint with no
answer queued).

The case behind the template (bench/history_corpus):

click 8.1.4 moved `if self.command_class and kwargs.get("cls") is None: kwargs["cls"] = ...` below the
block that takes the decorated function out of `args` (two statements further down): set before it, the
class went to the wrong call; and it tested a help text for emptiness, then cut it at its form feed, which
could empty it (the hoist).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from agent_core.search.candidate import Edit, Mutant
from agent_core.search.driver.ranking import concerns
from agent_core.search.templates.moves import hoist_edits, move_edits
from agent_core.search.templates.place import Place
from engine_support import journal_records, make_project

GROUP = {  # click 8.1.4's fix, in small: the class was set before the decorated function left `args`
    "group.py": (
        "class Group:\n"
        "    def __init__(self, command_class=None):\n"
        "        self.command_class = command_class\n"
        "        self.commands = []\n\n"
        "    def command(self, *args, **kwargs):\n"
        "        \"\"\"Register a command; usable as `@group.command` or `@group.command(name=...)`.\"\"\"\n"
        "        if self.command_class and kwargs.get('cls') is None:\n"
        "            kwargs['cls'] = self.command_class\n\n"
        "        func = None\n\n"
        "        if args and callable(args[0]):\n"
        "            assert len(args) == 1 and not kwargs, 'Use command(**kwargs)(callable)'\n"
        "            (func,) = args\n"
        "            args = ()\n\n"
        "        def decorator(f):\n"
        "            cls = kwargs.pop('cls', None) or (lambda g, **kw: (g, kw))\n"
        "            command = cls(f, **kwargs)\n"
        "            self.commands.append(command)\n"
        "            return command\n\n"
        "        if func is not None:\n"
        "            return decorator(func)\n"
        "        return decorator\n"
    ),
    "test_group.py": (
        "from group import Group\n\n\n"
        "class Custom:\n"
        "    def __init__(self, f, **kwargs):\n"
        "        self.f, self.kwargs = f, kwargs\n\n\n"
        "def run():\n    return 1\n\n\n"
        "def test_with_parens_and_a_class():\n"
        "    group = Group(Custom)\n"
        "    made = group.command(name='run')(run)\n"
        "    assert isinstance(made, Custom) and made.kwargs == {'name': 'run'}\n\n\n"
        "def test_without_parens():\n"
        "    assert Group().command(run) == (run, {})\n\n\n"
        "def test_without_parens_and_a_class():\n"
        "    made = Group(Custom).command(run)\n"
        "    assert isinstance(made, Custom) and made.f is run\n"
    ),
    ".agentls.toml": "[search]\nmutant_timeout_s = 2\n",
}


def _moves(source: str, needle: str) -> list[Edit]:
    lines = source.split("\n")
    line = next(i for i, text in enumerate(lines, 1) if needle in text)
    place = Place(ast.parse(source), lines, line)
    return move_edits(lines, place.body, place.statement)


def test_a_statement_moves_down_and_up_but_never_past_a_return_or_above_a_docstring():
    source = ('def f(a):\n'
              '    """Doc."""\n'
              '    b = a + 1\n'
              '    c = b * 2  # why\n\n'
              '    if c:\n'
              '        c -= 1\n'
              '    return c\n')
    found = {e.description: (e.first, e.text, e.last) for e in _moves(source, "c = b * 2")}
    assert found["statement moved below the next 1"] == (
        4, "    if c:\n        c -= 1\n    c = b * 2  # why\n", 7), "its blank line and comment go with it"
    assert found["statement moved above the previous 1"] == (3, "    c = b * 2  # why\n\n    b = a + 1", 5)
    assert set(found) == {"statement moved below the next 1", "statement moved above the previous 1"}
    assert _moves(source, "return c") == [], "a return is not moved"


HELP = ('def help_text(help, deprecated):\n'
        '    text = help if help is not None else ""\n'
        '    if deprecated:\n'
        '        text = "(Deprecated) " + text\n'
        '    if text:\n'
        '        # cut at the form feed\n'
        '        text = text.partition("\\f")[0]\n'
        '        return [text]\n'
        '    return []\n')


def test_an_assignment_that_opens_an_if_testing_its_name_moves_out_before_the_test():
    """click 8.1.4: a help text tested for emptiness, then cut at its form feed, which may empty it."""
    lines = HELP.split("\n")
    line = next(i for i, text in enumerate(lines, 1) if "partition" in text)
    tree = ast.parse(HELP)
    place = Place(tree, lines, line)
    [edit] = hoist_edits(tree, lines, place.statement)
    first, new, last = edit.first, edit.text, edit.last
    hoisted = "\n".join([*lines[: first - 1], new, *lines[last:]])
    cut = '        text = text.partition("\\f")[0]\n'
    assert hoisted == HELP.replace(f'    if text:\n        # cut at the form feed\n{cut}',
                                   f'{cut[4:]}    if text:\n        # cut at the form feed\n')
    namespace: dict = {}
    exec(hoisted, namespace)
    assert namespace["help_text"]("\f", False) == [] and namespace["help_text"]("a\fb", False) == ["a"]
    other = next(i for i, text in enumerate(lines, 1) if "(Deprecated)" in text)
    assert hoist_edits(tree, lines, Place(tree, lines, other).statement) == [], "alone in its `if`: not moved"
    ret = next(i for i, text in enumerate(lines, 1) if "return [text]" in text)
    assert hoist_edits(tree, lines, Place(tree, lines, ret).statement) == [], "not the `if`'s first statement"


def test_a_move_across_an_assert_keeps_it_and_is_no_concern_but_changing_the_assert_is():
    source = GROUP["group.py"]
    lines = source.split("\n")
    edit = next(m for m in _moves(source, "if self.command_class") if m.description.endswith("next 2"))
    first, new, last = edit.first, edit.text, edit.last
    assert concerns(source, Mutant("group.py", first, new, "move", 20, last)) == ()
    line = next(i for i, text in enumerate(lines, 1) if "assert len(args)" in text)
    relaxed = lines[line - 1].replace(" and not kwargs", " or not kwargs")
    assert concerns(source, Mutant("group.py", line, relaxed, "relaxed")) == ("changes an `assert` of the code",)
    guarded = f"            if self.command_class:\n    {lines[line - 1]}"
    assert concerns(source, Mutant("group.py", line, guarded, "under an if")) == (
        "changes an `assert` of the code",), "run less often: as much a change as an edit of its text"


@pytest.mark.e2e
def test_the_search_moves_the_statement_where_the_author_did(tmp_path: Path, scripted_llm, run_fix,
                                                             monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("AGENTLS_SEARCH", "1")
    project = make_project(tmp_path / "proj", GROUP)
    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")
    assert run.code == 0, run.stderr
    assert run.json["status"] == "fixed" and run.json["usage"]["llm_calls"] == 0, run.json
    source = GROUP["group.py"]
    moved = ("        if self.command_class and kwargs.get('cls') is None:\n"
             "            kwargs['cls'] = self.command_class\n\n")
    authors = source.replace(moved, "").replace("            args = ()\n\n", "            args = ()\n\n" + moved)
    assert (project / "group.py").read_text() == authors
    search = next(r for r in journal_records(project, run.json["run_id"]) if r["type"] == "search")
    assert search["found"]["description"] == "statement moved below the next 2"
