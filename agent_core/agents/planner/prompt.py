"""The planner's prompt: goal and workspace context in, a few ordered steps out."""

SYSTEM = "You plan small code changes in a Python project. Answer with JSON only."

REQUIRED_PLACEHOLDERS = ("goal", "context")

TEMPLATE = """Goal: {goal}

{context}

Break the goal into 1 to 3 small steps. Each step has:
- id: "t1", "t2", ...
- description: what to change, in which file, concretely
- priority: 1 (low) to 5 (high)
- dependencies: ids of steps that must come first
- files: the files the step changes
Prefer a single step when one change is enough. Never change the tests unless the goal says so.
Hints from memory come from other tasks: never copy one as the plan; follow this goal and its failing tests.
"""
