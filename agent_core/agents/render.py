"""Filling prompt templates: `{name}` placeholders, nothing else.

Templates may come from users, so stray braces (code, JSON examples) are left
alone instead of breaking `str.format`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")


def placeholders(template: str) -> set[str]:
    """The `{name}` placeholders a template uses."""
    return set(PLACEHOLDER.findall(template))


def render(template: str, values: Mapping[str, object]) -> str:
    """Replace each known `{name}` with its value; unknown names stay as written."""
    return PLACEHOLDER.sub(lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), template)
