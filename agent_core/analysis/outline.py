"""A compact outline of one file (signatures only, bounded size) around the code a model is shown whole.

Each class and function becomes its signature (decorators and the first
docstring line kept), indented by nesting; pipeline/coder/focus.py sends it beside
the suspicious functions so the coder sees the rest of their file.
"""

from __future__ import annotations

from agent_core.analysis.symbols import Symbol, analyse


def _summary(symbol: Symbol) -> str:
    decorators = "".join(f"@{d} " for d in symbol.decorators if len(d) <= 40)
    doc = ""
    if symbol.docstring:
        first = symbol.docstring.splitlines()[0]
        doc = f"  # {first[:80]}"
    return f"{decorators}{symbol.signature}{doc}"


def partial_outline(source: bytes | str, shown: set[str], near: set[str], max_chars: int = 1500) -> str:
    """The outline of one file around definitions shown whole elsewhere in the prompt.

    Symbols in `shown` (qualnames) appear as their signature with a note, their
    members not at all; the rest appear as signatures. Over `max_chars`, the
    symbols named in `near` (what the shown code calls) and the classes holding
    a shown symbol are kept first; a last line counts what was left out.
    """
    info = analyse(source)
    depth: dict[str, int] = {}
    rows: list[tuple[int, Symbol, str]] = []
    for index, symbol in enumerate(info.symbols):
        if symbol.parent in shown or (symbol.parent and symbol.parent not in depth):
            continue  # inside a shown definition, or inside one left out
        level = depth[symbol.parent] + 1 if symbol.parent in depth else 0
        depth[symbol.qualname] = level
        note = "  # shown whole below" if symbol.qualname in shown else ""
        rows.append((index, symbol, "    " * level + _summary(symbol) + note))
    holders = {q.rsplit(".", 1)[0] for q in shown if "." in q}
    near = near - {q.rsplit(".", 1)[-1] for q in shown}

    def rank(row: tuple[int, Symbol, str]) -> tuple[int, int]:
        s = row[1]
        first = s.qualname in shown or s.qualname in holders or s.parent in holders or s.name in near
        return (0 if first else 1, row[0])

    kept: dict[str, tuple[int, Symbol, str]] = {}
    used = 0
    for row in sorted(rows, key=rank):
        if used + len(row[2]) + 1 > max_chars and row[1].qualname not in shown:
            if rank(row)[0]:
                break  # the rest in file order: stop at the first that does not fit
            continue
        kept[row[1].qualname] = row
        used += len(row[2]) + 1
    by_name = {row[1].qualname: row for row in rows}
    for row in list(kept.values()):  # a kept member's class is kept too, or it would read as another's
        parent = row[1].parent
        while parent and parent not in kept and parent in by_name:
            kept[parent] = by_name[parent]
            parent = by_name[parent][1].parent
    lines = [text for _, _, text in sorted(kept.values(), key=lambda r: r[0])]
    if len(kept) < len(rows):
        lines.append(f"# ... {len(rows) - len(kept)} more definitions not shown")
    return "\n".join(lines)
