"""The one shape of every `--json` output: its data with `"schema": SCHEMA` first, so a script can tell a
changed format from a changed result.

An object gets the key itself; a list (`agentls runs --json`) gets it on each of its objects. SCHEMA goes up
when a key is removed or changes meaning; added keys keep it.
"""

from __future__ import annotations

import json
from typing import Any

SCHEMA = 1


def versioned(data: Any) -> Any:
    """`data` with `"schema": SCHEMA` as the first key of it (an object) or of each of its objects (a list)."""
    if isinstance(data, dict):
        return {"schema": SCHEMA, **{k: v for k, v in data.items() if k != "schema"}}
    if isinstance(data, list):
        return [versioned(item) if isinstance(item, dict) else item for item in data]
    return data


def dumps(data: Any, **options: Any) -> str:
    """`json.dumps` of `versioned(data)`."""
    return json.dumps(versioned(data), **options)
