"""One parser for the engine that survives CPython's shared AST recursion counter (analysis/pysyntax.py)."""

from __future__ import annotations

import ast
import gc
import sys
import threading
from pathlib import Path

import pytest

from agent_core.analysis import pysyntax

SOURCE = Path(ast.__file__).read_text(encoding="utf-8")  # a large module: its conversion runs the collector


class _ParsesWhenCollected:
    """Garbage only the collector frees, whose finalizer parses (as a traceback formatted in a finalizer does)."""

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        ast.parse("x = (1, [2, {3: 4}])\n" * 5)


def _garbage(count: int = 400) -> None:
    """Cycles the collector has not seen yet, fewer than its first threshold: the next collection, in the middle
    of the next parse (whose conversion allocates far more), finalizes them."""
    gc.collect()
    for _ in range(min(count, gc.get_threshold()[0] // 2)):
        _ParsesWhenCollected()


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="shown on the interpreter CI and agentls run on")
def test_the_interpreter_bug_is_real_here():
    _garbage()
    with pytest.raises(SystemError, match="recursion depth mismatch"):
        ast.parse(SOURCE)


def test_a_parse_a_finalizer_interrupts_with_a_parse_still_gives_the_tree():
    expected = ast.dump(ast.parse(SOURCE))
    for _ in range(5):
        _garbage()
        assert ast.dump(pysyntax.parse(SOURCE)) == expected


def test_parses_on_several_threads_with_finalizers_all_succeed():
    expected = ast.dump(ast.parse(SOURCE))
    failures: list[BaseException] = []

    def work() -> None:
        for _ in range(3):
            _garbage(300)
            try:
                if ast.dump(pysyntax.parse(SOURCE, "ast.py")) != expected:
                    failures.append(ValueError("a different tree"))
            except (SystemError, RecursionError) as exc:  # reported by the main thread
                failures.append(exc)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert failures == [] and not any(t.is_alive() for t in threads)


def test_syntax_errors_and_expressions_are_as_ast_gives_them():
    with pytest.raises(SyntaxError):
        pysyntax.parse("def broken(:\n")
    assert isinstance(pysyntax.parse_expression("a + 1").body, ast.BinOp)
    assert pysyntax.literal_eval("  (1, 'two', [3.0])") == (1, "two", [3.0])
