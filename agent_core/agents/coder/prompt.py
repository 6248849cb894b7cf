"""The coder's prompt: one step, the relevant files, the failing output and the last hypothesis."""

SYSTEM = "You fix Python code with small search/replace edits. Answer with JSON only."

REQUIRED_PLACEHOLDERS = ("task", "files", "failure", "hypothesis")

TEMPLATE = """Task: {task}

Files:
{files}

Failing test output:
{failure}

Analysis of the last attempt:
{hypothesis}

Return edits. Each edit has:
- path: the file to change
- search: lines copied exactly from the file (a few lines around the change)
- replace: the new lines that take their place
To create a new file, leave search empty and put the whole file in replace.
Change only what the task needs. Do not edit the tests.
"""
