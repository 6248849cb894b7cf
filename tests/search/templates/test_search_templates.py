"""Templates beyond one token: which multi-token candidates a line gets (source in, candidate sources out)."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import pytest

from agent_core import models
from agent_core.search.evidence.inputs import NO_INPUTS, FailingInputs, crashed, failing_inputs, seen_exceptions
from agent_core.search.templates.arguments import unread_parameters
from agent_core.search.templates.table import EVIDENCE_TIER, MAX_PER_LINE, TEMPLATE_TIER, template_mutants

SOURCE = '''\
import os


def total(items):
    total = 0
    for item in items:
        total += item.value
    return total


def take(stacks, name):
    value = stacks[name].pop()
    return value


def parse(texts):
    out = []
    for text in texts:
        out.append(int(text))
    return out


def render(bar, fmt=None):
    l_bar, r_bar = "|", "|"
    if fmt:
        l_bar_user, r_bar_user = fmt.split("{bar}")
        return l_bar + bar + r_bar
    return l_bar + bar + r_bar


def load(path, encoding="utf-8", strict=False):
    return open(path, encoding=encoding).read()


def read_all(paths, encoding):
    texts = [load(p) for p in paths]
    return ":".join(texts)


def save(output, parts):
    def write(name):
        return os.path.join(output_path, name)
    return [write(p) for p in parts]


def register(cls, name=None):
    if name is None:
        name = cls.name
    REGISTRY[name] = cls


def fit(items, width, pad):
    return items.ljust(len(width), pad)


def fetch_parsed(url, timeout=10, _cache=None):
    return decode(fetch(url), strict=True)


def fetch(url, timeout=None):
    return url


def fetched(url, retries=3):
    return fetch(url)


def describe(node):
    if node.children:
        node.visit()
    label = node.label
    node.count += 1
    return label
'''
LINES = SOURCE.split("\n")


def _line(start: str) -> int:
    return next(n for n, text in enumerate(LINES, 1) if text.strip().startswith(start))


def _after(line: int, exceptions: list[str] | None = None) -> list[str]:
    """Each candidate of `line` as the function it leaves (the lines from `line` - 1 on, until the next def)."""
    out = []
    for mutant in template_mutants("m.py", SOURCE, line, exceptions):
        lines = mutant.applied(SOURCE).split("\n")
        end = next((i for i in range(line, len(lines)) if lines[i].startswith("def ")), len(lines))
        out.append("\n".join(x.strip() for x in lines[line - 1 : end] if x.strip()))
    return out


@pytest.mark.parametrize("start, exceptions, expected", [
    # a guard before the line: a None in a list of rows skipped (`continue` in a loop)
    ("total += item.value", None, "if item is None:\ncontinue\ntotal += item.value\nreturn total"),
    ("total += item.value", None, "if not item:\ncontinue\ntotal += item.value\nreturn total"),
    # ... and in a function, its own empty value returned
    ("value = stacks[name].pop()", None, "if not stacks:\nreturn None\nvalue = stacks[name].pop()\nreturn value"),
    # the exception the failing test saw, caught around the line that raises it
    ("value = stacks[name].pop()", ["IndexError"],
     "try:\nvalue = stacks[name].pop()\nexcept IndexError:\nreturn None\nreturn value"),
    ("value = stacks[name].pop()", ["IndexError"],
     "try:\nvalue = stacks[name].pop()\nexcept IndexError:\nvalue = None\nreturn value"),
    ("out.append(int(text))", ["ValueError"],
     "try:\nout.append(int(text))\nexcept ValueError:\ncontinue\nreturn out"),
    # twin names changed together
    ("return l_bar + bar + r_bar", None,
     "return l_bar_user + bar + r_bar_user\nreturn l_bar + bar + r_bar"),
    ('l_bar_user, r_bar_user = fmt.split("{bar}")', None,
     'l_bar, r_bar = fmt.split("{bar}")\nreturn l_bar + bar + r_bar\nreturn l_bar + bar + r_bar'),
    # a keyword argument the callee (defined in the module) accepts, passed on from the scope; one dropped
    ("texts = [load(p) for p in paths]", None,
     'texts = [load(p, encoding=encoding) for p in paths]\nreturn ":".join(texts)'),
    ("return open(path, encoding=encoding).read()", None, "return open(path).read()"),
    # a parameter the function never reads passed on: to a callee that takes it, or one whose definition is unknown
    ("return decode(fetch(url), strict=True)", None, "return decode(fetch(url, timeout=timeout), strict=True)"),
    ("return decode(fetch(url), strict=True)", None, "return decode(fetch(url), strict=True, timeout=timeout)"),
    # a name of the enclosing function in a nested one
    ("return os.path.join(output_path, name)", None,
     "return os.path.join(output, name)\nreturn [write(p) for p in parts]"),
    # a separator that must follow the platform
    ('return ":".join(texts)', None, "return os.pathsep.join(texts)"),
    # a function that returns nothing hands back what it was given (a decorator that registers)
    ("REGISTRY[name] = cls", None, "REGISTRY[name] = cls\nreturn cls"),
    ("name = cls.name", None, "name = cls.name\nREGISTRY[name] = cls\nreturn cls"),
    # an argument moved into the nested call before it, or out of it
    ("return items.ljust(len(width), pad)", None, "return items.ljust(len(width, pad))"),
])
def test_templates_cover_the_multi_token_fixes_of_real_projects(start, exceptions, expected):
    assert expected in _after(_line(start), exceptions)


def test_a_parameter_the_function_never_reads_is_passed_on_first_and_only_where_it_may_be_taken():
    first = template_mutants("m.py", SOURCE, _line("return decode(fetch(url), strict=True)"))
    passed = [m for m in first if m.tier == EVIDENCE_TIER]
    assert [m.text.strip() for m in passed] == ["return decode(fetch(url), strict=True, timeout=timeout)",
                                                "return decode(fetch(url, timeout=timeout), strict=True)"]
    assert first[: len(passed)] == passed and all("(else unread)" in m.description for m in passed)
    assert not any("_cache" in m.text for m in first), "a `_`-named parameter is the function's own business"
    # `fetch` takes no `retries`: not passed on to it (it would raise TypeError); a parameter that is read is not
    assert not [m for m in template_mutants("m.py", SOURCE, _line("return fetch(url)")) if m.tier == EVIDENCE_TIER]
    assert not [m for m in template_mutants("m.py", SOURCE, _line("return items.ljust(")) if m.tier == EVIDENCE_TIER]
    assert unread_parameters(ast.parse("def f(a, b):\n    return '{a}'.format(**locals())\n").body[0]) == []
    assert unread_parameters(ast.parse("def f(self, a, *b, c, **d):\n    return lambda: c\n").body[0]) == ["a"]


@pytest.mark.parametrize("start, text", [
    # statements put under an `if` the function already tests, or under a name being set: one to three
    ("label = node.label", "    if node.children:\n        label = node.label"),
    ("label = node.label", "    if node.children:\n        label = node.label\n        node.count += 1"),
    ("label = node.label", "    if node is not None:\n        label = node.label\n        node.count += 1\n"
                           "        return label"),
])
def test_a_block_is_put_under_an_if_as_one_range_of_lines(start, text):
    line = _line(start)
    found = {m.text: m for m in template_mutants("m.py", SOURCE, line)}
    assert text in found
    assert found[text].last == line + text.count("\n") - 1, "the block's lines are replaced, not kept below"


def test_a_template_is_tried_after_every_single_edit_and_each_line_gets_a_bounded_number():
    for line in range(1, len(LINES) + 1):
        mutants = template_mutants("m.py", SOURCE, line, ["IndexError", "ValueError"])
        assert len(mutants) <= MAX_PER_LINE
        for mutant in mutants:  # (a parameter the function never reads is evidence of its own)
            assert mutant.tier == TEMPLATE_TIER or "(else unread)" in mutant.description, mutant
            ast.parse(mutant.applied(SOURCE))  # every candidate parses


@pytest.mark.parametrize("start, exceptions, absent", [
    # no `try` for an exception the line cannot raise: IndexError needs a subscript or a pop
    ("return open(path, encoding=encoding).read()", ["IndexError"], "except IndexError"),
    # no guard on a comprehension's variable (it does not exist before the statement)
    ("texts = [load(p) for p in paths]", None, "if p is None"),
    # no module or builtin swapped for an enclosing name
    ("return os.path.join(output_path, name)", None, "output.path.join"),
    # AssertionError never comes from the failure: it is the test's own assertion
    ("value = stacks[name].pop()", [], "except"),
])
def test_templates_stay_out_of_what_cannot_be_the_fix(start, exceptions, absent):
    assert not any(absent in text for text in _after(_line(start), exceptions))


def test_module_level_lines_and_def_lines_get_no_template():
    assert template_mutants("m.py", SOURCE, _line("import os")) == []
    assert template_mutants("m.py", SOURCE, _line("def total(items)")) == []


def test_a_block_is_at_most_three_statements_of_the_same_body():
    inner = [m for m in template_mutants("m.py", SOURCE, _line("node.visit()")) if m.last > m.line]
    assert inner == [], "`node.visit()` is alone in its `if` body"
    line = _line("label = node.label")
    assert max(m.last for m in template_mutants("m.py", SOURCE, line)) == line + 2


@pytest.mark.parametrize("messages, expected", [
    (["IndexError: pop from empty list"], ["IndexError"]),
    (["assert 1 == 2", "KeyError: 'a'", "KeyError: 'b'", "json.decoder.JSONDecodeError: x"],
     ["KeyError", "JSONDecodeError"]),
    (["AssertionError: boom"], []),
])
def test_the_exceptions_the_failing_tests_saw(messages, expected):
    report = models.TestReport(failed=len(messages), failures=[
        models.TestFailure(nodeid=f"t.py::t{i}", file="t.py", line=1, message=m) for i, m in enumerate(messages)])
    assert seen_exceptions(report) == expected


EMIT = '''\
def emit(message, err=False, stream=None):
    out = stream
    if out is None:
        if err:
            out = pick_stderr()
        else:
            out = pick_stdout()
    text = str(message) + "\\n"
    out.write(text)


def drain(queues):
    for queue in queues:
        head = queue.first
        head.close()
'''


def test_a_guard_goes_right_after_the_statement_that_sets_the_value_first():
    """Where the value may be missing, the guard that checks it where it is made (after the whole `if`/`else`
    that picks it, at that `if`'s depth) comes before the guard right before its use."""
    line = EMIT.split("\n").index("    out.write(text)") + 1
    guards = [m for m in template_mutants("m.py", EMIT, line) if m.description.startswith("guard")]
    first = guards[0].applied(EMIT)
    assert "        else:\n            out = pick_stdout()\n        if out is None:\n            return\n" \
           "    text = " in first, first
    assert "after `out` is set" in guards[0].description
    before_use = [m for m in guards if m.description == "guard `if out is None: return` added"]
    assert "    if out is None:\n        return\n    out.write(text)" in before_use[0].applied(EMIT)
    assert guards.index(before_use[0]) > 0


def test_a_guard_after_a_setting_statement_in_a_loop_continues():
    line = EMIT.split("\n").index("        head.close()") + 1
    guards = [m.applied(EMIT) for m in template_mutants("m.py", EMIT, line) if "after `head`" in m.description]
    assert guards == [], "`head` is set right before its use: the guard before the use is that candidate"
    assert any("        if head is None:\n            continue\n        head.close()" in m.applied(EMIT)
               for m in template_mutants("m.py", EMIT, line))


def test_a_guard_follows_each_earlier_setting_of_the_value_too():
    """The last assignment may be on a path the failing test does not take (click's `echo()` rewraps its stream
    on Windows only): the guard is also tried after the earlier ones, `is None` after each before `not`."""
    source = EMIT.replace("    out.write(text)", "    if WIN:\n        out = wrap(out)\n    out.write(text)")
    line = source.split("\n").index("    out.write(text)") + 1
    after = [m for m in template_mutants("m.py", source, line) if "after `out` is set" in m.description]
    assert [m.description.split(" added")[0] for m in after[:2]] == ["guard `if out is None: return`"] * 2
    assert "        out = wrap(out)\n        if out is None:\n            return\n" in after[0].applied(source)
    assert "            out = pick_stdout()\n        if out is None:\n            return\n" in after[1].applied(source)


def test_a_guard_after_a_setter_reads_functions_with_conditional_expressions():
    source = "def pick(flag, value):\n    value = value if flag else None\n    return value.strip()\n"
    mutants = template_mutants("m.py", source, 3)
    assert any("if value is None:\n        return None\n    return value.strip()" in m.applied(source)
               for m in mutants)


def test_the_object_the_failing_tests_read_an_attribute_of_on_none_is_guarded_first():
    source = "def copy(sink, head):\n    sink.write(head.strip())\n"
    message = "AttributeError: 'NoneType' object has no attribute 'strip'"
    inputs = failing_inputs(models.TestReport(failures=[models.TestFailure(
        nodeid="t.py::test_copy", file="t.py", line=3, message=message)]), Path("/nonexistent"))
    assert inputs.none_attributes == {"strip"}

    def guards(found: FailingInputs) -> list[str]:
        return [m.description for m in template_mutants("m.py", source, 2, inputs=found) if "is None" in m.description]
    assert guards(NO_INPUTS)[:2] == ["guard `if sink is None: return` added", "guard `if head is None: return` added"]
    assert guards(inputs)[:2] == ["guard `if head is None: return` added", "guard `if sink is None: return` added"]


RENDER = """\
def render(nodes, escape):
    out = []
    for node in nodes:
        if node.kind == "pre":
            html = escape(
                node.children[0].text,
            )
            out.append(html)
    return out
"""


def test_an_argument_a_callee_found_none_is_bound_and_guarded_before_the_statement():
    """A callee dereferenced None (`'NoneType' object has no attribute 'replace'`) that the statement read off
    an element: bound to a local named after its attribute and guarded, then the plain guard."""
    inputs = FailingInputs(none_attributes=frozenset({"replace"}))
    line = RENDER.split("\n").index("            html = escape(") + 1
    found = [m for m in template_mutants("m.py", RENDER, line, inputs=inputs)
             if "node.children[0].text" in m.description]
    assert [m.description for m in found] == [
        "`node.children[0].text` bound to `text`, guarded `if text is None: continue`",
        "guard `if node.children[0].text is None: continue` added"]
    assert found[0].applied(RENDER) == RENDER.replace(
        "            html = escape(\n                node.children[0].text,\n",
        "            text = node.children[0].text\n            if text is None:\n                continue\n"
        "            html = escape(\n                text,\n")
    ast.parse(found[1].applied(RENDER))
    assert not any("children[0]" in m.description for m in template_mutants("m.py", RENDER, line)), "no evidence"
    taken = RENDER.replace("for node in nodes:", "for node in nodes:\n        text = None")
    assert not any("bound" in m.description for m in
                   template_mutants("m.py", taken, line + 1, inputs=inputs)), "`text` is the function's already"


def test_a_line_inside_a_statement_gets_the_statements_templates():
    """A traceback names the line of the call's argument; the templates are the statement's."""
    inputs = FailingInputs(none_attributes=frozenset({"replace"}))
    argument = RENDER.split("\n").index("                node.children[0].text,") + 1
    found = [m.description for m in template_mutants("m.py", RENDER, argument, inputs=inputs)]
    assert "`node.children[0].text` bound to `text`, guarded `if text is None: continue`" in found
    bound = [m.line for m in template_mutants("m.py", RENDER, argument, inputs=inputs) if "bound" in m.description]
    assert bound == [argument - 1], "at the statement's first line"


def test_crash_sites_are_the_innermost_workspace_frames_of_tests_that_raised(tmp_path: Path):
    (tmp_path / "render.py").write_text(RENDER)
    traceback = ("tests/test_render.py:9: in test_empty\n    render([node], escape)\n"
                 "render.py:7: in render\n    node.children[0].text,\n"
                 "render.py:12: in escape\n    return text.replace('<', '&lt;')\n"
                 "E   AttributeError: 'NoneType' object has no attribute 'replace'\n")
    raised = models.TestFailure(nodeid="tests/test_render.py::test_empty", file="tests/test_render.py", line=9,
                                message="AttributeError: 'NoneType' object has no attribute 'replace'",
                                traceback=traceback)
    asserted = raised.model_copy(update={"nodeid": "tests/test_render.py::test_other",
                                         "message": "assert 'a' == 'b'"})
    inputs = failing_inputs(models.TestReport(failed=2, failures=[raised, asserted]), tmp_path)
    assert inputs.crash_sites == (("render.py", 12), ("render.py", 7))
    assert crashed("KeyError: 'x'") and crashed("json.decoder.JSONDecodeError: Expecting value")
    assert not crashed("AssertionError: no") and not crashed("assert 1 == 2") and not crashed("Failed: DID NOT RAISE")


def test_the_crash_sites_get_templates_however_the_spectrum_ranks_them():
    """Lines run by the failing test alone (its own input: a header) rank above the crash; the crash site's
    caller still gets its templates (Python-Markdown 3.5.2's codehilite)."""
    from agent_core.search.driver.ranking import TEMPLATE_LINES, templates_for

    header = "def header(text):\n" + "".join(f"    text = text.strip('{c}')\n" for c in "#*-+=~!") + "    return text\n"
    source = RENDER + "\n\n" + header
    argument = source.split("\n").index("                node.children[0].text,") + 1
    ranked = [(1.0, "m.py", line) for line in range(13, 13 + TEMPLATE_LINES + 1)] + [(0.7, "m.py", argument)]
    inputs = FailingInputs(none_attributes=frozenset({"replace"}))

    def bound(found: FailingInputs) -> list[str]:
        return [m.description for m in templates_for(Path("."), {"m.py": source}, ranked, ["AttributeError"], found)
                if "bound to" in m.description]
    assert bound(inputs) == [], "beyond the templates' lines"
    assert bound(replace(inputs, crash_sites=(("m.py", argument),))) == [
        "`node.children[0].text` bound to `text`, guarded `if text is None: continue`"]


COLLECT = '''\
def collect(item, bucket=[], *, seen={}):
    """Add `item` to `bucket`, once."""
    # keep the order of first sight
    if item not in seen:
        seen[item] = True
        bucket.append(item)
    return bucket


def short(x=[]): return x
'''


def test_a_mutable_default_is_made_per_call_as_evidence():
    """The default list is built once and shared by every call (flake8-bugbear's B006): the canonical fix is
    None and a fresh value at the top of the body, below the docstring and comments."""
    line = COLLECT.split("\n").index("        bucket.append(item)") + 1
    found = [m for m in template_mutants("m.py", COLLECT, line) if m.description.startswith("mutable default")]
    assert [m.tier for m in found] == [EVIDENCE_TIER, EVIDENCE_TIER]
    assert found[0].applied(COLLECT).startswith(
        "def collect(item, bucket=None, *, seen={}):\n"
        '    """Add `item` to `bucket`, once."""\n'
        "    # keep the order of first sight\n"
        "    if bucket is None:\n        bucket = []\n"
        "    if item not in seen:\n")
    assert "seen=None):" in found[1].applied(COLLECT) and "    if seen is None:\n        seen = {}\n" in \
        found[1].applied(COLLECT)
    one_line = COLLECT.split("\n").index("def short(x=[]): return x") + 1
    assert not [m for m in template_mutants("m.py", COLLECT, one_line) if "mutable" in m.description]


PARSE = '''\
def parse(text, default=0):
    try:
        value = int(text)
    except ValueError:
        return default
    return value


def load(path):
    try:
        data = open(path).read()
    except:
        data = ""
    return data
'''


def test_a_handler_around_the_line_catches_the_exception_the_failing_test_saw_too():
    line = PARSE.split("\n").index("        value = int(text)") + 1
    widened = [m for m in template_mutants("m.py", PARSE, line, ["TypeError"]) if "by the handler" in m.description]
    assert [(m.tier, m.text) for m in widened] == [(EVIDENCE_TIER, "    except (ValueError, TypeError):")]
    assert not [m for m in template_mutants("m.py", PARSE, line, ["ValueError"]) if "by the handler" in m.description]
    bare = PARSE.split("\n").index("        data = open(path).read()") + 1
    assert not [m for m in template_mutants("m.py", PARSE, bare, ["TypeError"]) if "by the handler" in m.description]


SHORT = '''\
class Conf:
    def __init__(self, data):
        self.data = data
        self.prefix = "port-"

    def port(self, key):
        value = self.data[key]
        return prefix + str(value)


async def fetch(n):
    return n


async def total(ns):
    first = fetch(ns[0])
    return fetch(ns[1]) + first
'''


def _evidence(start: str, exceptions: list[str], inputs: FailingInputs = NO_INPUTS) -> list[str]:
    line = SHORT.split("\n").index(start) + 1
    return [m.text.strip() for m in template_mutants("m.py", SHORT, line, exceptions, inputs=inputs)
            if m.tier == EVIDENCE_TIER]


def test_what_a_line_misses_is_evidence_when_the_failing_tests_exception_says_so():
    lookup = "        value = self.data[key]"
    assert _evidence(lookup, ["KeyError"]) == ["value = self.data.get(key)"]
    assert _evidence(lookup, ["IndexError"]) == [], "no KeyError: no .get"
    named = "        return prefix + str(value)"
    assert _evidence(named, ["NameError"], FailingInputs(undefined=frozenset({"prefix"}))) == [
        "return self.prefix + str(value)"]
    assert _evidence(named, ["NameError"], FailingInputs(undefined=frozenset({"value"}))) == [], "not an attribute"
    awaited = FailingInputs(coroutine=True)
    assert _evidence("    first = fetch(ns[0])", ["TypeError"], awaited) == ["first = await fetch(ns[0])"]
    assert _evidence("    return fetch(ns[1]) + first", ["TypeError"], awaited) == [
        "return (await fetch(ns[1])) + first"]
    assert _evidence("    first = fetch(ns[0])", ["TypeError"]) == [], "no coroutine in a failing message"


def test_the_failing_messages_name_undefined_names_and_coroutines(tmp_path: Path):
    messages = ["NameError: name 'prefix' is not defined",
                "AssertionError: assert <coroutine object total at 0x7f> == 3"]
    report = models.TestReport(failures=[models.TestFailure(nodeid=f"t.py::test_{n}", file="t.py", line=1,
                                                            message=m) for n, m in enumerate(messages)])
    inputs = failing_inputs(report, tmp_path)
    assert inputs.undefined == {"prefix"} and inputs.coroutine
    assert not failing_inputs(models.TestReport(), tmp_path).coroutine
