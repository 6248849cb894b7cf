"""The planner's typed answer. Lenient on purpose: `validation.py` validates it and explains errors."""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator


class PlannedStep(BaseModel):
    """One step as the model wrote it (not yet validated)."""

    id: str = Field(description="Unique step id such as 't1'.")
    description: str = Field(description="What to change, in which file, concretely.")
    priority: int = Field(default=3, description="1 (low) to 5 (high).")
    dependencies: list[str] = Field(default_factory=list, description="Ids of steps that must be done first.")
    files: list[str] = Field(default_factory=list, description="Workspace-relative files this step changes.")

    @field_validator("id", mode="before")
    @classmethod
    def _id_as_text(cls, value: object) -> object:
        return str(value) if isinstance(value, int) else value

    @field_validator("dependencies", mode="before")
    @classmethod
    def _deps_as_text(cls, value: object) -> object:
        if isinstance(value, list):
            return [str(v) if isinstance(v, int) else v for v in value]
        return value


class PlannerOutput(BaseModel):
    """A plan proposal."""

    approach: str = Field(default="", description="One sentence on the overall approach.")
    subtasks: list[PlannedStep] = Field(description="The steps, 1 to 3 of them.")
    required_packages: list[str] = Field(default_factory=list, description="Extra packages the change needs.")
