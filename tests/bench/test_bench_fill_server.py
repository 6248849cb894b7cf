"""bench/fill_server.py cuts again the holes a run's JSON names by their labels, in the order they were asked."""

from __future__ import annotations

import pytest

from agent_core.local_model.serve import ENV_SERVER_PYTHON, server_python
from agent_core.search import holes_at, shown
from bench.fill_server import _server_python, hole_named, main

SOURCE = '''import os


def total(items, scale=1):
    out = 0
    for item in items:
        if item.size > 0 and item.kept:
            out += item.size * scale
    return out


def name(path):
    return os.path.basename(path)
'''


def test_every_hole_a_line_cuts_is_found_again_by_its_label_and_its_shown_twin_too():
    holes = [h for line in (5, 7, 8, 9, 13) for h in holes_at("m.py", SOURCE, line)]
    asked = holes + [shown(h) for h in holes if not (h.is_slot or h.inline or h.kind == "shown")]
    assert {h.kind for h in asked} >= {"line", "shown", "after", "before", "and"}
    for hole in asked:
        again = hole_named("m.py", SOURCE, hole.label)
        assert again is not None and again.label == hole.label, hole.label
        assert (again.first, again.last, again.before, again.after) == (hole.first, hole.last, hole.before, hole.after)


def test_a_label_no_line_near_it_cuts_is_not_found():
    assert hole_named("m.py", SOURCE, "line 40 (shown)") is None
    assert hole_named("m.py", SOURCE, "the whole module") is None


def test_another_build_is_named_by_its_python_and_runs_only_the_server_it_is_asked_for(monkeypatch, capsys):
    """`--against build` needs `--python` (and only it takes one); the server started inside `_server_python`
    runs on that interpreter (serve.server_python), and the setting before it comes back after."""
    for argv in (["--against", "build"], ["--against", "no-kept", "--python", "/usr/bin/python3"]):
        with pytest.raises(SystemExit) as refused:
            main([*argv, "--run", "unused.json"])
        assert refused.value.code == 2
        assert "--python goes with --against build" in capsys.readouterr().err
    monkeypatch.setenv(ENV_SERVER_PYTHON, "/opt/before/python")
    with _server_python("/opt/other/python"):
        assert server_python() == "/opt/other/python"
    assert server_python() == "/opt/before/python"
    with _server_python(None):
        assert server_python() == "/opt/before/python"
