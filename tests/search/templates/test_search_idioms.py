"""Templates for bug classes linters know: an exception made and dropped, a change to a throwaway default
(effects.py), `except (A or B)` (handlers.py), a flag of `re` as a count (arguments.py), a position tested
for truth and a value tested where "given" was meant (truth.py), the special methods' duties (classes.py),
and a value in the wrong form for its use (conversions.py)."""

from __future__ import annotations

import pytest

from agent_core import models
from agent_core.search.evidence.inputs import FailingInputs, failing_inputs
from agent_core.search.templates.table import EVIDENCE_TIER, TEMPLATE_TIER, template_mutants

SOURCE = '''\
import json
import re


class ConfigError(Exception):
    pass


class Invalid(ConfigError):
    pass


def check(port, groups, pairs, text):
    if port < 0:
        ValueError(f"bad port {port}")
    Invalid("never raised")
    print("a call is no exception")
    for key, value in pairs:
        groups.get(key, []).append(value)
        groups.get(key, fallback).append(value)
    try:
        return int(text)
    except (ValueError or TypeError):
        return None


def clean(text, pattern):
    text = re.sub(r"</?b>", "", text, re.I | re.M)
    parts = re.split(r",", text, re.IGNORECASE)
    kept = re.sub(r"x", "", text, 2)
    return text, parts, kept, re.sub(r"y", "", text, flags=re.I)


def where(url, item):
    if url.find("://"):
        return 1
    if not url.find("www", 4):
        return 2
    ok = True if not item.get("quantity") else False
    if item["note"] and url.rfind("/") > 3:
        return 3
    return ok


def convert(mapping, data, numbers, handle):
    first = mapping.keys()[0] + len(map(str, numbers))
    label = ".".join(numbers)
    token = str(data)
    return json.loads(handle), first, label, token
'''
LINES = SOURCE.split("\n")

CLASSES = '''\
import threading


class Shape:
    def __init__(self, name, color="red", *, size=1):
        self.name = name
        self.tags = []


class Circle(Shape):
    def __init__(self, name, radius, size):
        """A round shape."""
        self.radius = radius


class Square(Shape):
    def __init__(self, side):
        self.side = side


class Ring(Circle):
    def __init__(self, name, radius, size):
        super().__init__(name, radius, size)


class Worker(threading.Thread):
    def __init__(self, job):
        self.job = job


class Timer:
    def __enter__(self):
        self.start = 1

    def __exit__(self, *exc):
        return False


class Opened:
    def __enter__(self):
        return self.handle
'''
CLASS_LINES = CLASSES.split("\n")


def _at(start: str, lines: list[str] = LINES) -> int:
    return next(i for i, text in enumerate(lines, 1) if text.startswith(start))


def _found(start: str, kind: str, inputs: FailingInputs | None = None, source: str = SOURCE) -> list[tuple[int, str]]:
    lines = source.split("\n")
    mutants = template_mutants("m.py", source, _at(start, lines), **({"inputs": inputs} if inputs else {}))
    return [(m.tier, m.text) for m in mutants if kind in m.description]


def test_an_exception_made_and_dropped_is_raised():
    assert _found('        ValueError(f"bad', "is raised") == [
        (EVIDENCE_TIER, '        raise ValueError(f"bad port {port}")')]
    assert _found('    Invalid("never', "is raised") == [(EVIDENCE_TIER, '    raise Invalid("never raised")')], \
        "a class of the module whose base is an exception"
    assert _found('    print("a call', "is raised") == []


def test_a_change_to_a_throwaway_default_is_kept_with_setdefault():
    assert _found("        groups.get(key, []).append", "`.get` -> `.setdefault`") == [
        (EVIDENCE_TIER, "        groups.setdefault(key, []).append(value)")]
    assert _found("        groups.get(key, fallback)", "`.get` -> `.setdefault`") == [], "not a fresh default"


