"""The mutant catalogue: which single edits a line gets, in which order, and that every mutant parses."""

from __future__ import annotations

import ast

import pytest

from agent_core.search.catalogue.line_mutants import line_mutants, scope_names

SOURCE = '''\
def window(xs, n, limit):
    total = 0
    for i in range(1, n):
        if xs[i] < limit and not done(xs):
            total += xs[i] * 2
        elif xs[i] is not None or flag is True:
            break
    return min(total, limit), xs[:n]
'''


def _texts(line: int) -> list[str]:
    return [m.text.strip() for m in line_mutants("w.py", SOURCE, line)]


@pytest.mark.parametrize("line, expected", [
    (3, "for i in range(1, n + 1):"),  # a range end
    (3, "for i in range(0, n):"),  # an integer constant -1
    (3, "for i in range(2, n):"),  # and +1
    (3, "for i in range(n, 1):"),  # swapped call arguments
    (4, "if xs[i] <= limit and not done(xs):"),  # comparison boundary
    (4, "if xs[i] < limit or not done(xs):"),  # and -> or
    (4, "if xs[i] < limit and done(xs):"),  # negation dropped
    (4, "if not (xs[i] < limit and not done(xs)):"),  # condition negated
    (4, "if xs[i + 1] < limit and not done(xs):"),  # an index +1
    (4, "if xs[i] > limit and not done(xs):"),  # comparison flipped
    (4, "if xs[i] < total and not done(xs):"),  # another variable of the same function
    (5, "total -= xs[i] * 2"),  # augmented arithmetic
    (5, "total += xs[i] / 2"),  # arithmetic
    (6, "elif xs[i] != None or flag is True:"),  # is not -> !=
    (6, "elif xs[i] is not None or flag == True:"),  # is -> ==
    (6, "elif xs[i] is not None or flag is False:"),  # True -> False
    (7, "continue"),  # break -> continue
    (8, "return max(total, limit), xs[:n]"),  # min -> max
    (8, "return min(total, limit), xs[:n - 1]"),  # a slice bound
])
def test_catalogue_covers_the_one_line_bug_classes(line: int, expected: str):
    assert expected in _texts(line)


@pytest.mark.parametrize("line, first", [
    (4, "if xs[i] <= limit and not done(xs):"),  # boundaries come first
    (3, "for i in range(2, n):"),  # then constants
    (8, "return min(total, limit), xs[:n + 1]"),  # then bounds
])
def test_most_frequent_bug_classes_come_first(line: int, first: str):
    assert _texts(line)[0] == first


def test_every_mutant_parses_changes_one_line_and_is_unique():
    lines = SOURCE.split("\n")
    for line in range(1, len(lines) + 1):
        mutants = line_mutants("w.py", SOURCE, line)
        assert len({m.text for m in mutants}) == len(mutants)
        for m in mutants:
            assert m.path == "w.py" and m.line == line and m.text != lines[line - 1] and m.description
            ast.parse("\n".join([*lines[:line - 1], m.text, *lines[line:]]))


def test_blank_out_of_range_and_unparsable_sources_give_no_mutants():
    assert line_mutants("w.py", SOURCE, 99) == []
    assert line_mutants("w.py", SOURCE, 0) == []
    assert line_mutants("w.py", "x = 1\n\ny = 2\n", 2) == []
    assert line_mutants("w.py", "def f(:\n    return 1\n", 2) == []


def test_non_ascii_text_keeps_columns_right():
    source = 'def f(a, b):\n    return g("é", a) < b\n'
    texts = [m.text for m in line_mutants("u.py", source, 2)]
    assert '    return g("é", a) <= b' in texts
    assert '    return g(a, "é") < b' in texts


def test_scope_names_are_the_enclosing_functions_parameters_and_locals():
    tree = ast.parse(SOURCE)
    assert scope_names(tree, 5) == ["xs", "n", "limit", "total", "i"]
    assert scope_names(ast.parse("x = 1\n"), 1) == []


