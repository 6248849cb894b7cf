"""The shadow workspace: a throw-away copy of the workspace that a run edits.

The copy lives in a temp directory named `agentls-*`, skips environments,
caches and what the project's `.gitignore` files ignore (ignore.py), is made
file by file in the kernel, as reflinks where the filesystem can
(treecopy.py), and is overlaid with the editor's unsaved buffers. It remembers the
original text of every file the run touched, so the change set is computed
against what the run saw, not against whatever is on disk later. It is
removed when the `with` block ends, however it ends (error, cancel), and at
interpreter exit as a last resort.
"""

from __future__ import annotations

import io
import os
import tokenize
import weakref
from collections.abc import Mapping
from pathlib import Path

from agent_core.sandbox.cleanup import make_temp_dir, remove_temp_dir
from agent_core.workspace.ignore import IgnoreRules
from agent_core.workspace.paths import relative_inside, resolve_inside
from agent_core.workspace.testfiles import protected_files
from agent_core.workspace.treecopy import CopyStats, copy_workspace


class UndecodableFile(ValueError):
    """A file whose bytes are not text in the encoding Python would read it with."""

    def __init__(self, path: Path, encoding: str, error: UnicodeEncodeError | UnicodeDecodeError) -> None:
        if isinstance(error, UnicodeEncodeError):
            message = f"{path.name} declares {encoding}, which cannot hold {error.object[error.start]!r}"
        else:
            message = f"{path.name} is not valid {encoding} text (byte {error.start}): declare its encoding (PEP 263)"
        super().__init__(message)


def text_encoding(path: Path, data: bytes) -> str:
    """The encoding Python reads `data` with: a `.py` file's PEP 263 cookie or BOM, else UTF-8."""
    if path.suffix != ".py":
        return "utf-8"
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:  # an unknown or contradictory cookie: Python refuses it, so do not guess
        return "utf-8"
    return encoding


def read_exact(path: Path) -> str:
    """A file's text with its line endings kept as they are (no CRLF translation).

    A `.py` file is decoded as Python would (PEP 263); bytes that do not
    decode raise `UndecodableFile` (a ValueError naming the file).
    """
    data = path.read_bytes()
    encoding = text_encoding(path, data)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise UndecodableFile(path, encoding, exc) from None


def encode_exact(path: Path, text: str) -> bytes:
    """`text` as the bytes `read_exact` would read back (the encoding its own cookie declares)."""
    encoding = text_encoding(path, text.encode("utf-8", "surrogatepass"))
    try:
        return text.encode(encoding)
    except UnicodeEncodeError as exc:
        raise UndecodableFile(path, encoding, exc) from None


def write_exact(path: Path, text: str) -> None:
    """Write text without translating line endings, in the encoding `read_exact` reads it with."""
    path.write_bytes(encode_exact(path, text))


class ShadowWorkspace:
    """A temp copy of `source` overlaid with `overlays` (relative path -> unsaved text)."""

    def __init__(self, source: Path, overlays: Mapping[str, str] | None = None) -> None:
        self.source = Path(source).resolve()
        self.overlays = dict(overlays or {})
        self.path: Path | None = None
        self.originals: dict[str, str | None] = {}
        self.verification: dict[str, bytes] = {}  # the protected files as the run found them (testfiles.py)
        self.ignore = IgnoreRules(self.source)  # the workspace's .gitignore rules (ignore.py)
        self.copy_stats = CopyStats()
        self._finalizer: weakref.finalize | None = None

    def __enter__(self) -> ShadowWorkspace:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> ShadowWorkspace:
        """Make the copy and apply the overlays."""
        if not self.source.is_dir():
            raise NotADirectoryError(f"workspace {self.source} is not a directory")
        base = make_temp_dir("shadow", origin=self.source)  # owner-marked: a crash leftover is swept at the next start
        self._finalizer = weakref.finalize(self, remove_temp_dir, base)
        root = base / self.source.name
        try:
            self.copy_stats = copy_workspace(self.source, root, self.ignore)  # ignored paths left out (treecopy.py)
        except BaseException:  # `with` never calls __exit__ when __enter__ fails: remove the partial copy now
            self.close()
            raise
        os.chmod(base, 0o755)  # sandboxes may run tests as an unprivileged uid
        self.path = root
        for rel, text in self.overlays.items():
            target = resolve_inside(root, rel)
            target.parent.mkdir(parents=True, exist_ok=True)
            self.originals[relative_inside(root, rel)] = text
            write_exact(target, text)
        self.verification = protected_files(root)
        return self

    def close(self) -> None:
        """Remove the copy (idempotent)."""
        if self._finalizer is not None:
            self._finalizer()
            self._finalizer = None

    @property
    def root(self) -> Path:
        if self.path is None:
            raise RuntimeError("shadow workspace is not open")
        return self.path

    def resolve(self, rel: str) -> Path:
        """The shadow path of `rel`, refused if it leaves the workspace."""
        return resolve_inside(self.root, rel)

    def relative(self, rel: str) -> str:
        return relative_inside(self.root, rel)

    def remember(self, rel: str) -> None:
        """Record the text `rel` has before the run first changes it (None if absent)."""
        rel = self.relative(rel)
        if rel in self.originals:
            return
        target = self.resolve(rel)
        self.originals[rel] = read_exact(target) if target.is_file() else None

    def ignored(self, rel: str) -> bool:
        """Whether `rel` is left out of the copy (skipped folder or `.gitignore`d): never part of a change set."""
        return self.ignore.ignored(self.relative(rel))

    def current(self, rel: str) -> str | None:
        target = self.resolve(rel)
        return read_exact(target) if target.is_file() else None

    def readable(self, rel: str) -> str | None:
        """`rel`'s text, or None when it is absent or does not decode (left out of what the models see)."""
        try:
            return self.current(rel)
        except UndecodableFile:
            return None

    def shown_text(self, rel: str) -> str:
        """`rel`'s text for a prompt: '' when absent, a note in place of a file that does not decode."""
        try:
            return self.current(rel) or ""
        except UndecodableFile as exc:
            return f"# (not shown: {exc})\n"
