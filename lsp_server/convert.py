"""Every conversion between lsprotocol types and the engine's models.

The engine speaks zero-based line / code-point positions, workspace-relative
POSIX paths and 1-based test lines; LSP speaks URIs and positions counted in
the negotiated encoding (UTF-16 unless the client chose otherwise). Nothing
outside this module builds an lsprotocol value from an engine model or the
other way round.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from lsprotocol import types as lsp
from pygls import uris
from pygls.workspace import PositionCodec

from agent_core.events import ProgressStep
from agent_core.models import ChangeSet, FileChange, Position, Span, Survivor, TestFailure, TestReport

SOURCE = "agentls"
ANNOTATION_ID = "agentls.change"  # one annotation per edit: every part of a run's change shares it
UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"


# -- positions ---------------------------------------------------------------------------------


def encoding_name(kind: object) -> str:
    """A PositionEncodingKind (or its string, or None) -> "utf-8" / "utf-16" / "utf-32"."""
    value = getattr(kind, "value", kind)
    return value if value in (UTF8, UTF16, UTF32) else UTF16


@functools.cache
def _codec(encoding: str) -> PositionCodec:
    """pygls' own codec for the encoding (UTF-16 for anything it does not know, as `encoding_name`)."""
    return PositionCodec(encoding)


def to_lsp_character(line_text: str, column: int, encoding: str = UTF16) -> int:
    """Code-point column in `line_text` -> column in the client's position encoding."""
    return int(_codec(encoding).client_num_units(line_text[:column]))  # pygls' codec is untyped


def from_lsp_character(line_text: str, character: int, encoding: str = UTF16) -> int:
    """Column in the client's encoding -> code-point column (clamped to the line)."""
    codec = _codec(encoding)
    # Clamped here, not by pygls: its codec clamps a column past the end to one unit *before* the end of a
    # line without a newline (the file's last line), and writes the clamp into the Position it is given.
    clamped = min(character, codec.client_num_units(line_text))
    return codec.position_from_client_units([line_text], lsp.Position(0, clamped)).character


def _line(lines: list[str], index: int) -> str:
    return lines[index].rstrip("\r\n") if 0 <= index < len(lines) else ""


def span_to_range(span: Span, text: str, encoding: str = UTF16) -> lsp.Range:
    lines = text.splitlines(keepends=True)
    start, end = span.start, span.end
    return lsp.Range(
        start=lsp.Position(start.line, to_lsp_character(_line(lines, start.line), start.character, encoding)),
        end=lsp.Position(end.line, to_lsp_character(_line(lines, end.line), end.character, encoding)),
    )


def range_to_span(rng: lsp.Range, text: str, encoding: str = UTF16) -> Span:
    lines = text.splitlines(keepends=True)
    start, end = rng.start, rng.end
    return Span(
        start=Position(
            line=start.line, character=from_lsp_character(_line(lines, start.line), start.character, encoding)
        ),
        end=Position(line=end.line, character=from_lsp_character(_line(lines, end.line), end.character, encoding)),
    )


def ranges_touch(a: lsp.Range, b: lsp.Range) -> bool:
    """True when the two ranges overlap or share an end point."""
    a_start, a_end = (a.start.line, a.start.character), (a.end.line, a.end.character)
    b_start, b_end = (b.start.line, b.start.character), (b.end.line, b.end.character)
    return a_start <= b_end and b_start <= a_end


def lines_touch(a: lsp.Range, b: lsp.Range) -> bool:
    """True when the two ranges share a line (the columns aside)."""
    return a.start.line <= b.end.line and b.start.line <= a.end.line


def range_from_json(data: Mapping[str, Mapping[str, int]] | None) -> lsp.Range | None:
    """A `{"start": {"line", "character"}, "end": ...}` argument -> Range (None when absent)."""
    if not data:
        return None
    start, end = data["start"], data["end"]
    return lsp.Range(
        start=lsp.Position(int(start["line"]), int(start["character"])),
        end=lsp.Position(int(end["line"]), int(end["character"])),
    )


def range_to_json(rng: lsp.Range) -> dict[str, dict[str, int]]:
    return {
        "start": {"line": rng.start.line, "character": rng.start.character},
        "end": {"line": rng.end.line, "character": rng.end.character},
    }


# -- paths ---------------------------------------------------------------------------------------


def uri_to_path(uri: str) -> Path | None:
    fs_path = uris.to_fs_path(uri)
    return Path(fs_path) if fs_path else None


def path_to_uri(path: Path) -> str:
    return uris.from_fs_path(str(path)) or path.as_uri()


