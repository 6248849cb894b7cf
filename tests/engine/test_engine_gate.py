"""Safety gate rules, as a table of snippets."""

from __future__ import annotations

import pytest

from agent_core.models import ChangeSet
from agent_core.pipeline.gate import scan_change_set, scan_source
from agent_core.workspace.changeset import file_change

WS = "/work/project"


@pytest.mark.parametrize(
    "code, rules",
    [
        ("eval('1+1')", ["eval"]),
        ("exec('x = 1')", ["exec"]),
        ("import os\nos.system('ls')", ["shell"]),
        ("import os\nos.popen('ls')", ["shell"]),
        ("import subprocess\nsubprocess.run('ls', shell=True)", ["shell-true"]),
        ("import subprocess\nsubprocess.Popen(['ls'], shell=False)", []),
        ("import subprocess\nsubprocess.run(['ls'])", []),
        ("import socket", ["network-import"]),
        ("import urllib.request", ["network-import"]),
        ("from http.client import HTTPConnection", ["network-import"]),
        ("import requests", ["network-import"]),
        ("open('/etc/passwd', 'w').write('x')", ["write-outside"]),
        ("open('/etc/passwd').read()", []),
        ("open('notes.txt', 'w')", []),
        (f"open('{WS}/out.txt', 'w')", []),
        ("from pathlib import Path\nPath('/tmp/x').write_text('y')", ["write-outside"]),
        ("import os\nos.remove('/var/log/syslog')", ["write-outside"]),
        ("import shutil\nshutil.rmtree('/home')", ["rmtree-absolute"]),
        ("import shutil\nshutil.rmtree('build')", []),
        ("def add(a, b):\n    return a + b", []),
        ("this is not python (", []),
    ],
)
def test_rules(code: str, rules: list[str]):
    assert [v.rule for v in scan_source("m.py", code, WS)] == rules


def test_violation_is_located():
    [v] = scan_source("pkg/m.py", "x = 1\ny = eval('2')\n", WS)
    assert (v.file, v.line, v.rule) == ("pkg/m.py", 2, "eval")


def test_only_new_violations_in_changed_python_count():
    old = "import socket\n\ndef f():\n    return 1\n"
    cs = ChangeSet(changes=[
        file_change("a.py", old, old.replace("return 1", "return eval('1')")),
        file_change("notes.md", None, "eval('x')\n"),
        file_change("gone.py", "eval('x')\n", None),
    ])
    assert [(v.file, v.rule) for v in scan_change_set(cs, WS)] == [("a.py", "eval")]
