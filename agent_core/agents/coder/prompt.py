"""The coder's prompt: the files, the failing output, what was learned so far, then the step.

Short on purpose: the bundled 1.5B model reads about 30 prompt tokens a
second here, and every token counts against the token budget. The files come
first so consecutive calls share a prefix the server can reuse; the step and
the answer's form come last, nearest the answer. `{hypothesis}` is empty on
a first attempt and otherwise starts and ends with a blank line.

The answer is code, not JSON: each changed function written out complete in
a fenced block. Measured on the 1.5B model, that fixed bugs the same model
got wrong when asked for search/replace edits inside a JSON string (see
docs/benchmarks.md). agents/coder/answer.py reads it.
"""

SYSTEM = "You fix bugs in Python code."

# Ends each suspicious line of the code shown (pipeline/focus.py); answer.py strips it from the answer.
SUSPICIOUS_MARK = "# <- suspicious"

REQUIRED_PLACEHOLDERS = ("task", "files", "failure", "hypothesis")

TEMPLATE = """{files}

Failing tests:
{failure}
{hypothesis}
Task: {task}
Answer with the corrected code only: each function you change, complete, in a ```python block under a line "### <file>". Leave out everything you do not change.
"""