def relative_path(uri: str, root: Path) -> str | None:
    """Workspace-relative POSIX path of `uri`, or None when it lies outside `root`."""
    path = uri_to_path(uri)
    if path is None:
        return None
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None


def workspace_uri(root: Path, relative: str) -> str:
    return path_to_uri(root / relative)


# -- edits ---------------------------------------------------------------------------------------


def _text_edits(change: FileChange, encoding: str) -> list[lsp.TextEdit]:
    original = change.original or ""
    return [lsp.TextEdit(range=span_to_range(e.span, original, encoding), new_text=e.new_text) for e in change.edits]


def _full_insert(change: FileChange) -> list[lsp.TextEdit]:
    origin = lsp.Range(start=lsp.Position(0, 0), end=lsp.Position(0, 0))
    return [lsp.TextEdit(range=origin, new_text=change.new or "")]


def change_set_to_workspace_edit(
    change_set: ChangeSet,
    root: Path,
    versions: Mapping[str, int | None],
    encoding: str = UTF16,
    document_changes: bool = True,
    annotation: lsp.ChangeAnnotation | None = None,
) -> lsp.WorkspaceEdit:
    """A ChangeSet -> one WorkspaceEdit.

    `versions` maps a workspace-relative path to the document version the edit
    is valid against (None for a file that is not open in the editor).
    Modified files become versioned TextDocumentEdits with minimal ranges; new
    files a CreateFile plus a full-text insert; deleted files a DeleteFile.
    Without `document_changes` support the same text edits go into `changes`.
    With an `annotation`, every edit and file operation of `documentChanges`
    carries it (LSP allows annotations there only, not in `changes`).
    """
    if not document_changes:
        changes: dict[str, list[lsp.TextEdit]] = {}
        for change in change_set.changes:
            if change.kind != "delete":
                edits = _full_insert(change) if change.kind == "create" else _text_edits(change, encoding)
                changes[workspace_uri(root, change.path)] = edits
        return lsp.WorkspaceEdit(changes=changes)
    note = ANNOTATION_ID if annotation is not None else None
    operations: list[lsp.CreateFile | lsp.TextDocumentEdit | lsp.DeleteFile] = []
    for change in change_set.changes:
        uri = workspace_uri(root, change.path)
        if change.kind == "create":
            options = lsp.CreateFileOptions(overwrite=False, ignore_if_exists=True)
            operations.append(lsp.CreateFile(uri=uri, options=options, annotation_id=note))
            identifier = lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None)
            operations.append(
                lsp.TextDocumentEdit(text_document=identifier, edits=_annotated(_full_insert(change), note))
            )
        elif change.kind == "delete":
            delete_options = lsp.DeleteFileOptions(ignore_if_not_exists=True)
            operations.append(lsp.DeleteFile(uri=uri, options=delete_options, annotation_id=note))
        else:
            identifier = lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=versions.get(change.path))
            annotated = _annotated(_text_edits(change, encoding), note)
            operations.append(lsp.TextDocumentEdit(text_document=identifier, edits=annotated))
    annotations = {ANNOTATION_ID: annotation} if annotation is not None else None
    return lsp.WorkspaceEdit(document_changes=operations, change_annotations=annotations)


def _annotated(edits: list[lsp.TextEdit], note: str | None) -> list[lsp.TextEdit | lsp.AnnotatedTextEdit]:
    if note is None:
        return list[lsp.TextEdit | lsp.AnnotatedTextEdit](edits)
    return [lsp.AnnotatedTextEdit(range=e.range, new_text=e.new_text, annotation_id=note) for e in edits]


def change_annotation(label: str, reason: str, needs_confirmation: bool) -> lsp.ChangeAnnotation:
    """The annotation of a run's edit: its label, its one-line reason, and whether the client must ask first."""
    return lsp.ChangeAnnotation(label=label, description=reason or None, needs_confirmation=needs_confirmation)


# -- diagnostics ---------------------------------------------------------------------------------


def _line_range(text_line: str, line_index: int, encoding: str) -> lsp.Range:
    stripped = text_line.rstrip("\r\n")
    indent = len(stripped) - len(stripped.lstrip())
    return lsp.Range(
        start=lsp.Position(line_index, to_lsp_character(stripped, indent, encoding)),
        end=lsp.Position(line_index, to_lsp_character(stripped, len(stripped), encoding)),
    )