def test_an_added_constant_is_dropped_before_it_is_changed():
    texts = [m.text for m in line_mutants("c.py", "def f(n):\n    return n * 2 + 1\n", 2)]
    assert texts[:3] == ["    return n * 2", "    return n * 3 + 1", "    return n * 1 + 1"]


def test_an_extra_term_is_dropped():
    source = "def chunks(items, size):\n    return [items[i : i + size] for i in range(0, len(items) - size, size)]\n"
    texts = [m.text for m in line_mutants("c.py", source, 2)]
    assert "    return [items[i : i + size] for i in range(0, len(items), size)]" in texts


def test_min_and_max_confused_with_each_other_are_exchanged_together():
    texts = [m.text for m in line_mutants("b.py", "def clamp(x, lo, hi):\n    return min(lo, max(x, hi))\n", 2)]
    assert "    return max(lo, min(x, hi))" in texts


@pytest.mark.parametrize(
    "line, expected",
    [
        (
            "    return {key: value for key, value in mapping.items()}",
            "    return {value: key for key, value in mapping.items()}",
        ),
        ("    return a - b", "    return b - a"),
        ("    return a, b", "    return b, a"),
        ("    return f(a, g(b))", "    return f(g(b), a)"),
    ],
)
def test_two_things_in_the_wrong_order_are_swapped(line: str, expected: str):
    source = f"def f(a, b, mapping):\n{line}\n"
    assert expected in [m.text for m in line_mutants("s.py", source, 2)]


def test_a_discarded_value_is_returned_or_assigned_back():
    source = "def normalise(name):\n    cleaned = name.strip()\n    cleaned.title()\n"
    texts = [m.text for m in line_mutants("n.py", source, 3)]
    assert "    return cleaned.title()" in texts and "    cleaned = cleaned.title()" in texts


def test_a_factor_is_off_by_one():
    source = "def paginate(items, page, size):\n    start = page * size\n    return items[start : start + size]\n"
    assert "    start = (page - 1) * size" in [m.text for m in line_mutants("p.py", source, 2)]


def test_twin_names_are_exchanged():
    texts = [m.text for m in line_mutants("s.py", 'def f(name):\n    return name.startswith(".py")\n', 2)]
    assert '    return name.endswith(".py")' in texts


@pytest.mark.parametrize(
    "line, expected",
    [
        ("    return sorted(scores)[:n]", "    return sorted(scores, reverse=True)[:n]"),
        ("    scores.sort()", "    scores.sort(reverse=True)"),
    ],
)
def test_a_sort_is_turned_round(line: str, expected: str):
    assert expected in [m.text for m in line_mutants("s.py", f"def f(scores, n):\n{line}\n", 2)]


def test_a_missing_base_case_is_inserted_into_a_recursive_function_only():
    source = (
        'def root(n):\n    """Digital root."""\n    return root(total(n))\n\n\n'
        "def total(n):\n    return n % 10 + n // 10\n"
    )
    mutants = line_mutants("r.py", source, 3)
    assert ("    if n < 10:\n        return n\n    return root(total(n))", "base case `if n < 10: return n` added") in [
        (m.text, m.description) for m in mutants
    ]
    assert mutants[-1].tier == max(m.tier for m in mutants), "the largest edit comes last"
    assert not any("base case" in m.description for m in line_mutants("r.py", source, 7)), "total is not recursive"


RARER = '''\
DEFAULTS = {"timeout_s": 30}


def f(n, text, config, cents, digit, result, items):
    try:
        n ^= n - 1
        result = result + digit
        return config.get("timeout", DEFAULTS["timeout_s"]), f"{cents / 100:.1f}", n >> 1, wrap(items)
    except TypeError:
        return None
'''


