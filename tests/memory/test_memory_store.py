"""The SQLite memory: recall by similarity, resolution of failures, and survival of a broken database."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from agent_core.memory.base import NullMemory
from agent_core.memory.embeddings import HashedNgramEmbedder
from agent_core.memory.factory import open_memory
from agent_core.memory.sqlite_store import SQLiteMemory
from agent_core.settings import load_settings


def test_embedding_is_deterministic_and_unit_length():
    e = HashedNgramEmbedder()
    a, b = e.embed(["AssertionError: assert 3 == 4", "AssertionError: assert 3 == 4"])
    assert np.allclose(a, b)
    assert abs(float(np.linalg.norm(a)) - 1.0) < 1e-5


@pytest.mark.parametrize(
    "query, related, unrelated",
    [
        ("ModuleNotFoundError: No module named 'requests'", "ModuleNotFoundError: No module named 'reqests'",
         "AssertionError in test_total: expected 10"),
        ("assertion failed test_paginate off by one page", "assertion failed test_paginate last page missing",
         "SyntaxError invalid syntax in setup.py"),
    ],
)
def test_similar_text_scores_higher_than_unrelated(query, related, unrelated):
    q, r, u = HashedNgramEmbedder().embed([query, related, unrelated])
    assert float(q @ r) > float(q @ u)


def test_failure_is_recalled_with_its_fix(tmp_path: Path):
    store = SQLiteMemory(tmp_path / "m.sqlite", threshold=0.5)
    store.record_failure("assertion|test_add|assert <n> == <n>", "AssertionError", "assert 3 == 4")
    store.record_failure("import|test_x|no module named <s>", "ImportError", "No module named 'foo'")
    store.resolve_failures(["assertion|test_add|assert <n> == <n>"], "- return a - b\n+ return a + b")
    hits = store.similar_failures("assertion|test_add|assert <n> == <n>", "assert 5 == 6")
    assert hits and hits[0].fix == "- return a - b\n+ return a + b"
    assert hits[0].error_type == "AssertionError"
    assert all(h.similarity >= 0.5 for h in hits)
    # A reopened store sees the same rows (writes were committed).
    again = SQLiteMemory(tmp_path / "m.sqlite", threshold=0.5)
    assert again.similar_failures("assertion|test_add|assert <n> == <n>", "x")[0].fix is not None


def test_threshold_filters_patterns(tmp_path: Path):
    store = SQLiteMemory(tmp_path / "m.sqlite", threshold=0.7)
    store.record_pattern("fix", "fix the off-by-one in paginate", "t1: adjust range end", ["pages.py"], "fixed")
    assert store.similar_patterns("fix the off-by-one in paginate")[0].files == ["pages.py"]
    assert store.similar_patterns("translate the README to French") == []


def test_corrupt_database_is_reported_and_ignored(tmp_path: Path):
    path = tmp_path / "m.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    errors: list[str] = []
    store = SQLiteMemory(path, on_error=errors.append)
    store.record_failure("sig", "AssertionError", "boom")
    assert store.similar_failures("sig", "boom") == []
    assert len(errors) == 1 and "continuing without memory" in errors[0]


def test_locked_database_does_not_stop_writes_or_reads(tmp_path: Path):
    path = tmp_path / "m.sqlite"
    SQLiteMemory(path).record_failure("sig", "AssertionError", "boom")
    locker = subprocess.Popen(
        [sys.executable, "-c",
         "import sqlite3,sys,time; c=sqlite3.connect(sys.argv[1], isolation_level=None);"
         "c.execute('BEGIN EXCLUSIVE'); print('locked', flush=True); time.sleep(30)", str(path)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert locker.stdout.readline().strip() == "locked"
        errors: list[str] = []
        store = SQLiteMemory(path, on_error=errors.append, busy_timeout_s=0.2)
        started = time.monotonic()
        store.record_failure("sig2", "TypeError", "bad")
        store.similar_failures("sig", "boom")
        assert time.monotonic() - started < 5
        assert errors and "locked" in errors[0]
    finally:
        locker.kill()
        locker.wait()


def test_factory_respects_settings(tmp_path: Path):
    s = load_settings(None, overrides={"memory": {"enabled": False}}, env={})
    assert isinstance(open_memory(s), NullMemory)
    s = load_settings(None, overrides={"memory": {"path": str(tmp_path / "x.sqlite")}}, env={})
    store = open_memory(s)
    store.record_pattern("fix", "g", "p", [], "fixed")
    assert sqlite3.connect(tmp_path / "x.sqlite").execute("SELECT count(*) FROM patterns").fetchone() == (1,)


def test_searching_empty_tables_finds_nothing_without_error(tmp_path: Path):
    errors: list[str] = []
    store = SQLiteMemory(tmp_path / "m.sqlite", on_error=errors.append)
    assert store.similar_patterns("fix add") == []
    assert store.similar_failures("assertion|AssertionError|assert <num> == <num>|t::x", "assert 5 == 6") == []
    store.record_failure("sig", "AssertionError", "assert 5 == 6")
    assert store.similar_patterns("fix add") == [] and errors == []
    assert store.similar_failures("sig", "assert 5 == 6")[0].signature == "sig"
