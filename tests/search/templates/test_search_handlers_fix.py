"""Exceptions in the wrong shape, fixed by the search (templates/handlers.py): `agentls fix` on real projects, a real
sandbox, the scripted endpoint with no answer queued (a model call would fail the run: zero tokens).

The case behind the template (bench/history_corpus):

The cases of bench/history_corpus behind the first two: marshmallow's `from_timestamp_overflow`
(`fromtimestamp` raised OverflowError where every caller catches ValueError; marshmallow calls
`from_timestamp` through a table, so the handlers around the suspicious lines count too) and click's
`abort_keeps_cause`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core.search.candidate import Mutant
from agent_core.search.driver.ranking import arrange, templates_for
from agent_core.search.templates.table import template_mutants
from engine_support import journal_records, make_project

FAST = "[search]\nmutant_timeout_s = 2\n"

STAMPS = {  # marshmallow 3.20's fix: the platform's OverflowError leaves from_timestamp, whose callers catch
    # ValueError; a handler that returns None instead is green for the caller's test, not for from_timestamp's own
    "stamps.py": (
        "import datetime as dt\n\n\n"
        "def from_timestamp(value):\n"
        "    return dt.datetime.fromtimestamp(value, tz=dt.timezone.utc).replace(tzinfo=None)\n\n\n"
        "def parse(value):\n"
        "    try:\n"
        "        return from_timestamp(value)\n"
        "    except (TypeError, ValueError):\n"
        "        return None\n"
    ),
    "test_stamps.py": (
        "import datetime as dt\n\nimport pytest\n\nfrom stamps import from_timestamp, parse\n\n\n"
        "def test_epoch():\n    assert parse(0) == dt.datetime(1970, 1, 1)\n\n\n"
        "def test_text_is_not_a_timestamp():\n    assert parse('x') is None\n\n\n"
        "def test_a_huge_timestamp_is_a_value_error():\n"
        "    with pytest.raises(ValueError):\n        from_timestamp(1e20)\n\n\n"
        "def test_parse_of_a_huge_timestamp():\n    assert parse(1e20) is None\n"
    ),
    ".agentls.toml": FAST,
}
PROMPT = {  # click 8.1.4's fix: the handler re-raised Abort `from None`, and the cause was lost
    "prompt.py": (
        "class Abort(Exception):\n    pass\n\n\n"
        "def run(action):\n"
        "    try:\n"
        "        return action()\n"
        "    except (EOFError, KeyboardInterrupt):\n"
        "        raise Abort() from None\n"
    ),
    "test_prompt.py": (
        "import pytest\n\nfrom prompt import Abort, run\n\n\n"
        "def test_value():\n    assert run(lambda: 3) == 3\n\n\n"
        "def test_abort_keeps_the_cause():\n"
        "    def action():\n        raise EOFError('closed')\n\n"
        "    with pytest.raises(Abort) as info:\n        run(action)\n"
        "    assert isinstance(info.value.__cause__, EOFError)\n"
    ),
    ".agentls.toml": FAST,
}


@pytest.fixture(autouse=True)
def _search_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTLS_SEARCH", "1")


def _fixed_by_search(tmp_path: Path, scripted_llm, run_fix, files: dict[str, str]) -> tuple[Path, dict]:
    project = make_project(tmp_path / "proj", files)
    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")
    assert run.code == 0, run.stderr
    assert run.json["status"] == "fixed" and run.json["usage"]["llm_calls"] == 0, run.json
    assert scripted_llm.requests == []
    search = next(r for r in journal_records(project, run.json["run_id"]) if r["type"] == "search")
    return project, search


@pytest.mark.e2e
def test_an_exception_is_raised_again_as_the_one_the_callers_catch(tmp_path: Path, scripted_llm, run_fix):
    project, search = _fixed_by_search(tmp_path, scripted_llm, run_fix, STAMPS)

    assert search["found"]["description"] == "`OverflowError` raised again as `ValueError`, which the callers catch"
    namespace: dict = {}
    exec((project / "stamps.py").read_text(), namespace)
    with pytest.raises(ValueError) as info:
        namespace["from_timestamp"](1e20)
    assert isinstance(info.value.__cause__, OverflowError), "the original is kept as the cause"
    assert search["found"]["line"] == 5


@pytest.mark.e2e
def test_a_handler_that_drops_the_cause_keeps_it(tmp_path: Path, scripted_llm, run_fix):
    project, search = _fixed_by_search(tmp_path, scripted_llm, run_fix, PROMPT)

    assert (project / "prompt.py").read_text() == PROMPT["prompt.py"].replace(
        "except (EOFError, KeyboardInterrupt):", "except (EOFError, KeyboardInterrupt) as exc:").replace(
        "from None", "from exc"), "the author's fix, with the handler's name spelled `exc`"
    assert search["found"]["line"] == 8 and "was `from None`" in search["found"]["description"]


def test_the_cause_takes_the_name_the_modules_other_handlers_use():
    source = PROMPT["prompt.py"] + (
        "\n\ndef parse(text):\n    try:\n        return int(text)\n    except ValueError as e:\n"
        "        raise Abort() from e\n")
    found = [m for m in template_mutants("prompt.py", source, 9) if "was `from None`" in m.description]
    assert [(m.line, m.text) for m in found] == [
        (8, "    except (EOFError, KeyboardInterrupt) as e:\n        raise Abort() from e")]


def test_a_function_reached_through_a_table_raises_what_the_try_around_the_suspicious_call_catches():
    utils = ("import datetime as dt\n\n\ndef from_timestamp(value):\n"
             "    return dt.datetime.fromtimestamp(value, tz=dt.timezone.utc)\n")
    fields = ("from . import utils\n\nFORMATS = {'timestamp': utils.from_timestamp}\n\n\n"
              "def load(value, kind):\n    try:\n        return FORMATS[kind](value)\n"
              "    except (TypeError, ValueError):\n        return None\n")
    ranked = [(1.0, "utils.py", 5), (0.5, "fields.py", 8)]
    templates = templates_for(Path("."), {"utils.py": utils, "fields.py": fields}, ranked, ["OverflowError"])
    found = [m.text.splitlines()[-1].strip() for m in templates if "raised again" in m.description]
    assert found[0] == "raise ValueError(str(exc)) from exc", found
    assert "raise TypeError(str(exc)) from exc" in found


def test_what_the_failure_asks_for_is_tried_before_every_single_edit():
    singles = [Mutant("prompt.py", 7, "        return action() + 1", "`+ 1` added", 1)]
    templates = template_mutants("prompt.py", PROMPT["prompt.py"], 9)
    order = arrange(singles, templates, {"prompt.py": PROMPT["prompt.py"]}, 100)
    assert "was `from None`" in order[0].description and order[1] == singles[0]
