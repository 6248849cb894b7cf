"""The verifier's typed answer: a score against the goal, feedback, and concrete improvements."""

from __future__ import annotations

import re

from pydantic import BaseModel, Field, field_validator


class Evaluation(BaseModel):
    """How well the change meets the goal, by the model's reading of the diff."""

    score: float = Field(ge=0, le=1, description="0 (does not meet the goal at all) to 1 (meets it fully).")
    feedback: str = Field(default="", description="One or two sentences: what the change does or misses for the goal.")
    improvements: list[str] = Field(
        default_factory=list, description="Concrete changes that would meet the goal better."
    )

    @field_validator("score", mode="before")
    @classmethod
    def _lenient_score(cls, value: object) -> object:
        """'0.8', '8/10', '80%' and 8 (out of 10) read as 0.8: small models write scores every way."""
        if isinstance(value, str):
            match = re.search(r"(\d+(?:\.\d+)?)\s*(%|/\s*10\b)?", value)
            if not match:
                return value
            number = float(match.group(1))
            unit = (match.group(2) or "").replace(" ", "")
            value = number / 100 if unit == "%" else number / 10 if unit == "/10" else number
        if isinstance(value, (int, float)) and 1 < value <= 10:
            return value / 10
        if isinstance(value, (int, float)) and 10 < value <= 100:
            return value / 100
        return value
