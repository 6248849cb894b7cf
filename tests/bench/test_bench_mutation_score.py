"""bench/mutation_score.py's row and table: `gen-tests` on a small project (scripted endpoint, real sandbox)."""

from __future__ import annotations

import json
from pathlib import Path

from agent_core.settings import Settings
from bench.mutation_score import _table, gen_tests_row, main

SIGN = '''"""Signs, one of them wrong."""


def sign(x):
    """-1, 0 or 1.

    >>> sign(500)
    1
    """
    if x < 0:
        return -1
    if x == 0:
        return 0
    if x > 100:
        return 2
    return 1
'''
OLD_TEST = "from signs import sign\n\n\ndef test_positive():\n    assert sign(3) == 1\n"
TESTS = {
    "tests": [
        {"name": "test_sign_negative", "code": "from signs import sign\n\n\ndef test_sign_negative():\n"
         "    assert sign(-4) == -1\n", "kind": "pytest", "target": "sign", "rationale": "r"},
        {"name": "test_sign_documented", "code": "from signs import sign\n\n\ndef test_sign_documented():\n"
         "    assert sign(500) == 1\n", "kind": "pytest", "target": "sign", "rationale": "r"},
    ]
}


async def test_a_row_counts_kept_tests_suspected_bugs_and_the_deleted_project_tests(tmp_path: Path, scripted_llm):
    copy = tmp_path / "signs"
    (copy / "tests").mkdir(parents=True)
    (copy / "signs.py").write_text(SIGN)
    (copy / "tests" / "test_signs.py").write_text(OLD_TEST)
    scripted_llm.default("tester", json.dumps(TESTS))
    settings = Settings(base_url=scripted_llm.base_url, journal=False, mutation={"followup": False})
    row = await gen_tests_row(copy, "signs.py", "sign", settings, keep_tests=False)

    assert not (copy / "tests" / "test_signs.py").exists()  # the module's own tests are deleted first
    assert row["status"] == "ok", row["error"]
    # the code contradicts its documented example: a suspected bug, kept, killing no mutant (it fails anyway)
    assert (row["tests_written"], row["tests_kept"], row["suspected_bugs"]) == (2, 2, 1)
    assert row["killed_before"] == 0 and 0 < row["killed_after"] < row["mutants"]
    assert row["coverage_before"] == 0.0 and row["coverage_after"] > 50
    assert row["tokens"] > 0 and row["llm_calls"] == 1

    rows = [{"project": "p", "module": "signs.py", "function": "sign", **row}]
    saved = tmp_path / "rows.json"
    saved.write_text(json.dumps(rows))
    table = _table(rows, no_model=False)
    gain = round(100.0 * row["killed_after"] / row["mutants"], 1)
    assert f"| signs.py | sign | {row['mutants']} | 0.0 | {gain} |" in table
    assert "| 2 (1) / 2 |" in table and f"mean mutation score gain: {gain:.1f} points over 1 modules" in table
    assert main(["--table", str(saved)]) == 0
