"""SQLite memory: past failures (with the fixes that resolved them) and successful patterns.

Rows carry their embedding; search loads the vectors of one table once into a
numpy matrix and ranks by cosine similarity. Writes are transactional. A
corrupt or locked database is reported once through `on_error` and the store
then behaves like `NullMemory`: a run never stops because memory broke.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from agent_core.memory.base import PastFailure, PastPattern
from agent_core.memory.embeddings import Embedder, HashedNgramEmbedder

_SCHEMA = """
CREATE TABLE IF NOT EXISTS failures (
    id INTEGER PRIMARY KEY,
    signature TEXT NOT NULL,
    error_type TEXT NOT NULL,
    message TEXT NOT NULL,
    fix TEXT,
    resolved_at REAL,
    created_at REAL NOT NULL,
    embedder TEXT NOT NULL,
    embedding BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS failures_signature ON failures(signature);
CREATE TABLE IF NOT EXISTS patterns (
    id INTEGER PRIMARY KEY,
    task_type TEXT NOT NULL,
    goal TEXT NOT NULL,
    plan TEXT NOT NULL,
    files TEXT NOT NULL,
    outcome TEXT NOT NULL,
    created_at REAL NOT NULL,
    embedder TEXT NOT NULL,
    embedding BLOB NOT NULL
);
"""
_PATTERN_DIFF = "ALTER TABLE patterns ADD COLUMN diff TEXT NOT NULL DEFAULT ''"  # stores made before it


class SQLiteMemory:
    """MemoryStore on one SQLite file."""

    def __init__(
        self,
        path: Path,
        embedder: Embedder | None = None,
        threshold: float = 0.7,
        on_error: Callable[[str], None] | None = None,
        busy_timeout_s: float = 5.0,
    ) -> None:
        self.path = path
        self.embedder = embedder or HashedNgramEmbedder()
        self.threshold = threshold
        self._on_error = on_error
        self._broken: str | None = None
        self._cache: dict[str, tuple[list[int], np.ndarray]] = {}
        self._conn: sqlite3.Connection | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(str(path), timeout=busy_timeout_s, isolation_level=None)
            # WAL: the language server's concurrent runs read while one writes; writers wait up to the timeout.
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.executescript(_SCHEMA)
            if "diff" not in {row[1] for row in self._conn.execute("PRAGMA table_info(patterns)")}:
                self._conn.execute(_PATTERN_DIFF)
        except (sqlite3.Error, OSError) as exc:
            self._fail(exc)

    @property
    def broken(self) -> str | None:
        """Why the store is unusable, or None."""
        return self._broken

    def _fail(self, exc: Exception) -> None:
        if self._broken is None:
            self._broken = f"memory database {self.path} unusable ({exc}); continuing without memory"
            if self._on_error:
                self._on_error(self._broken)

    def _write(self, sql: str, params: tuple) -> None:
        if self._conn is None or self._broken:
            return
        try:
            with self._conn:  # one transaction per write
                self._conn.execute("BEGIN IMMEDIATE")
                self._conn.execute(sql, params)
        except sqlite3.Error as exc:
            self._fail(exc)
        self._cache.clear()

    def _vector(self, text: str) -> np.ndarray:
        return self.embedder.embed([text])[0]

    def _matrix(self, table: str) -> tuple[list[int], np.ndarray]:
        if table not in self._cache:
            assert self._conn is not None
            rows = self._conn.execute(
                f"SELECT id, embedding FROM {table} WHERE embedder = ?", (self.embedder.name,)
            ).fetchall()
            ids = [r[0] for r in rows]
            if rows:
                matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
            else:  # an empty table (reshape of an empty buffer to (0, -1) is an error)
                matrix = np.zeros((0, 0), dtype=np.float32)
            self._cache[table] = (ids, matrix)
        return self._cache[table]

    def _search(self, table: str, text: str, limit: int) -> list[tuple[int, float]]:
        if self._conn is None or self._broken:
            return []
        try:
            ids, matrix = self._matrix(table)
        except sqlite3.Error as exc:
            self._fail(exc)
            return []
        if not ids:
            return []
        scores = matrix @ self._vector(text)
        order = np.argsort(-scores)[:limit]
        return [(ids[i], float(scores[i])) for i in order if scores[i] >= self.threshold]

    def similar_failures(self, signature: str, message: str, limit: int = 3) -> list[PastFailure]:
        hits = self._search("failures", f"{signature}\n{message}", limit * 4)
        out: list[PastFailure] = []
        seen: set[tuple[str, str | None]] = set()
        for row_id, score in hits:
            row = self._conn.execute(  # type: ignore[union-attr]
                "SELECT signature, error_type, message, fix FROM failures WHERE id = ?", (row_id,)
            ).fetchone()
            if row is None or (row[0], row[3]) in seen:
                continue
            seen.add((row[0], row[3]))
            out.append(PastFailure(signature=row[0], error_type=row[1], message=row[2], fix=row[3], similarity=score))
        # Failures that were resolved are the useful ones: list them first.
        out.sort(key=lambda f: (f.fix is None, -f.similarity))
        return out[:limit]

    def similar_patterns(self, goal: str, limit: int = 3) -> list[PastPattern]:
        out = []
        for row_id, score in self._search("patterns", goal, limit):
            row = self._conn.execute(  # type: ignore[union-attr]
                "SELECT task_type, goal, plan, files, outcome, diff FROM patterns WHERE id = ?", (row_id,)
            ).fetchone()
            if row:
                out.append(
                    PastPattern(
                        task_type=row[0], goal=row[1], plan=row[2], files=json.loads(row[3]), outcome=row[4],
                        diff=row[5], similarity=score,
                    )
                )
        return out

    def record_failure(self, signature: str, error_type: str, message: str) -> None:
        blob = self._vector(f"{signature}\n{message}").tobytes()
        self._write(
            "INSERT INTO failures (signature, error_type, message, created_at, embedder, embedding)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (signature, error_type, message[:2000], time.time(), self.embedder.name, blob),
        )

    def resolve_failures(self, signatures: list[str], fix: str) -> None:
        for signature in dict.fromkeys(signatures):
            self._write(
                "UPDATE failures SET fix = ?, resolved_at = ? WHERE signature = ? AND fix IS NULL",
                (fix[:4000], time.time(), signature),
            )

    def record_pattern(
        self, task_type: str, goal: str, plan: str, files: list[str], outcome: str, diff: str = "",
    ) -> None:
        blob = self._vector(goal).tobytes()
        self._write(
            "INSERT INTO patterns (task_type, goal, plan, files, outcome, diff, created_at, embedder, embedding)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (task_type, goal, plan[:4000], json.dumps(files), outcome, diff[:4000], time.time(), self.embedder.name,
             blob),
        )

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
