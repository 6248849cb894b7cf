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
- search: one to three lines copied exactly from the file, where the bug is
- replace: the corrected lines that take their place
Change only the lines that are wrong; keep everything else. Do not edit the tests.
No ``` fences inside the JSON. The shape of the answer:
{"edits": [{"path": "<file to change>", "search": "<the wrong lines, copied exactly>", "replace": "<the corrected lines>"}], "explanation": "<one sentence>"}
"""
