"""What the failing tests are named for: their names' words, the lines that say them (import-time lines too),
ranked by rarity with the spectrum breaking ties, and their turn among the model's first places."""

from __future__ import annotations

from agent_core.search.driver.interleave import ranked_places
from agent_core.search.evidence.spectrum import Suspect
from agent_core.search.evidence.words import import_lines, imported_by, name_words, ranked, split_words

UNITS = '''\
"""Units of length."""
import math


def _scaled(factor):
    def convert(self, value):
        return value * factor
    return convert


class Units:
    """Lengths in centimetres."""
    inches = _scaled(2.54)
    feet = _scaled(30.0)
    TABLE = {
        "yard": 91.44,
    }

    def metres(self, value):
        return value * 100


if math.pi > 3:
    SPEED = 1
'''


def test_a_test_s_name_its_class_its_parameters_and_its_file_give_the_words():
    assert split_words("TestWordMin") == ["test", "word", "min"]
    assert split_words("inline_tables HTTPServer") == ["inline", "table", "http", "server"]
    assert split_words("class glass") == ["class", "glass"], "a word ending in ss keeps it"
    assert name_words(["tests/test_format.py::TestFormat::test_strip_comments_preserves_whitespace"]) == {
        "format", "strip", "comment", "preserve", "whitespace"}
    assert name_words(["tests/test_tokenize.py::test_parse_order[NULLS FIRST]"]) == {
        "tokenize", "parse", "order", "null", "first"}, "a parameter's id says what is checked too"
    assert name_words(["tests/test_a.py::test_it_is_ok_in_py"]) == set(), "stop words and short words say nothing"


def test_the_lines_run_at_import_are_the_module_s_and_class_bodies_statements_not_its_functions():
    lines = import_lines(UNITS)
    assert 13 in lines and 14 in lines, "class-body assignments"
    assert {15, 16, 17} <= set(lines), "each line of a statement over several lines"
    assert 23 in lines and 24 in lines, "an if at module level: its header and its body"
    assert not {1, 2, 5, 6, 7, 11, 12, 19, 20} & set(lines), "no docstring, import, def, class or function body"
    assert import_lines("def broken(:\n") == []


def test_the_lines_saying_the_tests_words_come_first_the_rarer_words_weigh_more_and_the_spectrum_breaks_ties():
    sources = {"units.py": UNITS}
    ran = {"units.py": [7, 20]}  # what the failing test ran: convert's and metres' lines

    order = ranked(["tests/test_units.py::test_feet_in_centimetres"], ran, sources)

    assert order[0] == ("units.py", 14), "the import-time line that says `feet`"
    assert ("units.py", 7) not in order, "a line that says none of the words is left out"
    tie = ranked(["tests/test_x.py::test_value"], {"units.py": [7, 20]}, sources, {("units.py", 20): 0.9})
    assert tie == [("units.py", 20), ("units.py", 7)], "both say `value`: the spectrum's score breaks the tie"
    rare = ranked(["tests/test_x.py::test_value_of_metres"], {"units.py": [7, 20]}, sources)
    assert rare[0] == ("units.py", 20), "`metres` (its function's name, one line) before `value` (both lines)"
    assert ranked(["tests/test_x.py::test_it"], ran, sources) == [], "no words: no ranking"
    assert ranked(["tests/test_x.py::test_feet"], {"gone.py": [1]}, sources) == [], "no text: left out"


def test_the_named_lines_take_every_third_place_beside_the_spectrum_s_and_the_called_functions():
    sources = {"a.py": "\n" * 40, "b.py": "\n" * 40}
    spectrum = Suspect("a.py", "f", 1, 20, [1, 2, 3], 1.0, [1.0, 0.9, 0.8])
    called = Suspect("a.py", "g", 21, 30, [21, 22], 0.5, [0.5, 0.4], called=True)

    places = ranked_places([spectrum, called], sources, named=[("b.py", 7), ("a.py", 2), ("c.py", 1), ("b.py", 9)])

    assert places[:6] == [("a.py", 1), ("a.py", 21), ("b.py", 7), ("a.py", 2), ("a.py", 22), ("a.py", 3)], \
        "in turn; a place already taken is not again, one without its text is left out"
    assert places[6:] == [("b.py", 9)]
    assert ranked_places([spectrum, called], sources) == [("a.py", 1), ("a.py", 21), ("a.py", 2), ("a.py", 22),
                                                          ("a.py", 3)], "no named lines: as before"


def test_the_workspace_modules_the_tests_files_import_are_found_absolute_relative_and_from_a_package(tmp_path):
    files = {
        "src/pkg/__init__.py": "",
        "src/pkg/lexer.py": "import re\nfrom pkg import keywords\nfrom . import tables\nfrom .sub import deep\n"
                            "import pkg.names\n\n\ndef lex():\n    from ..other import late\n",
        "src/pkg/keywords.py": "KEYWORDS = {}\n",
        "src/pkg/tables.py": "from pkg.lexer import lex\n",
        "src/pkg/sub/__init__.py": "",
        "src/pkg/sub/deep.py": "",
        "src/pkg/names.py": "",
        "src/other.py": "",
        "src/broken.py": "def (:\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)

    found = imported_by(tmp_path, ["src/pkg/lexer.py", "src/broken.py", "src/gone.py"])

    assert found == ["src/pkg/__init__.py", "src/pkg/keywords.py", "src/pkg/tables.py", "src/pkg/sub/__init__.py",
                     "src/pkg/sub/deep.py", "src/pkg/names.py", "src/other.py"], \
        "stdlib's re is no workspace file; the file itself is not listed again; what cannot be read adds nothing"
    assert imported_by(tmp_path, ["src/pkg/lexer.py"], limit=2) == ["src/pkg/__init__.py", "src/pkg/keywords.py"]
