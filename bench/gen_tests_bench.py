"""Gen-tests on the bench corpus: line coverage before/after, share of kept tests that pass, planted bugs found.

    python -m bench.gen_tests_bench                 # scripted model (answers from <module>.script.json)
    python -m bench.gen_tests_bench --base-url URL  # any OpenAI-compatible endpoint (e.g. a local llama.cpp)

Each corpus module is copied into a fresh workspace and run through
`run_gen_tests` with the real sandbox. A planted bug counts as found when a
suspected bug is reported inside the planted function; "exact" counts hits on
the planted line itself.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "gen_tests_corpus"


def _scripted(script: dict):
    def answer(body: dict) -> str:
        text = body["messages"][-1]["content"]
        name = re.search(r"def (test_\w+)\(", text)
        if "does not run" in text and name and name.group(1) in script["repair"]:
            return json.dumps({"tests": [script["repair"][name.group(1)]]})
        if "Decide who is wrong" in text and name:
            verdict = script["verdict"].get(name.group(1), "test_wrong")
            return json.dumps({"verdict": verdict, "reason": "scripted"})
        target = re.search(r"Code under test \((\w+)\)", text)
        if target and target.group(1) in script["write"]:
            return json.dumps({"tests": script["write"][target.group(1)]})
        if "does not run" in text and name and name.group(1) in script["repair"]:
            return json.dumps({"tests": [script["repair"][name.group(1)]]})
        return json.dumps({"tests": []})

    return answer


def _span_of(module: Path, function: str) -> tuple[int, int]:
    from agent_core.analysis.symbols import analyse, find_symbol

    symbol = find_symbol(analyse(module.read_bytes()).symbols, function)
    return symbol.start_line, symbol.end_line


async def _one(module: str, info: dict, base_url: str | None) -> dict:
    from agent_core.events import NullHooks
    from agent_core.gentests.run import run_gen_tests
    from agent_core.models import RunRequest
    from agent_core.settings import Settings

    server = None
    if base_url is None:
        from testkit.scripted_llm import ScriptedLLM

        server = ScriptedLLM().start()
        script = json.loads((CORPUS / module.replace(".py", ".script.json")).read_text())
        server.default("tester", _scripted(script))
        base_url = server.base_url
    tmp = Path(tempfile.mkdtemp(prefix="agentls-bench-"))
    try:
        (tmp / "pyproject.toml").write_text('[project]\nname = "bench"\nversion = "0"\n')
        shutil.copy(CORPUS / module, tmp / module)
        request = RunRequest(kind="gen_tests", workspace=tmp, target_file=module)
        result = await run_gen_tests(request, Settings(base_url=base_url, max_iterations=2), NullHooks())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if server is not None:
            server.stop()
    extra = result.gen_tests.model_dump() if result.gen_tests else {}  # the run's counts and findings
    bugs = extra.get("suspected_bugs", [])
    found = exact = 0
    for planted in info["bugs"]:
        lo, hi = _span_of(CORPUS / module, planted["function"])
        hits = [b for b in bugs if b["file"] == module and lo <= (b["line"] or 0) <= hi]
        found += bool(hits)
        exact += any(b["line"] == planted["line"] for b in hits)
    kept = extra.get("tests_kept", 0)
    return {
        "module": module,
        "status": result.status,
        "error": result.error,
        "written": extra.get("tests_written", 0),
        "kept": kept,
        "kept_passing": kept - len(bugs),
        "suspected": len(bugs),
        "before": extra.get("coverage", {}).get("before", 0.0),
        "after": extra.get("coverage", {}).get("after", 0.0),
        "planted": len(info["bugs"]),
        "found": found,
        "exact": exact,
        "seconds": result.duration_s,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint (default: the scripted model)")
    args = parser.parse_args()
    manifest = json.loads((CORPUS / "manifest.json").read_text())
    rows = [await _one(m, info, args.base_url) for m, info in manifest["modules"].items()]
    print(f"model: {args.base_url or 'scripted'}")
    print(
        f"{'module':<14}{'written':>8}{'kept':>6}{'pass':>6}{'bugs':>6}{'cov before':>12}{'cov after':>11}"
        f"{'planted found':>15}{'exact line':>12}{'s':>7}"
    )
    for r in rows:
        print(
            f"{r['module']:<14}{r['written']:>8}{r['kept']:>6}{r['kept_passing']:>6}{r['suspected']:>6}"
            f"{r['before']:>11.1f}%{r['after']:>10.1f}%{r['found']:>9}/{r['planted']:<5}{r['exact']:>8}"
            f"{r['seconds']:>9.1f}" + (f"  error: {r['error']}" if r["error"] else "")
        )
    kept = sum(r["kept"] for r in rows)
    share = sum(r["kept_passing"] for r in rows) / kept if kept else 0.0
    print(
        f"share of kept tests that pass: {share:.0%} ({sum(r['kept_passing'] for r in rows)}/{kept}); "
        f"planted bugs found: {sum(r['found'] for r in rows)}/{sum(r['planted'] for r in rows)} "
        f"(exact line {sum(r['exact'] for r in rows)}); mean line coverage "
        f"{sum(r['before'] for r in rows) / len(rows):.1f}% -> {sum(r['after'] for r in rows) / len(rows):.1f}%"
    )


if __name__ == "__main__":
    asyncio.run(main())
