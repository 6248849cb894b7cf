"""The coder's prompt: the files, the failing output, what was learned so far, then the step.

Short on purpose: the bundled 1.5B model reads about 30 prompt tokens a
second here, and every token counts against the token budget. The files come
first so consecutive calls share a prefix the server can reuse; the step and
the answer's fields come last, nearest the answer (the JSON shape itself is
added by the LLM layer). `{hypothesis}` is empty on
a first attempt and otherwise starts and ends with a blank line.
"""

SYSTEM = "You fix bugs in Python code. Answer with JSON only."

REQUIRED_PLACEHOLDERS = ("task", "files", "failure", "hypothesis")

TEMPLATE = """{files}

Failing tests:
{failure}
{hypothesis}
Task: {task}
Answer with edits. Each edit has
- path: the file to change
- search: the wrong lines, copied exactly from the file
- replace: the corrected lines, or the whole corrected function
"""
