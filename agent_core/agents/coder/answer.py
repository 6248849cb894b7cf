"""Reading the coder's answer: fenced code blocks under file headers, or JSON search/replace edits.

The prompt asks for each changed function, complete, in a ```python block
under a `### <file>` line. Each block becomes an edit with an empty search
block, which the edit layer splices in place of the definitions it redefines.
A JSON object of `CoderOutput`'s shape (search/replace edits) is accepted
too: some models and every scripted test answer that way.
"""

from __future__ import annotations

import re
import textwrap

from pydantic import ValidationError

from agent_core.agents.coder.prompt import SUSPICIOUS_MARK
from agent_core.agents.coder.schema import CoderOutput, Edit
from agent_core.analysis import pysyntax
from agent_core.llm.structured import extract_json

# A block ends at a bare ``` line, so a "```python" line inside it (a nested opener) does not close it.
_BLOCK = re.compile(r"```[ \t]*(?:python3?|py)?[ \t]*\n(.*?)^[ \t]*```[ \t]*$", re.DOTALL | re.MULTILINE)
_LOOSE_BLOCK = re.compile(r"```[ \t]*(?:python3?|py)?[ \t]*\n(.*?)```", re.DOTALL)  # closed mid-line
_PATH = re.compile(r"([\w./-]+\.py)\b")
_HEADER_LINES = 2  # lines above a block searched for its file's path
_INNER_HEADER = re.compile(r"^\s*#+\s*([\w./-]+\.py)\s*\n")  # "### calc.py" written inside the block
_OPENER = r"```[ \t]*(?:python3?|py)?[ \t]*\n"
_OPENER_LINE = re.compile(rf"^[ \t]*{_OPENER}", re.MULTILINE)
# "### other.py" (a label after it allowed) on a line of its own inside a block: that file's code follows.
_SECTION_HEADER = re.compile(r"^[ \t]*#{2,}[ \t]*([\w./-]+\.py)[ \t]*(?:\(.*\))?[ \t]*$\n?", re.MULTILINE)
# A fence opened twice ("```python" on two lines) or closed twice: read as one fence, not an empty block.
_DOUBLE_OPENER = re.compile(rf"```[ \t]*(?:python3?|py)[ \t]*\n(?:[ \t]*{_OPENER})+")
_DOUBLE_CLOSER = re.compile(r"\n```[ \t]*\n(?:[ \t]*```[ \t]*(?:\n|$))+")


_MARK = re.compile(rf"[ \t]*{re.escape(SUSPICIOUS_MARK)}[ \t]*$", re.MULTILINE)


def _unmarked(output: CoderOutput) -> CoderOutput:
    """The edits without the suspicious-line marks the prompt added (a model copies them back)."""
    return CoderOutput(
        edits=[
            e.model_copy(update={"search": _MARK.sub("", e.search), "replace": _MARK.sub("", e.replace)})
            for e in output.edits
        ]
    )


_OUTLINE_LINE = re.compile(r"^\s*(?:(?:async\s+)?def\s|class\s|@|#)")


def outline_echo(code: str) -> bool:
    """Whether a block is an outline the prompt showed, copied back (signatures only, no bodies): a small model
    repeats the prompt's `(outline: ... bodies not shown)` blocks before its real answer. As an edit it is
    invalid Python, and it would hide the function the answer does rewrite."""
    lines = [line for line in code.splitlines() if line.strip()]
    if not lines or not all(_OUTLINE_LINE.match(line) for line in lines):
        return False
    try:
        pysyntax.parse(textwrap.dedent(code))
    except (SyntaxError, ValueError):
        return True  # headers without bodies
    return False


def _single_fences(text: str) -> str:
    return _DOUBLE_CLOSER.sub("\n```\n", _DOUBLE_OPENER.sub("```python\n", text))


def _json_edits(text: str) -> CoderOutput | None:
    data = extract_json(text)
    if not isinstance(data, dict) or "edits" not in data:
        return None
    try:
        output = CoderOutput.model_validate(data)
    except ValidationError:
        return None
    return output if output.edits else None


def _sections(code: str, path: str) -> list[tuple[str, str]]:
    """(file, code) pairs of one block: a small model sometimes writes several files' code in one block,
    each under its own `### file` line, with stray ```python lines between them."""
    inner = _INNER_HEADER.match(code)
    if inner:
        code, path = code[inner.end() :], inner.group(1)
    parts = _SECTION_HEADER.split(code)
    pairs = [(path, parts[0]), *zip(parts[1::2], parts[2::2], strict=False)]
    return [(p, _OPENER_LINE.sub("", c)) for p, c in pairs]


def _path_above(text: str, start: int, default_path: str) -> str:
    above = text[:start].rstrip().splitlines()[-_HEADER_LINES:]
    for line in reversed(above):
        found = _PATH.findall(line)
        if found:
            return found[-1].strip("./") if found[-1].startswith("./") else found[-1]
    return default_path


def parse_coder_answer(text: str, default_path: str) -> CoderOutput | None:
    """The edits in a coder answer (suspicious-line marks removed), or None when it holds neither code
    blocks nor JSON edits."""
    output = _parse(text, default_path)
    return _unmarked(output) if output is not None else None


def _parse(text: str, default_path: str) -> CoderOutput | None:
    stripped = text.strip()
    if stripped.startswith("{") or stripped.startswith("```json"):
        found = _json_edits(stripped)
        if found is not None:
            return found
    edits = []
    text = _single_fences(text)
    blocks = list(_BLOCK.finditer(text)) or list(_LOOSE_BLOCK.finditer(text))
    for m in blocks:
        for path, code in _sections(m.group(1), _path_above(text, m.start(), default_path)):
            if code.strip() and path and not outline_echo(code):
                edits.append(Edit(path=path, search="", replace=code))
    if edits:
        return CoderOutput(edits=edits)
    return _json_edits(stripped)
