"""What the failing tests are named for: the lines whose code says the words of their names.

A test is named for what it checks (`test_strip_comments_preserves_whitespace`,
`testWordMin`, `test_parse_order[NULLS FIRST]`), and the code at fault often says
the same words: a function named for them (`group_comments`), a line naming them
(`tk.is_whitespace`, `InlineTable if isinstance(_parent, Array)`). Ranking source
by the words of a bug's description is information-retrieval fault localization;
it finds lines the coverage spectrum ranks low when every failing and passing
test runs them alike, and combined with the spectrum it does better than either
alone (Le et al., "Information Retrieval and Spectrum Based Bug Localization:
Better Together", ESEC/FSE 2015). Here the failing tests' names are the
description: `ranked` scores each line the failing tests ran (and each line their
files, and the workspace modules those import, run when imported: `import_lines`,
`imported_by`) by the test words
its function's name and its own text hold, each word weighted by how rare it is
among those lines (a word every line says tells nothing), and the spectrum's
score breaks ties. driver/interleave.py `ranked_places` takes its lines in turn
with the spectrum's and the called functions' for the model's holes; the
search's own candidates keep the spectrum's order.
"""

from __future__ import annotations

import ast
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

from agent_core.analysis import pysyntax
from agent_core.analysis.imports import imported_files
from agent_core.search.evidence.spectrum import LineKey, enclosing_names

# Words of a test's name that say it is a test or join the others, not what it checks.
STOP_WORDS = frozenset({
    "test", "tests", "testing", "check", "checks", "should", "does", "do", "it", "is", "are", "be", "the", "a",
    "an", "and", "or", "of", "in", "on", "to", "for", "with", "without", "when", "if", "not", "no", "by", "as",
    "from", "at", "into", "that", "this", "case", "cases", "py", "self", "none", "true", "false", "works",
    "correct", "correctly", "proper", "properly", "valid", "invalid", "error", "errors", "raises", "fail", "fails",
})
MIN_LENGTH = 3  # shorter words (`a`, `ws`, `id`) match too much of any code
INSIDE_LENGTH = 4  # a test word at least this long also matches inside a code word (`strip` in `stripws`)
LINE_SHARE = 0.5  # a word the line itself says counts this much beside one its function's name says
_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def split_words(text: str) -> list[str]:
    """The words of `text`'s identifiers, lower case: snake_case and camelCase parts, a plural's `s` dropped
    (`TestWordMin` -> test, word, min; `inline_tables` -> inline, table)."""
    words: list[str] = []
    for identifier in _IDENTIFIER.findall(text.replace("_", " ")):
        for part in _CAMEL.findall(identifier):
            word = part.lower()
            if len(word) > MIN_LENGTH and word.endswith("s") and not word.endswith("ss"):
                word = word[:-1]
            words.append(word)
    return words


def name_words(failing: Iterable[str]) -> set[str]:
    """The words of the failing tests' names: the test function's, its class's and its parameters' (`[NULLS
    FIRST]`), and its file's, less STOP_WORDS and words shorter than MIN_LENGTH."""
    words: set[str] = set()
    for nodeid in failing:
        path, _, rest = nodeid.partition("::")
        stem = path.rsplit("/", 1)[-1].removesuffix(".py")
        words.update(w for w in split_words(f"{stem} {rest}") if len(w) >= MIN_LENGTH and w not in STOP_WORDS)
    return words


def _said(wanted: set[str], words: Iterable[str]) -> set[str]:
    """The wanted words that `words` say: the same word, or a long one inside a code word (`stripws`)."""
    said: set[str] = set()
    for word in words:
        if word in wanted:
            said.add(word)
        else:
            said.update(w for w in wanted if len(w) >= INSIDE_LENGTH and w in word)
    return said


def import_lines(source: str) -> list[int]:
    """The lines of the statements a module runs when imported, outside its functions: module-level and class-body
    assignments and expressions (a table of regular expressions, `__truediv__ = wrap(int.__truediv__)`), and the
    header lines of the compound statements holding them; not imports, docstrings or def and class lines. No test's
    coverage names them (the module is imported before its first test starts), though every test runs them."""
    try:
        tree = pysyntax.parse(source)
    except (SyntaxError, ValueError):
        return []
    out: list[int] = []

    def walk(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Import | ast.ImportFrom):
                continue
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value,
                                                                                                    str):
                continue  # a docstring
            if isinstance(node, ast.ClassDef):
                walk(node.body)
            elif inner := [b for name in ("body", "orelse", "finalbody") for b in getattr(node, name, None) or []]:
                out.append(node.lineno)
                walk(inner + [b for handler in getattr(node, "handlers", None) or [] for b in handler.body])
            else:
                out.extend(range(node.lineno, (node.end_lineno or node.lineno) + 1))

    walk(tree.body)
    return out


IMPORTED_FILES = 30  # workspace modules the failing tests' files import, read for their import-time lines


def imported_by(root: Path, ran: Iterable[str], limit: int = IMPORTED_FILES) -> list[str]:
    """The workspace files (relative to `root`) the files of `ran` import (analysis/imports.py), not among them:
    modules whose code ran when the tests' modules were imported, which no test's coverage names (a table of
    keywords another module reads); at most `limit`, in the order the imports come."""
    ran = list(dict.fromkeys(ran))
    found: dict[str, None] = {}
    for rel in ran:
        try:
            tree = pysyntax.parse((root / rel).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            continue
        found.update((path, None) for path in imported_files(tree, rel, root) if path not in ran)
        if len(found) >= limit:
            break
    return list(found)[:limit]


def ranked(failing: Iterable[str], lines: Mapping[str, Iterable[int]], sources: Mapping[str, str],
           scores: Mapping[LineKey, float] | None = None) -> list[LineKey]:
    """The (path, line) of `lines` (path -> the lines the failing tests ran) and of those files' `import_lines`
    that say a word of the failing tests' names, best first: by the rarity-weighted words the name of the function
    (or class body) holding them says, and at LINE_SHARE the others the line says; ties by `scores` (the
    spectrum's), then file and line order. A line that says none is left out, as is a path without its text in
    `sources`."""
    wanted = name_words(failing)
    if not wanted:
        return []
    said: dict[LineKey, tuple[set[str], set[str]]] = {}
    for path, numbers in lines.items():
        source = sources.get(path)
        if source is None:
            continue
        text = source.split("\n")
        names = enclosing_names(source)
        for number in sorted(set(numbers) | set(import_lines(source))):
            if 1 <= number <= len(text):
                own = _said(wanted, split_words(names.get(number, "")))
                said[(path, number)] = (own, _said(wanted, split_words(text[number - 1])) - own)
    counts: dict[str, int] = defaultdict(int)
    for own, more in said.values():
        for word in own | more:
            counts[word] += 1
    weight = {word: math.log(1 + len(said) / count) for word, count in counts.items()}
    scored = [(sum(weight[w] for w in own) + LINE_SHARE * sum(weight[w] for w in more), key)
              for key, (own, more) in said.items() if own or more]
    scored.sort(key=lambda entry: (-entry[0], -(scores or {}).get(entry[1], 0.0), entry[1]))
    return [key for _, key in scored]