def test_an_except_of_an_or_catches_the_tuple_it_meant():
    want = [(EVIDENCE_TIER, "    except (ValueError, TypeError):")]
    assert _found("        return int(text)", "catches the first alone") == want, "from the `try` body"
    assert _found("        return None", "catches the first alone") == want, "from the handler's body"


def test_a_flag_of_re_given_as_a_count_goes_by_keyword():
    assert _found("    text = re.sub", "passed as `flags=`") == [
        (EVIDENCE_TIER, '    text = re.sub(r"</?b>", "", text, flags=re.I | re.M)')]
    assert _found("    parts = re.split", "passed as `flags=`") == [
        (EVIDENCE_TIER, '    parts = re.split(r",", text, flags=re.IGNORECASE)')]
    assert _found("    kept = re.sub", "passed as `flags=`") == [], "a count is a count"
    assert _found("    return text, parts, kept", "passed as `flags=`") == [], "already by keyword"


def test_a_position_tested_for_truth_becomes_a_membership_test():
    assert _found('    if url.find("://")', "tested a position") == [(EVIDENCE_TIER, '    if "://" in url:')]
    assert _found('    if not url.find("www", 4)', "tested a position") == [
        (EVIDENCE_TIER, '    if url.find("www", 4) == -1:')], "with a start: compared with -1"
    assert _found("    if item[\"note\"] and url.rfind", "tested a position") == [], "compared, not tested"


def test_a_value_tested_for_truth_may_mean_given():
    assert _found("    ok = True if not", "count as given") == [
        (TEMPLATE_TIER, '    ok = True if item.get("quantity") is None else False')]
    assert (TEMPLATE_TIER, '    if item["note"] is not None and url.rfind("/") > 3:') in _found(
        '    if item["note"] and', "count as given"), "an operand of `and`"


@pytest.mark.parametrize("start, kind, inputs, expected", [
    ("    first = mapping", "made a list", FailingInputs(unsubscriptable=frozenset({"dict_keys"})),
     ["    first = list(mapping.keys())[0] + len(map(str, numbers))",
      "    first = mapping.keys()[0] + len(list(map(str, numbers)))"]),
    ("    label =", "joined as text", FailingInputs(joined=True), ['    label = ".".join(map(str, numbers))']),
    ("    token =", "str() of bytes", FailingInputs(bytes_shown=True), ["    token = data.decode()"]),
    ("    return json.loads", "the one for a file", FailingInputs(files=True),
     ["    return json.load(handle), first, label, token"]),
])
def test_a_value_in_the_wrong_form_is_converted_when_the_failure_names_it(start, kind, inputs, expected):
    assert _found(start, kind, inputs) == [(EVIDENCE_TIER, text) for text in expected]


def test_without_the_failure_s_word_conversions_are_not_made_or_come_later():
    for start, kind in [("    first = mapping", "made a list"), ("    label =", "joined as text"),
                        ("    token =", "str() of bytes")]:
        assert _found(start, kind) == [], "only a failing message that names the class asks for them"
    assert _found("    return json.loads", "the one for a file") == [
        (TEMPLATE_TIER, "    return json.load(handle), first, label, token")]


def test_an_enter_that_returns_nothing_returns_its_object():
    assert _found("        self.start = 1", "`__enter__` returns", source=CLASSES) == [
        (EVIDENCE_TIER, "        self.start = 1\n        return self")]
    assert _found("        return self.handle", "`__enter__` returns", source=CLASSES) == []


