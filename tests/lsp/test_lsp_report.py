"""End to end: `agentls.showReport` writes a run's HTML report and answers where it is."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

from pygls.exceptions import JsonRpcException


def _done(s, run_id: str) -> bool:
    return any(run_id in m for m in s.messages())


async def test_show_report_writes_the_page_into_the_run_folder(lsp_session):
    async with lsp_session() as s:
        run_id = (await s.command("agentls.runTests", {}))["runId"]
        await s.until(lambda: _done(s, run_id))
        latest = await s.command("agentls.showReport", {})
        named = await s.command("agentls.showReport", {"runId": run_id})
        assert latest["runId"] == named["runId"] == run_id
        path = Path(named["path"])
        assert path.resolve() == (s.root / ".agentls" / "runs" / run_id / "report.html").resolve()
        assert Path(url2pathname(urlparse(named["uri"]).path)) == path.resolve()
        page = path.read_text(encoding="utf-8")
        assert page.startswith("<!DOCTYPE html>") and run_id in page and 'id="verdict"' in page  # a test run: no graph
        try:
            await s.command("agentls.showReport", {"runId": "no-such-run"})
        except JsonRpcException as exc:
            assert "no-such-run" in str(exc)
        else:
            raise AssertionError("an unknown run id must be an error")