@pytest.mark.parametrize("line, expected", [
    (6, "        n &= n - 1"),  # a bitwise operator confused
    (7, "        result = digit + result"),  # the operands of `+` in the wrong order
    (8, '        return config.get("timeout_s", DEFAULTS["timeout_s"]), f"{cents / 100:.1f}", n >> 1, wrap(items)'),
    (8, '        return config.get("timeout", DEFAULTS["timeout_s"]), f"{cents / 100:.2f}", n >> 1, wrap(items)'),
    (8, '        return config.get("timeout", DEFAULTS["timeout_s"]), f"{cents / 100:.1f}", n << 1, wrap(items)'),
    (8, '        return config.get("timeout", DEFAULTS["timeout_s"]), f"{cents / 100:.1f}", n >> 1, items'),
    (9, "    except ValueError:"),  # the wrong exception caught
])
def test_the_rarer_classes_come_after_the_catalogue(line: int, expected: str):
    mutants = line_mutants("r.py", RARER, line)
    found = next(m for m in mutants if m.text == expected)
    base_case_tier = 12
    assert found.tier == base_case_tier - 1 and found.description, "after the names, before inserted base cases"
    common = [m for m in mutants if m.tier < found.tier]
    assert mutants.index(found) >= len(common), "tried after every catalogue edit of the line"
    if line in (7, 8):
        assert common, "the line has catalogue edits, and they come first"


@pytest.mark.parametrize("source, line, expected", [
    ("def pop(items):\n    return items.pop(0)\n", 2, "    return items.pop()"),  # the default was meant
    ("def count(text):\n    return len(text.split(' '))\n", 2, "    return len(text.split())"),
    ("x = f(a, b, key=3)\n", 1, "x = f(a, key=3)"),  # the separator goes with the dropped argument
    ("x = f(a, b, key=3)\n", 1, "x = f(b, key=3)"),
])
def test_an_argument_too_many_is_dropped(source: str, line: int, expected: str):
    assert expected in [m.text for m in line_mutants("a.py", source, line)]


def test_two_names_are_exchanged_everywhere_on_the_line_but_not_called_names():
    source = (
        "def t(m, rows, cols):\n    for i in range(rows):\n"
        "        for j in range(cols):\n            r[i][j] = m[j][i]\n"
    )
    texts = [m.text for m in line_mutants("t.py", source, 4)]
    assert "            r[j][i] = m[i][j]" in texts, "both sides at once: no single swap fixes a transpose"
    called = "def g(x, y):\n    return f(x) + y\n"
    assert not any(m.description.startswith("`f`") and "exchanged" in m.description
                   for m in line_mutants("g.py", called, 2))


@pytest.mark.parametrize("source, line, expected", [
    # the wrong attribute: another one the module uses
    ("def t(g):\n    return g.outgoing\n\n\ndef u(g):\n    return g.incoming\n", 2, "    return g.incoming"),
    # an empty container that should hold something
    ("def subsets(items, k):\n    if k == 0:\n        return []\n", 3, "        return [[]]"),
    ("def factors(n):\n    if n == 1:\n        return []\n", 3, "        return [n]"),
    # a loop on a constant
    ("def bfs(queue):\n    while True:\n        queue.pop()\n", 2, "    while queue:"),
    # a comparison's operator and constant both off
    ("def sort(arr):\n    if len(arr) == 0:\n        return arr\n", 2, "    if len(arr) <= 1:"),
    # an assignment that should accumulate, and one that should not
    ("def acc(xs):\n    total = 0\n    for x in xs:\n        total = x\n", 4, "        total += x"),
    ("def last(xs):\n    seen = 0\n    for x in xs:\n        seen += x\n", 4, "        seen = x"),
])
def test_the_structural_classes_reach_what_one_token_cannot(source: str, line: int, expected: str):
    mutants = line_mutants("s.py", source, line)
    found = next(m for m in mutants if m.text == expected)
    assert found.tier == 11, "with the rarer classes: after the catalogue, before inserted base cases"