def test_a_subclass_init_calls_its_base_s_with_what_it_takes():
    lacking = FailingInputs(wrong_types=frozenset({("Circle", "tags")}))
    assert _found("        self.radius", "calls its base's", lacking, CLASSES) == [
        (EVIDENCE_TIER, "        super().__init__(name, size=size)\n        self.radius = radius")], \
        "after the docstring; `color` left to its default, so `size` goes by keyword"
    assert _found("        self.radius", "calls its base's", source=CLASSES) == [
        (TEMPLATE_TIER, "        super().__init__(name, size=size)\n        self.radius = radius")], \
        "without a failing read of the class's attribute: an ordinary template"
    assert _found("        self.side", "calls its base's", source=CLASSES) == [], "the base's `name` has no source"
    assert _found("        super().__init__(name, radius", "calls its base's", source=CLASSES) == []
    assert _found("        self.job", "calls its base's", source=CLASSES) == [
        (TEMPLATE_TIER, "        super().__init__()\n        self.job = job")], "a library's base: no arguments"


def _inputs(root, messages: list[str]) -> FailingInputs:
    """What failing_inputs reads of one failing test per message."""
    (root / "test_m.py").write_text("def test_a():\n    pass\n")
    return failing_inputs(models.TestReport(failed=len(messages), failures=[
        models.TestFailure(nodeid=f"test_m.py::test_a[{n}]", file="test_m.py", line=2, message=text)
        for n, text in enumerate(messages)]), root)


def test_the_failing_messages_name_the_conversions_they_ask_for(tmp_path):
    messages = ["TypeError: 'dict_keys' object is not subscriptable", "TypeError: object of type 'map' has no len()",
                "TypeError: sequence item 0: expected str instance, int found",
                "assert \"b'YTpi'\" == 'YTpi'",
                "TypeError: the JSON object must be str, bytes or bytearray, not TextIOWrapper"]
    found = _inputs(tmp_path, messages)
    assert found.unsubscriptable == {"dict_keys", "map"}
    assert found.joined and found.bytes_shown and found.files
    quiet = _inputs(tmp_path, ["assert 'b' == 'c'"])
    assert not (quiet.unsubscriptable or quiet.joined or quiet.bytes_shown or quiet.files)


MORE = '''\
import copy

_calls = 0
DEFAULTS = {"options": {}}


def tick():
    """Count a call."""
    _calls += 1
    return _calls


def forget(cache, key):
    cache.pop(key)
    del cache[key]
    del cache[1:2]
    return cache.pop(key, None)


def render(params, name, count):
    out = [f"{k}={v}" for k, v in params]
    for key, value in params:
        out.append(key)
    for key, value in params.items():
        out.append(value)
    return name + " x" + count + "!"


def normalize(values):
    total = sum(values)
    if total == 0:
        return []
    result = [v / total for v in values]


def split(numbers):
    evens = odds = []
    fresh = copy.copy(DEFAULTS)
    return evens, odds, fresh


class Rect:
    def __init__(self, w):
        self.w = w

    def area(self):
        return self.w

    @property
    def wide(self):
        return self.w > 1

    def scaled(self, k):
        return self.w * k


def areas(rects):
    return sum(r.area for r in rects), [r.scaled for r in rects], [r.wide() for r in rects]
'''


def _more(start: str, kind: str, inputs: FailingInputs | None = None, exceptions: list[str] | None = None):
    lines = MORE.split("\n")
    mutants = template_mutants("m.py", MORE, _at(start, lines), exceptions, inputs=inputs or FailingInputs())
    return [(m.tier, m.text) for m in mutants if kind in m.description]


def test_a_removal_that_may_miss_gets_its_default_on_a_key_error():
    assert _more("    cache.pop(key)", "the key may be absent", exceptions=["KeyError"]) == [
        (EVIDENCE_TIER, "    cache.pop(key, None)")]
    assert _more("    del cache[key]", "the key may be absent", exceptions=["KeyError"]) == [
        (EVIDENCE_TIER, "    cache.pop(key, None)")]
    assert _more("    del cache[1:2]", "the key may be absent", exceptions=["KeyError"]) == [], "a slice"
    assert _more("    cache.pop(key)", "the key may be absent") == [], "only for a KeyError"


