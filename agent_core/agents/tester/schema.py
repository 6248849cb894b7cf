"""The tester's typed answers: generated test functions, and a verdict on a failing one."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator


class GeneratedTest(BaseModel):
    """One test function the model wrote."""

    name: str = Field(description="Function name, starting with test_.")
    code: str = Field(description="Complete Python code of the test: its imports, then the def test_...(): function.")
    kind: Literal["pytest", "hypothesis"] = Field(
        default="pytest", description="pytest for example-based tests, hypothesis for @given property tests."
    )
    target: str = Field(default="", description="Name of the function or class under test.")
    rationale: str = Field(default="", description="One sentence: what behaviour the test checks.")

    @field_validator("kind", mode="before")
    @classmethod
    def _lenient_kind(cls, value: object) -> object:
        if isinstance(value, str):
            return "hypothesis" if "hypothesis" in value.lower() else "pytest"
        return value


class TesterOutput(BaseModel):
    """The tests for one target."""

    tests: list[GeneratedTest] = Field(description="The test functions, 1 to 4 of them.")


class Verdict(BaseModel):
    """Whether a failing test shows a bug in the code or is itself wrong."""

    verdict: Literal["code_bug", "test_wrong"] = Field(
        description="code_bug when the code breaks what its docstring promises; test_wrong otherwise."
    )
    reason: str = Field(default="", description="One sentence explaining the verdict.")

    @field_validator("verdict", mode="before")
    @classmethod
    def _lenient_verdict(cls, value: object) -> object:
        if isinstance(value, str):
            text = value.lower().replace("-", "_").replace(" ", "_")
            return "code_bug" if "bug" in text or text == "code" else "test_wrong"
        return value
