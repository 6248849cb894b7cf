"""The explainer's prompt: what was wrong, what changed, which test now passes."""

SYSTEM = "You explain a verified code change to the developer who will review it. Answer in plain text."

REQUIRED_PLACEHOLDERS = ("diff",)

TEMPLATE = """The goal was:
{goal}

Before the change:
{failure}

The change (verified: the tests pass with it):
{diff}

Tests that now pass:
{tests}

In one or two short sentences, say what was wrong, what the change does and which test now passes.
No code, no lists, no preamble.
"""
