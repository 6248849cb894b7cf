"""compact_shape: the short JSON-like shape that replaces the full JSON schema in prompts."""

from __future__ import annotations

import json
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from agent_core.agents.coder.schema import CoderOutput
from agent_core.agents.planner.schema import PlannerOutput
from agent_core.agents.reflector.schema import Reflection
from agent_core.agents.tester.schema import TesterOutput as TesterAnswer
from agent_core.agents.tester.schema import Verdict as TesterVerdict
from agent_core.llm.structured import compact_shape, repair_messages, response_format, schema_instruction

REPO_SHAPES = {
    CoderOutput: '{"edits": [{"path": string, "search": string, "replace": string}]}',
    Reflection: '{"hypothesis": string, "file"?: string, "change"?: string, "confidence"?: "low"|"medium"|"high"}',
    PlannerOutput: (
        '{"approach"?: string, "subtasks": [{"id": string, "description": string, "priority"?: integer, '
        '"dependencies"?: [string], "files"?: [string]}], "required_packages"?: [string]}'
    ),
    TesterAnswer: (
        '{"tests": [{"name": string, "code": string, "kind"?: "pytest"|"hypothesis", "target"?: string, '
        '"rationale"?: string}]}'
    ),
    TesterVerdict: '{"verdict": "code_bug"|"test_wrong", "reason"?: string}',
}
SCHEMA_WORDS = ("$defs", "$ref", '"title"', '"default"', '"properties"', '"required"', '"anyOf"', '"type"')


def _leaks(schema: type[BaseModel], text: str) -> list[str]:
    """Schema keywords, titles and descriptions of `schema` that show up in `text`."""
    found = [word for word in SCHEMA_WORDS if word in text]
    found += [f'"description": {word!r}' for word in ('"description":"', '"description": "') if word in text]
    stack = [schema.model_json_schema()]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            texts = [node.get("title"), node.get("description")]
            found += [words for words in texts if isinstance(words, str) and words in text]
            stack.extend(value for value in node.values() if not isinstance(value, str))
        elif isinstance(node, list):
            stack.extend(node)
    return found


@pytest.mark.parametrize("schema", list(REPO_SHAPES), ids=lambda s: s.__name__)
def test_repo_schemas_render_exactly(schema):
    shape = compact_shape(schema)
    assert shape == REPO_SHAPES[schema]
    assert _leaks(schema, shape) == []
    # every field of the model appears, in the model's order
    positions = [shape.index(f'"{name}"') for name in schema.model_fields]
    assert positions == sorted(positions)
    assert len(shape) < len(json.dumps(schema.model_json_schema(), separators=(",", ":"))) / 3


@pytest.mark.parametrize("schema", list(REPO_SHAPES), ids=lambda s: s.__name__)
def test_instruction_and_repair_carry_the_shape_not_the_schema(schema):
    shape = REPO_SHAPES[schema]
    note = "; a key marked ? may be left out" if "?:" in shape else ""
    assert schema_instruction(schema) == f"Answer with exactly one JSON object of this shape (no prose{note}):\n{shape}"
    asked = [{"role": "user", "content": "go"}]
    repair = repair_messages(asked, "{bad", "edits: Field required", schema)
    assert repair[:2] == [*asked, {"role": "assistant", "content": "{bad"}]
    prompt = repair[-1]["content"]
    assert prompt.startswith("Your previous answer could not be used.\nValidation error:\nedits: Field required\n\n")
    assert prompt.endswith(f"corrected JSON object (keep it short) of this shape (no prose{note}):\n{shape}")
    assert _leaks(schema, schema_instruction(schema) + prompt) == []
    # the JSON-mode request still sends the full schema for constrained decoding
    assert response_format("json_object", schema) == {"type": "json_object", "schema": schema.model_json_schema()}


class Leaf(BaseModel):
    """A nested model used twice."""

    label: str = Field(description="words", title="Custom title")
    weight: float = Field(gt=0, lt=1)


class Node(BaseModel):
    """A recursive model."""

    name: str
    children: list[Node] = []


class Everything(BaseModel):
    """Each construct the renderer knows."""

    count: int = Field(ge=1, le=5)
    offset: int = Field(ge=-3, le=3)
    minimum_only: int = Field(ge=0)
    note: str | None = None
    either: int | str
    mode: Literal["fast"] = "fast"
    level: Literal[1, 2, 3]
    flag: bool
    leaf: Leaf
    leaves: list[Leaf] = []
    maybe_leaf: Leaf | None = None
    table: dict[str, int] = {}
    pair: tuple[str, int]
    tree: Node
    anything: object = None


def test_every_construct():
    assert compact_shape(Everything) == (
        '{"count": integer 1-5, "offset": integer >=-3 <=3, "minimum_only": integer >=0, '
        '"note"?: string|null, "either": integer|string, "mode"?: "fast", "level": 1|2|3, "flag": boolean, '
        '"leaf": {"label": string, "weight": number >0 <1}, "leaves"?: [{"label": string, "weight": number >0 <1}], '
        '"maybe_leaf"?: {"label": string, "weight": number >0 <1}|null, "table"?: {string: integer}, '
        '"pair": [string, integer], "tree": {"name": string, "children"?: [Node]}, "anything"?: any}'
    )


def test_recursive_root_model_names_itself_where_it_recurs():
    assert compact_shape(Node) == '{"name": string, "children"?: [Node]}'


def test_all_required_schema_has_no_optional_note():
    class Pair(BaseModel):
        a: str
        b: list[int]

    assert compact_shape(Pair) == '{"a": string, "b": [integer]}'
    expected = 'Answer with exactly one JSON object of this shape (no prose):\n{"a": string, "b": [integer]}'
    assert schema_instruction(Pair) == expected
