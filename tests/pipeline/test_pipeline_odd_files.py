"""Odd files in the project: a `.py` file that is not UTF-8 never crashes a run."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from engine_support import FIX_EDIT, make_project, snapshot


def test_latin1_file_with_a_coding_cookie_is_read_in_its_encoding(project: Path, scripted_llm, run_fix):
    (project / "legacy.py").write_bytes(b"# -*- coding: latin-1 -*-\nNAME = '\xe9t\xe9'\n")
    scripted_llm.add("coder", FIX_EDIT)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.code == 0, run.stderr
    assert run.json["status"] == "fixed"
    prompt = json.dumps(scripted_llm.requests_for("coder")[0]["messages"], ensure_ascii=False)
    assert "NAME = 'été'" in prompt, "decoded as Python would, by its cookie"


def test_undecodable_file_is_left_out_of_the_prompt_with_a_note(project: Path, scripted_llm, run_fix):
    (project / "broken.py").write_bytes(b"NAME = '\xe9t\xe9'\n")  # latin-1 bytes, no cookie: not valid Python source
    scripted_llm.add("coder", FIX_EDIT)
    before = snapshot(project)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")

    assert run.code == 0, run.stderr
    assert run.json["status"] == "fixed" and run.json["files_changed"] == ["calc.py"]
    assert "Traceback" not in run.stderr
    prompt = scripted_llm.requests_for("coder")[0]["messages"][-1]["content"]
    assert "### broken.py\n```python\n# (not shown: broken.py is not valid utf-8 text (byte 8)" in prompt
    assert snapshot(project)["broken.py"] == before["broken.py"]


def test_an_edit_to_a_latin1_file_is_applied_in_latin1(tmp_path: Path, scripted_llm, run_fix):
    project = make_project(tmp_path / "legacy", {"test_greet.py": "from greet import hello\n\n\ndef test_hello():\n"
                                                  "    assert hello() == 'h\\xe9llo'\n"})
    (project / "greet.py").write_bytes(b"# -*- coding: latin-1 -*-\ndef hello():\n    return 'hallo'\n")
    scripted_llm.add("coder", {"edits": [{"path": "greet.py", "search": "'hallo'", "replace": "'h\u00e9llo'"}]})

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")

    assert run.code == 0, run.stderr
    assert run.json["status"] == "fixed"
    assert (project / "greet.py").read_bytes() == b"# -*- coding: latin-1 -*-\ndef hello():\n    return 'h\xe9llo'\n"


def test_a_file_created_by_apply_gets_the_umask_default_mode(project: Path, scripted_llm, run_fix):
    scripted_llm.add("coder", {"edits": [FIX_EDIT["edits"][0],
                                         {"path": "notes/news.py", "search": "", "replace": "NEWS = 1\n"}]})
    old = os.umask(0o027)
    try:
        run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")
    finally:
        os.umask(old)

    assert run.code == 0, run.stderr
    assert (project / "notes" / "news.py").read_text() == "NEWS = 1\n"
    assert stat.S_IMODE((project / "notes" / "news.py").stat().st_mode) == 0o640


def test_a_file_name_that_is_not_utf8_does_not_crash_the_run(project: Path, scripted_llm, run_fix):
    with open(os.path.join(os.fsencode(project), b"caf\xe9.py"), "wb") as handle:
        handle.write(b"X = 1\n")
    scripted_llm.add("coder", FIX_EDIT)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.code == 0, run.stderr
    assert run.json["status"] == "fixed"
    assert "### caf?.py" in scripted_llm.requests_for("coder")[0]["messages"][-1]["content"]


def test_a_named_pipe_in_the_project_is_left_out_of_the_copy(project: Path, scripted_llm, run_fix):
    os.mkfifo(project / "pipe.py")
    scripted_llm.add("coder", FIX_EDIT)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.code == 0, run.stderr
    assert run.json["status"] == "fixed"
    assert stat.S_ISFIFO(os.lstat(project / "pipe.py").st_mode)