def test_a_module_name_the_function_assigns_is_declared_global_when_found_unbound():
    unbound = FailingInputs(unbound_locals=frozenset({"_calls"}))
    assert _more("    _calls += 1", "`global _calls`", unbound) == [
        (EVIDENCE_TIER, "    global _calls\n    _calls += 1")], "after the docstring"
    assert _more("    _calls += 1", "`global _calls`") == []


def test_a_mapping_walked_for_pairs_is_walked_by_its_items_or_positions():
    unpacking = FailingInputs(unpacking=True)
    assert _more("    for key, value in params:", "walked", unpacking) == [
        (EVIDENCE_TIER, "    for key, value in params.items():"),
        (EVIDENCE_TIER, "    for key, value in enumerate(params):")]
    assert _more("    out = [f", "walked", unpacking) == [
        (EVIDENCE_TIER, '    out = [f"{k}={v}" for k, v in params.items()]'),
        (EVIDENCE_TIER, '    out = [f"{k}={v}" for k, v in enumerate(params)]')], "a comprehension's too"
    assert _more("    for key, value in params.items()", "walked", unpacking) == []
    assert _more("    for key, value in params:", "walked") == [], "only when a failure could not unpack"


def test_text_joined_to_a_number_makes_one_operand_text_at_a_time():
    assert _more("    return name +", "joined to text", FailingInputs(concatenated=True)) == [
        (EVIDENCE_TIER, '    return name + " x" + str(count) + "!"'),
        (EVIDENCE_TIER, '    return str(name) + " x" + count + "!"')], "the last operand first; literals stay"
    assert _more("    return name +", "joined to text") == []


def test_a_function_falling_off_its_end_returns_what_it_computed_last():
    assert _more("    result = [v / total", "fell off its end", FailingInputs(nones=True)) == [
        (EVIDENCE_TIER, "    result = [v / total for v in values]\n    return result")]
    assert _more("    result = [v / total", "fell off its end") == [
        (TEMPLATE_TIER, "    result = [v / total for v in values]\n    return result")]
    assert _more("    total = sum(values)", "fell off its end") == [
        (TEMPLATE_TIER, "    result = [v / total for v in values]\n    return result")], "from any line of it"
    assert _more("    fresh = copy.copy", "fell off its end") == [], "a function that returns at its end"


def test_a_chained_fresh_collection_is_made_one_per_name_and_a_shallow_copy_deep():
    assert _more("    evens = odds", "not one shared") == [(EVIDENCE_TIER, "    evens, odds = [], []")]
    assert _more("    fresh = copy.copy", "copy.deepcopy") == [(TEMPLATE_TIER, "    fresh = copy.deepcopy(DEFAULTS)")]


def test_a_method_read_as_a_value_becomes_a_property_and_a_property_called_is_read():
    methods = FailingInputs(method_values=True)
    assert _more("    return sum(r.area", "made a property", methods) == [
        (EVIDENCE_TIER, "    @property\n    def area(self):")], "`scaled` takes an argument: no property"
    assert _more("    return sum(r.area", "made a property") == []
    assert _more("    return sum(r.area", "a property is read", FailingInputs(not_callable=True)) == [
        (EVIDENCE_TIER, "    return sum(r.area for r in rects), [r.scaled for r in rects], [r.wide for r in rects]")]


def test_the_failing_messages_name_what_the_second_kinds_ask_for(tmp_path):
    messages = ["ValueError: not enough values to unpack (expected 2, got 1)",
                'TypeError: can only concatenate str (not "int") to str',
                "UnboundLocalError: cannot access local variable '_calls' where it is not associated with a value",
                "UnboundLocalError: local variable 'count' referenced before assignment",
                "TypeError: unsupported operand type(s) for +: 'int' and 'method'",
                "TypeError: 'int' object is not callable"]
    found = _inputs(tmp_path, messages)
    assert found.unpacking and found.concatenated and found.method_values and found.not_callable
    assert found.unbound_locals == {"_calls", "count"}


