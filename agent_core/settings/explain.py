"""Where a bad setting was written, and what was probably meant (issue 28 item 4).

A validation error names its dotted key; the layers know which file, variable
or flag set it. This module turns that into one line per error:
`/w/.agentls.toml, line 3: max_iteration: unknown setting; did you mean max_iterations?`.
The line is found by reading the file's table headers and `key =` lines,
because tomllib keeps no positions and no round-trip TOML parser is a
dependency; when the scan cannot find it, the table is named instead.
Suggestions are difflib's close matches among the keys valid at that place.
`env_near_misses` does the same for `AGENTLS_*` variables that are no setting.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_camel

from agent_core.settings.sources import (
    ENV,
    ENV_NOT_SETTINGS,
    FLAG,
    PYPROJECT,
    USER_CONFIG_ENV,
    Layer,
    env_name,
    normalise_keys,
    origins,
)

_HEADER = re.compile(r"^\s*\[([^\[\]]+)\]\s*(?:#.*)?$")
_KEY_LINE = re.compile(r"^\s*([A-Za-z0-9_\-.\"' ]+?)\s*=")
# AGENTLS_* variables read by other parts of agentls (not settings): never reported as misspelt settings.
OTHER_VARIABLES = frozenset({
    USER_CONFIG_ENV, "AGENTLS_REPORT", "AGENTLS_TEST_TIMEOUT", "AGENTLS_SELECT", "AGENTLS_MODEL_DIR",
    "AGENTLS_MODEL_LOCK_TIMEOUT", "AGENTLS_MODEL_START_TIMEOUT", "AGENTLS_MODEL_SERVER_PYTHON",
    "AGENTLS_MODEL_SERVER_CMD", "AGENTLS_MODEL_INDEX_ARGS", "AGENTLS_AUTO_FETCH", "AGENTLS_SANDBOX_OWNER",
    "AGENTLS_PROBE_API_KEY", "AGENTLS_SEARCH",
}) | frozenset(ENV_NOT_SETTINGS)


def _parts(text: str) -> list[str]:
    """A TOML dotted key as snake_case parts (quotes dropped)."""
    names = [p.strip().strip("\"'") for p in text.split(".")]
    return list(normalise_keys(dict.fromkeys(names, 0)))


def line_of(path: Path, dotted: str, table_prefix: tuple[str, ...] = ()) -> int | None:
    """The 1-based line of `dotted` in the TOML file `path` (a key line or its table header), or None."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    want = [*table_prefix, *dotted.split(".")]
    table: list[str] = []
    for number, line in enumerate(lines, 1):
        header = _HEADER.match(line)
        if header:
            table = _parts(header.group(1))
            if table == want:
                return number
            continue
        key = _KEY_LINE.match(line)
        if key and [*table, *_parts(key.group(1))] == want:
            return number
    return None


def _where(layer: Layer | None, key: str) -> str:
    if layer is None:
        return "settings"
    if layer.name == ENV:
        return f"environment variable {layer.origin_of(key)}"
    if layer.name == FLAG:
        return layer.origin
    prefix = ("tool", "agentls") if layer.name == PYPROJECT else ()
    line = line_of(Path(layer.origin), key, prefix)
    if line is not None:
        return f"{layer.origin}, line {line}"
    table = ".".join([*prefix, *key.split(".")[:-1]])
    return f"{layer.origin}" + (f", table [{table}]" if table else "")


def _model_at(model: type[BaseModel], parents: list[str]) -> type[BaseModel] | None:
    for part in parents:
        info = model.model_fields.get(part)
        annotation = info.annotation if info else None
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return None
        model = annotation
    return model


def suggestion(model: type[BaseModel], key: str) -> str | None:
    """The setting an unknown dotted `key` probably meant, or None: the same name in another table first (a key
    in the wrong table), then a near spelling in the same table, then a near spelling anywhere."""
    *parents, leaf = key.split(".")
    everywhere = list(_all_keys(model))
    same_leaf = [k for k in everywhere if k.rsplit(".", 1)[-1] == leaf]
    if same_leaf:
        return same_leaf[0]
    here = _model_at(model, parents)
    if here is not None:
        close = difflib.get_close_matches(leaf, [n for n, f in here.model_fields.items() if not f.exclude], 1, 0.6)
        if close:
            return ".".join([*parents, close[0]])
    close = difflib.get_close_matches(key, everywhere, 1, 0.75)
    return close[0] if close else None


def _all_keys(model: type[BaseModel], prefix: str = "") -> Iterator[str]:
    for name, info in model.model_fields.items():
        annotation = info.annotation
        if info.exclude:
            continue
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            yield from _all_keys(annotation, f"{prefix}{name}.")
        else:
            yield prefix + name


def _shown(key: str, layer: Layer | None) -> str:
    """A key as the user wrote it: camelCase with `agentls.` for the editor's settings."""
    if layer is not None and layer.name == FLAG and layer.origin.startswith("editor"):
        return "agentls." + ".".join(to_camel(p) for p in key.split("."))
    return key


def _table_layer(set_by: Mapping[str, Layer], table: str) -> Layer | None:
    """The layer that set the last key inside the table `table` (an unknown table holds no setting of its own)."""
    inside = [layer for key, layer in set_by.items() if key.startswith(f"{table}.")]
    return inside[-1] if inside else None


def describe_validation_error(exc: ValidationError, layers: list[Layer], model: type[BaseModel]) -> str:
    """One part per bad setting: where it was written, the key, what is wrong, and what was probably meant."""
    set_by = origins(layers)
    parts = []
    for err in exc.errors():
        key = ".".join(str(p) for p in err["loc"]) or "settings"
        layer = set_by.get(key) or _table_layer(set_by, key)
        if err["type"] == "extra_forbidden":
            meant = suggestion(model, key)
            hint = f"; did you mean {_shown(meant, layer)}?" if meant else ""
            parts.append(f"{_where(layer, key)}: {_shown(key, layer)}: unknown setting{hint}")
        else:
            parts.append(f"{_where(layer, key)}: {_shown(key, layer)}: {err['msg']}")
    return "invalid settings: " + "; ".join(parts)


def env_near_misses(env: Mapping[str, str], model: type[BaseModel]) -> list[str]:
    """Warnings for `AGENTLS_*` variables that are no setting but look like one (a likely typo)."""
    known = {env_name(k) for k in _all_keys(model)} | {env_name(table) for table in model.model_fields}
    out = []
    for name in sorted(env):
        upper = name.upper()
        if not upper.startswith("AGENTLS_") or upper in known or upper in OTHER_VARIABLES:
            continue
        close = difflib.get_close_matches(upper, sorted(known), 1, 0.85)
        if close:
            out.append(f"environment variable {name} is not a setting and is ignored; did you mean {close[0]}?")
    return out
