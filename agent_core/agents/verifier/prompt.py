"""The verifier's prompt: the goal, the verified diff and the test outcome in; a score and feedback out.

Overridable as `prompts.verifier`; the override must keep `{goal}` and `{diff}`.
"""

SYSTEM = "You review a code change against the goal it was made for. Answer with JSON only."

REQUIRED_PLACEHOLDERS = ("goal", "diff")

TEMPLATE = """The goal:
{goal}

The change (the project's tests pass with it):
{diff}

Tests: {tests}

Score from 0 to 1 how fully the change meets the goal: 1 when it does everything the goal asks, lower for each
part it misses or gets wrong. Judge only the goal, not style. A change accepted needs a score of at least {threshold}.
Answer as JSON: {"score": 0.0, "feedback": "one or two sentences", "improvements": ["...", "..."]}
"""