def test_a_computed_value_is_off_by_one_but_a_literal_is_left_to_the_constants():
    source = "import math\n\n\ndef count(n, b):\n    c = math.ceil(math.log(n, b))\n    return c\n"
    assert "    c = math.ceil(math.log(n, b)) + 1" in [m.text for m in line_mutants("c.py", source, 5)]
    assert "    return c - 1" in [m.text for m in line_mutants("c.py", source, 6)]
    literal = "def f():\n    x = 3\n"
    assert not any(m.description.startswith("`3` -> `3 ") for m in line_mutants("l.py", literal, 2))


@pytest.mark.parametrize("source, line, expected", [
    ("def cycle(node):\n    hare = node\n    while True:\n        if hare.nxt is None:\n            return False\n",
     4, "        if hare is None or hare.nxt is None:"),
    ("def change(total, coins):\n    if total < 0:\n        return 0\n", 2, "    if total < 0 or not coins:"),
])
def test_a_missing_condition_is_added(source: str, line: int, expected: str):
    assert expected in [m.text for m in line_mutants("c.py", source, line)]


def test_searching_from_the_wrong_end_is_a_twin_name():
    source = "def cut(text, limit):\n    return text.find(' ', 0, limit + 1)\n"
    assert "    return text.rfind(' ', 0, limit + 1)" in [m.text for m in line_mutants("c.py", source, 2)]


@pytest.mark.parametrize(("line", "expected"), [
    ("    key = next(reversed(self.order))", "    key = next(iter(self.order))"),  # LRU taken from the MRU end
    ("    return queue.pop()", "    return queue.popleft()"),  # a FIFO served as a LIFO
    ("    queue.appendleft(item)", "    queue.append(item)"),
])
def test_the_wrong_end_of_an_ordered_container_is_a_twin_name(line: str, expected: str):
    source = f"def take(self, queue, item):\n{line}\n"
    assert expected in [m.text for m in line_mutants("c.py", source, 2)]


def test_the_expressions_inside_an_f_string_get_the_catalogues_edits():
    source = (
        "def join(items, sep, oxford, word):\n"
        "    return f'{sep.join(items[:-1])}{sep if not oxford else \" \"}{word} {items[-1]!r:>{len(word)}}'\n"
    )
    texts = {m.text for m in line_mutants("j.py", source, 2)}
    tail = "{word} {items[-1]!r:>{len(word)}}'"
    assert "    return f'{sep.join(items[:-1])}{sep if oxford else \" \"}" + tail in texts
    assert "    return f'{sep.join(items[:-2])}{sep if not oxford else \" \"}" + tail in texts
    plain = "def f(a):\n    return '{a if not a else 1}'\n"
    assert not any("f-string" in m.description for m in line_mutants("p.py", plain, 2)), "not an f-string"


@pytest.mark.parametrize("literal, fields", [
    ('f"{a} and {b!r:>{w}} {{x}} {d[\'k\']}"', ["a", "b", "d['k']"]),
    ('rf"""{x + 1:.2f}"""', ["x + 1"]),
    ('f"{a != b}"', ["a != b"]),
    ('"{a}"', []),
    ('f"{unclosed"', []),
])
def test_field_spans_find_each_fields_expression(literal: str, fields: list[str]):
    from agent_core.search.catalogue.fstrings import field_spans

    assert [literal[a:b] for a, b in field_spans(literal)] == fields


def test_two_call_arguments_that_are_not_neighbours_are_swapped():
    source = (
        "def distribute(n, children):\n"
        "    return [islice(it, n, None, index) for index, it in enumerate(children)]\n"
    )
    expected = "    return [islice(it, index, None, n) for index, it in enumerate(children)]"
    assert expected in [m.text for m in line_mutants("d.py", source, 2)]


def test_a_variable_used_as_a_number_is_off_by_one():
    source = "def windowed(seq, n, step):\n    padding = (None,) * (n if step >= n else step - 1)\n"
    texts = [m.text for m in line_mutants("w.py", source, 2)]
    assert "    padding = (None,) * ((n - 1) if step >= n else step - 1)" in texts
    called = "def g(f, xs):\n    return f(xs[0])\n"
    assert not any("-> `f - 1`" in m.description or "-> `xs - 1`" in m.description
                   for m in line_mutants("g.py", called, 2)), "a callee and a container are not numbers"


