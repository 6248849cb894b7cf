"""What the failing tests call: the names read from their source, the suspects they mark or let in after the
spectrum's first ones, and the model's holes asked in a called function first."""

from __future__ import annotations

from pathlib import Path

from agent_core.search.driver.interleave import ranked_holes
from agent_core.search.evidence.called import CALLER_TESTS, called_names
from agent_core.search.evidence.spectrum import CALLED_EXTRA, Suspect, is_called, rank

TESTS_PY = '''\
import pytest
from pkg import funcs


class TestAsDict:
    def test_retains_type(self):
        c = Point(1, 2)
        assert funcs.asdict(c, retain=True) == {"x": 1}


@pytest.mark.parametrize("n", [1, 2])
def test_tuple(n):
    assert astuple(make(n))[0] == n
'''


def test_the_names_a_failing_test_calls_are_read_from_its_own_source(tmp_path: Path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_funcs.py").write_text(TESTS_PY)
    assert called_names(tmp_path, ["tests/test_funcs.py::TestAsDict::test_retains_type"]) == {"Point", "asdict"}
    assert called_names(tmp_path, ["tests/test_funcs.py::test_tuple[1]", "tests/test_funcs.py::test_tuple[2]",
                                   "tests/missing.py::test_x", "tests/test_funcs.py::test_gone"]) == {
        "astuple", "make", "__getitem__"}, "a decorator's call is not the test's; what cannot be read adds nothing"


def test_at_most_a_few_failing_tests_are_read(tmp_path: Path):
    body = "".join(f"def test_{i}():\n    f{i}()\n\n\n" for i in range(CALLER_TESTS + 3))
    (tmp_path / "test_many.py").write_text(body)
    names = called_names(tmp_path, [f"test_many.py::test_{i}" for i in range(CALLER_TESTS + 3)])
    assert names == {f"f{i}" for i in range(CALLER_TESTS)}


def test_a_function_runs_by_its_own_name_or_its_class_s_for_a_constructor():
    assert is_called("asdict", {"asdict"}) and is_called("Encoder.encode", {"encode"})
    assert is_called("Point.__init__", {"Point"}) and not is_called("Point.norm", {"Point"})
    assert not is_called("helper", {"asdict"})


FUNCS = "".join(f"def busy{i}(x):\n    return x + {i}\n\n\n" for i in range(12)) + "def asdict(x):\n    return x\n"


def test_a_called_function_below_the_first_suspects_comes_in_after_them_marked(tmp_path: Path):
    (tmp_path / "m.py").write_text(FUNCS)
    scores = {("m.py", 2 + 4 * i): 1.0 - i / 100 for i in range(12)}  # busy0..busy11, best first
    scores[("m.py", 50)] = 0.3  # asdict, run by the failing tests and many passing ones
    plain = rank(scores, tmp_path)
    assert len(plain) == 10 and "asdict" not in [s.function for s in plain]
    suspects = rank(scores, tmp_path, called={"asdict", "busy3"})
    assert [s.function for s in suspects][:10] == [s.function for s in plain], "the spectrum's order is kept"
    assert suspects[10].function == "asdict" and suspects[10].called and len(suspects) == 11
    assert suspects[3].as_dict()["called"] is True and "called" not in suspects[0].as_dict()
    many = rank(scores, tmp_path, called={"asdict", "busy10", "busy11"})
    assert [s.function for s in many[10:]] == ["busy10", "busy11"][:CALLED_EXTRA], "at most CALLED_EXTRA let in"


def test_the_model_s_holes_take_turns_between_the_spectrum_and_the_functions_the_tests_call():
    source = ("def deep(x):\n    y = x * 2\n    w = y + 1\n    return w\n\n\n"
              "def api(x):\n    z = deep(x)\n    return z\n")
    deep = Suspect("m.py", "deep", 1, 4, [2, 3, 4], 1.2, [1.2, 1.1, 1.0])
    api = Suspect("m.py", "api", 7, 9, [8, 9], 0.4, [0.4, 0.3])

    def lines(count: int) -> list[int]:
        return [h.first for h in ranked_holes([deep, api], {"m.py": source}, count) if h.kind == "line"]

    assert lines(3) == [2, 3, 4], "the spectrum's order alone"
    api.called = True
    assert lines(4) == [2, 8, 3, 9], "in turn: the spectrum's best line, the called function's best, ..."
    assert lines(5) == [2, 8, 3, 9, 4], "the called function's lines spent, the spectrum's go on"
    deep.called = True
    assert lines(3) == [2, 3, 4], "a line both rankings put first is cut once"


def test_operators_and_builtins_in_a_test_call_their_special_methods(tmp_path: Path):
    (tmp_path / "test_ops.py").write_text(
        "def test_ops():\n    s = make()\n    s += 'x'\n    t = s / 2\n    assert str(t)[0] == t\n")
    names = called_names(tmp_path, ["test_ops.py::test_ops"])
    assert {"make", "__iadd__", "__add__", "__radd__", "__truediv__", "__rtruediv__", "str", "__str__",
            "__getitem__"} <= names
    assert "__eq__" not in names, "comparisons are in every assert: left out"
