"""A run's self-contained HTML report (`agentls report`, the LSP command `agentls.showReport`).

One page per run, with no network access needed or allowed: the CSS, the
script and the diagram (inline SVG) are in the page, and a Content Security
Policy admits only that script and that stylesheet, by hash. Journal content
is untrusted (prompts and answers carry whatever a model or a project wrote):
the Jinja2 environment autoescapes every value, and the CSP is the second
line should a value ever slip through unescaped.
"""

from __future__ import annotations

import base64
import hashlib
from functools import cache
from importlib import resources
from pathlib import Path

import jinja2

from agent_core.journal.trace import Trace, load_trace
from agent_core.report.coverage import coverage_links
from agent_core.report.view import build_view

REPORT_NAME = "report.html"


@cache
def _environment() -> jinja2.Environment:
    # ChainableUndefined: a record written by an older or newer agentls may lack a key; it renders empty.
    return jinja2.Environment(loader=jinja2.PackageLoader("agent_core.report", "assets"), autoescape=True,
                              undefined=jinja2.ChainableUndefined, trim_blocks=True, lstrip_blocks=True)


def _asset(name: str) -> str:
    return resources.files("agent_core.report").joinpath("assets", name).read_text(encoding="utf-8")


def _hash(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def render_report(workspace: Path, run_id: str | None = None, out_dir: Path | None = None) -> tuple[str, str]:
    """(run id, HTML page) of `run_id` (the latest run when None); UnknownRun if there is none.

    `out_dir` is where the page will be written: links to the run's files
    (coverage reports) are made relative to it.
    """
    trace = load_trace(Path(workspace), run_id)
    return trace.summary.run_id, _render(trace, out_dir or trace.summary.path)


def _render(trace: Trace, out_dir: Path) -> str:
    view = build_view(trace, coverage_links(trace.summary.path, out_dir))
    css, script = _asset("report.css"), _asset("report.js")
    csp = (f"default-src 'none'; style-src '{_hash(css)}'; script-src '{_hash(script)}'; "
           "img-src data:; base-uri 'none'; form-action 'none'")
    return _environment().get_template("report.html.j2").render(v=view, css=css, script=script, csp=csp)


def write_report(workspace: Path, run_id: str | None = None, html: Path | None = None) -> tuple[str, Path]:
    """Write the report (to `html`, or report.html in the run's directory); returns (run id, path written)."""
    trace = load_trace(Path(workspace), run_id)
    html = Path(html) if html is not None else trace.summary.path / REPORT_NAME
    page = _render(trace, html.resolve().parent)
    html.parent.mkdir(parents=True, exist_ok=True)
    html.write_text(page, encoding="utf-8")
    return trace.summary.run_id, html
