"""Workspace outline: signatures only, nesting shown, focus first, bounded size."""

from __future__ import annotations

from pathlib import Path

from agent_core.analysis.outline import file_outline, workspace_outline


def _workspace(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "geo.py").write_text(
        "class Shape:\n    '''Any shape.'''\n    def area(self) -> float:\n        return 0.0\n"
        "    class Unit:\n        def size(self):\n            return 1\n\n"
        "@register\nasync def load(path: str, *, strict: bool = False) -> Shape:\n    body = 1\n    return Shape()\n"
    )
    (tmp_path / "app.py").write_text("def main(argv=None):\n    '''Entry point.\n\n    More.'''\n    return 0\n")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "hidden.py").write_text("def secret(): pass\n")
    return tmp_path


def test_file_outline_shows_signatures_nesting_and_first_doc_line(tmp_path: Path):
    ws = _workspace(tmp_path)
    text = file_outline("pkg/geo.py", (ws / "pkg" / "geo.py").read_bytes())
    assert text.splitlines() == [
        "# pkg/geo.py",
        "class Shape:  # Any shape.",
        "    def area(self) -> float:",
        "    class Unit:",
        "        def size(self):",
        "@register async def load(path: str, *, strict: bool = False) -> Shape:",
    ]
    assert "return" not in text and "body = 1" not in text


def test_workspace_outline_focus_first_hidden_skipped(tmp_path: Path):
    text = workspace_outline(_workspace(tmp_path), focus=["pkg/geo.py"])
    assert text.index("# pkg/geo.py") < text.index("# app.py")
    assert "def main(argv=None):  # Entry point." in text
    assert "secret" not in text


def test_workspace_outline_is_bounded(tmp_path: Path):
    for i in range(40):
        (tmp_path / f"mod{i:02d}.py").write_text(f"def function_number_{i}(a, b, c):\n    return a\n")
    text = workspace_outline(tmp_path, max_chars=300)
    assert len(text) <= 300 + 40
    assert text.endswith("more file(s) not shown")
    assert "# mod00.py" in text
