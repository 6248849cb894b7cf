"""The reflector's typed answer: a specific, actionable hypothesis."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class Reflection(BaseModel):
    """Why the tests failed and what to change next."""

    hypothesis: str = Field(description="The cause of the failure, in one or two sentences.")
    file: str = Field(default="", description="Workspace-relative file that should change.")
    change: str = Field(default="", description="The specific change to make in that file.")
    confidence: Literal["low", "medium", "high"] = Field(default="medium", description="How sure the diagnosis is.")
