"""The coder's typed answer: a list of search/replace edits."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


def _search_before_replace(schema: dict[str, Any]) -> None:
    # Grammar-constrained endpoints (llama.cpp) emit required keys first: listing `search` as
    # required makes the model copy the wrong lines before it writes their replacement.
    schema["required"] = ["path", "search", "replace"]


class Edit(BaseModel):
    """One search/replace block, or a whole-file write when `search` is empty."""

    model_config = ConfigDict(json_schema_extra=_search_before_replace)

    path: str = Field(description="Workspace-relative path of the file to change.")
    search: str = Field(default="", description="Exact lines from the file to replace; empty to write the whole file.")
    replace: str = Field(description="Lines that replace the search block, or the whole file when search is empty.")


class CoderOutput(BaseModel):
    """The edits for one step."""

    edits: list[Edit] = Field(description="Edits to apply, in order.")
