"""The reflector's prompt: why did the tests fail, and what exactly to change next."""

SYSTEM = "You diagnose failing Python tests. Answer with JSON only."

REQUIRED_PLACEHOLDERS = ("failure", "files")

TEMPLATE = """The tests still fail after the last change.

Failure ({category}):
{failure}

Last change:
{diff}

Files:
{files}

Similar past failures:
{past}

Say what is wrong and the one change that fixes it:
- hypothesis: the cause, in one or two sentences
- file: the file to change
- change: the specific change (which line, what it should become)
- confidence: low, medium or high
"""