def test_a_wrong_variable_is_replaced_by_the_names_used_nearest_first_on_every_name_of_the_line():
    # a function with more locals than the name-swap cap: `hi < y` must still reach `y` -> `x`, the name
    # used on the next line, although `hi` alone has more replacements than the cap allows
    locals_ = "".join(f"    v{k} = {k}\n" for k in range(20))
    source = (
        f"def minmax(pairs, lo, hi):\n{locals_}"
        "    for x, y in pairs:\n        if y < x:\n            if hi < y:\n                hi = x\n"
        "    return lo, hi\n"
    )
    line = source.split("\n").index("            if hi < y:") + 1
    mutants = line_mutants("m.py", source, line)
    wrong_variable = [m for m in mutants if m.description == "`y` -> `x`"]
    assert wrong_variable, "the cap was spent on the line's first name"
    swaps = [m.description for m in mutants if m.tier == wrong_variable[0].tier]
    assert swaps.index("`y` -> `x`") < 4, f"a name used a line away comes before the far ones: {swaps}"
    assert not any("`v1" in d for d in swaps[:6]), "locals assigned far above come last"


def test_equal_and_not_equal_are_exchanged_before_a_whole_condition_is_negated():
    source = "def is_v(obj, version):\n    if version and obj.version == int(version):\n        return False\n"
    descriptions = [m.description for m in line_mutants("u.py", source, 2)]
    assert descriptions.index("`==` -> `!=`") < descriptions.index("condition negated")


def test_two_terms_of_opposite_sign_are_exchanged_in_a_sum_but_not_two_added_ones():
    source = "def jump(ret, weekday):\n    return (7 - weekday + ret.weekday()) % 7\n"
    texts = [m.text for m in line_mutants("j.py", source, 2)]
    assert "    return (7 - ret.weekday() + weekday) % 7" in texts
    same_sign = "def s(a, b, c):\n    return a + b + c\n"
    assert not any("exchanged in the sum" in m.description for m in line_mutants("s.py", same_sign, 2))


@pytest.mark.parametrize("source, line, expected", [
    ("ABSOLUTE_ZERO_C = -237.15\n", 1, "ABSOLUTE_ZERO_C = -273.15"),  # two digits typed the wrong way round
    ("HOUR_S = 3060\n", 1, "HOUR_S = 3600"),
    # a string used as text without being stripped or lower-cased
    ("def canonical(username):\n    return username.lower()\n", 2, "    return username.strip().lower()"),
    ("def yes(answer):\n    return answer == 'yes'\n", 2, "    return answer.lower() == 'yes'"),
    ('def vowels(text):\n    return sum(1 for ch in text if ch in "aeiou")\n', 2,
     '    return sum(1 for ch in text.lower() if ch in "aeiou")'),
])
def test_a_mistyped_number_and_a_string_not_normalised_are_reached(source: str, line: int, expected: str):
    found = next(m for m in line_mutants("t.py", source, line) if m.text == expected)
    assert found.tier == 11, "with the rarer classes: after the catalogue, before inserted base cases"


def test_no_normalising_call_where_nothing_says_the_value_is_text_and_no_call_that_changes_nothing():
    texts = [m.text for m in line_mutants("t.py", "def f(items, n):\n    return items[n] == n\n", 2)]
    assert not any(".lower()" in t or ".strip()" in t for t in texts), "no sign of text: no inserted call"
    texts = [m.text for m in line_mutants("t.py", "def f(name):\n    return name.lower()\n", 2)]
    assert "    return name.lower().lower()" not in texts and "    return name.strip().lower()" in texts
    texts = [m.text for m in line_mutants("t.py", "MASK = 0x10\nN = 105\n", 2)]
    assert "N = 150" in texts and "N = 015" not in texts, "a leading digit never swaps with a zero"
    assert not any("x01" in t for t in [m.text for m in line_mutants("t.py", "MASK = 0x10\n", 1)]), "decimal only"
