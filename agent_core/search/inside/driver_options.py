"""What the search driver does to a project's pytest options so that they never stop or blind it.

Copied beside driver_script.py into the sandbox and run by the project's own interpreter (3.7 and later:
no newer syntax). The driver keeps pytest's terminal and cache plugins loaded, the cache in a throwaway
folder, so whatever a project's addopts name still parses; `OneProcess` then turns off what would take
the tests away from the driver's process, stop or reorder them, wait on a debugger or write reports.
"""

import shutil
import tempfile

import pytest

# pytest's cache in a throwaway folder rather than `-p no:cacheprovider` or `-p no:terminal`: a project's addopts
# may name their options (--ff, --lf, --sw; -v, -q, -r, --tb, --color, --durations), which pytest refuses as a
# usage error when their plugin is off; loaded, they parse, and OneProcess takes out what would change the run.
_CACHE = {"dir": None}


def neutral_args():
    if _CACHE["dir"] is None:
        _CACHE["dir"] = tempfile.mkdtemp(prefix="agentls-driver-cache-")
    return ["-o", "cache_dir=" + _CACHE["dir"]]


class OneProcess:
    """A pytest plugin that keeps a project's own test runners out of the driver's way, whatever its addopts
    say: pytest-cov's coverage (started after ours, it would take the tracer the per-test contexts need) and
    pytest-xdist's workers (every test must run in this process, where the coverage contexts and the forked
    mutant children are); a rerun plugin's retries, and (while localizing) a stop at the first failure, which
    would leave the other tests without coverage; and what else a project's addopts may ask that would stop,
    reorder or pause the run, or write beside the tests (NOT_IN_THE_DRIVER). Their options stay accepted, so the
    command line still parses.
    """

    def __init__(self, stop_first):
        self.stop_first = stop_first

    @pytest.hookimpl(hookwrapper=True)
    def pytest_load_initial_conftests(self, early_config, parser, args):
        if getattr(early_config.known_args_namespace, "cov_source", None):
            early_config.known_args_namespace.cov_source = None  # pytest-cov starts only with a source
        yield

    @pytest.hookimpl(hookwrapper=True)
    def pytest_cmdline_main(self, config):
        option = config.option
        if hasattr(option, "numprocesses"):
            option.numprocesses, option.dist, option.tx = 0, "no", []
        if hasattr(option, "reruns"):
            option.reruns = 0
        if not self.stop_first:
            option.maxfail = 0
        for name, off in NOT_IN_THE_DRIVER:
            if hasattr(option, name):
                setattr(option, name, off)
        yield


NOT_IN_THE_DRIVER = (
    ("stepwise", False), ("stepwise_skip", False),  # stop at the first failure, resume there next time
    ("lf", False), ("failedfirst", False), ("newfirst", False), ("cacheshow", False),  # the cache's selections
    ("usepdb", False), ("trace", False),  # a debugger waiting on stdin
    ("looponfail", False),  # xdist's watch mode
    ("xmlpath", None), ("htmlpath", None),  # report files written into the workspace
)


def clean_up():
    """Remove the throwaway cache folder (once the driver's pytest has ended)."""
    if _CACHE["dir"]:
        shutil.rmtree(_CACHE["dir"], ignore_errors=True)
