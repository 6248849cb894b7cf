"""Structured output without trusting the endpoint: the mode ladder and its helpers.

Modes, best first:
  json_schema  `response_format={"type": "json_schema", ...}` (strict where the schema allows)
  json_object  `response_format={"type": "json_object", "schema": ...}` (llama.cpp honours the schema)
  extract      no response_format; the JSON is extracted from the reply
               (the whole reply, a fenced block, or the first `{` where
               `json.JSONDecoder.raw_decode` reads an object)

json_object and extract also put the schema's compact shape (`compact_shape`, a
few dozen tokens instead of the full JSON schema dump) into the system message.

`ModeCache` remembers, per endpoint (base_url + model), the best mode that
works, so later calls start there. Everything here is pure and synchronous.

The ladder is ours rather than instructor's, whose mode is fixed per client:
llama.cpp's server answers HTTP 500 to json_schema and calls a tool only when
`tool_choice` names it, so each endpoint must be stepped down and remembered.
The JSON is scanned with the standard library's `raw_decode`, not json-repair,
which turns an answer cut at the token limit into a valid, truncated object (a
half-written edit: `{"replace": "return a +"}`) instead of asking again.
"""

from __future__ import annotations

import copy
import json
import re
import threading
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

Mode = Literal["json_schema", "json_object", "extract"]
MODES: tuple[Mode, ...] = ("json_schema", "json_object", "extract")

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\n(.*?)```", re.DOTALL)
_MAX_STARTS = 64  # candidate "{" positions tried by extract_json
_DECODER = json.JSONDecoder()
_REJECTION_WORDS = ("response_format", "json_schema", "schema")


class ModeCache:
    """Thread-safe map of endpoint -> the mode to start with."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._modes: dict[tuple[str, str], Mode] = {}

    def get(self, base_url: str, model: str) -> Mode:
        with self._lock:
            return self._modes.get((base_url.rstrip("/"), model), MODES[0])

    def downgrade(self, base_url: str, model: str, mode: Mode) -> None:
        """Record that `mode` is the best this endpoint can do (never moves up)."""
        key = (base_url.rstrip("/"), model)
        with self._lock:
            current = self._modes.get(key, MODES[0])
            if MODES.index(mode) > MODES.index(current):
                self._modes[key] = mode

    def clear(self) -> None:
        with self._lock:
            self._modes.clear()


def next_mode(mode: Mode) -> Mode | None:
    index = MODES.index(mode) + 1
    return MODES[index] if index < len(MODES) else None


def schema_name(schema: type[BaseModel]) -> str:
    """The schema's name as OpenAI accepts it: [A-Za-z0-9_-], at most 64 characters."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", schema.__name__)[:64] or "Answer"


def json_schema_of(schema: type[BaseModel]) -> dict[str, Any]:
    return schema.model_json_schema()


def _walk_objects(node: Any) -> list[dict[str, Any]]:
    """Every sub-schema (dict) of a JSON schema, the root included."""
    found: list[dict[str, Any]] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def strict_schema(schema: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The schema with `additionalProperties: false` on every object, and whether strict mode fits it.

    Strict mode needs every property required and no defaults; pydantic models
    with optional fields do not qualify and are sent non-strict.
    """
    closed = copy.deepcopy(schema)
    strict = True
    for node in _walk_objects(closed):
        if "default" in node:
            strict = False
        if node.get("type") == "object" and isinstance(node.get("properties"), dict):
            node.setdefault("additionalProperties", False)
            if set(node["properties"]) - set(node.get("required", [])):
                strict = False
    return closed, strict


def response_format(mode: Mode, schema: type[BaseModel]) -> dict[str, Any] | None:
    """The `response_format` request field for `mode` (None in extract mode)."""
    raw = json_schema_of(schema)
    if mode == "json_schema":
        closed, strict = strict_schema(raw)
        return {
            "type": "json_schema",
            "json_schema": {"name": schema_name(schema), "schema": closed, "strict": strict},
        }
    if mode == "json_object":
        return {"type": "json_object", "schema": raw}
    return None


class _ShapeWriter:
    """Renders a JSON schema as a short JSON-like shape; see `compact_shape`."""

    def __init__(self, defs: dict[str, Any]) -> None:
        self.defs = defs
        self.active: list[str] = []  # $defs being expanded (a recursive one is named, not expanded again)
        self.has_optional = False

    def render(self, node: Any) -> str:
        if not isinstance(node, dict):
            return "any"
        if isinstance(node.get("$ref"), str):
            return self._ref(node["$ref"])
        if "const" in node:
            return json.dumps(node["const"])
        if isinstance(node.get("enum"), list):
            return "|".join(json.dumps(value) for value in node["enum"])
        for key in ("anyOf", "oneOf"):
            if isinstance(node.get(key), list):
                return self._union(node[key])
        if isinstance(node.get("allOf"), list) and len(node["allOf"]) == 1:
            return self.render(node["allOf"][0])
        kind = node.get("type")
        if isinstance(kind, list):
            return self._union([{**node, "type": k} for k in kind])
        if kind == "object" or "properties" in node:
            return self._object(node)
        if kind == "array":
            return self._array(node)
        if kind in ("integer", "number"):
            return kind + _bounds(node)
        return kind if isinstance(kind, str) else "any"

    def _ref(self, ref: str) -> str:
        name = ref.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")
        if not ref.startswith("#/$defs/") or name not in self.defs:
            return "object"
        if name in self.active:
            return name
        self.active.append(name)
        try:
            return self.render(self.defs[name])
        finally:
            self.active.pop()

    def _union(self, options: list[Any]) -> str:
        rendered = [self.render(option) for option in options]
        nulls = [text for text in rendered if text == "null"]
        others = list(dict.fromkeys(text for text in rendered if text != "null"))
        return "|".join(others + nulls[:1])

    def _object(self, node: dict[str, Any]) -> str:
        properties = node.get("properties")
        if not isinstance(properties, dict) or not properties:
            extra = node.get("additionalProperties")
            return "{string: " + self.render(extra) + "}" if isinstance(extra, dict) and extra else "object"
        required = set(node.get("required", []))
        parts = []
        for key, value in properties.items():
            mark = "" if key in required else "?"
            self.has_optional = self.has_optional or bool(mark)
            parts.append(f"{json.dumps(key)}{mark}: {self.render(value)}")
        return "{" + ", ".join(parts) + "}"

    def _array(self, node: dict[str, Any]) -> str:
        prefix = node.get("prefixItems")
        if isinstance(prefix, list):
            return "[" + ", ".join(self.render(item) for item in prefix) + "]"
        items = node.get("items")
        return "[" + (self.render(items) if isinstance(items, dict) else "any") + "]"


def _bounds(node: dict[str, Any]) -> str:
    """` 1-5`, ` >=0`, ` >0 <1`: the numeric bounds of an integer/number schema ("" when unbounded)."""
    low, high = node.get("minimum"), node.get("maximum")
    if low is not None and high is not None and low >= 0:
        return f" {json.dumps(low)}-{json.dumps(high)}"
    parts = [
        f"{sign}{json.dumps(node[key])}"
        for key, sign in (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="), ("exclusiveMaximum", "<"))
        if isinstance(node.get(key), (int, float)) and not isinstance(node.get(key), bool)
    ]
    return " " + " ".join(parts) if parts else ""


def _shape_and_optional(schema: type[BaseModel]) -> tuple[str, bool]:
    raw = json_schema_of(schema)
    writer = _ShapeWriter(raw.get("$defs", {}))
    return writer.render(raw), writer.has_optional


def compact_shape(schema: type[BaseModel]) -> str:
    """The model's JSON schema as a short JSON-like shape a small model can follow.

    `{"edits": [{"path": string, "search"?: string}], "level"?: "low"|"high", "n": integer 1-5}`:
    `$ref`s resolved in place, `key?` for a key that may be left out, `|null` for a nullable
    value, property order as in the model, no titles, descriptions or defaults.
    """
    return _shape_and_optional(schema)[0]


def _shape_text(schema: type[BaseModel]) -> str:
    """`of this shape (...):` plus the shape, the tail both prompts share."""
    shape, has_optional = _shape_and_optional(schema)
    note = "; a key marked ? may be left out" if has_optional else ""
    return f"of this shape (no prose{note}):\n{shape}"


def schema_instruction(schema: type[BaseModel]) -> str:
    """The prompt text that asks for one JSON object of the schema's compact shape."""
    return "Answer with exactly one JSON object " + _shape_text(schema)


def with_instruction(messages: list[dict[str, Any]], mode: Mode, schema: type[BaseModel]) -> list[dict[str, Any]]:
    """The messages to send in `mode`: json_object and extract carry the schema in the system message."""
    if mode == "json_schema":
        return list(messages)
    instruction = schema_instruction(schema)
    out = [dict(m) for m in messages]
    if out and out[0].get("role") == "system" and isinstance(out[0].get("content"), str):
        out[0]["content"] = out[0]["content"].rstrip() + "\n\n" + instruction
    else:
        out.insert(0, {"role": "system", "content": instruction})
    return out


def _object_at(text: str, start: int) -> dict[str, Any] | None:
    """The JSON object that `json.JSONDecoder.raw_decode` reads at `text[start]`, if any."""
    try:
        value, _end = _DECODER.raw_decode(text, start)
    except (json.JSONDecodeError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _first_object(text: str) -> dict[str, Any] | None:
    """The object at the first `{` (of the first _MAX_STARTS) where one parses."""
    start = text.find("{")
    for _ in range(_MAX_STARTS):
        if start < 0:
            return None
        found = _object_at(text, start)
        if found is not None:
            return found
        start = text.find("{", start + 1)
    return None


def extract_json(text: str) -> dict[str, Any] | None:
    """The first JSON object in a reply: the whole reply, a fenced block, or the first `{` where one parses."""
    stripped = text.strip()
    whole = _object_at(stripped, 0) if stripped.startswith("{") else None  # even with a fence inside a string
    if whole is not None:
        return whole
    for match in _FENCE.finditer(text):
        found = _first_object(match.group(2))
        if found is not None:
            return found
    return _first_object(text)


def looks_ignored(text: str, finish_reason: str | None) -> bool:
    """True when a reply in a JSON mode carries no JSON at all (the endpoint ignored the format)."""
    return finish_reason != "length" and "{" not in text


def describe_validation_error(exc: ValidationError) -> str:
    """One line per error: `subtasks.0.priority: Input should be less than or equal to 5`."""
    lines = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "(root)"
        lines.append(f"{loc}: {err['msg']}")
    return "\n".join(lines)


def parse_answer(text: str, finish_reason: str | None, schema: type[BaseModel]) -> tuple[BaseModel | None, str]:
    """Validate a reply against `schema`: (instance, "") or (None, why it failed)."""
    data = extract_json(text)
    if data is None:
        if finish_reason == "length":
            return None, "the answer was cut off at the token limit (finish_reason=length) before the JSON ended"
        return None, "no JSON object was found in the answer"
    try:
        return schema.model_validate(data), ""
    except ValidationError as exc:
        return None, describe_validation_error(exc)


def repair_messages(
    messages: list[dict[str, Any]], answer: str, error: str, schema: type[BaseModel]
) -> list[dict[str, Any]]:
    """The conversation for the one repair request: the bad answer, the error and the compact shape."""
    prompt = (
        "Your previous answer could not be used.\n"
        f"Validation error:\n{error}\n\n"
        "Reply again with only one complete, corrected JSON object (keep it short) " + _shape_text(schema)
    )
    return [*messages, {"role": "assistant", "content": answer}, {"role": "user", "content": prompt}]


def mentions_response_format(message: str) -> bool:
    """True when an endpoint's error message is about the response format / schema."""
    lowered = message.lower()
    return any(word in lowered for word in _REJECTION_WORDS)
