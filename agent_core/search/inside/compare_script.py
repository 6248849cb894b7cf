"""Runs inside the sandbox: two versions of one function called side by side on the same inputs.

Stdlib only, and Python 3.7 syntax (a project's interpreter runs it). The
host (search/driver/distinguish.py) writes a config: where the module is imported from,
the function's name, its two texts (the winning edit's and the rival's), and
the calls as literal argument sources. The module is imported once; each
version is executed in its own copy of the module's namespace (so a recursive
call reaches its own version), then every call runs on both, each with fresh
arguments and a time bound. The first call whose results differ (the repr of
the value, or the type of the exception) is written to the result file; a
call that one side does not finish in time is skipped (on a loaded machine a
slow call is not a difference). The function's output is swallowed, and the
working directory is this script's own folder, which the host removes.
"""
# (it runs on the project's interpreter, 3.7 up: unannotated, like driver_script.py)

import ast
import contextlib
import importlib
import io
import json
import os
import signal
import sys
import time

SHOWN = 200  # characters of a result kept


class _Late(Exception):
    pass


def _alarm(signum, frame):
    raise _Late()


def _outcome(func, args, kwargs, bound_s):
    """("value", repr), ("raises", exception type) or ("late", "") for one call within `bound_s` seconds."""
    signal.setitimer(signal.ITIMER_REAL, bound_s)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            value = func(*args, **kwargs)
            if hasattr(value, "__next__") and hasattr(value, "__iter__"):  # a generator: what it yields
                value = list(_first(value, 1000))
            text = repr(value)
        return "value", text[:SHOWN]
    except _Late:
        return "late", ""
    except BaseException as exc:  # noqa: BLE001 - what the version raises is its result
        return "raises", type(exc).__name__
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _first(items, count):
    for index, item in enumerate(items):
        if index >= count:
            return
        yield item


def _versions(config):
    sys.path.insert(0, os.path.abspath(config["sys_path"]))
    module = importlib.import_module(config["module"])
    out = []
    for text in config["versions"]:
        namespace = dict(vars(module))
        exec(compile(text, module.__file__ or config["module"], "exec"), namespace)
        out.append(namespace[config["name"]])
    return out


def _compare(config, versions):
    tried = 0
    stop = time.monotonic() + config["budget_s"]
    for args_src, kwargs_src in config["calls"]:
        if time.monotonic() > stop:  # what was compared so far, before the run's timeout
            break
        results = []
        tried += 1
        for func in versions:
            try:  # fresh arguments for each version (a function may change a list it is given)
                args = [ast.literal_eval(source) for source in args_src]
                kwargs = {key: ast.literal_eval(source) for key, source in kwargs_src}
            except ValueError:  # a value whose repr is no literal (inf, nan): that call is skipped
                break
            results.append(_outcome(func, args, kwargs, config["call_s"]))
        if len(results) < len(versions):
            continue
        if any(kind == "late" for kind, _ in results):
            continue
        if results[0] != results[1]:
            return {"tried": tried, "differs": {"call": tried - 1, "results": results}}
    return {"tried": tried}


def main(path):
    with open(path) as handle:
        config = json.load(handle)
    here = os.path.dirname(os.path.abspath(path))
    out = os.path.join(here, "result.json")
    signal.signal(signal.SIGALRM, _alarm)
    try:
        versions = _versions(config)
        os.chdir(here)
        result = _compare(config, versions)
    except BaseException as exc:  # noqa: BLE001 - reported to the host, which goes on without a finding
        result = {"error": f"{type(exc).__name__}: {exc}"[:SHOWN]}
    with open(out, "w") as handle:
        json.dump(result, handle)


if __name__ == "__main__":
    main(sys.argv[1])
