"""split_code: a generated test that calls the target without importing it gets the import line it was told to use."""

from __future__ import annotations

import pytest

from agent_core.gentests.testfile import BadTestCode, split_code

IMPORT = "from toolz.itertoolz import partition_all, take"
FORGOT = "def test_p():\n    assert list(partition_all(2, [1, 2, 3])) == [(1, 2), (3,)]\n"


@pytest.mark.parametrize(
    "code, imports",
    [
        (FORGOT, [IMPORT]),  # the model dropped the line: added
        ("from toolz import partition_all\n\n\n" + FORGOT, ["from toolz import partition_all"]),  # its own path
        ("import toolz\n\n\ndef test_p():\n    assert toolz.partition_all\n", ["import toolz"]),  # no bare name used
        ("def test_p():\n    partition_all = list\n    assert partition_all([]) == []\n", []),  # a local name
        ("def test_p():\n    assert list(pytest.approx(1)) or partition_all\n", ["import pytest", IMPORT]),
    ],
)
def test_the_target_import_is_added_only_when_a_name_it_provides_is_used_unbound(code, imports):
    assert split_code(code, "test_p", IMPORT).imports == imports


def test_without_an_import_line_nothing_is_added():
    assert split_code(FORGOT, "test_p").imports == []


def test_pytest_raises_is_not_taken_for_a_hypothesis_strategy():
    code = "def test_p():\n    with pytest.raises(ValueError):\n        partition_all(0, [])\n"
    assert split_code(code, "test_p", IMPORT).imports == ["import pytest", IMPORT]
    given = "@given(st.integers())\ndef test_p(n):\n    assert partition_all\n"
    assert "from hypothesis import strategies as st" in split_code(given, "test_p").imports


def test_a_doctest_traceback_copied_into_an_assertion_is_cut_off_and_the_assertions_before_it_stand():
    code = (
        "def test_p():\n"
        "    assert list(partition_all(2, [1])) == [(1,)]\n"
        "    assert list(partition_all(2, [])) == []\n"
        "    assert partition_all(0, []) == Traceback (most recent call last):\n"
        "        ...\n"
        "    ValueError: n\n"
    )
    split = split_code(code, "test_p", IMPORT)
    assert split.body == "\n".join(code.splitlines()[:3]) and split.imports == [IMPORT]
    with pytest.raises(BadTestCode, match="SyntaxError"):  # nothing asserted before the error: not salvaged
        split_code("def test_p():\n    x = 1\n    assert x == Traceback (most\n", "test_p")


TIMEUTILS_IMPORTS = [  # boltons/timeutils.py's own imports, as the target context carries them
    "from datetime import tzinfo, timedelta, date, datetime, timezone",
    "import re",
    "from .typeutils import make_sentinel",
]
TARGET = "from boltons.timeutils import relative_time"
RELATIVE = (  # what the bundled model wrote for boltons' relative_time, 12 times over, never importing datetime
    "def test_p():\n"
    "    now = datetime.now(timezone.utc).replace(tzinfo=None)\n"
    "    assert relative_time(now - timedelta(days=1), now) == '1 day ago'\n"
)


@pytest.mark.parametrize(
    "code, module_imports, imports",
    [
        (RELATIVE, TIMEUTILS_IMPORTS, [TARGET, "from datetime import tzinfo, timedelta, date, datetime, timezone"]),
        (RELATIVE, [], [TARGET, "import datetime"]),  # no module import of it: the stdlib module of that name
        ("def test_p():\n    assert math.isclose(relative_time(1), 1.0)\n", TIMEUTILS_IMPORTS, [TARGET, "import math"]),
        ("def test_p():\n    assert make_sentinel()\n", TIMEUTILS_IMPORTS, []),  # relative: means nothing here
        ("def test_p():\n    assert unknown_name\n", TIMEUTILS_IMPORTS, []),  # nothing provides it: left to fail
        (  # dateutil's easter.py does `import datetime`; the bundled model wrote bare `date(...)`
            "def test_p():\n    assert relative_time(2024) == date(2024, 3, 31)\n", ["import datetime"],
            [TARGET, "from datetime import date"],
        ),
        ("def test_p():\n    assert relative_time(2024) == date(2024, 3, 31)\n", ["import this"], [TARGET]),
        (  # dateutil's utils.py: `from datetime import datetime, time`; the test also used `timedelta`
            "def test_p():\n    assert relative_time(datetime(2023, 1, 1), timedelta(days=1))\n",
            ["from datetime import datetime, time"],
            [TARGET, "from datetime import datetime, time", "from datetime import timedelta"],
        ),
        (  # bound by the test itself: its own import, a parameter, an assignment, a handler
            "import datetime\n\n\ndef test_p(re):\n    timedelta = 1\n    try:\n        pass\n"
            "    except ValueError as date:\n        pass\n    assert datetime and re and timedelta and date\n",
            TIMEUTILS_IMPORTS, ["import datetime"],
        ),
    ],
)
def test_a_name_the_test_uses_unbound_is_imported_as_the_target_module_or_the_stdlib_provides_it(
    code, module_imports, imports
):
    assert split_code(code, "test_p", TARGET, module_imports).imports == imports