def _failure_diagnostics(
    failure: TestFailure, root: Path, read_line: Callable[[str, int], str], encoding: str
) -> list[tuple[str, lsp.Diagnostic]]:
    test_index = max(failure.line - 1, 0)
    test_uri = workspace_uri(root, failure.file)
    test_range = _line_range(read_line(failure.file, test_index), test_index, encoding)
    message = failure.message or f"{failure.nodeid} failed"
    test_diag = lsp.Diagnostic(
        range=test_range,
        message=f"{failure.nodeid}: {message}",
        severity=lsp.DiagnosticSeverity.Error,
        code=failure.nodeid,
        source=SOURCE,
    )
    out = [(test_uri, test_diag)]
    if failure.source_file and failure.source_line:
        src_index = max(failure.source_line - 1, 0)
        src_uri = workspace_uri(root, failure.source_file)
        src_range = _line_range(read_line(failure.source_file, src_index), src_index, encoding)
        src_diag = lsp.Diagnostic(
            range=src_range,
            message=f"{message} (raised while running {failure.nodeid})",
            severity=lsp.DiagnosticSeverity.Error,
            code=failure.nodeid,
            source=SOURCE,
            related_information=[
                lsp.DiagnosticRelatedInformation(
                    location=lsp.Location(uri=test_uri, range=test_range), message=f"failing test {failure.nodeid}"
                )
            ],
        )
        test_diag.related_information = [
            lsp.DiagnosticRelatedInformation(
                location=lsp.Location(uri=src_uri, range=src_range), message="the error was raised here"
            )
        ]
        out.append((src_uri, src_diag))
    return out


def report_to_diagnostics(
    report: TestReport, root: Path, read_line: Callable[[str, int], str], encoding: str = UTF16
) -> dict[str, list[lsp.Diagnostic]]:
    """Failing tests -> diagnostics per URI, on the test line and on the traceback's source line.

    `read_line(relative_path, zero_based_line)` gives the text of a line (for
    the range's extent); an empty report gives an empty mapping.
    """
    by_uri: dict[str, list[lsp.Diagnostic]] = {}
    for failure in report.failures:
        for uri, diag in _failure_diagnostics(failure, root, read_line, encoding):
            by_uri.setdefault(uri, []).append(diag)
    return by_uri


SURVIVOR_CODE = "agentls.survivingMutant"
_CHANGE = re.compile(r"^`(?P<old>[^`]+)` -> `(?P<new>[^`]+)`$")


def survivor_message(change: str) -> str:
    """"no test notices if `<` becomes `<=` here" for a mutant's description."""
    found = _CHANGE.match(change)
    if found:
        return f"no test notices if `{found['old']}` becomes `{found['new']}` here"
    return f"no test notices here: {change}"


def survivor_diagnostics(
    survivors: list[Survivor], root: Path, read_line: Callable[[str, int], str], encoding: str = UTF16
) -> dict[str, list[lsp.Diagnostic]]:
    """A gen-tests run's surviving mutants ({file, line, change}) -> Information diagnostics on their lines."""
    by_uri: dict[str, list[lsp.Diagnostic]] = {}
    for survivor in survivors:
        index = max(survivor.line - 1, 0)
        by_uri.setdefault(workspace_uri(root, survivor.file), []).append(lsp.Diagnostic(
            range=_line_range(read_line(survivor.file, index), index, encoding),
            message=survivor_message(survivor.change), severity=lsp.DiagnosticSeverity.Information,
            code=SURVIVOR_CODE, source=SOURCE,
        ))
    return by_uri


def diagnostic_messages(diagnostics: Iterable[lsp.Diagnostic]) -> list[str]:
    """Editor diagnostics -> the lines folded into a run's goal."""
    out = []
    for diag in diagnostics:
        where = f"line {diag.range.start.line + 1}"
        source = f"[{diag.source}] " if diag.source else ""
        out.append(f"{source}{where}: {diag.message}")
    return out


# -- progress ------------------------------------------------------------------------------------


def progress_begin(title: str, message: str) -> lsp.WorkDoneProgressBegin:
    return lsp.WorkDoneProgressBegin(title=title, cancellable=True, message=message, percentage=0)


def progress_report(step: ProgressStep) -> lsp.WorkDoneProgressReport:
    """A phase's report: its message, and its percentage only when it rose (a client keeps the last one)."""
    return lsp.WorkDoneProgressReport(message=step.message, percentage=step.percentage if step.rose else None,
                                      cancellable=True)


def progress_end(message: str) -> lsp.WorkDoneProgressEnd:
    return lsp.WorkDoneProgressEnd(message=message)


MESSAGE_TYPES = {"info": lsp.MessageType.Info, "warning": lsp.MessageType.Warning, "error": lsp.MessageType.Error}


def message_type(level: str) -> lsp.MessageType:
    return MESSAGE_TYPES.get(level, lsp.MessageType.Info)
