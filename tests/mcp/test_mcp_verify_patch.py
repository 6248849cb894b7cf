"""`verify_patch` over stdio: another agent's diff judged on a shadow copy by the project's own tests."""

from __future__ import annotations

from mcp_support import CALC, FIX_ADD

BREAK_MUL = "--- a/calc.py\n+++ b/calc.py\n@@ -5,2 +5,2 @@\n def mul(a, b):\n-    return a * b\n+    return a ** b\n"
BOTH = FIX_ADD + BREAK_MUL.replace("--- a/calc.py\n+++ b/calc.py\n", "")
EDIT_TEST = ("--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n@@ -4,2 +4,2 @@\n def test_add():\n"
             "-    assert add(2, 3) == 5\n+    assert add(2, 3) == -1\n")
FILES = {**CALC, "pytest.ini": "[pytest]\npython_files = test_*.py check_*.py\n",
         "check_calc.py": "from calc import mul\n\n\ndef test_mul_one():\n    assert mul(1, 1) == 1\n"}
EDIT_CHECK = ("--- a/check_calc.py\n+++ b/check_calc.py\n@@ -5 +5 @@\n-    assert mul(1, 1) == 1\n"
              "+    assert mul(1, 1) == 2\n")
NEW_CONFTEST = "--- /dev/null\n+++ b/tests/conftest.py\n@@ -0,0 +1 @@\n+collect_ignore = ['test_calc.py']\n"


def _tree(project):
    return {p.relative_to(project).as_posix(): p.read_bytes() for p in sorted(project.rglob("*")) if p.is_file()}


async def test_a_diff_is_verified_refused_or_named_and_only_a_verified_one_is_applied(mcp_session):
    async with mcp_session(FILES) as s:
        before = _tree(s.project)
        result = await s.call("verify_patch", project=str(s.project), diff=FIX_ADD)
        assert not result.is_error, result.content
        data = result.structured_content
        assert data["verified"] is True and data["refused"] is None and data["applied"] is False
        assert data["tests"] == {"passed": 3, "failed": 0, "errors": 0, "skipped": 0}
        assert data["baseline"]["failed"] == 1
        assert data["changed_outcomes"] == [{"nodeid": "tests/test_calc.py::test_add", "before": "failed",
                                             "after": "passed"}]
        assert result.content[0].text.startswith("verified: 3 passed")
        assert _tree(s.project) == before, "verifying never writes the workspace"

        for diff, path in ((EDIT_TEST, "tests/test_calc.py"), (NEW_CONFTEST, "tests/conftest.py")):
            refused = await s.call("verify_patch", project=str(s.project), diff=diff, apply=True)
            data = refused.structured_content
            assert not refused.is_error and data["verified"] is False and data["tests"] is None, refused.content
            assert data["refused"].startswith(path) and data["applied"] is False
        collected = await s.call("verify_patch", project=str(s.project), diff=EDIT_CHECK, apply=True)
        data = collected.structured_content  # not a test file by name: by what the project's pytest collects
        assert data["verified"] is False and data["refused"].startswith("check_calc.py holds tests"), data
        assert _tree(s.project) == before, "a refused diff is never written"

        broken = await s.call("verify_patch", project=str(s.project), diff=BOTH, apply=True)
        data = broken.structured_content
        assert data["verified"] is False and data["applied"] is False and data["refused"] is None
        assert {"nodeid": "tests/test_calc.py::test_mul", "before": "passed", "after": "failed"} in \
            data["changed_outcomes"]
        assert [f["nodeid"] for f in data["failures"]] == ["tests/test_calc.py::test_mul"]
        assert "now failing: tests/test_calc.py::test_mul" in broken.content[0].text
        assert _tree(s.project) == before, "an unverified diff is never written"

        fixed = await s.call("verify_patch", project=str(s.project), diff=FIX_ADD, apply=True)
        assert fixed.structured_content["verified"] is True and fixed.structured_content["applied"] is True
        assert (s.project / "calc.py").read_text() == CALC["calc.py"].replace("a - b", "a + b")
        assert (s.project / "tests" / "test_calc.py").read_text() == CALC["tests/test_calc.py"]
