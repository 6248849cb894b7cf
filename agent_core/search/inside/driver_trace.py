"""A per-test line recorder for the search driver when coverage.py cannot run on the project's interpreter.

Copied beside driver_script.py into the sandbox and run by the project's own
interpreter, which may be as old as Python 3.7: stdlib only, and no syntax
newer than 3.7 (no walrus, no positional-only parameters, no `X | Y` types).

Why hand-written: the coverage.py agentls carries needs a recent Python (its
Requires-Python), a project's venv of 3.7 or 3.8 has none of its own as a
rule, and installing one that fits into the project or fetching one at run
time is not ours to do. Localization needs no more than "which lines of the
workspace did each test run": `sys.settrace` gives exactly that on every
CPython, at the cost of a Python call per traced line (only files under the
workspace are traced line by line; others cost one call per function call).
The output has the shape the driver builds from coverage.py's contexts.
"""

import os
import sys
import threading


class LineTracer:
    """Records, per context (a test's node id), the executed lines of Python files under `root`.

    The same calls as the driver makes of coverage.Coverage: start(), stop(), switch_context(name).
    """

    def __init__(self, root):
        self.root = os.path.realpath(root)
        self.context = ""
        self.lines = {}  # context -> {filename: set of line numbers}
        self._bucket = self.lines.setdefault("", {})
        self._wanted = {}  # co_filename -> bool

    def switch_context(self, name):
        self.context = name
        self._bucket = self.lines.setdefault(name, {})

    def _want(self, filename):
        """A workspace Python file that is not agentls' own nor inside an environment kept in the project."""
        path = os.path.realpath(os.path.abspath(filename))
        if not path.endswith(".py") or not path.startswith(self.root + os.sep):
            return False
        parts = os.path.relpath(path, self.root).split(os.sep)
        return parts[0] != ".agentls" and "site-packages" not in parts and "dist-packages" not in parts

    def _call(self, frame, event, arg):
        filename = frame.f_code.co_filename
        wanted = self._wanted.get(filename)
        if wanted is None:
            wanted = self._wanted[filename] = self._want(filename)
        return self._line if wanted else None

    def _line(self, frame, event, arg):
        if event == "line":
            filename = frame.f_code.co_filename
            bucket = self._bucket
            seen = bucket.get(filename)
            if seen is None:
                seen = bucket[filename] = set()
            seen.add(frame.f_lineno)
        return self._line

    def start(self):
        threading.settrace(self._call)
        sys.settrace(self._call)

    def stop(self):
        sys.settrace(None)
        threading.settrace(None)

    def measured(self, root):
        """{rel_path: {context: sorted lines}} of the named contexts, as the driver's coverage.py reading gives."""
        files = {}
        for context, by_file in self.lines.items():
            if not context:
                continue
            for filename, lines in by_file.items():
                rel = os.path.relpath(os.path.realpath(os.path.abspath(filename)), os.path.realpath(root))
                files.setdefault(rel, {})[context] = sorted(lines)
        return files