THIRD = '''\
import hashlib


def retries(config, fallback):
    count = config.get("retries") or 3
    other = fallback or 5
    return count, other, config.get("a", 1) or 2


def first_negative(values, groups):
    found = None
    for index, value in enumerate(values):
        if value < 0:
            found = index
    out = []
    for group in groups:
        out.append(group)
    return found, out


def longest(words):
    return max(len(w) for w in words), min(words, key=len), max([1], default=2)


def last_match(values):
    found = None
    for value in values:
        if value:
            found = value
    else:
        found = found or 0
    return found


def digest(path, target):
    with open(path) as handle:
        data = hashlib.sha256(handle.read()).hexdigest()
    with open(target, "w") as out, open(path, mode="r") as again:
        out.write(data + again.read())
'''


def _third(start: str, kind: str, inputs: FailingInputs | None = None):
    lines = THIRD.split("\n")
    mutants = template_mutants("m.py", THIRD, _at(start, lines), inputs=inputs or FailingInputs())
    return [(m.tier, m.text) for m in mutants if kind in m.description]


def test_a_default_after_or_is_taken_only_when_nothing_is_given():
    assert _third("    count = config", "count as given") == [(TEMPLATE_TIER, '    count = config.get("retries", 3)')]
    assert _third("    other = fallback", "count as given") == [
        (TEMPLATE_TIER, "    other = fallback if fallback is not None else 5")]
    assert _third("    return count, other", "count as given") == [], "a `.get` that has its default already"


def test_a_search_loop_stops_at_its_first_match():
    assert _third("            found = index", "`break` once found") == [
        (TEMPLATE_TIER, "            found = index\n            break")]
    assert _third("        out.append(group)", "`break` once found") == [], "a loop that collects"
    assert _third("            found = value", "`break` once found") == [], "a `break` would skip the loop's `else:`"


def test_append_and_extend_are_tried_for_each_other():
    assert _third("        out.append(group)", "`.append(...)` -> `.extend(...)`") == [
        (TEMPLATE_TIER, "        out.extend(group)")]


def test_max_of_nothing_is_given_a_default_when_a_failure_says_it_was_empty():
    emptied = FailingInputs(emptied=True)
    rest = ", max([1], default=2)"
    assert _third("    return max(len(w)", "of nothing gives", emptied) == [
        (EVIDENCE_TIER, "    return max((len(w) for w in words), default=0), min(words, key=len)" + rest),
        (EVIDENCE_TIER, "    return max((len(w) for w in words), default=None), min(words, key=len)" + rest),
        (EVIDENCE_TIER, "    return max(len(w) for w in words), min(words, key=len, default=0)" + rest),
        (EVIDENCE_TIER, "    return max(len(w) for w in words), min(words, key=len, default=None)" + rest),
    ], "a bare generator gets its own brackets; a call with its default keeps it"
    assert _third("    return max(len(w)", "of nothing gives") == []


def test_a_file_read_for_bytes_is_opened_in_binary_mode_when_a_failure_wanted_bytes():
    wanted = FailingInputs(bytes_wanted=True)
    assert _third("    with open(path) as", "opened as bytes", wanted) == [
        (EVIDENCE_TIER, '    with open(path, "rb") as handle:')]
    assert _third("    with open(target", "opened as bytes", wanted) == [
        (EVIDENCE_TIER, '    with open(target, "wb") as out, open(path, mode="r") as again:')], "a `mode=` is left"
    assert _third("    with open(path) as", "opened as bytes") == []


def test_the_failing_messages_name_an_empty_max_and_wanted_bytes(tmp_path):
    found = _inputs(tmp_path, ["ValueError: max() arg is an empty sequence",
                               "TypeError: Strings must be encoded before hashing"])
    assert found.emptied and found.bytes_wanted
    assert not _inputs(tmp_path, ["ValueError: invalid literal for int()"]).emptied
