"""The coder's typed answer: a list of search/replace edits."""

from __future__ import annotations

from pydantic import BaseModel, Field


class Edit(BaseModel):
    """One search/replace block, or a whole-file write when `search` is empty."""

    path: str = Field(description="Workspace-relative path of the file to change.")
    search: str = Field(default="", description="Exact lines from the file to replace; empty to write the whole file.")
    replace: str = Field(description="Lines that replace the search block, or the whole file when search is empty.")


class CoderOutput(BaseModel):
    """The edits for one step."""

    edits: list[Edit] = Field(description="Edits to apply, in order.")
    explanation: str = Field(default="", description="One sentence on what the edits do.")
