"""File tools on the shadow workspace, as the coder uses them.

Every tool resolves its path through the path guard and returns a
`ToolResult`: a refused path, a missing file or a search block that does not
match is an error *as data* (`ok=False` with a message the model can act on),
never an exception. Every call is reported to `on_call` (the journal).

A write (write, replace, delete) to a path the shadow copy leaves out (a
skipped folder such as `.venv` or `build`, a `.gitignore`d file) is refused:
no change set carries it to the project, so a candidate made green by it
would be judged on code the user never gets (a fix written into an ignored
module that the test run imports first, a patched `.venv`).
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agent_core.workspace.ignore import skip_dir
from agent_core.workspace.paths import PathRefused
from agent_core.workspace.shadow import ShadowWorkspace, read_exact, write_exact

MAX_LISTED = 400
MAX_HITS = 60
MAX_SEARCHED_BYTES = 1_000_000  # search skips bigger files (data dumps) rather than read them into memory

ToolObserver = Callable[[str, dict[str, Any], "ToolResult"], None]


class ToolResult(BaseModel):
    """Outcome of one tool call."""

    ok: bool
    result: str


class FileTools:
    """read_file, list_files, search, write_file, replace_in_file, delete_file on one shadow."""

    def __init__(self, shadow: ShadowWorkspace, on_call: ToolObserver | None = None) -> None:
        self.shadow = shadow
        self.on_call = on_call
        self.changed: set[str] = set()

    def _run(self, tool: str, args: dict[str, Any], body: Callable[[], str]) -> ToolResult:
        try:
            result = ToolResult(ok=True, result=body())
        except PathRefused as exc:
            result = ToolResult(ok=False, result=str(exc))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            result = ToolResult(ok=False, result=f"{tool} failed: {exc}")
        if self.on_call is not None:
            self.on_call(tool, args, result)
        return result

    def read_file(self, path: str) -> ToolResult:
        def body() -> str:
            target = self.shadow.resolve(path)
            if not target.is_file():
                raise ValueError(f"{path!r} does not exist")
            return read_exact(target)

        return self._run("read_file", {"path": path}, body)

    def list_files(self, path: str = ".") -> ToolResult:
        def body() -> str:
            start = self.shadow.root if path in ("", ".") else self.shadow.resolve(path)
            found: list[str] = []
            for dirpath, dirnames, filenames in os.walk(start):
                dirnames[:] = sorted(d for d in dirnames if not skip_dir(d))
                for name in sorted(filenames):
                    found.append(os.path.relpath(os.path.join(dirpath, name), self.shadow.root))
                    if len(found) >= MAX_LISTED:
                        return "\n".join(found + ["... (truncated)"])
            return "\n".join(found)

        return self._run("list_files", {"path": path}, body)

    def search(self, pattern: str, path: str = ".") -> ToolResult:
        def body() -> str:
            try:
                rx = re.compile(pattern)
            except re.error:
                rx = re.compile(re.escape(pattern))
            hits: list[str] = []
            for rel in self.list_files(path).result.splitlines():
                if not rel.endswith((".py", ".txt", ".md", ".toml", ".cfg", ".ini", ".json", ".yaml", ".yml")):
                    continue
                try:
                    if (self.shadow.root / rel).stat().st_size > MAX_SEARCHED_BYTES:
                        continue
                    lines = (self.shadow.root / rel).read_text(encoding="utf-8").splitlines()
                except (OSError, UnicodeDecodeError):
                    continue
                hits.extend(f"{rel}:{i}: {line}" for i, line in enumerate(lines, 1) if rx.search(line))
                if len(hits) >= MAX_HITS:
                    return "\n".join(hits[:MAX_HITS] + ["... (truncated)"])
            return "\n".join(hits) or "no matches"

        return self._run("search", {"pattern": pattern, "path": path}, body)

    def _writable(self, path: str) -> Path:
        """The shadow path a write to `path` goes to; PathRefused when the copy leaves it out (see above)."""
        target = self.shadow.resolve(path)
        rel = self.shadow.relative(path)
        if self.shadow.ignored(rel):
            raise PathRefused(f"refused: {rel} is left out of the project's copy (a skipped folder or an ignored "
                              "file), so no change there reaches the project; change the project's own source")
        return target

    def write_file(self, path: str, content: str) -> ToolResult:
        def body() -> str:
            target = self._writable(path)
            self.shadow.remember(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            write_exact(target, content)
            self.changed.add(self.shadow.relative(path))
            return f"wrote {self.shadow.relative(path)} ({len(content)} characters)"

        return self._run("write_file", {"path": path, "content": content}, body)

    def replace_in_file(self, path: str, search: str, replace: str) -> ToolResult:
        def body() -> str:
            target = self._writable(path)
            if not target.is_file():
                raise ValueError(f"{path!r} does not exist; to create it, give an empty search block")
            text = read_exact(target)
            count = text.count(search)
            if count == 0:
                raise ValueError(f"the search block was not found in {path!r}{_closest_hint(text, search)}")
            if count > 1:
                raise ValueError(f"the search block matches {count} places in {path!r}; include more lines")
            self.shadow.remember(path)
            write_exact(target, text.replace(search, replace, 1))
            self.changed.add(self.shadow.relative(path))
            return f"replaced 1 block in {self.shadow.relative(path)}"

        return self._run("replace_in_file", {"path": path, "search": search, "replace": replace}, body)

    def delete_file(self, path: str) -> ToolResult:
        def body() -> str:
            target = self._writable(path)
            if not target.is_file():
                raise ValueError(f"{path!r} does not exist")
            self.shadow.remember(path)
            target.unlink()
            self.changed.add(self.shadow.relative(path))
            return f"deleted {self.shadow.relative(path)}"

        return self._run("delete_file", {"path": path}, body)


def _closest_hint(text: str, search: str) -> str:
    first = next((line for line in search.splitlines() if line.strip()), "")
    if not first:
        return " (the search block is empty)"
    close = difflib.get_close_matches(first, text.splitlines(), n=1, cutoff=0.6)
    return f"; the closest line in the file is: {close[0]!r}" if close else ""
