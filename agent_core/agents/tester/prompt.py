"""The tester's prompts: short, concrete, one job each (a 1.5B model must follow them).

`TEMPLATE` (writing tests) is the one users may override; it must keep the
placeholders in `REQUIRED_PLACEHOLDERS`. The repair and judge prompts are
fixed.
"""

SYSTEM = "You write small, correct pytest tests for Python code. Answer with JSON only."

REQUIRED_PLACEHOLDERS = ("source", "import_line")

TEMPLATE = """Write pytest tests for this Python code.

Module {module}. Import what you test with exactly:
{import_line}
The module itself imports:
{imports}

Code under test ({target}):
```python
{source}
```
{existing}
Write 1 to 4 short test functions. Rules:
- each test is one function named test_<something>
- "code" holds the test's imports (including the import line above) and then the function
- assert exact values that the docstring and the code's intent promise
- kind "hypothesis" (with @given) only when the inputs have a clear domain, else "pytest"
Answer as JSON: {"tests": [{"name": "test_...", "code": "...", "kind": "pytest", "target": "{target}", "rationale": "..."}]}
"""

REPAIR_TEMPLATE = """This pytest test for {target} does not run. Fix the TEST, not the code under test.

Import what you test with exactly:
{import_line}

Code under test:
```python
{source}
```

Test:
```python
{test_code}
```

Error:
{error}

Answer as JSON: {"tests": [{"name": "{test_name}", "code": "...", "kind": "{kind}", "target": "{target}", "rationale": "..."}]}
"""

JUDGE_TEMPLATE = """A test of {target} fails. Decide who is wrong.

Docstring of {target}:
{docstring}

Code under test:
```python
{source}
```

Failing test:
```python
{test_code}
```

Failure:
{failure}

Answer "code_bug" if the code breaks what its docstring or name clearly promises and the test expects the promised result.
Answer "test_wrong" if the test expects something the docstring does not promise.
Answer as JSON: {"verdict": "code_bug" or "test_wrong", "reason": "..."}
"""
