"""The expressions inside an f-string, for the token-level catalogue.

Before Python 3.12 the tokenizer hands an f-string over as one STRING token, so
`f"{a if not oxford else b}"` offers no `not` to drop, no comparison to flip.
This finds each replacement field's expression in a one-line f-string literal
(braces, nested brackets and quotes counted; `{{` escapes, the `!r` conversion
and the `:spec` skipped), tokenizes it on its own, and lets the catalogue edit
it; the edit is spliced back into the line. Written by hand because neither
`tokenize` (before 3.12) nor `ast` (whose column offsets inside f-strings are
unreliable before 3.12) says where a field's expression sits.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Callable

from agent_core.search.candidate import Edit

_PREFIX = "rRfFbBuU"
_OPEN, _CLOSE = "([{", ")]}"

TokenEdits = Callable[[str, list[tokenize.TokenInfo], int], list[list[Edit]]]


def _field_end(literal: str, start: int, end: int) -> tuple[int, int]:
    """(end of the expression, index of the field's closing brace) for the field whose expression starts at
    `start`; (-1, -1) when the field does not close before `end`."""
    depth, quote, expr_end, k = 0, "", -1, start
    while k < end:
        ch = literal[k]
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            if depth == 0:
                return (expr_end if expr_end >= 0 else k), k if ch == "}" else -1
            depth -= 1
        elif depth == 0 and expr_end < 0 and (ch == ":" or (ch == "!" and literal[k + 1 : k + 2] != "=")):
            expr_end = k  # a conversion or a format spec (whose nested fields are left alone) follows
        k += 1
    return -1, -1


def field_spans(literal: str) -> list[tuple[int, int]]:
    """(start, end) of each replacement field's expression in the f-string literal `literal` (its prefix and
    quotes included); [] for a literal that is not an f-string."""
    prefix = len(literal) - len(literal.lstrip(_PREFIX))
    if "f" not in literal[:prefix].lower():
        return []
    body = literal[prefix:]
    quote = body[:3] if body[:3] in ('"""', "'''") else body[:1]
    start, end = prefix + len(quote), len(literal) - len(quote)
    spans: list[tuple[int, int]] = []
    j = start
    while j < end:
        if literal[j] == "{" and literal[j + 1 : j + 2] == "{":
            j += 2
        elif literal[j] == "{":
            expr_end, close = _field_end(literal, j + 1, end)
            if close < 0:
                return spans
            if literal[j + 1 : expr_end].strip():
                spans.append((j + 1, expr_end))
            j = close + 1
        else:
            j += 1
    return spans


def _tokens(expr: str) -> list[tokenize.TokenInfo]:
    try:
        return [t for t in tokenize.generate_tokens(io.StringIO(expr).readline) if t.start[0] == 1 == t.end[0]]
    except (tokenize.TokenError, SyntaxError):
        return []


def field_edits(text: str, tokens: list[tokenize.TokenInfo], line: int,
                token_edits: TokenEdits) -> list[list[Edit]]:
    """The catalogue's edits (per tier, as `token_edits` gives them) of every field expression of the one-line
    f-strings among `tokens` (the tokens of line `text`), as edits of the whole line."""
    tiers: list[list[Edit]] = []
    for tok in tokens:
        if tok.type != tokenize.STRING or tok.start[0] != tok.end[0]:
            continue
        base = tok.start[1]
        for a, b in field_spans(tok.string):
            expr = tok.string[a:b]
            for tier, edits in enumerate(token_edits(expr, _tokens(expr), line)):
                while len(tiers) <= tier:
                    tiers.append([])
                tiers[tier] += [Edit(line, text[: base + a] + e.text + text[base + b :], line,
                                     f"{e.description} in an f-string") for e in edits]
    return tiers
